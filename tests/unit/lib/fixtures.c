// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Packet fixtures shared by the unit tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "bytes.h"
#include "fixtures.h"
#include "lh_maps.h"
#include "tap.h"

uint32_t fx_rand(unsigned int *seed)
{
	/* xorshift32: reproducible across libcs */
	uint32_t x = *seed ? *seed : 0x9e3779b9u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*seed = x;
	return x;
}

static void fx_layout(struct fx_pkt *p)
{
	struct lh_pkt m;

	if (lh_pkt_parse(p->b, p->len, true, &m) != LH_STAT_ROCE) {
		tap_diag("fixture bug: built packet does not parse (%s)", lh_stat_name(m.result));
		exit(2);
	}
	p->l3_off = m.l3_off;
	p->udp_off = m.l4_off;
	p->bth_off = m.bth_off;
	p->family = m.family;
	p->nr_vlans = m.nr_vlans;
	p->ext_end = m.l4_off;
	p->roce_need = sizeof(struct roce_bth) + roce_ext_hdr_len(m.opflags) + m.pad + ROCE_ICRC_LEN;
}

void fx_build(struct fx_pkt *p, const struct lh_pkt_spec *s)
{
	ssize_t n = lh_pkt_build(s, p->b, sizeof(p->b));

	if (n < 0) {
		tap_diag("fixture bug: lh_pkt_build failed (%zd)", n);
		exit(2);
	}
	p->len = (size_t)n;
	p->ext_ends_nr = 0;
	fx_layout(p);
}

static void fx_refresh(struct fx_pkt *p)
{
	struct lh_pkt m;

	if (lh_pkt_parse(p->b, p->len, true, &m) == LH_STAT_ROCE) {
		/* the UDP checksum covers the ICRC, the ICRC masks the checksum */
		lh_pkt_ipv4_csum_update(p->b, &m);
		lh_pkt_icrc_update(p->b, &m);
		if (get16(p->b + m.l4_off + 6))
			lh_pkt_udp_csum_update(p->b, &m);
	}
}

void fx_ipv6_add_ext(struct fx_pkt *p, const uint8_t *types, int n, uint16_t frag_off_m)
{
	size_t at = p->l3_off + 40, total = 0;
	uint8_t ext[256];
	uint8_t first_nh = p->b[p->l3_off + 6];
	int i;

	memset(ext, 0, sizeof(ext));
	for (i = 0; i < n; i++) {
		uint8_t *x = ext + total;
		size_t xl = types[i] == 51 ? 12 : 8;

		x[0] = i + 1 < n ? types[i + 1] : first_nh;
		if (types[i] == 51)
			x[1] = 1; /* (1 + 2) * 4 = 12 bytes */
		else if (types[i] == 44)
			put16(x + 2, frag_off_m);
		else
			x[1] = 0; /* (0 + 1) * 8 = 8 bytes */
		if (types[i] == 0 || types[i] == 60) {
			x[2] = 1; /* PadN option of 4 bytes */
			x[3] = 4;
		}
		total += xl;
		p->ext_ends[p->ext_ends_nr++] = at + total;
	}
	memmove(p->b + at + total, p->b + at, p->len - at);
	memcpy(p->b + at, ext, total);
	p->len += total;
	p->b[p->l3_off + 6] = n ? types[0] : first_nh;
	put16(p->b + p->l3_off + 4, (uint16_t)(get16(p->b + p->l3_off + 4) + total));
	p->udp_off += total;
	p->bth_off += total;
	p->ext_end = p->udp_off;
	fx_refresh(p);
}

void fx_ipv4_add_options(struct fx_pkt *p, int words)
{
	size_t at = p->l3_off + 20, total = (size_t)words * 4;

	memmove(p->b + at + total, p->b + at, p->len - at);
	memset(p->b + at, 1, total); /* NOP options */
	p->len += total;
	p->b[p->l3_off] = (uint8_t)(0x40 | (5 + words));
	put16(p->b + p->l3_off + 2, (uint16_t)(get16(p->b + p->l3_off + 2) + total));
	p->udp_off += total;
	p->bth_off += total;
	p->ext_end = p->udp_off;
	fx_refresh(p);
}

void fx_fix_lengths(struct fx_pkt *p, size_t len)
{
	if (p->family == AF_INET6)
		put16(p->b + p->l3_off + 4, (uint16_t)(len - p->l3_off - 40));
	else
		put16(p->b + p->l3_off + 2, (uint16_t)(len - p->l3_off));
	if (len >= p->udp_off + 8)
		put16(p->b + p->udp_off + 4, (uint16_t)(len - p->udp_off));
}

