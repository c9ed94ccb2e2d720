// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhwan probe: numbered test packets through a topology, and what happened
 * to them. The sender puts a BTH (so lhwan's psn rules and --match roce see
 * a RoCEv2 packet) and a probe header (stream, sequence number, total,
 * send time) into UDP datagrams to port 4791 and paces them; the receiver
 * reports, as JSON, which sequence numbers arrived, the loss rate, the loss
 * bursts (runs of consecutive missing numbers), duplicates, reordering, the
 * one-way delay (send time against the kernel's receive time stamp, one
 * host clock) and the rate on the wire.
 *
 * Two ways to move packets: UDP sockets (the kernel builds headers; the
 * ICRC is not valid), or --raw: whole frames through AF_PACKET (pktio) with
 * a valid ICRC, as the RoCEv2 endpoint lhperf sends and receives them.
 */
#include <signal.h>
#include <string.h>
#include <sys/socket.h>

#include "lhwan.h"
#include "log.h"
#include "probe_int.h"

volatile sig_atomic_t probe_stop;

static void probe_on_signal(int sig)
{
	(void)sig;
	probe_stop = 1;
}

int probe_main(int argc, char **argv)
{
	struct probe_opts o = {0};
	struct sigaction sa = {.sa_handler = probe_on_signal};

	if (argc < 2 || (strcmp(argv[1], "send") != 0 && strcmp(argv[1], "recv") != 0)) {
		probe_usage();
		return 2;
	}
	o.send = !strcmp(argv[1], "send");
	if (probe_parse_args(&o, argc - 1, argv + 1))
		return 2;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (o.send) {
		if (!o.dst.v4.s_addr && o.family == AF_INET) {
			pr_warn("send needs --dst\n");
			return 2;
		}
		return probe_send(&o);
	}
	return probe_recv(&o);
}
