// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The requester's retries: the retransmit timer, a retry episode that
 * rewinds a QP (go-back-N, or go-back-0 to its message's first packet) and
 * spends its retry count, and the error state a QP ends in.
 */
#include <stdio.h>

#include "lhperf.h"
#include "log.h"
#include "requester_int.h"

/* (Re)start q's retransmit timer from now; a timeout of 0 means none (IBTA) */
void req_arm_timer(struct req_ctx *x, struct lhp_req_qp *q, uint64_t now)
{
	if (!x->timeout_ns)
		return;
	q->deadline_ns = now + x->timeout_ns;
	if (q->deadline_ns < x->min_deadline)
		x->min_deadline = q->deadline_ns;
}

/* q to the error state, once, with the reason said and kept for the report */
void req_qp_fail(struct req_ctx *x, struct lhp_req_qp *q, const char *why)
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

/* Start a retry episode (rxe: COMPST_ERROR_RETRY then req_retry) */
void req_retry(struct req_ctx *x, struct lhp_req_qp *q, uint8_t cause, uint64_t now)
{
	uint64_t restart;

	if (!q->retry_left) {
		req_qp_fail(x, q, "retry count exceeded");
		return;
	}
	if (x->o->retry != LHP_RETRY_INFINITE)
		q->retry_left--;
	if (x->p.recovery == LHP_GB0) {
		/* go-back-0: the whole message again, from its first packet */
		restart = msg_first_seq(x, q->una);
		q->una = restart;
	} else {
		restart = q->una;
	}
	pr_debug("QP %u: %s retry from PSN 0x%06x (una seq %llu, next %llu, sent %llu)\n", q->idx,
		 cause == LHP_EV_NAK ? "NAK" : "timeout", seq_psn(q, restart),
		 (unsigned long long)q->una, (unsigned long long)q->next,
		 (unsigned long long)q->sent_hi);
	q->next = restart;
	req_win_open(q, now);
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
		req_arm_timer(x, q, now);
}

/* Expired retransmit timers retry; the earliest deadline left is noted */
void req_timers(struct req_ctx *x, uint64_t now)
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
