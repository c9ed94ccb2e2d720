/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The Sentry's model of a QP's sending NIC (sentry.h): the missing-PSN bitmap
 * and episodes, the NIC's timer and replay, echoed ACKs, round-trip and
 * stay timing, the bounds an ACK or report must keep, and gateway copies.
 */
#ifndef LH_BPF_SENTRY_STATE_H
#define LH_BPF_SENTRY_STATE_H

#include "lh_proto.h"
#include "nak.h"
#include "pool.h"
#include "qp.h"

/* An echoed ACK per QP after this many ~microseconds (ktime >> 10) ... */
#define LH_ECHO_GAP_US 200
/* ... or this many PSNs of a replay (sentry_echo_due) */
#define LH_ECHO_EVERY 32

/*
 * A retransmission that continues the NIC's replay (the PSN after the last
 * one replayed) with the NIC sending all along (its previous packet less
 * than this ago) is the tail of a replay the receiver's ACKs overtook, not
 * a timer retry: a timer fires only after the NIC sent nothing for its
 * timeout (rxe: 4.096 us x 2^t, 67 ms at its default t = 14).
 */
#define LH_REPLAY_GAP_NS 2000000ULL

/*
 * The watchdog of a QP's recovery: the configured time, or this many of the
 * QP's round-trip timeouts (as the Sentry measures them) when that is longer.
 * A receiver slowed down by load answers everything late, recoveries too:
 * given up after a fixed time, each would let the NIC's whole go-back-N
 * replay through as duplicates and slow it down further, until every QP
 * times out (64 QPs on 2 cores give up recoveries by the thousand).
 */
#define LH_WATCHDOG_RTOS 4
/*
 * ... and doubled for each recovery of the QP it gave up since the last one
 * the receiver's ACK ended, at most this many times: a recovery that keeps
 * getting stuck is a receiver that keeps being slow, not a state gone wrong
 * (that one the first watchdog clears)
 */
#define LH_WATCHDOG_BACKOFF_MAX 4

/* Missing-PSN bitmap (s.missing from s.base) */
static __always_inline bool sentry_is_missing(const struct lh_qp *qp, __u32 psn, bool *outside)
{
	__s32 off = psn_diff(psn, qp->s.base);

	*outside = off < 0 || off >= LH_SR_WORDS * 64;
	if (*outside)
		return false;
	return qp->s.missing[((__u32)off >> 6) & (LH_SR_WORDS - 1)] & (1ULL << (off & 63));
}

static __always_inline void sentry_clear_missing(struct lh_qp *qp, __u32 psn)
{
	__s32 off = psn_diff(psn, qp->s.base);

	if (off >= 0 && off < LH_SR_WORDS * 64)
		qp->s.missing[((__u32)off >> 6) & (LH_SR_WORDS - 1)] &= ~(1ULL << (off & 63));
}

static __always_inline bool sentry_mark_missing(struct lh_qp *qp, __u32 psn)
{
	__s32 off = psn_diff(psn, qp->s.base);

	if (off < 0 || off >= LH_SR_WORDS * 64)
		return false;
	qp->s.missing[((__u32)off >> 6) & (LH_SR_WORDS - 1)] |= 1ULL << (off & 63);
	return true;
}

static __always_inline void sentry_clear_bitmap(struct lh_qp *qp)
{
	qp->s.missing[0] = 0;
	qp->s.missing[1] = 0;
	qp->s.missing[2] = 0;
	qp->s.missing[3] = 0;
}

static __always_inline void sentry_episode_stop(struct lh_qp *qp)
{
	qp->flags &= ~(LH_QPF_EPISODE | LH_QPF_REWIND_PENDING | LH_QPF_NAK_DEFERRED);
	sentry_clear_bitmap(qp);
}

/*
 * In an episode, the NIC resends from the receiver's ACK point again with no
 * NAK of ours pending, its replay having gone further, and nothing from
 * there on is missing: its timer, because the ACK that ends the episode was lost (the
 * receiver has it all, the Depot holds or delivered the rest). Dropped as
 * held, the resends would never bring that ACK again: the NIC times out for
 * good (1024 QPs, 1 %: a QP stuck until lhperf gave up, every run). The
 * episode ends and the resend passes; the receiver ACKs it again. Under the
 * lock; true when it ended the episode.
 */
