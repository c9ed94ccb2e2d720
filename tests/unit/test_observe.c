// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The observe-mode pass-through XDP program (bpf/observe.bpf.c), run from the
 * production object under BPF_PROG_TEST_RUN: every frame is passed on
 * unchanged and exactly the right counters move. Covers every opcode, VLANs,
 * IPv6 extension headers, wrong versions and lengths, non-RoCE traffic,
 * every header cut at every byte, and thousands of mutated packets checked
 * against the user-space parser.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/bpf.h>

#include "bpf_harness.h"
#include "fixtures.h"
#include "tap.h"

#define PROG "lh_observe"
#define MIN_TEST_RUN_LEN 14 /* BPF_PROG_TEST_RUN refuses frames shorter than Ethernet */

static struct lh_harness *h;

/* Run p as a fixture expecting 'reason' (and its opcode when RoCE) */
static bool expect(const char *desc, const uint8_t *b, size_t len, enum lh_stat reason)
{
	struct lh_fixture f = { .desc = desc, .in = b, .in_len = len };
	struct lh_pkt m;

	lh_pkt_parse(b, len, true, &m);
	fx_expect_observe(&f, lh_stat_name(reason),
			  reason == LH_STAT_ROCE ? lh_opcode_field(b[m.bth_off]) : NULL);
	return lh_fixture_run(h, PROG, &f);
}

static bool expect_pkt(const char *desc, const struct fx_pkt *p, enum lh_stat reason)
{
	return expect(desc, p->b, p->len, reason);
}

static void base_spec(struct lh_pkt_spec *s, int family, uint8_t opcode, size_t payload_len)
{
	static uint8_t payload[4096];
	size_t i;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 3);
	lh_pkt_spec_init(s, family);
	s->roce.opcode = opcode;
	s->roce.dqpn = 0x123456;
	s->roce.psn = 0xfffffe;
	if (roce_opcode_info(opcode) & ROCE_OPF_PAYLOAD) {
		s->payload = payload;
		s->payload_len = payload_len;
	}
}

static void test_every_opcode(void)
{
	static const uint8_t all[] = {
#define OPCODE_LIST(name, field, val) val,
		ROCE_OPCODES(OPCODE_LIST)
#undef OPCODE_LIST
	};
	struct lh_pkt_spec s;
	struct fx_pkt p;
	char desc[128];
	size_t i;

	for (i = 0; i < sizeof(all); i++) {
		base_spec(&s, i & 1 ? AF_INET6 : AF_INET, all[i], 33);
		fx_build(&p, &s);
		snprintf(desc, sizeof(desc), "%s over IPv%d: passed, counted as RoCE and by opcode",
			 lh_opcode_name(all[i]), i & 1 ? 6 : 4);
		expect_pkt(desc, &p, LH_STAT_ROCE);
	}
}

static void test_vlans_and_padding(void)
{
	struct lh_pkt_spec s;
	struct fx_pkt p;
	uint8_t buf[FX_MAX_PKT];

	base_spec(&s, AF_INET, ROCE_RC_RDMA_WRITE_ONLY, 100);
	s.nr_vlans = 1;
	s.vlan[0].tci = 100;
	fx_build(&p, &s);
	expect_pkt("802.1Q-tagged RoCEv2: parsed through the tag", &p, LH_STAT_ROCE);

	s.nr_vlans = 2;
	s.vlan[0].tpid = LH_ETH_P_8021AD;
	s.vlan[0].tci = 10;
	s.vlan[1].tci = 20;
	fx_build(&p, &s);
	expect_pkt("802.1ad + 802.1Q (QinQ) RoCEv2: parsed through both tags", &p, LH_STAT_ROCE);

	/* a third tag: insert 4 bytes before the ethertype */
	memcpy(buf, p.b, 20);
	buf[20] = 0x81;
	buf[21] = 0x00;
	buf[22] = 0x00;
	buf[23] = 0x05;
	memcpy(buf + 24, p.b + 20, p.len - 20);
	expect("three VLAN tags: more than the parser follows, passed", buf, p.len + 4,
	       LH_STAT_PARSE_VLAN_DEPTH);

	base_spec(&s, AF_INET, ROCE_RC_ACKNOWLEDGE, 0);
	fx_build(&p, &s);
	memcpy(buf, p.b, p.len);
	memset(buf + p.len, 0, 12);
	expect("Ethernet padding after the IP datagram is ignored", buf, p.len + 12, LH_STAT_ROCE);
}

