// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * ns/packet of longhaul's programs under BPF_PROG_TEST_RUN, next to the bare
 * programs of bpf/baseline.bpf.c in the same run. Prints the bench JSON of
 * tests/bench/run.sh: median of RUNS runs of REPEAT packets each.
 *   bpf_bench [gateway]   the gateway XDP program (parse, count, ICRC check)
 *   bpf_bench credit      the credit program (tcx egress) per verdict
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <bpf/bpf.h>

#include "bpf_harness.h"
#include "fixtures.h"
#include "json.h"
#include "lh_credit.h"

#define RUNS 7
#define REPEAT 200000

struct bcase {
	const char *name;
	struct lh_harness *h;
	const char *prog;
	const struct fx_pkt *pkt;
	const char *baseline; /* case name or NULL */
	double ns[RUNS];
	double median;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int measure(struct bcase *c)
{
	struct bpf_program *p = bpf_object__find_program_by_name(lh_harness_obj(c->h), c->prog);
	static uint8_t out[16384];
	double sorted[RUNS];
	int i;

	for (i = -1; i < RUNS; i++) { /* run -1 warms caches and the JIT image */
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = c->pkt->b,
			    .data_size_in = (uint32_t)c->pkt->len, .data_out = out,
			    .data_size_out = sizeof(out), .repeat = REPEAT);

		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (!p || bpf_prog_test_run_opts(bpf_program__fd(p), &o)) {
			fprintf(stderr, "bench %s: test run failed\n", c->name);
			return -1;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		/* o.duration is whole ns; the syscall's wall time over REPEAT is finer */
		if (i < 0)
			continue;
		c->ns[i] = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
			   REPEAT;
	}
	for (i = 0; i < RUNS; i++)
		sorted[i] = c->ns[i];
	qsort(sorted, RUNS, sizeof(double), cmp_double);
	c->median = sorted[RUNS / 2];
	return 0;
}

static int enable_icrc(struct bpf_object *obj, void *ctx)
{
	__u8 on = 1;

	(void)ctx;
	return lh_obj_set_rodata(obj, "lh_verify_icrc", &on, sizeof(on));
}

static void roce_pkt(struct fx_pkt *p, int family, size_t payload, int vlans)
{
	static uint8_t data[4096];
	struct lh_pkt_spec s;

	lh_pkt_spec_init(&s, family);
	s.roce.opcode = ROCE_RC_RDMA_WRITE_MIDDLE;
	s.payload = data;
	s.payload_len = payload;
	s.nr_vlans = (unsigned int)vlans;
	fx_build(p, &s);
}

static void print_bench(const char *name, const char *title, const char *notes,
			const struct bcase *cases, size_t n)
{
	struct lh_json *j = lh_json_new(stdout, true);
	size_t i, k;

	lh_json_start_object(j);
	lh_json_string_field(j, "name", name);
	lh_json_string_field(j, "title", title);
	lh_json_string_field(j, "notes", notes);
	lh_json_name(j, "rows");
	lh_json_start_array(j);
	for (i = 0; i < n; i++) {
		const struct bcase *c = &cases[i];
		double lo = c->ns[0], hi = c->ns[0];
		const struct bcase *b = NULL;

		for (k = 0; k < RUNS; k++) {
			lo = c->ns[k] < lo ? c->ns[k] : lo;
			hi = c->ns[k] > hi ? c->ns[k] : hi;
		}
		for (k = 0; c->baseline && k < n; k++)
			if (!strcmp(cases[k].name, c->baseline))
				b = &cases[k];
		lh_json_start_object(j);
		lh_json_string_field(j, "case", c->name);
		lh_json_string_field(j, "metric", "time per packet");
		lh_json_string_field(j, "unit", "ns");
		lh_json_double_field(j, "value", (double)(int)(c->median * 10) / 10);
		if (b) {
			lh_json_string_field(j, "baseline", b->name);
			lh_json_double_field(j, "ratio",
					     b->median > 0 ? (double)(int)(c->median / b->median * 100) / 100
							   : 0);
		} else {
			lh_json_name(j, "baseline");
			lh_json_null(j);
			lh_json_name(j, "ratio");
			lh_json_null(j);
		}
		lh_json_uint_field(j, "runs", RUNS);
		lh_json_double_field(j, "spread",
				     c->median > 0 ? (double)(int)((hi - lo) / c->median * 100) / 100 : 0);
		lh_json_end_object(j);
	}
	lh_json_end_array(j);
	lh_json_end_object(j);
	lh_json_free(j);
}

static int bench_observe(void)
{
	static struct fx_pkt v4_1k, v6_vlan_1k, v4_64, v4_4k, non_roce;
	struct lh_harness *base = lh_harness_open("baseline", NULL, NULL);
	struct lh_harness *gw = lh_harness_open("observe", NULL, NULL);
	struct lh_harness *gwc = lh_harness_open("observe", enable_icrc, NULL);
	size_t i, n;

	if (!base || !gw || !gwc) {
		fprintf(stderr, "bench: cannot load the BPF objects (root? make?)\n");
		return 1;
	}
	roce_pkt(&v4_1k, AF_INET, 1024, 0);
	roce_pkt(&v6_vlan_1k, AF_INET6, 1024, 1);
	roce_pkt(&v4_64, AF_INET, 64, 0);
	roce_pkt(&v4_4k, AF_INET, 4096, 0);
	non_roce = v4_1k;
	non_roce.b[non_roce.udp_off + 3] = 53;

	struct bcase cases[] = {
		{ .name = "bare XDP_PASS, 1 KiB RoCE", .h = base, .prog = "lh_bare_pass", .pkt = &v4_1k },
		{ .name = "bare XDP_TX, 1 KiB RoCE", .h = base, .prog = "lh_bare_tx", .pkt = &v4_1k },
		{ .name = "observe parse+count, IPv4 1 KiB RoCE", .h = gw, .prog = "lh_observe", .pkt = &v4_1k,
		  .baseline = "bare XDP_PASS, 1 KiB RoCE" },
		{ .name = "observe parse+count, VLAN IPv6 1 KiB RoCE", .h = gw, .prog = "lh_observe", .pkt = &v6_vlan_1k,
		  .baseline = "bare XDP_PASS, 1 KiB RoCE" },
		{ .name = "observe parse+count, UDP not RoCE", .h = gw, .prog = "lh_observe", .pkt = &non_roce,
		  .baseline = "bare XDP_PASS, 1 KiB RoCE" },
		{ .name = "observe + ICRC check, 64 B payload", .h = gwc, .prog = "lh_observe", .pkt = &v4_64,
		  .baseline = "bare XDP_PASS, 1 KiB RoCE" },
		{ .name = "observe + ICRC check, 1 KiB payload", .h = gwc, .prog = "lh_observe", .pkt = &v4_1k,
		  .baseline = "bare XDP_PASS, 1 KiB RoCE" },
		{ .name = "observe + ICRC check, 4 KiB payload (frags)", .h = gwc, .prog = "lh_observe", .pkt = &v4_4k,
		  .baseline = "bare XDP_PASS, 1 KiB RoCE" },
	};
	n = sizeof(cases) / sizeof(cases[0]);
	for (i = 0; i < n; i++)
		if (measure(&cases[i]))
			return 1;

	print_bench("bpf-observe", "Observe-mode XDP program, ns per packet (BPF_PROG_TEST_RUN)",
			     "Wall time of one BPF_PROG_TEST_RUN of 200000 repetitions divided by 200000, median of 7 runs; "
			     "spread is (max-min)/median. Ratios are against the bare XDP_PASS program "
			     "on the same 1 KiB frame in the same run. BPF_PROG_TEST_RUN excludes the "
			     "driver, so this is the program's own cost.",
		    cases, n);
	lh_harness_close(base);
	lh_harness_close(gw);
	lh_harness_close(gwc);
	return 0;
}

/* A flow in the credit maps as the agent leaves it: state, credit without end on lo */
static int credit_flow(struct lh_harness *h, const struct fx_pkt *p, uint32_t state)
{
	struct lh_cr_grant g = { .state = state, .npaths = 1, .hold_cap = 1 << 20 };
	struct lh_cr_flow f = { 0 };
	struct lh_qp_key k;

	fx_qp_key(p, &k);
	g.limit[0] = UINT64_MAX >> 1;
	g.ifindex[0] = 1; /* BPF_PROG_TEST_RUN's skb leaves by lo */
	g.alive[0] = 1;
	return bpf_map_update_elem(lh_harness_map_fd(h, "lh_cr_flow"), &k, &f, BPF_ANY) ||
	       bpf_map_update_elem(lh_harness_map_fd(h, "lh_cr_grant"), &k, &g, BPF_ANY);
}

static int bench_credit(void)
{
	static struct fx_pkt fwd, last, unknown, non_roce;
	struct lh_harness *base = lh_harness_open("baseline", NULL, NULL);
	struct lh_harness *cr = lh_harness_open("credit_tc", NULL, NULL);
	size_t i, n;

	if (!base || !cr) {
		fprintf(stderr, "bench: cannot load the BPF objects (root? make?)\n");
		return 1;
	}
	roce_pkt(&fwd, AF_INET, 1024, 0);
	last = unknown = non_roce = fwd;
	last.b[last.bth_off + 7] ^= 1; /* other destination QPs: other flows */
	unknown.b[unknown.bth_off + 7] ^= 2;
	non_roce.b[non_roce.udp_off + 3] = 53;
	if (credit_flow(cr, &fwd, LH_CRS_ACTIVE) || credit_flow(cr, &last, LH_CRS_LAST)) {
		fprintf(stderr, "bench: cannot fill the credit maps\n");
		return 1;
	}
	struct bcase cases[] = {
		{ .name = "bare TC pass, 1 KiB RoCE", .h = base, .prog = "lh_bare_tc", .pkt = &fwd },
		{ .name = "credit: forwarded against credit", .h = cr, .prog = "lh_cr_out", .pkt = &fwd,
		  .baseline = "bare TC pass, 1 KiB RoCE" },
		{ .name = "credit: last hop, counted", .h = cr, .prog = "lh_cr_out", .pkt = &last,
		  .baseline = "bare TC pass, 1 KiB RoCE" },
		{ .name = "credit: RoCE of no flow, passed", .h = cr, .prog = "lh_cr_out", .pkt = &unknown,
		  .baseline = "bare TC pass, 1 KiB RoCE" },
		{ .name = "credit: UDP not RoCE, passed", .h = cr, .prog = "lh_cr_out", .pkt = &non_roce,
		  .baseline = "bare TC pass, 1 KiB RoCE" },
	};
	n = sizeof(cases) / sizeof(cases[0]);
	for (i = 0; i < n; i++)
		if (measure(&cases[i]))
			return 1;
	print_bench("credit-tc", "Credit program (tcx egress), ns per packet (BPF_PROG_TEST_RUN)",
		    "Wall time of one BPF_PROG_TEST_RUN of 200000 repetitions divided by 200000, median "
		    "of 7 runs; spread is (max-min)/median. Ratios are against a TC program that only "
		    "returns TC_ACT_OK, on the same 1 KiB IPv4 RoCEv2 frame in the same run. The "
		    "forwarded case has a flow with credit that never runs out; holding a packet "
		    "(a ring buffer record of the whole packet) is not measured here.",
		    cases, n);
	lh_harness_close(base);
	lh_harness_close(cr);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "credit"))
		return bench_credit();
	if (argc > 1 && strcmp(argv[1], "observe")) {
		fprintf(stderr, "usage: bpf_bench [observe|credit]\n");
		return 2;
	}
	return bench_observe();
}
