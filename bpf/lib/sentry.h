/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Sentry, the sender-side half of LR2 (docs/design.md).
 *
 * Data from the DC (XDP on the DC interface), per QP:
 *  - the next new PSN passes; a PSN beyond it (loss inside the sender's DC)
 *    becomes a Sentry-NACK to the NIC at once, later ones are dropped until
 *    the NIC rewinds (it sends them again);
 *  - a retransmission during a recovery episode passes only when the Depot
 *    reported it missing (the SR filter); outside an episode it passes.
 * ACK-direction packets from the WAN (XDP on the WAN interface):
 *  - a Depot-NACK records its missing PSNs; the first of an episode goes on
 *    to the NIC as the plain NAK it already is (mark cleared), later ones
 *    are absorbed while the NIC's go-back-N replay is under way;
 *  - a plain NAK from the far NIC ends filtering (the receiver is in go-back-N
 *    itself and needs every packet); an ACK past the episode ends it.
 */
#ifndef LH_BPF_SENTRY_H
#define LH_BPF_SENTRY_H

#include "nak.h"
#include "qp.h"

enum sentry_action {
	SENTRY_PASS_NEW,
	SENTRY_NACK,
	SENTRY_GAP_DROP,
	SENTRY_UNPAIRED,
	SENTRY_RETX_PASS,
	SENTRY_SR_PASS,
	SENTRY_SR_DROP,
};

/* Missing-PSN bitmap (s_missing from s_base): test-and-clear, set */
static __always_inline bool sentry_take_missing(struct lh_qp *qp, __u32 psn, bool *outside)
{
	__s32 off = psn_diff(psn, qp->s_base);
	__u64 bit;
	__u32 w;

	*outside = off < 0 || off >= LH_SR_WORDS * 64;
	if (*outside)
		return false;
	w = ((__u32)off >> 6) & (LH_SR_WORDS - 1);
	bit = 1ULL << (off & 63);
	if (!(qp->s_missing[w] & bit))
		return false;
	qp->s_missing[w] &= ~bit;
	return true;
}

static __always_inline bool sentry_mark_missing(struct lh_qp *qp, __u32 psn)
{
	__s32 off = psn_diff(psn, qp->s_base);

	if (off < 0 || off >= LH_SR_WORDS * 64)
		return false;
	qp->s_missing[((__u32)off >> 6) & (LH_SR_WORDS - 1)] |= 1ULL << (off & 63);
	return true;
}

static __always_inline void sentry_episode_stop(struct lh_qp *qp)
{
	qp->flags &= ~LH_QPF_EPISODE;
	qp->s_missing[0] = 0;
	qp->s_missing[1] = 0;
	qp->s_missing[2] = 0;
	qp->s_missing[3] = 0;
}

/* Data from the sending NIC (DC ingress) */
static __always_inline int sentry_xdp_data(struct xdp_md *ctx, const struct lh_parsed *p,
					   struct lh_stats *st)
{
	__u32 psn = p->psn, nak_psn = 0;
	enum sentry_action act;
	struct lh_qp_key key;
	struct lh_qp *qp;
	bool outside;
	__u64 now;
	__s32 d;

	lh_key_of(&key, p);
	qp = bpf_map_lookup_elem(&lh_qp, &key);
	if (!qp) {
		lh_qp_learn(p, LH_QPF_SENTRY);
		return XDP_PASS; /* the first packet of a QP is in order by definition */
	}
	if (!(qp->flags & LH_QPF_SENTRY))
		return XDP_PASS;
	now = bpf_ktime_get_ns();
	lh_qp_paired(qp, &key);

	bpf_spin_lock(&qp->lock);
	d = psn_diff(psn, qp->s_next);
	if (d == 0) {
		qp->s_next = psn_add(psn, 1);
		qp->flags &= ~LH_QPF_SNAK_SENT;
		if ((qp->flags & LH_QPF_EPISODE) && psn_diff(psn, qp->s_end) >= 0)
			sentry_episode_stop(qp); /* new data: the replay is over */
		act = SENTRY_PASS_NEW;
	} else if (d > 0) {
		if (!(qp->flags & LH_QPF_PAIRED)) {
			act = SENTRY_UNPAIRED;
		} else if (!(qp->flags & LH_QPF_SNAK_SENT)) {
			qp->flags |= LH_QPF_SNAK_SENT;
			nak_psn = qp->s_next;
			act = SENTRY_NACK;
		} else {
			act = SENTRY_GAP_DROP;
		}
	} else if (qp->flags & LH_QPF_EPISODE) {
		qp->s_replay = psn_add(psn, 1);
		if (sentry_take_missing(qp, psn, &outside) || outside)
			act = SENTRY_SR_PASS;
		else
			act = SENTRY_SR_DROP;
	} else {
		act = SENTRY_RETX_PASS;
	}
	qp->last_rx_ns = now;
	bpf_spin_unlock(&qp->lock);

	switch (act) {
	case SENTRY_PASS_NEW:
		lh_count(st, LH_STAT_SENTRY_IN_ORDER);
		return XDP_PASS;
	case SENTRY_NACK:
		if (lh_xdp_make_nak(ctx, p, qp->peer_qpn, nak_psn, qp->msn, 0)) {
			lh_count(st, LH_STAT_NAK_BUILD_FAIL);
			return XDP_PASS;
		}
		lh_count(st, LH_STAT_SENTRY_NACK);
		return XDP_PASS; /* the kernel routes the NAK back to the sender */
	case SENTRY_GAP_DROP:
		lh_count(st, LH_STAT_SENTRY_GAP_DROP);
		lh_count(st, LH_STAT_DROP);
		return XDP_DROP;
	case SENTRY_UNPAIRED:
		lh_count(st, LH_STAT_SENTRY_UNPAIRED);
		return XDP_PASS;
	case SENTRY_SR_PASS:
		lh_count(st, LH_STAT_SENTRY_SR_PASS);
		return XDP_PASS;
	case SENTRY_SR_DROP:
		lh_count(st, LH_STAT_SENTRY_SR_DROP);
		lh_count(st, LH_STAT_DROP);
		return XDP_DROP;
	default:
		lh_count(st, LH_STAT_SENTRY_RETX_PASS);
		return XDP_PASS;
	}
}

enum sentry_ack_action {
	SENTRY_ACK_PASS,
	SENTRY_ACK_FORWARD, /* Depot-NACK on to the NIC, mark cleared */
	SENTRY_ACK_ABSORB,
	SENTRY_ACK_OVERFLOW,
	SENTRY_ACK_CANCEL,
	SENTRY_ACK_END,
};

/* ACK, NAK or Depot-NACK from the WAN toward the sending NIC */
static __always_inline int sentry_xdp_ack(struct xdp_md *ctx, const struct lh_parsed *p,
					  struct lh_stats *st)
{
	enum sentry_ack_action act = SENTRY_ACK_PASS;
	__u32 psn = p->psn, len, i;
	struct lh_qp_key ack_key;
	__u8 syn = p->syndrome, b4 = p->byte4;
	struct lh_qp *qp;

	qp = lh_qp_of_ack(p, &ack_key);
	if (!qp) {
		lh_count(st, LH_STAT_ACK_UNPAIRED);
		lh_event(LH_EV_ACK_UNPAIRED, &ack_key, psn, 0);
		return XDP_PASS;
	}
	if (!(qp->flags & LH_QPF_SENTRY))
		return XDP_PASS;
	len = (b4 & LH_DNACK_LEN_MASK) + 1;

	bpf_spin_lock(&qp->lock);
	qp->msn = p->msn;
	if ((syn & AETH_TYPE_MASK) == AETH_TYPE_ACK) {
		if ((qp->flags & LH_QPF_EPISODE) && psn_diff(psn, qp->s_end) >= 0) {
			sentry_episode_stop(qp);
			act = SENTRY_ACK_END;
		}
	} else if (syn == AETH_NAK_PSN_SEQ_ERROR && (b4 & LH_DNACK_MARK)) {
		bool fits = true;

		if (!(qp->flags & LH_QPF_EPISODE)) {
			sentry_episode_stop(qp);
			qp->flags |= LH_QPF_EPISODE;
			qp->s_base = psn;
			qp->s_end = qp->s_next;
			qp->s_replay = psn;
			act = SENTRY_ACK_FORWARD;
		} else {
			/* already replaying: the NIC must rewind again only if it passed psn */
			act = psn_diff(psn, qp->s_replay) < 0 ? SENTRY_ACK_FORWARD : SENTRY_ACK_ABSORB;
		}
		for (i = 0; i < LH_DNACK_MAX_RANGE; i++) {
			if (i >= len)
				break;
			fits &= sentry_mark_missing(qp, psn_add(psn, i));
		}
		if (!fits) {
			/* cannot tell what the Depot holds: stop filtering, plain go-back-N */
			sentry_episode_stop(qp);
			act = SENTRY_ACK_OVERFLOW;
		}
	} else if (syn == AETH_NAK_PSN_SEQ_ERROR) {
		if (qp->flags & LH_QPF_EPISODE) {
			sentry_episode_stop(qp);
			act = SENTRY_ACK_CANCEL;
		}
	}
	bpf_spin_unlock(&qp->lock);

	switch (act) {
	case SENTRY_ACK_FORWARD:
	case SENTRY_ACK_OVERFLOW: {
		/* byte 4 is outside the ICRC: clearing the mark keeps the NAK valid */
		__u8 clean = b4 & ~(LH_DNACK_MARK | LH_DNACK_LEN_MASK);

		bpf_xdp_store_bytes(ctx, p->bth_off + BTH_BYTE4_OFF, &clean, 1);
		lh_count(st, act == SENTRY_ACK_FORWARD ? LH_STAT_SENTRY_DNACK_FORWARD
						       : LH_STAT_SENTRY_DNACK_OVERFLOW);
		return XDP_PASS;
	}
	case SENTRY_ACK_ABSORB:
		lh_count(st, LH_STAT_SENTRY_DNACK_ABSORB);
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

#endif /* LH_BPF_SENTRY_H */