static void test_ipv6_ext(void)
{
	static const uint8_t hbh_dst_rt[] = { 0, 60, 43 };
	static const uint8_t frag[] = { 44 };
	static const uint8_t ah_dst[] = { 51, 60 };
	static const uint8_t seven[] = { 0, 60, 60, 60, 60, 60, 60 };
	static const uint8_t six[] = { 0, 60, 60, 60, 60, 60 };
	struct lh_pkt_spec s;
	struct fx_pkt p;

	base_spec(&s, AF_INET6, ROCE_RC_SEND_ONLY, 64);
	fx_build(&p, &s);
	fx_ipv6_add_ext(&p, hbh_dst_rt, 3, 0);
	expect_pkt("IPv6 hop-by-hop + destination options + routing: parsed to the BTH", &p,
		   LH_STAT_ROCE);

	fx_build(&p, &s);
	fx_ipv6_add_ext(&p, ah_dst, 2, 0);
	expect_pkt("IPv6 AH (4-byte units) + destination options: parsed", &p, LH_STAT_ROCE);

	fx_build(&p, &s);
	fx_ipv6_add_ext(&p, six, 6, 0);
	expect_pkt("six IPv6 extension headers: the most the parser follows", &p, LH_STAT_ROCE);

	fx_build(&p, &s);
	fx_ipv6_add_ext(&p, seven, 7, 0);
	expect_pkt("seven IPv6 extension headers: too deep, passed and counted", &p,
		   LH_STAT_PARSE_IPV6_EXT_DEPTH);

	fx_build(&p, &s);
	fx_ipv6_add_ext(&p, frag, 1, 0);
	expect_pkt("IPv6 atomic fragment (offset 0, M clear): parsed", &p, LH_STAT_ROCE);

	fx_build(&p, &s);
	fx_ipv6_add_ext(&p, frag, 1, 1);
	expect_pkt("IPv6 first fragment (M set): a fragment", &p, LH_STAT_PARSE_IP_FRAGMENT);

	fx_build(&p, &s);
	fx_ipv6_add_ext(&p, frag, 1, 8 << 3);
	expect_pkt("IPv6 later fragment (offset 8): a fragment", &p, LH_STAT_PARSE_IP_FRAGMENT);
}

