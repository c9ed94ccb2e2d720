/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The Sentry's decider for ACKs, NAKs and Depot-NACKs from the WAN (sentry.h):
 * the receiver's ACK point, a Depot-NACK answered by a copy, owed or passed
 * on as a plain NAK, the far NIC's own NAK.
 */
#ifndef LH_BPF_SENTRY_ACK_H
#define LH_BPF_SENTRY_ACK_H

#include "sentry_state.h"

enum sentry_ack_action {
	SENTRY_ACK_PASS,
	SENTRY_ACK_FORWARD, /* Depot-NACK on to the NIC, mark cleared */
	SENTRY_ACK_ABSORB,
	SENTRY_ACK_CANCEL,
	SENTRY_ACK_END,
};

/*
 * A Depot-NACK whose first missing PSN the Sentry has a copy of (slot idx of
 * ring ring_idx): the NACK goes up to lh_wan_in (TC, the same interface) with
 * metadata naming the copy, which TC sends back to the Depot at once, a WAN
 * round trip after the loss, instead of after the Depot's report and, with
 * gateway recovery, the agent's pacer (on a loaded host those added
 * milliseconds: go-back-0 at 1/256, 53 packets held per gap at 2 ms). Not
 * when the copy went out less than the re-send guard ago (still on its way),
 * as for the report's re-sends, which skip it in turn. False: absorbed as
 * before (the report re-sends it), the frame untouched.
 */
static __always_inline bool sentry_dnack_resend(struct xdp_md *ctx, __u32 ring_idx, __u32 idx,
						__u32 psn)
{
	const struct lh_config *cfg = lh_config_get();
	struct lh_slot *slot = bpf_map_lookup_elem(&lh_pool, &idx);
	struct lh_resend_meta *m;
	__u32 now_ms = lh_now_ms();
	void *data;

	/*
	 * Gateway recovery only, where the NIC never rewinds: in LR2 the copies
	 * are of NIC replays, rare (14 in 5 go-back-0 runs), and an answer ahead
	 * of the NIC's replay gains nothing. The copy may have been freed and
	 * taken again since the ring said so.
	 */
	if (!cfg || !(cfg->flags & LH_CFG_GATEWAY) || !slot || slot->psn != psn ||
	    slot->ring != ring_idx)
		return false;
	if (lh_slot_sent_within(slot, now_ms, cfg->resend_guard_ms))
		return false;
	if (bpf_xdp_adjust_meta(ctx, -(int)sizeof(*m)))
		return false; /* no room, or a driver without metadata */
	m = (void *)(long)ctx->data_meta;
	data = (void *)(long)ctx->data;
	if ((void *)(m + 1) > data) {
		bpf_xdp_adjust_meta(ctx, (int)sizeof(*m));
		return false;
	}
	m->magic = LH_META_RESEND;
	m->slot = idx;
	m->psn = psn;
	m->ring = ring_idx;
	slot->sent_ms = now_ms;
	return true;
}

/* What an ACK, NAK or Depot-NACK decided under the lock that is done after it */
struct sentry_ack_out {
	__u32 freed_upto; /* copies before this go: the ACK point moved (0: none) */
	__u32 owed; /* the NAK the NIC was owed, now due (0: none) */
	__u32 resend; /* the pool slot of our copy to send for a Depot-NACK (LH_NO_SLOT: none) */
	bool resumed; /* gateway recovery resumed: all acknowledged, nothing owed */
	bool back; /* the far NIC's NAK moved the receiver's ACK point back */
};

/*
 * A positive ACK of psn: the receiver's ACK point moves, which may end the
 * NIC's retry (and make the NAK it was owed due), the episode, and gateway
 * recovery's fallback. Under the lock.
 */
