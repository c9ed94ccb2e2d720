/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What longhaul's gateways say to each other on the wire (docs/protocol.md).
 *
 * Depot-NACK: a complete RoCEv2 NAK (AETH 0x60) from the receiver to the
 * sender with PSN = the Depot's ePSN (the first PSN it has not delivered),
 * so it is exactly the NAK the receiving NIC would have sent: a NIC without
 * a Sentry in front of it rewinds correctly. The mark lives only in the six
 * reserved bits of BTH byte 4, outside the ICRC (LH_DNACK_* in lh_maps.h).
 *
 * Depot report: a UDP datagram from the receiver's address to the sender's,
 * port LH_REPORT_PORT, with the Depot's full view of a QP: ePSN, ePSN_D and
 * which PSNs between them it holds. The Sentry on the path consumes it; with
 * no Sentry it reaches the sending host, which has nothing listening there.
 */
#ifndef LH_PROTO_H
#define LH_PROTO_H

#include "rocev2.h"
#include "lh_siphash.h"

#define LH_REPORT_PORT 4792
#define LH_REPORT_MAGIC 0x4c48 /* "LH" */
#define LH_REPORT_VERSION 1
#define LH_REPORT_BITS 256

/*
 * A periodic T/C-SACK report (every T or every N packets while data
 * arrives, draft-chen-tsvwg-updated-ack), not only one about a gap: the
 * Sentry knows from it that its Depot reports, so silence means loss.
 */
#define LH_REPORT_F_SACK 0x0001
/*
 * An 8-byte tag follows the report: SipHash-2-4 keyed with the peers' shared
 * report key (longhauld --report-key-file) over the IP source and
 * destination (16 bytes each, IPv4 mapped into IPv6) and the 60 bytes of the
 * report, flags included; the tag on the wire as the paper serializes it
 * (little-endian). A Sentry with a key takes no report without a valid tag.
 */
#define LH_REPORT_F_MAC 0x0002
#define LH_REPORT_MAC_LEN 8

enum lh_msg_type {
	LH_MSG_DEPOT_REPORT = 1,
};

/* UDP payload of a Depot report; every field in network byte order */
struct lh_report {
	__be16 magic;
	__u8 version;
	__u8 type; /* enum lh_msg_type */
	__be32 dqpn; /* the data packets' destination QPN (the responder's) */
	__be32 peer_qpn; /* the requester's QPN */
	__be32 epsn; /* ePSN: first PSN not delivered to the receiving NIC */
	__be32 epsn_d; /* ePSN_D: one past the highest PSN received */
	__be16 nbits; /* bits of held[] that count: ePSN_D - ePSN, at most 256 */
	__be16 flags; /* LH_REPORT_F_* */
	__be32 seq; /* increasing per sender of reports, so per QP; 0: unordered */
	__u8 held[LH_REPORT_BITS / 8]; /* bit i (byte i / 8, LSB first): ePSN + i is held */
} LH_PACKED;
_Static_assert(sizeof(struct lh_report) == 60, "lh_report is 60 bytes");

/*
 * Whether a UDP payload of udp_payload bytes holding *r is a Depot report
 * this version understands: the one check of the Sentry's XDP and TC halves.
 */
static __always_inline int lh_report_valid(const struct lh_report *r, __u32 udp_payload)
{
	return udp_payload >= sizeof(*r) && r->magic == lh_htons(LH_REPORT_MAGIC) &&
	       r->version == LH_REPORT_VERSION && r->type == LH_MSG_DEPOT_REPORT &&
	       lh_ntohs(r->nbits) <= LH_REPORT_BITS;
}

/*
 * Whether a report with seq is newer than the last one taken in (last, 0 for
 * none). Far behind (more than LH_REPORT_SEQ_WINDOW) is a restarted sender.
 */
#define LH_REPORT_SEQ_WINDOW 65536
static __always_inline int lh_report_seq_newer(__u32 seq, __u32 last)
{
	__s32 d = (__s32)(seq - last);

	return !seq || !last || d > 0 || d < -LH_REPORT_SEQ_WINDOW;
}

/*
 * The tag of report r sent from saddr to daddr (both 16 bytes, IPv4 mapped):
 * 92 bytes, 11 words and a 4-byte tail. k: the key words (lh_sip_key).
 */
static __always_inline __u64 lh_report_mac(const __u64 k[2], const __u8 *saddr, const __u8 *daddr,
					   const struct lh_report *r)
{
	const __u8 *b = (const __u8 *)r;
	struct lh_sip s;
	int i;

	lh_sip_init(&s, k);
	lh_sip_word(&s, lh_sip_le(saddr, 8));
	lh_sip_word(&s, lh_sip_le(saddr + 8, 8));
	lh_sip_word(&s, lh_sip_le(daddr, 8));
	lh_sip_word(&s, lh_sip_le(daddr + 8, 8));
LH_UNROLL
	for (i = 0; i < 7; i++)
		lh_sip_word(&s, lh_sip_le(b + 8 * i, 8));
	return lh_sip_final(&s, lh_sip_le(b + 56, 4), 32 + sizeof(*r));
}

#endif /* LH_PROTO_H */
