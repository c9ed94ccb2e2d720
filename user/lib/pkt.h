/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * RoCEv2 packet builder and parser for user space: Ethernet, up to two
 * 802.1Q/802.1ad tags, IPv4 or IPv6 (with extension headers when parsing),
 * UDP, BTH and its extension headers, payload, pad and ICRC.
 *
 * The parser applies exactly the rules of the BPF parser (bpf/lib/parse.h) and
 * reports the same outcome codes (enum lh_stat), so the two can be checked
 * against each other packet by packet.
 */
#ifndef LH_USER_PKT_H
#define LH_USER_PKT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <netinet/in.h>

#include "lh_stats.h"
#include "rocev2.h"

#define LH_ETH_ALEN 6
#define LH_MAX_VLANS 2
#define LH_MAX_IPV6_EXT 6
#define LH_ETH_P_IPV4 0x0800
#define LH_ETH_P_IPV6 0x86dd
#define LH_ETH_P_8021Q 0x8100
#define LH_ETH_P_8021AD 0x88a8

union lh_ip_addr {
	struct in_addr v4;
	struct in6_addr v6;
	uint8_t b[16];
};

/* The RoCEv2 headers in host order; extension headers are used as the opcode says */
struct lh_roce_hdrs {
	uint8_t opcode;
	bool se; /* solicited event */
	bool mig; /* migration state */
	uint8_t tver; /* transport version, 0 */
	uint16_t pkey;
	uint8_t byte4; /* FECN | BECN | resv6, not covered by the ICRC */
	uint32_t dqpn;
	bool ackreq;
	uint32_t psn;
	struct {
		uint64_t va;
		uint32_t rkey;
		uint32_t dmalen;
	} reth;
	struct {
		uint8_t syndrome;
		uint32_t msn;
	} aeth;
	struct {
		uint32_t qkey;
		uint32_t sqpn;
	} deth;
	uint32_t imm;
	uint32_t ieth_rkey;
	uint32_t feth;
	struct {
		uint64_t va;
		uint32_t rkey;
		uint64_t swap_add;
		uint64_t compare;
	} atomic;
	uint64_t atomic_ack_orig;
};

struct lh_vlan_tag {
	uint16_t tpid; /* LH_ETH_P_8021Q or LH_ETH_P_8021AD */
	uint16_t tci; /* PCP(3) | DEI(1) | VID(12) */
};

/* What lh_pkt_build() writes. lh_pkt_spec_init() gives rxe-like defaults. */
struct lh_pkt_spec {
	bool l2; /* false: the packet starts at the IP header */
	uint8_t dst_mac[LH_ETH_ALEN];
	uint8_t src_mac[LH_ETH_ALEN];
	unsigned int nr_vlans;
	struct lh_vlan_tag vlan[LH_MAX_VLANS];

	int family; /* AF_INET or AF_INET6 */
	union lh_ip_addr src;
	union lh_ip_addr dst;
	uint8_t tos; /* IPv4 TOS or IPv6 traffic class */
	uint8_t ttl; /* TTL or hop limit */
	uint32_t flow_label; /* IPv6 only */
	uint16_t ip_id; /* IPv4 only */
	bool df; /* IPv4 don't-fragment */

	uint16_t sport;
	uint16_t dport;
	bool udp_csum; /* compute the UDP checksum; else 0 as rxe does over IPv4 */

	struct lh_roce_hdrs roce;
	const void *payload;
	size_t payload_len;
	/* ICRC: computed unless icrc_override is set (tests of bad ICRCs) */
	bool icrc_override;
	uint32_t icrc;
};

