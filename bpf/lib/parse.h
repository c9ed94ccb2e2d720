/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Packet parsers for every longhaul program, after the xdp-tools contract: a
 * struct hdr_cursor walks the packet; each parse_* helper checks its own
 * bounds, advances the cursor and returns the next protocol, or -1 with the
 * reason (enum lh_stat) left in cursor->reason.
 *
 * The rules are those of user/lib/pkt.c (lh_pkt_parse), which the unit tests
 * hold this parser to, packet by packet:
 *  - Ethernet, then at most LH_MAX_VLANS 802.1Q/802.1ad tags;
 *  - IPv4: version 4, IHL >= 5, IHL and total length within the frame
 *    (trailing Ethernet padding is ignored), no fragments;
 *  - IPv6: version 6, payload length within the frame, at most
 *    LH_MAX_IPV6_EXT extension headers (hop-by-hop, routing, fragment with
 *    offset 0 and M clear, destination options, AH);
 *  - UDP: length >= 8 and within the IP payload; RoCEv2 when dport is 4791;
 *  - BTH: transport version 0, an opcode roce_opcode_info() knows, and room
 *    for its extension headers, pad and ICRC inside the UDP length.
 * Works on both XDP and TC: the cursor needs data, data_end and the length
 * of the whole packet.
 */
#ifndef LH_BPF_PARSE_H
#define LH_BPF_PARSE_H

#include "lh_stats.h"
#include "rocev2.h"

#define LH_MAX_VLANS 2
#define LH_MAX_IPV6_EXT 6

#ifndef ETH_P_IP
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8
#endif
#define LH_IPPROTO_UDP 17
#define LH_IPV4_MF 0x2000
#define LH_IPV4_OFFSET 0x1fff
#define LH_IPV6_FRAG_MASK 0xfff9 /* fragment offset and M flag */

struct hdr_cursor {
	void *pos;
	void *data; /* start of the packet: offsets are relative to it */
	void *data_end; /* end of the linear part: headers must lie before it */
	__u32 pkt_len; /* whole packet, with XDP frags or skb paged data */
	__u32 reason; /* enum lh_stat, set when a parser returns -1 */
};

struct lh_vlan_hdr {
	__be16 tci;
	__be16 proto;
};

/* What lh_parse_packet() found about a RoCEv2 packet */
struct lh_pkt_meta {
	struct ethhdr *eth;
	struct iphdr *ip4; /* one of ip4 / ip6 is set */
	struct ipv6hdr *ip6;
	struct udphdr *udp;
	struct roce_bth *bth;
	__u32 opflags; /* roce_opcode_info() */
	__u16 l3_off; /* offsets from the start of the packet */
	__u16 l4_off;
	__u16 bth_off;
	__u16 udp_len;
	__u16 icrc_off;
	__u8 nr_vlans;
	__u8 ip_proto;
};

/*
 * pkt_len is the length of the whole packet (bpf_xdp_get_buff_len(),
 * skb->len): length fields are checked against it, header reads against
 * data_end, so jumbo frames in XDP frags parse like linear ones.
 */
static __always_inline void cursor_init(struct hdr_cursor *c, void *data, void *data_end,
					__u32 pkt_len)
{
	c->pos = data;
	c->data = data;
	c->data_end = data_end;
	c->pkt_len = pkt_len;
	c->reason = 0;
}

/* Bytes of packet from the cursor to the end of the whole packet */
static __always_inline __u32 cursor_rest(const struct hdr_cursor *c)
{
	__u32 off = (__u32)(c->pos - c->data);

	return off < c->pkt_len ? c->pkt_len - off : 0;
}

static __always_inline int parse_fail(struct hdr_cursor *c, enum lh_stat reason)
{
	c->reason = reason;
	return -1;
}

/* Ethernet and VLAN tags; returns the inner ethertype in host order */
static __always_inline int parse_ethhdr(struct hdr_cursor *c, struct ethhdr **ethp, __u8 *nr_vlans)
{
	struct ethhdr *eth = c->pos;
	struct lh_vlan_hdr *vh;
	__u16 proto;
	int i;

	if ((void *)(eth + 1) > c->data_end)
		return parse_fail(c, LH_STAT_PARSE_TRUNC_ETH);
	*ethp = eth;
	c->pos = eth + 1;
	proto = bpf_ntohs(eth->h_proto);
	*nr_vlans = 0;
#pragma unroll
	for (i = 0; i <= LH_MAX_VLANS; i++) {
		if (proto != ETH_P_8021Q && proto != ETH_P_8021AD)
			return proto;
		if (i == LH_MAX_VLANS)
			return parse_fail(c, LH_STAT_PARSE_VLAN_DEPTH);
		vh = c->pos;
		if ((void *)(vh + 1) > c->data_end)
			return parse_fail(c, LH_STAT_PARSE_TRUNC_VLAN);
		proto = bpf_ntohs(vh->proto);
		c->pos = vh + 1;
		*nr_vlans = i + 1;
	}
	return proto;
}

