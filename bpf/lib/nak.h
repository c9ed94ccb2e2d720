/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Turn a data packet, in place, into the NAK its responder would send
 * (IBTA 9.7.5.1.2: AETH syndrome 0x60, PSN sequence error, PSN = expected):
 * addresses swapped, the requester's QPN, the responder's MSN, P_Key and
 * MigReq kept, a fresh ICRC (and IPv4 header / IPv6 UDP checksums).
 *
 * The Ethernet header is left alone: the frame was addressed to this
 * gateway, so XDP_PASS hands the NAK to the kernel, which routes it toward
 * the requester like any forwarded packet. (XDP_TX would need an XDP program
 * on a veth peer to be received at all; forwarding works everywhere.)
 */
#ifndef LH_BPF_NAK_H
#define LH_BPF_NAK_H

#include "icrc.h"
#include "parsed.h"

#define LH_NAK_L4_LEN (8 + 12 + 4 + 4) /* UDP, BTH, AETH, ICRC */
#define LH_NAK_TTL 64

struct lh_nak_v4 {
	struct iphdr ip;
	struct udphdr udp;
	struct roce_bth bth;
	struct roce_aeth aeth;
	__u8 icrc[4];
};
_Static_assert(sizeof(struct lh_nak_v4) == 20 + LH_NAK_L4_LEN, "IPv4 NAK has no padding");

struct lh_nak_v6 {
	struct ipv6hdr ip;
	struct udphdr udp;
	struct roce_bth bth;
	struct roce_aeth aeth;
	__u8 icrc[4];
};
_Static_assert(sizeof(struct lh_nak_v6) == 40 + LH_NAK_L4_LEN, "IPv6 NAK has no padding");

/*
 * ICRC of a NAK laid out in buf (IP header at 0, UDP at udp_off, ICRC in
 * the last 4 of len bytes). The variant fields are masked on the fly: the
 * loop index is known to the verifier in every iteration, so the tests on
 * it cost no extra states, and no masked copy takes stack space.
 */
static __always_inline __u32 lh_nak_icrc(const __u8 *buf, __u32 udp_off, __u32 len, bool v6)
{
	__u32 crc = LH_ICRC_SEED_AFTER_LRH, i;

	for (i = 0; i < sizeof(struct lh_nak_v6) - ROCE_ICRC_LEN; i++) {
		__u8 b;

		if (i >= len - ROCE_ICRC_LEN)
			break;
		b = buf[i];
		if (v6) {
			if (i == 0)
				b |= 0x0f; /* traffic class high nibble lives here */
			else if (i <= 3 || i == 7)
				b = 0xff; /* traffic class, flow label, hop limit */
		} else if (i == 1 || i == 8 || i == 10 || i == 11) {
			b = 0xff; /* TOS, TTL, header checksum */
		}
		if (i == udp_off + 6 || i == udp_off + 7 || i == udp_off + 12)
			b = 0xff; /* UDP checksum, BTH byte 4 */
		crc = lh_crc32_byte(crc, b);
	}
	return ~crc;
}

static __always_inline __u16 lh_csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* One's complement sum of n 16-bit big-endian words */
static __always_inline __u32 lh_csum_words(const __u8 *p, __u32 n, __u32 sum)
{
	__u32 i;

	for (i = 0; i < 40; i++) {
		if (i >= n)
			break;
		sum += (__u32)p[2 * i] << 8 | p[2 * i + 1];
	}
	return sum;
}

static __always_inline void lh_store_le32(__u8 *p, __u32 v)
{
	p[0] = (__u8)v;
	p[1] = (__u8)(v >> 8);
	p[2] = (__u8)(v >> 16);
	p[3] = (__u8)(v >> 24);
}

/* The fields of the data packet a NAK keeps or swaps, read back from the packet */
struct lh_nak_src {
	__u8 l3[40]; /* IPv4 or IPv6 fixed header */
	__u8 sport[2];
	__u8 bth_flags;
	__u8 pkey[2];
};

static __always_inline void lh_nak_transport(struct udphdr *udp, struct roce_bth *bth,
					     struct roce_aeth *aeth, const struct lh_nak_src *o,
					     __u32 qpn, __u32 psn, __u32 syn_msn, __u8 byte4)
{
	__builtin_memcpy(&udp->source, o->sport, 2);
	udp->dest = bpf_htons(ROCEV2_UDP_PORT);
	udp->len = bpf_htons(LH_NAK_L4_LEN);
	udp->check = 0;
	bth->opcode = ROCE_RC_ACKNOWLEDGE;
	bth->flags = o->bth_flags & BTH_FLAG_MIG;
	__builtin_memcpy(&bth->pkey, o->pkey, 2);
	bth_set_qpn(bth, byte4, qpn);
	bth_set_psn(bth, 0, psn);
	aeth_set(aeth, (__u8)(syn_msn >> 24), syn_msn & 0xffffff);
}

/*
 * Rewrite the data packet in ctx into an ACK or NAK for PSN (psn_b4 &
 * 0xffffff), BTH byte 4 (psn_b4 >> 24), addressed to the requester's QPN qpn,
 * AETH syndrome syn_msn >> 24 and MSN syn_msn & 0xffffff.
 * offs: offset of its IP header << 16 | offset of its UDP header (BPF
 * functions take five arguments at most). Returns 0, or a negative
 * error with the packet untouched (the caller passes it on).
 *
 * A global function: the verifier checks it once, not once per caller, and
 * it reads what it needs back from the packet so its arguments stay scalars.
 */
