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
	bpf_ringbuf_submit(e, 0);
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

/* Remember a new data QP under its pair of hosts */
static __always_inline void lh_hostpair_add(const struct lh_qp_key *k)
{
	struct lh_hostpair_key hk;
	struct lh_hostpair *hp, fresh = {};

	__builtin_memcpy(hk.saddr, k->saddr, 16);
	__builtin_memcpy(hk.daddr, k->daddr, 16);
	hp = bpf_map_lookup_elem(&lh_hostpair, &hk);
	if (!hp) {
		bpf_map_update_elem(&lh_hostpair, &hk, &fresh, BPF_NOEXIST);
		hp = bpf_map_lookup_elem(&lh_hostpair, &hk);
		if (!hp)
			return;
	}
	bpf_spin_lock(&hp->lock);
	if (hp->n < LH_HOSTPAIR_QPS)
		hp->dqpn[hp->n & (LH_HOSTPAIR_QPS - 1)] = k->dqpn;
	hp->n++;
	if ((hp->n & ~LH_HOSTPAIR_OVER) > LH_HOSTPAIR_QPS)
		hp->n |= LH_HOSTPAIR_OVER; /* the list is incomplete from now on */
	bpf_spin_unlock(&hp->lock);
}

/*
 * Pair an ACK (responder -> requester, requester's QPN, PSN) with its data QP
 * right here when the pair of hosts has at most LH_HOSTPAIR_QPS QPs: the one
 * unpaired QP whose window holds the PSN. Otherwise (or when it is not
 * clear) the agent decides on the event. Returns 0 when paired.
 */
__noinline int lh_pair_from_ack(const struct lh_parsed *p)
{
	struct lh_hostpair_key hk;
	struct lh_qp_key ack, k, best = {};
	struct lh_hostpair *hp;
	__s32 best_d = 0x7fffffff;
	__u32 i, n, ties = 0, peer;

	if (!p)
		return -1;
	/* the ACK goes from the responder (its source) to the requester */
	__builtin_memcpy(hk.saddr, p->daddr, 16);
	__builtin_memcpy(hk.daddr, p->saddr, 16);
	hp = bpf_map_lookup_elem(&lh_hostpair, &hk);
	if (!hp)
		return -1;
	n = hp->n;
	if (n > LH_HOSTPAIR_QPS)
		return -1;
	__builtin_memcpy(k.saddr, hk.saddr, 16);
	__builtin_memcpy(k.daddr, hk.daddr, 16);
	for (i = 0; i < LH_HOSTPAIR_QPS; i++) {
		struct lh_qp *qp;
		__s32 d;

		if (i >= n)
			break;
		k.dqpn = hp->dqpn[i];
		qp = bpf_map_lookup_elem(&lh_qp, &k);
		if (!qp || (qp->flags & LH_QPF_PAIRED) || bpf_map_lookup_elem(&lh_pair, &k))
			continue;
		d = psn_diff((qp->flags & LH_QPF_DEPOT) ? qp->d_deliv : qp->s_next, p->psn);
		if (d <= 0 || d > 65536)
			continue;
		if (d == best_d)
			ties++;
		if (d < best_d) {
			best_d = d;
			best = k;
			ties = 0;
		}
	}
	if (best_d == 0x7fffffff || ties)
		return -1;
	peer = p->qpn;
	lh_key_of(&ack, p);
	if (bpf_map_update_elem(&lh_pair, &best, &peer, BPF_ANY) ||
	    bpf_map_update_elem(&lh_ack, &ack, &best, BPF_ANY))
		return -1;
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
 * expects the next (Sentry s_next, Depot d_deliv).
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
 * At most one LH_EV_ACK_UNPAIRED per this many ns per BPF object (its .bss): ACKs of QPs
 * this gateway never saw data of (traffic routed around it, a scan) must
 * not flood the agent. Racy across CPUs, and only a limit.
 */
#define LH_UNPAIRED_EV_GAP_NS 100000ULL
static __u64 lh_unpaired_ev_ns;

/*
 * Data QP of an ACK/NAK (the packet's own key is the ACK direction), pairing
 * it on the spot when that is clear; NULL when unpaired (an event then asks
 * the agent). *dkey receives the data key.
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
		__u64 now = bpf_ktime_get_ns();

		lh_count(st, LH_STAT_ACK_UNPAIRED);
		if (now - lh_unpaired_ev_ns >= LH_UNPAIRED_EV_GAP_NS) {
			lh_unpaired_ev_ns = now;
			lh_event(LH_EV_ACK_UNPAIRED, ack_key, p->psn, 0);
		}
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
__noinline int lh_qp_learn(const struct lh_parsed *p, __u32 role)
{
	struct lh_stats *st = lh_stats_get();
	struct lh_qp *init;
	struct lh_qp_key k;
	__u32 ring = LH_NO_SLOT, zero = 0;
	long err;

	if (!p)
		return -1;
	init = bpf_map_lookup_elem(&lh_qp_scratch, &zero);
	if (!init)
		return -1;
	__builtin_memset(init, 0, sizeof(*init));
	lh_key_of(&k, p);
	init->flags = role | (p->ipv6 ? LH_QPF_IPV6 : 0);
	init->pkey = p->pkey;
	init->sport = p->sport;
	init->last_rx_ns = bpf_ktime_get_ns();
	init->last_progress_ns = init->last_rx_ns;
	if (role == LH_QPF_DEPOT) {
		if (bpf_map_pop_elem(&lh_ring_free, &ring)) {
			init->flags |= LH_QPF_NO_RING;
			ring = LH_NO_SLOT;
		}
		/* the first packet seen is taken as in order: a loss before it is the NIC's */
		init->d_deliv = p->psn;
		init->d_high = p->psn;
		init->d_acked = p->psn;
		init->d_unsafe_end = p->psn;
		init->d_nacked_psn = p->psn;
		init->d_ar_psn = p->psn;
		__builtin_memcpy(init->wan_peer_mac, p->smac, 6);
		__builtin_memcpy(init->wan_mac, p->dmac, 6);
		lh_count(st, LH_STAT_DEPOT_NEW_QP);
	} else {
		init->s_next = psn_add(p->psn, 1);
		init->s_base = p->psn;
		init->s_una = p->psn;
		lh_count(st, LH_STAT_SENTRY_NEW_QP);
	}
	init->ring = ring;
	err = bpf_map_update_elem(&lh_qp, &k, init, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST */) {
		if (ring != LH_NO_SLOT)
			bpf_map_push_elem(&lh_ring_free, &ring, 0);
		lh_count(st, LH_STAT_QP_TABLE_FULL);
		return -1;
	}
	if (err) {
		if (ring != LH_NO_SLOT)
			bpf_map_push_elem(&lh_ring_free, &ring, 0); /* the other CPU's entry won */
		return 0;
	}
	lh_event(LH_EV_QP_NEW, &k, p->psn, init->flags);
	lh_hostpair_add(&k);
	return 0;
}

#endif /* LH_BPF_QP_H */
