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
	struct lhp_opts o;

	lh_log_init("lhperf", LH_LOG_WARN);
	signal(SIGPIPE, SIG_IGN);
	if (lhp_options_parse(argc, argv, &o))
		return LHP_EXIT_USAGE;
	if (o.dev && !if_nametoindex(o.dev)) {
		fprintf(stderr, "lhperf: no interface %s\n", o.dev);
		return LHP_EXIT_ERROR;
	}
	lh_log_set_level(o.verbose ? LH_LOG_DEBUG : o.server && !o.json ? LH_LOG_INFO : LH_LOG_WARN);
	return o.server ? lhp_server(&o) : lhp_client(&o);
}
