// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhperf client: the requester side of N RC QPs, as Linux rxe's requester
 * and completer behave (drivers/infiniband/sw/rxe/rxe_req.c, rxe_comp.c):
 *
 *  - messages are segmented at the path MTU into FIRST/MIDDLE/LAST or ONLY,
 *    RETH on the first packet of a WRITE; the ACK-request bit goes on the last
 *    packet of a message and on every ackreq_every-th packet (rxe: 64);
 *  - at most window PSNs are unacknowledged (rxe: 128) and at most tx_depth
 *    messages outstanding per QP;
 *  - an ACK acknowledges every PSN up to its own; an older one is ignored;
 *  - a NAK-PSN-sequence-error acknowledges the PSNs before it and starts a
 *    retry: gbn rewinds to the NAK PSN, gb0 to the first PSN of the message
 *    it falls in. Further NAKs are ignored until an ACK arrives (rxe's
 *    started_retry); a retransmit timeout (4.096 us * 2^timeout) always
 *    retries. Every retry spends one of retry_cnt, 7 meaning infinite; when
 *    none is left the QP goes to the error state;
 *  - a NAK other than a sequence error (invalid request, remote access ...)
 *    puts the QP in error at once.
 *
 * The client stops with status "livelock" when nothing completes for the
 * stall time while the peer keeps answering, "timeout" when the peer is
 * silent, "qp_error" when a QP failed, "peer_lost" when the side channel
 * breaks.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lhperf.h"
#include "log.h"

#define PING_NS (500ull * 1000 * 1000)
#define CTRL_POLL_NS (20ull * 1000 * 1000)
#define PEAK_BUCKET_NS (100ull * 1000 * 1000)
#define RESULT_TIMEOUT_MS 10000
#define BURST_PER_QP 16

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

static inline uint32_t seq_psn(const struct lhp_req_qp *q, uint64_t seq)
{
	return psn_add(q->psn0, (uint32_t)seq);
}

static void set_opcodes(struct req_ctx *x)
{
	if (x->p.op == LHP_OP_WRITE) {
		x->op_first = ROCE_RC_RDMA_WRITE_FIRST;
		x->op_middle = ROCE_RC_RDMA_WRITE_MIDDLE;
		x->op_last = ROCE_RC_RDMA_WRITE_LAST;
		x->op_only = ROCE_RC_RDMA_WRITE_ONLY;
	} else {
		x->op_first = ROCE_RC_SEND_FIRST;
		x->op_middle = ROCE_RC_SEND_MIDDLE;
		x->op_last = ROCE_RC_SEND_LAST;
		x->op_only = ROCE_RC_SEND_ONLY;
	}
}

/* (Re)start q's retransmit timer from now; a timeout of 0 means none (IBTA) */
static void arm_timer(struct req_ctx *x, struct lhp_req_qp *q, uint64_t now)
{
	if (!x->timeout_ns)
		return;
	q->deadline_ns = now + x->timeout_ns;
	if (q->deadline_ns < x->min_deadline)
		x->min_deadline = q->deadline_ns;
}

static void qp_fail(struct req_ctx *x, struct lhp_req_qp *q, const char *why)
{
	if (q->error)
		return;
	q->error = true;
	q->deadline_ns = 0;
	x->sum.qp_errors++;
	pr_warn("QP %u (0x%06x): %s; QP moved to the error state\n", q->idx, q->qpn, why);
	if (!x->sum.error[0])
		snprintf(x->sum.error, sizeof(x->sum.error), "QP %u: %s", q->idx, why);
}

/* Acknowledge everything before new_una: complete messages, note progress */
/* The end of a full window: its time counted (window_full_s) */
static void win_open(struct lhp_req_qp *q, uint64_t now)
{
	if (q->win_full_since) {
		q->win_full_ns += now > q->win_full_since ? now - q->win_full_since : 0;
		q->win_full_since = 0;
	}
}

static void req_advance(struct req_ctx *x, struct lhp_req_qp *q, uint64_t new_una, uint64_t now)
{
	if (new_una <= q->una)
		return;
	while ((q->msgs_done + 1) * x->npkts <= new_una) {
		uint64_t start = q->msg_start_ns[q->msgs_done & q->ring_mask];

		lhp_fct_add(&x->sum.fct, (double)(now - start) / 1000.0);
		q->msgs_done++;
		x->sum.messages++;
		x->sum.bytes += x->p.size;
		x->t_last_done = now;
		if ((now - x->t_first_tx) / PEAK_BUCKET_NS != x->peak_bucket) {
			double g = (double)x->peak_bytes * 8 / (double)PEAK_BUCKET_NS;

			if (g > x->sum.peak_gbps)
				x->sum.peak_gbps = g;
			x->peak_bucket = (now - x->t_first_tx) / PEAK_BUCKET_NS;
			x->peak_bytes = 0;
		}
		x->peak_bytes += x->p.size;
	}
	q->una = new_una;
	win_open(q, now);
	if (new_una > q->acked_hi) {
		q->acked_hi = new_una;
		x->progress_ns = now;
		x->rx_since_progress = 0;
	}
	/* Nothing outstanding: the timer stops; else it restarts from now */
	if (q->una >= q->sent_hi)
		q->deadline_ns = 0;
	else
		arm_timer(x, q, now);
}

