/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Pairing a data direction with its requester's QPN (docs/maps.md,
 * "Pairing"): the unpaired QPs of a host pair listed, each PSN they forwarded
 * indexed, an ACK matched to the one QP whose range holds its PSN.
 */
#ifndef LH_BPF_PAIR_H
#define LH_BPF_PAIR_H

#include "qp_base.h"

static __always_inline struct lh_pair_guard *lh_pair_guard_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&lh_pair_guard, &zero);
}

/*
 * A QP is missing from the lists (not learned, or not listed): its ACKs
 * could be taken for another QP's, so nothing pairs for LH_PAIR_GUARD_NS, and
 * QPs learned meanwhile may have sent before they were learned (wide).
 */
/* QPs learned from now on for LH_PAIR_GUARD_NS may have sent before (wide) */
static __always_inline void lh_wide_window(__u64 now)
{
	struct lh_pair_guard *g = lh_pair_guard_get();

	if (g && READ_ONCE(g->wide_until_ns) < now + LH_PAIR_GUARD_NS)
		WRITE_ONCE(g->wide_until_ns, now + LH_PAIR_GUARD_NS);
}

static __always_inline void lh_pair_block(__u64 now)
{
	struct lh_pair_guard *g = lh_pair_guard_get();

	if (!g)
		return;
	WRITE_ONCE(g->block_until_ns, now + LH_PAIR_GUARD_NS);
	lh_wide_window(now);
}

/* i as an index into a list, bounded where 6.1's verifier sees it (clang drops a plain mask) */
static __always_inline __u32 lh_hp_idx(__u32 i)
{
	asm volatile("" : "+r"(i));
	return i & (LH_HOSTPAIR_QPS - 1);
}

static __always_inline void lh_hostpair_key_of(struct lh_hostpair_key *hk, const struct lh_qp_key *k)
{
	__builtin_memcpy(hk->saddr, k->saddr, 16);
	__builtin_memcpy(hk->daddr, k->daddr, 16);
}

/*
 * Put an unpaired QP into its pair of hosts' list. An entry being deleted
 * (dead: its list emptied) takes no more: a new one does. Returns its place
 * in the list when listed, < 0 when not. A global function: the 16 KB entry
 * is built in a per-CPU map.
 */
__noinline int lh_hostpair_list(const struct lh_qp_key *k, __u32 wide)
{
	struct lh_hostpair_key hk;
	struct lh_hostpair *hp, *init;
	__u32 zero = 0, try;

	if (!k)
		return -1;
	lh_hostpair_key_of(&hk, k);
	for (try = 0; try < 4; try++) {
		int ret = -1;

		hp = bpf_map_lookup_elem(&lh_hostpair, &hk);
		if (!hp) {
			init = (struct lh_hostpair *)bpf_map_lookup_elem(&lh_hostpair_scratch, &zero);
			if (!init)
				return -1;
			init->n = 0;
			init->ver = 0;
			init->dead = 0;
			init->wide = 0;
			bpf_map_update_elem(&lh_hostpair, &hk, init, BPF_NOEXIST);
			continue;
		}
		bpf_spin_lock(&hp->lock);
		if (!hp->dead && hp->n < LH_HOSTPAIR_QPS) {
			ret = (int)lh_hp_idx(hp->n);
			hp->dqpn[ret] = k->dqpn;
			hp->n++;
			hp->ver++;
			if (wide)
				hp->wide = 1;
		} else if (!hp->dead) {
			ret = -2; /* full */
		}
		bpf_spin_unlock(&hp->lock);
		if (ret != -1)
			return ret;
	}
	return -1;
}

/* List qp (unpaired, not listed) for pairing; when it cannot be, pairing waits */
static __always_inline void lh_pair_list(struct lh_qp *qp, const struct lh_qp_key *k, __u64 now,
					 struct lh_stats *st)
{
	int idx = lh_hostpair_list(k, READ_ONCE(qp->flags) & LH_QPF_WIDE);

