// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `longhaul stats show` and `longhaul stats opcodes`: the per-CPU counter
 * structs lh_stats and lh_opcodes summed over the possible CPUs, each counter
 * with its name, as `bpftool map dump` names the field, and its description.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "lh_stats.h"
#include "log.h"
#include "output.h"
#include "pins.h"
#include "pkt.h"

/* The kernel copies each CPU's value at a stride of value_size rounded up to 8 */
int sum_percpu(const struct lh_target *t, const char *name, __u64 *total, unsigned int n,
	       int *nr_cpus)
{
	struct pinned_map pm;
	__u32 key = 0, stride;
	int cpus, cpu, rc;
	unsigned int i;
	char *buf;

	rc = map_open(t, name, &pm);
	if (rc)
		return rc;
	warn_if_stopped(t);
	if (pm.info.max_entries < 1 || pm.info.value_size != n * sizeof(__u64)) {
		pr_err("pinned map %s has %u entries of %u bytes: not a counter struct\n", name,
		       pm.info.max_entries, pm.info.value_size);
		map_close(&pm);
		return LH_EXIT_INCOMPAT;
	}
	cpus = possible_cpus();
	stride = percpu_stride(&pm);
	buf = calloc((size_t)cpus, stride);
	if (!buf) {
		map_close(&pm);
		return LH_EXIT_ERROR;
	}
	if (bpf_map_lookup_elem(pm.fd, &key, buf)) {
		pr_err("read %s: %s\n", name, strerror(errno));
		free(buf);
		map_close(&pm);
		return LH_EXIT_ERROR;
	}
	memset(total, 0, n * sizeof(*total));
	for (cpu = 0; cpu < cpus; cpu++) {
		for (i = 0; i < n; i++) {
			__u64 v;

			memcpy(&v, buf + (size_t)cpu * stride + i * sizeof(v), sizeof(v));
			total[i] += v;
		}
	}
	*nr_cpus = cpus;
	free(buf);
	map_close(&pm);
	return 0;
}

int do_stats_show(struct lh_cli *cli)
{
	__u64 total[LH_STAT_MAX];
	int rc, cpus, i;

	/* struct lh_stats is one __u64 per enum lh_stat, in enum order (include/lh_stats.h) */
	rc = sum_percpu(&cli->target, "lh_stats", total, LH_STAT_MAX, &cpus);
	if (rc)
		return rc;
	out_key_width(24);
	out_num_width(12);
	out_object_begin(NULL);
	out_uint("cpus", (uint64_t)cpus);
	out_object_begin("counters");
	for (i = 0; i < LH_STAT_MAX; i++) {
		if (!total[i] && !cli->opt.all)
			continue;
		out_row_begin(lh_stat_name((enum lh_stat)i));
		out_uint("value", total[i]);
		out_str("description", lh_stat_desc((enum lh_stat)i));
		out_row_end();
	}
	out_object_end();
	out_object_end();
	return 0;
}

static const struct {
	const char *field;
	uint8_t opcode;
} opcodes[] = {
#define OPCODE_ENTRY(name, field, val) { #field, val },
	ROCE_OPCODES(OPCODE_ENTRY)
#undef OPCODE_ENTRY
};

int do_stats_opcodes(struct lh_cli *cli)
{
	__u64 total[ROCE_OPCODE_IDX_MAX], sum = 0;
	int rc, cpus, i;

	rc = sum_percpu(&cli->target, "lh_opcodes", total, ROCE_OPCODE_IDX_MAX, &cpus);
	if (rc)
		return rc;
	for (i = 0; i < ROCE_OPCODE_IDX_MAX; i++)
		sum += total[i];
	out_key_width(36);
	out_num_width(12);
	out_object_begin(NULL);
	out_uint("cpus", (uint64_t)cpus);
	out_uint("total", sum);
	out_object_begin("opcodes");
	for (i = 0; i < ROCE_OPCODE_IDX_MAX; i++) {
		if (!total[i] && !cli->opt.all)
			continue;
		out_row_begin(opcodes[i].field);
		out_uint("value", total[i]);
		out_hex("opcode", opcodes[i].opcode, 2);
		out_row_end();
	}
	out_object_end();
	out_object_end();
	return 0;
}
