// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhperf's small helpers that its requester, responder, control and report
 * files share: randomness, CPU time, names, the event logs.
 */
#include <stdint.h>
#include <string.h>
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

const struct lh_opt_choice lhp_op_choices[] = {
	{ "write", LHP_OP_WRITE }, { "send", LHP_OP_SEND }, { NULL, 0 },
};

const struct lh_opt_choice lhp_recovery_choices[] = {
	{ "gbn", LHP_GBN }, { "gb0", LHP_GB0 }, { NULL, 0 },
};

const struct lh_opt_choice lhp_mtu_choices[] = {
	{ "256", 256 }, { "512", 512 }, { "1024", 1024 }, { "2048", 2048 }, { "4096", 4096 },
	{ NULL, 0 },
};

int lhp_choice_value(const struct lh_opt_choice *choices, const char *name)
{
	for (; choices->name; choices++)
		if (strcmp(choices->name, name) == 0)
			return choices->value;
	return -1;
}

const char *lhp_choice_name(const struct lh_opt_choice *choices, int value)
{
	for (; choices->name; choices++)
		if (choices->value == value)
			return choices->name;
	return NULL;
}

const char *lhp_op_name(enum lhp_op op)
{
	return lhp_choice_name(lhp_op_choices, (int)op);
}

const char *lhp_recovery_name(enum lhp_recovery r)
{
	return lhp_choice_name(lhp_recovery_choices, (int)r);
}

uint32_t lhp_random_qpn_base(uint32_t n)
{
	return (uint32_t)(2 + lhp_random64() % (ROCE_QPN_MASK - 2 - n));
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
