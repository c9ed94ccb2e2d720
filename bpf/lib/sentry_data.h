/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The Sentry's decider for data from the DC (sentry.h): in order, ahead (a
 * loss inside the sender's DC: a Sentry-NACK), the NIC's replay filtered, or
 * a retransmission of its own; the watchdog of a stuck recovery.
 */
#ifndef LH_BPF_SENTRY_DATA_H
#define LH_BPF_SENTRY_DATA_H

#include "sentry_state.h"

enum sentry_action {
	SENTRY_PASS_NEW,
	SENTRY_NACK,
	SENTRY_GAP_DROP,
	SENTRY_UNPAIRED,
	SENTRY_RETX_PASS,
	SENTRY_SR_PASS,
	SENTRY_SR_DROP,
	SENTRY_ACK_ECHO,
	SENTRY_ACKED_DROP,
	SENTRY_JUMP,
};

/*
 * The watchdog of a recovery of this QP, in ns (0: none): --sentry-watchdog,
 * or 4 of the QP's round-trip timeouts when longer, doubled for each given up
 * since the last that ended; --nic-timeout bounds it as it is
 */
static __always_inline __u64 sentry_watchdog_ns(struct lh_qp *qp, const struct lh_config *cfg)
{
	__u64 watchdog_ns, rtos_ns;
	__u32 fired;

	if (!cfg->watchdog_ms)
		return 0;
	watchdog_ns = (__u64)cfg->watchdog_ms * 1000000;
	if (cfg->flags & LH_CFG_WD_BOUND)
		return watchdog_ns;
	rtos_ns = (__u64)LH_WATCHDOG_RTOS * 1000 *
		  lh_rto_us(READ_ONCE(qp->s.srtt_us), READ_ONCE(qp->s.rttvar_us));
	fired = READ_ONCE(qp->s.wd_fired);
	if (rtos_ns > watchdog_ns)
		watchdog_ns = rtos_ns;
	return watchdog_ns << (fired < LH_WATCHDOG_BACKOFF_MAX ? fired : LH_WATCHDOG_BACKOFF_MAX);
}

/*
 * Whatever went wrong (a NAK or an ACK lost where nobody sees it, a pairing
 * mistaken), a recovery that has not moved the receiver's ACK point for the
 * watchdog time ends here: the NIC's own go-back-N and timer take over, with
 * nothing filtered. Under the lock; true when it fired.
 */
static __always_inline bool sentry_watchdog_fire(struct lh_qp *qp, __u64 now, __u64 watchdog_ns)
{
	if (!watchdog_ns || !(qp->flags & LH_QPF_SENTRY_BUSY) || now <= qp->last_progress_ns ||
	    now - qp->last_progress_ns <= watchdog_ns)
		return false;
	sentry_episode_stop(qp);
	qp->flags &= ~(LH_QPF_SNAK_SENT | LH_QPF_NIC_RETRY);
	qp->last_progress_ns = now;
	qp->s.rtt_tx_ns = 0;
	qp->s.wd_fired++;
	qp->flags |= LH_QPF_S_JUMP; /* what the NIC sends next is its own doing */
	return true;
}

/*
 * The NIC goes back to psn (a NAK it takes, now or owed): it is in a retry
 * until an ACK from there, its replay starts there, and the recovery lasts
 * until what it sent by now comes again. Under the lock.
 */
static __always_inline void sentry_rewind(struct lh_qp *qp, __u32 psn)
{
	qp->flags |= LH_QPF_NIC_RETRY | LH_QPF_REWIND_PENDING;
	qp->s.retry_psn = psn;
	qp->s.rewind = psn;
	qp->s.replay = psn;
	qp->s.end = qp->s.next;
}

