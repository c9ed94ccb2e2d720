// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ns/packet of each path of the LR2 data path under BPF_PROG_TEST_RUN, next
 * to the bare XDP programs of bpf/baseline.bpf.c measured the same way in the
 * same process. Prints the bench JSON of tests/bench/run.sh.
 *
 * Every path changes QP state, so a packet repeated with `repeat` would take
 * another path after its first run. Each path is therefore a prepared
 * sequence of distinct packets, each run once (repeat = 1), with the set-up
 * packets that bring a QP into the state the path needs (learning, pairing,
 * gaps, the gap filler, ACKs that free the pool) run in between, unmeasured.
 * A row is the sum of the kernel's duration of its runs over the packets
 * they count for. Before every batch all QP state is reset as a fresh agent
 * would leave it, so every run of a path sees the same states.
 *
 * Every measured packet is checked: its verdict, its output (a Depot-NACK's
 * fields and ICRC, a Sentry-forwarded NAK, frames that must pass unchanged),
 * and the exact change of every lh_stats counter its path must make; the
 * bench fails rather than report the time of another path.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/if_link.h>
#include <linux/pkt_cls.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_harness.h"
#include "dp_frames.h"
#include "json.h"
#include "lh_maps.h"
#include "lh_stats.h"
#include "pkt.h"

#define RUNS 7
#define POOL 4096
#define RINGS 64
#define FLOWS 16 /* QPs per batch, their packets interleaved */
#define PER_FLOW 120 /* measured packets per QP: within the 256-PSN ring window */
#define REL1_CYCLES 60 /* release runs of 1 held packet per QP (FLOWS QPs) */
#define REL63_FLOWS 4 /* QPs releasing runs of 63 held packets, */
#define REL63_CYCLES 16 /* that many runs each */
#define P0 1000 /* first PSN of a Depot QP */
#define S0 5000 /* first PSN of a Sentry QP */
#define FRAME_CAP 512
#define DC_IF "lhb0"
#define DC_PEER "lhb1"

/* ---- programs ---- */

enum prog_id { P_BARE_TX, P_BARE_PASS, P_WAN_XDP, P_DC_XDP, P_DC_OUT, P_DC_IN, P_MAX };

static const struct {
	const char *name;
	bool tc;
} progs[P_MAX] = {
	[P_BARE_TX] = { "lh_bare_tx", false },	 [P_BARE_PASS] = { "lh_bare_pass", false },
	[P_WAN_XDP] = { "lh_wan_xdp", false },	 [P_DC_XDP] = { "lh_dc_xdp", false },
	[P_DC_OUT] = { "lh_dc_out", true },	 [P_DC_IN] = { "lh_dc_in", true },
};

static int prog_fd[P_MAX];
static struct lh_harness *h;
static int dc_ifindex, stats_fd, ncpus;
static struct dp_flow flows[FLOWS];

/* ---- rows: what is measured, and what each measured packet must do ---- */

enum out_check {
	OUT_ANY,
	OUT_SAME, /* the frame passes unchanged */
	OUT_DNACK, /* turned into a Depot-NACK for psn (mark, 1 missing PSN) */
	OUT_NAK, /* a Depot-NACK passed on as the NIC's plain NAK for psn */
};

struct delta {
	enum lh_stat stat;
	uint64_t n;
};

#define MAX_DELTAS 6
#define MAX_SAMPLES 4096
/*
 * A measured run this much longer than its row's median was interrupted:
 * this VM's vCPU loses ~25 us at random, at a constant rate per us of
 * measured time in every row, bare programs included. Left out.
 */
#define INTERRUPTED_NS 10000

struct samples {
	uint32_t v[MAX_SAMPLES];
	uint32_t n;
	uint64_t kept, left_out; /* over all runs */
};

struct row {
	const char *name;
	const char *metric; /* NULL: time per packet */
	uint32_t verdict;
	enum out_check check;
	struct delta deltas[MAX_DELTAS]; /* ends at n == 0 */
	uint32_t per; /* packets one measured run counts for (release: those released); 0: 1 */
	/* durations in the current run: the path's, and the bare forwarder's on the same frames */
	struct samples path, bare;
	double value[RUNS], ratio[RUNS], median, spread, ratio_median;
};

enum row_id {
	R_BARE_TX,
	R_BARE_PASS,
	R_NOT_HANDLED,
	R_UNKNOWN_ACK,
	R_DEPOT_IN_ORDER,
	R_DEPOT_WARM,
	R_DEPOT_DC_OUT,
	R_DEPOT_HOLD,
	R_DEPOT_NACK,
	R_SENTRY_NEW,
	R_SENTRY_DNACK,
	R_SR_DROP,
	R_SR_PASS,
	R_REPORT,
	R_REPORT_MAC,
	R_RELEASE_1,
	R_RELEASE_63,
	R_MAX
};

#define RX_ROCE { LH_STAT_RX, 1 }, { LH_STAT_ROCE, 1 }

