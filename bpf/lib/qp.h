/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * QP keys from parsed packets, QP learning, and events to the agent.
 * Addresses are kept as IPv6, IPv4 mapped, so one key serves both families.
 */
#ifndef LH_BPF_QP_H
#define LH_BPF_QP_H

#include "maps.h"
#include "parsed.h"
#include "stats.h"

/*
 * Key of the packet's own direction: source, destination, destination QPN.
 * For data it is the QP's key; for an ACK it is the lh_ack key.
 */
/*
 * The roles (LH_CFG_*) this gateway plays for a packet: none once a data
 * path kept by a stopped agent has been without one for longer than
 * agentless_ms (every packet then passes, counted). The clock is read only
 * while no agent runs.
 */
static __always_inline __u32 lh_roles(const struct lh_config *cfg, struct lh_stats *st)
{
	__u32 f = cfg->flags;

	if (!(f & LH_CFG_AGENTLESS) ||
	    bpf_ktime_get_ns() - cfg->agentless_since_ns <= (__u64)cfg->agentless_ms * 1000000)
		return f;
	lh_count(st, LH_STAT_AGENTLESS_PASS);
	return 0;
}

static __always_inline void lh_key_of(struct lh_qp_key *k, const struct lh_parsed *p)
{
	__builtin_memcpy(k->saddr, p->saddr, 16);
	__builtin_memcpy(k->daddr, p->daddr, 16);
	k->dqpn = p->qpn;
}

static __always_inline void lh_event(__u32 type, const struct lh_qp_key *k, __u32 psn, __u32 flags)
{
	struct lh_event *e = bpf_ringbuf_reserve(&lh_events, sizeof(*e), 0);

	if (!e)
		return; /* the agent is behind: it rescans the maps on its timer */
	e->type = type;
	e->psn = psn;
	e->dqpn = k->dqpn;
	e->flags = flags;
	__builtin_memcpy(e->saddr, k->saddr, 16);
	__builtin_memcpy(e->daddr, k->daddr, 16);
	e->ts_ns = bpf_ktime_get_ns();
	/*
	 * A wake-up is an irq_work: a self-IPI, an APIC write that in a VM is
	 * an exit (~7 us a Depot-NACK in bpf-datapath when forced). A new QP is
	 * only logged, read on the agent's next tick: 4096 new QPs at once spent
	 * 6 % of the host's CPU on those writes (perf, 0.7 s of their first
	 * round), on the CPUs that forward. The others keep the kernel's rule:
	 * a wake-up only for a reader that has read all (behind a new QP's
	 * record, the agent's next tick reads them).
	 */
	bpf_ringbuf_submit(e, type == LH_EV_QP_NEW ? BPF_RB_NO_WAKEUP : 0);
}


/*
 * Adopt the agent's pairing (lh_pair) into the QP. The agent never writes
 * lh_qp values, which the programs change under the QP lock: it writes
 * lh_pair, and this copies it in. Only unpaired QPs pay the lookup.
 */
static __always_inline bool lh_qp_paired(struct lh_qp *qp, const struct lh_qp_key *k)
{
	__u32 *peer;

	if (qp->flags & LH_QPF_PAIRED)
		return true;
	peer = bpf_map_lookup_elem(&lh_pair, k);
	if (!peer)
		return false;
	bpf_spin_lock(&qp->lock);
	qp->peer_qpn = *peer;
	qp->flags |= LH_QPF_PAIRED;
	bpf_spin_unlock(&qp->lock);
	return true;
}

/* ---- pairing (docs/maps.md, "Pairing") ---- */

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

