// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Credit-based flow control (draft-hu-rtgwg-cbfc-rsvp-01), the per-packet
 * half: lh_cr_out on the tcx egress of every interface of a credit hop (its
 * DC side and each --credit-route interface). Per RoCEv2 flow (an RC data
 * direction, keyed as lh_qp):
 *  - a flow that came in from the DC and leaves by another interface starts
 *    here: the program creates it and tells the agent, which signals it;
 *  - on the active path's interface a packet leaves only against credit
 *    (sent + len <= limit) and is charged; otherwise, or while older packets
 *    of the flow are held, it is handed whole to the agent (ring buffer) and
 *    dropped here: the agent sends it on in order once credit returns;
 *  - leaving by another interface than the active path's (the kernel's route
 *    still points at a failed path): redirected to the active one;
 *  - every byte that leaves is counted (fwd_bytes): the credit this hop
 *    returns upstream.
 * What the program cannot hold (hold limit reached, ring full, larger than a
 * record) is passed on, charged and counted: never dropped.
 * It judges what actually leaves, so it runs last on a hook it shares (after
 * LR2's lh_dc_out on a gateway's DC egress: longhauld attaches it at the end
 * of the tcx chain, or as the later clsact priority) and passes with
 * LH_TC_NEXT like every longhaul TC program (lib/common.h).
 */
#include "lib/common.h"
#include "lib/parsed.h"
#include "lib/credit.h"

#ifndef AF_INET
#define AF_INET 2
#endif

static __always_inline struct lh_cr_stats *lh_cr_stats_get(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&lh_cr_stats, &key);
}

/* A flow seen for the first time at its first hop: create it, tell the agent */
static __always_inline struct lh_cr_flow *cr_flow_start(const struct lh_qp_key *key,
							struct lh_cr_stats *st, __u64 now)
{
	struct lh_cr_flow fresh = { .flags = LH_CRF_FIRST, .first_ns = now };
	struct lh_cr_event *ev;

	if (bpf_map_update_elem(&lh_cr_flow, key, &fresh, BPF_NOEXIST)) {
		/* another CPU made it first, or the table is full */
		struct lh_cr_flow *f = bpf_map_lookup_elem(&lh_cr_flow, key);

		if (!f)
			lh_cr_count(st, LH_CR_ST_TABLE_FULL);
		return f;
	}
	lh_cr_count(st, LH_CR_ST_NEW_FLOW);
	/* the NEW record carries no data: only its header reaches the agent */
	ev = bpf_ringbuf_reserve(&lh_cr_events, sizeof(*ev) - LH_CR_DATA, 0);
	if (ev) {
		ev->type = LH_CR_EV_NEW;
		ev->len = 0;
		ev->ifindex = 0;
		ev->path = 0;
		ev->key = *key;
		ev->pad = 0;
		bpf_ringbuf_submit(ev, 0);
	}
	/* without the record the agent learns the flow from its first held packet */
	return bpf_map_lookup_elem(&lh_cr_flow, key);
}

static __always_inline void cr_charge(struct lh_cr_flow *f, __u32 path, __u32 len)
{
	if (path < LH_CR_MAX_PATHS)
		__sync_fetch_and_add(&f->sent[path], len);
	__sync_fetch_and_add(&f->fwd_bytes, len);
	__sync_fetch_and_add(&f->fwd_pkts, 1);
}

/*
 * Hand the packet to the agent (TC_ACT_SHOT) or, when it cannot be held,
 * pass it charged (LH_TC_NEXT). l3_off: where the IP packet starts.
 */
static __always_inline int cr_hold(struct __sk_buff *skb, struct lh_cr_flow *f,
				   const struct lh_qp_key *key, __u32 path, __u32 l3_off, __u32 len,
				   __u64 released, __u32 cap, struct lh_cr_stats *st)
{
	struct lh_cr_event *ev;

	if (len > LH_CR_DATA || f->held_bytes - released + len > cap) {
		lh_cr_count(st, LH_CR_ST_HOLD_FULL);
		goto pass;
	}
	ev = bpf_ringbuf_reserve(&lh_cr_events, sizeof(*ev), 0);
	if (!ev) {
		lh_cr_count(st, LH_CR_ST_RING_FULL);
		goto pass;
	}
	ev->type = LH_CR_EV_HOLD;
	ev->len = len;
	ev->ifindex = skb->ifindex;
	ev->path = path;
	ev->key = *key;
	ev->pad = 0;
	/* the verifier needs the copy's length bounded by the buffer: len <= LH_CR_DATA above */
	if (len < 20 || bpf_skb_load_bytes(skb, l3_off, ev->data, len & 0x1fff)) {
		bpf_ringbuf_discard(ev, 0);
		lh_cr_count(st, LH_CR_ST_RING_FULL);
		goto pass;
	}
	bpf_ringbuf_submit(ev, 0);
	__sync_fetch_and_add(&f->held_bytes, len);
	__sync_fetch_and_add(&f->held_pkts, 1);
	lh_cr_count(st, LH_CR_ST_HELD);
	return TC_ACT_SHOT;
pass:
	__sync_fetch_and_add(&f->hold_fail, 1);
	cr_charge(f, path, len);
	return LH_TC_NEXT;
}

