/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Depot, the receiver-side half of LR2 (docs/design.md), for data arriving
 * from the WAN (XDP on the WAN interface):
 *  - in order (PSN == ePSN): delivered, a copy kept in the pool as backup;
 *  - out of order (PSN > ePSN): held in the pool, the NIC never sees the gap;
 *    a new gap [ePSN_D, PSN) turns this packet into a Depot-NACK (the NIC's
 *    own NAK: PSN = ePSN) and asks the agent for a report (lh_proto.h);
 *  - a packet that fills the gap is delivered and marks the QP "releasing":
 *    the DC egress TC program emits the held run after it (dc_tc.bpf.c).
 * Whatever the Depot cannot handle (unknown QP, pool or ring full,
 * oversize) passes unchanged and is counted: the NICs' go-back-N
 * recovers it.
 */
#ifndef LH_BPF_DEPOT_H
#define LH_BPF_DEPOT_H

#include "nak.h"
#include "pool.h"
#include "qp.h"

enum depot_action {
	DEPOT_DELIVER,
	DEPOT_HOLD,
	DEPOT_HOLD_NACK,
	DEPOT_DUP_DELIVERED,
	DEPOT_DUP_HELD,
	DEPOT_RING_BUSY,
	DEPOT_NO_SLOT,
	DEPOT_DELIVER_WINDOW, /* in order, its position holds a backup not ACKed yet */
};

/*
 * T/C-SACK, count trigger: every sack_count data packets the Depot takes in
 * for a QP, the agent sends it a report (the time trigger is the agent's).
 */
static __always_inline void depot_sack_count(struct lh_qp *qp, const struct lh_qp_key *key,
					     __u32 psn, __u32 sack_count)
{
	if (sack_count && __sync_add_and_fetch(&qp->d.sack_cnt, 1) % sack_count == 0)
		lh_event(LH_EV_SACK_DUE, key, psn, 0);
}

/* A decision taken before the lock: none yet, go on */
#define DEPOT_GO_ON (-1)

/*
 * A first look without the lock, from d = psn - d.deliv: a stale QP, a
 * duplicate, a PSN beyond the ring, or out of order on a QP whose ePSN the
 * NIC may be behind all pass at once (the verdict), anything else goes on
 * (DEPOT_GO_ON)
 */
static __always_inline int depot_first_look(struct lh_qp *qp, const struct lh_qp_key *key, __s32 d,
					    __u64 now, struct lh_stats *st)
{
	if (lh_qp_stale(qp, key, d, now, st))
		return XDP_PASS;
	if (d < 0) {
		lh_count(st, LH_STAT_DEPOT_DUP_DELIVERED);
		return XDP_PASS;
	}
	if (d >= LH_RING_SIZE) {
		/*
		 * More in flight than the ring holds (a gap at d.deliv with the
		 * NIC's window still sending): it goes on, the receiving NIC's
		 * go-back-N sees the gap. The QP is alive all the same: taken
		 * for idle, the next such packet would make it stale.
		 */
		if (d < LH_QP_STALE_BACK)
			WRITE_ONCE(qp->last_rx_ns, now);
		if (READ_ONCE(qp->flags) & LH_QPF_D_BACK)
			return lh_drop(st, LH_STAT_DEPOT_BACK_DROP); /* the NIC went back */
		lh_count(st, LH_STAT_DEPOT_WINDOW);
		return XDP_PASS;
	}
	/*
	 * Out of order before the first ACK told the requester's QPN: held all
	 * the same (the NIC must not see the gap), but the NACK waits for the
	 * pairing; lh_dc_out asks the NIC for that ACK (AckReq) meanwhile.
	 * Except for a QP learned mid-flight (wide: just after its agent
	 * started) whose first PSN the receiving NIC has not ACKed yet
	 * (LH_QPF_D_UNSURE): its ePSN is only the first PSN this Depot saw, the
	 * NIC may be behind it. A Depot-NACK from there would acknowledge to the
	 * sending NIC what the receiver never got (a Depot restarted
	 * mid-transfer would cost QP errors to NICs of few retries); and a QP
	 * that no ACK pairs (QPs sharing PSN ranges: their wide ranges overlap)
	 * would hold a gap with no NACK possible. It goes to the NIC as with no
	 * gateway, whose go-back-N recovers it.
	 */
	if (d > 0) {
		lh_qp_paired(qp, key); /* the agent's pairing, copied in: a NACK below needs it */
		if (READ_ONCE(qp->flags) & LH_QPF_D_UNSURE) {
			lh_count(st, LH_STAT_DEPOT_WIDE_UNPAIRED);
			return XDP_PASS;
		}
	}
	return DEPOT_GO_ON;
}