/*
 * IPv4 header; returns the IP protocol. *ip_len is the total length: the IP
 * payload ends there, whatever Ethernet padding follows.
 */
static __always_inline int parse_iphdr(struct hdr_cursor *c, struct iphdr **iphp, __u32 *ip_len)
{
	struct iphdr *iph = c->pos;
	__u32 ihl, tot;

	if ((void *)(iph + 1) > c->data_end)
		return parse_fail(c, LH_STAT_PARSE_TRUNC_IP);
	if (iph->version != 4)
		return parse_fail(c, LH_STAT_PARSE_BAD_IP_VERSION);
	ihl = iph->ihl * 4;
	if (ihl < sizeof(*iph))
		return parse_fail(c, LH_STAT_PARSE_BAD_IP_HDR_LEN);
	if (c->pos + ihl > c->data_end)
		return parse_fail(c, LH_STAT_PARSE_TRUNC_IP);
	tot = bpf_ntohs(iph->tot_len);
	if (tot < ihl || tot > cursor_rest(c))
		return parse_fail(c, LH_STAT_PARSE_BAD_IP_LEN);
	*iphp = iph;
	if (iph->frag_off & bpf_htons(LH_IPV4_MF | LH_IPV4_OFFSET))
		return parse_fail(c, LH_STAT_PARSE_IP_FRAGMENT);
	c->pos += ihl;
	*ip_len = tot - ihl;
	return iph->protocol;
}

/*
 * IPv6 header and extension headers; returns the upper-layer protocol and
 * leaves in *ip_len the bytes from the cursor to the end of the IP payload.
 */
static __always_inline int parse_ip6hdr(struct hdr_cursor *c, struct ipv6hdr **ip6hp, __u32 *ip_len)
{
	struct ipv6hdr *ip6h = c->pos;
	__u32 rem, xlen;
	__u8 nh;
	int i;

	if ((void *)(ip6h + 1) > c->data_end)
		return parse_fail(c, LH_STAT_PARSE_TRUNC_IP);
	if (ip6h->version != 6)
		return parse_fail(c, LH_STAT_PARSE_BAD_IP_VERSION);
	rem = bpf_ntohs(ip6h->payload_len);
	if (sizeof(*ip6h) + rem > cursor_rest(c))
		return parse_fail(c, LH_STAT_PARSE_BAD_IP_LEN);
	*ip6hp = ip6h;
	c->pos = ip6h + 1;
	nh = ip6h->nexthdr;

	/* Bounded walk: the verifier sees LH_MAX_IPV6_EXT + 1 iterations at most */
	for (i = 0; i <= LH_MAX_IPV6_EXT; i++) {
		__u8 *x = c->pos;

		switch (nh) {
		case 0: /* hop-by-hop options */
		case 43: /* routing */
		case 44: /* fragment */
		case 51: /* authentication header */
		case 60: /* destination options */
			break;
		default:
			*ip_len = rem;
			return nh;
		}
		if (i == LH_MAX_IPV6_EXT)
			return parse_fail(c, LH_STAT_PARSE_IPV6_EXT_DEPTH);
		if (rem < 8 || (void *)(x + 8) > c->data_end)
			return parse_fail(c, LH_STAT_PARSE_TRUNC_IPV6_EXT);
		if (nh == 44) {
			if (((__u16)x[2] << 8 | x[3]) & LH_IPV6_FRAG_MASK)
				return parse_fail(c, LH_STAT_PARSE_IP_FRAGMENT);
			xlen = 8;
		} else if (nh == 51) {
			xlen = ((__u32)x[1] + 2) * 4;
		} else {
			xlen = ((__u32)x[1] + 1) * 8;
		}
		if (rem < xlen || (void *)x + xlen > c->data_end)
			return parse_fail(c, LH_STAT_PARSE_TRUNC_IPV6_EXT);
		nh = x[0];
		rem -= xlen;
		c->pos = (void *)x + xlen;
	}
	return parse_fail(c, LH_STAT_PARSE_IPV6_EXT_DEPTH);
}

/* UDP header within ip_len bytes of IP payload; returns the destination port */
static __always_inline int parse_udphdr(struct hdr_cursor *c, __u32 ip_len, struct udphdr **udphp,
					__u32 *udp_len)
{
	struct udphdr *udph = c->pos;
	__u32 len;

	if (ip_len < sizeof(*udph) || (void *)(udph + 1) > c->data_end)
		return parse_fail(c, LH_STAT_PARSE_TRUNC_UDP);
	len = bpf_ntohs(udph->len);
	if (len < sizeof(*udph) || len > ip_len)
		return parse_fail(c, LH_STAT_PARSE_BAD_UDP_LEN);
	*udphp = udph;
	*udp_len = len;
	c->pos = udph + 1;
	return bpf_ntohs(udph->dest);
}