/*
 * A QP quiet for LH_QP_STALE_IDLE_NS whose next data packet lies far from
 * where it left off belongs to a new connection on the same key: QPNs are
 * reused once a QP is destroyed, and a new one starts at a random PSN. After
 * that long the NIC of the old one sends new data (d == 0), a retransmission
 * from its ACK point or a message's start (behind, by less than
 * LH_QP_STALE_BACK), or, after a loss in the sender's DC, a little ahead
 * (less than a ring); a random 24-bit PSN lands there 1 time in 250. Kept,
 * the old state would take the new connection's packets for duplicates,
 * gaps or acknowledged PSNs (measured: rxe perftest runs one after another
 * at 0 Mb/s, the Sentry dropping them as acknowledged).
 */
#define LH_QP_STALE_IDLE_NS 100000000ULL
#define LH_QP_STALE_BACK 65536

/*
 * Whether qp is stale, marking it so (and asking the agent to forget it) on
 * the first packet that shows it; d is the packet's PSN less where the QP
 * expects the next (Sentry s.next, Depot d.deliv).
 */
static __always_inline bool lh_qp_stale(struct lh_qp *qp, const struct lh_qp_key *k, __s32 d,
					__u64 now, struct lh_stats *st)
{
	__u64 last = READ_ONCE(qp->last_rx_ns);

	if (READ_ONCE(qp->flags) & LH_QPF_STALE)
		return true;
	if (now < last || now - last < LH_QP_STALE_IDLE_NS || (d >= 0 && d < LH_RING_SIZE) ||
	    (d < 0 && d > -LH_QP_STALE_BACK))
		return false;
	bpf_spin_lock(&qp->lock);
	qp->flags |= LH_QPF_STALE;
	bpf_spin_unlock(&qp->lock);
	lh_count(st, LH_STAT_QP_STALE);
	lh_event(LH_EV_QP_STALE, k, 0, 0);
	return true;
}

/*
 * Data QP of an ACK/NAK (the packet's own key is the ACK direction), pairing
 * it on the spot when that is clear; NULL when unpaired (it passes, and the
 * next ACK tries again). *dkey receives the data key.
 */
static __always_inline struct lh_qp *lh_qp_of_ack(const struct lh_parsed *p,
						  struct lh_qp_key *ack_key, struct lh_qp_key *dkey,
						  struct lh_stats *st)
{
	struct lh_qp_key *dk;

	lh_key_of(ack_key, p);
	dk = bpf_map_lookup_elem(&lh_ack, ack_key);
	if (!dk && !lh_pair_from_ack(p))
		dk = bpf_map_lookup_elem(&lh_ack, ack_key);
	if (!dk) {
		lh_count(st, LH_STAT_ACK_UNPAIRED);
		return NULL;
	}
	*dkey = *dk;
	return bpf_map_lookup_elem(&lh_qp, dk);
}

/*
 * Learn a QP from its first data packet, as Depot (data from the WAN) or
 * Sentry (data from the DC). BPF_NOEXIST: when two CPUs race, one entry wins
 * and both use it. A global function: its struct lh_qp lives on its own
 * stack, not on the caller's (the verifier adds up the stack of a call chain).
 * Returns 0 when the QP exists afterwards.
 */
/*
 * With --peer (LH_CFG_PEERS): whether a QP's far host is inside a peer
 * prefix, the source of data from the WAN (Depot), the destination of data
 * toward it (Sentry). Only a new QP asks: a source that is no peer cannot
 * fill the QP table, the rings or the pool.
 */
static __always_inline bool lh_far_is_peer(const struct lh_parsed *p, __u32 role)
{
	struct lh_config *cfg = lh_config_get();
	struct lh_peer_key k = { .prefixlen = 128 };

	if (!cfg || !(cfg->flags & LH_CFG_PEERS))
		return true;
	__builtin_memcpy(k.addr, role == LH_QPF_DEPOT ? p->saddr : p->daddr, 16);
	return bpf_map_lookup_elem(&lh_peer, &k) != NULL;
}

/*
 * lh_qp_count's keys of a QP of role between saddr and daddr (its key's
 * data source and destination): its far host alone, and the pair
 */
