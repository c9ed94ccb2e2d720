/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * lhwan: the WAN emulator of longhaul's test world, and its two helpers.
 *   lhwan [run] ...      forward frames between two interfaces with delay,
 *                        rate, loss, duplication and reordering (emulator.c)
 *   lhwan probe ...      send / receive numbered RoCEv2-shaped test packets
 *                        and measure delay, rate and loss patterns (probe.c)
 *   lhwan dcloss ...     attach a tiny XDP + tcx loss program to a host
 *                        interface for loss inside a data center (dcloss.c)
 * This header holds what the three share: unit parsing and the tiny BPF
 * program loader.
 */
#ifndef LH_LHWAN_H
#define LH_LHWAN_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "clock.h"

int emulator_main(int argc, char **argv);
int probe_main(int argc, char **argv);
int dcloss_main(int argc, char **argv);

static inline uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Attach an XDP program that passes everything to ifindex unless one is
 * attached already: a veth receives XDP_TX / XDP_REDIRECT frames from its
 * peer only when it runs XDP itself, and with XDP it also stops getting GSO
 * super-frames. Returns the program fd (>= 0), 0 if something was attached
 * already, or -errno.
 */
int xdp_pass_attach(int ifindex);
void xdp_pass_detach(int ifindex, int prog_fd);

#endif /* LH_LHWAN_H */
