/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the credit agent's files share (docs/rsvp.md "What a hop does"):
 * credit.c (the loop, the timer and its per-flow rules), credit_msg.c (RSVP
 * messages out and in), credit_flow.c (flows, their paths and upstream
 * hops, held packets sent on against credit).
 */
#ifndef LONGHAULD_CREDIT_INT_H
#define LONGHAULD_CREDIT_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

#include "credit.h"
#include "lh_credit.h"
#include "rsvp.h"
#include "rsvp_key.h"

#define CR_MAX_UPS 4 /* upstream hops of one flow (a last hop behind several paths) */
#define CR_SETUP_TRIES 10 /* Path init re-sent on a path until answered, then it has failed */
#define CR_END_TRIES 10 /* End re-sent until End ACK */
#define CR_NOLIVE_OPEN_R 10 /* no live path for 10 R: fail open */
#define CR_HEARTBEAT_MISSES 3 /* H = 3 R (RFC 2205's K) */
#define CR_BUCKETS 1024
#define CR_TICK_US 1000

/* Agent counters, printed as JSON on exit ("credit agent: {...}") */
#define CR_COUNTERS(X)                                                                  \
	X(rx_msgs) X(rx_path) X(rx_reserve) X(rx_end) X(rx_end_ack) X(rx_path_err)      \
	X(rx_refused) X(rx_not_neighbor) X(rx_ttl) X(rx_unknown_flow) X(rx_stale)       \
	X(tx_msgs) X(tx_bytes) X(tx_path) X(tx_path_retry) X(tx_reserve_init)          \
	X(tx_reserve) X(tx_heartbeat) X(tx_end) X(tx_end_retry) X(tx_end_ack) X(tx_path_err) \
	X(tx_fail) X(flows_created) X(flows_first) X(flows_last) X(flows_ended)        \
	X(flows_expired) X(flows_open) X(path_failures) X(path_given_up) X(failovers)  \
	X(held) X(released) X(release_fail) X(hold_unknown) X(data_bytes_credited)          \
	X(tx_probe) X(rx_probe) X(probe_answers) X(lost_bytes_recovered)                \
	X(tx_signed) X(rx_verified)

struct cr_counters {
#define CR_CNT_FIELD(n) uint64_t n;
	CR_COUNTERS(CR_CNT_FIELD)
#undef CR_CNT_FIELD
	uint64_t refused[RSVP_ERR_MAX];
};

struct cr_pkt {
	struct cr_pkt *next;
	uint32_t len;
	uint8_t data[];
};

struct cr_up {
	uint32_t addr; /* the upstream hop (network order) */
	uint32_t local; /* our address toward it: RSVP_HOP of what we send it */
	uint32_t lih; /* its LIH, copied back */
	uint64_t returned; /* fwd_bytes already credited to it */
	uint64_t last_tx_ns; /* our last Reserve to it */
	uint64_t last_rx_ns; /* its last message */
};

struct cr_path {
	const struct lhd_cr_route *rt;
	uint32_t local;
	bool answered, alive, failed, end_acked;
	uint64_t limit; /* bytes it granted, cumulative, in our sent[] count */
	int64_t offset; /* our sent[] minus its count of what it got from us */
	uint64_t last_heard_ns;
	uint32_t path_id; /* MESSAGE_ID of our Path init on it (its answer ACKs that) */
	uint32_t end_id;
	int tries;
	uint64_t next_try_ns;
	unsigned int refusals; /* PathErrs in a row: the back-off of its probes */
	/* loss resync: the probe awaiting its answer (0: none), our sent[] when it left */
	uint32_t probe_id;
	uint64_t probe_sent;
	uint64_t probe_acked_sent; /* probe_sent of the last probe answered */
	uint64_t next_probe_ns;
};

enum cr_phase { PH_SETUP, PH_RUN, PH_ENDING };