/*
 * BTH and the room its opcode needs (extension headers, pad, ICRC) within
 * roce_len bytes of UDP payload; returns the opcode. Does not advance past
 * the extension headers: lh_roce_ext() reaches them.
 */
static __always_inline int parse_bth(struct hdr_cursor *c, __u32 roce_len, struct roce_bth **bthp,
				     __u32 *opflags)
{
	struct roce_bth *bth = c->pos;
	__u32 f;

	if (roce_len < sizeof(*bth) || (void *)(bth + 1) > c->data_end)
		return parse_fail(c, LH_STAT_PARSE_TRUNC_BTH);
	if (bth_tver(bth) != 0)
		return parse_fail(c, LH_STAT_PARSE_BAD_BTH_VERSION);
	f = roce_opcode_info(bth->opcode);
	if (!f)
		return parse_fail(c, LH_STAT_PARSE_UNKNOWN_OPCODE);
	if (roce_len < sizeof(*bth) + roce_ext_hdr_len(f) + bth_padcnt(bth) + ROCE_ICRC_LEN)
		return parse_fail(c, LH_STAT_PARSE_TRUNC_ROCE);
	*bthp = bth;
	*opflags = f;
	return bth->opcode;
}

/*
 * Returns x unchanged, but the verifier, which checks global functions on
 * their own, sees an unknown value come back: the VLAN depths and IPv6
 * extension chains then continue as one state instead of one per layout,
 * which keeps programs built on the parser far below the verifier's limit.
 */
__noinline __u32 lh_widen(__u32 x)
{
	return x;
}

/* Re-point the cursor at offset off (< 1024) from the start, as a widened value */
static __always_inline void cursor_rewind(struct hdr_cursor *c, __u32 off)
{
	off = lh_widen(off) & 0x3ff;
	c->pos = c->data + off;
}

/*
 * Parse a whole frame. Returns LH_STAT_ROCE with *m filled for a RoCEv2
 * packet, or the LH_STAT_PARSE_* reason it is not one.
 */
static __always_inline enum lh_stat lh_parse_packet(struct hdr_cursor *c, struct lh_pkt_meta *m)
{
	__u32 ip_len = 0, udp_len = 0;
	int proto;

	proto = parse_ethhdr(c, &m->eth, &m->nr_vlans);
	if (proto < 0)
		return c->reason;
	m->l3_off = c->pos - c->data;
	cursor_rewind(c, m->l3_off);
	if (proto == ETH_P_IP)
		proto = parse_iphdr(c, &m->ip4, &ip_len);
	else if (proto == ETH_P_IPV6)
		proto = parse_ip6hdr(c, &m->ip6, &ip_len);
	else
		return LH_STAT_PARSE_NON_IP;
	if (proto < 0)
		return c->reason;
	m->ip_proto = proto;
	if (proto != LH_IPPROTO_UDP)
		return LH_STAT_PARSE_NON_UDP;
	m->l4_off = c->pos - c->data;
	cursor_rewind(c, m->l4_off);
	ip_len = lh_widen(ip_len) & 0xffff;
	proto = parse_udphdr(c, ip_len, &m->udp, &udp_len);
	if (proto < 0)
		return c->reason;
	if (proto != ROCEV2_UDP_PORT)
		return LH_STAT_PARSE_NON_ROCE;
	m->udp_len = udp_len;
	m->bth_off = c->pos - c->data;
	if (parse_bth(c, udp_len - sizeof(struct udphdr), &m->bth, &m->opflags) < 0)
		return c->reason;
	m->icrc_off = m->l4_off + udp_len - ROCE_ICRC_LEN;
	return LH_STAT_ROCE;
}

/*
 * Pointer to the extension header 'which' (one ROCE_OPF_*) of size 'size', or
 * NULL when the opcode has none or it is out of bounds.
 */
static __always_inline void *lh_roce_ext(struct hdr_cursor *c, const struct lh_pkt_meta *m,
					 __u32 which, __u32 size)
{
	void *p;
	__u32 off;

	if (!(m->opflags & which))
		return NULL;
	off = roce_ext_hdr_off(m->opflags, which);
	if (off > 64) /* keeps the offset bounded for the verifier */
		return NULL;
	p = (void *)(m->bth + 1) + off;
	if (p + size > c->data_end)
		return NULL;
	return p;
}

#endif /* LH_BPF_PARSE_H */