static struct row rows[R_MAX] = {
	[R_BARE_TX] = {
		.name = "bare XDP_TX forwarder",
		.verdict = XDP_TX,
		.check = OUT_SAME,
	},
	[R_BARE_PASS] = {
		.name = "bare XDP_PASS",
		.verdict = XDP_PASS,
		.check = OUT_SAME,
	},
	[R_NOT_HANDLED] = {
		.name = "wan_xdp: RoCE it does not act on (RDMA READ request), passed",
		.verdict = XDP_PASS,
		.check = OUT_SAME,
		.deltas = { RX_ROCE, { LH_STAT_NOT_HANDLED, 1 }, { LH_STAT_PASS, 1 } },
	},
	[R_UNKNOWN_ACK] = {
		.name = "wan_xdp: ACK of an unknown QP, passed",
		.verdict = XDP_PASS,
		.check = OUT_SAME,
		.deltas = { RX_ROCE, { LH_STAT_ACK_UNPAIRED, 1 }, { LH_STAT_PASS, 1 } },
	},
	[R_DEPOT_IN_ORDER] = {
		.name = "Depot: in-order data delivered, backup copy kept (wan_xdp)",
		.verdict = XDP_PASS,
		.check = OUT_SAME,
		.deltas = { RX_ROCE, { LH_STAT_DEPOT_IN_ORDER, 1 }, { LH_STAT_PASS, 1 } },
	},
	[R_DEPOT_WARM] = {
		.name = "Depot: the same, each packet ACKed before the next (64-slot pool, warm)",
		.verdict = XDP_PASS,
		.check = OUT_SAME,
		.deltas = { RX_ROCE, { LH_STAT_DEPOT_IN_ORDER, 1 }, { LH_STAT_PASS, 1 } },
	},
	[R_DEPOT_DC_OUT] = {
		.name = "Depot: the in-order packet leaving for the NIC, nothing to release "
			"(dc_tc lh_dc_out)",
		.verdict = (uint32_t)TC_ACT_UNSPEC, /* LH_TC_NEXT: passed on */
		.check = OUT_SAME,
	},
	[R_DEPOT_HOLD] = {
		.name = "Depot: out-of-order data held in the reorder pool (wan_xdp)",
		.verdict = XDP_DROP,
		.deltas = { RX_ROCE, { LH_STAT_DEPOT_HELD, 1 }, { LH_STAT_DROP, 1 } },
	},
	[R_DEPOT_NACK] = {
		.name = "Depot: a new gap: packet held, frame rewritten into a Depot-NACK "
			"(wan_xdp)",
		.verdict = XDP_PASS,
		.check = OUT_DNACK,
		.deltas = { RX_ROCE, { LH_STAT_DEPOT_HELD, 1 }, { LH_STAT_DEPOT_NACK, 1 },
			    { LH_STAT_PASS, 1 } },
	},
	[R_SENTRY_NEW] = {
		.name = "Sentry: new in-order data (dc_xdp)",
		.verdict = XDP_PASS,
		.check = OUT_SAME,
		.deltas = { RX_ROCE, { LH_STAT_SENTRY_IN_ORDER, 1 }, { LH_STAT_PASS, 1 } },
	},
	[R_SENTRY_DNACK] = {
		.name = "Sentry: Depot-NACK passed on as the NIC's NAK (wan_xdp)",
		.verdict = XDP_PASS,
		.check = OUT_NAK,
		.deltas = { RX_ROCE, { LH_STAT_SENTRY_DNACK_FORWARD, 1 }, { LH_STAT_PASS, 1 } },
	},
	[R_SR_DROP] = {
		.name = "SR filter: NIC replay of a PSN the Depot holds, dropped, copy kept "
			"(dc_xdp)",
		.verdict = XDP_DROP,
		.deltas = { RX_ROCE, { LH_STAT_SENTRY_SR_DROP, 1 }, { LH_STAT_SENTRY_CACHED, 1 },
			    { LH_STAT_DROP, 1 } },
	},
	[R_SR_PASS] = {
		.name = "SR filter: NIC replay of a missing PSN, passed, copy kept (dc_xdp)",
		.verdict = XDP_PASS,
		.check = OUT_SAME,
		.deltas = { RX_ROCE, { LH_STAT_SENTRY_SR_PASS, 1 }, { LH_STAT_SENTRY_CACHED, 1 },
			    { LH_STAT_PASS, 1 } },
	},
	[R_REPORT] = {
		.name = "Sentry: Depot report taken in, nothing to re-send (wan_xdp)",
		.verdict = XDP_DROP,
		.deltas = { { LH_STAT_RX, 1 }, { LH_STAT_PARSE_NON_ROCE, 1 },
			    { LH_STAT_SENTRY_REPORT, 1 }, { LH_STAT_DROP, 1 } },
	},
	[R_REPORT_MAC] = {
		.name = "Sentry: the same report, its SipHash-2-4 tag checked "
			"(--report-key-file, wan_xdp)",
		.verdict = XDP_DROP,
		.deltas = { { LH_STAT_RX, 1 }, { LH_STAT_PARSE_NON_ROCE, 1 },
			    { LH_STAT_SENTRY_REPORT, 1 }, { LH_STAT_DROP, 1 } },
	},
	[R_RELEASE_1] = {
		.name = "Depot release: gap filler + 1 held packet (dc_tc lh_dc_out)",
		.metric = "time per released packet",
		.verdict = TC_ACT_SHOT,
		.deltas = { { LH_STAT_DEPOT_RELEASE_RUNS, 1 }, { LH_STAT_DEPOT_RELEASED, 1 } },
	},
	[R_RELEASE_63] = {
		.name = "Depot release: gap filler + 63 held packets (dc_tc lh_dc_out)",
		.metric = "time per released packet",
		.verdict = TC_ACT_SHOT,
		.deltas = { { LH_STAT_DEPOT_RELEASE_RUNS, 1 }, { LH_STAT_DEPOT_RELEASED, 63 } },
		.per = 63,
	},
};

/* lh_config as the batches run it (dc_ifindex set at start) */
static struct lh_config base_cfg;

/* ---- a batch: the prepared sequence of one case ---- */

struct step {
	int8_t row; /* -1: set-up, run but not measured */
	uint8_t prog;
	bool pair; /* not a run: the agent pairs flow qp */
	uint16_t qp;
	uint32_t verdict; /* set-up steps: the verdict that says the set-up went as planned */
	uint32_t psn; /* the PSN a NAK output must carry */
	uint32_t frame;
};

