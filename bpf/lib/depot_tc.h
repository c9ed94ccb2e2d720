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

#include "qp.h"

#ifndef TC_ACT_OK
#define TC_ACT_OK 0
#define TC_ACT_SHOT 2
#endif

/* Rewrite skb as pool slot idx after its l2-byte link header, TTL - 1, and send a clone */
static __always_inline int depot_emit_slot(struct __sk_buff *skb, __u32 idx, __u32 l2,
					   __u32 ifindex, bool v6)
{
	struct lh_slot *slot = bpf_map_lookup_elem(&lh_pool, &idx);
	__u32 len;
	__u8 ttl;

	if (!slot || l2 > 64)
		return -1;
	len = slot->len;
	if (len > LH_SLOT_DATA)
		return -1;
	barrier_var(len); /* keep the two bounds apart for the verifier */
	if (len < 28)
		return -1;
	if (bpf_skb_change_tail(skb, l2 + len, 0))
		return -1;
	if (bpf_skb_store_bytes(skb, l2, slot->data, len, 0))
		return -1;
	/* routing would have decremented the TTL; it is outside the ICRC */
	if (v6) {
		ttl = slot->data[7] > 1 ? slot->data[7] - 1 : 1;
		bpf_skb_store_bytes(skb, l2 + 7, &ttl, 1, 0);
	} else {
		__u16 old = (__u16)slot->data[8] << 8 | slot->data[9], new;

		ttl = slot->data[8] > 1 ? slot->data[8] - 1 : 1;
		new = (__u16)ttl << 8 | slot->data[9];
		bpf_skb_store_bytes(skb, l2 + 8, &ttl, 1, 0);
		bpf_l3_csum_replace(skb, l2 + 10, bpf_htons(old), bpf_htons(new), 2);
	}
	return bpf_clone_redirect(skb, ifindex, 0) ? -1 : 0;
}

/*
 * Emit the held run from d_deliv, at most LH_BURST packets; clears
 * RELEASING when the run ends. Returns the number emitted.
 */
static __always_inline __u32 depot_release_run(struct __sk_buff *skb, struct lh_qp *qp,
					       struct lh_ring *ring, __u32 l2, __u32 ifindex,
					       struct lh_qp_key *key, struct lh_stats *st)
{
	bool v6 = qp->flags & LH_QPF_IPV6, done = false;
	__u64 now = bpf_ktime_get_ns();
	__u32 i, n = 0;

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
			qp->flags &= ~LH_QPF_RELEASING;
			done = true;
		}
		bpf_spin_unlock(&qp->lock);
		if (done)
			break;
		if (depot_emit_slot(skb, idx, l2, ifindex, v6)) {
			lh_count(st, LH_STAT_EMIT_FAIL);
			continue; /* kept as backup: the NIC NAKs it, the replay brings it */
		}
		n++;
		lh_count(st, LH_STAT_DEPOT_RELEASED);
	}
	if (!done) {
		lh_count(st, LH_STAT_DEPOT_RELEASE_MORE);
		lh_event(LH_EV_RELEASE_MORE, key, qp->d_deliv, 0);
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
		if (depot_emit_slot(skb, idx, l2, ifindex, v6)) {
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
	struct lh_qp_key ack_key, *dkey;
	struct lh_ring *ring;
	struct lh_qp *qp;

	if (!(p->opflags & ROCE_OPF_AETH))
		return TC_ACT_OK;
	lh_key_of(&ack_key, p);
	dkey = bpf_map_lookup_elem(&lh_ack, &ack_key);
	qp = dkey ? bpf_map_lookup_elem(&lh_qp, dkey) : NULL;
	if (!qp || !dkey) {
		lh_count(st, LH_STAT_ACK_UNPAIRED);
		lh_event(LH_EV_ACK_UNPAIRED, &ack_key, psn, 0);
		return TC_ACT_OK;
	}
	if (!(qp->flags & LH_QPF_DEPOT))
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
		struct lh_qp_key dk = *dkey;

		if (depot_replay(skb, qp, ring, psn, p->l3_off, cfg->dc_ifindex, &dk, st)) {
			lh_count(st, LH_STAT_DEPOT_NAK_LOCAL);
			lh_count(st, LH_STAT_DROP);
			return TC_ACT_SHOT; /* answered here: the NAK does not cross the WAN */
		}
		lh_count(st, LH_STAT_DEPOT_NAK_FORWARDED);
	}
	return TC_ACT_OK;
}

#endif /* LH_BPF_DEPOT_TC_H */
