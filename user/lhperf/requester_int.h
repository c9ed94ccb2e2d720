/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The requester's (client's) state and what its files share. The rules it
 * follows are at the top of requester.c; the files:
 *   requester.c          the client: parameters, handshake, QPs, the run, the report
 *   requester_send.c     send window and TX depth, packets built, --rate, round robin
 *   requester_ack.c      frames received, ACKs and NAKs, messages completed
 *   requester_retry.c    retransmit timer, retries (go-back-N / go-back-0), QP errors
 *   requester_loop.c     the run loop, the side channel's heartbeat, the stall check
 *   requester_results.c  per-QP counters summed, the server's results
 */
#ifndef LHPERF_REQUESTER_INT_H
#define LHPERF_REQUESTER_INT_H

#include "lhperf.h"

struct req_ctx {
	const struct lhp_opts *o;
	struct lhp_params p;
	struct lhp_ctrl ctrl;
	struct lhp_port port;
	struct lhp_req_qp *qps;
	struct lh_pkt_spec *specs;
	uint32_t nqps;
	uint64_t npkts; /* packets per message */
	uint64_t timeout_ns, stall_ns;
	uint8_t op_first, op_middle, op_last, op_only;
	uint8_t payload[LHP_FRAME_CAP];
	uint32_t rr;
	int rr_burst; /* packets the QP at rr sent of its turn (BURST_PER_QP) */
	/* rate limit: a token bucket of wire bytes */
	double tokens, bytes_per_ns, bucket;
	uint64_t tok_ns;
	/* time and progress */
	uint64_t t_start, t_first_tx, t_last_done, t_end_duration;
	uint64_t progress_ns, rx_since_progress;
	uint64_t min_deadline;
	uint64_t last_ping, last_ctrl;
	uint64_t peak_bucket, peak_bytes;
	bool stopping;
	bool sent_any;
	double cpu0;
	struct lhp_summary sum;
	struct lhp_events rewinds, naks;
};

/* The wire PSN of q's packet number seq */
static inline uint32_t seq_psn(const struct lhp_req_qp *q, uint64_t seq)
{
	return psn_add(q->psn0, (uint32_t)seq);
}

/* The first packet (seq) of the message that packet seq belongs to */
static inline uint64_t msg_first_seq(const struct req_ctx *x, uint64_t seq)
{
	return seq / x->npkts * x->npkts;
}

/* Messages q started: those with a packet sent */
static inline uint64_t msgs_started(const struct req_ctx *x, const struct lhp_req_qp *q)
{
	return (q->sent_hi + x->npkts - 1) / x->npkts;
}

/* requester_send.c */
void req_set_opcodes(struct req_ctx *x);
void req_win_open(struct lhp_req_qp *q, uint64_t now);
int req_fill(struct req_ctx *x, uint64_t now);
int req_send_bad_frames(struct req_ctx *x);

/* requester_ack.c */
void req_rx(struct req_ctx *x, uint64_t now, int n);

/* requester_retry.c */
void req_arm_timer(struct req_ctx *x, struct lhp_req_qp *q, uint64_t now);
void req_qp_fail(struct req_ctx *x, struct lhp_req_qp *q, const char *why);
void req_retry(struct req_ctx *x, struct lhp_req_qp *q, uint8_t cause, uint64_t now);
void req_timers(struct req_ctx *x, uint64_t now);

/* requester_loop.c */
void req_run(struct req_ctx *x);

/* requester_results.c */
void req_collect(struct req_ctx *x);
void req_results(struct req_ctx *x);

#endif
