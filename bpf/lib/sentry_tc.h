/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Sentry's TC half on the WAN interface (tcx ingress, lh_wan_in): re-sends
 * from the copies. The XDP program on the same interface passes a Depot
 * report up only when some PSN it names missing was sent by the NIC
 * already: the copies the Sentry kept of those (every packet of a go-back-N
 * replay) go back out toward the Depot, in PSN order, and the report goes no
 * further. With gateway recovery (LH_CFG_GATEWAY) the agent re-sends them,
 * paced: it gets an event (LH_EV_RESEND); the way back is the ACKs'
 * (sentry.h). A Depot-NACK the XDP program marked (lh_resend_meta) has its
 * one copy sent back the same way.
 */
#ifndef LH_BPF_SENTRY_TC_H
#define LH_BPF_SENTRY_TC_H

#include "emit.h"
#include "parsed.h"
#include "pool.h"
#include "qp.h"
#include "stats.h"
#include "lh_proto.h"

struct resend_ctx {
	struct __sk_buff *skb;
	struct lh_qp *qp;
	struct lh_ring *ring;
	struct lh_stats *st;
	const struct lh_report *r;
	__u32 epsn;
	__u32 nbits;
	__u32 l2;
	__u32 sent;
	__u32 now_ms;
	__u32 guard_ms;
	bool v6;
};

/* One bit of the report: re-send that PSN if it is missing, sent already and cached */
static long resend_one(__u64 i, void *data)
{
	struct resend_ctx *c = data;
	__u32 x = psn_add(c->epsn, (__u32)i), idx = LH_NO_SLOT;
	struct lh_ring_ent *e = &c->ring->ent[x & LH_RING_MASK];
	__u8 held_byte = c->r->held[(i >> 3) & 31];
	struct lh_slot *slot;

	if (i >= c->nbits || c->sent >= LH_BURST)
		return 1; /* stop */
	if (held_byte & (1 << (i & 7)))
		return 0;
	bpf_spin_lock(&c->qp->lock);
	if (psn_diff(x, c->qp->s.next) < 0 && e->tag == LH_TAG(LH_SLOT_CACHED, x))
		idx = e->slot;
	bpf_spin_unlock(&c->qp->lock);
	if (idx == LH_NO_SLOT)
		return 0;
	slot = bpf_map_lookup_elem(&lh_pool, &idx);
	if (!slot)
		return 0;
	/* went out less than a round trip ago: still on its way, not lost */
	if (lh_slot_sent_within(slot, c->now_ms, c->guard_ms))
		return 0;
	slot->sent_ms = c->now_ms;
	if (lh_emit_slot(c->skb, idx, c->l2, c->skb->ifindex, c->v6, false)) {
		lh_count(c->st, LH_STAT_EMIT_FAIL);
		return 1;
	}
	c->sent++;
	lh_count(c->st, LH_STAT_SENTRY_RESENT);
	return 0;
}

/*
 * A Depot-NACK the XDP program marked with lh_resend_meta: the copy it names
 * goes back out toward the Depot (the way the NACK came), the NACK ends here.
 * The copy is checked again: freed and taken for another packet meanwhile,
 * nothing is sent (the report re-sends what is still missing).
 */
static __always_inline int dnack_resend(struct __sk_buff *skb, const struct lh_resend_meta *m,
					struct lh_stats *st)
{
	__u32 idx = m->slot, psn = m->psn, ring = m->ring;
	struct lh_slot *slot = bpf_map_lookup_elem(&lh_pool, &idx);
	struct lh_parsed p;

	lh_count(st, LH_STAT_DROP); /* the NACK, whatever becomes of the copy */
	if (lh_parse_skb(skb, &p) != LH_STAT_ROCE || !slot || slot->psn != psn ||
	    slot->ring != ring || lh_skb_swap_macs(skb)) {
		lh_count(st, LH_STAT_EMIT_FAIL);
		return TC_ACT_SHOT;
	}
	if (lh_emit_slot(skb, idx, p.l3_off, skb->ifindex, (slot->data[0] >> 4) == 6, false)) {
		lh_count(st, LH_STAT_EMIT_FAIL);
		return TC_ACT_SHOT;
	}
	lh_count(st, LH_STAT_SENTRY_DNACK_RESENT);
	return TC_ACT_SHOT;
}

/* lh_wan_in: a marked Depot-NACK or a Depot report, else on to the next program */
static __always_inline int sentry_tc_wan_in(struct __sk_buff *skb)
{
	struct lh_stats *st = lh_stats_get();
	struct lh_config *cfg = lh_config_get();
	struct resend_ctx c = { .skb = skb, .st = st };
	struct lh_report r;
	struct lh_qp_key key;
	struct lh_parsed p;
	const struct lh_resend_meta *m = (void *)(long)skb->data_meta;
	__u32 ring_idx;

	if (!cfg || !(cfg->flags & LH_CFG_SENTRY))
		return LH_TC_NEXT;
	if ((void *)(m + 1) <= (void *)(long)skb->data && m->magic == LH_META_RESEND)
		return dnack_resend(skb, m, st);
	if (lh_parse_skb(skb, &p) != LH_STAT_PARSE_NON_ROCE || p.dport != LH_REPORT_PORT ||
	    !(lh_roles(cfg, st) & LH_CFG_SENTRY))
		return LH_TC_NEXT;
	/* what the XDP half let pass as not a valid report goes on to the host */
	if (p.udp_len < 8 + sizeof(r) || bpf_skb_load_bytes(skb, p.l4_off + 8, &r, sizeof(r)) ||
	    !lh_report_valid(&r, p.udp_len - 8))
		return LH_TC_NEXT;
	__builtin_memcpy(key.saddr, p.daddr, 16);
	__builtin_memcpy(key.daddr, p.saddr, 16);
	key.dqpn = bpf_ntohl(r.dqpn) & ROCE_QPN_MASK;
	c.qp = bpf_map_lookup_elem(&lh_qp, &key);
	if (!c.qp || !(c.qp->flags & LH_QPF_SENTRY))
		return LH_TC_NEXT;
	ring_idx = c.qp->ring;
	c.ring = bpf_map_lookup_elem(&lh_ring, &ring_idx);
	if (!c.ring) {
		lh_count(st, LH_STAT_DROP);
		return TC_ACT_SHOT; /* no copies kept for this QP: the report ends here */
	}
	c.epsn = bpf_ntohl(r.epsn) & ROCE_PSN_MASK;
	if ((cfg->flags & LH_CFG_GATEWAY) && !(READ_ONCE(c.qp->flags) & LH_QPF_GW_OFF)) {
		lh_event(LH_EV_RESEND, &key, c.epsn, 0);
		lh_count(st, LH_STAT_SENTRY_GW_REPORT);
		lh_count(st, LH_STAT_DROP);
		return TC_ACT_SHOT;
	}
	c.r = &r;
	c.nbits = bpf_ntohs(r.nbits);
	c.l2 = p.l3_off;
	c.now_ms = lh_now_ms();
	c.guard_ms = cfg->resend_guard_ms;
	c.v6 = c.qp->flags & LH_QPF_IPV6;
	/* the report came from the Depot's side: send the copies back that way */
	if (lh_skb_swap_macs(skb))
		return LH_TC_NEXT;
	bpf_loop(LH_REPORT_BITS, resend_one, &c, 0);
	lh_count(st, LH_STAT_DROP);
	return TC_ACT_SHOT; /* the report ends here */
}

#endif