static void test_bad_headers(void)
{
	struct lh_pkt_spec s;
	struct fx_pkt p, q;

	base_spec(&s, AF_INET, ROCE_RC_SEND_ONLY, 16);
	fx_build(&p, &s);

	q = p;
	q.b[q.l3_off] = 0x65;
	expect_pkt("ethertype IPv4, version 6: wrong version", &q, LH_STAT_PARSE_BAD_IP_VERSION);
	q = p;
	q.b[q.l3_off] = 0x44;
	expect_pkt("IPv4 IHL 4: header length below 20", &q, LH_STAT_PARSE_BAD_IP_HDR_LEN);
	q = p;
	q.b[q.l3_off] = 0x4f;
	q.len = q.l3_off + 40;
	expect_pkt("IPv4 IHL 15 in a 40-byte datagram: header cut short", &q,
		   LH_STAT_PARSE_TRUNC_IP);
	q = p;
	q.b[q.l3_off + 2] = 0x10; /* total length 4096+ */
	expect_pkt("IPv4 total length beyond the frame", &q, LH_STAT_PARSE_BAD_IP_LEN);
	q = p;
	q.b[q.l3_off + 2] = 0;
	q.b[q.l3_off + 3] = 16;
	expect_pkt("IPv4 total length below the header length", &q, LH_STAT_PARSE_BAD_IP_LEN);
	q = p;
	q.b[q.l3_off + 6] |= 0x20;
	expect_pkt("IPv4 more-fragments set", &q, LH_STAT_PARSE_IP_FRAGMENT);
	q = p;
	q.b[q.l3_off + 7] = 0x10;
	expect_pkt("IPv4 fragment offset set", &q, LH_STAT_PARSE_IP_FRAGMENT);
	q = p;
	fx_ipv4_add_options(&q, 3);
	expect_pkt("IPv4 with 12 bytes of options: parsed", &q, LH_STAT_ROCE);

	q = p;
	q.b[q.udp_off + 4] = 0;
	q.b[q.udp_off + 5] = 7;
	expect_pkt("UDP length 7: below the header", &q, LH_STAT_PARSE_BAD_UDP_LEN);
	q = p;
	q.b[q.udp_off + 4] = 0x08;
	expect_pkt("UDP length beyond the IP payload", &q, LH_STAT_PARSE_BAD_UDP_LEN);
	q = p;
	q.b[q.udp_off + 2] = 0;
	q.b[q.udp_off + 3] = 53;
	expect_pkt("UDP to port 53: not RoCE", &q, LH_STAT_PARSE_NON_ROCE);
	q = p;
	q.b[q.l3_off + 9] = 6;
	expect_pkt("IPv4 TCP: not UDP", &q, LH_STAT_PARSE_NON_UDP);
	q = p;
	q.b[q.l3_off + 9] = 1;
	expect_pkt("IPv4 ICMP: not UDP", &q, LH_STAT_PARSE_NON_UDP);

	q = p;
	q.b[q.bth_off + 1] |= 0x01;
	expect_pkt("BTH transport version 1", &q, LH_STAT_PARSE_BAD_BTH_VERSION);
	q = p;
	q.b[q.bth_off] = 0x44;
	expect_pkt("RD opcode (0x44): unknown to longhaul", &q, LH_STAT_PARSE_UNKNOWN_OPCODE);
	q = p;
	q.b[q.bth_off] = 0x15;
	expect_pkt("reserved RC opcode 0x15", &q, LH_STAT_PARSE_UNKNOWN_OPCODE);
	q = p;
	q.b[q.bth_off] = 0x2c;
	expect_pkt("UC has no RDMA READ (0x2c)", &q, LH_STAT_PARSE_UNKNOWN_OPCODE);
	q = p;
	q.b[q.bth_off] = 0xa0;
	expect_pkt("XRC opcode 0xa0: unknown to longhaul", &q, LH_STAT_PARSE_UNKNOWN_OPCODE);

	/* 16 bytes of payload + ICRC cannot hold a RETH (16) + 4-byte ICRC + pad 3 */
	q = p;
	q.b[q.bth_off] = ROCE_RC_RDMA_WRITE_FIRST;
	q.b[q.bth_off + 1] |= 0x30;
	expect_pkt("RDMA WRITE FIRST without room for RETH, pad and ICRC", &q,
		   LH_STAT_PARSE_TRUNC_ROCE);

	base_spec(&s, AF_INET6, ROCE_RC_SEND_ONLY, 16);
	fx_build(&q, &s);
	q.b[q.l3_off] = 0x45;
	expect_pkt("ethertype IPv6, version 4: wrong version", &q, LH_STAT_PARSE_BAD_IP_VERSION);
	fx_build(&q, &s);
	q.b[q.l3_off + 4] = 0x40;
	expect_pkt("IPv6 payload length beyond the frame", &q, LH_STAT_PARSE_BAD_IP_LEN);
	fx_build(&q, &s);
	q.b[q.l3_off + 6] = 58;
	expect_pkt("ICMPv6: not UDP", &q, LH_STAT_PARSE_NON_UDP);
	fx_build(&q, &s);
	q.b[q.l3_off + 6] = 59;
	expect_pkt("IPv6 no next header: not UDP", &q, LH_STAT_PARSE_NON_UDP);
}

static void test_non_ip(void)
{
	uint8_t arp[42] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1, 0x08, 0x06 };
	uint8_t lldp[60] = { 0x01, 0x80, 0xc2, 0, 0, 0x0e, 2, 0, 0, 0, 0, 1, 0x88, 0xcc };
	uint8_t vlan_arp[46] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1,
				 0x81, 0x00, 0x00, 0x07, 0x08, 0x06 };

	expect("ARP: not IP, passed", arp, sizeof(arp), LH_STAT_PARSE_NON_IP);
	expect("LLDP: not IP, passed", lldp, sizeof(lldp), LH_STAT_PARSE_NON_IP);
	expect("VLAN-tagged ARP: not IP, passed", vlan_arp, sizeof(vlan_arp), LH_STAT_PARSE_NON_IP);
}

/* Expected outcome of p cut at len bytes with its length fields left alone */
static enum lh_stat raw_cut_expect(const struct fx_pkt *p, size_t len)
{
	unsigned int i;

	for (i = 0; i < p->nr_vlans; i++)
		if (len < 18 + 4 * i)
			return LH_STAT_PARSE_TRUNC_VLAN;
	if (len < p->l3_off + (p->family == AF_INET6 ? 40 : 20))
		return LH_STAT_PARSE_TRUNC_IP;
	return len < p->len ? LH_STAT_PARSE_BAD_IP_LEN : LH_STAT_ROCE;
}

