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
 * The release and replay runs loop in bpf_loop() callbacks (5.17+). A
 * bounded loop is walked by the verifier iteration by iteration, LH_BURST
 * times its body (an emit, with all its branches): that ran lh_dc_out (6.1)
 * and lh_dc_kick (6.1 and 6.12, both runs in one program) past the
 * verifier's 1M instructions. A callback's body is checked as one function,
 * whatever the count (lh_dc_kick: about 145k instructions on 6.1 and 6.12).
 * The verifier inlines bpf_loop with a constant callback and flags 0 (6.0+):
 * a direct call per iteration, no helper. What the iterations share lives
 * in a context struct on the caller's stack.
 */
struct depot_back_ctx {
	struct lh_qp *qp;
	struct lh_ring *ring;
	struct lh_stats *st;
};

/* Free ring position i: a backup copy, or a held packet */
static long depot_back_step(__u64 i, void *data)
{
	struct depot_back_ctx *c = data;
	struct lh_ring_ent *e = &c->ring->ent[i & LH_RING_MASK];
	__u32 idx = LH_NO_SLOT, state;

	bpf_spin_lock(&c->qp->lock);
	state = LH_TAG_STATE(e->tag);
	if (state == LH_SLOT_BACKUP || state == LH_SLOT_HELD) {
		idx = e->slot;
		e->tag = 0;
		e->slot = LH_NO_SLOT;
	}
	bpf_spin_unlock(&c->qp->lock);
	if (idx != LH_NO_SLOT) {
		bpf_map_push_elem(&lh_pool_free, &idx, 0);
		lh_count(c->st, state == LH_SLOT_BACKUP ? LH_STAT_DEPOT_BACKUP_FREED
							: LH_STAT_DEPOT_BACK_UNHELD);
	}
	return 0;
}

/*
 * The receiving NIC NAKed psn, before d.deliv, and no backup answered it: it
 * does not have what the Depot delivered from there. A go-back-0 responder
 * that met a gap (a packet the Depot let through: ring or pool full, a QP
 * learned anew) drops its partial message, PSNs it ACKed too, and NAKs the
 * message's first PSN. The NAK goes on to the sender, which resends all
 * from there; the Depot starts again from the NIC's point (d.deliv = d.high
 * = psn, its ring emptied) so that it holds the gaps of that resend. Left
 * ahead, it took the resend for duplicates and passed it with its gaps,
 * each met the NIC, which dropped the message again: go-back-0 at 1/256,
 * the livelock of the NICs alone (gateway recovery, 8 QPs of 4 MB: 3 runs
 * in 100). Moved back but keeping what it held past the gap, its ring,
 * taken by those (209 over 1888 PSNs), let the resend's gaps through as
 * busy: as many runs livelocked. Its NACKs and reports then claim only
 * what the NIC has.
 */
static __always_inline void depot_nic_back(struct lh_qp *qp, struct lh_ring *ring, __u32 psn,
					   struct lh_stats *st)
{
	struct depot_back_ctx c = {.qp = qp, .ring = ring, .st = st};
	bool moved = false, due = false;
	__s32 d;

	bpf_spin_lock(&qp->lock);
	d = psn_diff(qp->d.deliv, psn);
	/*
	 * Only before what it ACKed: it went back, surely (its NAK and ACKs
	 * come the same way, in order). A NAK from its ACK point on may be
	 * one it sent before the PSN came (the Depot let a packet through
	 * out of order: no slot), which it has now: the Depot moved back
	 * there waited for a PSN the sender never sent again (a pool far too
	 * small, 40-lr2 #15: a livelock).
	 */
	if (!(d > 0 && d < LH_QP_STALE_BACK && psn_diff(qp->d.acked, psn) > 0)) {
		/* nothing to follow */
	} else if (qp->flags & LH_QPF_RELEASING) {
		/*
		 * A release run is emitting slots of this ring (agent kicks
		 * continue it): emptying the ring now could free a slot the
		 * run is about to send, and another QP's packet would take
		 * it. The run ends, then the Depot follows (depot_release_run).
		 * Dropped, the NIC's NAK came once: the Depot stayed ahead,
		 * took the resend for duplicates and passed its gaps
		 * (40-lr2 #14, 1 CI run in about 30).
		 */
		if (!(qp->flags & LH_QPF_D_BACK_DUE) || psn_diff(qp->d.back_psn, psn) > 0)
			qp->d.back_psn = psn;
		qp->flags |= LH_QPF_D_BACK_DUE;
		due = true;
	} else {
		/* where it was, or where it went back from before if that is later */
		if (!(qp->flags & LH_QPF_D_BACK) || psn_diff(qp->d.high, qp->d.back_end) > 0)
			qp->d.back_end = qp->d.high;
		qp->flags |= LH_QPF_D_BACK;
		qp->d.deliv = psn;
		qp->d.high = psn;
		qp->d.acked = psn;
		if (psn_diff(qp->d.unsafe_end, psn) > 0)
			qp->d.unsafe_end = psn;
		if (psn_diff(qp->d.nacked_psn, psn) > 0)
			qp->d.nacked_psn = psn;
		moved = true;
	}
	bpf_spin_unlock(&qp->lock);
	if (due)
		lh_count(st, LH_STAT_DEPOT_NIC_BACK_DUE);
	if (!moved)
		return;
	/*
	 * After the move: a packet in between finds its position still taken
	 * and passes (ring busy), as one on its way would anyway.
	 */
	bpf_loop(LH_RING_SIZE, depot_back_step, &c, 0);
	lh_count(st, LH_STAT_DEPOT_NIC_BACK);
}