/* Start a retry episode (rxe: COMPST_ERROR_RETRY then req_retry) */
static void req_retry(struct req_ctx *x, struct lhp_req_qp *q, uint8_t cause, uint64_t now)
{
	uint64_t restart;

	if (!q->retry_left) {
		qp_fail(x, q, "retry count exceeded");
		return;
	}
	if (x->o->retry != LHP_RETRY_INFINITE)
		q->retry_left--;
	if (x->p.recovery == LHP_GB0) {
		/* go-back-0: the whole message again, from its first packet */
		restart = q->una / x->npkts * x->npkts;
		q->una = restart;
	} else {
		restart = q->una;
	}
	pr_debug("QP %u: %s retry from PSN 0x%06x (una seq %llu, next %llu, sent %llu)\n", q->idx,
		 cause == LHP_EV_NAK ? "NAK" : "timeout", seq_psn(q, restart),
		 (unsigned long long)q->una, (unsigned long long)q->next,
		 (unsigned long long)q->sent_hi);
	q->next = restart;
	win_open(q, now);
	q->in_retry = true;
	q->rewinds++;
	lhp_event_add(&x->rewinds, q->idx, seq_psn(q, restart), cause);
	/*
	 * After a timeout the timer is not running: the retransmission arms it
	 * when it goes out (req_build), as rxe's update_state() arms it on a
	 * send when none is pending (drivers/infiniband/sw/rxe/rxe_req.c).
	 * Armed here, a retransmission that waits for --rate's pacer (a round
	 * over 1024 QPs takes 56 ms at 0.3 Gb/s) timed out again before it
	 * left, and again: every QP stuck in timeouts at 0.05 Gb/s, no loss.
	 */
	if (cause == LHP_EV_TIMEOUT)
		q->deadline_ns = 0;
	else
		arm_timer(x, q, now);
}

static void req_on_ack(struct req_ctx *x, struct lhp_req_qp *q, const struct lh_pkt *p,
		       uint64_t now)
{
	uint8_t syn = p->roce.aeth.syndrome;
	int32_t d = psn_diff(p->roce.psn, seq_psn(q, q->una));
	int64_t seq = (int64_t)q->una + d;

	if (q->error)
		return;
	if ((syn & AETH_TYPE_MASK) == AETH_TYPE_ACK) {
		q->acks_rx++;
		/* older than the oldest outstanding PSN (a duplicate's re-ACK): ignored */
		if (d < 0 || seq >= (int64_t)q->sent_hi) {
			q->dup_acks_rx++;
			return;
		}
		req_advance(x, q, (uint64_t)seq + 1, now);
		/* rxe's reset_retry_counters(): an ACK ends the retry episode */
		q->in_retry = false;
		q->retry_left = x->o->retry;
		return;
	}
	if (syn == AETH_NAK_PSN_SEQ_ERROR) {
		uint64_t msg_first = q->una / x->npkts * x->npkts;

		q->naks_rx++;
		/*
		 * gbn: a NAK older than the oldest outstanding PSN is stale (rxe
		 * ignores it). gb0: the responder names the first PSN of the
		 * message it discarded, which may be older than PSNs it ACKed.
		 */
		if (seq > (int64_t)q->sent_hi ||
		    (d < 0 && (x->p.recovery == LHP_GBN || seq < (int64_t)msg_first))) {
			q->naks_ignored++;
			return;
		}
		if (d > 0)
			req_advance(x, q, (uint64_t)seq, now); /* a NAK acks what precedes it */
		if (q->in_retry) {
			q->naks_ignored++;
			return;
		}
		req_retry(x, q, LHP_EV_NAK, now);
		return;
	}
	q->naks_rx++;
	{
		char why[64];

		snprintf(why, sizeof(why), "NAK syndrome 0x%02x from the responder", syn);
		qp_fail(x, q, why);
	}
}

