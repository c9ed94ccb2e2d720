// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* RoCEv2 packet builder and parser (rules shared with bpf/lib/parse.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "icrc.h"
#include "bytes.h"
#include "pkt.h"

#define ETH_HDR_LEN 14
#define VLAN_HDR_LEN 4
#define IPV4_HDR_LEN 20
#define IPV6_HDR_LEN 40
#define UDP_HDR_LEN 8
#define BTH_LEN ((size_t)sizeof(struct roce_bth))
#define IPPROTO_UDP_NUM 17
#define IPV4_DF 0x4000
#define IPV4_MF 0x2000
#define IPV4_FRAG_OFF_MASK 0x1fff


void lh_pkt_spec_init(struct lh_pkt_spec *s, int family)
{
	static const uint8_t dmac[LH_ETH_ALEN] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };
	static const uint8_t smac[LH_ETH_ALEN] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };

	memset(s, 0, sizeof(*s));
	s->l2 = true;
	memcpy(s->dst_mac, dmac, sizeof(dmac));
	memcpy(s->src_mac, smac, sizeof(smac));
	s->family = family;
	if (family == AF_INET6) {
		s->src.b[0] = 0xfd;
		s->src.b[15] = 1;
		s->dst.b[0] = 0xfd;
		s->dst.b[15] = 2;
		s->udp_csum = true; /* RFC 8200: zero UDP checksums are not for IPv6 */
	} else {
		s->src.v4.s_addr = htonl(0x0a000001);
		s->dst.v4.s_addr = htonl(0x0a000002);
	}
	s->ttl = 64;
	s->df = true;
	s->ip_id = 1;
	s->sport = 0xc000;
	s->dport = ROCEV2_UDP_PORT;
	s->roce.opcode = ROCE_RC_SEND_ONLY;
	s->roce.pkey = ROCE_DEFAULT_PKEY;
}

static size_t spec_l2_len(const struct lh_pkt_spec *s)
{
	return s->l2 ? ETH_HDR_LEN + VLAN_HDR_LEN * s->nr_vlans : 0;
}

static size_t spec_l3_len(const struct lh_pkt_spec *s)
{
	return s->family == AF_INET6 ? IPV6_HDR_LEN : IPV4_HDR_LEN;
}

/* UDP payload length: BTH, extension headers, payload, pad, ICRC */
static size_t spec_roce_len(const struct lh_pkt_spec *s)
{
	uint32_t f = roce_opcode_info(s->roce.opcode);
	size_t pay = s->payload_len;

	return BTH_LEN + roce_ext_hdr_len(f) + pay + ((4 - (pay & 3)) & 3) + ROCE_ICRC_LEN;
}

size_t lh_pkt_size(const struct lh_pkt_spec *s)
{
	return spec_l2_len(s) + spec_l3_len(s) + UDP_HDR_LEN + spec_roce_len(s);
}