	if (idx < 0) {
		lh_count(st, LH_STAT_PAIR_UNLISTED);
		lh_pair_block(now);
		return;
	}
	bpf_spin_lock(&qp->lock);
	qp->flags |= LH_QPF_LISTED;
	qp->p_idx = (__u32)idx;
	bpf_spin_unlock(&qp->lock);
}

/*
 * A data packet of a QP not yet paired, on its way on: widen the QP's
 * forwarded range to its PSN (before it leaves, so before any ACK of it can
 * come back), and list the QP if it is not.
 */
/*
 * The PSN into lh_pair_psn for this QP, or marked ambiguous when another QP
 * between the same hosts forwarded it too. A global function: its own stack.
 */
__noinline int lh_pair_index(const struct lh_qp_key *k, __u32 psn)
{
	struct lh_qp_key ik;
	__u32 dqpn, *old;

	if (!k)
		return 0;
	__builtin_memcpy(ik.saddr, k->saddr, 16);
	__builtin_memcpy(ik.daddr, k->daddr, 16);
	ik.dqpn = psn;
	dqpn = k->dqpn;
	if (!bpf_map_update_elem(&lh_pair_psn, &ik, &dqpn, BPF_NOEXIST))
		return 0;
	old = bpf_map_lookup_elem(&lh_pair_psn, &ik);
	if (old && READ_ONCE(*old) != dqpn)
		WRITE_ONCE(*old, LH_PAIR_PSN_AMBIG);
	return 0;
}

static __always_inline void lh_pair_note(struct lh_qp *qp, const struct lh_qp_key *k, __u32 psn,
					 __u64 now, struct lh_stats *st)
{
	bool list, index;

	bpf_spin_lock(&qp->lock);
	if (psn_diff(psn, qp->p_lo) < 0)
		qp->p_lo = psn;
	if (psn_diff(psn, qp->p_hi) > 0)
		qp->p_hi = psn;
	list = !(qp->flags & (LH_QPF_LISTED | LH_QPF_PAIRED | LH_QPF_STALE));
	index = !(qp->flags & (LH_QPF_WIDE | LH_QPF_PAIRED | LH_QPF_STALE)) &&
		psn_diff(psn, qp->p_lo) < LH_PAIR_PSN_SPAN;
	bpf_spin_unlock(&qp->lock);
	if (list)
		lh_pair_list(qp, k, now, st);
	if (index)
		lh_pair_index(k, psn);
}

#define LH_PAIR_PRUNE_MAX 8
/* lh_pair_scratch's entries: one for the packet paths (ingress, which do not nest on a CPU), one for the agent's commands */
#define LH_PAIR_SCRATCH_PKT 0
#define LH_PAIR_SCRATCH_CMD 1
/*
 * How far before p_lo and after p_hi an LH_QPF_WIDE QP's ACKs may go (as
 * LH_QP_STALE_BACK): its receiver may have had PSNs from before it was
 * learned, and ACK them again when the NIC resends
 */
#define LH_PAIR_WIDE_BACK 65536

/* One pass over a host pair's list (bpf_loop), for an ACK's PSN or for pruning */
struct lh_pair_scan {
	struct lh_qp_key k; /* the host pair's addresses; dqpn of the entry looked at */
	__u32 psn;
	__u32 n;
	__u32 match; /* QPs whose range holds psn */
	__u32 best_i;
	__u32 best_dqpn;
	__u32 ndead;
	__u32 dead_i[LH_PAIR_PRUNE_MAX];
	__u32 dead_dqpn[LH_PAIR_PRUNE_MAX];
	__u32 ack_qpn; /* the ACK's destination QPN: the requester's */
	__u16 ack_sport; /* the ACK's UDP source port */
	bool unwitnessed; /* a wide QP's range held the PSN, its source port did not link it */
	bool prune_only;
	bool moved; /* taking best_i moved the list's last QP, moved_dqpn, into best_i */
	__u32 moved_dqpn;
};