/*
 * Whether a PSN from s.una on is marked missing. A mark before it is stale:
 * the receiver ACKed that PSN since (our own re-send of a copy brought it),
 * and counted, it kept the episode below from ending for good (64 QPs at
 * 1 %: the tail of a message lost, the NIC's timer resends dropped as held
 * until lhperf gave up, 1 run in 20). Under the lock.
 */
/* Bits [0, n) of a 256-bit map, word w */
static __always_inline __u64 lh_bits_below(__u32 n, __u32 w)
{
	__u32 lo = w * 64;

	if (n <= lo)
		return 0;
	if (n - lo >= 64)
		return ~0ULL;
	return (1ULL << (n - lo)) - 1;
}

static __always_inline bool sentry_missing_from_una(const struct lh_qp *qp)
{
	__s32 off = psn_diff(qp->s.una, qp->s.base);
	__u32 n = off > 0 ? (__u32)off : 0;

	if (off >= LH_SR_WORDS * 64)
		return false;
	return (qp->s.missing[0] & ~lh_bits_below(n, 0)) |
	       (qp->s.missing[1] & ~lh_bits_below(n, 1)) |
	       (qp->s.missing[2] & ~lh_bits_below(n, 2)) |
	       (qp->s.missing[3] & ~lh_bits_below(n, 3));
}

static __always_inline bool sentry_timer_restart(struct lh_qp *qp, __u32 psn, __u64 now)
{
	/*
	 * ... or, whatever the Sentry believes the receiver has, the NIC resends
	 * after a silence longer than a replay ever pauses (LH_REPLAY_GAP_NS),
	 * not continuing its replay and not from a NAK of ours it has yet to
	 * take: only its timer does that (a NIC blocked on its window goes on
	 * with new PSNs, or with the replay a NAK asked for). Not scaled by the
	 * QP's round trip: the Sentry's estimate grows with its recoveries (tens
	 * of ms at 1 % here, 517 ms seen during restarts) past the NIC's timer.
	 * The filter's premise failed (a Depot gone with what it held, a NAK
	 * that the NIC ignored while its ACK point moved on by the receiver's
	 * own NAKs): kept, it dropped every timer resend as held, the receiver
	 * saw nothing and said nothing, and the NIC spent its retries until
	 * the QP failed. So a timer retry costs the NIC what it would without
	 * longhaul: one of its retries.
	 */
	if ((qp->flags & LH_QPF_REWIND_PENDING) && psn_diff(psn, qp->s.rewind) <= 0)
		return false; /* the replay our NAK asked for (a go-back-0 NIC's from further back)
			       */
	/*
	 * Not the replay going on (the PSN after the last one resent); a
	 * replay that never came (a NAK the NIC ignored) leaves s.replay
	 * behind s.una, and the first timer resend is one too
	 */
	if (psn == qp->s.replay)
		return false;
	if (!(now > qp->last_rx_ns && now - qp->last_rx_ns > LH_REPLAY_GAP_NS) &&
	    ((qp->flags & LH_QPF_REWIND_PENDING) || psn != qp->s.una ||
	     sentry_missing_from_una(qp)))
		return false;
	sentry_episode_stop(qp);
	return true;
}

/*
 * Whether a resend of an acknowledged PSN is answered with an ACK (under the
 * lock), and *ack_psn the PSN it acknowledges: LH_ECHO_EVERY - 1 past the
 * resent one, or s.una - 1 if that is nearer (the receiver's ACK covers
 * both). Not s.una - 1 at once: the NIC's timer restarts only when its ACK
 * point moves, and a NIC that goes on resending from where it was (rxe
 * does, and a go-back-0 NIC from the first PSN of the message) must get
 * through the whole replay before its timer fires. A replay of thousands
 * of PSNs by a NIC that shares its CPU (8 go-back-0 QPs of 4 MB here) takes
 * longer than rxe's 67 ms: each timeout restarted it from the message's
 * start, a livelock. ACKs that keep ahead of the replay keep the timer away
 * while it moves. Due on the first resend after LH_ECHO_GAP_US, on a replay
 * begun anew (before the last echo), and every LH_ECHO_EVERY PSNs of it:
 * fewer than the NIC's window (rxe: 128), or a fast NIC would wait on its
 * window until the timer. A short resend (a lost ACK) is answered whole.
 */