static __always_inline void lh_count_keys(struct lh_count_key *host, struct lh_count_key *pair,
					  const __u8 *saddr, const __u8 *daddr, __u32 role)
{
	const __u8 *far = role == LH_QPF_DEPOT ? saddr : daddr;
	const __u8 *near = role == LH_QPF_DEPOT ? daddr : saddr;

	__builtin_memset(host, 0, sizeof(*host));
	__builtin_memcpy(host->far, far, 16);
	__builtin_memcpy(pair->far, far, 16);
	__builtin_memcpy(pair->near, near, 16);
}

/* One QP more on count k, unless limit (0: none, nothing counted) is reached */
static __always_inline bool lh_count_take(const struct lh_count_key *k, __u32 limit)
{
	__u32 zero = 0, *c;

	if (!limit)
		return true;
	c = bpf_map_lookup_elem(&lh_qp_count, k);
	if (!c) {
		bpf_map_update_elem(&lh_qp_count, k, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&lh_qp_count, k);
		if (!c)
			return true; /* no count kept: not a reason to refuse a QP */
	}
	if (__sync_fetch_and_add(c, 1) < limit)
		return true;
	__sync_fetch_and_sub(c, 1);
	return false;
}

/* One QP less on count k; never below 0 (a count the LRU forgot and made anew) */
static __always_inline void lh_count_put(const struct lh_count_key *k)
{
	__u32 *c = bpf_map_lookup_elem(&lh_qp_count, k);

	if (c && !__sync_fetch_and_sub(c, 1))
		__sync_fetch_and_add(c, 1);
}

/*
 * With --host-qps or --hostpair-qps: whether a new QP of role may be learned
 * (counted on its far host and its host pair), else counted and refused
 */
static __always_inline bool lh_qp_count_take(const struct lh_parsed *p, __u32 role,
					     const struct lh_config *cfg, struct lh_stats *st)
{
	struct lh_count_key host, pair;

	if (!cfg || (!cfg->host_qps && !cfg->hostpair_qps))
		return true;
	lh_count_keys(&host, &pair, p->saddr, p->daddr, role);
	if (!lh_count_take(&host, cfg->host_qps)) {
		lh_count(st, LH_STAT_QP_HOST_LIMIT);
		return false;
	}
	if (!lh_count_take(&pair, cfg->hostpair_qps)) {
		if (cfg->host_qps)
			lh_count_put(&host);
		lh_count(st, LH_STAT_QP_HOSTPAIR_LIMIT);
		return false;
	}
	return true;
}

/* The counts a QP took, given back (it was not learned after all, or it is forgotten) */
static __always_inline void lh_qp_count_put(const __u8 *saddr, const __u8 *daddr, __u32 role,
					    const struct lh_config *cfg)
{
	struct lh_count_key host, pair;

	if (!cfg || (!cfg->host_qps && !cfg->hostpair_qps))
		return;
	lh_count_keys(&host, &pair, saddr, daddr, role);
	if (cfg->host_qps)
		lh_count_put(&host);
	if (cfg->hostpair_qps)
		lh_count_put(&pair);
}

