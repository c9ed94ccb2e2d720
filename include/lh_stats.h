/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Every counter longhaul's BPF programs keep: parse outcomes, verdicts and
 * drop/pass reasons. One X-macro X(ENUM, field, description) feeds the enum,
 * the fields of struct lh_stats (in enum order, so a counter is both
 * lh_stats.<field> and lh_stats_arr(v)[LH_STAT_<ENUM>]) and the descriptions
 * user space prints. The map holding it is a one-entry per-CPU array: one
 * lookup per packet, and `bpftool map dump` prints every field by name.
 *
 * The parse outcomes are exclusive: every packet a program sees moves
 * LH_STAT_RX and exactly one of the LH_STAT_PARSE_* / LH_STAT_ROCE counters.
 */
#ifndef LH_STATS_H
#define LH_STATS_H

#include "lh_types.h"
#include "rocev2.h"

#define LH_STATS(X)                                                                   \
	X(RX, rx, "packets seen by the program")                                          \
	X(PASS, pass, "packets passed on unchanged")                                        \
	X(ROCE, roce, "RoCEv2 packets parsed in full (BTH and extension headers)")          \
	X(PARSE_NON_IP, parse_non_ip, "not IPv4/IPv6 (ARP, LLDP ...): passed")                      \
	X(PARSE_TRUNC_ETH, parse_trunc_eth, "shorter than an Ethernet header")                         \
	X(PARSE_TRUNC_VLAN, parse_trunc_vlan, "802.1Q/802.1ad tag cut short")                           \
	X(PARSE_VLAN_DEPTH, parse_vlan_depth, "more VLAN tags than the parser follows")                 \
	X(PARSE_TRUNC_IP, parse_trunc_ip, "IPv4/IPv6 header cut short")                               \
	X(PARSE_BAD_IP_VERSION, parse_bad_ip_version, "IP version field disagrees with the ethertype")      \
	X(PARSE_BAD_IP_HDR_LEN, parse_bad_ip_hdr_len, "IPv4 IHL below 5")                                   \
	X(PARSE_BAD_IP_LEN, parse_bad_ip_len, "IP length field disagrees with the frame")               \
	X(PARSE_IP_FRAGMENT, parse_ip_fragment, "IPv4 or IPv6 fragment (RoCEv2 is never fragmented)")    \
	X(PARSE_TRUNC_IPV6_EXT, parse_trunc_ipv6_ext, "IPv6 extension header cut short")                    \
	X(PARSE_IPV6_EXT_DEPTH, parse_ipv6_ext_depth, "more IPv6 extension headers than the parser follows") \
	X(PARSE_NON_UDP, parse_non_udp, "IP payload is not UDP")                                     \
	X(PARSE_TRUNC_UDP, parse_trunc_udp, "UDP header cut short")                                    \
	X(PARSE_BAD_UDP_LEN, parse_bad_udp_len, "UDP length disagrees with the IP length")               \
	X(PARSE_NON_ROCE, parse_non_roce, "UDP, but not to port 4791")                                \
	X(PARSE_TRUNC_BTH, parse_trunc_bth, "UDP 4791 payload shorter than BTH")                       \
	X(PARSE_BAD_BTH_VERSION, parse_bad_bth_version, "BTH transport version is not 0")                    \
	X(PARSE_UNKNOWN_OPCODE, parse_unknown_opcode, "BTH opcode longhaul does not know (RD, XRC ...)")    \
	X(PARSE_TRUNC_ROCE, parse_trunc_roce, "too short for its extension headers, pad and ICRC")  \
	X(ICRC_OK, icrc_ok, "ICRC verified and right (when verification is on)")              \
	X(ICRC_BAD, icrc_bad, "ICRC verified and wrong: a NIC would drop it (still passed)")   \
	X(ICRC_ERROR, icrc_error, "ICRC could not be computed (headers too long, jumbo)") \
	X(DROP, drop, "packets longhaul dropped on purpose (held, filtered, absorbed)") \
	X(NOT_HANDLED, not_handled, "RoCEv2 the data path does not act on (READ, atomics, UD): passed") \
	X(QP_TABLE_FULL, qp_table_full, "new QP but lh_qp is full, or was within 10 ms: passed unchanged") \
	X(QP_STALE, qp_stale, "a new connection on an old QP's key (far PSN after idle): passed, entry forgotten") \
	X(ACK_UNPAIRED, ack_unpaired, "ACK/NAK of a QP not yet paired with its data direction: passed") \
	X(PAIRED, paired, "ACK paired with its data QP: the one unpaired QP between the hosts that forwarded its PSN") \
	X(PAIR_EXACT, pair_exact, "ACK paired by its exact PSN (lh_pair_psn), with no pass over the host pair's list") \
	X(PAIR_AMBIGUOUS, pair_ambiguous, "ACK whose PSN several unpaired QPs between the hosts forwarded: left unpaired, passed") \
	X(PAIR_BLOCKED, pair_blocked, "ACK not paired: a QP could not be learned or listed in the last 2 s (its ACKs could be taken for another's)") \
	X(PAIR_UNLISTED, pair_unlisted, "new QP not listed for pairing (host pair map or list full): pairing blocked for 2 s") \
	X(NAK_BUILD_FAIL, nak_build_fail, "a NAK could not be built in place: packet passed") \
	X(DEPOT_NEW_QP, depot_new_qp, "Depot: QP learned from data arriving from the WAN") \
	X(DEPOT_IN_ORDER, depot_in_order, "Depot: in-order packet delivered, copy kept for backup") \
	X(DEPOT_HELD, depot_held, "Depot: out-of-order packet held in the reorder pool") \
	X(DEPOT_NACK, depot_nack, "Depot: Depot-NACK sent for a new gap") \
	X(DEPOT_DUP_DELIVERED, depot_dup_delivered, "Depot: retransmission of a delivered PSN: passed") \
	X(DEPOT_DUP_HELD, depot_dup_held, "Depot: retransmission of a held PSN: dropped") \
	X(DEPOT_WINDOW, depot_window, "Depot: more PSNs in flight than the ring holds: passed unchanged, no copy") \
	X(DEPOT_RING_BUSY, depot_ring_busy, "Depot: ring position still holds an unacked PSN: passed") \
	X(DEPOT_UNPAIRED, depot_unpaired, "Depot: a gap before pairing: held, the agent NACKs once paired") \
	X(DEPOT_WIDE_UNPAIRED, depot_wide_unpaired, "Depot: a gap of a QP learned mid-flight whose first PSN the receiving NIC has not ACKed yet (unsure of its ePSN): passed unchanged, not held") \
	X(DEPOT_ACKREQ_PAIR, depot_ackreq_pair, "Depot: AckReq set on a delivery of an unpaired QP, to pair it") \
	X(DEPOT_NO_RING, depot_no_ring, "Depot: QP without a ring (all in use): passed unchanged") \
	X(DEPOT_TOO_BIG, depot_too_big, "Depot: packet larger than a pool slot: passed unchanged") \
	X(POOL_EMPTY, pool_empty, "Depot: no free pool slot: passed unchanged") \
	X(DEPOT_NO_BACKUP, depot_no_backup, "Depot: in-order packet delivered without a backup copy") \
	X(DEPOT_RELEASED, depot_released, "Depot: held packets released in PSN order") \
	X(DEPOT_RELEASE_RUNS, depot_release_runs, "Depot: release runs triggered by a gap filler") \
	X(DEPOT_RELEASE_MORE, depot_release_more, "Depot: run longer than a burst: agent continues it") \
	X(DEPOT_ACK, depot_ack, "Depot: ACK from the receiving NIC seen") \
	X(DEPOT_BACKUP_FREED, depot_backup_freed, "Depot: backup copies freed by the NIC's ACKs") \
	X(DEPOT_NAK_LOCAL, depot_nak_local, "Depot: NIC NAK answered from the backup pool") \
	X(DEPOT_REPLAYED, depot_replayed, "Depot: packets re-sent from the backup pool") \
	X(DEPOT_NAK_FORWARDED, depot_nak_forwarded, "Depot: NIC NAK the pool cannot answer: forwarded") \
	X(NOT_PEER, not_peer, "a QP whose far host is in no --peer prefix: passed unchanged, not learned") \
	X(AGENTLESS_PASS, agentless_pass, "a kept data path without its agent for longer than allowed: passed as without longhaul") \
	X(DEPOT_NAK_UNPAIRED, depot_nak_unpaired, "Depot: NIC NAK of a QP not yet paired (no ACK seen): forwarded unchanged") \
	X(EMIT_FAIL, emit_fail, "Depot: a release or replay could not be emitted") \
	X(SENTRY_NEW_QP, sentry_new_qp, "Sentry: QP learned from data arriving from the DC") \
	X(SENTRY_IN_ORDER, sentry_in_order, "Sentry: new in-order packet passed") \
	X(SENTRY_NACK, sentry_nack, "Sentry: Sentry-NACK for a gap inside the sender DC") \
	X(SENTRY_GAP_DROP, sentry_gap_drop, "Sentry: out-of-order packet after a Sentry-NACK: dropped") \
	X(SENTRY_UNPAIRED, sentry_unpaired, "Sentry: gap before pairing or before the receiver's first ACK (no NACK possible): passed") \
	X(SENTRY_RETX_PASS, sentry_retx_pass, "Sentry: retransmission outside an episode: passed") \
	X(SENTRY_SR_PASS, sentry_sr_pass, "Sentry: retransmission of a missing PSN: passed") \
	X(SENTRY_SR_DROP, sentry_sr_drop, "Sentry: retransmission the Depot holds: dropped") \
	X(SENTRY_ACK_ECHO, sentry_ack_echo, "Sentry: a replay of PSNs the receiver ACKed answered with its ACK") \
	X(SENTRY_ACKED_DROP, sentry_acked_drop, "Sentry: resend of a PSN the NIC knows is acknowledged, outside an episode: dropped (between ACK echoes)") \
	X(SENTRY_WATCHDOG, sentry_watchdog, "Sentry: a recovery stuck past the watchdog given up (filter off)") \
	X(SENTRY_DNACK_FORWARD, sentry_dnack_forward, "Sentry: Depot-NACK turned into the NIC's NAK") \
	X(SENTRY_DNACK_ABSORB, sentry_dnack_absorb, "Sentry: Depot-NACK recorded, NIC already rewinding") \
	X(SENTRY_EPISODE_END, sentry_episode_end, "Sentry: recovery episode ended (replay caught up or ACKed)") \
	X(SENTRY_EPISODE_TIMER, sentry_episode_timer, "Sentry: the NIC's timer resent from the receiver's ACK point with nothing missing (that ACK was lost): episode ended, the resend passes") \
	X(SENTRY_EPISODE_CANCEL, sentry_episode_cancel, "Sentry: plain NAK from the far NIC: filtering stopped") \
	X(SENTRY_NAK_BACK, sentry_nak_back, "Sentry: the far NIC NAKed a PSN it had ACKed (a go-back-0 responder dropped a partial message): its ACK point goes back there, the resend passes") \
	X(SENTRY_CACHED, sentry_cached, "Sentry: copy kept of a missing PSN it let through") \
	X(SENTRY_UNCACHED, sentry_uncached, "Sentry: cached copies freed by the far NIC's ACKs") \
	X(SENTRY_REPORT, sentry_report, "Sentry: Depot report taken in") \
	X(SENTRY_REPORT_BAD, sentry_report_bad, "Sentry: malformed message on the report port") \
	X(SENTRY_REPORT_UNKNOWN, sentry_report_unknown, "Sentry: report for a QP it does not know: passed") \
	X(SENTRY_REPORT_STALE, sentry_report_stale, "Sentry: report older than one taken in (reordered on the WAN) or than the receiver's ACK point: dropped") \
	X(SENTRY_ACK_UNSENT, sentry_ack_unsent, "Sentry: ACK, NAK or Depot-NACK naming PSNs it never forwarded (forged, or data that bypassed it): passed unchanged, the QP untouched") \
	X(SENTRY_DNACK_STALE, sentry_dnack_stale, "Sentry: Depot-NACK before the receiver's ACK point (reordered on the WAN, or forged): dropped, the QP untouched") \
	X(SENTRY_REPORT_UNSENT, sentry_report_unsent, "Sentry: report naming PSNs it never forwarded (forged): dropped, the QP untouched") \
	X(SENTRY_RESENT, sentry_resent, "Sentry: missing PSNs re-sent from its own copies") \
	X(SENTRY_GW_FALLBACK, sentry_gw_fallback, "Sentry, gateway recovery: no room for a copy (pool empty or copies over rate x 2 RTT): that QP recovers the LR2 way until its data is acknowledged") \
	X(SENTRY_GW_RESUME, sentry_gw_resume, "Sentry, gateway recovery: a QP that fell back is all acknowledged: copies again") \
	X(SENTRY_GW_REPORT, sentry_gw_report, "Sentry, gateway recovery: report naming PSNs it has copies of, handed to the agent's paced re-send queue") \
	X(SENTRY_REPORT_NOMAC, sentry_report_nomac, "Sentry with a report key: report without a tag (an unkeyed or forged sender): dropped, the QP untouched") \
	X(SENTRY_REPORT_MAC, sentry_report_mac, "Sentry with a report key: report whose tag is wrong (forged, altered, or another key): dropped, the QP untouched") \
	X(QP_HOST_LIMIT, qp_host_limit, "a new QP whose far host has --host-qps QPs learned already: passed unchanged, not learned") \
	X(QP_HOSTPAIR_LIMIT, qp_hostpair_limit, "a new QP between two hosts that have --hostpair-qps QPs learned already: passed unchanged, not learned") \
	X(PAIR_UNLINKED, pair_unlinked, "ACK whose PSN a QP learned mid-flight (wide) forwarded, whose UDP source port does not link it to that QP: that QP not paired by it") \
	X(SENTRY_JUMP, sentry_jump, "Sentry: data beyond what it forwarded after an ACK or NAK that named it (a QP learned mid-flight) or a watchdog: taken as sent, no Sentry-NACK") \
	X(DEPOT_ACK_AHEAD, depot_ack_ahead, "Depot: the receiving NIC ACKed a PSN the Depot has not delivered (it reached the NIC another way, or the ACK is forged): nothing freed") \
	X(SENTRY_DNACK_RESEND, sentry_dnack_resend, "Sentry: Depot-NACK handed to lh_wan_in (XDP metadata) to answer at once with its copy of the first missing PSN") \
	X(SENTRY_DNACK_RESENT, sentry_dnack_resent, "Sentry: ... that copy sent back toward the Depot by lh_wan_in (TC), the NACK dropped") \
	X(DEPOT_NIC_BACK, depot_nic_back, "Depot: the receiving NIC NAKed a PSN before what the Depot delivered, with no backup from there (a go-back-0 NIC dropped its partial message): the Depot follows it back") \
	X(DEPOT_NIC_BACK_DUE, depot_nic_back_due, "Depot: ... during a release run: followed when the run ends (a run's slots are not freed under it)") \
	X(DEPOT_BACK_UNHELD, depot_back_unheld, "Depot: ... and dropped a packet it held past that PSN (the sender resends from there)") \
	X(DEPOT_BACK_DROP, depot_back_drop, "Depot: ... and until it is where it was, dropped what came past its ring (the NIC would drop it too, the sender resends it)") \
	X(PAIR_REPORT, pair_report, "Sentry: an unpaired QP paired from its Depot's report, which names both QPNs (a Sentry that started afresh while its Depot kept its pairing)") \
	X(PAIR_REPORT_CLASH, pair_report_clash, "Sentry: a report would pair an unpaired QP with a requester QPN another QP is paired with already: not paired") \
	X(DEPOT_LOST_TRACK, depot_lost_track, "Depot: the receiving NIC ACKed past what the Depot delivered, not after going back (PSNs reached it past the Depot): the QP passes, forgotten, learned anew (wide)")

enum lh_stat {
#define LH_STAT_ENUM(name, field, desc) LH_STAT_##name,
	LH_STATS(LH_STAT_ENUM)
#undef LH_STAT_ENUM
	LH_STAT_MAX
};

struct lh_stats {
#define LH_STAT_FIELD(name, field, desc) __u64 field;
	LH_STATS(LH_STAT_FIELD)
#undef LH_STAT_FIELD
};
_Static_assert(sizeof(struct lh_stats) == LH_STAT_MAX * sizeof(__u64), "one u64 per lh_stat");

/* RoCEv2 packets per BTH opcode, one field per opcode of ROCE_OPCODES */
struct lh_opcode_stats {
#define LH_OPCODE_FIELD(name, field, val) __u64 field;
	ROCE_OPCODES(LH_OPCODE_FIELD)
#undef LH_OPCODE_FIELD
};
_Static_assert(sizeof(struct lh_opcode_stats) == ROCE_OPCODE_IDX_MAX * sizeof(__u64),
	       "one u64 per opcode");

#endif /* LH_STATS_H */
