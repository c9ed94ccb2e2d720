/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The Sentry's taking in of Depot reports (sentry.h, lh_proto.h): checked,
 * bounded, the missing set recorded, copies due again re-sent.
 */
#ifndef LH_BPF_SENTRY_REPORT_H
#define LH_BPF_SENTRY_REPORT_H

#include "sentry_state.h"

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
__noinline int sentry_report_pair(const struct lh_parsed *p, const struct lh_qp_key *key,
				  __u32 peer)
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
		return lh_drop(st, bound == SENTRY_UNSENT ? LH_STAT_SENTRY_REPORT_UNSENT
							  : LH_STAT_SENTRY_REPORT_STALE);
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

#endif /* LH_BPF_SENTRY_REPORT_H */