/*
 * Whether a data QP's UDP source port links it to an ACK: a NIC that gives
 * both directions of a connection one port (mlx5 by its flow label of both
 * QPNs, lhperf), or Linux rxe, whose requester sends from 0xc000 +
 * hash_32(its QPN, 14) (rxe_qp.c; hash_32: GOLDEN_RATIO_32 multiply,
 * include/linux/hash.h), the QPN the ACK is sent to.
 */
static __always_inline bool lh_sport_links(__u16 data_sport, __u16 ack_sport, __u32 ack_qpn)
{
	__u32 h = (ack_qpn * 0x61C88647u) >> (32 - 14);

	return data_sport == ack_sport || data_sport == (__u16)(0xc000 | (h & 0x3fff));
}

/* Room for a scan (its callers' stacks are full), not pinned, one per object */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct lh_pair_scan);
} lh_pair_scratch SEC(".maps");

/* bpf_loop's context: a map value holds no pointer, a stack slot does */
struct lh_pair_ctx {
	struct lh_hostpair *hp;
	struct lh_pair_scan *s;
};

static __always_inline struct lh_pair_scan *lh_pair_scan_get(__u32 which)
{
	struct lh_pair_scan *s = bpf_map_lookup_elem(&lh_pair_scratch, &which);

	if (s)
		__builtin_memset(s, 0, sizeof(*s));
	return s;
}

/*
 * Whether the QP's forwarded range holds psn. A range of 2^22 PSNs or more
 * (a QP unpaired for that long) holds every PSN: psn_diff cannot tell.
 */
static __always_inline bool lh_pair_range_holds(const struct lh_qp *qp, __u32 flags, __u32 psn)
{
	__u32 lo = READ_ONCE(qp->p_lo), hi = READ_ONCE(qp->p_hi);
	__s32 span;

	if (flags & LH_QPF_WIDE) {
		lo = psn_add(lo, -(__u32)LH_PAIR_WIDE_BACK);
		hi = psn_add(hi, LH_PAIR_WIDE_BACK);
	}
	span = psn_diff(hi, lo);
	if (span < 0 || span >= (1 << 22))
		return true;
	return psn_diff(psn, lo) >= 0 && psn_diff(hi, psn) >= 0;
}

static long lh_pair_scan_one(__u32 i, void *ctx)
{
	struct lh_pair_ctx *c = ctx;
	struct lh_pair_scan *s = c->s;
	struct lh_hostpair *hp = c->hp;
	struct lh_qp *qp;
	__u32 dqpn, flags;

	if (!s || !hp || i >= s->n || i >= LH_HOSTPAIR_QPS)
		return 1;
	dqpn = READ_ONCE(hp->dqpn[lh_hp_idx(i)]);
	s->k.dqpn = dqpn;
	qp = bpf_map_lookup_elem(&lh_qp, &s->k);
	flags = qp ? READ_ONCE(qp->flags) : 0;
	if (!qp || (flags & (LH_QPF_PAIRED | LH_QPF_STALE)) || bpf_map_lookup_elem(&lh_pair, &s->k)) {
		/* gone, or paired some other way: to be dropped from the list */
		if (s->ndead < LH_PAIR_PRUNE_MAX) {
			s->dead_i[s->ndead & (LH_PAIR_PRUNE_MAX - 1)] = i;
			s->dead_dqpn[s->ndead & (LH_PAIR_PRUNE_MAX - 1)] = dqpn;
			s->ndead++;
		}
		return 0;
	}
	if (s->prune_only || (s->match && dqpn == s->best_dqpn))
		return 0; /* listed twice: one QP */
	if (!lh_pair_range_holds(qp, flags, s->psn))
		return 0;
	/*
	 * A wide QP (learned mid-flight) may share its wide range with a QP
	 * this gateway has not learned yet (quiet since the agent started): its
	 * ACKs then found the wide one the only match, and paired it wrong (a
	 * make soak run, an agent restarted: the filter dropped a QP's resends
	 * as acknowledged by another's ACKs, a QP error). It pairs only with an
	 * ACK its source port links it to; a NIC that does neither leaves it
	 * unpaired, passed as with no gateway.
	 */
	if ((flags & LH_QPF_WIDE) && !lh_sport_links(READ_ONCE(qp->sport), s->ack_sport, s->ack_qpn)) {
		s->unwitnessed = true;
		return 0;
	}
	s->match++;
	s->best_i = i;
	s->best_dqpn = dqpn;
	return s->match > 1; /* a second: ambiguous, no need to look further */
}

