/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Credit-based flow control (draft-hu-rtgwg-cbfc-rsvp-01, docs/rsvp.md): the
 * maps the credit program (bpf/credit_tc.bpf.c, tcx egress on every interface
 * of a credit hop) shares with the agent, which speaks RSVP.
 *
 * A flow is an RC data direction, keyed as lh_qp (struct lh_qp_key: source
 * host, destination host, destination QPN; IPv4 mapped). Per flow:
 *   lh_cr_flow   what the program counts (bytes forwarded, bytes sent on each
 *                downstream path, packets handed to the agent to hold);
 *                written by BPF only (atomic adds), read by the agent and CLI
 *   lh_cr_grant  what the agent decides (state, credit limit per path, the
 *                active path, packets released); written by the agent only
 *                (whole-value updates), read by BPF and the CLI
 * Splitting the writers keeps every counter single-writer: no lock, and no
 * agent update can lose a BPF increment.
 *
 * Units: bytes of the IP packet (IP header to the end of the ICRC), the same
 * at every hop whatever the link layer.
 */
#ifndef LH_CREDIT_H
#define LH_CREDIT_H

#include "lh_maps.h" /* struct lh_qp_key */

/* Downstream paths a hop keeps per flow: the primary and its backups */
#define LH_CR_MAX_PATHS 4
/* Largest IP packet the program can hand to the agent (4096 payload + headers) */
#define LH_CR_DATA 4352
/* Flows a hop tracks (lh_cr_flow, lh_cr_grant) unless the agent resizes them */
#define LH_CR_MAX_FLOWS 4096

/*
 * skb mark of packets the agent sends itself (held packets released against
 * new credit, or re-sent on a backup path): the program charges them to the
 * active path's credit and never holds them again.
 */
#define LH_CR_MARK 0x4c480043u

/* lh_cr_grant.state */
enum lh_cr_state {
	LH_CRS_PENDING = 0, /* set up under way: packets held until a path grants credit */
	LH_CRS_ACTIVE = 1, /* forwarded against the active path's credit, held at zero */
	LH_CRS_LAST = 2, /* last hop (no credit downstream): counted, passed */
	LH_CRS_OPEN = 3, /* no live path: fail open, passed uncharged, counted */
	LH_CRS_ENDING = 4, /* End sent or received: passed, counted, state going away */
	LH_CRS_MAX
};

/* lh_cr_flow.flags */
#define LH_CRF_FIRST 0x01 /* created by the program: the flow entered here from the DC */

/* Counted by the program, per flow. Every field only grows (atomic adds). */
struct lh_cr_flow {
	__u64 fwd_bytes; /* left this hop on any interface: what it returns upstream as credit */
	__u64 fwd_pkts;
	__u64 sent[LH_CR_MAX_PATHS]; /* charged against each downstream path's credit */
	__u64 held_bytes; /* handed to the agent to hold (ring buffer) */
	__u64 held_pkts;
	__u64 hold_fail; /* could not be held (hold buffer or ring full): passed, charged */
	__u64 redirected; /* sent to the active path's interface (failover) */
	__u64 first_ns; /* bpf_ktime_get_ns() of the first packet */
	__u64 last_ns; /* ... of the latest packet */
	__u32 flags; /* LH_CRF_* */
	__u32 pad;
};
_Static_assert(sizeof(struct lh_cr_flow) == 104, "lh_cr_flow is 104 bytes");

/* Decided by the agent, per flow */
struct lh_cr_grant {
	__u32 state; /* enum lh_cr_state */
	__u32 active; /* index of the path packets go on (LH_CRS_ACTIVE) */
	__u32 npaths; /* paths known (primary and backups) */
	__u32 hold_cap; /* bytes the agent will hold for this flow; beyond: passed, counted */
	__u64 limit[LH_CR_MAX_PATHS]; /* bytes: the path's hop may be sent while sent < limit */
	__u64 released_bytes; /* held bytes the agent has sent or discarded */
	__u64 released_pkts; /* held packets ... : held_pkts != released_pkts means some wait */
	__u32 ifindex[LH_CR_MAX_PATHS]; /* interface of each path */
	__u8 nexthop[LH_CR_MAX_PATHS][16]; /* next hop of each path (IPv4 mapped) */
	__u8 alive[LH_CR_MAX_PATHS]; /* heartbeat seen within H */
	__u32 pad;
};
_Static_assert(sizeof(struct lh_cr_grant) == 152, "lh_cr_grant is 152 bytes");