static void req_rx(struct req_ctx *x, uint64_t now, int n)
{
	struct lhp_rx_drops *dr = &x->sum.req_drops;
	struct lh_pkt p;
	int i;

	for (i = 0; i < n; i++) {
		const struct lh_frame *f = &x->port.rx[i];
		uint32_t idx;

		if (lh_pkt_parse(f->data, f->len, true, &p) != LH_STAT_ROCE) {
			dr->not_roce++;
			continue;
		}
		idx = p.roce.dqpn - x->p.client_qpn_base;
		if (idx >= x->nqps) {
			dr->unknown_qp++;
			continue;
		}
		if (p.roce.opcode != ROCE_RC_ACKNOWLEDGE) {
			dr->bad_opcode++;
			continue;
		}
		if (!lhp_port_addr_ok(&x->port, &p)) {
			dr->addr_errors++;
			continue;
		}
		if (p.roce.pkey != LHP_PKEY) {
			dr->pkey_errors++;
			continue;
		}
		if (!lh_pkt_icrc_ok(f->data, &p)) {
			dr->icrc_errors++;
			continue;
		}
		x->rx_since_progress++;
		req_on_ack(x, &x->qps[idx], &p, now);
	}
}

static void req_timers(struct req_ctx *x, uint64_t now)
{
	uint32_t i;

	x->min_deadline = UINT64_MAX;
	for (i = 0; i < x->nqps; i++) {
		struct lhp_req_qp *q = &x->qps[i];

		if (!q->deadline_ns)
			continue;
		if (now >= q->deadline_ns) {
			if (q->error || q->una >= q->sent_hi) {
				q->deadline_ns = 0;
				continue;
			}
			q->timeouts++;
			req_retry(x, q, LHP_EV_TIMEOUT, now);
			if (!q->deadline_ns)
				continue;
		}
		if (q->deadline_ns < x->min_deadline)
			x->min_deadline = q->deadline_ns;
	}
}

static bool req_can_send(const struct req_ctx *x, const struct lhp_req_qp *q)
{
	if (q->error || q->next >= q->total)
		return false;
	if (q->next >= q->una && q->next - q->una >= x->p.window)
		return false;
	return q->next / x->npkts < q->una / x->npkts + x->o->tx_depth;
}

/* Build the packet at q->next into the tx batch */
static int req_build(struct req_ctx *x, struct lhp_req_qp *q, uint64_t now)
{
	struct lh_pkt_spec *s = &x->specs[q->idx];
	uint64_t seq = q->next, m = seq / x->npkts, k = seq % x->npkts;
	uint64_t off = k * x->p.mtu;
	size_t len = x->p.size - off < x->p.mtu ? (size_t)(x->p.size - off) : x->p.mtu;
	bool first = k == 0, last = k == x->npkts - 1;
	struct lh_frame *f;
	ssize_t n;

	f = lhp_port_tx_slot(&x->port);
	if (!f)
		return -ENOSPC;
	s->roce.opcode = x->npkts == 1 ? x->op_only :
			 first	       ? x->op_first :
			 last	       ? x->op_last :
					 x->op_middle;
	s->roce.psn = seq_psn(q, seq);
	s->roce.ackreq = last || ++q->noack >= x->p.ackreq_every;
	if (s->roce.ackreq)
		q->noack = 0;
	if (x->p.op == LHP_OP_WRITE && first) {
		s->roce.reth.va = q->remote_va;
		s->roce.reth.rkey = q->rkey;
		s->roce.reth.dmalen = (uint32_t)x->p.size;
	}
	lhp_pattern_fill(x->payload, lhp_pattern_base(x->p.seed, q->idx, m), off, len);
	s->payload = x->payload;
	s->payload_len = len;
	s->ip_id = x->port.ip_id++;
	n = lh_pkt_build(s, f->data, f->cap);
	if (n < 0) {
		x->port.tx_n--;
		return (int)n;
	}
	f->len = (uint32_t)n;
	if (seq < q->sent_hi) {
		q->retransmitted++;
	} else {
		q->sent_hi = seq + 1;
		if (first)
			q->msg_start_ns[m & q->ring_mask] = now;
	}
	if (!x->sent_any) {
		x->sent_any = true;
		x->t_first_tx = now;
		x->progress_ns = now;
	}
	q->pkts_sent++;
	q->next++;
	if (!q->deadline_ns)
		arm_timer(x, q, now);
	x->tokens -= (double)n;
	return 0;
}

static void refill_tokens(struct req_ctx *x, uint64_t now)
{
	if (!x->bytes_per_ns)
		return;
	x->tokens += (double)(now - x->tok_ns) * x->bytes_per_ns;
	if (x->tokens > x->bucket)
		x->tokens = x->bucket;
	x->tok_ns = now;
}