/*
 * In order: delivered, its copy (slot idx) kept as the backup in ring entry e
 * when the position is free. Its position may still hold the backup of the
 * PSN a ring before, which the receiving NIC has not ACKed: a window larger
 * than the ring (real NICs keep thousands of PSNs in flight; rxe ACKs once
 * per message). Delivered with no copy then, as with no slot: the Depot stays
 * in step with the flow (not delivering it, the Depot would take the next PSN
 * for a gap and hold it, and NACK a PSN the NIC has). So too while a run is
 * released (it cannot be held behind the run with its position taken):
 * passed as busy, it would reach the NIC with the Depot's ePSN left before
 * it, and the NIC's next ACK would find the Depot behind (depot_lost_track:
 * the QP stale, forgotten). Should it overtake the run's last packets, the
 * NIC drops it and NAKs it, with no backup: the NAK goes on to the sender,
 * whose go-back-N resends it, as with no gateway. Under the lock.
 */
static __always_inline enum depot_action depot_deliver(struct lh_qp *qp, struct lh_ring_ent *e,
						       const struct lh_ring_ent *nx, __u32 psn,
						       __u32 idx, __u64 now)
{
	enum depot_action act = DEPOT_DELIVER;

	if (LH_TAG_STATE(e->tag) != LH_SLOT_FREE) {
		qp->d.unsafe_end = psn_add(psn, 1);
		act = DEPOT_DELIVER_WINDOW;
	} else if (idx != LH_NO_SLOT) {
		e->slot = idx;
		e->tag = LH_TAG(LH_SLOT_BACKUP, psn);
	} else {
		qp->d.unsafe_end = psn_add(psn, 1);
	}
	lh_depot_delivered(qp, psn);
	qp->last_progress_ns = now;
	/* a run under way goes on by itself to what is held after it */
	if (nx->tag == LH_TAG(LH_SLOT_HELD, qp->d.deliv) && nx->slot != LH_NO_SLOT &&
	    !(qp->flags & LH_QPF_RELEASING)) {
		qp->flags |= LH_QPF_RELEASING;
		qp->d.release_after = psn;
	}
	return act;
}

/*
 * Out of order: held in slot idx until the gap before it is filled. A new gap
 * [d.high, psn) is NACKed: the Depot-NACK is the receiving NIC's own NAK, PSN
 * = ePSN, the first PSN not delivered (*gap_start); its mark says how many
 * PSNs from there are missing (*gap_len, the first hole); the report the
 * agent sends on the LH_EV_GAP event gives the whole picture. Under the lock.
 */
static __always_inline enum depot_action depot_hold(struct lh_qp *qp, const struct lh_ring *ring,
						    struct lh_ring_ent *e, __u32 psn, __u32 idx,
						    __u32 *gap_start, __u32 *gap_len)
{
	enum depot_action act = DEPOT_HOLD;
	__u32 i;

	e->slot = idx;
	e->tag = LH_TAG(LH_SLOT_HELD, psn);
	if (psn_diff(psn, qp->d.high) > 0)
		act = DEPOT_HOLD_NACK; /* a new gap [d.high, psn) */
	if (psn_diff(psn, qp->d.high) >= 0)
		qp->d.high = psn_add(psn, 1);
	*gap_start = lh_depot_nack_psn(qp);
	for (i = 0; i < LH_DNACK_MAX_RANGE; i++) {
		__u32 x = psn_add(qp->d.deliv, i);

		if (x == qp->d.high || ring->ent[x & LH_RING_MASK].tag == LH_TAG(LH_SLOT_HELD, x))
			break;
	}
	*gap_len = lh_depot_nack_len(qp, i);
	return act;
}

