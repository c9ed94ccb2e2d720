/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The agent's state and what its files share: agent.c (the event loop, the
 * ring buffer, the timer), agent_frames.c (frames to the NICs and the WAN,
 * kicks of lh_dc_kick), agent_depot.c (Depot-NACKs, reports, the DC timer,
 * the hot set), agent_sentry.c (the silence rule, gateway recovery's
 * pacer and bound), agent_qps.c (the pairing lists, forgetting QPs).
 */
#ifndef LONGHAULD_AGENT_STATE_H
#define LONGHAULD_AGENT_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "agent.h"
#include "lh_maps.h"
#include "pkt.h"
#include "pktio.h"

/*
 * QPs the timer reads per tick at most: a pass over all of them spans
 * ticks beyond that, and each QP's timers (Depot-NACK retry, DC timer,
 * release watchdog, idle) are looked at once a pass. Reading every QP every
 * tick (1 ms at 2 ms RTT) cost each agent a quarter of a core at 1024 QPs
 * and half at 4096, taken from the endpoints on the same host here.
 */
#define SCAN_PER_TICK 256
/*
 * With neither T/C-SACK nor gateway recovery on (LR2 alone), no QP needs
 * the timer every tick but the Depot QPs with a gap, a release or a DC
 * timer open (the hot set: depot_hot()): they are read by key each tick,
 * the rest once per COLD_PASS_US (idle, stale, the path's round trip; a
 * lost event: the ring buffer full). A
 * pass walks every bucket of lh_qp whatever the QPs in it: at 1024 QPs in
 * a table of 8192 a pass each 4 ticks cost each agent a tenth of a core
 * (perf: __htab_map_lookup_and_delete_batch 45 % of the agent), enough to
 * tip the endpoints' 67 ms timers on this 2-core host (35-3096 NIC timeouts
 * in a lossless run, 0 without the agents' scans).
 */
#define COLD_PASS_US 250000
/*
 * ... and with the hot set empty, nothing needs a tick finer than this: the
 * agent wakes 10 times less often (an event that makes a QP hot, a Depot
 * gap or release, wakes it and brings the fine tick back). At 4096 QPs an
 * agent's 1 ms tick alone, the wake-ups, was 6 % of this 2-vCPU host's
 * samples (perf: finish_task_switch, the agents' largest).
 */
#define QUIET_TICK_US 10000
/* Quiet this long, a QP is forgotten when the table is half full (tick()) */
#define LH_IDLE_FULL_S 2
#define MAX_SCAN 65536 /* host pairs looked at per prune */
#define PRUNE_NS 100000000ull /* the pairing lists are pruned every 100 ms */
#define SILENCE_SLOTS 4096
#define PACE_US 100 /* gateway re-sends: the pacer's period */

/* Gateway recovery: one PSN to re-send from its copy (pool slot) */
struct gw_req {
	struct lh_qp_key k;
	uint32_t ring, psn, slot;
};

/* ... and per ring position, what became of the last one (the re-send guard) */
struct gw_mark {
	uint32_t psn;
	uint32_t ms; /* when it was re-sent; GW_QUEUED while in the queue */
	uint32_t tries; /* times re-sent: from the second on, the guard is doubled */
};
#define GW_QUEUED UINT32_MAX

/*
 * Sentry, per QP (by a hash of its key): when its silence rule and its
 * gateway re-sends last acted. Its round trip is measured by the program
 * (lh_qp s.srtt_us, s.rttvar_us: a request with AckReq to its ACK, WAN
 * queueing included, Karn's rule; --wan-rtt is the empty link's).
 */
struct sentry_est {
	uint64_t silence_ns; /* the last silence NAK or re-send */
	uint64_t resend_ns; /* the last gateway re-send (its report is due an RTT later) */
	/* the silence as first seen (sentry_silence): confirmed a tick later, unchanged */
	uint64_t quiet_ns, quiet_sack_ns;
	uint32_t quiet_una, quiet_next;
};

/*
 * Depot, per ring: the receiving NIC's ACK point as last seen, since when,
 * and the replays since it last moved (each waits twice as long).
 */
struct dc_timer {
	uint64_t since_ns;
	uint32_t acked;
	uint32_t told; /* the newest ePSN the agent's NACKs and reports gave the sender */
	bool told_set;
	uint8_t tries;
};

/* Per ring: the agent's state of the QP that has the ring (Depot, mostly) */
struct ring_state {
	uint64_t nacked_ns; /* when the agent last NACKed the QP's gaps */
	/* the last T/C-SACK report, and the QP's last_rx_ns it covered */
	uint64_t sack_ns, sack_rx_ns;
	struct dc_timer dc; /* dc_timer() */
	uint32_t hot_at; /* its place in the hot set + 1, 0 when not in it (LR2 alone) */
	uint8_t nack_tries; /* Depot-NACK retries since the QP last moved (backoff) */
};

