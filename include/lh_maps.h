/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Keys and values of the maps the LR2 data path shares between its BPF
 * programs and the agent (docs/maps.md says who writes and reads each), the
 * gateway configuration, the ring-buffer events, and the marks longhaul puts
 * on the wire (docs/protocol.md).
 */
#ifndef LH_MAPS_H
#define LH_MAPS_H

#include "lh_types.h"
#include "rocev2.h" /* psn_diff */
#ifndef __VMLINUX_H__
#include <linux/bpf.h> /* struct bpf_spin_lock */
#endif

/* ---- sizes fixed at compile time ---- */

/* PSN window a QP can have in flight at a gateway: rxe allows 128 unacked PSNs */
#define LH_RING_SIZE 256
#define LH_RING_MASK (LH_RING_SIZE - 1)
/* One pool slot holds an L3 packet: IP header, UDP, BTH, ext headers, 4096 payload, ICRC */
#define LH_SLOT_DATA 4224
/* Packets a release or replay emits per trigger; the agent continues longer runs */
#define LH_BURST 64
#define LH_NO_SLOT 0xffffffffU

/* ---- Depot-NACK mark (docs/protocol.md) ----
 * A Depot-NACK is a complete, valid RoCEv2 NAK (AETH syndrome 0x60) from the
 * receiver to the sender, so a NIC without a Sentry in front of it rewinds as
 * for its peer's own NAK. What makes it a Depot-NACK lives only in the six
 * reserved bits of BTH byte 4, which the ICRC does not cover:
 *   bit 5 (0x20)       set: this NAK comes from a Depot
 *   bits 0-4 (0x1f)    number of missing PSNs starting at the BTH PSN, minus 1
 * FECN and BECN (0xc0) keep their meaning.
 */
#define LH_DNACK_MARK 0x20
#define LH_DNACK_LEN_MASK 0x1f
#define LH_DNACK_MAX_RANGE 32

/* ---- flow key: the data direction of an RC connection ----
 * Addresses as IPv6, IPv4 mapped (::ffff:a.b.c.d). dqpn is the QPN the data
 * packets carry, i.e. the responder's QP.
 */
struct lh_qp_key {
	__u8 saddr[16];
	__u8 daddr[16];
	__u32 dqpn;
};
_Static_assert(sizeof(struct lh_qp_key) == 36, "lh_qp_key is 36 bytes");

/* lh_pair_psn: a PSN two unpaired QPs between the same hosts forwarded */
#define LH_PAIR_PSN_AMBIG 0xffffffffu
/* ... indexed for the first this many PSNs of a QP's range (LH_QPF_WIDE QPs not at all) */
#define LH_PAIR_PSN_SPAN 4096

/* lh_qp flags */
#define LH_QPF_PAIRED 0x01 /* peer_qpn (the requester's QPN) is known */
#define LH_QPF_IPV6 0x02
#define LH_QPF_DEPOT 0x04 /* data arrives from the WAN: this gateway is its Depot */
#define LH_QPF_SENTRY 0x08 /* data arrives from the DC: this gateway is its Sentry */
#define LH_QPF_RELEASING 0x10 /* Depot: a release run is being emitted */
#define LH_QPF_EPISODE 0x20 /* Sentry: an SR recovery episode is active */
#define LH_QPF_SNAK_SENT 0x40 /* Sentry: a Sentry-NACK for the gap at s.next went out */
#define LH_QPF_NO_RING 0x80 /* no ring index: the QP is passed through, counted */
#define LH_QPF_REWIND_PENDING 0x100 /* Sentry: a NAK went to the NIC, no replay seen yet */
#define LH_QPF_NIC_RETRY 0x200 /* Sentry: the NIC is in a retry and ignores NAKs until an ACK */
#define LH_QPF_NAK_DEFERRED 0x400 /* Sentry: a NAK (s.deferred) is owed to the NIC after that ACK */
/* Sentry, gateway recovery: no copy could be kept; LR2 recovery until all is ACKed */
#define LH_QPF_GW_OFF 0x800
/*
 * A packet of a new connection came on this QP's key (the QPN reused after
 * the QP was destroyed: perftest run after run): everything passes
 * unchanged until the agent forgets the entry; the next packet learns it anew
 */
