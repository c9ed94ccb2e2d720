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
		x->sum.messages_started += (q->sent_hi + x->npkts - 1) / x->npkts;
	}
	x->sum.elapsed_s = x->sent_any && end > x->t_first_tx ? (double)(end - x->t_first_tx) / 1e9 :
								  0;
	x->sum.cpu_s = lhp_cpu_seconds() - x->cpu0;
	x->sum.req_drops.socket_drops = lh_pktio_drops(x->port.io);
	if (x->sum.peak_gbps == 0 && x->sum.elapsed_s > 0)
		x->sum.peak_gbps = (double)x->sum.bytes * 8 / x->sum.elapsed_s / 1e9;
}

/* A RESULT line's receive drops (keys prefixed by pfx) */
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
void req_results(struct req_ctx *x)
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
