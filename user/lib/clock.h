/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The one clock of every longhaul program: CLOCK_MONOTONIC, in ns. */
#ifndef LH_USER_CLOCK_H
#define LH_USER_CLOCK_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

/*
 * Now, in ns of CLOCK_MONOTONIC: the clock of bpf_ktime_get_ns(), so the
 * times the programs write into maps (last_rx_ns, agentless_since_ns) compare
 * with it directly
 */
static inline uint64_t lh_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Sleep until lh_now_ns() reaches ns (no sleep when it has): pacing from a
 * start time, which a sleep per packet would drift from by its own overhead.
 * Returns 0, or EINTR when a signal cut it short.
 */
static inline int lh_sleep_until_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };

	return clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR ? EINTR : 0;
}

#endif