/*
 * What a data packet from the WAN means for its QP, as rxe's check_psn(): a
 * duplicate (delivered, or held already), in order, or out of order to hold.
 * Under the lock.
 */
static __always_inline enum depot_action depot_data_decide(struct lh_qp *qp, struct lh_ring *ring,
							   __u32 psn, __u32 idx, __u64 now,
							   __u32 *gap_start, __u32 *gap_len)
{
	struct lh_ring_ent *e = &ring->ent[psn & LH_RING_MASK];
	const struct lh_ring_ent *nx = &ring->ent[(psn + 1) & LH_RING_MASK];
	__s32 d = psn_diff(psn, qp->d.deliv);

	if (d < 0)
		return DEPOT_DUP_DELIVERED;
	if (LH_TAG_STATE(e->tag) != LH_SLOT_FREE && (LH_TAG_PSN(e->tag) == psn || d > 0))
		return LH_TAG_PSN(e->tag) == psn ? DEPOT_DUP_HELD : DEPOT_RING_BUSY;
	if (d == 0 && (!(qp->flags & LH_QPF_RELEASING) || LH_TAG_STATE(e->tag) != LH_SLOT_FREE))
		return depot_deliver(qp, e, nx, psn, idx, now);
	if (idx == LH_NO_SLOT)
		return DEPOT_NO_SLOT; /* in order while a run is released, and no slot to hold it */
	return depot_hold(qp, ring, e, psn, idx, gap_start, gap_len);
}

/*
 * The way back for the agent's NACK retries and reports: the interface the
 * data comes in by now (a gateway with several WANs, a path that failed over)
 * and the MACs there. Written only when it changes. Under the lock.
 */
static __always_inline void depot_note_wan_path(struct lh_qp *qp, const struct lh_parsed *p,
						__u32 ifindex)
{
	if (qp->wan_ifindex == ifindex)
		return;
	qp->wan_ifindex = ifindex;
	__builtin_memcpy(qp->wan_peer_mac, p->smac, 6);
	__builtin_memcpy(qp->wan_mac, p->dmac, 6);
}

/* A new gap held: the agent reports it, and a Depot-NACK goes back over the WAN */
static __always_inline int depot_nack(struct xdp_md *ctx, const struct lh_parsed *p,
				      struct lh_qp *qp, const struct lh_qp_key *key,
				      struct lh_stats *st, __u32 gap_start, __u32 gap_len,
				      __u64 now)
{
	lh_count(st, LH_STAT_DEPOT_HELD);
	lh_event(LH_EV_GAP, key, p->psn, 0); /* the agent sends the report */
	if (!(READ_ONCE(qp->flags) & LH_QPF_PAIRED))
		return lh_drop(st, LH_STAT_DEPOT_UNPAIRED); /* the agent NACKs once paired */
	/* no NACK built: held all the same, the agent's timer NACKs */
	if (lh_xdp_make_nak(ctx, p, qp->peer_qpn, gap_start, qp->msn,
			    LH_DNACK_MARK | ((gap_len - 1) & LH_DNACK_LEN_MASK)))
		return lh_drop(st, LH_STAT_NAK_BUILD_FAIL);
	qp->d.last_nack_ns = now;
	if (psn_diff(gap_start, qp->d.nacked_psn) > 0)
		qp->d.nacked_psn = gap_start; /* racy: a hint for the DC timer */
	lh_count(st, LH_STAT_DEPOT_NACK);
	return XDP_PASS; /* the kernel routes the NACK back over the WAN */
}

static __always_inline int depot_xdp_data_do(struct xdp_md *ctx, const struct lh_parsed *p,
					     struct lh_stats *st, __u32 sack_count)
{
	__u32 psn = p->psn, idx, gap_start = 0, gap_len = 0, ring_idx;
	enum depot_action act;
	struct lh_ring_ent *e;
	struct lh_qp_key key;
	struct lh_ring *ring;
	struct lh_qp *qp;
	__u64 now;
	__s32 d;
	int verdict;

