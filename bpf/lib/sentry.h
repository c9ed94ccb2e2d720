/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Sentry, the sender-side half of LR2 (docs/design.md).
 *
 * It keeps a model of the sending NIC (rxe's rules): a NAK implicitly
 * acknowledges every PSN before its own, and after a rewind the NIC ignores
 * NAKs until an ACK from its rewind point on comes. So the Sentry never
 * passes a NAK that would be ignored (it would also push the NIC's
 * acknowledged point past ACKs still on their way, which then no longer end
 * the retry): it owes it instead, and the agent sends it when the ACK passes.
 *
 * Data from the DC (XDP on the DC interface), per QP:
 *  - the next new PSN passes; a PSN beyond it (loss inside the sender's DC)
 *    becomes a Sentry-NACK at once: PSN = what the receiver acknowledged
 *    (never more: that is all a NAK may acknowledge), so the NIC goes back
 *    there and the filter drops what already crossed; later ones are dropped
 *    until the NIC resends;
 *  - during a recovery episode a retransmission passes only when the Depot
 *    reported it missing (the SR filter); the Sentry keeps a copy of every
 *    packet of the replay, passed or dropped, and re-sends one itself when a
 *    Depot report names it missing again; outside an episode everything
 *    passes (a timeout retransmission), except what the NIC was told the
 *    receiver has (before s.una): that is answered with the ACK again.
 * From the WAN (XDP on the WAN interface):
 *  - a Depot-NACK (PSN = the receiver's ePSN) records the first hole and goes
 *    on to the NIC as the plain NAK it is (mark cleared) when the NIC will
 *    take it; a Depot report (lh_proto.h) gives the exact missing set, and
 *    copies due again are re-sent by the TC program on the WAN interface;
 *  - a plain NAK from the far NIC ends filtering; ACKs free cached copies,
 *    end the NIC's retry and an episode they cover.
 * Gateway recovery (LH_CFG_GATEWAY, --recovery gateway): every new packet
 * toward the WAN leaves a copy in the QP's ring until the far NIC ACKs it;
 * a Depot-NACK for a PSN with a copy goes no further (the NIC never sees a
 * NAK for WAN loss) and a report naming such PSNs goes to the agent, which
 * re-sends them from the copies at a preset rate, with no window. A QP that
 * gets no copy (pool empty, or the copies of all QPs over rate x RTT: the
 * agent's LH_CFG_GW_FULL) falls back to the LR2 way (LH_QPF_GW_OFF) until
 * all it sent is acknowledged.
 */
#ifndef LH_BPF_SENTRY_H
#define LH_BPF_SENTRY_H

#include "lh_proto.h"
#include "nak.h"
#include "pool.h"
#include "qp.h"

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
 * replay through as duplicates and slow it down further (64 QPs on 2 cores:
 * 1428 watchdogs and 2045 NIC timeouts in a run that collapsed).
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
	return (qp->s.missing[0] & ~lh_bits_below(n, 0)) | (qp->s.missing[1] & ~lh_bits_below(n, 1)) |
	       (qp->s.missing[2] & ~lh_bits_below(n, 2)) | (qp->s.missing[3] & ~lh_bits_below(n, 3));
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
		return false; /* the replay our NAK asked for (a go-back-0 NIC's from further back) */
	/*
	 * Not the replay going on (the PSN after the last one resent); a
	 * replay that never came (a NAK the NIC ignored) leaves s.replay
	 * behind s.una, and the first timer resend is one too
	 */
	if (psn == qp->s.replay)
		return false;
	if (!(now > qp->last_rx_ns && now - qp->last_rx_ns > LH_REPLAY_GAP_NS) &&
	    ((qp->flags & LH_QPF_REWIND_PENDING) || psn != qp->s.una || sentry_missing_from_una(qp)))
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
	struct sentry_uncache_ctx c = { .qp = qp, .st = st, .upto = upto };
	__u32 ring_idx = qp->ring;

	if (ring_idx == LH_NO_SLOT)
		return;
	c.ring = bpf_map_lookup_elem(&lh_ring, &ring_idx);
	if (c.ring)
		bpf_loop(LH_RING_SIZE, sentry_uncache_one, &c, 0);
}

/* Data from the sending NIC (DC ingress); cfg is the gateway's lh_config */
static __always_inline int sentry_xdp_data_do(struct xdp_md *ctx, const struct lh_parsed *p,
					 const struct lh_config *cfg, struct lh_stats *st)
{
	__u32 psn = p->psn, nak_psn = 0;
	enum sentry_action act;
	struct lh_qp_key key;
	__u64 watchdog_ns;
	struct lh_qp *qp;
	bool outside, busy, timer_end = false;
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
	if (!(READ_ONCE(qp->flags) & LH_QPF_PAIRED))
		lh_pair_note(qp, &key, psn, now, st);
	if (lh_qp_stale(qp, &key, psn_diff(psn, READ_ONCE(qp->s.next)), now, st))
		return XDP_PASS;
	lh_qp_paired(qp, &key);
	/* only a QP in a recovery can be stuck */
	busy = READ_ONCE(qp->flags) & LH_QPF_SENTRY_BUSY;
	watchdog_ns = 0;
	if (busy && cfg->watchdog_ms) {
		watchdog_ns = (__u64)cfg->watchdog_ms * 1000000;
		/* --nic-timeout: a bound as it is; else scaled by the QP's round trip, doubled */
		if (!(cfg->flags & LH_CFG_WD_BOUND)) {
			__u64 rtos_ns = (__u64)LH_WATCHDOG_RTOS * 1000 *
					lh_rto_us(READ_ONCE(qp->s.srtt_us),
						  READ_ONCE(qp->s.rttvar_us));
			__u32 fired = READ_ONCE(qp->s.wd_fired);

			if (rtos_ns > watchdog_ns)
				watchdog_ns = rtos_ns;
			watchdog_ns <<= fired < LH_WATCHDOG_BACKOFF_MAX ? fired :
								     LH_WATCHDOG_BACKOFF_MAX;
		}
	}

	bpf_spin_lock(&qp->lock);
	/*
	 * Whatever went wrong (a NAK or an ACK lost where nobody sees it, a
	 * pairing mistaken), a recovery that has not moved the receiver's ACK
	 * point for the watchdog time ends here: the NIC's own go-back-N and
	 * timer take over, with nothing filtered.
	 */
	if (watchdog_ns && (qp->flags & LH_QPF_SENTRY_BUSY) && now > qp->last_progress_ns &&
	    now - qp->last_progress_ns > watchdog_ns) {
		sentry_episode_stop(qp);
		qp->flags &= ~(LH_QPF_SNAK_SENT | LH_QPF_NIC_RETRY);
		qp->last_progress_ns = now;
		qp->s.rtt_tx_ns = 0;
		qp->s.wd_fired++;
		qp->flags |= LH_QPF_S_JUMP; /* what the NIC sends next is its own doing */
		watchdog_ns = 0; /* says it fired */
	}
	d = psn_diff(psn, qp->s.next);
	if (d == 0) {
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
		act = SENTRY_PASS_NEW;
	} else if (d > 0) {
		if (qp->flags & LH_QPF_S_JUMP) {
			/* the NIC was told of PSNs past s.next (LH_QPF_S_JUMP): no gap of ours */
			qp->flags &= ~(LH_QPF_S_JUMP | LH_QPF_SNAK_SENT);
			qp->s.next = psn_add(psn, 1);
			qp->s.tx_ns = now;
			act = SENTRY_JUMP;
		} else if ((qp->flags & (LH_QPF_PAIRED | LH_QPF_S_SYNCED)) !=
			   (LH_QPF_PAIRED | LH_QPF_S_SYNCED)) {
			/*
			 * No NAK possible before the first ACK (no requester QPN,
			 * and no receiver's point to NAK from: a NAK acknowledges
			 * what precedes it): the gap goes over the WAN and the
			 * Depot recovers it as a WAN loss (it holds and NACKs once
			 * paired). For the filter, all of it was sent.
			 */
			qp->s.next = psn_add(psn, 1);
			act = SENTRY_UNPAIRED;
		} else if ((qp->flags & (LH_QPF_SNAK_SENT | LH_QPF_NIC_RETRY))) {
			/* NAKed already, or the NIC is replaying: the replay brings s.next */
			act = SENTRY_GAP_DROP;
		} else {
			/*
			 * Back to what the receiver acknowledged: a NAK acknowledges
			 * every PSN before its own, and only the receiver may do that
			 * for what crossed the WAN. The filter drops the replay up to
			 * the gap (keeping copies) and passes the rest.
			 */
			qp->flags |= LH_QPF_SNAK_SENT | LH_QPF_NIC_RETRY | LH_QPF_EPISODE |
				     LH_QPF_REWIND_PENDING;
			nak_psn = qp->s.una;
			qp->s.retry_psn = nak_psn;
			qp->s.rewind = nak_psn;
			qp->s.replay = nak_psn;
			qp->s.end = qp->s.next;
			sentry_clear_bitmap(qp);
			qp->s.base = nak_psn;
			qp->s.rtt_tx_ns = 0; /* the NIC replays from s.una */
			act = SENTRY_NACK;
		}
	} else if ((qp->flags & LH_QPF_EPISODE) && !(timer_end = sentry_timer_restart(qp, psn, now))) {
		/* a retransmission from the rewind point: the NIC took the NAK */
		if (psn_diff(psn, qp->s.rewind) <= 0)
			qp->flags &= ~LH_QPF_REWIND_PENDING;
		/*
		 * The replay moving on (the next PSN, or further) is progress for
		 * the watchdog: a go-back-0 NIC replays a whole message from its
		 * start, which may take longer than the watchdog; a restart is not.
		 */
		if (psn_diff(psn, qp->s.replay) >= 0)
			qp->last_progress_ns = now;
		qp->s.replay = psn_add(psn, 1);
		if (sentry_is_missing(qp, psn, &outside) || (outside && psn_diff(psn, qp->s.base) >= 0)) {
			sentry_clear_missing(qp, psn);
			act = SENTRY_SR_PASS;
		} else if (psn_diff(psn, qp->s.una) < 0 && sentry_echo_due(qp, psn, now, &nak_psn)) {
			/*
			 * A go-back-0 NIC restarts the whole message and counts
			 * its window from there: dropping the replay of what the
			 * receiver ACKed would stall it until its timer. Its
			 * peer's ACK, said again as the replay goes, moves it
			 * on to the lost PSN.
			 */
			act = SENTRY_ACK_ECHO;
		} else {
			/* held by the Depot, or delivered already (before s.base) */
			act = SENTRY_SR_DROP;
		}
	} else {
		/*
		 * A retransmission with no NAK of ours: the NIC's timer, which
		 * makes it ignore NAKs until an ACK; or the rest of a replay that
		 * the receiver's ACKs ended (a slow NIC still replaying what
		 * they covered), which does not: taken for a timer, it would
		 * hold back the next Depot-NACK until an ACK that never comes.
		 */
		bool tail = psn == qp->s.replay && now - qp->last_rx_ns < LH_REPLAY_GAP_NS;

		if (!tail && !(qp->flags & LH_QPF_NIC_RETRY)) {
			qp->flags |= LH_QPF_NIC_RETRY;
			qp->s.retry_psn = psn;
		}
		qp->s.replay = psn_add(psn, 1);
		if (!tail)
			sentry_rtt_hole(qp, psn);
		act = SENTRY_RETX_PASS;
		/* s.una is the receiver's only once an ACK or Depot-NACK said so */
		if ((qp->flags & LH_QPF_S_SYNCED) && psn_diff(psn, qp->s.una) < 0) {
			/*
			 * Not a loss: the NIC was told already (an ACK, or a NAK
			 * beyond it) that the receiver has this PSN; the ACK was
			 * lost, or a go-back-0 NIC resends a whole message after
			 * a tail loss. On the WAN it is useless, and a periodic
			 * loss would meet the same PSN of each whole resend (a
			 * livelock): the receiver would only ACK it again, so the
			 * Sentry says that ACK (sentry_echo_due) and drops the
			 * rest. From s.una on, the resend passes.
			 */
			act = sentry_echo_due(qp, psn, now, &nak_psn) ? SENTRY_ACK_ECHO :
								    SENTRY_ACKED_DROP;
		}
	}
	qp->last_rx_ns = now;
	bpf_spin_unlock(&qp->lock);
	lh_trace("LHD %u %x %u", psn, (act << 16) | qp->flags, qp->s.next);
	lh_trace("LHD2 %u %u", qp->s.una, qp->s.replay, 0);
	if (busy && !watchdog_ns && cfg->watchdog_ms)
		lh_count(st, LH_STAT_SENTRY_WATCHDOG);
	if (timer_end)
		lh_count(st, LH_STAT_SENTRY_EPISODE_TIMER);

	switch (act) {
	case SENTRY_PASS_NEW:
		lh_count(st, LH_STAT_SENTRY_IN_ORDER);
		if (cfg->flags & LH_CFG_GATEWAY)
			sentry_gw_keep(ctx, p, qp, cfg->flags, st);
		return XDP_PASS;
	case SENTRY_NACK:
		if (lh_xdp_make_nak(ctx, p, qp->peer_qpn, nak_psn, qp->msn, 0)) {
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
		 * mostly that, and its copies took the whole pool (870k
		 * pool_empty in a run of 8 QPs) for nothing.
		 */
		if (psn_diff(psn, READ_ONCE(qp->s.una)) >= 0)
			sentry_cache(ctx, p, qp, false, st);
		return lh_drop(st, LH_STAT_SENTRY_SR_DROP);
	case SENTRY_ACKED_DROP:
		return lh_drop(st, LH_STAT_SENTRY_ACKED_DROP);
	case SENTRY_ACK_ECHO:
		if (lh_xdp_make_ack(ctx, p, qp->peer_qpn, nak_psn, qp->msn))
			return lh_drop(st, LH_STAT_NAK_BUILD_FAIL);
		lh_count(st, LH_STAT_SENTRY_ACK_ECHO);
		return XDP_PASS; /* the kernel routes the ACK back to the sender */
	default:
		lh_count(st, LH_STAT_SENTRY_RETX_PASS);
		return XDP_PASS;
	}
}

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

/* ACK, NAK or Depot-NACK from the WAN toward the sending NIC */
static __always_inline int sentry_xdp_ack_do(struct xdp_md *ctx, const struct lh_parsed *p,
					 struct lh_stats *st)
{
	enum sentry_ack_action act = SENTRY_ACK_PASS;
	__u32 psn = p->psn, len, i, upto = 0, freed_upto = 0, ring_idx = LH_NO_SLOT;
	__u32 resend = LH_NO_SLOT;
	struct lh_ring *ring = NULL;
	enum sentry_bound bound;
	struct lh_qp_key ack_key, dkey;
	bool cached = false, resumed = false, back = false;
	__u8 syn = p->syndrome, b4 = p->byte4;
	__u32 owed = 0;
	struct lh_qp *qp;
	__u64 now = bpf_ktime_get_ns();

	qp = lh_qp_of_ack(p, &ack_key, &dkey, st);
	if (!qp || (qp->flags & (LH_QPF_SENTRY | LH_QPF_STALE)) != LH_QPF_SENTRY)
		return XDP_PASS;
	/* paired now (this ACK may be what paired it): the agent's NAKs need the peer */
	lh_qp_paired(qp, &dkey);
	len = (b4 & LH_DNACK_LEN_MASK) + 1;
	if (b4 & LH_DNACK_MARK) {
		ring_idx = qp->ring;
		if (ring_idx != LH_NO_SLOT)
			ring = bpf_map_lookup_elem(&lh_ring, &ring_idx);
		/* racy without the lock, and only a hint: is psn among our copies */
		cached = ring && ring->ent[psn & LH_RING_MASK].tag == LH_TAG(LH_SLOT_CACHED, psn);
	}

	bpf_spin_lock(&qp->lock);
	bound = sentry_ack_bound(qp, syn, b4, psn, len);
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
	if ((syn & AETH_TYPE_MASK) == AETH_TYPE_ACK) {
		upto = psn_add(psn, 1);
		if (!sentry_before_acked(qp, psn))
			qp->s.acked = upto; /* the highest ACK point: never back */
		qp->flags |= LH_QPF_S_ACKED;
		if (sentry_una_set(qp, upto)) {
			qp->last_progress_ns = now;
			/* copies to free: only when the ACK point moved (below) */
			freed_upto = upto;
		}
		/*
		 * The receiver has the rewind point: a replay from it is moot.
		 * A NIC that ignored the NAK (in a retry of its own the Sentry
		 * did not see: a QP learned mid-flight) never sends it, and the
		 * episode, waiting on it, dropped its timer resends as held
		 * until the NIC gave up (a soak of agent restarts, 2026-11-27).
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
					owed = qp->s.deferred;
					qp->flags |= LH_QPF_NIC_RETRY | LH_QPF_REWIND_PENDING;
					qp->s.retry_psn = owed;
					qp->s.rewind = owed;
					qp->s.replay = owed;
					qp->s.end = qp->s.next;
				}
			}
		}
		if ((qp->flags & LH_QPF_EPISODE) && psn_diff(upto, qp->s.end) >= 0 &&
		    !(qp->flags & LH_QPF_NAK_DEFERRED) && !owed) {
			sentry_episode_stop(qp);
			qp->s.wd_fired = 0; /* a recovery the receiver's ACK ended */
			act = SENTRY_ACK_END;
		}
		/* gateway recovery: all acknowledged, nothing owed, copies again */
		if ((qp->flags & LH_QPF_GW_OFF) && qp->s.una == qp->s.next &&
		    !(qp->flags & LH_QPF_SENTRY_BUSY)) {
			qp->flags &= ~LH_QPF_GW_OFF;
			resumed = true;
		}
	} else if (syn == AETH_NAK_PSN_SEQ_ERROR && (b4 & LH_DNACK_MARK)) {
		/*
		 * psn is the receiver's ePSN: everything before it is delivered,
		 * [psn, psn + len) is missing.
		 */
		if (!(qp->flags & LH_QPF_EPISODE) || psn != qp->s.base) {
			sentry_clear_bitmap(qp);
			qp->s.base = psn;
		}
		/*
		 * Whichever way it is answered below, the episode lasts until
		 * what the NIC sent by now is acknowledged or sent anew. Left
		 * as it was (0 on a new QP), an episode begun on a cached PSN
		 * or during a NIC retry never ended for PSNs 2^23 past it: the
		 * filter dropped the NIC's timer resends for good (1024 QPs,
		 * 1 %: QPs stuck until lhperf gave up, 2 runs of 4).
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
			act = SENTRY_ACK_ABSORB; /* our copy goes back out, below or on the report */
			/* in gateway recovery, not fallen back to LR2's way (GW_OFF) */
			if (ring && !(qp->flags & LH_QPF_GW_OFF) &&
			    ring->ent[psn & LH_RING_MASK].tag == LH_TAG(LH_SLOT_CACHED, psn))
				resend = ring->ent[psn & LH_RING_MASK].slot;
		} else if (qp->flags & LH_QPF_NIC_RETRY) {
			/* the NIC would ignore it: owe it until the ACK that ends the retry */
			qp->flags |= LH_QPF_NAK_DEFERRED;
			qp->s.deferred = psn;
			act = SENTRY_ACK_ABSORB;
		} else {
			qp->flags |= LH_QPF_NIC_RETRY | LH_QPF_REWIND_PENDING;
			qp->s.retry_psn = psn;
			qp->s.rewind = psn;
			qp->s.replay = psn;
			qp->s.end = qp->s.next;
			act = SENTRY_ACK_FORWARD;
		}
	} else if ((syn & AETH_TYPE_MASK) != AETH_TYPE_ACK) {
		/* the far NIC's NAK, RNR NAK included: that PSN comes again */
		sentry_rtt_hole(qp, psn);
	}
	if (syn == AETH_NAK_PSN_SEQ_ERROR && !(b4 & LH_DNACK_MARK)) {
		/* the far NIC's own NAK: it goes on; the receiver needs everything again */
		if (qp->flags & LH_QPF_EPISODE) {
			sentry_episode_stop(qp);
			act = SENTRY_ACK_CANCEL;
		}
		/*
		 * ... from its PSN: a go-back-0 responder that met a gap drops the
		 * partial message, PSNs it ACKed too, and NAKs the message's
		 * first PSN. Its ACK point went back: kept where it was, the
		 * filter dropped the resend of that message as acknowledged
		 * and echoed ACKs the responder no longer stood by (16 go-back-0
		 * QPs, a receiver too slow for its socket buffer: a livelock
		 * the NICs alone did not have). Backwards only: it makes the
		 * filter pass more, never less.
		 */
		if (psn_diff(psn, qp->s.una) < 0) {
			qp->s.una = psn;
			back = true;
		}
		if (!(qp->flags & LH_QPF_NIC_RETRY)) {
			qp->flags |= LH_QPF_NIC_RETRY;
			qp->s.retry_psn = psn;
		}
	}
	bpf_spin_unlock(&qp->lock);
	lh_trace("LHA %u %x %x", psn, (syn << 24) | (b4 << 16) | (act << 12) | qp->flags, qp->s.una);
	if (owed)
		lh_event(LH_EV_NAK_DUE, &dkey, owed, 0);
	/*
	 * Not on every ACK: a receiver flooded with duplicates ACKs each one at
	 * the same PSN (440k in a 64-QP run that collapsed), and each sweep of
	 * the ring is 256 locked steps. Copies made since at PSNs already ACKed
	 * go with the next ACK that moves the point.
	 */
	if (freed_upto)
		sentry_uncache(qp, freed_upto, st);
	if (resumed)
		lh_count(st, LH_STAT_SENTRY_GW_RESUME);
	if (back)
		lh_count(st, LH_STAT_SENTRY_NAK_BACK);

	switch (act) {
	case SENTRY_ACK_FORWARD: {
		/* byte 4 is outside the ICRC: clearing the mark keeps the NAK valid */
		__u8 clean = b4 & ~(LH_DNACK_MARK | LH_DNACK_LEN_MASK);
		__u8 csum[2];

		bpf_xdp_store_bytes(ctx, p->bth_off + BTH_BYTE4_OFF, &clean, 1);
		/*
		 * ... but the UDP checksum covers it (always over IPv6): RFC 1624,
		 * HC' = ~(~HC + ~m + m'). Byte 4 is the high byte of a 16-bit word
		 * of the UDP datagram (the BTH starts 8 bytes in). 0 means none (IPv4).
		 */
		if (!bpf_xdp_load_bytes(ctx, p->l4_off + 6, csum, 2) && (csum[0] | csum[1])) {
			__u32 sum = (~((__u32)csum[0] << 8 | csum[1]) & 0xffff) +
				    (~((__u32)b4 << 8) & 0xffff) + ((__u32)clean << 8);

			sum = (sum & 0xffff) + (sum >> 16);
			sum = (sum & 0xffff) + (sum >> 16);
			sum = ~sum & 0xffff;
			if (!sum)
				sum = 0xffff;
			csum[0] = (__u8)(sum >> 8);
			csum[1] = (__u8)sum;
			bpf_xdp_store_bytes(ctx, p->l4_off + 6, csum, 2);
		}
		lh_count(st, LH_STAT_SENTRY_DNACK_FORWARD);
		return XDP_PASS;
	}
	case SENTRY_ACK_ABSORB:
		lh_count(st, LH_STAT_SENTRY_DNACK_ABSORB);
		if (resend != LH_NO_SLOT && sentry_dnack_resend(ctx, ring_idx, resend, psn)) {
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

/* The report's held bits, word w (bit i of the report = bit i % 64 of word i / 64) */
static __always_inline __u64 lh_report_word(const struct lh_report *r, __u32 w)
{
	__u64 v = 0;
	int b;

	for (b = 7; b >= 0; b--)
		v = v << 8 | r->held[(w * 8 + b) & 31];
	return v;
}

/*
 * With a report key (LH_CFG_REPORT_MAC): the reason report r is refused,
 * or 0 when its tag (the 8 bytes after it) is the one the key gives
 * (lh_report_mac). A report signed by no one or another key changes nothing.
 */
static __always_inline __u32 sentry_report_refused(struct xdp_md *ctx, const struct lh_parsed *p,
						   const struct lh_report *r)
{
	const struct lh_config *cfg = lh_config_get();
	__u8 tag[LH_REPORT_MAC_LEN];

	if (!cfg || !(cfg->flags & LH_CFG_REPORT_MAC))
		return 0;
	if (!(r->flags & bpf_htons(LH_REPORT_F_MAC)) ||
	    p->udp_len < 8 + sizeof(*r) + LH_REPORT_MAC_LEN ||
	    bpf_xdp_load_bytes(ctx, p->l4_off + 8 + sizeof(*r), tag, sizeof(tag)))
		return LH_STAT_SENTRY_REPORT_NOMAC;
	if (lh_sip_le(tag, 8) != lh_report_mac(cfg->report_key, p->saddr, p->daddr, r))
		return LH_STAT_SENTRY_REPORT_MAC;
	return 0;
}

/*
 * An unpaired QP (a Sentry that started afresh, learning its QPs mid-flight,
 * while its Depot kept their pairing; or QPs whose PSN ranges overlap, which
 * no ACK tells apart) paired from a report of its Depot: it names the data
 * QPN and the requester's, which is what an ACK's PSN only suggests. Taken only
 * while no other QP is paired with that requester QPN (lh_ack, BPF_NOEXIST).
 * Until paired, each Depot-NACK goes on to the NIC as it is, a NAK that a
 * NIC counts against its retry budget (rxe: every NAK sequence error).
 */
__noinline int sentry_report_pair(const struct lh_parsed *p, const struct lh_qp_key *key, __u32 peer)
{
	struct lh_ack_key ack;
	struct lh_qp_key k;

	if (!p || !key)
		return -1;
	/* on the stack: 6.1's helpers take no argument memory as a map key or value */
	k = *key;
	/* the ACK direction: from the responder (the report's source) to the requester */
	__builtin_memcpy(ack.saddr, p->saddr, 16);
	__builtin_memcpy(ack.daddr, p->daddr, 16);
	ack.dqpn = peer;
	if (bpf_map_update_elem(&lh_ack, &ack, &k, BPF_NOEXIST))
		return -1;
	if (bpf_map_update_elem(&lh_pair, &k, &peer, BPF_ANY)) {
		bpf_map_delete_elem(&lh_ack, &ack);
		return -2;
	}
	return 0;
}

static __always_inline void sentry_pair_from_report(struct lh_qp *qp, const struct lh_qp_key *key,
						    const struct lh_parsed *p, __u32 peer,
						    struct lh_stats *st)
{
	int err;

	/* paired already, or by the agent (lh_pair) and not yet copied in */
	if (!peer || lh_qp_paired(qp, key))
		return;
	err = sentry_report_pair(p, key, peer);
	if (err) {
		if (err == -1)
			lh_count(st, LH_STAT_PAIR_REPORT_CLASH);
		return;
	}
	bpf_spin_lock(&qp->lock);
	qp->peer_qpn = peer;
	/* the list's next pass drops it (paired) */
	qp->flags = (qp->flags | LH_QPF_PAIRED) & ~LH_QPF_LISTED;
	bpf_spin_unlock(&qp->lock);
	lh_count(st, LH_STAT_PAIR_REPORT);
}

/*
 * A Depot report: the exact missing set. Rebuilds the bitmap from it (word
 * operations, no per-PSN loop) and returns XDP_PASS when the NIC has sent
 * some of the missing PSNs already, so that the TC program on the WAN
 * interface looks for copies to re-send and consumes the report; else
 * XDP_DROP. (With gateway recovery the TC program hands them to the agent.)
 */
static __always_inline int sentry_xdp_report_do(struct xdp_md *ctx, const struct lh_parsed *p,
					 struct lh_stats *st)
{
	struct lh_report r;
	struct lh_qp_key key;
	struct lh_qp *qp;
	enum sentry_bound bound;
	__u32 epsn, n, sent_off, seq, refused;
	__u64 due, now;
	__s32 d;

	if (p->udp_len < 8 + sizeof(r) || bpf_xdp_load_bytes(ctx, p->l4_off + 8, &r, sizeof(r)) ||
	    !lh_report_valid(&r, p->udp_len - 8)) {
		lh_count(st, LH_STAT_SENTRY_REPORT_BAD);
		return XDP_PASS; /* not ours after all: the host may want it */
	}
	/* from the responder to the requester: the data key is the reverse */
	__builtin_memcpy(key.saddr, p->daddr, 16);
	__builtin_memcpy(key.daddr, p->saddr, 16);
	key.dqpn = bpf_ntohl(r.dqpn) & ROCE_QPN_MASK;
	qp = bpf_map_lookup_elem(&lh_qp, &key);
	if (!qp || !(qp->flags & LH_QPF_SENTRY)) {
		lh_count(st, LH_STAT_SENTRY_REPORT_UNKNOWN);
		return XDP_PASS;
	}
	refused = sentry_report_refused(ctx, p, &r);
	if (refused)
		return lh_drop(st, (enum lh_stat)refused);
	epsn = bpf_ntohl(r.epsn) & ROCE_PSN_MASK;
	n = bpf_ntohs(r.nbits);
	if (n > LH_REPORT_BITS) /* checked by lh_report_valid; the verifier wants it here */
		return XDP_PASS;
	seq = bpf_ntohl(r.seq);
	now = (r.flags & bpf_htons(LH_REPORT_F_SACK)) ? bpf_ktime_get_ns() : 0;
	bpf_spin_lock(&qp->lock);
	bound = sentry_report_bound(qp, epsn, n, seq);
	if (bound != SENTRY_IN_WINDOW) {
		bpf_spin_unlock(&qp->lock);
		return lh_drop(st, bound == SENTRY_UNSENT ? LH_STAT_SENTRY_REPORT_UNSENT :
							     LH_STAT_SENTRY_REPORT_STALE);
	}
	if (seq)
		qp->s.report_seq = seq;
	qp->s.report_epsn = epsn;
	if (now) {
		/* a T/C-SACK report, for the agent's silence rule (no report within 2T) */
		qp->s.sack_ns = now;
		qp->s.sack_epsn = epsn;
	}
	qp->s.base = epsn;
	/* computed here, not before the lock: sentry_xdp_report() has no stack to spare */
	qp->s.missing[0] = ~lh_report_word(&r, 0) & lh_bits_below(n, 0);
	qp->s.missing[1] = ~lh_report_word(&r, 1) & lh_bits_below(n, 1);
	qp->s.missing[2] = ~lh_report_word(&r, 2) & lh_bits_below(n, 2);
	qp->s.missing[3] = ~lh_report_word(&r, 3) & lh_bits_below(n, 3);
	/* missing PSNs the NIC has sent already: copies of them may be here */
	d = psn_diff(qp->s.next, epsn);
	sent_off = d < 0 ? 0 : (d > LH_REPORT_BITS ? LH_REPORT_BITS : (__u32)d);
	due = (qp->s.missing[0] & lh_bits_below(sent_off, 0)) |
	      (qp->s.missing[1] & lh_bits_below(sent_off, 1)) |
	      (qp->s.missing[2] & lh_bits_below(sent_off, 2)) |
	      (qp->s.missing[3] & lh_bits_below(sent_off, 3));
	bpf_spin_unlock(&qp->lock);
	lh_count(st, LH_STAT_SENTRY_REPORT);
	/* a report inside what was sent: its QPNs pair the QP if nothing did */
	sentry_pair_from_report(qp, &key, p, bpf_ntohl(r.peer_qpn) & ROCE_QPN_MASK, st);
	if (due)
		return XDP_PASS;
	lh_count(st, LH_STAT_DROP);
	return XDP_DROP;
}

/* Verified once as a global function (stack and verifier work of its own) */
__noinline int sentry_xdp_data(struct xdp_md *ctx, const struct lh_parsed *p,
			       const struct lh_config *cfg)
{
	if (!p || !cfg)
		return XDP_PASS;
	return sentry_xdp_data_do(ctx, p, cfg, lh_stats_get());
}

/* Verified once as a global function (stack and verifier work of its own) */
__noinline int sentry_xdp_ack(struct xdp_md *ctx, const struct lh_parsed *p)
{
	if (!p)
		return XDP_PASS;
	return sentry_xdp_ack_do(ctx, p, lh_stats_get());
}

/* Verified once as a global function (stack and verifier work of its own) */
__noinline int sentry_xdp_report(struct xdp_md *ctx, const struct lh_parsed *p)
{
	if (!p)
		return XDP_PASS;
	return sentry_xdp_report_do(ctx, p, lh_stats_get());
}

#endif /* LH_BPF_SENTRY_H */