/* Expected outcome of p cut at len bytes with IP and UDP lengths fixed to match */
static enum lh_stat fixed_cut_expect(const struct fx_pkt *p, size_t len)
{
	unsigned int i;

	for (i = 0; i < p->ext_ends_nr; i++)
		if (len < p->ext_ends[i])
			return LH_STAT_PARSE_TRUNC_IPV6_EXT;
	if (len < p->udp_off + 8)
		return LH_STAT_PARSE_TRUNC_UDP;
	if (len < p->bth_off + sizeof(struct roce_bth))
		return LH_STAT_PARSE_TRUNC_BTH;
	if (len < p->bth_off + p->roce_need)
		return LH_STAT_PARSE_TRUNC_ROCE;
	return LH_STAT_ROCE;
}

/* Cut p at every byte (twice: raw and with lengths fixed); one TAP line */
static void truncations(const char *name, const struct fx_pkt *p)
{
	static struct fx_pkt q;
	char err[1024], desc[160];
	int cases = 0, bad = 0, user_bad = 0;
	size_t len, min_fixed = p->l3_off + (p->family == AF_INET6 ? 40 : 20);
	int pass;

	for (pass = 0; pass < 2; pass++) {
		for (len = MIN_TEST_RUN_LEN; len <= p->len; len++) {
			struct lh_fixture f = { .desc = desc };
			enum lh_stat want;
			struct lh_pkt m;

			if (pass == 1 && len < min_fixed)
				continue;
			q = *p;
			if (pass == 1)
				fx_fix_lengths(&q, len);
			want = pass == 0 ? raw_cut_expect(p, len) : fixed_cut_expect(p, len);
			f.in = q.b;
			f.in_len = len;
			fx_expect_observe(&f, lh_stat_name(want),
					  want == LH_STAT_ROCE ? lh_opcode_field(q.b[q.bth_off]) : NULL);
			cases++;
			if (lh_pkt_parse(q.b, len, true, &m) != want) {
				if (user_bad++ < 3)
					tap_diag("  user parser, %s cut at %zu: %s, want %s",
						 pass ? "lengths fixed" : "raw", len,
						 lh_stat_name(m.result), lh_stat_name(want));
			}
			if (!lh_fixture_check(h, PROG, &f, err, sizeof(err)) && bad++ < 3)
				tap_diag("  %s cut at %zu: %s", pass ? "lengths fixed" : "raw", len, err);
		}
	}
	tap_eq_int(bad, 0, "%s cut at every byte (%d frames): right counter, passed unchanged",
		   name, cases);
	tap_eq_int(user_bad, 0, "%s cut at every byte: user-space parser agrees", name);
}

static void test_truncations(void)
{
	static const uint8_t two_ext[] = { 0, 60 };
	struct lh_pkt_spec s;
	struct fx_pkt p;

	base_spec(&s, AF_INET, ROCE_RC_RDMA_WRITE_FIRST, 64);
	s.nr_vlans = 1;
	fx_build(&p, &s);
	truncations("VLAN/IPv4/RDMA WRITE FIRST (RETH)", &p);

	base_spec(&s, AF_INET6, ROCE_RC_ACKNOWLEDGE, 0);
	fx_build(&p, &s);
	fx_ipv6_add_ext(&p, two_ext, 2, 0);
	truncations("IPv6+2 extension headers/ACK (AETH)", &p);

	base_spec(&s, AF_INET6, ROCE_RC_SEND_ONLY_WITH_IMMEDIATE, 5);
	s.nr_vlans = 2;
	fx_build(&p, &s);
	truncations("QinQ/IPv6/SEND ONLY IMM (ImmDt, pad 3)", &p);

	base_spec(&s, AF_INET, ROCE_UD_SEND_ONLY, 8);
	fx_build(&p, &s);
	truncations("IPv4/UD SEND ONLY (DETH)", &p);
}

