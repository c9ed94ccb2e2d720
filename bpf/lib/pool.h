/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The packet pool (lh_pool) and its free list (lh_pool_free): copying a
 * packet in from XDP, giving a slot back, and getting a QP a ring of its
 * own. Shared by the Depot (held and backup packets) and the Sentry (the
 * missing PSNs it let through, for re-sending them itself).
 */
#ifndef LH_BPF_POOL_H
#define LH_BPF_POOL_H

#include "maps.h"
#include "parsed.h"
#include "stats.h"

/* Coarse clock for the slots' timestamps: never 0, which means "never sent" */
static __always_inline __u32 lh_now_ms(void)
{
	__u32 ms = (__u32)(bpf_ktime_get_ns() / 1000000);

	return ms ? ms : 1;
}

static __always_inline void lh_slot_free(__u32 idx)
{
	if (idx != LH_NO_SLOT)
		bpf_map_push_elem(&lh_pool_free, &idx, 0);
}

/* Copy the packet's L3 bytes into a free slot; returns its index or LH_NO_SLOT */
static __always_inline __u32 lh_pool_store(struct xdp_md *ctx, const struct lh_parsed *p,
					   __u32 ring, struct lh_stats *st)
{
	__u32 idx = LH_NO_SLOT, len = (__u32)p->l4_off + p->udp_len - p->l3_off;
	struct lh_slot *slot;

	if (len > LH_SLOT_DATA) {
		lh_count(st, LH_STAT_DEPOT_TOO_BIG);
		return LH_NO_SLOT;
	}
	/*
	 * Two separate tests (clang would fold them into one the verifier
	 * cannot use), and a lower bound, not len == 0: bpf_xdp_load_bytes()
	 * refuses a size whose minimum may be 0, and 6.1's verifier learns
	 * nothing from a != test (newer ones raise the minimum to 1).
	 */
	barrier_var(len);
	if (len < LH_SLOT_MIN)
		return LH_NO_SLOT;
	if (bpf_map_pop_elem(&lh_pool_free, &idx)) {
		lh_count(st, LH_STAT_POOL_EMPTY);
		return LH_NO_SLOT;
	}
	slot = bpf_map_lookup_elem(&lh_pool, &idx);
	if (!slot || bpf_xdp_load_bytes(ctx, p->l3_off, slot->data, len)) {
		lh_slot_free(idx);
		return LH_NO_SLOT;
	}
	slot->psn = p->psn;
	slot->ring = ring;
	slot->len = len;
	slot->sent_ms = 0;
	return idx;
}

/* The QP's ring, taking one from lh_ring_free the first time; NULL when none is left */
static __always_inline struct lh_ring *lh_qp_ring(struct lh_qp *qp)
{
	__u32 idx = qp->ring, fresh = LH_NO_SLOT;

	if (idx == LH_NO_SLOT) {
		if (bpf_map_pop_elem(&lh_ring_free, &fresh))
			return NULL;
		bpf_spin_lock(&qp->lock);
		if (qp->ring == LH_NO_SLOT) {
			qp->ring = fresh;
			fresh = LH_NO_SLOT;
		}
		idx = qp->ring;
		bpf_spin_unlock(&qp->lock);
		if (fresh != LH_NO_SLOT) /* another CPU was first */
			bpf_map_push_elem(&lh_ring_free, &fresh, 0);
	}
	return bpf_map_lookup_elem(&lh_ring, &idx);
}

#endif /* LH_BPF_POOL_H */
