/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The one clock of every longhaul program: CLOCK_MONOTONIC, in ns. */
#ifndef LH_USER_CLOCK_H
#define LH_USER_CLOCK_H

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

#endif