struct agent {
	const struct lhd_config *cfg;
	struct lhd_datapath *dp;
	int qp_fd, ack_fd, pair_fd, ring_fd, pool_free_fd, ring_free_fd, hostpair_fd;
	/* one per --wan, in that order: a QP's frames leave by its wan_ifindex */
	struct lh_pktio *wan_io[LHD_MAX_WAN];
	int wan_ifindex[LHD_MAX_WAN];
	struct lh_pktio *dc_io;
	uint8_t dc_mac[6];
	struct lhd_agent_stats st;
	/* what the agent keeps per ring (the QP that has it), cfg->rings of them */
	struct ring_state *rs;
	/* Sentry: per QP, by a hash of its key: silence rate limit, RTT estimate */
	struct sentry_est *est;
	uint32_t path_rto_us; /* the largest RTO of the QPs last tick: the re-send guard */
	uint64_t gw_over_ns; /* since when the copies are over the bound; 0: they are not */
	uint32_t path_srtt_us; /* ... and the largest srtt: every QP's RTO is at least that */
	uint32_t path_stay_us; /* ... and the longest a copy stays (the QPs' s_stay_*) */
	uint32_t guard_ms; /* ... as written to lh_config */
	uint32_t report_seq;
	/* the tick came late (timer expirations missed): the agent itself was not running */
	bool tick_late;
	uint32_t tick_us; /* the timer's period now: cfg->tick_us, or QUIET_TICK_US (tick_rate()) */
	int tick_fd;
	uint64_t prune_ns; /* last prune of the pairing lists */
	/* Sentry, gateway recovery: the re-send queue (FIFO) and its pacer */
	int pool_fd, config_fd, pace_fd, events_fd;
	struct gw_req *gwq;
	uint32_t gwq_cap, gwq_head, gwq_len;
	struct gw_mark *gw_marks; /* rings x LH_RING_SIZE */
	double gw_tokens; /* bytes the pacer may send now */
	uint64_t gw_pace_ns; /* when the tokens were last topped up */
	bool gw_pacing, gw_full, gw_full_set, rtt_known;
	struct lh_slot *slot_buf;
	struct lh_ring *ring_buf;
	/* the timer's copy of lh_qp, read in batches (a syscall per QP cost a core at 1024 QPs) */
	struct lh_qp_key *tick_keys;
	struct lh_qp *tick_qps;
	uint32_t tick_cap;
	/* a pass over lh_qp spans ticks (SCAN_PER_TICK): where it goes on, and its sums so far */
	uint32_t scan_tok;
	bool scan_on;
	/* LR2 alone: the slow pass and its hot set (Depot QPs by key, one per ring) */
	bool slow_scan;
	struct hot_ent {
		struct lh_qp_key k;
		uint32_t ring;
	} *hot;
	uint32_t hot_n;
	struct {
		uint32_t rto_max_us, srtt_max_us, unmeasured, qps;
		uint32_t stay_max_us; /* how long copies stay (s.stay_us, or the one under way) */
		uint64_t copies;
	} pass;
	uint64_t copies; /* of the last whole pass: gateway recovery's copies */
	uint32_t qps; /* ... the QPs in the table */
};

/* agent_frames.c */
int dc_host_mac(const struct agent *ag, const uint8_t *key_addr, uint8_t mac[6]);
void spec_to_requester(struct lh_pkt_spec *s, const struct lh_qp_key *k,
		       const struct lh_qp *qp);
int send_frame(struct agent *ag, const struct lh_qp *qp, uint8_t *buf, size_t len);
int send_to_nic(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
		uint32_t psn, uint8_t syndrome);
int kick(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp, bool replay,
	 uint32_t psn);

/* agent_depot.c */
int send_report(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
		bool with_nack, bool sack);
void send_sack(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
	       uint64_t now);
void depot_timers(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
		  uint64_t now);
bool depot_hot(const struct agent *ag, const struct lh_qp *qp);
void hot_add(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp);
void hot_tick(struct agent *ag, uint64_t now);

/* agent_sentry.c */
struct sentry_est *sentry_est_of(struct agent *ag, const struct lh_qp_key *k);
uint32_t est_rto_us(const struct lh_qp *qp);
void gw_collect(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp);
void gw_pace(struct agent *ag);
void gw_bound(struct agent *ag, uint64_t copies, uint64_t now);
void config_sync(struct agent *ag);
void sentry_silence(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
		    struct sentry_est *est, uint64_t now, uint64_t sack_ns);

/* agent_qps.c */
void prune_hostpairs(struct agent *ag);
void forget_qp(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
	       bool keep_pair);
void forget_all(struct agent *ag);

#endif