/* Fill the tx batch round robin over the QPs; returns frames built */
static int req_fill(struct req_ctx *x, uint64_t now)
{
	uint32_t scanned, built = 0;
	int err;

	refill_tokens(x, now);
	for (scanned = 0; scanned < x->nqps; scanned++) {
		struct lhp_req_qp *q = &x->qps[x->rr];
		int burst = scanned ? 0 : x->rr_burst;

		while (burst < BURST_PER_QP && req_can_send(x, q)) {
			/*
			 * Out of tokens or room: the next fill goes on with this QP
			 * and the rest of its turn. Moving on to the next QP instead
			 * left a message cut mid-way for a whole round: under --rate,
			 * 1024 QPs of 2-packet messages at 0.2 Gb/s take 84 ms a
			 * round, and the cut messages' 67 ms timers fired (116 NIC
			 * timeouts on a lossless path).
			 */
			if ((x->bytes_per_ns && x->tokens < 0) || (err = req_build(x, q, now)) == -ENOSPC) {
				x->rr_burst = burst;
				return (int)built;
			}
			if (err) {
				pr_warn("building a packet: %s\n", strerror(-err));
				return err;
			}
			burst++;
			built++;
		}
		/* stopped by its window with data left: the time until an ACK opens it */
		if (!q->win_full_since && !q->error && q->next < q->total && q->next >= q->una &&
		    q->next - q->una >= x->p.window)
			q->win_full_since = now;
		x->rr = (x->rr + 1) % x->nqps;
		x->rr_burst = 0;
	}
	return (int)built;
}

static bool req_all_done(const struct req_ctx *x)
{
	uint32_t i;

	for (i = 0; i < x->nqps; i++) {
		const struct lhp_req_qp *q = &x->qps[i];

		if (!q->error && (q->total == UINT64_MAX || q->una < q->total))
			return false;
	}
	return true;
}

/* --bad-frames: frames a receiver must drop, sent before the data */
static int send_bad_frames(struct req_ctx *x)
{
	uint8_t junk[64];
	uint32_t i, k, kind;
	int err;

	memset(junk, 0xa5, sizeof(junk));
	for (i = 0; i < x->nqps; i++) {
		struct lhp_req_qp *q = &x->qps[i];

		for (k = 0; k < x->o->bad_frames; k++) {
			for (kind = 0; kind < 4; kind++) {
				struct lh_pkt_spec s = x->specs[i];
				struct lh_frame *f = lhp_port_tx_slot(&x->port);
				size_t n = x->port.family == AF_INET6 ? 16 : 4;
				ssize_t len;

				if (!f) {
					err = lhp_port_flush(&x->port);
					if (err)
						return err;
					f = lhp_port_tx_slot(&x->port);
					if (!f)
						return -EAGAIN;
				}
				s.roce.opcode = x->op_only;
				s.roce.psn = q->psn0; /* the PSN the responder expects */
				s.roce.ackreq = true;
				s.roce.reth.va = q->remote_va;
				s.roce.reth.rkey = q->rkey;
				s.roce.reth.dmalen = sizeof(junk);
				s.payload = junk;
				s.payload_len = sizeof(junk);
				s.ip_id = x->port.ip_id++;
				if (kind == 1)
					s.roce.pkey = 0x1234; /* another partition */
				else if (kind == 2)
					s.src.b[n - 1] ^= 0x55; /* not the QP's peer */
				else if (kind == 3)
					s.dst.b[n - 1] ^= 0x55; /* not the responder's address */
				len = lh_pkt_build(&s, f->data, f->cap);
				if (len < 0)
					return (int)len;
				if (kind == 0) {
					struct lh_pkt p;

					f->data[len - 1] ^= 0xff; /* the ICRC, nothing else */
					if (lh_pkt_parse(f->data, (size_t)len, true, &p) == LH_STAT_ROCE &&
					    s.udp_csum)
						lh_pkt_udp_csum_update(f->data, &p);
				}
				f->len = (uint32_t)len;
			}
		}
	}
	return lhp_port_flush(&x->port);
}