/* The PSN the NIC was to send next: in order. Under the lock. */
static __always_inline enum sentry_action sentry_data_next(struct lh_qp *qp,
							   const struct lh_parsed *p, __u64 now)
{
	__u32 psn = p->psn;

	qp->s.next = psn_add(psn, 1);
	qp->s.tx_ns = now;
	qp->last_progress_ns = now;
	qp->flags &= ~LH_QPF_SNAK_SENT;
	sentry_rtt_start(qp, p, now);
	sentry_stay_start(qp, psn, now);
	/* new data after the replay: the episode is over (not if the NIC ignored the NAK) */
	if ((qp->flags & LH_QPF_EPISODE) && !(qp->flags & LH_QPF_REWIND_PENDING) &&
	    psn_diff(psn, qp->s.end) >= 0)
		sentry_episode_stop(qp);
	return SENTRY_PASS_NEW;
}

/* A PSN past s.next: PSNs were lost inside the sender's DC. Under the lock. */
static __always_inline enum sentry_action sentry_data_ahead(struct lh_qp *qp, __u32 psn, __u64 now,
							    __u32 *nak_psn)
{
	if (qp->flags & LH_QPF_S_JUMP) {
		/* the NIC was told of PSNs past s.next (LH_QPF_S_JUMP): no gap of ours */
		qp->flags &= ~(LH_QPF_S_JUMP | LH_QPF_SNAK_SENT);
		qp->s.next = psn_add(psn, 1);
		qp->s.tx_ns = now;
		return SENTRY_JUMP;
	}
	if ((qp->flags & (LH_QPF_PAIRED | LH_QPF_S_SYNCED)) != (LH_QPF_PAIRED | LH_QPF_S_SYNCED)) {
		/*
		 * No NAK possible before the first ACK (no requester QPN, and no
		 * receiver's point to NAK from: a NAK acknowledges what precedes
		 * it): the gap goes over the WAN and the Depot recovers it as a
		 * WAN loss (it holds and NACKs once paired). For the filter, all
		 * of it was sent.
		 */
		qp->s.next = psn_add(psn, 1);
		return SENTRY_UNPAIRED;
	}
	/* NAKed already, or the NIC is replaying: the replay brings s.next */
	if (qp->flags & (LH_QPF_SNAK_SENT | LH_QPF_NIC_RETRY))
		return SENTRY_GAP_DROP;
	/*
	 * Back to what the receiver acknowledged: a NAK acknowledges every PSN
	 * before its own, and only the receiver may do that for what crossed
	 * the WAN. The filter drops the replay up to the gap (keeping copies)
	 * and passes the rest.
	 */
	*nak_psn = qp->s.una;
	sentry_rewind(qp, *nak_psn);
	qp->flags |= LH_QPF_SNAK_SENT | LH_QPF_EPISODE;
	sentry_clear_bitmap(qp);
	qp->s.base = *nak_psn;
	qp->s.rtt_tx_ns = 0; /* the NIC replays from s.una */
	return SENTRY_NACK;
}

/* A PSN before s.next in an episode: the NIC's replay, filtered. Under the lock. */
static __always_inline enum sentry_action sentry_data_replay(struct lh_qp *qp, __u32 psn, __u64 now,
							     __u32 *ack_psn)
{
	bool outside;

	/* a retransmission from the rewind point: the NIC took the NAK */
	if (psn_diff(psn, qp->s.rewind) <= 0)
		qp->flags &= ~LH_QPF_REWIND_PENDING;
	/*
	 * The replay moving on (the next PSN, or further) is progress for the
	 * watchdog: a go-back-0 NIC replays a whole message from its start,
	 * which may take longer than the watchdog; a restart is not.
	 */
	if (psn_diff(psn, qp->s.replay) >= 0)
		qp->last_progress_ns = now;
	qp->s.replay = psn_add(psn, 1);
	if (sentry_is_missing(qp, psn, &outside) || (outside && psn_diff(psn, qp->s.base) >= 0)) {
		sentry_clear_missing(qp, psn);
		return SENTRY_SR_PASS;
	}
	/*
	 * A go-back-0 NIC restarts the whole message and counts its window from
	 * there: dropping the replay of what the receiver ACKed would stall it
	 * until its timer. Its peer's ACK, said again as the replay goes, moves
	 * it on to the lost PSN.
	 */
	if (psn_diff(psn, qp->s.una) < 0 && sentry_echo_due(qp, psn, now, ack_psn))
		return SENTRY_ACK_ECHO;
	/* held by the Depot, or delivered already (before s.base) */
	return SENTRY_SR_DROP;
}