static __always_inline enum sentry_ack_action
sentry_ack_positive(struct lh_qp *qp, __u32 psn, __u64 now, struct sentry_ack_out *out)
{
	enum sentry_ack_action act = SENTRY_ACK_PASS;
	__u32 upto = psn_add(psn, 1);

	if (!sentry_before_acked(qp, psn))
		qp->s.acked = upto; /* the highest ACK point: never back */
	qp->flags |= LH_QPF_S_ACKED;
	if (sentry_una_set(qp, upto)) {
		qp->last_progress_ns = now;
		/* copies to free: only when the ACK point moved (below) */
		out->freed_upto = upto;
	}
	/*
	 * The receiver has the rewind point: a replay from it is moot. A NIC that
	 * ignored the NAK (in a retry of its own the Sentry did not see: a QP
	 * learned mid-flight) never sends it, and the episode, waiting on it,
	 * would drop the NIC's timer resends as held until the NIC gave up.
	 */
	if ((qp->flags & LH_QPF_REWIND_PENDING) && psn_diff(upto, qp->s.rewind) > 0)
		qp->flags &= ~LH_QPF_REWIND_PENDING;
	sentry_rtt_ack(qp, upto, now);
	sentry_stay_ack(qp, upto, now);
	/* rxe ends a retry on an ACK from its rewind point on */
	if ((qp->flags & LH_QPF_NIC_RETRY) && psn_diff(psn, qp->s.retry_psn) >= 0) {
		qp->flags &= ~LH_QPF_NIC_RETRY;
		if (qp->flags & LH_QPF_NAK_DEFERRED) {
			qp->flags &= ~LH_QPF_NAK_DEFERRED;
			if (psn_diff(qp->s.deferred, psn) > 0) {
				/* the agent sends it right behind this ACK */
				out->owed = qp->s.deferred;
				sentry_rewind(qp, out->owed);
			}
		}
	}
	if ((qp->flags & LH_QPF_EPISODE) && psn_diff(upto, qp->s.end) >= 0 &&
	    !(qp->flags & LH_QPF_NAK_DEFERRED) && !out->owed) {
		sentry_episode_stop(qp);
		qp->s.wd_fired = 0; /* a recovery the receiver's ACK ended */
		act = SENTRY_ACK_END;
	}
	/* gateway recovery: all acknowledged, nothing owed, copies again */
	if ((qp->flags & LH_QPF_GW_OFF) && qp->s.una == qp->s.next &&
	    !(qp->flags & LH_QPF_SENTRY_BUSY)) {
		qp->flags &= ~LH_QPF_GW_OFF;
		out->resumed = true;
	}
	return act;
}

/*
 * A Depot-NACK: psn is the receiver's ePSN, everything before it is
 * delivered, [psn, psn + len) is missing. Answered by our copy (cached, in
 * ring), owed to a NIC in a retry, or passed on to the NIC. Under the lock.
 */
static __always_inline enum sentry_ack_action sentry_ack_dnack(struct lh_qp *qp, __u32 psn,
							       __u32 len, bool cached,
							       const struct lh_ring *ring,
							       struct sentry_ack_out *out)
{
	__u32 i;

	if (!(qp->flags & LH_QPF_EPISODE) || psn != qp->s.base) {
		sentry_clear_bitmap(qp);
		qp->s.base = psn;
	}
	/*
	 * Whichever way it is answered below, the episode lasts until what the
	 * NIC sent by now is acknowledged or sent anew. Left as it was (0 on a
	 * new QP), an episode begun on a cached PSN or during a NIC retry would
	 * not end for PSNs 2^23 past it: the filter would drop the NIC's timer
	 * resends for good.
	 */
	qp->s.end = qp->s.next;
	qp->flags |= LH_QPF_EPISODE;
	sentry_rtt_hole(qp, psn);
	sentry_una_set(qp, psn); /* a NAK acknowledges what precedes it */
	for (i = 0; i < LH_DNACK_MAX_RANGE; i++) {
		if (i >= len)
			break;
		sentry_mark_missing(qp, psn_add(psn, i));
	}
	if (cached && psn_diff(psn, qp->s.next) < 0) {
		/* in gateway recovery, not fallen back to LR2's way (GW_OFF) */
		if (ring && !(qp->flags & LH_QPF_GW_OFF) &&
		    ring->ent[psn & LH_RING_MASK].tag == LH_TAG(LH_SLOT_CACHED, psn))
			out->resend = ring->ent[psn & LH_RING_MASK].slot;
		return SENTRY_ACK_ABSORB; /* our copy goes back out, below or on the report */
	}
	if (qp->flags & LH_QPF_NIC_RETRY) {
		/* the NIC would ignore it: owe it until the ACK that ends the retry */
		qp->flags |= LH_QPF_NAK_DEFERRED;
		qp->s.deferred = psn;
		return SENTRY_ACK_ABSORB;
	}
	sentry_rewind(qp, psn);
	return SENTRY_ACK_FORWARD;
}

/*
 * The far NIC's own NAK of psn: it goes on to the sending NIC, which goes back
 * there; the receiver needs everything again from there. Under the lock.
 */