/* One entry of a pass that looks for best_dqpn's index in the list (bpf_loop) */
static long lh_pair_find_one(__u32 i, void *ctx)
{
	struct lh_pair_ctx *c = ctx;
	struct lh_pair_scan *s = c->s;
	struct lh_hostpair *hp = c->hp;

	if (!s || !hp || i >= s->n || i >= LH_HOSTPAIR_QPS)
		return 1;
	if (READ_ONCE(hp->dqpn[lh_hp_idx(i)]) != s->best_dqpn)
		return 0;
	s->best_i = i;
	s->match = 1;
	return 1;
}

/* Take entry i (below n) out of a list: the last moves into its place. Under the lock */
static __always_inline void lh_hp_remove(struct lh_hostpair *hp, __u32 i)
{
	hp->n--;
	hp->dqpn[lh_hp_idx(i)] = hp->dqpn[lh_hp_idx(hp->n)];
	hp->ver++;
}

/*
 * Drop the dead entries a scan found (highest index first: each is
 * replaced by the last), and the QP at best_i when take is set, provided
 * the list did not change since the scan (ver). An emptied entry stays,
 * empty and no longer wide; only the agent's prune (reap) marks one dead
 * and deletes it. Deleted on the packet path, a QP being learned on
 * another CPU met the dead entry until the delete (a busy 2-vCPU host can
 * stall a CPU that long), found no list, and blocked all pairing for 2 s
 * (48-scale, 1024 QPs: 2 QPs unlisted in a fresh-clone CI run). Returns
 * whether best_i was taken.
 */
static __always_inline bool lh_pair_commit(struct lh_hostpair *hp, struct lh_pair_scan *s,
					   struct lh_hostpair_key *hk, __u32 ver, bool take,
					   bool reap)
{
	bool taken = false, empty = false;
	__u32 j;

	s->moved = false;
	bpf_spin_lock(&hp->lock);
	if (take && hp->ver == ver && s->best_i < hp->n && hp->n <= LH_HOSTPAIR_QPS &&
	    hp->dqpn[lh_hp_idx(s->best_i)] == s->best_dqpn) {
		/* every dead index is below best_i or stays valid: best_i goes last */
		taken = true;
	}
	for (j = LH_PAIR_PRUNE_MAX; j > 0; j--) {
		__u32 d = j - 1, i;

		if (d >= s->ndead)
			continue;
		i = lh_hp_idx(s->dead_i[d & (LH_PAIR_PRUNE_MAX - 1)]);
		if (i < hp->n && hp->n <= LH_HOSTPAIR_QPS &&
		    hp->dqpn[i] == s->dead_dqpn[d & (LH_PAIR_PRUNE_MAX - 1)]) {
			if (taken && s->best_i == hp->n - 1)
				s->best_i = i; /* the last, moving into the hole */
			lh_hp_remove(hp, i);
		}
	}
	if (taken && s->best_i < hp->n && hp->n <= LH_HOSTPAIR_QPS) {
		lh_hp_remove(hp, s->best_i);
		if (s->best_i < hp->n) {
			s->moved = true;
			s->moved_dqpn = hp->dqpn[lh_hp_idx(s->best_i)];
		}
	}
	if (!hp->n) {
		hp->wide = 0;
		if (reap) {
			hp->dead = 1;
			empty = true;
		}
	}
	bpf_spin_unlock(&hp->lock);
	if (empty)
		bpf_map_delete_elem(&lh_hostpair, hk);
	return taken;
}