	lh_key_of(&key, p);
	qp = bpf_map_lookup_elem(&lh_qp, &key);
	if (!qp) {
		if (lh_qp_learn(p, LH_QPF_DEPOT))
			return XDP_PASS;
		qp = bpf_map_lookup_elem(&lh_qp, &key);
		if (!qp)
			return XDP_PASS;
	}
	if (!(qp->flags & LH_QPF_DEPOT))
		return XDP_PASS; /* a QP this gateway is the Sentry of, looping back: leave it */
	now = bpf_ktime_get_ns();
	/* whatever happens to it below, it goes to the NIC, which may ACK it */
	if (!(READ_ONCE(qp->flags) & LH_QPF_PAIRED))
		lh_pair_note(qp, &key, psn, now, st);
	ring_idx = qp->ring;
	ring = bpf_map_lookup_elem(&lh_ring, &ring_idx);
	if (!ring || (qp->flags & LH_QPF_NO_RING)) {
		lh_count(st, LH_STAT_DEPOT_NO_RING);
		return XDP_PASS;
	}
	d = psn_diff(psn, READ_ONCE(qp->d.deliv));
	verdict = depot_first_look(qp, &key, d, now, st);
	if (verdict != DEPOT_GO_ON)
		return verdict;
	e = &ring->ent[psn & LH_RING_MASK];
	/*
	 * In order onto a position an unACKed backup holds (a window over the
	 * ring, depot_deliver): it goes with no copy, so none is made (a pool
	 * store and free per packet). Racy, and only a hint: the lock decides.
	 */
	if (d == 0 && LH_TAG_STATE(READ_ONCE(e->tag)) != LH_SLOT_FREE &&
	    LH_TAG_PSN(READ_ONCE(e->tag)) != psn)
		idx = LH_NO_SLOT;
	else
		idx = lh_pool_store(ctx, p, ring_idx, st);
	if (idx == LH_NO_SLOT && d > 0)
		return XDP_PASS; /* fail open: out of order goes to the NIC, its go-back-N recovers
				  */

	bpf_spin_lock(&qp->lock);
	act = depot_data_decide(qp, ring, psn, idx, now, &gap_start, &gap_len);
	qp->last_rx_ns = now;
	depot_note_wan_path(qp, p, ctx->ingress_ifindex);
	bpf_spin_unlock(&qp->lock);
	depot_sack_count(qp, &key, psn, sack_count);

	switch (act) {
	case DEPOT_DELIVER:
		lh_count(st, idx == LH_NO_SLOT ? LH_STAT_DEPOT_NO_BACKUP : LH_STAT_DEPOT_IN_ORDER);
		return XDP_PASS;
	case DEPOT_NO_SLOT:
		return XDP_PASS;
	case DEPOT_DELIVER_WINDOW:
		lh_slot_free(idx);
		lh_count(st, LH_STAT_DEPOT_WINDOW);
		return XDP_PASS;
	case DEPOT_HOLD:
		return lh_drop(st, LH_STAT_DEPOT_HELD);
	case DEPOT_HOLD_NACK:
		return depot_nack(ctx, p, qp, &key, st, gap_start, gap_len, now);
	case DEPOT_DUP_HELD:
		lh_slot_free(idx);
		return lh_drop(st, LH_STAT_DEPOT_DUP_HELD);
	case DEPOT_RING_BUSY:
		lh_slot_free(idx);
		lh_count(st, LH_STAT_DEPOT_RING_BUSY);
		return XDP_PASS;
	default:
		lh_slot_free(idx);
		lh_count(st, LH_STAT_DEPOT_DUP_DELIVERED);
		return XDP_PASS;
	}
}

/*
 * Verified once as a global function (stack and verifier work of its own);
 * sack_count is lh_config's, which the caller has looked up already.
 */
__noinline int depot_xdp_data(struct xdp_md *ctx, const struct lh_parsed *p, __u32 sack_count)
{
	if (!p)
		return XDP_PASS;
	return depot_xdp_data_do(ctx, p, lh_stats_get(), sack_count);
}

#endif /* LH_BPF_DEPOT_H */