__noinline int lh_qp_learn(const struct lh_parsed *p, __u32 role)
{
	struct lh_stats *st = lh_stats_get();
	struct lh_pair_guard *g = lh_pair_guard_get();
	struct lh_config *cfg;
	struct lh_qp *init;
	struct lh_qp_key k;
	__u32 ring = LH_NO_SLOT, zero = 0;
	__u64 now = bpf_ktime_get_ns();
	long err;

	if (!p)
		return -1;
	if (!lh_far_is_peer(p, role)) {
		lh_count(st, LH_STAT_NOT_PEER);
		return -1;
	}
	/*
	 * The table was full a moment ago: not every packet of every QP that
	 * found no room builds one again (40960 tries in a run of 41688 packets)
	 */
	if (g && now < READ_ONCE(g->full_until_ns)) {
		lh_count(st, LH_STAT_QP_TABLE_FULL);
		return -1;
	}
	cfg = lh_config_get();
	if (!lh_qp_count_take(p, role, cfg, st))
		return -1;
	init = bpf_map_lookup_elem(&lh_qp_scratch, &zero);
	if (!init) {
		lh_qp_count_put(p->saddr, p->daddr, role, cfg);
		return -1;
	}
	__builtin_memset(init, 0, sizeof(*init));
	lh_key_of(&k, p);
	init->flags = role | (p->ipv6 ? LH_QPF_IPV6 : 0);
	if (g && now < READ_ONCE(g->wide_until_ns))
		init->flags |= LH_QPF_WIDE | (role == LH_QPF_DEPOT ? LH_QPF_D_UNSURE : 0);
	init->pkey = p->pkey;
	init->sport = p->sport;
	init->last_rx_ns = now;
	init->last_progress_ns = now;
	init->p_lo = p->psn;
	init->p_hi = p->psn;
	if (role == LH_QPF_DEPOT) {
		if (bpf_map_pop_elem(&lh_ring_free, &ring)) {
			init->flags |= LH_QPF_NO_RING;
			ring = LH_NO_SLOT;
		}
		/* the first packet seen is taken as in order: a loss before it is the NIC's */
		init->d.deliv = p->psn;
		init->d.high = p->psn;
		init->d.acked = p->psn;
		init->d.unsafe_end = p->psn;
		init->d.nacked_psn = p->psn;
		init->d.ar_psn = p->psn;
		__builtin_memcpy(init->wan_peer_mac, p->smac, 6);
		__builtin_memcpy(init->wan_mac, p->dmac, 6);
	} else {
		init->s.next = psn_add(p->psn, 1);
		init->s.base = p->psn;
		init->s.una = p->psn;
	}
	init->ring = ring;
	err = bpf_map_update_elem(&lh_qp, &k, init, BPF_NOEXIST);
	if (err)
		lh_qp_count_put(p->saddr, p->daddr, role, cfg); /* not this one's entry */
	if (err && err != -17 /* EEXIST */) {
		if (ring != LH_NO_SLOT)
			bpf_map_push_elem(&lh_ring_free, &ring, 0);
		lh_count(st, LH_STAT_QP_TABLE_FULL);
		lh_pair_block(now); /* its ACKs must not pair another QP */
		if (g)
			WRITE_ONCE(g->full_until_ns, now + LH_QP_FULL_RETRY_NS);
		return -1;
	}
	if (err) {
		if (ring != LH_NO_SLOT)
			bpf_map_push_elem(&lh_ring_free, &ring, 0); /* the other CPU's entry won */
		return 0;
	}
	lh_count(st, role == LH_QPF_DEPOT ? LH_STAT_DEPOT_NEW_QP : LH_STAT_SENTRY_NEW_QP);
	lh_event(LH_EV_QP_NEW, &k, p->psn, init->flags);
	init = bpf_map_lookup_elem(&lh_qp, &k);
	if (init) {
		lh_pair_list(init, &k, now, st);
		/* its first PSN too: a QP of one-packet messages waits on its first ACK */
		if (!(READ_ONCE(init->flags) & LH_QPF_WIDE))
			lh_pair_index(&k, p->psn);
	}
	return 0;
}

/*
 * Depot, under the QP lock: PSN psn went to the NIC in order (from the WAN
 * or a release run); a NIC that went back is past where it was again.
 */
static __always_inline void lh_depot_delivered(struct lh_qp *qp, __u32 psn)
{
	qp->d.deliv = psn_add(psn, 1);
	if (psn_diff(qp->d.deliv, qp->d.high) > 0)
		qp->d.high = qp->d.deliv;
	if ((qp->flags & LH_QPF_D_BACK) && psn_diff(qp->d.deliv, qp->d.back_end) >= 0)
		qp->flags &= ~LH_QPF_D_BACK;
}

#endif /* LH_BPF_QP_H */
