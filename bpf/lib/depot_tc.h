/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Depot's TC half on the DC interface: emitting packets from the pool.
 *  - release (egress): after the packet that fills a gap, the held run in
 *    PSN order;
 *  - replay (ingress): a NAK of the receiving NIC (loss inside this DC) is
 *    answered from the backup pool and goes no further;
 *  - ACKs of the receiving NIC free backup copies and give the Depot the
 *    MSN its NACKs carry.
 * Each emitted packet is the skb rewritten with a pool slot's bytes and sent
 * with bpf_clone_redirect, so the run leaves in order from one hook; a run
 * longer than LH_BURST is continued by the agent (lh_dc_kick). A packet that
 * cannot be emitted stays in the backup pool: the NIC's NAK brings it back.
 */
#ifndef LH_BPF_DEPOT_TC_H
#define LH_BPF_DEPOT_TC_H

#include "emit.h"
#include "qp.h"


/*
 * Emit the held run from d_deliv, at most LH_BURST packets; clears
 * RELEASING when the run ends, after its last packet went out. Returns the
 * number emitted.
 */
static __always_inline __u32 depot_release_run(struct __sk_buff *skb, struct lh_qp *qp,
					       struct lh_ring *ring, __u32 l2, __u32 ifindex,
					       struct lh_qp_key *key, struct lh_stats *st)
{
	bool v6 = qp->flags & LH_QPF_IPV6, done = false;
	__u64 now = bpf_ktime_get_ns();
	__u32 i, n = 0, prev = LH_NO_SLOT;

	/*
	 * Each packet goes out when the next one is known, so that the last of
	 * the batch can carry AckReq (see lh_skb_set_ackreq).
	 */
	for (i = 0; i < LH_BURST; i++) {
		__u32 idx = LH_NO_SLOT, x;
		struct lh_ring_ent *e;

		bpf_spin_lock(&qp->lock);
		x = qp->d_deliv;
		e = &ring->ent[x & LH_RING_MASK];
		if ((qp->flags & LH_QPF_RELEASING) && e->tag == LH_TAG(LH_SLOT_HELD, x)) {
			e->tag = LH_TAG(LH_SLOT_BACKUP, x);
			idx = e->slot;
			qp->d_deliv = psn_add(x, 1);
			if (psn_diff(qp->d_deliv, qp->d_high) > 0)
				qp->d_high = qp->d_deliv;
			qp->last_progress_ns = now;
		} else {
			done = true;
		}
		bpf_spin_unlock(&qp->lock);
		if (done)
			break;
		if (prev != LH_NO_SLOT) {
			if (lh_emit_slot(skb, prev, l2, ifindex, v6, false))
				lh_count(st, LH_STAT_EMIT_FAIL); /* stays backup: the NIC NAKs it back */
			else
				n++;
		}
		prev = idx;
	}
	if (prev != LH_NO_SLOT) {
		if (lh_emit_slot(skb, prev, l2, ifindex, v6, true))
			lh_count(st, LH_STAT_EMIT_FAIL);
		else
			n++;
	}
	/*
	 * The run ends only now that its last packet is out: until then a
	 * packet arriving in order (XDP on another CPU) is held behind it, not
	 * passed ahead of it. One that was held meanwhile continues the run.
	 */
	if (done) {
		struct lh_ring_ent *e;
		__u32 x;

		bpf_spin_lock(&qp->lock);
		x = qp->d_deliv;
		e = &ring->ent[x & LH_RING_MASK];
		if ((qp->flags & LH_QPF_RELEASING) && e->tag == LH_TAG(LH_SLOT_HELD, x))
			done = false;
		else
			qp->flags &= ~LH_QPF_RELEASING;
		bpf_spin_unlock(&qp->lock);
	}
	lh_count_n(st, LH_STAT_DEPOT_RELEASED, n);
	if (!done) {
		lh_count(st, LH_STAT_DEPOT_RELEASE_MORE);
		lh_event(LH_EV_RELEASE_MORE, key, qp->d_deliv, 0);
	} else if (qp->d_deliv != qp->d_high) {
		/* the run stopped at the next hole: tell the sender side now */
		lh_event(LH_EV_GAP, key, qp->d_deliv, 0);
	}
	return n;
}

/*
 * Replay [psn, d_deliv) from the backup pool toward the NIC, at most LH_BURST
 * packets. The skb's link header is the NAK's, so the MACs are swapped first.
 * Returns the number emitted (0: nothing to answer with, NAK untouched).
 */
static __always_inline __u32 depot_replay(struct __sk_buff *skb, struct lh_qp *qp,
					  struct lh_ring *ring, __u32 psn, __u32 l2, __u32 ifindex,
					  struct lh_qp_key *key, struct lh_stats *st)
{
	bool v6 = qp->flags & LH_QPF_IPV6, swapped = false, more = false;
	__u32 i, n = 0;
	__u8 macs[12];