/*
 * A PSN before s.next with no NAK of ours: the NIC's timer, which makes it
 * ignore NAKs until an ACK; or the rest of a replay that the receiver's ACKs
 * ended (a slow NIC still replaying what they covered), which does not: taken
 * for a timer, it would hold back the next Depot-NACK until an ACK that never
 * comes. Under the lock.
 */
static __always_inline enum sentry_action sentry_data_retx(struct lh_qp *qp, __u32 psn, __u64 now,
							   __u32 *ack_psn)
{
	bool tail = psn == qp->s.replay && now - qp->last_rx_ns < LH_REPLAY_GAP_NS;

	if (!tail && !(qp->flags & LH_QPF_NIC_RETRY)) {
		qp->flags |= LH_QPF_NIC_RETRY;
		qp->s.retry_psn = psn;
	}
	qp->s.replay = psn_add(psn, 1);
	if (!tail)
		sentry_rtt_hole(qp, psn);
	/* s.una is the receiver's only once an ACK or Depot-NACK said so */
	if (!(qp->flags & LH_QPF_S_SYNCED) || psn_diff(psn, qp->s.una) >= 0)
		return SENTRY_RETX_PASS;
	/*
	 * Not a loss: the NIC was told already (an ACK, or a NAK beyond it) that
	 * the receiver has this PSN; the ACK was lost, or a go-back-0 NIC resends
	 * a whole message after a tail loss. On the WAN it is useless, and a
	 * periodic loss would meet the same PSN of each whole resend (a
	 * livelock): the receiver would only ACK it again, so the Sentry says
	 * that ACK (sentry_echo_due) and drops the rest. From s.una on, the
	 * resend passes.
	 */
	return sentry_echo_due(qp, psn, now, ack_psn) ? SENTRY_ACK_ECHO : SENTRY_ACKED_DROP;
}

/*
 * What a data packet from the DC means for its QP, as rxe's check_psn() for
 * a responder: in order, ahead (a loss in the sender's DC), the NIC's replay
 * in an episode, or a retransmission of its own. Under the lock; psn_out is
 * the PSN of the NAK or ACK to build, *timer_end set when an episode ended
 * on the NIC's timer.
 */
static __always_inline enum sentry_action sentry_data_decide(struct lh_qp *qp,
							     const struct lh_parsed *p, __u64 now,
							     __u32 *psn_out, bool *timer_end)
{
	__s32 d = psn_diff(p->psn, qp->s.next);

	if (d == 0)
		return sentry_data_next(qp, p, now);
	if (d > 0)
		return sentry_data_ahead(qp, p->psn, now, psn_out);
	if ((qp->flags & LH_QPF_EPISODE) && !(*timer_end = sentry_timer_restart(qp, p->psn, now)))
		return sentry_data_replay(qp, p->psn, now, psn_out);
	return sentry_data_retx(qp, p->psn, now, psn_out);
}