static __always_inline enum sentry_ack_action sentry_ack_far_nak(struct lh_qp *qp, __u32 psn,
								 enum sentry_ack_action act,
								 struct sentry_ack_out *out)
{
	if (qp->flags & LH_QPF_EPISODE) {
		sentry_episode_stop(qp);
		act = SENTRY_ACK_CANCEL;
	}
	/*
	 * A go-back-0 responder that met a gap drops the partial message, PSNs
	 * it ACKed too, and NAKs the message's first PSN: its ACK point went
	 * back. Kept where it was, the filter would drop the resend of that
	 * message as acknowledged and echo ACKs the responder no longer stands
	 * by: a livelock the NICs alone do not have. Backwards only: it makes
	 * the filter pass more, never less.
	 */
	if (psn_diff(psn, qp->s.una) < 0) {
		qp->s.una = psn;
		out->back = true;
	}
	if (!(qp->flags & LH_QPF_NIC_RETRY)) {
		qp->flags |= LH_QPF_NIC_RETRY;
		qp->s.retry_psn = psn;
	}
	return act;
}

/*
 * A Depot-NACK passed on to the NIC as a plain NAK: its mark cleared. Byte 4
 * is outside the ICRC, so the NAK stays valid; but the UDP checksum covers it
 * (always over IPv6): RFC 1624, HC' = ~(~HC + ~m + m'). Byte 4 is the high
 * byte of a 16-bit word of the UDP datagram (the BTH starts 8 bytes in); a
 * checksum of 0 means none (IPv4).
 */
static __always_inline void sentry_dnack_unmark(struct xdp_md *ctx, const struct lh_parsed *p)
{
	__u8 b4 = p->byte4, clean = b4 & ~(LH_DNACK_MARK | LH_DNACK_LEN_MASK);
	__u8 csum[2];
	__u32 sum;

	bpf_xdp_store_bytes(ctx, p->bth_off + BTH_BYTE4_OFF, &clean, 1);
	if (bpf_xdp_load_bytes(ctx, p->l4_off + 6, csum, 2) || !(csum[0] | csum[1]))
		return;
	sum = (~((__u32)csum[0] << 8 | csum[1]) & 0xffff) + (~((__u32)b4 << 8) & 0xffff) +
	      ((__u32)clean << 8);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	if (!sum)
		sum = 0xffff;
	csum[0] = (__u8)(sum >> 8);
	csum[1] = (__u8)sum;
	bpf_xdp_store_bytes(ctx, p->l4_off + 6, csum, 2);
}

/*
 * What an ACK, NAK or Depot-NACK from the WAN means for its QP, as rxe's
 * check_ack(): a positive ACK, a Depot-NACK, or the far NIC's own NAK (RNR
 * included). Under the lock.
 */
static __always_inline enum sentry_ack_action
sentry_ack_decide(struct lh_qp *qp, const struct lh_parsed *p, __u64 now, __u32 len, bool cached,
		  const struct lh_ring *ring, struct sentry_ack_out *out)
{
	enum sentry_ack_action act = SENTRY_ACK_PASS;
	__u8 syn = p->syndrome, b4 = p->byte4;

	if ((syn & AETH_TYPE_MASK) == AETH_TYPE_ACK)
		act = sentry_ack_positive(qp, p->psn, now, out);
	else if (syn == AETH_NAK_PSN_SEQ_ERROR && (b4 & LH_DNACK_MARK))
		act = sentry_ack_dnack(qp, p->psn, len, cached, ring, out);
	else
		sentry_rtt_hole(qp, p->psn); /* the far NIC's NAK: that PSN comes again */
	if (syn == AETH_NAK_PSN_SEQ_ERROR && !(b4 & LH_DNACK_MARK))
		act = sentry_ack_far_nak(qp, p->psn, act, out);
	return act;
}