struct batch {
	const char *name;
	struct step *steps;
	size_t nsteps, cap;
	uint8_t (*frames)[FRAME_CAP];
	uint16_t *flen;
	size_t nframes, fcap;
	uint64_t tx; /* clones that must leave DC_IF in one run of the batch */
	uint32_t pool; /* free pool slots at the start (0: all) */
	bool mac; /* reports signed, the Sentry checks them (LH_CFG_REPORT_MAC) */
};

/* the key of the MAC rows (bench only) */
static const uint8_t bench_key[16] = "longhaul bench!";

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 1024;
	p = realloc(p, *cap * size);
	if (!p) {
		fprintf(stderr, "bench: out of memory\n");
		exit(1);
	}
	return p;
}

static struct step *add_step(struct batch *b, int row, enum prog_id prog, uint32_t verdict,
			     uint16_t qp, uint32_t psn, const uint8_t *frame, size_t len)
{
	struct step *s;

	if (len == 0 || len > FRAME_CAP) {
		fprintf(stderr, "bench: %s: frame of %zu bytes\n", b->name, len);
		exit(1);
	}
	b->frames = grow(b->frames, &b->fcap, b->nframes, FRAME_CAP);
	b->flen = realloc(b->flen, b->fcap * sizeof(*b->flen));
	if (!b->flen)
		exit(1);
	memcpy(b->frames[b->nframes], frame, len);
	b->flen[b->nframes] = (uint16_t)len;
	b->steps = grow(b->steps, &b->cap, b->nsteps, sizeof(*b->steps));
	s = &b->steps[b->nsteps++];
	*s = (struct step){ .row = (int8_t)row, .prog = (uint8_t)prog, .qp = qp,
			    .verdict = row >= 0 ? rows[row].verdict : verdict, .psn = psn,
			    .frame = (uint32_t)b->nframes++ };
	return s;
}

static void add_pair(struct batch *b, uint16_t qp)
{
	b->steps = grow(b->steps, &b->cap, b->nsteps, sizeof(*b->steps));
	b->steps[b->nsteps++] = (struct step){ .row = -1, .pair = true, .qp = qp };
}

static uint8_t fb[DP_FRAME_MAX];

static void data(struct batch *b, int row, enum prog_id prog, uint32_t verdict, uint16_t q,
		 uint32_t psn)
{
	add_step(b, row, prog, verdict, q, psn, fb, dp_data_frame(&flows[q], psn, fb));
}

static void ack(struct batch *b, int row, enum prog_id prog, uint32_t verdict, uint16_t q,
		uint32_t psn, uint8_t syndrome, uint8_t byte4)
{
	size_t len = dp_ack_frame(&flows[q], psn, syndrome, byte4, 0, fb);

	add_step(b, row, prog, verdict, q, psn, fb, len);
}

/* ---- the cases ---- */

/* The same data frames as the Depot's in-order case, through a bare program */
static void case_bare(struct batch *b, int row, enum prog_id prog)
{
	uint16_t q;
	int i;

	for (i = 0; i < PER_FLOW; i++)
		for (q = 0; q < FLOWS; q++)
			data(b, row, prog, 0, q, P0 + 1 + (uint32_t)i);
}

static void case_not_handled(struct batch *b)
{
	struct lh_pkt_spec s;
	uint16_t q;
	int i;

	for (i = 0; i < PER_FLOW; i++)
		for (q = 0; q < FLOWS; q++) {
			lh_pkt_spec_init(&s, AF_INET);
			/* a remote requester reads from the local responder */
			s.src = flows[q].b;
			s.dst = flows[q].a;
			s.roce.opcode = ROCE_RC_RDMA_READ_REQUEST;
			s.roce.dqpn = DP_QP_S;
			s.roce.psn = P0 + (uint32_t)i;
			add_step(b, R_NOT_HANDLED, P_WAN_XDP, 0, q, 0, fb,
				 (size_t)lh_pkt_build(&s, fb, sizeof(fb)));
		}
}

static void case_unknown_ack(struct batch *b)
{
	uint16_t q;
	int i;

	for (i = 0; i < PER_FLOW; i++)
		for (q = 0; q < FLOWS; q++)
			ack(b, R_UNKNOWN_ACK, P_WAN_XDP, 0, q, S0 + (uint32_t)i, 0x1f, 0);
}

/* A Depot QP learned from its first packet (P0) and paired by the agent */
static void depot_qps(struct batch *b)
{
	uint16_t q;

	for (q = 0; q < FLOWS; q++) {
		data(b, -1, P_WAN_XDP, XDP_PASS, q, P0);
		add_pair(b, q);
	}
}

static void case_depot_in_order(struct batch *b)
{
	uint16_t q;
	int i;

	depot_qps(b);
	for (i = 0; i < PER_FLOW; i++)
		for (q = 0; q < FLOWS; q++)
			data(b, R_DEPOT_IN_ORDER, P_WAN_XDP, 0, q, P0 + 1 + (uint32_t)i);
}

/*
 * The same with a pool of 64 free slots and the NIC's ACK of each packet
 * (unmeasured) before the next: slots come back warm, and so does the QP.
 * The difference to the row above is what cold pool memory costs.
 */
static void case_depot_in_order_warm(struct batch *b)
{
	uint16_t q;
	int i;

	b->pool = 64;
	depot_qps(b);
	for (i = 0; i < PER_FLOW; i++)
		for (q = 0; q < FLOWS; q++) {
			data(b, R_DEPOT_WARM, P_WAN_XDP, 0, q, P0 + 1 + (uint32_t)i);
			ack(b, -1, P_DC_IN, (uint32_t)TC_ACT_UNSPEC, q, P0 + 1 + (uint32_t)i, 0x1f, 0);
		}
}

