// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The requester's run loop: receive, timers, send, the side channel's
 * heartbeat, the end of --duration, the stall check, and the idle wait.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lhperf.h"
#include "log.h"
#include "requester_int.h"

#define CTRL_POLL_NS (20ull * 1000 * 1000)

/* The run ends with status st, the reason kept for the report and said */
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

	if (now - x->last_ping >= LHP_PING_NS) {
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

		q->total = msgs_started(x, q) * x->npkts;
	}
}

/* Every QP has all its messages acknowledged, or failed */
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

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The run's clocks, the full token bucket and the end of --duration, from now */
static void req_start(struct req_ctx *x, uint64_t now)
{
	x->t_start = x->progress_ns = x->last_ping = x->last_ctrl = x->tok_ns = now;
	x->min_deadline = UINT64_MAX;
	x->tokens = x->bucket;
	if (x->o->duration_ns)
		x->t_end_duration = now + x->o->duration_ns;
	x->sum.status = LHP_ST_OK;
}

/* Up to 8 batches of frames in, each to req_rx; the frames taken, or -errno */
static int req_receive(struct req_ctx *x, uint64_t now)
{
	unsigned int batch = x->port.batch;
	int n = 0, rx = 0, k;

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
	return n < 0 ? n : rx;
}

/* A new tx batch once the kernel took the last, then out; frames built, or -1 (run failed) */
static int req_send(struct req_ctx *x, uint64_t now)
{
	int built = 0, err;

	if (!lhp_port_tx_pending(&x->port)) {
		built = req_fill(x, now);
		if (built < 0) {
			req_fail(x, LHP_ST_ERROR, "building packets failed");
			return -1;
		}
	}
	err = lhp_port_flush(&x->port);
	if (err) {
		req_fail(x, LHP_ST_ERROR, "sending on %s: %s", x->port.ifname, strerror(-err));
		return -1;
	}
	return built;
}

/* No PSN newly acknowledged for the stall time: the run ends, livelock or timeout */
static bool req_stalled(struct req_ctx *x, uint64_t now)
{
	if (now - x->progress_ns <= x->stall_ns)
		return false;
	if (x->rx_since_progress)
		req_fail(x, LHP_ST_LIVELOCK,
			 "livelock: no progress for %.1f s while %llu packets came back",
			 (double)x->stall_ns / 1e9, (unsigned long long)x->rx_since_progress);
	else
		req_fail(x, LHP_ST_TIMEOUT, "timeout: nothing heard from the server for %.1f s",
			 (double)x->stall_ns / 1e9);
	return true;
}

/* Idle: sleep until an ACK, a timer, tokens, the side channel or the stall check */
static void req_idle_wait(struct req_ctx *x, uint64_t now)
{
	uint64_t wait_ns = min_u64(CTRL_POLL_NS, x->progress_ns + x->stall_ns + 1 - now);
	struct pollfd pfd[2];
	struct timespec ts;

	if (x->min_deadline != UINT64_MAX)
		wait_ns = min_u64(wait_ns, x->min_deadline > now ? x->min_deadline - now : 0);
	if (x->t_end_duration && !x->stopping)
		wait_ns = min_u64(wait_ns, x->t_end_duration > now ? x->t_end_duration - now : 0);
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

/* Run until every QP is done or the run fails */
void req_run(struct req_ctx *x)
{
	uint64_t now;
	int rx, built;

	req_start(x, lh_now_ns());
	for (;;) {
		now = lh_now_ns();
		rx = req_receive(x, now);
		if (rx < 0) {
			req_fail(x, LHP_ST_ERROR, "receiving on %s: %s", x->port.ifname,
				 strerror(-rx));
			return;
		}
		if (now >= x->min_deadline)
			req_timers(x, now);
		if (x->t_end_duration && !x->stopping && now >= x->t_end_duration)
			req_stop_posting(x);
		if (req_all_done(x))
			break;
		built = req_send(x, now);
		if (built < 0)
			return;
		if (now - x->last_ctrl >= CTRL_POLL_NS) {
			x->last_ctrl = now;
			if (!req_ctrl_poll(x, now))
				return;
		}
		if (req_stalled(x, now))
			return;
		if (!built && !rx)
			req_idle_wait(x, now);
	}
	if (x->sum.qp_errors)
		x->sum.status = LHP_ST_QP_ERROR;
}