/* The verdict on an ACK, NAK or Depot-NACK from the WAN */
static __always_inline int sentry_ack_verdict(struct xdp_md *ctx, const struct lh_parsed *p,
					      struct lh_stats *st, enum sentry_ack_action act,
					      __u32 ring_idx, __u32 resend)
{
	switch (act) {
	case SENTRY_ACK_FORWARD:
		sentry_dnack_unmark(ctx, p);
		lh_count(st, LH_STAT_SENTRY_DNACK_FORWARD);
		return XDP_PASS;
	case SENTRY_ACK_ABSORB:
		lh_count(st, LH_STAT_SENTRY_DNACK_ABSORB);
		if (resend != LH_NO_SLOT && sentry_dnack_resend(ctx, ring_idx, resend, p->psn)) {
			lh_count(st, LH_STAT_SENTRY_DNACK_RESEND);
			return XDP_PASS; /* to lh_wan_in, which sends the copy instead */
		}
		lh_count(st, LH_STAT_DROP);
		return XDP_DROP;
	case SENTRY_ACK_CANCEL:
		lh_count(st, LH_STAT_SENTRY_EPISODE_CANCEL);
		return XDP_PASS;
	case SENTRY_ACK_END:
		lh_count(st, LH_STAT_SENTRY_EPISODE_END);
		return XDP_PASS;
	default:
		return XDP_PASS;
	}
}

/* ACK, NAK or Depot-NACK from the WAN toward the sending NIC */
static __always_inline int sentry_xdp_ack_do(struct xdp_md *ctx, const struct lh_parsed *p,
					     struct lh_stats *st)
{
	struct sentry_ack_out out = {.resend = LH_NO_SLOT};
	__u32 psn = p->psn, len, ring_idx = LH_NO_SLOT;
	enum sentry_ack_action act;
	struct lh_ring *ring = NULL;
	enum sentry_bound bound;
	struct lh_qp_key ack_key, dkey;
	bool cached = false;
	struct lh_qp *qp;
	__u64 now = bpf_ktime_get_ns();

	qp = lh_qp_of_ack(p, &ack_key, &dkey, st);
	if (!qp || (qp->flags & (LH_QPF_SENTRY | LH_QPF_STALE)) != LH_QPF_SENTRY)
		return XDP_PASS;
	/* paired now (this ACK may be what paired it): the agent's NAKs need the peer */
	lh_qp_paired(qp, &dkey);
	len = (p->byte4 & LH_DNACK_LEN_MASK) + 1;
	if (p->byte4 & LH_DNACK_MARK) {
		ring_idx = qp->ring;
		if (ring_idx != LH_NO_SLOT)
			ring = bpf_map_lookup_elem(&lh_ring, &ring_idx);
		/* racy without the lock, and only a hint: is psn among our copies */
		cached = ring && ring->ent[psn & LH_RING_MASK].tag == LH_TAG(LH_SLOT_CACHED, psn);
	}

	bpf_spin_lock(&qp->lock);
	bound = sentry_ack_bound(qp, p->syndrome, p->byte4, psn, len);
	if (bound != SENTRY_IN_WINDOW) {
		/* it goes to the NIC, which may move past s.next on it */
		if (bound == SENTRY_UNSENT)
			qp->flags |= LH_QPF_S_JUMP;
		bpf_spin_unlock(&qp->lock);
		if (bound == SENTRY_STALE)
			return lh_drop(st, LH_STAT_SENTRY_DNACK_STALE);
		lh_count(st, LH_STAT_SENTRY_ACK_UNSENT);
		return XDP_PASS;
	}
	qp->msn = p->msn;
	/* the way back to the Depot: the agent's gateway re-sends take it */
	__builtin_memcpy(qp->wan_peer_mac, p->smac, 6);
	__builtin_memcpy(qp->wan_mac, p->dmac, 6);
	qp->wan_ifindex = ctx->ingress_ifindex; /* ... out of the interface the ACKs come by */
	act = sentry_ack_decide(qp, p, now, len, cached, ring, &out);
	bpf_spin_unlock(&qp->lock);
	lh_trace("LHA %u %x %x", psn,
		 (p->syndrome << 24) | (p->byte4 << 16) | (act << 12) | qp->flags, qp->s.una);
	if (out.owed)
		lh_event(LH_EV_NAK_DUE, &dkey, out.owed, 0);
	/*
	 * Not on every ACK: a receiver flooded with duplicates ACKs each one at
	 * the same PSN, and each sweep of the ring is 256 locked steps. Copies
	 * made since at PSNs already ACKed go with the next ACK that moves the
	 * point.
	 */
	if (out.freed_upto)
		sentry_uncache(qp, out.freed_upto, st);
	if (out.resumed)
		lh_count(st, LH_STAT_SENTRY_GW_RESUME);
	if (out.back)
		lh_count(st, LH_STAT_SENTRY_NAK_BACK);
	return sentry_ack_verdict(ctx, p, st, act, ring_idx, out.resend);
}

#endif /* LH_BPF_SENTRY_ACK_H */