	for (i = 0; i < LH_BURST; i++) {
		__u32 x = psn_add(psn, i), idx = LH_NO_SLOT;
		struct lh_ring_ent *e = &ring->ent[x & LH_RING_MASK];

		bpf_spin_lock(&qp->lock);
		if (psn_diff(x, qp->d_deliv) < 0 && psn_diff(x, qp->d_acked) >= 0 &&
		    e->tag == LH_TAG(LH_SLOT_BACKUP, x))
			idx = e->slot;
		more = psn_diff(psn_add(x, 1), qp->d_deliv) < 0;
		bpf_spin_unlock(&qp->lock);
		if (idx == LH_NO_SLOT)
			break;
		if (!swapped) {
			/* the NAK came from the NIC: send the replay back to it */
			if (bpf_skb_load_bytes(skb, 0, macs, 12))
				break;
			bpf_skb_store_bytes(skb, 0, macs + 6, 6, 0);
			bpf_skb_store_bytes(skb, 6, macs, 6, 0);
			swapped = true;
		}
		if (lh_emit_slot(skb, idx, l2, ifindex, v6, false)) {
			lh_count(st, LH_STAT_EMIT_FAIL);
			break;
		}
		n++;
		lh_count(st, LH_STAT_DEPOT_REPLAYED);
		if (!more)
			break;
	}
	if (n && more && i == LH_BURST) {
		lh_count(st, LH_STAT_DEPOT_RELEASE_MORE);
		lh_event(LH_EV_RELEASE_MORE, key, psn_add(psn, LH_BURST), 1);
	}
	return n;
}

/* Free the backup slots of [from, to) */
static __always_inline void depot_free_acked(struct lh_qp *qp, struct lh_ring *ring, __u32 from,
					     __u32 n, struct lh_stats *st)
{
	__u32 i;

	for (i = 0; i < LH_RING_SIZE; i++) {
		__u32 x = psn_add(from, i), idx = LH_NO_SLOT;
		struct lh_ring_ent *e = &ring->ent[x & LH_RING_MASK];

		if (i >= n)
			break;
		bpf_spin_lock(&qp->lock);
		if (e->tag == LH_TAG(LH_SLOT_BACKUP, x)) {
			idx = e->slot;
			e->tag = 0;
			e->slot = LH_NO_SLOT;
		}
		bpf_spin_unlock(&qp->lock);
		if (idx != LH_NO_SLOT) {
			bpf_map_push_elem(&lh_pool_free, &idx, 0);
			lh_count(st, LH_STAT_DEPOT_BACKUP_FREED);
		}
	}
}

/* ACK or NAK from the receiving NIC; returns the TC verdict */
static __always_inline int depot_tc_ack(struct __sk_buff *skb, const struct lh_parsed *p,
					struct lh_config *cfg, struct lh_stats *st)
{
	__u32 psn = p->psn, from = 0, n = 0, ring_idx;
	struct lh_qp_key ack_key, dkey;
	struct lh_ring *ring;
	struct lh_qp *qp;

	if (!(p->opflags & ROCE_OPF_AETH))
		return TC_ACT_OK;
	qp = lh_qp_of_ack(p, &ack_key, &dkey, st);
	if (!qp || !(qp->flags & LH_QPF_DEPOT))
		return TC_ACT_OK;
	ring_idx = qp->ring;
	ring = bpf_map_lookup_elem(&lh_ring, &ring_idx);
	if (!ring)
		return TC_ACT_OK;

	if ((p->syndrome & AETH_TYPE_MASK) == AETH_TYPE_ACK) {
		__u32 upto = psn_add(psn, 1); /* an ACK covers its own PSN */

		bpf_spin_lock(&qp->lock);
		qp->msn = p->msn;
		if (psn_diff(upto, qp->d_acked) > 0 && psn_diff(upto, qp->d_deliv) <= 0) {
			from = qp->d_acked;
			n = psn_diff(upto, qp->d_acked);
			qp->d_acked = upto;
		}
		bpf_spin_unlock(&qp->lock);
		lh_count(st, LH_STAT_DEPOT_ACK);
		depot_free_acked(qp, ring, from, n, st);
		return TC_ACT_OK;
	}
	if (p->syndrome == AETH_NAK_PSN_SEQ_ERROR) {
		if (depot_replay(skb, qp, ring, psn, p->l3_off, cfg->dc_ifindex, &dkey, st)) {
			lh_count(st, LH_STAT_DEPOT_NAK_LOCAL);
			lh_count(st, LH_STAT_DROP);
			return TC_ACT_SHOT; /* answered here: the NAK does not cross the WAN */
		}
		lh_count(st, LH_STAT_DEPOT_NAK_FORWARDED);
	}
	return TC_ACT_OK;
}

#endif /* LH_BPF_DEPOT_TC_H */