#define LH_QPF_STALE 0x1000
/*
 * Sentry: s.una is the receiver's, put there by an ACK or a Depot-NACK the
 * Sentry saw and took in. Until then it is the first PSN seen, a guess: a
 * QP learned mid-flight (an agent started during a transfer, a QPN reused)
 * may have PSNs before it unacknowledged, so the Sentry neither NAKs a gap
 * (a NAK acknowledges what precedes it) nor drops a resend as acknowledged.
 */
#define LH_QPF_S_SYNCED 0x2000
/* Sentry: s.acked holds the receiver's own highest ACK point */
#define LH_QPF_S_ACKED 0x4000
/* Unpaired and in its pair of hosts' list (lh_hostpair): ACKs can pair it */
#define LH_QPF_LISTED 0x8000
/*
 * Learned while the gateway may have missed the QP's earlier packets (the
 * agent just started, or a QP could not be learned or listed): its ACKs may
 * name PSNs up to 65536 before p_lo or after p_hi, and pairing counts them in
 */
#define LH_QPF_WIDE 0x10000
/*
 * Depot, learned wide (mid-flight): its ePSN is the first PSN it saw, not
 * yet what the receiving NIC has. Until the NIC ACKs that PSN (d.acked
 * moves), a gap goes to the NIC unchanged and nothing claims an ePSN: a
 * Depot-NACK or report from it would acknowledge to the sending NIC PSNs
 * the receiver never got (a Depot restarted mid-transfer: QP errors)
 */
#define LH_QPF_D_UNSURE 0x20000
/*
 * Sentry: the NIC may have sent past s.next without this Sentry seeing it:
 * an ACK, NAK or Depot-NACK beyond s.next went to it (a QP learned
 * mid-flight, whose earlier packets went by before the programs ran), or the
 * watchdog gave a recovery up. The next PSN beyond s.next is taken as sent
 * (s.next moves there), not as a gap inside the sender DC: a Sentry-NACK from
 * the s.una of before would be older than what the NIC was told, which it
 * ignores, and the filter would drop its resends until it gives up: a QP
 * error.
 */
#define LH_QPF_S_JUMP 0x40000
/*
 * Depot: the receiving NIC went back (depot_nic_back): until d.deliv is where
 * it was (d.back_end), what arrives past the ring is dropped, not passed: a
 * go-back-N NIC drops what comes before its ePSN anyway (a go-back-0 one
 * also drops its partial message again), and the sender resends it all
 */
#define LH_QPF_D_BACK 0x80000
/*
 * Depot: the receiving NIC went back (to d.back_psn) while a release run was
 * being emitted: the Depot follows it when the run ends
 */
#define LH_QPF_D_BACK_DUE 0x100000
/* Sentry: any of these makes it filter or hold back; the watchdog clears them */
#define LH_QPF_SENTRY_BUSY \
	(LH_QPF_EPISODE | LH_QPF_SNAK_SENT | LH_QPF_NIC_RETRY | LH_QPF_REWIND_PENDING | \
	 LH_QPF_NAK_DEFERRED)

#define LH_SR_WORDS 4 /* Sentry's missing-PSN bitmap: 256 PSNs from s.base */

/*
 * Per-connection state, one entry per data direction (lh_qp). The spin lock
 * orders the decisions of the WAN-ingress XDP program and the DC TC programs
 * on the same QP; no helper is ever called while it is held.
 */
/*
 * The Depot's state of a QP whose data arrives from the WAN: it forwards in
 * order, holds what comes early, backs up what it forwarded, NACKs gaps
 */