/*
 * In-order packets on their way to the NIC pass lh_dc_out too (DC egress):
 * the QP is found not releasing. It counts nothing; the frame goes unchanged.
 */
static void case_depot_dc_out(struct batch *b)
{
	uint16_t q;
	size_t len;
	int i;

	depot_qps(b);
	for (i = 0; i < PER_FLOW; i++)
		for (q = 0; q < FLOWS; q++) {
			data(b, -1, P_WAN_XDP, XDP_PASS, q, P0 + 1 + (uint32_t)i);
			len = dp_data_frame(&flows[q], P0 + 1 + (uint32_t)i, fb);
			dp_route_frame(fb, len, 61);
			add_step(b, R_DEPOT_DC_OUT, P_DC_OUT, 0, q, 0, fb, len);
		}
}

/* P0 + 1 lost; P0 + 2 opened the gap (its Depot-NACK); what follows is held */
static void case_depot_hold(struct batch *b)
{
	uint16_t q;
	int i;

	depot_qps(b);
	for (q = 0; q < FLOWS; q++)
		data(b, -1, P_WAN_XDP, XDP_PASS, q, P0 + 2);
	for (i = 0; i < PER_FLOW; i++)
		for (q = 0; q < FLOWS; q++)
			data(b, R_DEPOT_HOLD, P_WAN_XDP, 0, q, P0 + 3 + (uint32_t)i);
}

/* Every other PSN lost: each packet opens a new gap and becomes a Depot-NACK for P0 + 1 */
static void case_depot_nack(struct batch *b)
{
	uint16_t q;
	int i;

	depot_qps(b);
	for (i = 0; i < PER_FLOW; i++)
		for (q = 0; q < FLOWS; q++)
			add_step(b, R_DEPOT_NACK, P_WAN_XDP, 0, q, P0 + 1, fb,
				 dp_data_frame(&flows[q], P0 + 2 + 2 * (uint32_t)i, fb));
}

/* A Sentry QP learned from its first packet (S0), paired, then n more in order */
static void sentry_qps(struct batch *b, int n)
{
	uint16_t q;
	int i;

	for (q = 0; q < FLOWS; q++) {
		data(b, -1, P_DC_XDP, XDP_PASS, q, S0);
		add_pair(b, q);
		for (i = 1; i <= n; i++)
			data(b, -1, P_DC_XDP, XDP_PASS, q, S0 + (uint32_t)i);
	}
}

static void case_sentry_new(struct batch *b)
{
	uint16_t q;
	int i;

	sentry_qps(b, 0);
	for (i = 0; i < PER_FLOW; i++)
		for (q = 0; q < FLOWS; q++)
			data(b, R_SENTRY_NEW, P_DC_XDP, 0, q, S0 + 1 + (uint32_t)i);
}

/*
 * A Depot-NACK for x goes on to the NIC; the receiver's ACK of x then ends
 * the NIC's retry (unmeasured), so that the Depot-NACK for x + 1 goes on too.
 */
static void case_sentry_dnack(struct batch *b)
{
	uint16_t q;
	uint32_t x;
	int i;

	sentry_qps(b, PER_FLOW + 1);
	for (i = 0; i < PER_FLOW; i++)
		for (q = 0; q < FLOWS; q++) {
			x = S0 + 1 + (uint32_t)i;
			ack(b, R_SENTRY_DNACK, P_WAN_XDP, 0, q, x, 0x60, LH_DNACK_MARK);
			ack(b, -1, P_WAN_XDP, XDP_PASS, q, x, 0x1f, 0);
		}
}

/*
 * The NIC sent S0 .. S0 + n; a Depot-NACK for S0 + 1 went on to it and the
 * Depot's report says it holds three of every four PSNs from there. The NIC's
 * go-back-N replay from S0 + 1: held ones are dropped, missing ones pass.
 */
static void case_sr(struct batch *b)
{
	uint8_t held[LH_REPORT_BITS / 8] = { 0 };
	uint32_t x = S0 + 1;
	uint16_t q;
	int i;

	for (i = 0; i < PER_FLOW; i++)
		if (i % 4)
			held[i / 8] |= (uint8_t)(1u << (i % 8));
	sentry_qps(b, PER_FLOW);
	for (q = 0; q < FLOWS; q++) {
		ack(b, -1, P_WAN_XDP, XDP_PASS, q, x, 0x60, LH_DNACK_MARK);
		/* passed up (XDP_PASS): some missing PSNs were sent, wan_tc would re-send copies */
		add_step(b, -1, P_WAN_XDP, XDP_PASS, q, 0, fb,
			 dp_report_frame_held(&flows[q], x, PER_FLOW, held, fb));
	}
	for (i = 0; i < PER_FLOW; i++)
		for (q = 0; q < FLOWS; q++)
			data(b, i % 4 ? R_SR_DROP : R_SR_PASS, P_DC_XDP, 0, q, x + (uint32_t)i);
}

/*
 * The NIC sent S0 .. S0 + PER_FLOW + 1; each measured report moves the ePSN
 * one on and says the Depot holds the one PSN it names: nothing to re-send,
 * the report is consumed. mac: signed, and the Sentry checks the tag.
 */
static void case_report(struct batch *b, int row, bool mac)
{
	uint8_t held[LH_REPORT_BITS / 8] = { 1 };
	uint16_t q;
	int i;

	b->mac = mac;
	sentry_qps(b, PER_FLOW + 1);
	dp_report_key = mac ? bench_key : NULL;
	for (i = 0; i < PER_FLOW; i++)
		for (q = 0; q < FLOWS; q++)
			add_step(b, row, P_WAN_XDP, 0, q, 0, fb,
				 dp_report_frame_held(&flows[q], S0 + 1 + (uint32_t)i, 1, held, fb));
	dp_report_key = NULL;
}

