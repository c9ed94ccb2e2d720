/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A parsed RoCEv2 packet as scalars: offsets and the header fields the data
 * path decides on, filled by a global (non-inlined) parse function.
 *
 * Why: the parser's many exits and IPv6 extension walk leave the verifier
 * with many distinct packet-pointer states; code inlined after it would be
 * verified once per state (a million instructions were reached). A global
 * function is verified once, and what it returns is plain scalars, so the
 * Depot and Sentry logic after it is verified once too. They reach the
 * packet through offsets (bpf_xdp_load_bytes / bpf_skb_*_bytes).
 */
#ifndef LH_BPF_PARSED_H
#define LH_BPF_PARSED_H

#include "parse.h"
#include "stats.h"

struct lh_parsed {
	__u32 result; /* enum lh_stat: LH_STAT_ROCE or a parse reason */
	__u32 opflags; /* roce_opcode_info() */
	__u16 l3_off;
	__u16 l4_off;
	__u16 bth_off;
	__u16 udp_len;
	__u16 pkey;
	__u16 sport;
	__u16 dport;
	__u16 pad0;
	__u8 ipv6;
	__u8 opcode;
	__u8 bth_flags;
	__u8 byte4; /* BTH byte 4: FECN, BECN, reserved (Depot-NACK mark) */
	__u32 qpn; /* BTH destination QP */
	__u32 psn;
	__u8 syndrome; /* AETH, when opflags has ROCE_OPF_AETH */
	__u8 ackreq; /* BTH AckReq bit: the responder ACKs this PSN at once */
	__u8 pad[2];
	__u32 msn;
	__u8 saddr[16]; /* IPv6, or IPv4 mapped */
	__u8 daddr[16];
	__u8 smac[6];
	__u8 dmac[6];
};

static __always_inline void lh_addr_v4mapped(__u8 *dst, __be32 a)
{
	__builtin_memset(dst, 0, 10);
	dst[10] = 0xff;
	dst[11] = 0xff;
	__builtin_memcpy(dst + 12, &a, 4);
}

/* Addresses and ports of any UDP packet the parser got through */
static __always_inline void lh_parsed_fill_udp(struct lh_parsed *p, const struct lh_pkt_meta *m)
{
	if (!m->udp)
		return;
	p->l3_off = m->l3_off;
	p->l4_off = m->l4_off;
	p->sport = bpf_ntohs(m->udp->source);
	p->dport = bpf_ntohs(m->udp->dest);
	p->udp_len = bpf_ntohs(m->udp->len);
	if (m->ip4) {
		p->ipv6 = 0;
		lh_addr_v4mapped(p->saddr, m->ip4->saddr);
		lh_addr_v4mapped(p->daddr, m->ip4->daddr);
	} else if (m->ip6) {
		p->ipv6 = 1;
		__builtin_memcpy(p->saddr, &m->ip6->saddr, 16);
		__builtin_memcpy(p->daddr, &m->ip6->daddr, 16);
	}
	if (m->eth) {
		__builtin_memcpy(p->smac, m->eth->h_source, 6);
		__builtin_memcpy(p->dmac, m->eth->h_dest, 6);
	}
}

/* Fill p from a parse that succeeded (m and c describe the packet) */
static __always_inline void lh_parsed_fill(struct lh_parsed *p, struct hdr_cursor *c,
					   const struct lh_pkt_meta *m)
{
	struct roce_aeth *aeth;

	lh_parsed_fill_udp(p, m);
	p->opflags = m->opflags;
	p->bth_off = m->bth_off;
	p->opcode = m->bth->opcode;
	p->bth_flags = m->bth->flags;
	p->pkey = bpf_ntohs(m->bth->pkey);
	p->byte4 = bth_byte4(m->bth);
	p->qpn = bth_qpn(m->bth);
	p->psn = bth_psn(m->bth);
	p->ackreq = bth_ackreq(m->bth);
	aeth = lh_roce_ext(c, m, ROCE_OPF_AETH, sizeof(*aeth));
	if (aeth) {
		p->syndrome = aeth_syndrome(aeth);
		p->msn = aeth_msn(aeth);
	}
}

/*
 * Parse an XDP frame into p and count its outcome and opcode. Global: the
 * verifier checks it once. Returns p->result.
 */
__noinline int lh_parse_xdp(struct xdp_md *ctx, struct lh_parsed *p)
{
	struct lh_stats *st = lh_stats_get();
	struct lh_pkt_meta m = {};
	struct hdr_cursor c;

	if (!p)
		return LH_STAT_PARSE_TRUNC_ETH;
	__builtin_memset(p, 0, sizeof(*p));
	cursor_init(&c, (void *)(long)ctx->data, (void *)(long)ctx->data_end,
		    bpf_xdp_get_buff_len(ctx));
	lh_count(st, LH_STAT_RX);
	p->result = lh_parse_packet(&c, &m);
	lh_count(st, p->result);
	if (p->result == LH_STAT_ROCE) {
		lh_count_opcode(m.bth->opcode);
		lh_parsed_fill(p, &c, &m);
	} else if (p->result == LH_STAT_PARSE_NON_ROCE) {
		lh_parsed_fill_udp(p, &m);
	}
	return p->result;
}

/* The same for TC; does not count (the XDP program on the way in did) */
__noinline int lh_parse_skb(struct __sk_buff *skb, struct lh_parsed *p)
{
	struct lh_pkt_meta m = {};
	struct hdr_cursor c;
	void *data, *data_end;
	__u32 len, pull;

	if (!p)
		return LH_STAT_PARSE_TRUNC_ETH;
	__builtin_memset(p, 0, sizeof(*p));
	len = skb->len;
	pull = len < 128 ? len : 128;
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	if (data + pull > data_end) {
		/* headers in paged data: make them linear */
		bpf_skb_pull_data(skb, pull);
		data = (void *)(long)skb->data;
		data_end = (void *)(long)skb->data_end;
	}
	cursor_init(&c, data, data_end, len);
	p->result = lh_parse_packet(&c, &m);
	if (p->result == LH_STAT_ROCE)
		lh_parsed_fill(p, &c, &m);
	else if (p->result == LH_STAT_PARSE_NON_ROCE)
		lh_parsed_fill_udp(p, &m);
	return p->result;
}

/* Data the LR2 path follows: RC SEND or RDMA WRITE requests */
static __always_inline bool lh_is_rc_data(const struct lh_parsed *p)
{
	return (p->opcode & ROCE_TRANSPORT_MASK) == ROCE_TRANSPORT_RC &&
	       (p->opflags & (ROCE_OPF_SEND | ROCE_OPF_WRITE)) && (p->opflags & ROCE_OPF_REQ);
}

static __always_inline bool lh_is_rc_ack(const struct lh_parsed *p)
{
	return p->opcode == ROCE_RC_ACKNOWLEDGE;
}

#endif /* LH_BPF_PARSED_H */
