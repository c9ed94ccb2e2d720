/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The maps of credit-based flow control (include/lh_credit.h says who writes
 * each field) and the helpers of lh_cr_out. Pinned by name: the agent and
 * `longhaul credits` read them under the agent's pin directory.
 */
#ifndef LH_BPF_CREDIT_H
#define LH_BPF_CREDIT_H

#include "lh_credit.h"

/* Per flow, counted by the program (atomic adds only); the agent creates transit entries */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LH_CR_MAX_FLOWS); /* agent: max-qps */
	__type(key, struct lh_qp_key);
	__type(value, struct lh_cr_flow);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_cr_flow SEC(".maps");

/* Per flow, the agent's decisions: state, credit limits, active path, releases */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LH_CR_MAX_FLOWS); /* agent: max-qps */
	__type(key, struct lh_qp_key);
	__type(value, struct lh_cr_grant);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_cr_grant SEC(".maps");

/* The DC interface and the hold limit of flows not yet set up, written by the agent */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lh_cr_config);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_cr_config SEC(".maps");

/* New flows and held packets (whole), program to agent */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_cr_events SEC(".maps");

/* Verdict counters of lh_cr_out (struct lh_cr_stats: `bpftool map dump` names them), read by longhaul */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lh_cr_stats);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_cr_stats SEC(".maps");

static __always_inline void lh_cr_count(struct lh_cr_stats *st, enum lh_cr_stat s)
{
	if (st && (__u32)s < LH_CR_ST_MAX)
		((__u64 *)st)[s] += 1;
}

#endif /* LH_BPF_CREDIT_H */