static __always_inline bool sentry_echo_due(struct lh_qp *qp, __u32 psn, __u64 now, __u32 *ack_psn)
{
	__u32 us = (__u32)(now >> 10);
	__s32 d = psn_diff(psn, qp->s.echo_psn);
	__u32 last = psn_add(qp->s.una, ROCE_PSN_MASK), ahead = psn_add(psn, LH_ECHO_EVERY - 1);

	if (us - qp->s.echo_us <= LH_ECHO_GAP_US && d >= 0 && d < LH_ECHO_EVERY)
		return false;
	qp->s.echo_us = us;
	qp->s.echo_psn = psn;
	*ack_psn = psn_diff(ahead, last) < 0 ? ahead : last;
	return true;
}

/*
 * Round trip (lh_qp s_rtt_*): a new request with AckReq, when nothing is
 * timed and no recovery is under way, is timed from here; its ACK ends the
 * sample. A hole at or before the timed PSN (a Depot-NACK, a NAK, the NIC's
 * own retry) delays that ACK by a recovery: the sample is dropped (Karn).
 * Not the QP's first, though: at 1 % loss half the first messages of 64
 * packets see a loss, and a QP with no round trip keeps the gateway
 * recovery's copies unbounded (the agent's gw_bound); too long is the safe
 * side, and later samples correct it. Only AckReq PSNs: the responder ACKs
 * those at once, any other waits for the end of its message (64 packets
 * on rxe). Under the lock.
 */
static __always_inline void sentry_rtt_start(struct lh_qp *qp, const struct lh_parsed *p, __u64 now)
{
	if (p->ackreq && !qp->s.rtt_tx_ns &&
	    (!(qp->flags & LH_QPF_SENTRY_BUSY) || !qp->s.srtt_us)) {
		qp->s.rtt_psn = p->psn;
		qp->s.rtt_tx_ns = now;
	}
}

static __always_inline void sentry_rtt_hole(struct lh_qp *qp, __u32 hole_psn)
{
	if (qp->s.rtt_tx_ns && qp->s.srtt_us && psn_diff(hole_psn, qp->s.rtt_psn) <= 0)
		qp->s.rtt_tx_ns = 0;
}

/*
 * How long a copy stays (s_stay_*): a new PSN timed when none is, to the ACK
 * that covers it, whatever happened meanwhile. Under the lock.
 */
static __always_inline void sentry_stay_start(struct lh_qp *qp, __u32 psn, __u64 now)
{
	if (!qp->s.stay_tx_ns) {
		qp->s.stay_psn = psn;
		qp->s.stay_tx_ns = now;
	}
}

static __always_inline void sentry_stay_ack(struct lh_qp *qp, __u32 upto, __u64 now)
{
	if (!qp->s.stay_tx_ns || psn_diff(upto, qp->s.stay_psn) <= 0)
		return;
	qp->s.stay_us = now > qp->s.stay_tx_ns ? (__u32)((now - qp->s.stay_tx_ns) / 1000) : 1;
	qp->s.stay_tx_ns = 0;
}

/* An ACK of every PSN before upto: the sample */
static __always_inline void sentry_rtt_ack(struct lh_qp *qp, __u32 upto, __u64 now)
{
	if (!qp->s.rtt_tx_ns || psn_diff(upto, qp->s.rtt_psn) <= 0)
		return;
	lh_rtt_sample(&qp->s.srtt_us, &qp->s.rttvar_us,
		      now > qp->s.rtt_tx_ns ? (__u32)((now - qp->s.rtt_tx_ns) / 1000) : 0);
	qp->s.rtt_tx_ns = 0;
	qp->s.rtt_samples++;
}

/* Whether psn is before the receiver's own highest ACK point (s.acked, once known) */
static __always_inline bool sentry_before_acked(const struct lh_qp *qp, __u32 psn)
{
	return (qp->flags & LH_QPF_S_ACKED) && psn_diff(psn, qp->s.acked) < 0;
}