struct lh_depot_state {
	__u32 deliv; /* ePSN: next PSN to deliver in order into the DC */
	__u32 high; /* ePSN_D: one past the highest PSN received */
	__u32 acked; /* the NIC acknowledged every PSN before this */
	__u32 release_after; /* PSN of the packet a release run follows */
	__u32 unsafe_end; /* one past the last PSN delivered without a backup copy */
	__u32 sack_cnt; /* data packets since the last count-triggered T/C-SACK */
	/*
	 * The newest packet with AckReq that went to the NIC (lh_dc_out) and
	 * when: the NIC ACKs it at once, so an ACK point still before it a while
	 * later means loss inside the receiver's DC that no NAK reported (rxe
	 * NAKs a gap once; that NAK, or the replay answering it, can be lost
	 * too). The agent then replays from the ACK point (--dc-timeout).
	 */
	__u32 ar_psn;
	__u32 rtt_psn; /* the AckReq PSN timed to its ACK (rtt_ns != 0) */
	/*
	 * The newest PSN a Depot-NACK of the programs carried: it told the sender
	 * that the receiver has every PSN before it, which the sender then never
	 * sends again; the DC timer watches until the NIC ACKs it
	 */
	__u32 nacked_psn;
	__u32 back_end; /* with LH_QPF_D_BACK, high when the NIC went back */
	__u32 back_psn; /* with LH_QPF_D_BACK_DUE, the PSN the NIC went back to */
	/* the round trip into the receiver's DC, smoothed (RFC 6298), us */
	__u32 srtt_us;
	__u32 rttvar_us;
	__u64 ar_ns; /* 0: none yet */
	__u64 rtt_ns; /* when rtt_psn went to the NIC; 0: nothing timed */
	__u64 last_nack_ns; /* last Depot-NACK */
};

/*
 * The Sentry's state of a QP whose data arrives from the DC: it turns
 * Depot-NACKs into NAKs for the NIC and filters the NIC's replay (SR), or
 * re-sends itself in gateway recovery
 */
struct lh_sentry_state {
	__u32 next; /* one past the highest PSN the NIC sent */
	__u32 replay; /* in an episode: one past the last PSN of the NIC's replay */
	__u32 end; /* in an episode: next when it began */
	__u32 base; /* PSN of bit 0 of missing */
	__u32 rewind; /* PSN of the last NAK passed on to the NIC */
	__u32 una; /* the receiver acknowledged every PSN before this */
	__u32 retry_psn; /* where the NIC's retry began: an ACK from there ends it */
	__u32 deferred; /* PSN of the NAK owed to the NIC (LH_QPF_NAK_DEFERRED) */
	__u64 missing[LH_SR_WORDS]; /* PSNs the Depot reported missing */
	__u32 echo_us; /* last ACK echoed to a replay of acknowledged PSNs (ktime >> 10) */
	__u32 echo_psn; /* the PSN the last echoed ACK (sentry_echo_due) acknowledged */
	__u32 report_seq; /* seq of the newest Depot report taken in, 0 none */
	/*
	 * ePSN of the newest Depot report taken in: a report with a later ePSN is
	 * newer whatever its seq says (the Depot's ePSN never goes back), so one
	 * report with a forged seq cannot make the Depot's own look stale for
	 * longer than its ePSN stands still
	 */
	__u32 report_epsn;
	__u64 tx_ns; /* when the last new PSN went toward the WAN */
	__u64 sack_ns; /* when the last T/C-SACK report came, 0 never */
	__u32 sack_epsn; /* the ePSN that report gave */
	/*
	 * The round trip of a request with AckReq (the responder ACKs it at once)
	 * from here to its ACK back here, WAN queueing included; one PSN timed at
	 * a time, the sample dropped when a loss before it was reported meanwhile
	 * (its ACK waited for the recovery: Karn's rule). Smoothed as RFC 6298,
	 * in microseconds; 0: no sample yet.
	 */
	__u32 rtt_psn; /* the timed PSN (rtt_tx_ns != 0) */
	__u64 rtt_tx_ns; /* when it went toward the WAN; 0: nothing timed */
	__u32 srtt_us;
	__u32 rttvar_us;
	__u32 rtt_samples; /* samples taken (the agent sees new ones) */
	/*
	 * Recoveries the watchdog gave up since one last ended by the receiver's
	 * ACK: each doubles the next one's watchdog (at most
	 * LH_WATCHDOG_BACKOFF_MAX times)
	 */
	__u32 wd_fired;
	/*
	 * One past the highest PSN the receiver's own ACKs acknowledged
	 * (LH_QPF_S_ACKED): a Depot-NACK before it is stale (reordered on the
	 * WAN, or forged), and so is a Depot report
	 */
	__u32 acked;
	/*
	 * How long a packet's copy stays, from its PSN going toward the WAN to
	 * the first ACK that covers it, queueing and recovery included: one new
	 * PSN timed at a time, never dropped (unlike rtt). The agent bounds
	 * gateway recovery's copies with it (copies = the rate they come at x
	 * how long each stays).
	 */
	__u32 stay_psn; /* the PSN timed (stay_tx_ns != 0) */
	__u32 stay_us; /* the last one measured; 0: none yet */
	__u64 stay_tx_ns; /* when stay_psn went toward the WAN; 0: none under way */
};

