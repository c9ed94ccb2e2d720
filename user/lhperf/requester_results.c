// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The end of a client's run: the per-QP counters summed, then the exchange
 * with the server (DONE and each QP's counts out, its responders' RESULT and
 * NAK events in).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lhperf.h"
#include "log.h"
#include "requester_int.h"

/* The QPs' counters into the summary; times up to the last completion */
void req_collect(struct req_ctx *x)
{
	uint32_t i;
	uint64_t end = x->t_last_done ? x->t_last_done : lh_now_ns();

	for (i = 0; i < x->nqps; i++) {
		struct lhp_req_qp *q = &x->qps[i];

		req_win_open(q, end > q->win_full_since ? end : q->win_full_since);
		x->sum.window_full_s += (double)q->win_full_ns / 1e9;
		x->sum.packets_sent += q->pkts_sent;
		x->sum.retransmitted += q->retransmitted;
		x->sum.naks_received += q->naks_rx;
		x->sum.naks_ignored += q->naks_ignored;
		x->sum.acks_received += q->acks_rx;
		x->sum.timeouts += q->timeouts;
		x->sum.rewinds += q->rewinds;
		x->sum.messages_started += msgs_started(x, q);
	}
	x->sum.elapsed_s = x->sent_any && end > x->t_first_tx ? (double)(end - x->t_first_tx) / 1e9 :
								  0;
	x->sum.cpu_s = lhp_cpu_seconds() - x->cpu0;
	x->sum.req_drops.socket_drops = lh_pktio_drops(x->port.io);
	if (x->sum.peak_gbps == 0 && x->sum.elapsed_s > 0)
		x->sum.peak_gbps = (double)x->sum.bytes * 8 / x->sum.elapsed_s / 1e9;
}

/* Tell the server how the run ended; take its responders' view in return */
void req_results(struct req_ctx *x)
{
	char line[512];
	uint64_t verified = 0;
	uint32_t i;
	int r;

	r = lhp_ctrl_printf(&x->ctrl, "DONE status=%s\n", lhp_status_name(x->sum.status));
	for (i = 0; !r && i < x->nqps; i++) {
		const struct lhp_req_qp *q = &x->qps[i];

		r = lhp_ctrl_printf(&x->ctrl, "QPDONE i=%u done=%llu started=%llu\n", i,
				    (unsigned long long)q->msgs_done,
				    (unsigned long long)msgs_started(x, q));
	}
	if (!r)
		r = lhp_ctrl_printf(&x->ctrl, "END\n");
	for (; !r;) {
		r = lhp_ctrl_getline(&x->ctrl, line, sizeof(line), LHP_CTRL_WAIT_MS);
		if (r <= 0) {
			r = r ? r : -ETIMEDOUT;
			break;
		}
		r = 0;
		if (lhp_starts_with(line, "RESULT ")) {
			x->sum.have_server = true;
			lhp_result_parse(line, &x->sum, &verified);
		} else if (lhp_starts_with(line, "NAK ")) {
			lhp_nak_parse(line, &x->naks);
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