struct depot_release_ctx {
	struct __sk_buff *skb;
	struct lh_qp *qp;
	struct lh_ring *ring;
	struct lh_stats *st;
	__u64 now;
	__u32 l2;
	__u32 ifindex;
	__u32 prev; /* slot taken by the previous step: emitted by this one */
	__u32 n; /* packets emitted */
	bool v6;
	bool done; /* the run ended: nothing held at d.deliv */
};

/*
 * One packet of a release run: take the held packet at d.deliv (now a
 * backup) and emit the one taken before it. Each packet goes out when the
 * next one is known, so that the last of the batch can carry AckReq (see
 * lh_skb_set_ackreq). Returns 1 (stop) at the end of the run.
 */
static long depot_release_step(__u64 i __attribute__((unused)), void *data)
{
	struct depot_release_ctx *c = data;
	struct lh_qp *qp = c->qp;
	__u32 idx = LH_NO_SLOT, x;
	struct lh_ring_ent *e;
	bool done = false;

	bpf_spin_lock(&qp->lock);
	x = qp->d.deliv;
	e = &c->ring->ent[x & LH_RING_MASK];
	if ((qp->flags & LH_QPF_RELEASING) && e->tag == LH_TAG(LH_SLOT_HELD, x)) {
		e->tag = LH_TAG(LH_SLOT_BACKUP, x);
		idx = e->slot;
		lh_depot_delivered(qp, x);
		qp->last_progress_ns = c->now;
	} else {
		done = true;
	}
	bpf_spin_unlock(&qp->lock);
	if (done) {
		c->done = true;
		return 1;
	}
	if (c->prev != LH_NO_SLOT) {
		if (lh_emit_slot(c->skb, c->prev, c->l2, c->ifindex, c->v6, false))
			lh_count(c->st, LH_STAT_EMIT_FAIL); /* stays backup: the NIC NAKs it back */
		else
			c->n++;
	}
	c->prev = idx;
	return 0;
}

/*
 * Emit the held run from d.deliv, at most LH_BURST packets; clears
 * RELEASING when the run ends, after its last packet went out. Returns the
 * number emitted.
 */
static __always_inline __u32 depot_release_run(struct __sk_buff *skb, struct lh_qp *qp,
					       struct lh_ring *ring, __u32 l2, __u32 ifindex,
					       struct lh_qp_key *key, struct lh_stats *st)
{
	struct depot_release_ctx c = {
		.skb = skb,
		.qp = qp,
		.ring = ring,
		.st = st,
		.now = bpf_ktime_get_ns(),
		.l2 = l2,
		.ifindex = ifindex,
		.prev = LH_NO_SLOT,
		.v6 = qp->flags & LH_QPF_IPV6,
	};
	bool done, back = false;
	__u32 back_psn = 0;