/*
 * One QP as this gateway sees it: a head both roles share (the lock, flags,
 * addresses, pairing), then each role's own state, as rxe keeps its
 * requester, completer and responder state apart. A gateway is a QP's Depot
 * or its Sentry (LH_QPF_DEPOT, LH_QPF_SENTRY), never both.
 */
struct lh_qp {
	struct bpf_spin_lock lock;
	__u32 flags;
	__u32 ring; /* index into lh_ring, LH_NO_SLOT when none */
	__u32 peer_qpn; /* the requester's QPN: ACKs and NAKs carry it */
	__u16 pkey;
	__u16 sport; /* UDP source port of the data packets */
	__u32 msn; /* MSN of the latest ACK from the responder NIC */
	__u64 last_rx_ns; /* last data packet, for the agent's timers and GC */
	__u64 last_progress_ns; /* last time d.deliv (Depot), or s.una, s.next or the replay (Sentry) moved */
	/* Depot: MAC the data came from on the WAN side; Sentry: that ACKs came from */
	__u8 wan_peer_mac[6];
	__u8 wan_mac[6]; /* our WAN interface's MAC (Depot: from data, Sentry: from ACKs) */
	/*
	 * The WAN interface this QP's traffic uses (a gateway may have several):
	 * where the agent sends what goes toward the WAN (Depot-NACK retries and
	 * reports, gateway re-sends), with wan_peer_mac and wan_mac. Depot: the
	 * interface its data last came in by; Sentry: that its last ACK from the
	 * WAN came in by. 0 until then.
	 */
	__u32 wan_ifindex;
	/*
	 * While listed for pairing: its place in its host pair's list, a hint
	 * taken only where the list still holds its QPN there (a removal moves
	 * the list's last QP into the hole; that QP's hint is set anew)
	 */
	__u32 p_idx;
	/*
	 * While unpaired: the lowest and highest PSN of its data this gateway
	 * forwarded (Sentry: from the DC, Depot: from the WAN, held ones too).
	 * A positive ACK names a PSN its receiver got, which came this way:
	 * pairing takes the one unpaired QP whose range holds it (docs/maps.md)
	 */
	__u32 p_lo;
	__u32 p_hi;
	struct lh_depot_state d; /* LH_QPF_DEPOT */
	struct lh_sentry_state s; /* LH_QPF_SENTRY */
};

/*
 * A round-trip sample r (us) into srtt / rttvar, as RFC 6298 (2.2, 2.3), in
 * integers: the Sentry's (s.srtt_us) and the Depot's (d.srtt_us). In BPF
 * under the QP lock.
 */
static __always_inline void lh_rtt_sample(__u32 *srtt, __u32 *rttvar, __u32 r)
{
	__u32 d;

	if (!r)
		r = 1;
	if (!*srtt) {
		*srtt = r;
		*rttvar = r / 2;
		return;
	}
	d = r > *srtt ? r - *srtt : *srtt - r;
	*rttvar = (3 * *rttvar + d) / 4;
	*srtt = (7 * *srtt + r) / 8;
	if (!*srtt)
		*srtt = 1;
}