void fx_expect_observe(struct lh_fixture *f, const char *reason_field, const char *opcode_field)
{
	static char bufs[64][64];
	static int next;
	int i = 0;

	memset(f->deltas, 0, sizeof(f->deltas));
	f->verdict = 2; /* XDP_PASS */
	f->deltas[i++] = (struct lh_counter_delta){ "lh_stats.rx", 1 };
	f->deltas[i++] = (struct lh_counter_delta){ "lh_stats.pass", 1 };
	snprintf(bufs[next], sizeof(bufs[0]), "lh_stats.%s", reason_field);
	f->deltas[i++] = (struct lh_counter_delta){ bufs[next], 1 };
	next = (next + 1) % 64;
	if (opcode_field) {
		snprintf(bufs[next], sizeof(bufs[0]), "lh_opcodes.%s", opcode_field);
		f->deltas[i++] = (struct lh_counter_delta){ bufs[next], 1 };
		next = (next + 1) % 64;
	}
}

static const uint8_t random_opcodes[] = {
	ROCE_RC_SEND_FIRST,	    ROCE_RC_SEND_MIDDLE,	 ROCE_RC_SEND_LAST,
	ROCE_RC_SEND_ONLY,	    ROCE_RC_SEND_ONLY_WITH_IMMEDIATE, ROCE_RC_RDMA_WRITE_FIRST,
	ROCE_RC_RDMA_WRITE_MIDDLE,  ROCE_RC_RDMA_WRITE_LAST,	 ROCE_RC_RDMA_WRITE_ONLY,
	ROCE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, ROCE_RC_RDMA_READ_REQUEST, ROCE_RC_ACKNOWLEDGE,
	ROCE_RC_RDMA_READ_RESPONSE_FIRST, ROCE_RC_ATOMIC_ACKNOWLEDGE, ROCE_RC_COMPARE_SWAP,
	ROCE_UC_SEND_ONLY,	    ROCE_UC_RDMA_WRITE_ONLY,	 ROCE_UD_SEND_ONLY,
	ROCE_CNP,		    ROCE_RC_SEND_LAST_WITH_INVALIDATE,
};

void fx_random_roce(struct fx_pkt *p, unsigned int *seed, size_t max_payload)
{
	static uint8_t payload[FX_MAX_PKT];
	struct lh_pkt_spec s;
	uint32_t f;
	size_t i;

	lh_pkt_spec_init(&s, fx_rand(seed) & 1 ? AF_INET6 : AF_INET);
	s.nr_vlans = fx_rand(seed) % 3;
	for (i = 0; i < s.nr_vlans; i++) {
		s.vlan[i].tpid = (i == 0 && s.nr_vlans == 2) ? LH_ETH_P_8021AD : LH_ETH_P_8021Q;
		s.vlan[i].tci = (uint16_t)(fx_rand(seed) & 0xffff);
	}
	s.tos = (uint8_t)fx_rand(seed);
	s.ttl = (uint8_t)fx_rand(seed);
	s.flow_label = fx_rand(seed) & 0xfffff;
	s.ip_id = (uint16_t)fx_rand(seed);
	s.udp_csum = fx_rand(seed) & 1;
	s.sport = (uint16_t)fx_rand(seed);
	s.roce.opcode = random_opcodes[fx_rand(seed) % sizeof(random_opcodes)];
	s.roce.se = fx_rand(seed) & 1;
	s.roce.mig = fx_rand(seed) & 1;
	s.roce.pkey = (uint16_t)fx_rand(seed);
	s.roce.byte4 = (uint8_t)fx_rand(seed);
	s.roce.dqpn = fx_rand(seed) & ROCE_QPN_MASK;
	s.roce.ackreq = fx_rand(seed) & 1;
	s.roce.psn = fx_rand(seed) & ROCE_PSN_MASK;
	s.roce.reth.va = (uint64_t)fx_rand(seed) << 32 | fx_rand(seed);
	s.roce.reth.rkey = fx_rand(seed);
	s.roce.reth.dmalen = fx_rand(seed);
	s.roce.aeth.syndrome = (uint8_t)fx_rand(seed);
	s.roce.aeth.msn = fx_rand(seed);
	s.roce.imm = fx_rand(seed);
	s.roce.deth.qkey = fx_rand(seed);
	s.roce.deth.sqpn = fx_rand(seed);
	f = roce_opcode_info(s.roce.opcode);
	if (f & ROCE_OPF_PAYLOAD) {
		s.payload_len = max_payload ? fx_rand(seed) % (max_payload + 1) : 0;
		for (i = 0; i < s.payload_len; i++)
			payload[i] = (uint8_t)fx_rand(seed);
		s.payload = payload;
	}
	fx_build(p, &s);
}

void fx_qp_key(const struct fx_pkt *p, struct lh_qp_key *k)
{
	memset(k, 0, sizeof(*k));
	if (p->family == AF_INET) {
		k->saddr[10] = k->saddr[11] = k->daddr[10] = k->daddr[11] = 0xff;
		memcpy(&k->saddr[12], p->b + p->l3_off + 12, 4);
		memcpy(&k->daddr[12], p->b + p->l3_off + 16, 4);
	} else {
		memcpy(k->saddr, p->b + p->l3_off + 8, 16);
		memcpy(k->daddr, p->b + p->l3_off + 24, 16);
	}
	k->dqpn = (uint32_t)p->b[p->bth_off + 5] << 16 | (uint32_t)p->b[p->bth_off + 6] << 8 |
		  p->b[p->bth_off + 7];
}
