// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * TC (tcx) on a gateway's DC interface, the Depot's emitting half:
 *  - lh_dc_in (ingress): ACKs and NAKs of local receiving NICs: free backup
 *    copies, answer NAKs from the backup pool;
 *  - lh_dc_out (egress): after the packet that fills a gap, release the held
 *    run in PSN order;
 *  - lh_dc_kick: run by the agent with BPF_PROG_TEST_RUN to continue a
 *    release or replay longer than one burst (the frame names the QP: a data
 *    packet releases, a NAK replays from its PSN);
 *  - lh_dc_cmd: the agent's commands, run the same way (struct lh_cmd).
 * longhauld puts lh_dc_in and lh_dc_out first on their hooks, so that a
 * credit program sharing the DC egress (lh_cr_out of a credit longhauld on
 * the same node) sees each delivery once: the filler's clone and the run,
 * not the original lh_dc_out drops. Both pass with LH_TC_NEXT (common.h).
 */
#include "lib/common.h"
#include "lib/depot_tc.h"

/*
 * lh_dc_in's parsed packet. On its stack, lh_dc_in's frame and that of
 * lh_pair_from_ack() (which it calls) came to 544 bytes on 6.1, which rounds
 * every frame up to 32 bytes against the limit of 512 for a call chain.
 * One per CPU: TC ingress does not nest on a CPU (what lh_dc_in emits goes
 * out through egress, lh_dc_out), and no other program uses it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lh_parsed);
} lh_dc_in_pkt SEC(".maps");

SEC("tcx/ingress")
int lh_dc_in(struct __sk_buff *skb)
{
	struct lh_stats *st = lh_stats_get();
	struct lh_config *cfg = lh_config_get();
	struct lh_parsed *p;
	__u32 zero = 0;
	int verdict;

	if (!cfg || !(cfg->flags & LH_CFG_DEPOT))
		return LH_TC_NEXT;
	p = bpf_map_lookup_elem(&lh_dc_in_pkt, &zero);
	if (!p || lh_parse_skb(skb, p) != LH_STAT_ROCE || !lh_is_rc_ack(p) ||
	    !(lh_roles(cfg, st) & LH_CFG_DEPOT))
		return LH_TC_NEXT;
	verdict = depot_tc_ack(skb, p, cfg, st);
	/* an ACK or NAK it lets go: the next program on the hook sees it too */
	return verdict == TC_ACT_OK ? LH_TC_NEXT : verdict;
}