enum sentry_bound {
	SENTRY_IN_WINDOW,
	SENTRY_UNSENT, /* names PSNs the Sentry never forwarded */
	SENTRY_STALE, /* before the receiver's ACK point, or overtaken by a newer one */
};

/*
 * Whether an ACK, NAK or Depot-NACK (AETH syndrome syn, BTH byte 4 b4, PSN
 * psn, Depot-NACK range len) names only what this Sentry forwarded. An ACK
 * of psn says the receiver has psn; a NAK names the PSN the receiver expects
 * next, at most s.next; a Depot-NACK's missing range [psn, psn + len) lies
 * before a PSN the Depot received. Anything beyond is forged, or data that
 * reached the receiver without crossing this gateway: the NIC judges it
 * (it ignores an ACK of PSNs it never sent), the QP is left as it was. A
 * Depot-NACK before the receiver's own ACK point says less than that ACK
 * did (reordered on the WAN). Under the lock.
 */
static __always_inline enum sentry_bound sentry_ack_bound(const struct lh_qp *qp, __u8 syn, __u8 b4,
							  __u32 psn, __u32 len)
{
	bool dnack = syn == AETH_NAK_PSN_SEQ_ERROR && (b4 & LH_DNACK_MARK);
	__s32 ahead;

	if ((syn & AETH_TYPE_MASK) == AETH_TYPE_ACK)
		ahead = psn_diff(psn_add(psn, 1), qp->s.next);
	else if (dnack)
		ahead = psn_diff(psn_add(psn, len), qp->s.next);
	else
		ahead = psn_diff(psn, qp->s.next);
	if (ahead > 0)
		return SENTRY_UNSENT;
	if (dnack && sentry_before_acked(qp, psn))
		return SENTRY_STALE;
	return SENTRY_IN_WINDOW;
}

/*
 * The receiver has every PSN before upto (an ACK, or a Depot-NACK's PSN):
 * s.una moves there. Until the first such statement s.una is only the first
 * PSN seen (LH_QPF_S_SYNCED clear), so the first one sets it, behind the
 * guess too (a QP learned mid-flight), unless it is from another connection
 * (as far behind as lh_qp_stale() says). Returns whether s.una moved on.
 * Under the lock.
 */
static __always_inline bool sentry_una_set(struct lh_qp *qp, __u32 upto)
{
	__s32 d = psn_diff(upto, qp->s.una);

	if (!(qp->flags & LH_QPF_S_SYNCED)) {
		if (d <= -LH_QP_STALE_BACK)
			return false;
		qp->flags |= LH_QPF_S_SYNCED;
		qp->s.una = upto;
		return d > 0;
	}
	if (d <= 0)
		return false;
	qp->s.una = upto;
	return true;
}

/*
 * Whether a Depot report of [epsn, epsn + n) with seq may be taken in:
 * ePSN_D beyond the last PSN sent is forged (SENTRY_UNSENT). An older report
 * overtaken by a newer one on the WAN says less (SENTRY_STALE); a later
 * ePSN is newer whatever the seq, so one report with a forged seq holds the
 * Depot's own off only while its ePSN stands still. So is one whose ePSN
 * the receiver's ACKs passed already: the Depot's agent read the QP before
 * that ACK went by, and sent the report after it. Under the lock.
 */
static __always_inline enum sentry_bound sentry_report_bound(const struct lh_qp *qp, __u32 epsn,
							     __u32 n, __u32 seq)
{
	if (psn_diff(psn_add(epsn, n), qp->s.next) > 0)
		return SENTRY_UNSENT;
	if (!lh_report_seq_newer(seq, qp->s.report_seq) && psn_diff(epsn, qp->s.report_epsn) <= 0)
		return SENTRY_STALE;
	if (sentry_before_acked(qp, epsn))
		return SENTRY_STALE;
	return SENTRY_IN_WINDOW;
}

/*
 * Keep a copy of a packet in the QP's ring (CACHED); passed says it is a
 * re-send going out now (so a report that still calls it missing may cross
 * it). Returns whether the copy was kept.
 */