struct cr_flow {
	struct cr_flow *next; /* hash chain */
	struct lh_qp_key key;
	uint32_t src, dst, dqpn;
	bool first; /* started here: the program saw it come in from the DC */
	enum cr_phase phase;
	uint32_t refresh_ms; /* R */
	struct cr_up up[CR_MAX_UPS];
	int nups;
	struct cr_path path[LH_CR_MAX_PATHS];
	int npaths;
	struct lh_cr_grant grant; /* what was last written to lh_cr_grant */
	uint64_t first_answer_ns;
	uint64_t active_ns; /* when the active path was last chosen */
	uint64_t nolive_since_ns;
	uint64_t last_activity_ns; /* packets or messages */
	uint64_t last_pkts; /* fwd_pkts + held_pkts when last looked at */
	struct cr_pkt *head, *tail; /* held, oldest first */
	uint64_t queued_bytes;
	uint32_t queued;
	bool dead_end; /* a transit hop with no live path: PathErr sent upstream, no heartbeats */
};

struct cr_agent {
	const struct lhd_config *cfg;
	int flow_fd, grant_fd;
	int rsvp_fd; /* raw IPv4, protocol 46 */
	int inj_fd; /* raw IPv4, IP_HDRINCL, SO_MARK LH_CR_MARK: held packets sent on */
	int tick_fd; /* timerfd: every CR_TICK_US */
	int ep_fd; /* epoll: the timer, rsvp_fd and the ring buffer */
	struct ring_buffer *rb; /* lh_cr_events: new flows, held packets */
	uint32_t epoch;
	uint32_t msg_id;
	struct cr_flow *buckets[CR_BUCKETS];
	unsigned int nflows;
	struct cr_counters c;
	/* RFC 2747 (--rsvp-key-file): our key, our last Sequence Number, the senders' last */
	bool keyed;
	struct rsvp_key key;
	uint64_t tx_seq;
	struct rsvp_replay rx_seq;
	uint8_t buf[RSVP_MAX_LEN + 64];
};

/* credit_flow.c */
uint64_t ms_ns(uint32_t ms);
void key_v4(struct lh_qp_key *k, uint32_t src, uint32_t dst, uint32_t dqpn);
struct cr_flow *flow_find(struct cr_agent *a, const struct lh_qp_key *k);
const char *ip4(uint32_t a, char *buf);
uint32_t local_addr_to(uint32_t nb);
bool is_neighbor(const struct cr_agent *a, uint32_t addr);
void grant_write(struct cr_agent *a, struct cr_flow *f);
int counted(struct cr_agent *a, const struct cr_flow *f, struct lh_cr_flow *out);
void set_dead_end(struct cr_agent *a, struct cr_flow *f, bool dead);
struct cr_flow *flow_new(struct cr_agent *a, uint32_t src, uint32_t dst, uint32_t dqpn,
			 bool first, uint32_t refresh_ms, uint32_t exclude_nh);
void flow_free(struct cr_agent *a, struct cr_flow *f);
void flow_end(struct cr_agent *a, struct cr_flow *f);
void flow_ended(struct cr_agent *a, struct cr_flow *f);
int best_path(const struct cr_flow *f);
void release(struct cr_agent *a, struct cr_flow *f);
void activate(struct cr_agent *a, struct cr_flow *f, int p, uint64_t now);
struct cr_up *up_of(struct cr_flow *f, uint32_t addr);
int path_of(const struct cr_flow *f, uint32_t addr, uint32_t lih);
int on_record(void *ctx, void *data, size_t size);

/* credit_msg.c */
void send_path(struct cr_agent *a, struct cr_flow *f, int i);
void send_probe(struct cr_agent *a, struct cr_flow *f, int i, uint64_t sent);
void send_reserve(struct cr_agent *a, struct cr_flow *f, struct cr_up *u,
		  const struct lh_cr_flow *cf, bool init, uint32_t ack_id);
void send_end(struct cr_agent *a, struct cr_flow *f, int i);
void send_path_err(struct cr_agent *a, struct cr_flow *f);
void on_rsvp(struct cr_agent *a);

#endif