/*
 * Cycles of: g lost, g + 1 .. g + k held (the first as a Depot-NACK), g
 * arrives and is delivered (the QP is now releasing), then measured: the
 * routed g through lh_dc_out, which sends it and the k held after it. The
 * NIC's ACK of g + k frees the backup copies for the next cycle.
 */
static void case_release(struct batch *b, int row, uint32_t k, uint16_t nflows, int cycles)
{
	uint32_t g, i;
	uint16_t q;
	int c;
	size_t len;

	for (q = 0; q < nflows; q++) {
		data(b, -1, P_WAN_XDP, XDP_PASS, q, P0);
		add_pair(b, q);
	}
	for (c = 0; c < cycles; c++)
		for (q = 0; q < nflows; q++) {
			g = P0 + 1 + (uint32_t)c * (k + 1);
			for (i = 1; i <= k; i++)
				data(b, -1, P_WAN_XDP, i == 1 ? XDP_PASS : XDP_DROP, q, g + i);
			data(b, -1, P_WAN_XDP, XDP_PASS, q, g);
			len = dp_data_frame(&flows[q], g, fb);
			dp_route_frame(fb, len, 61);
			add_step(b, row, P_DC_OUT, 0, q, g, fb, len);
			ack(b, -1, P_DC_IN, (uint32_t)TC_ACT_UNSPEC, q, g + k, 0x1f, 0);
			b->tx += k + 1;
		}
}

/* ---- state ---- */

static int bench_setup(struct bpf_object *obj, void *ctx)
{
	static struct dp_sizes sizes = { .pool = POOL, .rings = RINGS };
	struct bpf_object **objs = ctx;
	int i;

	/* the harness keeps the objects; remember them to find their programs */
	for (i = 0; i < P_MAX; i++)
		if (!objs[i]) {
			objs[i] = obj;
			break;
		}
	return dp_set_sizes(obj, &sizes);
}

static void clear_hash(const char *map)
{
	int fd = lh_harness_map_fd(h, map);
	uint8_t key[64];

	while (!bpf_map_get_next_key(fd, NULL, key))
		if (bpf_map_delete_elem(fd, key))
			break;
}

static int drain_queue(const char *map)
{
	int fd = lh_harness_map_fd(h, map);
	uint32_t v;

	while (!bpf_map_lookup_and_delete_elem(fd, NULL, &v))
		;
	return fd;
}

static int on_event(void *ctx, void *data, size_t len)
{
	(void)ctx, (void)data, (void)len;
	return 0;
}

/* What a fresh agent leaves: no QPs, empty rings, full free lists, no events pending */
static int reset_state(struct ring_buffer *rb, uint32_t pool)
{
	static struct lh_ring zero;
	int fd = lh_harness_map_fd(h, "lh_ring");
	uint32_t i;

	clear_hash("lh_qp");
	clear_hash("lh_pair");
	clear_hash("lh_ack");
	clear_hash("lh_hostpair");
	clear_hash("lh_pair_psn");
	for (i = 0; i < RINGS; i++)
		if (bpf_map_update_elem(fd, &i, &zero, BPF_ANY))
			return -1;
	drain_queue("lh_ring_free");
	drain_queue("lh_pool_free");
	if (lh_harness_fill_queue(h, "lh_ring_free", RINGS) ||
	    lh_harness_fill_queue(h, "lh_pool_free", pool ? pool : POOL))
		return -1;
	return ring_buffer__consume(rb) < 0 ? -1 : 0;
}

static int read_stats(uint64_t *sum)
{
	static struct lh_stats *percpu;
	uint32_t key = 0;
	int c, i;

	if (!percpu)
		percpu = calloc((size_t)ncpus, sizeof(*percpu));
	if (!percpu || bpf_map_lookup_elem(stats_fd, &key, percpu))
		return -1;
	memset(sum, 0, LH_STAT_MAX * sizeof(*sum));
	for (c = 0; c < ncpus; c++)
		for (i = 0; i < LH_STAT_MAX; i++)
			sum[i] += ((const uint64_t *)&percpu[c])[i];
	return 0;
}

static uint64_t tx_packets(const char *ifname)
{
	struct ifaddrs *ifa, *i;
	uint64_t n = 0;

	if (getifaddrs(&ifa))
		return 0;
	for (i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_PACKET && i->ifa_data &&
		    !strcmp(i->ifa_name, ifname))
			n = ((const struct rtnl_link_stats *)i->ifa_data)->tx_packets;
	freeifaddrs(ifa);
	return n;
}

/* ---- running ---- */

static uint8_t out[DP_FRAME_MAX];

static bool output_ok(const struct step *s, const uint8_t *in, size_t len, size_t out_len,
		      char *why, size_t wl)
{
	struct lh_pkt p;

	switch (rows[s->row].check) {
	case OUT_SAME:
		if (out_len == len && !memcmp(out, in, len))
			return true;
		snprintf(why, wl, "output changed (%zu bytes, in %zu)", out_len, len);
		return false;
	case OUT_DNACK:
	case OUT_NAK:
		if (lh_pkt_parse(out, out_len, true, &p) == LH_STAT_ROCE &&
		    p.roce.opcode == ROCE_RC_ACKNOWLEDGE && p.roce.aeth.syndrome == 0x60 &&
		    p.roce.psn == s->psn && p.roce.dqpn == DP_QP_S &&
		    p.roce.byte4 == (rows[s->row].check == OUT_DNACK ? LH_DNACK_MARK : 0) &&
		    lh_pkt_icrc_ok(out, &p) && lh_inet_csum(out + p.l3_off, 20, 0) == 0)
			return true;
		snprintf(why, wl, "not the expected NAK: opcode 0x%x syndrome 0x%x psn %u qpn 0x%x "
			 "byte4 0x%x", p.roce.opcode, p.roce.aeth.syndrome, p.roce.psn, p.roce.dqpn,
			 p.roce.byte4);
		return false;
	default:
		return true;
	}
}