uint16_t lh_inet_csum(const void *data, size_t len, uint32_t sum)
{
	const uint8_t *p = data;

	while (len > 1) {
		sum += get16(p);
		p += 2;
		len -= 2;
	}
	if (len)
		sum += (uint32_t)p[0] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* One's complement sum of the pseudo header (RFC 768 / RFC 8200 8.1) */
static uint32_t udp_pseudo_sum(const uint8_t *l3, int family, uint16_t udp_len)
{
	uint32_t sum = 0;
	const uint8_t *a;
	int i, n;

	if (family == AF_INET6) {
		a = l3 + 8;
		n = 32;
	} else {
		a = l3 + 12;
		n = 8;
	}
	for (i = 0; i < n; i += 2)
		sum += get16(a + i);
	return sum + IPPROTO_UDP_NUM + udp_len;
}

static uint16_t udp_csum(const uint8_t *l3, int family, const uint8_t *udp, uint16_t udp_len)
{
	uint16_t c = lh_inet_csum(udp, udp_len, udp_pseudo_sum(l3, family, udp_len));

	return c ? c : 0xffff; /* 0 means "no checksum" on the wire */
}

static uint8_t *write_roce_ext(const struct lh_roce_hdrs *r, uint32_t f, uint8_t *p)
{
	if (f & ROCE_OPF_DETH) {
		put32(p, r->deth.qkey);
		put32(p + 4, r->deth.sqpn & ROCE_QPN_MASK);
		p += sizeof(struct roce_deth);
	}
	if (f & ROCE_OPF_FETH) {
		put32(p, r->feth);
		p += sizeof(struct roce_feth);
	}
	if (f & ROCE_OPF_RETH) {
		put64(p, r->reth.va);
		put32(p + 8, r->reth.rkey);
		put32(p + 12, r->reth.dmalen);
		p += sizeof(struct roce_reth);
	}
	if (f & ROCE_OPF_ATOMIC_ETH) {
		put64(p, r->atomic.va);
		put32(p + 8, r->atomic.rkey);
		put64(p + 12, r->atomic.swap_add);
		put64(p + 20, r->atomic.compare);
		p += sizeof(struct roce_atomic_eth);
	}
	if (f & ROCE_OPF_AETH) {
		put32(p, (uint32_t)r->aeth.syndrome << 24 | (r->aeth.msn & ROCE_MSN_MASK));
		p += sizeof(struct roce_aeth);
	}
	if (f & ROCE_OPF_ATOMIC_ACK_ETH) {
		put64(p, r->atomic_ack_orig);
		p += sizeof(struct roce_atomic_ack_eth);
	}
	if (f & ROCE_OPF_IMM) {
		put32(p, r->imm);
		p += sizeof(struct roce_immdt);
	}
	if (f & ROCE_OPF_IETH) {
		put32(p, r->ieth_rkey);
		p += sizeof(struct roce_ieth);
	}
	if (f & ROCE_OPF_CNP) {
		memset(p, 0, ROCE_CNP_PAD_LEN);
		p += ROCE_CNP_PAD_LEN;
	}
	return p;
}

/* The UDP header of s for a datagram of len bytes, checksum 0; returns where its payload starts */
static uint8_t *write_udp(const struct lh_pkt_spec *s, uint8_t *p, size_t len)
{
	put16(p, s->sport);
	put16(p + 2, s->dport);
	put16(p + 4, (uint16_t)len);
	put16(p + 6, 0);
	return p + UDP_HDR_LEN;
}

/* Link and IP headers of s for an IP payload of l4_len bytes; returns where L4 starts */
static uint8_t *write_l2_l3(const struct lh_pkt_spec *s, uint8_t *p, size_t l4_len)
{
	unsigned int i;

	if (s->l2) {
		memcpy(p, s->dst_mac, LH_ETH_ALEN);
		memcpy(p + 6, s->src_mac, LH_ETH_ALEN);
		p += 12;
		for (i = 0; i < s->nr_vlans; i++) {
			put16(p, s->vlan[i].tpid ? s->vlan[i].tpid : LH_ETH_P_8021Q);
			put16(p + 2, s->vlan[i].tci);
			p += VLAN_HDR_LEN;
		}
		put16(p, s->family == AF_INET6 ? LH_ETH_P_IPV6 : LH_ETH_P_IPV4);
		p += 2;
	}
	if (s->family == AF_INET6) {
		put32(p, 6u << 28 | (uint32_t)s->tos << 20 | (s->flow_label & 0xfffff));
		put16(p + 4, (uint16_t)l4_len);
		p[6] = IPPROTO_UDP_NUM;
		p[7] = s->ttl;
		memcpy(p + 8, s->src.v6.s6_addr, 16);
		memcpy(p + 24, s->dst.v6.s6_addr, 16);
		return p + IPV6_HDR_LEN;
	}
	p[0] = 0x45;
	p[1] = s->tos;
	put16(p + 2, (uint16_t)(IPV4_HDR_LEN + l4_len));
	put16(p + 4, s->ip_id);
	put16(p + 6, s->df ? IPV4_DF : 0);
	p[8] = s->ttl;
	p[9] = IPPROTO_UDP_NUM;
	put16(p + 10, 0);
	memcpy(p + 12, &s->src.v4, 4);
	memcpy(p + 16, &s->dst.v4, 4);
	put16(p + 10, lh_inet_csum(p, IPV4_HDR_LEN, 0));
	return p + IPV4_HDR_LEN;
}

ssize_t lh_pkt_build(const struct lh_pkt_spec *s, void *buf, size_t cap)
{
	uint32_t f = roce_opcode_info(s->roce.opcode);
	size_t total = lh_pkt_size(s), roce_len = spec_roce_len(s), l3_len = spec_l3_len(s);
	uint8_t *p = buf, *l3, *udp;
	uint32_t pad, icrc;

	if (!f || s->nr_vlans > LH_MAX_VLANS || (s->family != AF_INET && s->family != AF_INET6))
		return -EINVAL;
	if (s->payload_len && !s->payload)
		return -EINVAL;
	if (UDP_HDR_LEN + roce_len > 0xffff || total > cap)
		return -ENOSPC;

	l3 = p + spec_l2_len(s);
	p = write_l2_l3(s, p, UDP_HDR_LEN + roce_len);

	udp = p;
	p = write_udp(s, p, UDP_HDR_LEN + roce_len);

	pad = (uint32_t)((4 - (s->payload_len & 3)) & 3);
	p[0] = s->roce.opcode;
	p[1] = (uint8_t)((s->roce.se ? BTH_FLAG_SE : 0) | (s->roce.mig ? BTH_FLAG_MIG : 0) |
			 pad << BTH_PAD_SHIFT | (s->roce.tver & BTH_TVER_MASK));
	put16(p + 2, s->roce.pkey);
	put32(p + 4, (uint32_t)s->roce.byte4 << 24 | (s->roce.dqpn & ROCE_QPN_MASK));
	put32(p + 8, (s->roce.ackreq ? BTH_ACKREQ : 0) | (s->roce.psn & ROCE_PSN_MASK));
	p = write_roce_ext(&s->roce, f, p + BTH_LEN);
	if (s->payload_len)
		memcpy(p, s->payload, s->payload_len);
	p += s->payload_len;
	memset(p, 0, pad);
	p += pad;

	/* The ICRC goes in first: the UDP checksum covers it, not the reverse */
	if (s->icrc_override) {
		icrc = s->icrc;
	} else if (lh_icrc_calc(l3, l3_len, (size_t)(p - l3), &icrc)) {
		return -EINVAL;
	}
	lh_icrc_store(p, icrc);
	p += ROCE_ICRC_LEN;
	if (s->udp_csum)
		put16(udp + 6, udp_csum(l3, s->family, udp, (uint16_t)(p - udp)));
	return (ssize_t)(p - (uint8_t *)buf);
}

ssize_t lh_udp_build(const struct lh_pkt_spec *s, const void *payload, size_t len, void *buf,
		     size_t cap)
{
	size_t total = spec_l2_len(s) + spec_l3_len(s) + UDP_HDR_LEN + len;
	uint8_t *l3, *udp;

	if (s->nr_vlans > LH_MAX_VLANS || (s->family != AF_INET && s->family != AF_INET6))
		return -EINVAL;
	if (UDP_HDR_LEN + len > 0xffff || total > cap)
		return -ENOSPC;
	l3 = (uint8_t *)buf + spec_l2_len(s);
	udp = write_l2_l3(s, buf, UDP_HDR_LEN + len);
	memcpy(write_udp(s, udp, UDP_HDR_LEN + len), payload, len);
	put16(udp + 6, udp_csum(l3, s->family, udp, (uint16_t)(UDP_HDR_LEN + len)));
	return (ssize_t)total;
}

/* ---- parser ---- */

static enum lh_stat parse_roce(const uint8_t *b, size_t end, struct lh_pkt *p)
{
	const uint8_t *h = b + p->bth_off, *e;
	size_t avail = end - p->bth_off, ext;
	struct lh_roce_hdrs *r = &p->roce;
	uint32_t f, w;

	if (avail < BTH_LEN)
		return LH_STAT_PARSE_TRUNC_BTH;
	r->opcode = h[0];
	r->se = h[1] & BTH_FLAG_SE;
	r->mig = h[1] & BTH_FLAG_MIG;
	p->pad = (h[1] & BTH_PAD_MASK) >> BTH_PAD_SHIFT;
	r->tver = h[1] & BTH_TVER_MASK;
	r->pkey = get16(h + 2);
	w = get32(h + 4);
	r->byte4 = (uint8_t)(w >> 24);
	r->dqpn = w & ROCE_QPN_MASK;
	w = get32(h + 8);
	r->ackreq = w & BTH_ACKREQ;
	r->psn = w & ROCE_PSN_MASK;
	if (r->tver != 0)
		return LH_STAT_PARSE_BAD_BTH_VERSION;
	f = roce_opcode_info(r->opcode);
	if (!f)
		return LH_STAT_PARSE_UNKNOWN_OPCODE;
	p->opflags = f;
	ext = roce_ext_hdr_len(f);
	if (avail < BTH_LEN + ext + p->pad + ROCE_ICRC_LEN)
		return LH_STAT_PARSE_TRUNC_ROCE;

	e = h + BTH_LEN;
	if (f & ROCE_OPF_DETH) {
		r->deth.qkey = get32(e);
		r->deth.sqpn = get32(e + 4) & ROCE_QPN_MASK;
		e += sizeof(struct roce_deth);
	}
	if (f & ROCE_OPF_FETH) {
		r->feth = get32(e);
		e += sizeof(struct roce_feth);
	}
	if (f & ROCE_OPF_RETH) {
		r->reth.va = get64(e);
		r->reth.rkey = get32(e + 8);
		r->reth.dmalen = get32(e + 12);
		e += sizeof(struct roce_reth);
	}
	if (f & ROCE_OPF_ATOMIC_ETH) {
		r->atomic.va = get64(e);
		r->atomic.rkey = get32(e + 8);
		r->atomic.swap_add = get64(e + 12);
		r->atomic.compare = get64(e + 20);
		e += sizeof(struct roce_atomic_eth);
	}
	if (f & ROCE_OPF_AETH) {
		w = get32(e);
		r->aeth.syndrome = (uint8_t)(w >> 24);
		r->aeth.msn = w & ROCE_MSN_MASK;
		e += sizeof(struct roce_aeth);
	}
	if (f & ROCE_OPF_ATOMIC_ACK_ETH) {
		r->atomic_ack_orig = get64(e);
		e += sizeof(struct roce_atomic_ack_eth);
	}
	if (f & ROCE_OPF_IMM) {
		r->imm = get32(e);
		e += sizeof(struct roce_immdt);
	}
	if (f & ROCE_OPF_IETH)
		r->ieth_rkey = get32(e);
	p->payload_off = p->bth_off + BTH_LEN + ext;
	p->icrc_off = end - ROCE_ICRC_LEN;
	p->payload_len = p->icrc_off - p->payload_off - p->pad;
	p->icrc = lh_icrc_load(b + p->icrc_off);
	return LH_STAT_ROCE;
}

static enum lh_stat parse_udp(const uint8_t *b, size_t ip_end, struct lh_pkt *p)
{
	const uint8_t *u = b + p->l4_off;

	if (p->ip_proto != IPPROTO_UDP_NUM)
		return LH_STAT_PARSE_NON_UDP;
	if (ip_end - p->l4_off < UDP_HDR_LEN)
		return LH_STAT_PARSE_TRUNC_UDP;
	p->sport = get16(u);
	p->dport = get16(u + 2);
	p->udp_len = get16(u + 4);
	if (p->udp_len < UDP_HDR_LEN || p->udp_len > ip_end - p->l4_off)
		return LH_STAT_PARSE_BAD_UDP_LEN;
	if (p->dport != ROCEV2_UDP_PORT)
		return LH_STAT_PARSE_NON_ROCE;
	p->bth_off = p->l4_off + UDP_HDR_LEN;
	return parse_roce(b, p->l4_off + p->udp_len, p);
}

static enum lh_stat parse_ipv4(const uint8_t *b, size_t len, struct lh_pkt *p)
{
	const uint8_t *ip = b + p->l3_off;
	size_t avail = len - p->l3_off, ihl, tot;
	uint16_t frag;

	if (avail < IPV4_HDR_LEN)
		return LH_STAT_PARSE_TRUNC_IP;
	if (ip[0] >> 4 != 4)
		return LH_STAT_PARSE_BAD_IP_VERSION;
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	if (ihl < IPV4_HDR_LEN)
		return LH_STAT_PARSE_BAD_IP_HDR_LEN;
	if (ihl > avail)
		return LH_STAT_PARSE_TRUNC_IP;
	tot = get16(ip + 2);
	if (tot < ihl || tot > avail)
		return LH_STAT_PARSE_BAD_IP_LEN;
	p->family = AF_INET;
	p->tos = ip[1];
	p->ttl = ip[8];
	p->ip_proto = ip[9];
	memcpy(&p->src.v4, ip + 12, 4);
	memcpy(&p->dst.v4, ip + 16, 4);
	frag = get16(ip + 6);
	if (frag & (IPV4_MF | IPV4_FRAG_OFF_MASK))
		return LH_STAT_PARSE_IP_FRAGMENT;
	p->l4_off = p->l3_off + ihl;
	return parse_udp(b, p->l3_off + tot, p);
}

static enum lh_stat parse_ipv6(const uint8_t *b, size_t len, struct lh_pkt *p)
{
	const uint8_t *ip = b + p->l3_off;
	size_t avail = len - p->l3_off, end, off;
	uint8_t nh;
	int i;

	if (avail < IPV6_HDR_LEN)
		return LH_STAT_PARSE_TRUNC_IP;
	if (ip[0] >> 4 != 6)
		return LH_STAT_PARSE_BAD_IP_VERSION;
	if (IPV6_HDR_LEN + (size_t)get16(ip + 4) > avail)
		return LH_STAT_PARSE_BAD_IP_LEN;
	p->family = AF_INET6;
	p->tos = (uint8_t)(get16(ip) >> 4);
	p->ttl = ip[7];
	memcpy(&p->src.v6, ip + 8, 16);
	memcpy(&p->dst.v6, ip + 24, 16);
	end = p->l3_off + IPV6_HDR_LEN + get16(ip + 4);
	off = p->l3_off + IPV6_HDR_LEN;
	nh = ip[6];
	for (i = 0;; i++) {
		const uint8_t *x = b + off;
		size_t xlen;

		switch (nh) {
		case 0: /* hop-by-hop options */
		case 43: /* routing */
		case 60: /* destination options */
		case 51: /* authentication header */
		case 44: /* fragment */
			break;
		default:
			p->ip_proto = nh;
			p->l4_off = off;
			return parse_udp(b, end, p);
		}
		if (i == LH_MAX_IPV6_EXT)
			return LH_STAT_PARSE_IPV6_EXT_DEPTH;
		if (end - off < 8)
			return LH_STAT_PARSE_TRUNC_IPV6_EXT;
		if (nh == 44) {
			/* offset or more-fragments set: a real fragment */
			if (get16(x + 2) & 0xfff9)
				return LH_STAT_PARSE_IP_FRAGMENT;
			xlen = 8;
		} else if (nh == 51) {
			xlen = ((size_t)x[1] + 2) * 4;
		} else {
			xlen = ((size_t)x[1] + 1) * 8;
		}
		if (end - off < xlen)
			return LH_STAT_PARSE_TRUNC_IPV6_EXT;
		nh = x[0];
		off += xlen;
	}
}

enum lh_stat lh_pkt_parse(const void *buf, size_t len, bool l2, struct lh_pkt *p)
{
	const uint8_t *b = buf;
	uint16_t type;
	size_t off = 0;

	memset(p, 0, sizeof(*p));
	p->len = len;
	if (l2) {
		if (len < ETH_HDR_LEN)
			return p->result = LH_STAT_PARSE_TRUNC_ETH;
		off = 12;
		type = get16(b + off);
		while (type == LH_ETH_P_8021Q || type == LH_ETH_P_8021AD) {
			if (p->nr_vlans == LH_MAX_VLANS)
				return p->result = LH_STAT_PARSE_VLAN_DEPTH;
			if (len - off < 2 + VLAN_HDR_LEN)
				return p->result = LH_STAT_PARSE_TRUNC_VLAN;
			p->vlan[p->nr_vlans].tpid = type;
			p->vlan[p->nr_vlans].tci = get16(b + off + 2);
			p->nr_vlans++;
			off += VLAN_HDR_LEN;
			type = get16(b + off);
		}
		off += 2;
	} else {
		if (len < 1)
			return p->result = LH_STAT_PARSE_TRUNC_IP;
		type = (b[0] >> 4) == 6 ? LH_ETH_P_IPV6 : LH_ETH_P_IPV4;
	}
	p->ethertype = type;
	p->l3_off = off;
	if (type == LH_ETH_P_IPV4)
		p->result = parse_ipv4(b, len, p);
	else if (type == LH_ETH_P_IPV6)
		p->result = parse_ipv6(b, len, p);
	else
		p->result = LH_STAT_PARSE_NON_IP;
	return p->result;
}

int lh_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++)
		if (b[i] > 0xff)
			return -EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