/*
 * Drop the QPs that are gone or paired from a host pair's list (the agent's
 * lh_dc_cmd, on its timer). Returns how many went.
 */
__noinline int lh_hostpair_prune(struct lh_hostpair_key *hk)
{
	struct lh_pair_ctx c = { .s = lh_pair_scan_get(LH_PAIR_SCRATCH_CMD) };
	struct lh_pair_scan *s = c.s;
	struct lh_hostpair_key key; /* on the stack: 6.1 takes no argument memory as a map key */

	if (!hk || !s)
		return 0;
	__builtin_memcpy(&key, hk, sizeof(key));
	c.hp = bpf_map_lookup_elem(&lh_hostpair, &key);
	if (!c.hp)
		return 0;
	__builtin_memcpy(s->k.saddr, key.saddr, 16);
	__builtin_memcpy(s->k.daddr, key.daddr, 16);
	s->n = READ_ONCE(c.hp->n);
	s->prune_only = true;
	bpf_loop(LH_HOSTPAIR_QPS, lh_pair_scan_one, &c, 0);
	if (s->ndead || !s->n)
		lh_pair_commit(c.hp, s, &key, 0, false, true);
	return s->ndead;
}

/*
 * The exact PSN first: the QP that forwarded it (lh_pair_psn), if its range
 * holds it, found in the list by its QPN alone (no lookup a QP). Its place in
 * the list is its hint, where the list still has it there; else a pass finds
 * it (the pass over 4096 QPs of one host pair is the largest cost of their
 * first round: perf, 2 % of two CPUs, ~10 us an ACK). s->match is 1 when found.
 */
static __always_inline void lh_pair_try_exact(struct lh_pair_ctx *c, struct lh_pair_scan *s)
{
	struct lh_qp *qp;
	__u32 flags, hint, *idx;

	s->k.dqpn = s->psn;
	idx = bpf_map_lookup_elem(&lh_pair_psn, &s->k);
	s->best_dqpn = idx ? READ_ONCE(*idx) : LH_PAIR_PSN_AMBIG;
	if (s->best_dqpn == LH_PAIR_PSN_AMBIG || READ_ONCE(c->hp->wide))
		return;
	s->k.dqpn = s->best_dqpn;
	qp = bpf_map_lookup_elem(&lh_qp, &s->k);
	flags = qp ? READ_ONCE(qp->flags) : 0;
	if (!qp || (flags & (LH_QPF_PAIRED | LH_QPF_STALE)) ||
	    !lh_pair_range_holds(qp, flags, s->psn))
		return;
	hint = READ_ONCE(qp->p_idx);
	if (hint < s->n && READ_ONCE(c->hp->dqpn[lh_hp_idx(hint)]) == s->best_dqpn) {
		s->best_i = hint;
		s->match = 1;
	} else {
		bpf_loop(LH_HOSTPAIR_QPS, lh_pair_find_one, c, 0);
	}
}

/*
 * The pairing the list committed, recorded: the hint of the QP moved into the
 * hole (a race leaves it stale, not wrong), the ACK's key to the data key
 * (lh_ack), the requester's QPN (lh_pair), and the QP paired. 0, or -1 when
 * a map refused it.
 */
