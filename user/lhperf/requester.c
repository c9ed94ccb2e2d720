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
 *
 * This file is the client from its parameters to its exit status;
 * requester_int.h lists the files that hold the rest.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lhperf.h"
#include "log.h"
#include "requester_int.h"

/* The QPs from the parameters and the server's answer (its QPN base in reply) */
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
		q->sport = lhp_rxe_sport(q->qpn, q->dqpn);
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
	r = lhp_ctrl_getline(&x->ctrl, reply, sizeof(reply), LHP_CTRL_WAIT_MS);
	if (r <= 0)
		goto broken;
	if (lhp_starts_with(reply, "ERR")) {
		pr_warn("the server refused the run:%s\n", reply + 3);
		return -EPROTO;
	}
	if (!lhp_starts_with(reply, "OK"))
		goto proto;
	for (i = 0; i < x->nqps; i++) {
		r = lhp_ctrl_getline(&x->ctrl, line, sizeof(line), LHP_CTRL_WAIT_MS);
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
	r = lhp_ctrl_getline(&x->ctrl, line, sizeof(line), LHP_CTRL_WAIT_MS);
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

/* Everything the client holds, the context itself included */
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

/* The run's parameters and what follows from them (opcodes, timers, the rate's bucket) */
static int client_params(struct req_ctx *x, const struct lhp_opts *o)
{
	uint32_t i;

	x->p.op = o->op;
	x->p.recovery = o->recovery;
	x->p.qps = x->nqps = o->qps;
	x->p.size = o->size;
	x->p.mtu = o->mtu;
	x->p.iters = o->duration_ns ? 0 : o->iters;
	x->p.window = o->window;
	x->p.ackreq_every = o->ackreq_every;
	x->p.seed = lhp_random64();
	x->p.client_qpn_base = lhp_random_qpn_base(o->qps);
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
	req_set_opcodes(x);
	if (lhp_params_alloc(&x->p, o->qps))
		return -ENOMEM;
	for (i = 0; i < o->qps; i++)
		x->p.client_psn[i] = o->psn_given ? o->psn :
						   (uint32_t)(lhp_random64() & ROCE_PSN_MASK);
	return 0;
}

/* The side channel, the port and the server's QPs; a failure reported (--json) */
static int client_connect(struct req_ctx *x, const struct lhp_opts *o)
{
	int err = lhp_ctrl_connect(o, &x->ctrl);

	if (err) {
		lhp_report_setup_error(stdout, o, "cannot connect to the server's side channel");
		return err;
	}
	err = lhp_port_open(&x->port, o, &x->ctrl, o->mtu, o->qps, o->window);
	if (err) {
		lhp_report_setup_error(stdout, o, "cannot send RoCEv2 frames to the server");
		return err;
	}
	err = req_handshake(x);
	if (err)
		lhp_report_setup_error(stdout, o, "the server refused or broke the setup");
	return err;
}

int lhp_client(const struct lhp_opts *o)
{
	struct req_ctx *x = calloc(1, sizeof(*x));
	int err, code;

	if (!x)
		return LHP_EXIT_ERROR;
	x->o = o;
	x->ctrl.fd = -1;
	lhp_fct_init(&x->sum.fct);
	if (client_params(x, o) || client_connect(x, o)) {
		req_free(x);
		return LHP_EXIT_ERROR;
	}
	pr_debug("connected: %u QPs, %llu packets per message, timeout %.3f ms, stall %.1f s\n",
		 x->nqps, (unsigned long long)x->npkts, (double)x->timeout_ns / 1e6,
		 (double)x->stall_ns / 1e9);
	x->cpu0 = lhp_cpu_seconds();
	if (o->bad_frames) {
		err = req_send_bad_frames(x);
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
