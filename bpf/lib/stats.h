/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Per-CPU counters: lh_stats (struct lh_stats, one field per enum lh_stat)
 * and lh_opcodes (struct lh_opcode_stats). One-entry per-CPU arrays: a single
 * lookup per packet, no atomics, no shared cache line, and `bpftool map dump`
 * prints every counter by name (array maps cannot take an enum as key).
 */
#ifndef LH_BPF_STATS_H
#define LH_BPF_STATS_H

#include "lh_stats.h"
#include "rocev2.h"

/* Verdict and reason counters (struct lh_stats), written by every program, read by longhaul */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lh_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_stats SEC(".maps");

/* RoCEv2 packets per opcode (struct lh_opcode_stats), written by the parsers */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lh_opcode_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_opcodes SEC(".maps");

static __always_inline struct lh_stats *lh_stats_get(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&lh_stats, &key);
}

/* Count one event; st may be NULL (lookup failed: nothing to count into) */
static __always_inline void lh_count(struct lh_stats *st, enum lh_stat s)
{
	if (st && (__u32)s < LH_STAT_MAX)
		((__u64 *)st)[s] += 1;
}

static __always_inline void lh_count_n(struct lh_stats *st, enum lh_stat s, __u64 n)
{
	if (st && (__u32)s < LH_STAT_MAX)
		((__u64 *)st)[s] += n;
}

/* An XDP drop on purpose: counted under its reason and as a drop */
static __always_inline int lh_drop(struct lh_stats *st, enum lh_stat reason)
{
	lh_count(st, reason);
	lh_count(st, LH_STAT_DROP);
	return XDP_DROP;
}

static __always_inline void lh_count_opcode(__u8 opcode)
{
	struct lh_opcode_stats *st;
	__u32 key = 0;
	int idx = roce_opcode_index(opcode);

	st = bpf_map_lookup_elem(&lh_opcodes, &key);
	if (st && idx >= 0 && idx < ROCE_OPCODE_IDX_MAX)
		((__u64 *)st)[idx] += 1;
}

#endif /* LH_BPF_STATS_H */
