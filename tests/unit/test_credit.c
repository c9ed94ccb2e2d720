// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The credit program (bpf/credit_tc.bpf.c, lh_cr_out) under BPF_PROG_TEST_RUN,
 * with the agent's side played by this test through the maps: a flow's life
 * at its first hop (created from the DC side, held while set up, forwarded
 * against credit, held at zero credit and while older packets wait, the
 * agent's releases, the hold limit, failover redirect) and the last-hop,
 * open and transit cases; what is not RoCEv2 over IPv4 passes untouched.
 * The packets leave by lo (ifindex 1, what BPF_PROG_TEST_RUN gives the skb);
 * "the DC side" is an ingress ifindex that needs no device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "bpf_harness.h"
#include "fixtures.h"
#include "lh_credit.h"
#include "tap.h"

/* LH_TC_NEXT (TC_ACT_UNSPEC, -1): let go, the next program on the hook sees it */
#define TC_NEXT 0xffffffffu
#define TC_SHOT 2
#define TC_REDIRECT 7
#define DC_IFINDEX 77 /* ingress only: no device needed */
#define OUT_IFINDEX 1 /* lo */

static struct lh_harness *h;
static int flow_fd, grant_fd, cfg_fd;
static struct ring_buffer *rb;

/* what the ring buffer carried since the last drain */
static struct lh_cr_event recs[16];
static size_t rec_sizes[16];
static int nrecs;

static int on_rec(void *ctx, void *data, size_t size)
{
	(void)ctx;
	if (nrecs < 16) {
		memcpy(&recs[nrecs], data, size < sizeof(recs[0]) ? size : sizeof(recs[0]));
		rec_sizes[nrecs++] = size;
	}
	return 0;
}

static void drain(void)
{
	nrecs = 0;
	ring_buffer__consume(rb);
}

static uint32_t run(const struct fx_pkt *p, uint32_t ingress, uint32_t mark)
{
	struct __sk_buff ctx = { .ifindex = OUT_IFINDEX, .ingress_ifindex = ingress, .mark = mark };
	static uint8_t out[9216];
	size_t out_len = sizeof(out);
	uint32_t verdict = 0xffff;

	if (lh_harness_run_skb(h, "lh_cr_out", p->b, p->len, &ctx, &verdict, out, &out_len))
		tap_diag("test run failed");
	return verdict;
}

static int64_t ctr(const char *name)
{
	char n[64];

	snprintf(n, sizeof(n), "lh_cr_stats.%s", name);
	return lh_counter_read(h, n);
}

static void roce(struct fx_pkt *p, int family, uint32_t dqpn)
{
	static uint8_t data[1024];
	struct lh_pkt_spec s;

	lh_pkt_spec_init(&s, family);
	s.roce.opcode = ROCE_RC_RDMA_WRITE_MIDDLE;
	s.roce.dqpn = dqpn;
	s.payload = data;
	s.payload_len = sizeof(data);
	fx_build(p, &s);
}

static uint32_t ip_len(const struct fx_pkt *p)
{
	return (uint32_t)(p->len - p->l3_off);
}

static struct lh_cr_flow flow_of(const struct fx_pkt *p)
{
	struct lh_cr_flow f = { 0 };
	struct lh_qp_key k;

	fx_qp_key(p, &k);
	bpf_map_lookup_elem(flow_fd, &k, &f);
	return f;
}

static void grant_set(const struct fx_pkt *p, const struct lh_cr_grant *g)
{
	struct lh_qp_key k;

	fx_qp_key(p, &k);
	if (bpf_map_update_elem(grant_fd, &k, g, BPF_ANY))
		tap_diag("grant update failed");
}

static void cfg_set(uint32_t hold_cap)
{
	struct lh_cr_config c = { .dc_ifindex = DC_IFINDEX, .hold_cap = hold_cap };
	uint32_t zero = 0;

	bpf_map_update_elem(cfg_fd, &zero, &c, BPF_ANY);
}

static void test_pass_through(void)
{
	static struct fx_pkt v6, udp, cut, other;
	int64_t n0 = ctr("non_roce"), i0 = ctr("ipv6"), u0 = ctr("unknown");
	struct lh_cr_flow f;

	roce(&v6, AF_INET6, 0x10);
	roce(&udp, AF_INET, 0x11);
	udp.b[udp.udp_off + 3] = 53; /* UDP port 53: not RoCEv2 */
	roce(&cut, AF_INET, 0x12);
	cut.len = cut.bth_off + 6; /* cut inside the BTH */
	fx_fix_lengths(&cut, cut.len);
	roce(&other, AF_INET, 0x13);
	tap_eq_hex(run(&udp, DC_IFINDEX, 0), TC_NEXT, "UDP that is not RoCEv2: passed");
	tap_eq_int(ctr("non_roce"), n0 + 1, "UDP that is not RoCEv2: counted non_roce");
	tap_eq_hex(run(&cut, DC_IFINDEX, 0), TC_NEXT, "RoCEv2 cut inside its BTH: passed");
	tap_eq_int(ctr("non_roce"), n0 + 2, "RoCEv2 cut inside its BTH: counted non_roce");
	tap_eq_hex(run(&v6, DC_IFINDEX, 0), TC_NEXT, "RoCEv2 over IPv6: passed");
	tap_eq_int(ctr("ipv6"), i0 + 1, "RoCEv2 over IPv6: counted ipv6");
	tap_eq_u64(flow_of(&v6).fwd_pkts, 0, "RoCEv2 over IPv6: no flow (forwarded packets)");
	f = flow_of(&other);
	tap_eq_hex(f.flags, 0, "RoCEv2 of no flow: none before (flags)");
	tap_eq_hex(run(&other, 5, 0), TC_NEXT,
		   "RoCEv2 of no flow that did not come from the DC: passed");
	tap_eq_int(ctr("unknown"), u0 + 1,
		   "RoCEv2 of no flow that did not come from the DC: counted unknown");
	tap_eq_hex(flow_of(&other).flags, 0,
		   "RoCEv2 of no flow that did not come from the DC: none made (flags)");
}

static void test_first_hop(void)
{
	static struct fx_pkt p;
	struct lh_cr_grant g = { 0 };
	struct lh_cr_flow f;
	struct lh_qp_key k;
	uint32_t len, v;
	int64_t fw0, held0, full0, rel0, red0;

	roce(&p, AF_INET, 0x4242);
	fx_qp_key(&p, &k);
	len = ip_len(&p);
	cfg_set(4 * len);
	drain();

	/* the first packet from the DC: a flow starts here, held until the agent sets it up */
	held0 = ctr("held");
	v = run(&p, DC_IFINDEX, 0);
	f = flow_of(&p);
	drain();
	tap_eq_hex(v, TC_SHOT, "first packet from the DC: held (verdict)");
	tap_eq_hex(f.flags & LH_CRF_FIRST, LH_CRF_FIRST,
		   "first packet from the DC: flow made (first hop)");
	tap_eq_u64(f.held_pkts, 1, "first packet from the DC: held packets");
	tap_eq_u64(f.held_bytes, len, "first packet from the DC: held bytes");
	tap_eq_int(ctr("new_flow"), 1, "first packet from the DC: counted new_flow");
	tap_eq_int(ctr("held"), held0 + 1, "first packet from the DC: counted held");
	tap_eq_int(nrecs, 2, "the agent hears of the new flow: records");
	tap_eq_u64(recs[0].type, LH_CR_EV_NEW, "the agent hears of the new flow: a NEW record");
	tap_eq_mem(&recs[0].key, &k, sizeof(k), "the agent hears of the new flow: its key");
	tap_eq_u64(rec_sizes[0], offsetof(struct lh_cr_event, data),
		   "the agent hears of the new flow: no data (record size)");
	tap_eq_u64(recs[1].type, LH_CR_EV_HOLD, "... and a HOLD record");
	tap_eq_u64(recs[1].len, len, "... the HOLD record: length");
	tap_eq_u64(recs[1].ifindex, OUT_IFINDEX, "... the HOLD record: ifindex");
	tap_eq_mem(&recs[1].key, &k, sizeof(k), "... the HOLD record: its key");
	tap_eq_mem(recs[1].data, p.b + p.l3_off, len,
		   "... the HOLD record: the whole IP packet, byte for byte (%u bytes)", len);

	/* hold limit while pending: 4 packets, the 5th passes (charged, counted) */
	run(&p, DC_IFINDEX, 0);
	run(&p, DC_IFINDEX, 0);
	run(&p, DC_IFINDEX, 0);
	full0 = ctr("hold_full");
	v = run(&p, DC_IFINDEX, 0);
	f = flow_of(&p);
	drain();
	tap_eq_hex(v, TC_NEXT, "pending flow at its hold limit: the next packet passes");
	tap_eq_int(ctr("hold_full"), full0 + 1,
		   "pending flow at its hold limit: counted hold_full");
	tap_eq_u64(f.held_pkts, 4, "pending flow at its hold limit: held packets");
	tap_eq_u64(f.hold_fail, 1, "pending flow at its hold limit: hold_fail");
	tap_eq_u64(f.fwd_bytes, len, "pending flow at its hold limit: charged (forwarded bytes)");
	tap_eq_int(nrecs, 3, "pending flow at its hold limit: records");

	/* the agent: path 0 granted 3 packets, the 4 held packets released */
	g.state = LH_CRS_ACTIVE;
	g.npaths = 2;
	g.hold_cap = 4 * len;
	g.limit[0] = 3 * len;
	g.ifindex[0] = OUT_IFINDEX;
	g.alive[0] = 1;
	g.released_pkts = 4;
	g.released_bytes = 4 * len;
	grant_set(&p, &g);
	fw0 = ctr("forwarded");
	for (int i = 1; i <= 3; i++)
		tap_eq_hex(run(&p, DC_IFINDEX, 0), TC_NEXT,
			   "active with credit for 3 packets: packet %d passes", i);
	tap_eq_int(ctr("forwarded"), fw0 + 3, "active with credit for 3 packets: 3 forwarded");
	tap_eq_u64(flow_of(&p).sent[0], 3 * len,
		   "active with credit for 3 packets: sent[0] charged");
	held0 = ctr("held");
	v = run(&p, DC_IFINDEX, 0);
	f = flow_of(&p);
	drain();
	tap_eq_hex(v, TC_SHOT, "credit used up: the 4th is held (verdict)");
	tap_eq_int(ctr("held"), held0 + 1, "credit used up: counted held");
	tap_eq_u64(f.held_pkts, 5, "credit used up: held packets");
	tap_eq_u64(f.sent[0], 3 * len, "credit used up: not charged (sent[0])");
	tap_eq_int(nrecs, 1, "credit used up: a HOLD record");
	tap_eq_u64(recs[0].path, 0, "credit used up: the HOLD record's path");

	/* more credit, but an older packet still held: keep the order */
	g.limit[0] = 100 * len;
	grant_set(&p, &g);
	v = run(&p, DC_IFINDEX, 0);
	f = flow_of(&p);
	drain();
	tap_eq_hex(v, TC_SHOT, "credit back but older packets held: the new one is held (verdict)");
	tap_eq_u64(f.held_pkts, 6, "credit back but older packets held: held packets");
	tap_eq_u64(f.sent[0], 3 * len, "credit back but older packets held: sent[0]");

	/* the agent sends the held ones with its mark: charged, never held again */
	rel0 = ctr("released");
	for (int i = 1; i <= 2; i++)
		tap_eq_hex(run(&p, 9, LH_CR_MARK), TC_NEXT,
			   "the agent's release %d (mark 0x%x): passed", i, LH_CR_MARK);
	tap_eq_int(ctr("released"), rel0 + 2, "the agent's releases: counted released");
	tap_eq_u64(flow_of(&p).sent[0], 5 * len,
		   "the agent's releases: charged to the active path (sent[0])");
	g.released_pkts = 6;
	g.released_bytes = 6 * len;
	grant_set(&p, &g);
	fw0 = ctr("forwarded");
	tap_eq_hex(run(&p, DC_IFINDEX, 0), TC_NEXT, "all released: passed");
	tap_eq_int(ctr("forwarded"), fw0 + 1, "all released: forwarded against credit again");
	tap_eq_u64(flow_of(&p).sent[0], 6 * len, "all released: sent[0] charged");

	/* failover: path 1 active on another interface: redirected, not charged here */
	g.active = 1;
	g.limit[1] = 100 * len;
	g.ifindex[1] = 999999;
	g.nexthop[1][10] = g.nexthop[1][11] = 0xff;
	g.nexthop[1][12] = 10;
	g.nexthop[1][15] = 2;
	g.alive[1] = 1;
	grant_set(&p, &g);
	red0 = ctr("redirected");
	v = run(&p, DC_IFINDEX, 0);
	f = flow_of(&p);
	tap_eq_hex(v, TC_REDIRECT, "active path on another interface: redirected there (verdict)");
	tap_eq_int(ctr("redirected"), red0 + 1,
		   "active path on another interface: counted redirected");
	tap_eq_u64(f.redirected, 1, "active path on another interface: the flow's redirected");
	tap_eq_u64(f.sent[1], 0,
		   "active path on another interface: charged there, not here (sent[1])");
	tap_eq_u64(f.sent[0], 6 * len, "active path on another interface: sent[0] as it was");

	/* last hop, open, ending: counted, passed, no credit */
	for (uint32_t st = LH_CRS_LAST; st <= LH_CRS_ENDING; st++) {
		int64_t c0 = ctr("counted");
		uint64_t fwd0 = flow_of(&p).fwd_bytes;

		g.state = st;
		grant_set(&p, &g);
		v = run(&p, DC_IFINDEX, 0);
		tap_eq_hex(v, TC_NEXT, "state %u (last / open / ending): passed", st);
		tap_eq_int(ctr("counted"), c0 + 1, "state %u (last / open / ending): counted", st);
		tap_eq_u64(flow_of(&p).fwd_bytes, fwd0 + len,
			   "state %u (last / open / ending): forwarded bytes grow", st);
	}
}

static void test_transit(void)
{
	static struct fx_pkt p;
	struct lh_cr_flow zero = { 0 }, f;
	struct lh_cr_grant g = { .state = LH_CRS_PENDING, .npaths = 1, .hold_cap = 1 << 20 };
	struct lh_qp_key k;
	int64_t c0 = ctr("counted"), held0;
	uint32_t v;

	roce(&p, AF_INET, 0x777);
	fx_qp_key(&p, &k);
	/* the agent made the entry on a Path init from upstream: the program counts */
	bpf_map_update_elem(flow_fd, &k, &zero, BPF_NOEXIST);
	v = run(&p, 5, 0);
	f = flow_of(&p);
	tap_eq_hex(v, TC_NEXT, "transit flow without a grant yet: passed");
	tap_eq_int(ctr("counted"), c0 + 1, "transit flow without a grant yet: counted");
	tap_eq_u64(f.fwd_bytes, ip_len(&p), "transit flow without a grant yet: forwarded bytes");
	tap_eq_hex(f.flags, 0, "transit flow without a grant yet: flags");
	grant_set(&p, &g);
	held0 = ctr("held");
	v = run(&p, 5, 0);
	drain();
	tap_eq_hex(v, TC_SHOT, "transit flow pending its own next hop's credit: held (verdict)");
	tap_eq_int(ctr("held"), held0 + 1,
		   "transit flow pending its next hop's credit: counted held");
	tap_eq_int(nrecs, 1, "transit flow pending its next hop's credit: a record for the agent");
}

int main(void)
{
	h = lh_harness_open("credit_tc", NULL, NULL);
	if (!h) {
		tap_true(false, "load credit_tc.bpf.o");
		return tap_done();
	}
	flow_fd = lh_harness_map_fd(h, "lh_cr_flow");
	grant_fd = lh_harness_map_fd(h, "lh_cr_grant");
	cfg_fd = lh_harness_map_fd(h, "lh_cr_config");
	rb = ring_buffer__new(lh_harness_map_fd(h, "lh_cr_events"), on_rec, NULL, NULL);
	if (!rb || flow_fd < 0 || grant_fd < 0 || cfg_fd < 0) {
		tap_true(false, "credit maps and ring buffer");
		return tap_done();
	}
	cfg_set(1 << 20);
	test_pass_through();
	test_first_hop();
	test_transit();
	ring_buffer__free(rb);
	lh_harness_close(h);
	return tap_done();
}