/* One BPF_PROG_TEST_RUN, with the lh_stats before and after it */
static int run_prog(enum prog_id prog, const uint8_t *in, uint32_t len, uint64_t *before,
		    uint64_t *after, struct bpf_test_run_opts *t)
{
	static struct __sk_buff skb;

	memset(t, 0, sizeof(*t));
	t->sz = sizeof(*t);
	t->data_in = in;
	t->data_size_in = len;
	t->data_out = out;
	t->data_size_out = sizeof(out);
	t->repeat = 1;
	if (progs[prog].tc) {
		skb = (struct __sk_buff){ .ifindex = (uint32_t)dc_ifindex };
		t->ctx_in = &skb;
		t->ctx_size_in = sizeof(skb);
	}
	if (read_stats(before) || bpf_prog_test_run_opts(prog_fd[prog], t) || read_stats(after))
		return -1;
	return 0;
}

static void add_sample(struct samples *sm, int r, uint32_t ns)
{
	if (r >= 0 && sm->n < MAX_SAMPLES)
		sm->v[sm->n++] = ns;
}

/*
 * Run one batch. A measured step's run adds to its row in run r (r < 0:
 * warm-up), and right after it the bare forwarder runs on the same frame,
 * the same way: the row's own baseline, measured in the same moments.
 */
