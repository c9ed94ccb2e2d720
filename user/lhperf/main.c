// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhperf: a RoCEv2 RC endpoint and benchmark that plays the RDMA NICs on a
 * machine without any, following Linux rxe's transport rules, with the
 * command line and output of perftest's ib_write_bw / ib_send_bw.
 *
 *   lhperf --server [--dev IFACE] [--port N] [-j]          (the responder)
 *   lhperf [OPTIONS] SERVER                                 (the requester)
 *
 * This file is the program's entry; see lhperf.h for the layout of the rest
 * and docs/lhperf.md for the model.
 */
#include <net/if.h>
#include <signal.h>
#include <stdio.h>

#include "lhperf.h"
#include "log.h"

int main(int argc, char **argv)
{
	enum lh_log_level level = LH_LOG_WARN;
	struct lhp_opts o;

	lh_log_init("lhperf", LH_LOG_WARN);
	signal(SIGPIPE, SIG_IGN);
	if (lhp_options_parse(argc, argv, &o))
		return LHP_EXIT_USAGE;
	if (o.dev && !if_nametoindex(o.dev)) {
		fprintf(stderr, "lhperf: no interface %s\n", o.dev);
		return LHP_EXIT_ERROR;
	}
	if (o.verbose)
		level = LH_LOG_DEBUG;
	else if (o.server && !o.json)
		level = LH_LOG_INFO; /* the server says what it waits for */
	lh_log_set_level(level);
	return o.server ? lhp_server(&o) : lhp_client(&o);
}
