/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * QPs: learning one from its first packet (with the per-host limits and the
 * peers), a stale QP on a reused key, the QP an ACK acknowledges.
 */
#ifndef LH_BPF_QP_H
#define LH_BPF_QP_H

#include "pair.h"

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