/* The verdict on a data packet from the DC, and what goes with it (a NAK, an ACK, a copy) */
static __always_inline int sentry_data_verdict(struct xdp_md *ctx, const struct lh_parsed *p,
					       struct lh_qp *qp, const struct lh_config *cfg,
					       struct lh_stats *st, enum sentry_action act,
					       __u32 psn_out)
{
	switch (act) {
	case SENTRY_PASS_NEW:
		lh_count(st, LH_STAT_SENTRY_IN_ORDER);
		if (cfg->flags & LH_CFG_GATEWAY)
			sentry_gw_keep(ctx, p, qp, cfg->flags, st);
		return XDP_PASS;
	case SENTRY_NACK:
		if (lh_xdp_make_nak(ctx, p, qp->peer_qpn, psn_out, qp->msn, 0)) {
			lh_count(st, LH_STAT_NAK_BUILD_FAIL);
			return XDP_PASS;
		}
		lh_count(st, LH_STAT_SENTRY_NACK);
		return XDP_PASS; /* the kernel routes the NAK back to the sender */
	case SENTRY_GAP_DROP:
		return lh_drop(st, LH_STAT_SENTRY_GAP_DROP);
	case SENTRY_UNPAIRED:
		lh_count(st, LH_STAT_SENTRY_UNPAIRED);
		return XDP_PASS;
	case SENTRY_JUMP:
		lh_count(st, LH_STAT_SENTRY_JUMP);
		return XDP_PASS;
	case SENTRY_SR_PASS:
		lh_count(st, LH_STAT_SENTRY_SR_PASS);
		sentry_cache(ctx, p, qp, true, st);
		return XDP_PASS;
	case SENTRY_SR_DROP:
		/*
		 * A copy of what we drop too: the Depot says it holds or will
		 * hold it, but a loss it has not seen yet (in flight when it
		 * reported) would need the NIC to rewind once more, which it
		 * does only after an ACK. With the copy, we re-send it ourselves.
		 * Not of what the receiver acknowledged: a go-back-0 replay is
		 * mostly that, and its copies would take the whole pool for
		 * nothing.
		 */
		if (psn_diff(p->psn, READ_ONCE(qp->s.una)) >= 0)
			sentry_cache(ctx, p, qp, false, st);
		return lh_drop(st, LH_STAT_SENTRY_SR_DROP);
	case SENTRY_ACKED_DROP:
		return lh_drop(st, LH_STAT_SENTRY_ACKED_DROP);
	case SENTRY_ACK_ECHO:
		if (lh_xdp_make_ack(ctx, p, qp->peer_qpn, psn_out, qp->msn))
			return lh_drop(st, LH_STAT_NAK_BUILD_FAIL);
		lh_count(st, LH_STAT_SENTRY_ACK_ECHO);
		return XDP_PASS; /* the kernel routes the ACK back to the sender */
	default:
		lh_count(st, LH_STAT_SENTRY_RETX_PASS);
		return XDP_PASS;
	}
}

static __always_inline int sentry_xdp_data_do(struct xdp_md *ctx, const struct lh_parsed *p,
					      const struct lh_config *cfg, struct lh_stats *st)
{
	__u32 psn = p->psn, psn_out = 0;
	enum sentry_action act;
	struct lh_qp_key key;
	__u64 watchdog_ns;
	struct lh_qp *qp;
	bool busy, fired, timer_end = false;
	__u64 now;

	lh_key_of(&key, p);
	qp = bpf_map_lookup_elem(&lh_qp, &key);
	if (!qp) {
		lh_qp_learn(p, LH_QPF_SENTRY);
		return XDP_PASS; /* the first packet of a QP is in order by definition */
	}
	if (!(qp->flags & LH_QPF_SENTRY))
		return XDP_PASS;
	now = bpf_ktime_get_ns();
	if (!(READ_ONCE(qp->flags) & LH_QPF_PAIRED))
		lh_pair_note(qp, &key, psn, now, st);
	if (lh_qp_stale(qp, &key, psn_diff(psn, READ_ONCE(qp->s.next)), now, st))
		return XDP_PASS;
	lh_qp_paired(qp, &key);
	/* only a QP in a recovery can be stuck */
	busy = READ_ONCE(qp->flags) & LH_QPF_SENTRY_BUSY;
	watchdog_ns = busy ? sentry_watchdog_ns(qp, cfg) : 0;

	bpf_spin_lock(&qp->lock);
	fired = sentry_watchdog_fire(qp, now, watchdog_ns);
	act = sentry_data_decide(qp, p, now, &psn_out, &timer_end);
	qp->last_rx_ns = now;
	bpf_spin_unlock(&qp->lock);
	lh_trace("LHD %u %x %u", psn, (act << 16) | qp->flags, qp->s.next);
	lh_trace("LHD2 %u %u", qp->s.una, qp->s.replay, 0);
	if (fired)
		lh_count(st, LH_STAT_SENTRY_WATCHDOG);
	if (timer_end)
		lh_count(st, LH_STAT_SENTRY_EPISODE_TIMER);
	return sentry_data_verdict(ctx, p, qp, cfg, st, act, psn_out);
}

#endif /* LH_BPF_SENTRY_DATA_H */