	bpf_loop(LH_BURST, depot_release_step, &c, 0);
	if (c.prev != LH_NO_SLOT) {
		if (lh_emit_slot(skb, c.prev, l2, ifindex, c.v6, true))
			lh_count(st, LH_STAT_EMIT_FAIL);
		else
			c.n++;
	}
	/*
	 * The run ends only now that its last packet is out: until then a
	 * packet arriving in order (XDP on another CPU) is held behind it, not
	 * passed ahead of it. One that was held meanwhile continues the run.
	 */
	done = c.done;
	if (done) {
		struct lh_ring_ent *e;
		__u32 x;

		bpf_spin_lock(&qp->lock);
		x = qp->d.deliv;
		e = &ring->ent[x & LH_RING_MASK];
		if ((qp->flags & LH_QPF_RELEASING) && e->tag == LH_TAG(LH_SLOT_HELD, x)) {
			done = false;
		} else {
			qp->flags &= ~LH_QPF_RELEASING;
			if (qp->flags & LH_QPF_D_BACK_DUE) {
				qp->flags &= ~LH_QPF_D_BACK_DUE;
				back = true;
				back_psn = qp->d.back_psn;
			}
		}
		bpf_spin_unlock(&qp->lock);
	}
	lh_count_n(st, LH_STAT_DEPOT_RELEASED, c.n);
	/* the NIC went back during the run: the Depot follows it now */
	if (back) {
		depot_nic_back(qp, ring, back_psn, st);
		return c.n;
	}
	if (!done) {
		lh_count(st, LH_STAT_DEPOT_RELEASE_MORE);
		lh_event(LH_EV_RELEASE_MORE, key, qp->d.deliv, 0);
	} else if (qp->d.deliv != qp->d.high) {
		/* the run stopped at the next hole: tell the sender side now */
		lh_event(LH_EV_GAP, key, qp->d.deliv, 0);
	}
	return c.n;
}

struct depot_replay_ctx {
	struct __sk_buff *skb;
	struct lh_qp *qp;
	struct lh_ring *ring;
	struct lh_stats *st;
	__u32 psn; /* the NAK's: the first PSN to replay */
	__u32 l2;
	__u32 ifindex;
	__u32 n; /* packets emitted */
	bool v6;
	bool swapped; /* the skb's MACs turned toward the NIC */
	bool more; /* a backup after the last one emitted is due too */
	bool stopped; /* the run ended before LH_BURST */
};

/* Replay PSN psn + i from its backup copy; returns 1 (stop) after the last one */
static long depot_replay_step(__u64 i, void *data)
{
	struct depot_replay_ctx *c = data;
	__u32 x = psn_add(c->psn, (__u32)i), idx = LH_NO_SLOT;
	struct lh_ring_ent *e = &c->ring->ent[x & LH_RING_MASK];
	struct lh_qp *qp = c->qp;
	__u8 macs[12];

	bpf_spin_lock(&qp->lock);
	if (psn_diff(x, qp->d.deliv) < 0 && psn_diff(x, qp->d.acked) >= 0 &&
	    e->tag == LH_TAG(LH_SLOT_BACKUP, x))
		idx = e->slot;
	c->more = psn_diff(psn_add(x, 1), qp->d.deliv) < 0;
	bpf_spin_unlock(&qp->lock);
	if (idx == LH_NO_SLOT)
		goto stop;
	if (!c->swapped) {
		/* the NAK came from the NIC: send the replay back to it */
		if (bpf_skb_load_bytes(c->skb, 0, macs, 12))
			goto stop;
		bpf_skb_store_bytes(c->skb, 0, macs + 6, 6, 0);
		bpf_skb_store_bytes(c->skb, 6, macs, 6, 0);
		c->swapped = true;
	}
	if (lh_emit_slot(c->skb, idx, c->l2, c->ifindex, c->v6, false)) {
		lh_count(c->st, LH_STAT_EMIT_FAIL);
		goto stop;
	}
	c->n++;
	lh_count(c->st, LH_STAT_DEPOT_REPLAYED);
	if (c->more)
		return 0;
stop:
	c->stopped = true;
	return 1;
}

/*
 * Replay [psn, d.deliv) from the backup pool toward the NIC, at most LH_BURST
 * packets. The skb's link header is the NAK's, so the MACs are swapped first.
 * Returns the number emitted (0: nothing to answer with, NAK untouched).
 */
static __always_inline __u32 depot_replay(struct __sk_buff *skb, struct lh_qp *qp,
					  struct lh_ring *ring, __u32 psn, __u32 l2, __u32 ifindex,
					  struct lh_qp_key *key, struct lh_stats *st)
{
	struct depot_replay_ctx c = {
		.skb = skb,
		.qp = qp,
		.ring = ring,
		.st = st,
		.psn = psn,
		.l2 = l2,
		.ifindex = ifindex,
		.v6 = qp->flags & LH_QPF_IPV6,
	};