/*
 * Ring buffer records (lh_cr_events), program to agent. A flow the program
 * created (a first hop) raises LH_CR_EV_NEW once; a packet it holds travels
 * whole in LH_CR_EV_HOLD (the agent queues it and sends it when credit
 * allows, in order: the program holds every later packet of the flow while
 * held_pkts != released_pkts).
 */
enum lh_cr_ev_type {
	LH_CR_EV_NEW = 1,
	LH_CR_EV_HOLD = 2,
};

struct lh_cr_event {
	__u32 type; /* enum lh_cr_ev_type */
	__u32 len; /* HOLD: bytes of data (the IP packet) */
	__u32 ifindex; /* the interface the packet was leaving by */
	__u32 path; /* HOLD: the active path when held */
	struct lh_qp_key key;
	__u32 pad;
	__u8 data[LH_CR_DATA]; /* HOLD: the IP packet */
};
_Static_assert(sizeof(struct lh_cr_event) == 56 + LH_CR_DATA, "lh_cr_event size");

/*
 * The program's configuration, one entry (lh_cr_config), written by the agent
 * before attach: which interface is the DC side (a flow whose packets come in
 * there and leave by another interface starts here: this hop is its first).
 */
struct lh_cr_config {
	__u32 dc_ifindex; /* 0: no DC side, the hop never starts flows (a router) */
	__u32 hold_cap; /* bytes held per flow while its set up is pending */
};

/* Counters of lh_cr_stats (per-CPU array), X(ENUM, name, description) */
#define LH_CR_STATS(X)                                                                  \
	X(PKTS, pkts, "packets seen leaving an interface")                               \
	X(NON_ROCE, non_roce, "not RoCEv2 over IPv4: passed")                            \
	X(IPV6, ipv6, "RoCEv2 over IPv6: passed, not flow controlled")                   \
	X(UNKNOWN, unknown, "RoCEv2 of no flow (not started here): passed")              \
	X(NEW_FLOW, new_flow, "flows started (first hop)")                                \
	X(TABLE_FULL, table_full, "flow not created, table full: passed")               \
	X(FORWARDED, forwarded, "forwarded against credit")                              \
	X(COUNTED, counted, "forwarded uncharged: last hop, open or ending flow")       \
	X(RELEASED, released, "the agent's releases: charged, passed")                   \
	X(HELD, held, "held: handed to the agent")                                       \
	X(HOLD_FULL, hold_full, "could not be held (flow's hold full): passed, charged") \
	X(RING_FULL, ring_full, "could not be held (ring buffer full): passed, charged") \
	X(REDIRECTED, redirected, "moved to the active path's interface")                \
	X(REDIRECT_FAIL, redirect_fail, "redirect refused: passed on the routed path")

enum lh_cr_stat {
#define LH_CR_STAT_ENUM(e, n, d) LH_CR_ST_##e,
	LH_CR_STATS(LH_CR_STAT_ENUM)
#undef LH_CR_STAT_ENUM
		LH_CR_ST_MAX
};

/* lh_cr_stats' value (per CPU, one entry): one field per enum lh_cr_stat, in enum order */
struct lh_cr_stats {
#define LH_CR_STAT_FIELD(e, n, d) __u64 n;
	LH_CR_STATS(LH_CR_STAT_FIELD)
#undef LH_CR_STAT_FIELD
};
_Static_assert(sizeof(struct lh_cr_stats) == LH_CR_ST_MAX * sizeof(__u64), "one u64 per lh_cr_stat");

#endif /* LH_CREDIT_H */