__noinline int lh_xdp_nak(struct xdp_md *ctx, __u32 offs, __u32 qpn, __u32 psn_b4, __u32 syn_msn)
{
	__u32 l3_off = offs >> 16, l4_off = offs & 0xffff;
	__u32 old_len = bpf_xdp_get_buff_len(ctx), new_len, psn = psn_b4 & ROCE_PSN_MASK;
	__u8 byte4 = (__u8)(psn_b4 >> 24);
	struct lh_nak_src o;

	if (l3_off > 64 || l4_off > 256 || l4_off < l3_off + 20)
		return -1;
	if (bpf_xdp_load_bytes(ctx, l3_off, o.l3, 20) ||
	    bpf_xdp_load_bytes(ctx, l4_off, o.sport, 2) ||
	    bpf_xdp_load_bytes(ctx, l4_off + 9, &o.bth_flags, 1) ||
	    bpf_xdp_load_bytes(ctx, l4_off + 10, o.pkey, 2))
		return -1;
	if ((o.l3[0] >> 4) == 4) {
		struct lh_nak_v4 n = {};
		__u32 icrc;

		n.ip.version = 4;
		n.ip.ihl = 5;
		n.ip.tos = o.l3[1] & 0xfc; /* keep DSCP, not ECN */
		n.ip.tot_len = bpf_htons(sizeof(struct iphdr) + LH_NAK_L4_LEN);
		n.ip.frag_off = bpf_htons(0x4000);
		n.ip.ttl = LH_NAK_TTL;
		n.ip.protocol = LH_IPPROTO_UDP;
		__builtin_memcpy(&n.ip.saddr, o.l3 + 16, 4);
		__builtin_memcpy(&n.ip.daddr, o.l3 + 12, 4);
		lh_nak_transport(&n.udp, &n.bth, &n.aeth, &o, qpn, psn, syn_msn, byte4);
		n.ip.check = bpf_htons(lh_csum_fold(lh_csum_words((__u8 *)&n.ip, 10, 0)));
		icrc = lh_nak_icrc((__u8 *)&n, sizeof(struct iphdr), sizeof(n), false);
		lh_store_le32(n.icrc, icrc);
		new_len = l3_off + sizeof(n);
		if (bpf_xdp_adjust_tail(ctx, (int)new_len - (int)old_len))
			return -1;
		return bpf_xdp_store_bytes(ctx, l3_off, &n, sizeof(n)) ? -1 : 0;
	}
	if ((o.l3[0] >> 4) == 6 && l4_off >= l3_off + 40) {
		struct lh_nak_v6 n = {};
		__u32 icrc, sum;

		if (bpf_xdp_load_bytes(ctx, l3_off, o.l3, 40))
			return -1;
		n.ip.version = 6;
		n.ip.priority = o.l3[0] & 0x0f;
		/* the traffic class's DSCP low bits; not ECN (0x30), no flow label */
		n.ip.flow_lbl[0] = o.l3[1] & 0xc0;
		n.ip.payload_len = bpf_htons(LH_NAK_L4_LEN);
		n.ip.nexthdr = LH_IPPROTO_UDP;
		n.ip.hop_limit = LH_NAK_TTL;
		__builtin_memcpy(&n.ip.saddr, o.l3 + 24, 16);
		__builtin_memcpy(&n.ip.daddr, o.l3 + 8, 16);
		lh_nak_transport(&n.udp, &n.bth, &n.aeth, &o, qpn, psn, syn_msn, byte4);
		icrc = lh_nak_icrc((__u8 *)&n, sizeof(struct ipv6hdr), sizeof(n), true);
		lh_store_le32(n.icrc, icrc);
		/* RFC 8200 8.1: pseudo header (addresses, length, next header) + UDP datagram */
		sum = lh_csum_words((__u8 *)&n.ip.saddr, 16, LH_NAK_L4_LEN + LH_IPPROTO_UDP);
		sum = lh_csum_words((__u8 *)&n.udp, LH_NAK_L4_LEN / 2, sum);
		sum = lh_csum_fold(sum);
		n.udp.check = bpf_htons(sum ? sum : 0xffff);
		new_len = l3_off + sizeof(n);
		if (bpf_xdp_adjust_tail(ctx, (int)new_len - (int)old_len))
			return -1;
		return bpf_xdp_store_bytes(ctx, l3_off, &n, sizeof(n)) ? -1 : 0;
	}
	return -1;
}

/* Convenience for callers holding a parsed packet */
static __always_inline int lh_xdp_make_nak(struct xdp_md *ctx, const struct lh_parsed *p,
					   __u32 qpn, __u32 psn, __u32 msn, __u8 byte4)
{
	return lh_xdp_nak(ctx, (__u32)p->l3_off << 16 | p->l4_off, qpn,
			  (__u32)byte4 << 24 | (psn & ROCE_PSN_MASK),
			  (__u32)AETH_NAK_PSN_SEQ_ERROR << 24 | (msn & 0xffffff));
}

/* The same for an ACK of every PSN up to psn (rxe's syndrome: no credit count) */
static __always_inline int lh_xdp_make_ack(struct xdp_md *ctx, const struct lh_parsed *p,
					   __u32 qpn, __u32 psn, __u32 msn)
{
	return lh_xdp_nak(ctx, (__u32)p->l3_off << 16 | p->l4_off, qpn, psn & ROCE_PSN_MASK,
			  (__u32)AETH_ACK_UNLIMITED << 24 | (msn & 0xffffff));
}

#endif /* LH_BPF_NAK_H */
