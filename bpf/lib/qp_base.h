/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What every QP decision starts from: the roles this gateway plays, QP keys
 * from parsed packets, events to the agent, a QP's pairing copied in.
 * Addresses are kept as IPv6, IPv4 mapped, so one key serves both families.
 */
#ifndef LH_BPF_QP_BASE_H
#define LH_BPF_QP_BASE_H

#include "maps.h"
#include "parsed.h"
#include "stats.h"

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

#endif /* LH_BPF_QP_BASE_H */