/* What lh_pkt_parse() found; offsets are from the start of the buffer */
struct lh_pkt {
	enum lh_stat result; /* LH_STAT_ROCE or the LH_STAT_PARSE_* reason */
	size_t len; /* bytes given to the parser */
	unsigned int nr_vlans;
	struct lh_vlan_tag vlan[LH_MAX_VLANS];
	uint16_t ethertype; /* after the VLAN tags */
	size_t l3_off;
	int family;
	union lh_ip_addr src;
	union lh_ip_addr dst;
	uint8_t tos;
	uint8_t ttl;
	uint8_t ip_proto; /* transport protocol after IPv6 extension headers */
	size_t l4_off;
	uint16_t sport;
	uint16_t dport;
	uint16_t udp_len;
	size_t bth_off;
	uint32_t opflags; /* roce_opcode_info() */
	struct lh_roce_hdrs roce;
	size_t payload_off;
	size_t payload_len; /* without pad */
	uint32_t pad;
	size_t icrc_off;
	uint32_t icrc; /* as found on the wire */
};

/* Defaults: Ethernet, IPv4 or IPv6, TTL 64, DF, UDP 4791, P_Key 0xffff, RC SEND_ONLY */
void lh_pkt_spec_init(struct lh_pkt_spec *s, int family);

/* Bytes lh_pkt_build() needs for this spec */
size_t lh_pkt_size(const struct lh_pkt_spec *s);

/* Build the packet into buf; returns its length, -ENOSPC or -EINVAL */
ssize_t lh_pkt_build(const struct lh_pkt_spec *s, void *buf, size_t cap);

/*
 * A plain UDP datagram with the spec's link, IP and UDP fields (its RoCE
 * fields are ignored) and the given payload; the UDP checksum is computed.
 * Returns its length, -ENOSPC or -EINVAL.
 */
ssize_t lh_udp_build(const struct lh_pkt_spec *s, const void *payload, size_t len, void *buf,
		     size_t cap);

/*
 * Parse buf (starting with Ethernet when l2, else with the IP header) and fill
 * p. Returns p->result: LH_STAT_ROCE for a complete RoCEv2 packet, otherwise
 * the reason it is not one (the same code the BPF parser counts).
 */
enum lh_stat lh_pkt_parse(const void *buf, size_t len, bool l2, struct lh_pkt *p);

/* ICRC of a parsed RoCE packet as it should be; 0 on success */
int lh_pkt_icrc_calc(const void *buf, const struct lh_pkt *p, uint32_t *icrc);
/* Whether the ICRC found on the wire is right */
bool lh_pkt_icrc_ok(const void *buf, const struct lh_pkt *p);
/* Recompute and write the ICRC (after changing covered fields) */
int lh_pkt_icrc_update(void *buf, const struct lh_pkt *p);

/*
 * An address in 16 bytes as the map keys hold it: IPv4 mapped into IPv6
 * (::ffff:a.b.c.d, RFC 4291 section 2.5.5.2). v4 in network order.
 */
void lh_addr16_from_v4(uint8_t out[16], uint32_t v4);
/* "aa:bb:cc:dd:ee:ff" into mac (untouched on error); 0 or -EINVAL */
int lh_parse_mac(const char *s, uint8_t mac[6]);
/* An IPv4 or IPv6 address into *a and its AF_* into *family (untouched on error); 0 or -EINVAL */
int lh_parse_ip(const char *s, union lh_ip_addr *a, int *family);
/* Whether a 16-byte address is an IPv4-mapped one */
bool lh_addr16_is_v4(const uint8_t a[16]);

/* Internet checksum helpers (RFC 1071) */
uint16_t lh_inet_csum(const void *data, size_t len, uint32_t sum);
/* Fill in IPv4 header checksum / UDP checksum of a parsed packet */
void lh_pkt_ipv4_csum_update(void *buf, const struct lh_pkt *p);
void lh_pkt_udp_csum_update(void *buf, const struct lh_pkt *p);

/* Name of an opcode ("RC_SEND_ONLY") or NULL; field name of an lh_stat ("parse_trunc_ip") */
const char *lh_opcode_name(uint8_t opcode);
/* Its counter field in struct lh_opcode_stats ("rc_send_only") or NULL */
const char *lh_opcode_field(uint8_t opcode);
const char *lh_stat_name(enum lh_stat s);
const char *lh_stat_desc(enum lh_stat s);

#endif /* LH_USER_PKT_H */