static int run_batch(const struct batch *b, int r, struct ring_buffer *rb)
{
	uint64_t before[LH_STAT_MAX], after[LH_STAT_MAX], tx0;
	uint32_t zero = 0;
	struct bpf_test_run_opts t;
	size_t i;
	int k;

	base_cfg.flags = LH_CFG_DEPOT | LH_CFG_SENTRY | (b->mac ? LH_CFG_REPORT_MAC : 0);
	lh_sip_key(bench_key, base_cfg.report_key);
	if (bpf_map_update_elem(lh_harness_map_fd(h, "lh_config"), &zero, &base_cfg, BPF_ANY) ||
	    reset_state(rb, b->pool)) {
		fprintf(stderr, "bench %s: cannot reset the maps: %s\n", b->name, strerror(errno));
		return -1;
	}
	tx0 = tx_packets(DC_IF);
	for (i = 0; i < b->nsteps; i++) {
		const struct step *s = &b->steps[i];
		const uint8_t *in = b->frames[s->frame];
		uint32_t len = b->flen[s->frame];
		struct row *w = s->row >= 0 ? &rows[s->row] : NULL;
		uint64_t want[LH_STAT_MAX] = { 0 };
		char why[160] = "";
		bool ok = true;

		if (s->pair) {
			if (!dp_pair(h, &flows[s->qp])) {
				fprintf(stderr, "bench %s: pairing QP %u failed\n", b->name, s->qp);
				return -1;
			}
			continue;
		}
		if (run_prog((enum prog_id)s->prog, in, len, before, after, &t)) {
			fprintf(stderr, "bench %s: step %zu: %s\n", b->name, i, strerror(errno));
			return -1;
		}
		if (t.retval != s->verdict) {
			snprintf(why, sizeof(why), "verdict %u, want %u", t.retval, s->verdict);
			ok = false;
		} else if (w) {
			for (k = 0; k < MAX_DELTAS && w->deltas[k].n; k++)
				want[w->deltas[k].stat] = w->deltas[k].n;
			for (k = 0; k < LH_STAT_MAX && ok; k++)
				if (after[k] - before[k] != want[k]) {
					snprintf(why, sizeof(why),
						 "lh_stats.%s moved %+lld, want +%llu",
						 lh_stat_name((enum lh_stat)k),
						 (long long)(after[k] - before[k]),
						 (unsigned long long)want[k]);
					ok = false;
				}
			if (ok)
				ok = output_ok(s, in, len, t.data_size_out, why, sizeof(why));
		}
		if (!ok) {
			fprintf(stderr, "bench %s: step %zu (%s, QP %u, %s): %s\n", b->name, i,
				progs[s->prog].name, s->qp, w ? w->name : "set-up", why);
			return -1;
		}
		if (!w)
			continue;
		add_sample(&w->path, r, t.duration);
		if (s->prog == P_BARE_TX)
			continue; /* the baseline row itself */
		if (run_prog(P_BARE_TX, in, len, before, after, &t) || t.retval != XDP_TX ||
		    memcmp(before, after, sizeof(before))) {
			fprintf(stderr, "bench %s: step %zu: the bare forwarder failed\n", b->name,
				i);
			return -1;
		}
		add_sample(&w->bare, r, t.duration);
	}
	if (b->tx && tx_packets(DC_IF) - tx0 != b->tx) {
		fprintf(stderr, "bench %s: %llu packets left %s, want %llu\n", b->name,
			(unsigned long long)(tx_packets(DC_IF) - tx0), DC_IF,
			(unsigned long long)b->tx);
		return -1;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Mean duration of a run's samples, interrupted runs left out; -1 when there are none */
static double clean_mean(struct samples *sm)
{
	uint64_t sum = 0, n = 0, limit;
	uint32_t i;

	if (!sm->n)
		return -1;
	qsort(sm->v, sm->n, sizeof(sm->v[0]), cmp_u32);
	limit = (uint64_t)sm->v[sm->n / 2] + INTERRUPTED_NS;
	for (i = 0; i < sm->n; i++)
		if (sm->v[i] <= limit) {
			sum += sm->v[i];
			n++;
		}
	sm->kept += n;
	sm->left_out += sm->n - n;
	sm->n = 0;
	return (double)sum / (double)n;
}

/* Run r's value of a row (time per packet) and its ratio to the bare forwarder beside it */
static int row_value(struct row *w, int r)
{
	double path = clean_mean(&w->path), bare;

	if (path < 0)
		return -1;
	w->value[r] = path / (w->per ? w->per : 1);
	if (w == &rows[R_BARE_TX]) {
		w->ratio[r] = 1;
		return 0;
	}
	bare = clean_mean(&w->bare);
	if (bare <= 0)
		return -1;
	w->ratio[r] = w->value[r] / bare;
	return 0;
}

static double median_of(const double *v, double *spread)
{
	double sorted[RUNS];

	memcpy(sorted, v, sizeof(sorted));
	qsort(sorted, RUNS, sizeof(double), cmp_double);
	if (spread && sorted[RUNS / 2] > 0)
		*spread = (sorted[RUNS - 1] - sorted[0]) / sorted[RUNS / 2];
	else if (spread)
		*spread = 0;
	return sorted[RUNS / 2];
}

static double round_to(double v, double unit)
{
	return (double)(long long)(v / unit + 0.5) * unit;
}

static void print_json(void)
{
	const struct row *base = &rows[R_BARE_TX];
	uint64_t kept = 0, left_out = 0;
	char notes[3072];
	struct lh_json *j;
	int i;

	for (i = 0; i < R_MAX; i++) {
		kept += rows[i].path.kept;
		left_out += rows[i].path.left_out;
	}
	snprintf(notes, sizeof(notes),
		 "Every path changes QP state, so a packet repeated with `repeat` would "
		 "take another path after its first run. Each path is instead a prepared "
		 "sequence of distinct packets, each run once (repeat = 1): %d QPs x %d "
		 "packets, interleaved (release: %d runs with 1 held packet, %d with 63); "
		 "the packets that bring a QP into the state a path needs (learning, "
		 "pairing, gaps, the gap filler, the NIC's ACKs freeing the pool) run "
		 "between them unmeasured, and all QP state is reset before each batch. A "
		 "value is the kernel's duration of the measured runs summed over their "
		 "packets (release: over the held packets it released), median of %d runs "
		 "after a warm-up; spread is (max-min)/median. A run longer than its "
		 "row's median by more than %d us was interrupted (this VM's vCPU loses "
		 "~25 us at random, at the same rate per us of measured time in every "
		 "row) and is left out: %.2f %% of them here. Every measured packet is "
		 "checked: verdict, output (unchanged frame; Depot-NACK or NAK fields and "
		 "ICRC) and the exact change of every lh_stats counter; the bench fails "
		 "on any other. Baseline: the bare XDP_TX program of baseline.bpf.c "
		 "measured the same way, its row on the Depot's in-order frames (IPv4, "
		 "256 B payload); each "
		 "ratio is against the bare program run on the same frame right after "
		 "each measured packet. With repeat = 1 every run carries the test run's "
		 "own cost (timer, bottom halves, caches cooled by the syscall), the %.0f "
		 "ns of the baseline, so ratios are far below those of a hot loop and "
		 "value minus baseline is what a path adds. Release: lh_dc_out is also "
		 "attached (tcx) to the DC veth's egress as longhauld does, so every "
		 "clone passes it again; the clones leave through the veth, whose peer "
		 "drops them (not its MAC) in a softirq inside the measured time. One CPU "
		 "(pinned), nice -20.",
		 FLOWS, PER_FLOW, FLOWS * REL1_CYCLES, REL63_FLOWS * REL63_CYCLES, RUNS,
		 INTERRUPTED_NS / 1000, 100.0 * (double)left_out / (double)(kept + left_out),
		 base->median);
	j = lh_json_new(stdout, true);
	lh_json_start_object(j);
	lh_json_string_field(j, "name", "bpf-datapath");
	lh_json_string_field(j, "title",
			     "LR2 data path, ns per packet and path "
			     "(BPF_PROG_TEST_RUN, repeat = 1)");
	lh_json_string_field(j, "notes", notes);
	lh_json_name(j, "rows");
	lh_json_start_array(j);
	for (i = 0; i < R_MAX; i++) {
		const struct row *w = &rows[i];

		lh_json_start_object(j);
		lh_json_string_field(j, "case", w->name);
		lh_json_string_field(j, "metric", w->metric ? w->metric : "time per packet");
		lh_json_string_field(j, "unit", "ns");
		lh_json_double_field(j, "value", round_to(w->median, 0.1));
		if (i != R_BARE_TX) {
			lh_json_string_field(j, "baseline", base->name);
			lh_json_double_field(j, "ratio", round_to(w->ratio_median, 0.01));
		} else {
			lh_json_name(j, "baseline");
			lh_json_null(j);
			lh_json_name(j, "ratio");
			lh_json_null(j);
		}
		lh_json_uint_field(j, "runs", RUNS);
		lh_json_double_field(j, "spread", round_to(w->spread, 0.01));
		lh_json_end_object(j);
	}
	lh_json_end_array(j);
	lh_json_end_object(j);
	lh_json_free(j);
}

/* Everything after loading the objects: the measurements; returns the exit status */
static int bench(struct bpf_object **objs)
{
	struct lh_config cfg = { .flags = LH_CFG_DEPOT | LH_CFG_SENTRY };
	static struct batch batches[20];
	struct ring_buffer *rb = NULL;
	struct bpf_link *link = NULL;
	int nb = 0, i, r, p, o, status = 1;
	uint32_t zero = 0;

	for (p = 0; p < P_MAX; p++)
		for (o = 0; o <= P_MAX; o++) {
			struct bpf_program *bp;

			if (!objs[o])
				continue;
			bp = bpf_object__find_program_by_name(objs[o], progs[p].name);
			if (bp)
				prog_fd[p] = bpf_program__fd(bp);
		}
	for (p = 0; p < P_MAX; p++)
		if (prog_fd[p] <= 0) {
			fprintf(stderr, "bench: no program %s\n", progs[p].name);
			return 1;
		}
	/* the egress hook the released clones pass through again, as in longhauld */
	link = bpf_program__attach_tcx(bpf_object__find_program_by_name(objs[2], "lh_dc_out"),
				       dc_ifindex, NULL);
	cfg.dc_ifindex = (uint32_t)dc_ifindex;
	base_cfg = cfg; /* run_batch writes it before each batch */
	stats_fd = lh_harness_map_fd(h, "lh_stats");
	ncpus = libbpf_num_possible_cpus();
	rb = ring_buffer__new(lh_harness_map_fd(h, "lh_events"), on_event, NULL, NULL);
	if (!link || !rb || stats_fd < 0 || ncpus <= 0 ||
	    bpf_map_update_elem(lh_harness_map_fd(h, "lh_config"), &zero, &cfg, BPF_ANY)) {
		fprintf(stderr, "bench: set-up failed (tcx attach, events, config): %s\n",
			strerror(errno));
		goto out;
	}
	for (i = 0; i < FLOWS; i++) {
		flows[i].family = AF_INET;
		flows[i].a.v4.s_addr = htonl(0x0a000001); /* 10.0.0.1 */
		flows[i].b.v4.s_addr = htonl(0x0a090002 + (uint32_t)i); /* 10.9.0.2 + i */
	}

	batches[nb].name = "bare XDP_TX";
	case_bare(&batches[nb++], R_BARE_TX, P_BARE_TX);
	batches[nb].name = "bare XDP_PASS";
	case_bare(&batches[nb++], R_BARE_PASS, P_BARE_PASS);
	batches[nb].name = "not handled";
	case_not_handled(&batches[nb++]);
	batches[nb].name = "unknown ACK";
	case_unknown_ack(&batches[nb++]);
	batches[nb].name = "Depot in order";
	case_depot_in_order(&batches[nb++]);
	batches[nb].name = "Depot in order, warm";
	case_depot_in_order_warm(&batches[nb++]);
	batches[nb].name = "Depot in order, DC egress";
	case_depot_dc_out(&batches[nb++]);
	batches[nb].name = "Depot hold";
	case_depot_hold(&batches[nb++]);
	batches[nb].name = "Depot-NACK";
	case_depot_nack(&batches[nb++]);
	batches[nb].name = "Sentry in order";
	case_sentry_new(&batches[nb++]);
	batches[nb].name = "Sentry Depot-NACK";
	case_sentry_dnack(&batches[nb++]);
	batches[nb].name = "SR filter";
	case_sr(&batches[nb++]);
	batches[nb].name = "report";
	case_report(&batches[nb++], R_REPORT, false);
	batches[nb].name = "report, tag checked";
	case_report(&batches[nb++], R_REPORT_MAC, true);
	batches[nb].name = "release 1";
	case_release(&batches[nb++], R_RELEASE_1, 1, FLOWS, REL1_CYCLES);
	batches[nb].name = "release 63";
	case_release(&batches[nb++], R_RELEASE_63, 63, REL63_FLOWS, REL63_CYCLES);

	for (r = -1; r < RUNS; r++) { /* run -1 warms caches and JIT images, and checks */
		for (i = 0; i < nb; i++)
			if (run_batch(&batches[i], r, rb))
				goto out;
		for (i = 0; r >= 0 && i < R_MAX; i++)
			if (row_value(&rows[i], r)) {
				fprintf(stderr, "bench: nothing measured for %s\n", rows[i].name);
				goto out;
			}
	}
	for (i = 0; i < R_MAX; i++) {
		struct row *w = &rows[i];
		uint64_t all = w->path.kept + w->path.left_out;

		w->median = median_of(w->value, &w->spread);
		w->ratio_median = median_of(w->ratio, NULL);
		/* the log: every run, and how many measured runs were left out */
		fprintf(stderr, "%-80s %8.1f ns  x%6.2f  spread %.3f  left out %.2f %%\n", w->name,
			w->median, w->ratio_median, w->spread,
			100.0 * (double)w->path.left_out / (double)all);
		for (r = 0; r < RUNS; r++)
			fprintf(stderr, "    run %d: %.1f ns, x%.2f\n", r, w->value[r],
				w->ratio[r]);
	}
	print_json();
	status = 0;
out:
	ring_buffer__free(rb);
	bpf_link__destroy(link);
	return status;
}

int main(void)
{
	static const char *const names[] = { "wan_xdp", "dc_xdp", "dc_tc", "wan_tc" };
	struct bpf_object *objs[P_MAX + 1] = { 0 };
	struct lh_harness *bare;
	int cpu = sched_getcpu(), status;
	cpu_set_t set;

	/* one CPU: per-CPU maps and caches stay where they are between runs */
	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	if (getuid() || dp_netns_veth(DC_IF, DC_PEER, &dc_ifindex, NULL)) {
		fprintf(stderr, "bench: needs root (a network namespace with a veth)\n");
		return 1;
	}
	bare = lh_harness_open("baseline", NULL, NULL);
	h = bare ? lh_harness_open_set(names, 4, bench_setup, objs) : NULL;
	if (!h) {
		fprintf(stderr, "bench: cannot load the BPF objects (make?)\n");
		lh_harness_close(bare);
		return 1;
	}
	objs[P_MAX] = lh_harness_obj(bare);
	status = bench(objs);
	/* also after a failure: the pins under /sys/fs/bpf go with the harness */
	lh_harness_close(h);
	lh_harness_close(bare);
	return status;
}