/* Mutated packets: the BPF parser must reach the user-space parser's verdict */
static void test_differential(int n)
{
	static struct fx_pkt p;
	unsigned int seed = 20261122;
	char err[1024];
	int i, bad = 0, roce = 0;

	for (i = 0; i < n; i++) {
		struct lh_fixture f = { .desc = "mutated" };
		struct lh_pkt m;
		int k, muts = 1 + fx_rand(&seed) % 3;

		fx_random_roce(&p, &seed, 300);
		if (fx_rand(&seed) % 5 == 0) {
			static const uint8_t ext[] = { 0, 60, 43, 44, 51 };

			if (p.family == AF_INET6)
				fx_ipv6_add_ext(&p, ext + fx_rand(&seed) % 4,
						1 + (int)(fx_rand(&seed) % 2), 0);
		}
		for (k = 0; k < muts; k++) {
			switch (fx_rand(&seed) % 4) {
			case 0: /* one byte of the headers */
				p.b[fx_rand(&seed) % (p.bth_off + 12 < p.len ? p.bth_off + 12 : p.len)] =
					(uint8_t)fx_rand(&seed);
				break;
			case 1: /* cut */
				p.len = MIN_TEST_RUN_LEN + fx_rand(&seed) % (p.len - MIN_TEST_RUN_LEN + 1);
				break;
			case 2: /* a length field */
				p.b[(fx_rand(&seed) & 1 ? p.udp_off + 5 : p.l3_off + 3) % p.len] ^=
					(uint8_t)(1u << (fx_rand(&seed) % 8));
				break;
			default: /* opcode */
				p.b[p.bth_off % p.len] = (uint8_t)fx_rand(&seed);
				break;
			}
		}
		lh_pkt_parse(p.b, p.len, true, &m);
		roce += m.result == LH_STAT_ROCE;
		f.in = p.b;
		f.in_len = p.len;
		fx_expect_observe(&f, lh_stat_name(m.result),
				  m.result == LH_STAT_ROCE ? lh_opcode_field(p.b[m.bth_off]) : NULL);
		if (!lh_fixture_check(h, PROG, &f, err, sizeof(err)) && bad++ < 5)
			tap_diag("  mutation %d (user parser: %s): %s", i, lh_stat_name(m.result), err);
	}
	tap_eq_int(bad, 0,
		   "%d mutated packets (%d still RoCE): BPF parser counts what the user-space "
		   "parser finds",
		   n, roce);
}

static int enable_icrc(struct bpf_object *obj, void *ctx)
{
	__u8 on = 1;

	(void)ctx;
	return lh_obj_set_rodata(obj, "lh_verify_icrc", &on, sizeof(on));
}

static void test_icrc_verification(void)
{
	struct lh_harness *plain = h;
	struct lh_pkt_spec s;
	struct lh_fixture f = { 0 };
	struct fx_pkt p;

	h = lh_harness_open("observe", enable_icrc, NULL);
	if (!tap_true(h != NULL, "observe.bpf.o loads with ICRC verification on")) {
		h = plain;
		return;
	}
	base_spec(&s, AF_INET, ROCE_RC_RDMA_WRITE_ONLY, 1024);
	fx_build(&p, &s);
	f.desc = "ICRC verification: a right ICRC counts icrc_ok";
	f.in = p.b;
	f.in_len = p.len;
	fx_expect_observe(&f, "roce", "rc_rdma_write_only");
	f.deltas[4] = (struct lh_counter_delta){ "lh_stats.icrc_ok", 1 };
	lh_fixture_run(h, PROG, &f);

	p.b[p.bth_off + 40] ^= 0x80;
	f.desc = "ICRC verification: a flipped payload bit counts icrc_bad, still passed";
	f.deltas[4] = (struct lh_counter_delta){ "lh_stats.icrc_bad", 1 };
	lh_fixture_run(h, PROG, &f);

	p.b[p.bth_off + 40] ^= 0x80;
	p.b[p.l3_off + 8] = 3; /* TTL: not covered */
	p.b[p.bth_off + 4] = 0xc0; /* FECN and BECN: not covered */
	f.desc = "ICRC verification: TTL and BTH byte 4 changes keep icrc_ok";
	f.deltas[4] = (struct lh_counter_delta){ "lh_stats.icrc_ok", 1 };
	lh_fixture_run(h, PROG, &f);

	lh_harness_close(h);
	h = plain;
}

int main(void)
{
	h = lh_harness_open("observe", NULL, NULL);
	if (!tap_true(h != NULL, "production observe.bpf.o loads (verifier accepts it)"))
		return tap_done();
	test_every_opcode();
	test_vlans_and_padding();
	test_ipv6_ext();
	test_bad_headers();
	test_non_ip();
	test_truncations();
	test_differential(5000);
	test_icrc_verification();
	lh_harness_close(h);
	return tap_done();
}