/* The timeout of such an estimate: srtt + 4 rttvar, at most 2 srtt (as a tail-loss probe waits) */
static __always_inline __u32 lh_rto_us(__u32 srtt, __u32 rttvar)
{
	__u32 var = 4 * rttvar;

	return srtt + (var < srtt ? var : srtt);
}

/*
 * PSN of a Depot-NACK (the programs' and the agent's): the receiver's ePSN,
 * unless something before it went to the NIC without a backup copy and the
 * NIC has not acknowledged it: a NAK acknowledges every PSN before its own,
 * and that one the Depot could not answer a NIC NAK for. Then the NIC's own
 * acknowledged point. In BPF under the QP lock.
 */
static __always_inline __u32 lh_depot_nack_psn(const struct lh_qp *qp)
{
	return psn_diff(qp->d.unsafe_end, qp->d.acked) > 0 ? qp->d.acked : qp->d.deliv;
}

/*
 * The range a Depot-NACK's mark gives (1..LH_DNACK_MAX_RANGE): the first
 * hole, hole PSNs from d.deliv, plus what lies between the NACK's PSN and
 * d.deliv when that is the NIC's acknowledged point (all of it must come again).
 */
static __always_inline __u32 lh_depot_nack_len(const struct lh_qp *qp, __u32 hole)
{
	__s32 before = psn_diff(qp->d.deliv, lh_depot_nack_psn(qp));
	__u32 n = hole + (before > 0 ? (__u32)before : 0);

	if (n < 1)
		n = 1;
	return n > LH_DNACK_MAX_RANGE ? LH_DNACK_MAX_RANGE : n;
}

/* Reverse index: ACK direction (receiver -> requester, requester's QPN) to the data key */
struct lh_ack_key {
	__u8 saddr[16]; /* the responder (data destination) */
	__u8 daddr[16]; /* the requester (data source) */
	__u32 dqpn; /* the requester's QPN */
};
_Static_assert(sizeof(struct lh_ack_key) == 36, "lh_ack_key is 36 bytes");

/*
 * Unpaired data QPs between two hosts (lh_hostpair), so that the programs
 * pair an ACK with no agent: the one listed QP whose forwarded range holds
 * the ACK's PSN. A QP is listed when learned and leaves the list when an
 * ACK pairs it; an entry whose list empties is deleted. The list is the
 * whole truth or pairing waits: a QP that could not be listed (list or map
 * full) or learned (lh_qp full) blocks all pairing for LH_PAIR_GUARD_NS.
 */
#define LH_HOSTPAIR_QPS 4096

struct lh_hostpair_key {
	__u8 saddr[16]; /* requester (data source) */
	__u8 daddr[16]; /* responder */
};

struct lh_hostpair {
	struct bpf_spin_lock lock;
	__u32 n; /* QPs listed */
	__u32 ver; /* changes with every change of the list: a scan that saw another is void */
	__u32 dead; /* being deleted: add to a new entry instead */
	/*
	 * an LH_QPF_WIDE QP was listed: its ACKs may name PSNs it never
	 * forwarded, which lh_pair_psn may give to another; the list is scanned
	 */
	__u32 wide;
	__u32 dqpn[LH_HOSTPAIR_QPS]; /* their data QPNs (the responder's); may repeat one */
};

/* Pairing's guard (lh_pair_guard, one entry): bpf_ktime_get_ns() times */
struct lh_pair_guard {
	__u64 wide_until_ns; /* QPs learned before this are LH_QPF_WIDE */
	__u64 block_until_ns; /* no pairing before this: a QP is missing from the lists */
	__u64 full_until_ns; /* lh_qp was full: no QP is learned before this (LH_QP_FULL_RETRY_NS) */
};
/* After lh_qp was found full, new QPs are tried again this much later (ns) */
#define LH_QP_FULL_RETRY_NS 10000000ULL

#define LH_PAIR_GUARD_NS 2000000000ULL