static __always_inline int lh_pair_record(const struct lh_parsed *p, struct lh_pair_scan *s)
{
	struct lh_qp_key ack;
	struct lh_qp *qp;
	__u32 peer = p->qpn;

	if (s->moved) {
		s->k.dqpn = s->moved_dqpn;
		qp = bpf_map_lookup_elem(&lh_qp, &s->k);
		if (qp)
			WRITE_ONCE(qp->p_idx, s->best_i);
	}
	s->k.dqpn = s->best_dqpn; /* the data key */
	lh_key_of(&ack, p);
	if (bpf_map_update_elem(&lh_ack, &ack, &s->k, BPF_ANY) ||
	    bpf_map_update_elem(&lh_pair, &s->k, &peer, BPF_ANY))
		return -1;
	qp = bpf_map_lookup_elem(&lh_qp, &s->k);
	if (qp) {
		bpf_spin_lock(&qp->lock);
		qp->peer_qpn = peer;
		qp->flags = (qp->flags | LH_QPF_PAIRED) & ~LH_QPF_LISTED;
		bpf_spin_unlock(&qp->lock);
	}
	return 0;
}

/*
 * Pair an ACK (responder -> requester, requester's QPN, PSN) with its data
 * QP. A positive ACK names a PSN its receiver got, and so one this gateway
 * forwarded (it sees both directions of what it serves): its QP is among
 * the unpaired QPs between the two hosts whose forwarded range holds the
 * PSN. When exactly one does, that is it; when several do (equal start
 * PSNs, say) the ACK pairs nothing and the next tries again. A NAK names
 * the receiver's expected PSN, which may never have come this way: it does
 * not pair. Returns 0 when paired.
 */
__noinline int lh_pair_from_ack(const struct lh_parsed *p)
{
	struct lh_stats *st = lh_stats_get();
	struct lh_pair_ctx c = { .s = lh_pair_scan_get(LH_PAIR_SCRATCH_PKT) };
	struct lh_pair_scan *s = c.s;
	struct lh_hostpair_key hk;
	struct lh_pair_guard *g;
	bool exact;
	__u32 ver;
	__u64 now;

	if (!p || !s || (p->syndrome & AETH_TYPE_MASK) != AETH_TYPE_ACK)
		return -1;
	/* the ACK goes from the responder (its source) to the requester */
	__builtin_memcpy(hk.saddr, p->daddr, 16);
	__builtin_memcpy(hk.daddr, p->saddr, 16);
	c.hp = bpf_map_lookup_elem(&lh_hostpair, &hk);
	if (!c.hp)
		return -1;
	now = bpf_ktime_get_ns();
	g = lh_pair_guard_get();
	if (g && now < READ_ONCE(g->block_until_ns)) {
		lh_count(st, LH_STAT_PAIR_BLOCKED);
		return -1;
	}
	__builtin_memcpy(s->k.saddr, hk.saddr, 16);
	__builtin_memcpy(s->k.daddr, hk.daddr, 16);
	s->psn = p->psn;
	s->ack_qpn = p->qpn;
	s->ack_sport = p->sport;
	ver = READ_ONCE(c.hp->ver);
	asm volatile("" ::: "memory");
	s->n = READ_ONCE(c.hp->n);
	lh_pair_try_exact(&c, s);
	exact = s->match == 1;
	if (!exact)
		bpf_loop(LH_HOSTPAIR_QPS, lh_pair_scan_one, &c, 0);
	if (s->match > 1)
		lh_count(st, LH_STAT_PAIR_AMBIGUOUS);
	if (s->unwitnessed)
		lh_count(st, LH_STAT_PAIR_UNLINKED);
	if (s->match != 1) {
		if (s->ndead)
			lh_pair_commit(c.hp, s, &hk, ver, false, false);
		return -1;
	}
	if (!lh_pair_commit(c.hp, s, &hk, ver, true, false))
		return -1; /* the list changed meanwhile: the next ACK */
	if (lh_pair_record(p, s))
		return -1;
	lh_count(st, LH_STAT_PAIRED);
	if (exact)
		lh_count(st, LH_STAT_PAIR_EXACT);
	return 0;
}

#endif /* LH_BPF_PAIR_H */