	/* what is timed may be in this replay: its ACK would measure the replay (Karn) */
	qp->d.rtt_ns = 0;
	bpf_loop(LH_BURST, depot_replay_step, &c, 0);
	if (c.n && c.more && !c.stopped) {
		lh_count(st, LH_STAT_DEPOT_RELEASE_MORE);
		lh_event(LH_EV_RELEASE_MORE, key, psn_add(psn, LH_BURST), 1);
	}
	return c.n;
}

/*
 * Free the backup slots of [from, from + n). A bounded loop, not bpf_loop:
 * it runs once per packet the NIC acknowledges, where a callback's call and
 * context loads cost ~7 ns a slot (measured: 1480 ns instead of 1370 for an
 * ACK freeing 16); its body is small enough for the verifier to walk
 * LH_RING_SIZE times (lh_dc_in: about 130k instructions on 6.1).
 */
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
	if (!qp) {
		/*
		 * Only a positive ACK pairs (a NAK's PSN may never have come
		 * this way): a NAK sent before the QP's first ACK goes on to
		 * the sending NIC, as with no gateway on the path
		 */
		if (p->syndrome == AETH_NAK_PSN_SEQ_ERROR)
			lh_count(st, LH_STAT_DEPOT_NAK_UNPAIRED);
		return TC_ACT_OK;
	}
	if ((qp->flags & (LH_QPF_DEPOT | LH_QPF_STALE)) != LH_QPF_DEPOT)
		return TC_ACT_OK;
	ring_idx = qp->ring;
	ring = bpf_map_lookup_elem(&lh_ring, &ring_idx);
	if (!ring)
		return TC_ACT_OK;

	if ((p->syndrome & AETH_TYPE_MASK) == AETH_TYPE_ACK) {
		__u32 upto = psn_add(psn, 1); /* an ACK covers its own PSN */
		bool ahead, lost = false;

		__u64 now = bpf_ktime_get_ns();

		bpf_spin_lock(&qp->lock);
		qp->msn = p->msn;
		ahead = psn_diff(upto, qp->d.deliv) > 0;
		/*
		 * The NIC has more than the Depot gave it. After the Depot
		 * followed a NIC that went back (LH_QPF_D_BACK), that NIC had
		 * them after all: not behind any more. Otherwise PSNs reached
		 * the NIC past the Depot's accounting (a kept data path that
		 * let packets pass while no agent had it), or the ACK is
		 * forged: either way the Depot's ePSN is not the NIC's, and it
		 * would hold what comes next, NACK what the receiver has (the
		 * Sentry refuses that as stale), and the QP would wait for
		 * good (paced agent restarts: QP errors with NICs of 6
		 * retries). Not for a QP learned mid-flight whose ePSN is a
		 * guess (LH_QPF_D_UNSURE). It passes from here (stale) and the
		 * agent forgets it; learned anew, it is wide and unsure.
		 */
		if (ahead && !(qp->flags & (LH_QPF_D_BACK | LH_QPF_D_UNSURE))) {
			qp->flags |= LH_QPF_STALE;
			lost = true;
		}
		if (ahead)
			qp->flags &= ~LH_QPF_D_BACK;
		if (psn_diff(upto, qp->d.acked) > 0 && !ahead) {
			from = qp->d.acked;
			n = psn_diff(upto, qp->d.acked);
			qp->d.acked = upto;
			/* the NIC has the first PSN this Depot saw: its ePSN holds from here */
			qp->flags &= ~LH_QPF_D_UNSURE;
		}
		/* the round trip into the DC (--dc-timeout's estimate) */
		if (qp->d.rtt_ns && psn_diff(upto, qp->d.rtt_psn) > 0) {
			lh_rtt_sample(&qp->d.srtt_us, &qp->d.rttvar_us,
				      now > qp->d.rtt_ns ? (__u32)((now - qp->d.rtt_ns) / 1000) : 0);
			qp->d.rtt_ns = 0;
		}
		bpf_spin_unlock(&qp->lock);
		lh_count(st, LH_STAT_DEPOT_ACK);
		if (ahead)
			lh_count(st, LH_STAT_DEPOT_ACK_AHEAD);
		if (lost) {
			lh_count(st, LH_STAT_DEPOT_LOST_TRACK);
			lh_wide_window(now);
			lh_event(LH_EV_QP_STALE, &dkey, upto, 0);
		}
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
		depot_nic_back(qp, ring, psn, st);
	}
	return TC_ACT_OK;
}

#endif /* LH_BPF_DEPOT_TC_H */
