/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * BPF_PROG_TEST_RUN harness for the production objects in $(O)/bpf/.
 *
 * A fixture is {description, input packet, expected verdict, expected output
 * bytes, expected counter changes}. Counters are named "map.field" and read
 * through the map's BTF (per-CPU values summed), so a test names what it
 * expects to move; every other field of every counter map must not move.
 */
#ifndef LH_BPF_HARNESS_H
#define LH_BPF_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <bpf/libbpf.h>

#define LH_FIXTURE_MAX_DELTAS 8

struct lh_counter_delta {
	const char *counter; /* "map.field", e.g. "lh_stats.parse_trunc_ip" */
	int64_t delta;
};

struct lh_fixture {
	const char *desc;
	const void *in;
	size_t in_len;
	int verdict; /* XDP_PASS, TC_ACT_OK ... */
	const void *out; /* expected output; NULL: the input, unchanged */
	size_t out_len;
	struct lh_counter_delta deltas[LH_FIXTURE_MAX_DELTAS]; /* ends at counter == NULL */
};

struct lh_harness;

/* Set rodata etc. between open and load */
typedef int (*lh_harness_setup_fn)(struct bpf_object *obj, void *ctx);

/*
 * Open $(O)/bpf/<name>.bpf.o (the object the build produced), clear map
 * pinning so tests never touch /sys/fs/bpf, call setup, load. NULL on error
 * (already reported as a TAP diagnostic).
 */
struct lh_harness *lh_harness_open(const char *name, lh_harness_setup_fn setup, void *ctx);
/*
 * Open several objects that share their pinned maps, as longhauld does: each
 * is opened with the same pin directory (a fresh one under /sys/fs/bpf,
 * removed by lh_harness_close). setup runs for every object before its load.
 */
struct lh_harness *lh_harness_open_set(const char *const *names, int n, lh_harness_setup_fn setup,
				       void *ctx);
void lh_harness_close(struct lh_harness *h);
/* fd of a map by name (any object of the set) */
int lh_harness_map_fd(struct lh_harness *h, const char *map);
/* push 0..n-1 into a queue map (the agent's free lists) */
int lh_harness_fill_queue(struct lh_harness *h, const char *map, uint32_t n);
/* The first object (of a set: the first one opened) */
struct bpf_object *lh_harness_obj(struct lh_harness *h);

/* Run a TC program: skb->ifindex set to ifindex (0: none) */
int lh_harness_run_tc(struct lh_harness *h, const char *prog, const void *in, size_t in_len,
		      uint32_t ifindex, uint32_t *verdict, void *out, size_t *out_len);

/*
 * Run a TC program with the skb fields BPF_PROG_TEST_RUN takes from ctx
 * (ifindex, ingress_ifindex, mark, priority, cb ...)
 */
struct __sk_buff;
int lh_harness_run_skb(struct lh_harness *h, const char *prog, const void *in, size_t in_len,
		       const struct __sk_buff *ctx, uint32_t *verdict, void *out, size_t *out_len);

/*
 * Run an XDP program on a frame that arrived by ingress_ifindex (its
 * ctx->ingress_ifindex; a device of this network namespace, 0: lo)
 */
int lh_harness_run_xdp(struct lh_harness *h, const char *prog, const void *in, size_t in_len,
		       uint32_t ingress_ifindex, uint32_t *verdict, void *out, size_t *out_len);

/* Run one packet through program 'prog'; returns 0 and the verdict/output */
int lh_harness_run(struct lh_harness *h, const char *prog, const void *in, size_t in_len,
		   uint32_t *verdict, void *out, size_t *out_len);

/* Set a `const volatile` global of the object before load (setup callbacks) */
int lh_obj_set_rodata(struct bpf_object *obj, const char *var, const void *val, size_t size);

/* Current value of counter "map.field" (summed over CPUs); -1 when there is none */
int64_t lh_counter_read(struct lh_harness *h, const char *counter);

/*
 * Run a fixture: the verdict, the output bytes, and the counters (each listed
 * delta exactly; every other field of every counter map unchanged). Counter
 * maps are the one-entry maps whose BTF value is a struct of __u64 fields.
 * On mismatch writes why into err and returns false.
 */
bool lh_fixture_check(struct lh_harness *h, const char *prog, const struct lh_fixture *f,
		      char *err, size_t err_len);

/*
 * Run a fixture as test points, each under its description: the verdict, the
 * output length and bytes, each named counter's move, and the other counter
 * fields unchanged (those that moved named in diagnostics); true when all hold
 */
bool lh_fixture_run(struct lh_harness *h, const char *prog, const struct lh_fixture *f);

#endif /* LH_BPF_HARNESS_H */
