// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The WAN emulator: a transparent bump in the wire between two interfaces.
 * Frames arriving on port A leave port B unchanged (direction a2b) and vice
 * versa (b2a). Each direction is a bottleneck link (rate, finite buffer,
 * tail drop) followed by a propagation delay with optional jitter, with
 * netem's loss, duplication and reordering decided on arrival.
 *
 * Per direction: a pool of fixed-size frame slots, a timing wheel of the
 * frames on the wire, and batched AF_PACKET I/O (recvmmsg straight into
 * pool slots, sendmmsg of everything due), so a syscall moves many frames.
 * One worker thread per direction by default (they share nothing but the
 * stop flag); the main thread only handles signals and writes statistics.
 *
 * This file starts the run, the workers and the signal handling, and stops
 * them; emulator_int.h says which file holds each of the rest.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "emulator_int.h"
#include "log.h"

const char *const dir_names[NR_DIRS] = {"a2b", "b2a"};
volatile sig_atomic_t stop_flag, stats_flag, loss_paused;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		stats_flag = 1;
	else if (sig == SIGUSR2)
		loss_paused = !loss_paused;
	else
		stop_flag = 1;
}

/*
 * The worker threads started, one per direction or one for both; they never
 * take signals: the main thread does and sets the flags. 0, or -1 said why
 */
static int start_workers(struct emu *e, struct worker *w)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigset_t block, old;
	int err, d, i;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	if (e->threads == 1) {
		w[0].e = e;
		w[0].nr = 2;
		w[0].dirs[0] = &e->dir[0];
		w[0].dirs[1] = &e->dir[1];
	} else {
		for (d = 0; d < NR_DIRS; d++) {
			w[d].e = e;
			w[d].nr = 1;
			w[d].dirs[0] = &e->dir[d];
		}
	}
	for (i = 0; i < e->threads; i++) {
		err = pthread_create(&e->dir[i].thread, NULL, worker_run, &w[i]);
		if (err) {
			pr_warn("pthread_create: %s\n", strerror(err));
			return -1;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return 0;
}

/* The main thread until a signal or --duration stops the run: the stats file when due */
static void run_until_stopped(struct emu *e)
{
	uint64_t now, next_stats;

	/* the stats file appearing tells a script that the ports are open */
	write_stats_file(e, "running");
	next_stats = e->stats_interval_ns ? e->started_ns + e->stats_interval_ns : UINT64_MAX;
	while (!stop_flag) {
		struct timespec ts = {0, 20000000}; /* 20 ms */

		nanosleep(&ts, NULL);
		now = lh_now_ns();
		if (e->duration_ns && now - e->started_ns >= e->duration_ns)
			stop_flag = 1;
		if (stats_flag || now >= next_stats) {
			stats_flag = 0;
			write_stats_file(e, "running");
			if (e->stats_interval_ns)
				next_stats = now + e->stats_interval_ns;
		}
	}
}

int emulator_main(int argc, char **argv)
{
	static struct emu emu;
	struct emu *e = &emu;
	struct worker w[NR_DIRS] = {0};
	uint64_t now;
	int err, d, i;

	if (emu_parse_args(e, argc, argv))
		return 2;
	if (e->check)
		return 0;
	err = open_ports(e);
	if (err)
		return 1;
	now = lh_now_ns();
	for (d = 0; d < NR_DIRS; d++) {
		err = dir_init(e, &e->dir[d], d, now);
		if (err) {
			pr_warn("setting up direction %s: %s\n", dir_names[d], strerror(-err));
			return 1;
		}
	}
	e->started_ns = now;
	if (start_workers(e, w))
		return 1;
	pr_debug("forwarding %s <-> %s, seed %llu\n", e->port[0].name, e->port[1].name,
		 (unsigned long long)e->seed);
	run_until_stopped(e);
	for (i = 0; i < e->threads; i++)
		pthread_join(e->dir[i].thread, NULL);
	write_stats_file(e, "stopped");
	if (e->json)
		write_stats(e, stdout, e->pretty, "stopped");
	close_ports(e);
	for (d = 0; d < NR_DIRS; d++)
		dir_free(&e->dir[d]);
	return 0;
}