/* Commands the agent runs in BPF (lh_dc_cmd, BPF_PROG_TEST_RUN), after an Ethernet header */
enum lh_cmd_op {
	/* drop the QPs that are gone or paired from a host pair's list; ret: how many */
	LH_CMD_HOSTPAIR_PRUNE = 1,
	/* the agent forgot a QP (cmd.hk, cmd.role): its far host and host pair count one less */
	LH_CMD_QP_FORGOTTEN = 2,
};

struct lh_cmd {
	__u32 op;
	__u32 role; /* LH_CMD_QP_FORGOTTEN: the QP's LH_QPF_DEPOT or LH_QPF_SENTRY */
	/* LH_CMD_QP_FORGOTTEN: the QP's key addresses (data source, destination) */
	struct lh_hostpair_key hk;
};

/*
 * lh_qp_count's key: far is the QP's far host (the data source of a Depot
 * QP, the destination of a Sentry QP), near the other end, all zero for the
 * count of the far host alone (IPv4 mapped, as in lh_qp_key)
 */
struct lh_count_key {
	__u8 far[16];
	__u8 near[16];
};

enum lh_slot_state {
	LH_SLOT_FREE = 0,
	LH_SLOT_HELD, /* reorder pool: received out of order, not yet delivered */
	LH_SLOT_BACKUP, /* backup pool: delivered, kept until the NIC acknowledges it */
	LH_SLOT_CACHED, /* Sentry: a missing PSN it let through, kept until acknowledged */
};

/*
 * A QP's window (lh_ring), indexed by PSN & LH_RING_MASK: which pool slot
 * holds that PSN and in which state. Decisions are taken on the ring alone
 * under the QP's lock (no map lookup is allowed while it is held); the pool
 * is only touched to copy packets in and out.
 */
struct lh_ring_ent {
	__u32 slot; /* index into lh_pool, LH_NO_SLOT when empty */
	__u32 tag; /* state << 24 | PSN */
};

#define LH_TAG(state, psn) ((__u32)(state) << 24 | ((psn) & 0xffffff))
#define LH_TAG_STATE(tag) ((tag) >> 24)
#define LH_TAG_PSN(tag) ((tag) & 0xffffff)

struct lh_ring {
	struct lh_ring_ent ent[LH_RING_SIZE];
};

/* One packet in the pool (lh_pool), stored from its IP header on */
struct lh_slot {
	__u32 psn;
	__u32 ring; /* owner: the QP's ring index */
	__u32 len; /* bytes in data */
	__u32 sent_ms; /* Sentry: when its copy last went out (ms, 0: never), for re-sends */
	__u8 data[LH_SLOT_DATA];
};

/*
 * A copy that went out less than guard_ms before now_ms (lh_now_ms() clock):
 * still on its way, not to be sent again. The Sentry's re-sends on a
 * Depot-NACK and on a report, and the agent's paced ones, all ask this.
 */
static __always_inline bool lh_slot_sent_within(const struct lh_slot *s, __u32 now_ms,
						__u32 guard_ms)
{
	return s->sent_ms && now_ms - s->sent_ms < guard_ms;
}

/*
 * XDP metadata (in front of the frame, bpf_xdp_adjust_meta) by which the
 * Sentry's XDP program hands a Depot-NACK to its TC program on the same
 * interface to re-send pool slot `slot`, a copy of PSN `psn` (bpf/wan_tc.bpf.c):
 * XDP cannot grow a small frame into a data packet (a veth's or a NIC's
 * tailroom), TC can (bpf_skb_change_tail).
 */
#define LH_META_RESEND 0x4c485253 /* "LHRS" */
struct lh_resend_meta {
	__u32 magic;
	__u32 slot;
	__u32 psn;
	__u32 ring;
};