/* The filler of a gap on its way to the NIC: send it, then the held run, in order */
SEC("tcx/egress")
int lh_dc_out(struct __sk_buff *skb)
{
	struct lh_stats *st = lh_stats_get();
	struct lh_config *cfg = lh_config_get();
	struct lh_qp_key key;
	struct lh_parsed p;
	struct lh_ring *ring;
	struct lh_qp *qp;
	__u32 ring_idx;
	bool filler;

	if (!cfg || !(cfg->flags & LH_CFG_DEPOT))
		return LH_TC_NEXT;
	if (lh_parse_skb(skb, &p) != LH_STAT_ROCE || !lh_is_rc_data(&p) ||
	    !(lh_roles(cfg, st) & LH_CFG_DEPOT))
		return LH_TC_NEXT;
	lh_key_of(&key, &p);
	qp = bpf_map_lookup_elem(&lh_qp, &key);
	if (!qp)
		return LH_TC_NEXT;
	/*
	 * The DC timer's reference (lh_qp d.ar_psn), and one AckReq at a time
	 * timed to its ACK (d_rtt_*, lh_dc_in). Racy stores: two CPUs sending
	 * AckReq packets of one QP at once only make a sample a little off.
	 */
	if (p.ackreq && (qp->flags & LH_QPF_DEPOT)) {
		__u64 now = bpf_ktime_get_ns();

		qp->d.ar_psn = p.psn;
		qp->d.ar_ns = now;
		if (!qp->d.rtt_ns) {
			qp->d.rtt_psn = p.psn;
			qp->d.rtt_ns = now;
		}
	}
	/*
	 * Until the NIC's first ACK tells the requester's QPN the Depot cannot
	 * NACK: ask the NIC to acknowledge (AckReq, ICRC redone) the first
	 * deliveries and then one in 32, not each (a QP that stays unpaired,
	 * its PSNs shared with another, would double the ACKs for good). The
	 * first ACK pairs the QP, a DC round trip after its first packet.
	 */
	if ((qp->flags & (LH_QPF_DEPOT | LH_QPF_PAIRED)) == LH_QPF_DEPOT &&
	    (psn_diff(p.psn, READ_ONCE(qp->p_lo)) < 4 || !(p.psn & 31)) &&
	    !lh_qp_paired(qp, &key) && p.l4_off == p.l3_off + (p.ipv6 ? 40 : 20) &&
	    !lh_skb_set_ackreq(skb, p.l3_off, (__u32)(p.l4_off - p.l3_off) + p.udp_len, p.ipv6))
		lh_count(st, LH_STAT_DEPOT_ACKREQ_PAIR);
	if (!(qp->flags & LH_QPF_RELEASING))
		return LH_TC_NEXT;
	ring_idx = qp->ring;
	ring = bpf_map_lookup_elem(&lh_ring, &ring_idx);
	if (!ring)
		return LH_TC_NEXT;
	bpf_spin_lock(&qp->lock);
	filler = (qp->flags & LH_QPF_RELEASING) && qp->d.release_after == p.psn;
	/*
	 * Claim the run: the filler's own clone comes through this hook again
	 * (nested, inside bpf_clone_redirect) and must not start it a second time.
	 */
	if (filler)
		qp->d.release_after = LH_NO_SLOT;
	bpf_spin_unlock(&qp->lock);
	if (!filler)
		return LH_TC_NEXT; /* released packets come by here again */
	lh_count(st, LH_STAT_DEPOT_RELEASE_RUNS);
	if (bpf_clone_redirect(skb, skb->ifindex, 0)) {
		lh_count(st, LH_STAT_EMIT_FAIL);
		return LH_TC_NEXT; /* the filler goes as is; the run follows on the agent's kick */
	}
	depot_release_run(skb, qp, ring, p.l3_off, skb->ifindex, &key, st);
	return TC_ACT_SHOT; /* the original: its clone went first */
}

SEC("tc")
int lh_dc_kick(struct __sk_buff *skb)
{
	struct lh_stats *st = lh_stats_get();
	struct lh_config *cfg = lh_config_get();
	struct lh_qp_key key, dk;
	struct lh_parsed p;
	struct lh_ring *ring;
	struct lh_qp *qp;
	__u32 ring_idx;

	if (!cfg || lh_parse_skb(skb, &p) != LH_STAT_ROCE)
		return TC_ACT_SHOT;
	lh_key_of(&key, &p);
	if (lh_is_rc_ack(&p)) {
		struct lh_qp_key *dkey = bpf_map_lookup_elem(&lh_ack, &key);

		if (!dkey)
			return TC_ACT_SHOT;
		dk = *dkey;
	} else {
		dk = key;
	}
	qp = bpf_map_lookup_elem(&lh_qp, &dk);
	if (!qp || !(qp->flags & LH_QPF_DEPOT))
		return TC_ACT_SHOT;
	ring_idx = qp->ring;
	ring = bpf_map_lookup_elem(&lh_ring, &ring_idx);
	if (!ring)
		return TC_ACT_SHOT;
	if (lh_is_rc_ack(&p))
		depot_replay(skb, qp, ring, p.psn, p.l3_off, cfg->dc_ifindex, &dk, st);
	else
		depot_release_run(skb, qp, ring, p.l3_off, cfg->dc_ifindex, &dk, st);
	return TC_ACT_SHOT;
}

/*
 * A command of the agent (struct lh_cmd after an Ethernet header), run with
 * BPF_PROG_TEST_RUN: what must be atomic with the programs' own changes,
 * which two syscalls are not. Returns the command's result.
 */
SEC("tc")
int lh_dc_cmd(struct __sk_buff *skb)
{
	struct lh_cmd c;

	if (bpf_skb_load_bytes(skb, 14, &c, sizeof(c)))
		return -1;
	switch (c.op) {
	case LH_CMD_HOSTPAIR_PRUNE:
		return lh_hostpair_prune(&c.hk);
	case LH_CMD_QP_FORGOTTEN:
		lh_qp_count_put(c.hk.saddr, c.hk.daddr, c.role, lh_config_get());
		return 0;
	default:
		return -1;
	}
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
