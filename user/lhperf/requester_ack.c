// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What comes back to the requester: the receive checks of rxe_recv, then
 * ACKs and NAKs as rxe's completer takes them; acknowledged PSNs complete
 * messages (completion times, the peak rate).
 */
#include <stdio.h>

#include "lhperf.h"
#include "log.h"
#include "requester_int.h"

#define PEAK_BUCKET_NS (100ull * 1000 * 1000)

/* Acknowledge everything before new_una: complete messages, note progress */
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
	req_win_open(q, now);
	if (new_una > q->acked_hi) {
		q->acked_hi = new_una;
		x->progress_ns = now;
		x->rx_since_progress = 0;
	}
	/* Nothing outstanding: the timer stops; else it restarts from now */
	if (q->una >= q->sent_hi)
		q->deadline_ns = 0;
	else
		req_arm_timer(x, q, now);
}

/* An ACK or NAK for q (rxe's check_ack()) */
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
		uint64_t msg_first = msg_first_seq(x, q->una);

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
		req_qp_fail(x, q, why);
	}
}

/* A requester takes ACKs and NAKs only */
static bool is_ack(const struct lh_pkt *p)
{
	return p->roce.opcode == ROCE_RC_ACKNOWLEDGE;
}

/* n frames received: the checks of rxe_recv, then each ACK or NAK to its QP */
void req_rx(struct req_ctx *x, uint64_t now, int n)
{
	struct lh_pkt p;
	int i;

	for (i = 0; i < n; i++) {
		int idx = lhp_port_rx_check(&x->port, &x->port.rx[i], x->p.client_qpn_base, x->nqps,
					    is_ack, &x->sum.req_drops, &p);

		if (idx < 0)
			continue;
		x->rx_since_progress++;
		req_on_ack(x, &x->qps[idx], &p, now);
	}
}
