// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhperf's small helpers that its requester, responder, control and report
 * files share: randomness, CPU time, names, the event logs.
 */
#include <stdint.h>
#include <sys/random.h>
#include <sys/resource.h>

#include "clock.h"
#include "lhperf.h"

uint64_t lhp_random64(void)
{
	static uint64_t fallback = 0x9e3779b97f4a7c15ull;
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	fallback ^= lh_now_ns();
	fallback *= 0xbf58476d1ce4e5b9ull;
	return fallback ^ (fallback >> 29);
}

double lhp_cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

const char *lhp_op_name(enum lhp_op op)
{
	return op == LHP_OP_SEND ? "send" : "write";
}

const char *lhp_recovery_name(enum lhp_recovery r)
{
	return r == LHP_GB0 ? "gb0" : "gbn";
}

void lhp_event_add_got(struct lhp_events *e, uint32_t qp, uint32_t psn, uint32_t got, uint8_t cause)
{
	if (e->n == LHP_EVENTS_MAX) {
		e->dropped++;
		return;
	}
	e->ev[e->n].qp = qp;
	e->ev[e->n].psn = psn;
	e->ev[e->n].got = got;
	e->ev[e->n].cause = cause;
	e->n++;
}

void lhp_event_add(struct lhp_events *e, uint32_t qp, uint32_t psn, uint8_t cause)
{
	lhp_event_add_got(e, qp, psn, LHP_NO_PSN, cause);
}