int lh_parse_ip(const char *s, union lh_ip_addr *a, int *family)
{
	union lh_ip_addr v;

	memset(&v, 0, sizeof(v));
	if (inet_pton(AF_INET, s, &v.v4) == 1)
		*family = AF_INET;
	else if (inet_pton(AF_INET6, s, &v.v6) == 1)
		*family = AF_INET6;
	else
		return -EINVAL;
	*a = v;
	return 0;
}

void lh_addr16_from_v4(uint8_t out[16], uint32_t v4)
{
	memset(out, 0, 10);
	out[10] = 0xff;
	out[11] = 0xff;
	memcpy(out + 12, &v4, 4);
}

bool lh_addr16_is_v4(const uint8_t a[16])
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(a, pfx, sizeof(pfx)) == 0;
}

int lh_pkt_icrc_calc(const void *buf, const struct lh_pkt *p, uint32_t *icrc)
{
	const uint8_t *l3 = (const uint8_t *)buf + p->l3_off;

	if (p->result != LH_STAT_ROCE)
		return -EINVAL;
	return lh_icrc_calc(l3, p->l4_off - p->l3_off, p->icrc_off - p->l3_off, icrc);
}

bool lh_pkt_icrc_ok(const void *buf, const struct lh_pkt *p)
{
	uint32_t icrc;

	return !lh_pkt_icrc_calc(buf, p, &icrc) && icrc == p->icrc;
}