static __always_inline bool sentry_cache(struct xdp_md *ctx, const struct lh_parsed *p,
					 struct lh_qp *qp, bool passed, struct lh_stats *st)
{
	struct lh_ring *ring = lh_qp_ring(qp);
	__u32 idx, old = LH_NO_SLOT, psn = p->psn;
	struct lh_ring_ent *e;

	if (!ring)
		return false;
	idx = lh_pool_store(ctx, p, qp->ring, st);
	if (idx == LH_NO_SLOT)
		return false;
	if (passed) {
		struct lh_slot *slot = bpf_map_lookup_elem(&lh_pool, &idx);

		if (slot)
			slot->sent_ms = lh_now_ms();
	}
	e = &ring->ent[psn & LH_RING_MASK];
	bpf_spin_lock(&qp->lock);
	if (LH_TAG_STATE(e->tag) == LH_SLOT_CACHED)
		old = e->slot; /* an older copy at this position: replace it */
	else if (LH_TAG_STATE(e->tag) != LH_SLOT_FREE)
		old = idx, idx = LH_NO_SLOT; /* position busy: no copy this time */
	if (idx != LH_NO_SLOT) {
		e->slot = idx;
		e->tag = LH_TAG(LH_SLOT_CACHED, psn);
	}
	bpf_spin_unlock(&qp->lock);
	lh_slot_free(old);
	if (idx == LH_NO_SLOT)
		return false;
	lh_count(st, LH_STAT_SENTRY_CACHED);
	return true;
}

/*
 * Gateway recovery: keep a copy of a new packet toward the WAN. When none
 * can be kept the QP recovers the LR2 way until all it sent is ACKed.
 */
static __always_inline void sentry_gw_keep(struct xdp_md *ctx, const struct lh_parsed *p,
					   struct lh_qp *qp, __u32 cfg_flags, struct lh_stats *st)
{
	if (READ_ONCE(qp->flags) & LH_QPF_GW_OFF)
		return;
	if (!(cfg_flags & LH_CFG_GW_FULL) && sentry_cache(ctx, p, qp, false, st))
		return;
	bpf_spin_lock(&qp->lock);
	qp->flags |= LH_QPF_GW_OFF;
	bpf_spin_unlock(&qp->lock);
	lh_count(st, LH_STAT_SENTRY_GW_FALLBACK);
}

struct sentry_uncache_ctx {
	struct lh_qp *qp;
	struct lh_ring *ring;
	struct lh_stats *st;
	__u32 upto;
};

static long sentry_uncache_one(__u64 i, void *data)
{
	struct sentry_uncache_ctx *c = data;
	struct lh_ring_ent *e = &c->ring->ent[i & LH_RING_MASK];
	__u32 idx = LH_NO_SLOT;

	bpf_spin_lock(&c->qp->lock);
	if (LH_TAG_STATE(e->tag) == LH_SLOT_CACHED && psn_diff(LH_TAG_PSN(e->tag), c->upto) < 0) {
		idx = e->slot;
		e->tag = 0;
		e->slot = LH_NO_SLOT;
	}
	bpf_spin_unlock(&c->qp->lock);
	if (idx != LH_NO_SLOT) {
		lh_slot_free(idx);
		lh_count(c->st, LH_STAT_SENTRY_UNCACHED);
	}
	return 0;
}

/*
 * Free the cached copies of PSNs before upto (the far NIC acknowledged them).
 * bpf_loop: the verifier checks the callback once, not 256 times.
 */
static __always_inline void sentry_uncache(struct lh_qp *qp, __u32 upto, struct lh_stats *st)
{
	struct sentry_uncache_ctx c = {.qp = qp, .st = st, .upto = upto};
	__u32 ring_idx = qp->ring;

	if (ring_idx == LH_NO_SLOT)
		return;
	c.ring = bpf_map_lookup_elem(&lh_ring, &ring_idx);
	if (c.ring)
		bpf_loop(LH_RING_SIZE, sentry_uncache_one, &c, 0);
}

/* Data from the sending NIC (DC ingress); cfg is the gateway's lh_config */

#endif /* LH_BPF_SENTRY_STATE_H */