/* Gateway configuration (lh_config, one entry), written by longhauld */
struct lh_config {
	__u32 dc_ifindex;
	__u32 flags; /* LH_CFG_* */
	__u32 resend_guard_ms; /* Sentry: no re-send of a copy that went out this recently */
	/*
	 * Sentry: a recovery that has not moved the receiver's ACK point for this
	 * long is given up (filter off, NIC model reset): fail open, never stall
	 */
	__u32 watchdog_ms;
	__u32 sack_count; /* Depot: a T/C-SACK report every this many data packets, 0 none */
	/*
	 * A data path kept running by a stopped agent (LH_CFG_AGENTLESS, set by
	 * it at its stop, at agentless_since_ns) does its work for agentless_ms
	 * more; past that every packet passes as with no gateway on the path:
	 * what needs the agent's timers (Depot-NACK retries, long releases)
	 * would wait, and a NIC's retry budget runs out meanwhile
	 */
	__u32 agentless_ms;
	__u64 agentless_since_ns;
	/*
	 * Sentry with LH_CFG_REPORT_MAC: the SipHash-2-4 key words the peers'
	 * Depot reports are signed with (lh_report_mac); a report without a
	 * valid tag is refused
	 */
	__u64 report_key[2];
	/*
	 * --host-qps, --hostpair-qps: QPs learned at most with one far host, and
	 * between one pair of hosts (lh_qp_count); 0: no limit. Past it a new
	 * QP passes unchanged, not learned, counted
	 */
	__u32 host_qps;
	__u32 hostpair_qps;
};

#define LH_CFG_DEPOT 0x01 /* act as Depot for data arriving from the WAN */
#define LH_CFG_SENTRY 0x02 /* act as Sentry for data arriving from the DC */
/*
 * Sentry, --recovery gateway: a copy of every packet toward the WAN until the
 * far NIC ACKs it; the agent re-sends what Depot reports name, paced, and
 * the NIC gets no NAK for WAN loss
 */
#define LH_CFG_GATEWAY 0x04
/* set by the agent while the gateway copies exceed the bound (rate x 2 RTT, for an RTO) */
#define LH_CFG_GW_FULL 0x08
/* the agent stopped and kept the data path for the next one (agentless_since_ns) */
#define LH_CFG_AGENTLESS 0x10
/*
 * --peer given: QPs are learned only with a far host inside a peer prefix
 * (lh_peer); any other passes unchanged, counted (not_peer)
 */
#define LH_CFG_PEERS 0x20
/* --report-key-file given: Depot reports must carry a valid tag (report_key) */
#define LH_CFG_REPORT_MAC 0x40
/*
 * --nic-timeout given: watchdog_ms is a bound, the NICs' retransmit timeout
 * (or --sentry-watchdog when shorter): a stuck Sentry recovery is given up
 * after it, with no scaling by the QP's round trip and no doubling
 */
#define LH_CFG_WD_BOUND 0x80

/* lh_peer: the DC prefixes behind peer gateways, an LPM trie over 16-byte addresses */
#define LH_MAX_PEERS 64
struct lh_peer_key {
	__u32 prefixlen; /* of the 128-bit address: an IPv4 prefix is 96 + its length */
	__u8 addr[16]; /* IPv6, or IPv4 mapped (::ffff:a.b.c.d) */
};

/* ---- ring buffer events to the agent (lh_events) ---- */
enum lh_event_type {
	LH_EV_QP_NEW = 1, /* a data QP was learned: pair it */
	/* 2, 4 and 5 are not used (events of earlier builds) */
	LH_EV_RELEASE_MORE = 3, /* a release or replay run stopped at LH_BURST: continue it */
	LH_EV_GAP = 6, /* Depot: a gap opened or remains after a release: send a report */
	LH_EV_NAK_DUE, /* Sentry: the NIC's retry ended: send it the NAK it was owed (psn) */
	LH_EV_SACK_DUE, /* Depot: sack_count data packets since the last: send a T/C-SACK report */
	LH_EV_RESEND, /* Sentry, gateway recovery: a report named PSNs it has copies of (psn: ePSN) */
	LH_EV_QP_STALE, /* a new connection on an old QP's key (LH_QPF_STALE): forget the entry */
};

struct lh_event {
	__u32 type;
	__u32 psn;
	__u32 dqpn;
	__u32 flags;
	__u8 saddr[16];
	__u8 daddr[16];
	__u64 ts_ns;
};

#endif /* LH_MAPS_H */