SEC("tcx/egress")
int lh_cr_out(struct __sk_buff *skb)
{
	struct lh_cr_stats *st = lh_cr_stats_get();
	struct lh_cr_config *cfg;
	struct lh_cr_grant *g;
	struct lh_cr_flow *f;
	struct lh_qp_key key;
	struct lh_parsed p;
	__u32 zero = 0, len, path, cap;
	__u64 now = bpf_ktime_get_ns();

	lh_cr_count(st, LH_CR_ST_PKTS);
	if (lh_parse_skb(skb, &p) != LH_STAT_ROCE) {
		lh_cr_count(st, LH_CR_ST_NON_ROCE);
		return LH_TC_NEXT;
	}
	if (p.ipv6) {
		lh_cr_count(st, LH_CR_ST_IPV6);
		return LH_TC_NEXT;
	}
	__builtin_memcpy(key.saddr, p.saddr, 16);
	__builtin_memcpy(key.daddr, p.daddr, 16);
	key.dqpn = p.qpn;
	len = skb->len - p.l3_off; /* the IP packet: the same at every hop */

	f = bpf_map_lookup_elem(&lh_cr_flow, &key);
	cfg = bpf_map_lookup_elem(&lh_cr_config, &zero);
	if (!f) {
		if (!cfg || !cfg->dc_ifindex || skb->ingress_ifindex != cfg->dc_ifindex ||
		    skb->ifindex == cfg->dc_ifindex) {
			lh_cr_count(st, LH_CR_ST_UNKNOWN);
			return LH_TC_NEXT;
		}
		f = cr_flow_start(&key, st, now);
		if (!f)
			return LH_TC_NEXT;
	}
	f->last_ns = now;
	g = bpf_map_lookup_elem(&lh_cr_grant, &key);
	if (!g) {
		if (!(f->flags & LH_CRF_FIRST)) {
			cr_charge(f, LH_CR_MAX_PATHS, len);
			lh_cr_count(st, LH_CR_ST_COUNTED);
			return LH_TC_NEXT;
		}
		/* set up under way: hold up to the configured limit (no path to charge yet) */
		cap = cfg ? cfg->hold_cap : 0;
		return cr_hold(skb, f, &key, LH_CR_MAX_PATHS, p.l3_off, len, 0, cap, st);
	}
	switch (g->state) {
	case LH_CRS_ACTIVE:
		break;
	case LH_CRS_PENDING:
		if (skb->mark == LH_CR_MARK)
			goto released;
		return cr_hold(skb, f, &key, LH_CR_MAX_PATHS, p.l3_off, len, g->released_bytes,
			       g->hold_cap, st);
	default: /* last hop, open, ending: count what leaves */
		cr_charge(f, LH_CR_MAX_PATHS, len);
		lh_cr_count(st, LH_CR_ST_COUNTED);
		return LH_TC_NEXT;
	}
	path = g->active;
	if (path >= LH_CR_MAX_PATHS)
		return LH_TC_NEXT;
	if (skb->ifindex != g->ifindex[path]) {
		struct bpf_redir_neigh nh = { .nh_family = AF_INET };
		long rc;

		__builtin_memcpy(&nh.ipv4_nh, &g->nexthop[path][12], 4);
		rc = bpf_redirect_neigh(g->ifindex[path], &nh, sizeof(nh), 0);
		if (rc == TC_ACT_REDIRECT) {
			__sync_fetch_and_add(&f->redirected, 1);
			lh_cr_count(st, LH_CR_ST_REDIRECTED);
			return TC_ACT_REDIRECT; /* counted and charged on the way out there */
		}
		lh_cr_count(st, LH_CR_ST_REDIRECT_FAIL);
	}
	if (skb->mark == LH_CR_MARK)
		goto released;
	/* older packets still held keep their place; then the credit */
	if (f->held_pkts != g->released_pkts || f->sent[path] + len > g->limit[path])
		return cr_hold(skb, f, &key, path, p.l3_off, len, g->released_bytes, g->hold_cap, st);
	cr_charge(f, path, len);
	lh_cr_count(st, LH_CR_ST_FORWARDED);
	return LH_TC_NEXT;
released:
	/* the agent sends a held packet only against credit: charge it, never hold it again */
	cr_charge(f, g->state == LH_CRS_ACTIVE ? g->active : LH_CR_MAX_PATHS, len);
	lh_cr_count(st, LH_CR_ST_RELEASED);
	return LH_TC_NEXT;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