int lh_pkt_icrc_update(void *buf, const struct lh_pkt *p)
{
	uint32_t icrc;
	int err = lh_pkt_icrc_calc(buf, p, &icrc);

	if (!err)
		lh_icrc_store((uint8_t *)buf + p->icrc_off, icrc);
	return err;
}

void lh_pkt_ipv4_csum_update(void *buf, const struct lh_pkt *p)
{
	uint8_t *ip = (uint8_t *)buf + p->l3_off;

	if (p->family != AF_INET)
		return;
	put16(ip + 10, 0);
	put16(ip + 10, lh_inet_csum(ip, p->l4_off - p->l3_off, 0));
}

void lh_pkt_udp_csum_update(void *buf, const struct lh_pkt *p)
{
	uint8_t *l3 = (uint8_t *)buf + p->l3_off, *udp = (uint8_t *)buf + p->l4_off;

	put16(udp + 6, 0);
	put16(udp + 6, udp_csum(l3, p->family, udp, p->udp_len));
}

const char *lh_opcode_name(uint8_t opcode)
{
	switch (opcode) {
#define OPCODE_CASE(name, field, val) \
	case val:              \
		return #name;
		ROCE_OPCODES(OPCODE_CASE)
#undef OPCODE_CASE
	default:
		return NULL;
	}
}

const char *lh_opcode_field(uint8_t opcode)
{
	switch (opcode) {
#define OPCODE_FIELD_CASE(name, field, val) \
	case val:                           \
		return #field;
		ROCE_OPCODES(OPCODE_FIELD_CASE)
#undef OPCODE_FIELD_CASE
	default:
		return NULL;
	}
}

static const char *const stat_names[] = {
#define STAT_NAME(name, field, desc) #field,
	LH_STATS(STAT_NAME)
#undef STAT_NAME
};

static const char *const stat_descs[] = {
#define STAT_DESC(name, field, desc) desc,
	LH_STATS(STAT_DESC)
#undef STAT_DESC
};

const char *lh_stat_name(enum lh_stat s)
{
	return (unsigned int)s < LH_STAT_MAX ? stat_names[s] : "UNKNOWN";
}

const char *lh_stat_desc(enum lh_stat s)
{
	return (unsigned int)s < LH_STAT_MAX ? stat_descs[s] : "";
}