static void req_fail(struct req_ctx *x, enum lhp_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void req_fail(struct req_ctx *x, enum lhp_status st, const char *fmt, ...)
{
	va_list ap;

	x->sum.status = st;
	va_start(ap, fmt);
	vsnprintf(x->sum.error, sizeof(x->sum.error), fmt, ap);
	va_end(ap);
	pr_warn("%s\n", x->sum.error);
}

/* Heartbeat out, anything from the server in; false when the channel broke */
static bool req_ctrl_poll(struct req_ctx *x, uint64_t now)
{
	char line[512];
	int r;

	if (now - x->last_ping >= PING_NS) {
		x->last_ping = now;
		r = lhp_ctrl_printf(&x->ctrl, "PING\n");
		if (r) {
			req_fail(x, LHP_ST_PEER_LOST, "side channel to the server failed: %s",
				 strerror(-r));
			return false;
		}
	}
	while ((r = lhp_ctrl_getline(&x->ctrl, line, sizeof(line), 0)) > 0) {
		if (lhp_starts_with(line, "ERR")) {
			req_fail(x, LHP_ST_PEER_LOST, "server: %s", line + 3);
			return false;
		}
	}
	if (r < 0) {
		req_fail(x, LHP_ST_PEER_LOST, "the server closed the side channel mid-run (%s)",
			 r == -EPIPE ? "EOF" : strerror(-r));
		return false;
	}
	return true;
}

/* The duration ended: no new message starts; those started finish */
static void req_stop_posting(struct req_ctx *x)
{
	uint32_t i;

	x->stopping = true;
	for (i = 0; i < x->nqps; i++) {
		struct lhp_req_qp *q = &x->qps[i];

		q->total = (q->sent_hi + x->npkts - 1) / x->npkts * x->npkts;
	}
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static void req_run(struct req_ctx *x)
{
	uint64_t now = lh_now_ns();
	unsigned int batch = x->port.batch;

	x->t_start = x->progress_ns = x->last_ping = x->last_ctrl = x->tok_ns = now;
	x->min_deadline = UINT64_MAX;
	x->tokens = x->bucket;
	if (x->o->duration_ns)
		x->t_end_duration = now + x->o->duration_ns;
	x->sum.status = LHP_ST_OK;

	for (;;) {
		int n = 0, built = 0, rx = 0, k, err = 0;
		uint64_t wait_ns;
		struct pollfd pfd[2];
		struct timespec ts;

		now = lh_now_ns();
		for (k = 0; k < 8; k++) {
			n = lh_pktio_recv(x->port.io, x->port.rx, batch, 0);
			if (n <= 0)
				break;
			x->port.frames_rx += (unsigned int)n;
			req_rx(x, now, n);
			rx += n;
			if ((unsigned int)n < batch)
				break;
		}
		if (n < 0) {
			req_fail(x, LHP_ST_ERROR, "receiving on %s: %s", x->port.ifname,
				 strerror(-n));
			return;
		}
		if (now >= x->min_deadline)
			req_timers(x, now);
		if (x->t_end_duration && !x->stopping && now >= x->t_end_duration)
			req_stop_posting(x);
		if (req_all_done(x))
			break;
		if (!lhp_port_tx_pending(&x->port)) {
			built = req_fill(x, now);
			if (built < 0) {
				req_fail(x, LHP_ST_ERROR, "building packets failed");
				return;
			}
		}
		err = lhp_port_flush(&x->port);
		if (err) {
			req_fail(x, LHP_ST_ERROR, "sending on %s: %s", x->port.ifname,
				 strerror(-err));
			return;
		}
		if (now - x->last_ctrl >= CTRL_POLL_NS) {
			x->last_ctrl = now;
			if (!req_ctrl_poll(x, now))
				return;
		}
		if (now - x->progress_ns > x->stall_ns) {
			if (x->rx_since_progress)
				req_fail(x, LHP_ST_LIVELOCK,
					 "livelock: no progress for %.1f s while %llu packets came back",
					 (double)x->stall_ns / 1e9,
					 (unsigned long long)x->rx_since_progress);
			else
				req_fail(x, LHP_ST_TIMEOUT,
					 "timeout: nothing heard from the server for %.1f s",
					 (double)x->stall_ns / 1e9);
			return;
		}
		if (built || rx)
			continue;

		/* Idle: sleep until an ACK, a timer, tokens, the side channel or the stall check */
		wait_ns = min_u64(CTRL_POLL_NS, x->progress_ns + x->stall_ns + 1 - now);
		if (x->min_deadline != UINT64_MAX)
			wait_ns = min_u64(wait_ns, x->min_deadline > now ? x->min_deadline - now : 0);
		if (x->t_end_duration && !x->stopping)
			wait_ns = min_u64(wait_ns,
					  x->t_end_duration > now ? x->t_end_duration - now : 0);
		if (x->bytes_per_ns && x->tokens < 0)
			wait_ns = min_u64(wait_ns, (uint64_t)(-x->tokens / x->bytes_per_ns) + 1);
		pfd[0].fd = lh_pktio_fd(x->port.io);
		pfd[0].events = POLLIN | (lhp_port_tx_pending(&x->port) ? POLLOUT : 0);
		pfd[1].fd = x->ctrl.fd;
		pfd[1].events = POLLIN;
		ts.tv_sec = (time_t)(wait_ns / 1000000000);
		ts.tv_nsec = (long)(wait_ns % 1000000000);
		if (ppoll(pfd, 2, &ts, NULL) > 0 && (pfd[1].revents & (POLLIN | POLLERR | POLLHUP)))
			x->last_ctrl = 0; /* look at the side channel now */
	}
	if (x->sum.qp_errors)
		x->sum.status = LHP_ST_QP_ERROR;
}

static void req_collect(struct req_ctx *x)
{
	uint32_t i;
	uint64_t end = x->t_last_done ? x->t_last_done : lh_now_ns();

	for (i = 0; i < x->nqps; i++) {
		struct lhp_req_qp *q = &x->qps[i];

		win_open(q, end > q->win_full_since ? end : q->win_full_since);
		x->sum.window_full_s += (double)q->win_full_ns / 1e9;
		x->sum.packets_sent += q->pkts_sent;
		x->sum.retransmitted += q->retransmitted;
		x->sum.naks_received += q->naks_rx;
		x->sum.naks_ignored += q->naks_ignored;
		x->sum.acks_received += q->acks_rx;
		x->sum.timeouts += q->timeouts;
		x->sum.rewinds += q->rewinds;
		x->sum.messages_started += (q->sent_hi + x->npkts - 1) / x->npkts;
	}
	x->sum.elapsed_s = x->sent_any && end > x->t_first_tx ? (double)(end - x->t_first_tx) / 1e9 :
								  0;
	x->sum.cpu_s = lhp_cpu_seconds() - x->cpu0;
	x->sum.req_drops.socket_drops = lh_pktio_drops(x->port.io);
	if (x->sum.peak_gbps == 0 && x->sum.elapsed_s > 0)
		x->sum.peak_gbps = (double)x->sum.bytes * 8 / x->sum.elapsed_s / 1e9;
}

static void parse_drops(const char *line, const char *pfx, struct lhp_rx_drops *d)
{
	char k[48];

#define DROP_FIELD(f)                                   \
	do {                                            \
		snprintf(k, sizeof(k), "%s" #f, pfx);   \
		lhp_kv_u64(line, k, &d->f);             \
	} while (0)
	DROP_FIELD(not_roce);
	DROP_FIELD(unknown_qp);
	DROP_FIELD(bad_opcode);
	DROP_FIELD(addr_errors);
	DROP_FIELD(pkey_errors);
	DROP_FIELD(icrc_errors);
	DROP_FIELD(socket_drops);
#undef DROP_FIELD
}

/* Tell the server how the run ended; take its responders' view in return */
static void req_results(struct req_ctx *x)
{
	char line[512];
	uint64_t v, verified = 0;
	uint32_t i;
	int r;

	r = lhp_ctrl_printf(&x->ctrl, "DONE status=%s\n", lhp_status_name(x->sum.status));
	for (i = 0; !r && i < x->nqps; i++) {
		const struct lhp_req_qp *q = &x->qps[i];

		r = lhp_ctrl_printf(&x->ctrl, "QPDONE i=%u done=%llu started=%llu\n", i,
				    (unsigned long long)q->msgs_done,
				    (unsigned long long)((q->sent_hi + x->npkts - 1) / x->npkts));
	}
	if (!r)
		r = lhp_ctrl_printf(&x->ctrl, "END\n");
	for (; !r;) {
		r = lhp_ctrl_getline(&x->ctrl, line, sizeof(line), RESULT_TIMEOUT_MS);
		if (r <= 0) {
			r = r ? r : -ETIMEDOUT;
			break;
		}
		r = 0;
		if (lhp_starts_with(line, "RESULT ")) {
			x->sum.have_server = true;
			lhp_kv_u64(line, "verified", &verified);
			lhp_kv_u64(line, "packets", &x->sum.r_packets);
			lhp_kv_u64(line, "messages", &x->sum.r_messages);
			lhp_kv_u64(line, "bytes", &x->sum.r_bytes);
			lhp_kv_u64(line, "naks_sent", &x->sum.naks_sent);
			lhp_kv_u64(line, "acks_sent", &x->sum.acks_sent);
			lhp_kv_u64(line, "oos_drops", &x->sum.oos_drops);
			lhp_kv_u64(line, "dups", &x->sum.dups);
			lhp_kv_u64(line, "verify_errors", &x->sum.verify_errors);
			lhp_kv_u64(line, "protocol_errors", &x->sum.protocol_errors);
			lhp_kv_u64(line, "discarded_msgs", &x->sum.discarded_msgs);
			lhp_kv_u64(line, "discarded_pkts", &x->sum.discarded_pkts);
			lhp_kv_dbl(line, "cpu", &x->sum.r_cpu_s);
			parse_drops(line, "", &x->sum.resp_drops);
		} else if (lhp_starts_with(line, "NAK ")) {
			uint64_t qp = 0, psn = 0, got = LHP_NO_PSN;

			if (lhp_kv_u64(line, "qp", &qp) && lhp_kv_u64(line, "psn", &psn)) {
				lhp_kv_u64(line, "got", &got);
				lhp_event_add_got(&x->naks, (uint32_t)qp, (uint32_t)psn, (uint32_t)got,
						  LHP_EV_NAK);
			}
			else if (lhp_kv_u64(line, "more", &v))
				x->naks.dropped += v;
		} else if (!strcmp(line, "END")) {
			break;
		}
	}
	if (r) {
		pr_warn("no result from the server: %s\n",
			r == -EPIPE ? "it closed the side channel" : strerror(-r));
		if (x->sum.status == LHP_ST_OK) {
			x->sum.status = LHP_ST_PEER_LOST;
			snprintf(x->sum.error, sizeof(x->sum.error),
				 "the server did not report its results");
		}
	}
	x->sum.verified = x->sum.have_server && verified;
}

static int req_setup(struct req_ctx *x, const char *reply)
{
	const struct lhp_opts *o = x->o;
	uint32_t i, ring = 1;
	uint64_t v;

	while (ring < o->tx_depth + 1)
		ring <<= 1;
	if (!lhp_kv_u64(reply, "qpn", &v) || v > ROCE_QPN_MASK)
		return -EPROTO;
	x->p.server_qpn_base = (uint32_t)v;
	x->qps = calloc(x->nqps, sizeof(*x->qps));
	x->specs = calloc(x->nqps, sizeof(*x->specs));
	if (!x->qps || !x->specs)
		return -ENOMEM;
	for (i = 0; i < x->nqps; i++) {
		struct lhp_req_qp *q = &x->qps[i];

		q->idx = i;
		q->qpn = x->p.client_qpn_base + i;
		q->dqpn = x->p.server_qpn_base + i;
		q->psn0 = x->p.client_psn[i];
		/* rxe derives the UDP source port from the QP numbers, for ECMP entropy */
		q->sport = (uint16_t)(0xc000 | ((q->qpn ^ q->dqpn) & 0x3fff));
		q->total = o->duration_ns ? UINT64_MAX : x->p.iters * x->npkts;
		q->retry_left = o->retry;
		q->remote_va = x->p.server_va[i];
		q->rkey = x->p.server_rkey[i];
		q->ring_mask = ring - 1;
		q->msg_start_ns = calloc(ring, sizeof(uint64_t));
		if (!q->msg_start_ns)
			return -ENOMEM;
		lhp_port_spec(&x->port, &x->specs[i], q->sport, q->dqpn);
	}
	return 0;
}

/* Read the server's answer to the parameters: OK, its QPs, READY */
static int req_handshake(struct req_ctx *x)
{
	char line[1024], reply[1024];
	uint64_t v;
	uint32_t i;
	int r;

	r = lhp_params_send(&x->ctrl, &x->p);
	if (r)
		goto broken;
	r = lhp_ctrl_getline(&x->ctrl, reply, sizeof(reply), RESULT_TIMEOUT_MS);
	if (r <= 0)
		goto broken;
	if (lhp_starts_with(reply, "ERR")) {
		pr_warn("the server refused the run:%s\n", reply + 3);
		return -EPROTO;
	}
	if (!lhp_starts_with(reply, "OK"))
		goto proto;
	for (i = 0; i < x->nqps; i++) {
		r = lhp_ctrl_getline(&x->ctrl, line, sizeof(line), RESULT_TIMEOUT_MS);
		if (r <= 0)
			goto broken;
		if (!lhp_starts_with(line, "QP ") || !lhp_kv_u64(line, "i", &v) || v != i)
			goto proto;
		if (!lhp_kv_u64(line, "psn", &v))
			goto proto;
		x->p.server_psn[i] = (uint32_t)v;
		if (!lhp_kv_u64(line, "va", &x->p.server_va[i]) || !lhp_kv_u64(line, "rkey", &v))
			goto proto;
		x->p.server_rkey[i] = (uint32_t)v;
	}
	r = lhp_ctrl_getline(&x->ctrl, line, sizeof(line), RESULT_TIMEOUT_MS);
	if (r <= 0)
		goto broken;
	if (strcmp(line, "READY") != 0)
		goto proto;
	return req_setup(x, reply);
broken:
	pr_warn("side channel to the server broke during setup: %s\n",
		r == 0 ? "no answer" : r == -EPIPE ? "connection closed" : strerror(-r));
	return r ? r : -ETIMEDOUT;
proto:
	pr_warn("unexpected answer from the server: '%.80s'\n", reply);
	return -EPROTO;
}

static void req_free(struct req_ctx *x)
{
	uint32_t i;

	if (x->qps)
		for (i = 0; i < x->nqps; i++)
			free(x->qps[i].msg_start_ns);
	free(x->qps);
	free(x->specs);
	lhp_params_free(&x->p);
	lhp_port_close(&x->port);
	lhp_ctrl_close(&x->ctrl);
	lhp_fct_free(&x->sum.fct);
	free(x);
}

int lhp_client(const struct lhp_opts *o)
{
	struct req_ctx *x = calloc(1, sizeof(*x));
	uint32_t i;
	int err, code;

	if (!x)
		return LHP_EXIT_ERROR;
	x->o = o;
	x->ctrl.fd = -1;
	lhp_fct_init(&x->sum.fct);
	x->p.op = o->op;
	x->p.recovery = o->recovery;
	x->p.qps = x->nqps = o->qps;
	x->p.size = o->size;
	x->p.mtu = o->mtu;
	x->p.iters = o->duration_ns ? 0 : o->iters;
	x->p.window = o->window;
	x->p.ackreq_every = o->ackreq_every;
	x->p.seed = lhp_random64();
	/* QP numbers 0, 1 and 0xffffff are special (SMI, GSI, multicast) */
	x->p.client_qpn_base = (uint32_t)(2 + lhp_random64() % (ROCE_QPN_MASK - 2 - o->qps));
	x->npkts = lhp_pkts_per_msg(o->size, o->mtu);
	x->timeout_ns = o->timeout ? 4096ull << o->timeout : 0;
	x->stall_ns = (uint64_t)o->stall_ms * 1000000;
	if (!x->stall_ns) {
		x->stall_ns = 8 * x->timeout_ns;
		if (x->stall_ns < 2000000000ull)
			x->stall_ns = 2000000000ull;
	}
	if (o->rate_bps) {
		x->bytes_per_ns = (double)o->rate_bps / 8e9;
		x->bucket = 16.0 * LHP_FRAME_CAP;
	}
	set_opcodes(x);
	if (lhp_params_alloc(&x->p, o->qps)) {
		req_free(x);
		return LHP_EXIT_ERROR;
	}
	for (i = 0; i < o->qps; i++)
		x->p.client_psn[i] = o->psn_given ? o->psn :
						   (uint32_t)(lhp_random64() & ROCE_PSN_MASK);

	err = lhp_ctrl_connect(o, &x->ctrl);
	if (err) {
		lhp_report_setup_error(stdout, o, "cannot connect to the server's side channel");
	} else {
		err = lhp_port_open(&x->port, o, &x->ctrl, o->mtu, o->qps, o->window);
		if (err)
			lhp_report_setup_error(stdout, o, "cannot send RoCEv2 frames to the server");
	}
	if (!err) {
		err = req_handshake(x);
		if (err)
			lhp_report_setup_error(stdout, o, "the server refused or broke the setup");
	}
	if (err) {
		req_free(x);
		return LHP_EXIT_ERROR;
	}
	pr_debug("connected: %u QPs, %llu packets per message, timeout %.3f ms, stall %.1f s\n",
		 x->nqps, (unsigned long long)x->npkts, (double)x->timeout_ns / 1e6,
		 (double)x->stall_ns / 1e9);
	x->cpu0 = lhp_cpu_seconds();
	if (o->bad_frames) {
		err = send_bad_frames(x);
		if (err) {
			pr_warn("sending the --bad-frames: %s\n", strerror(-err));
			lhp_report_setup_error(stdout, o, "cannot send the --bad-frames");
			req_free(x);
			return LHP_EXIT_ERROR;
		}
	}
	req_run(x);
	req_collect(x);
	if (x->sum.status != LHP_ST_PEER_LOST)
		req_results(x);
	lhp_report(stdout, o, &x->p, &x->port, &x->sum, &x->naks, &x->rewinds);
	code = lhp_exit_code(&x->sum);
	req_free(x);
	return code;
}
