// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhpkt: craft RoCEv2 packets with longhaul's packet library, write them to
 * a capture or send them on an interface, and check captures: every RoCEv2
 * packet parsed and its ICRC recomputed (the independent ICRC check of a
 * gateway capture).
 *
 *   lhpkt build [PACKET OPTIONS] -w FILE.pcap     build.c
 *   lhpkt send  [PACKET OPTIONS] --dev IFACE      send.c
 *   lhpkt check [-j] FILE.pcap...                 check.c
 *
 * The packet options of build and send: packet_opts.c. This file: the usage
 * text and the subcommands by name.
 */
#include <string.h>

#include "lhpkt.h"
#include "log.h"

void lhpkt_usage(FILE *f)
{
	fprintf(f, "Usage: lhpkt build [PACKET OPTIONS] -w FILE.pcap\n"
		   "       lhpkt send  [PACKET OPTIONS] --dev IFACE [--gap-us N] [--burst N]\n"
		   "       lhpkt check [-j] FILE.pcap...\n"
		   "\n");
	packet_opts_print(f);
	check_opts_print(f);
	fprintf(f,
		"check: exit 0 when every RoCEv2 packet has a valid ICRC, %d when one does not,\n"
		"       %d on bad usage, %d when a file cannot be read.\n",
		EXIT_BAD_ICRC, EXIT_USAGE, EXIT_IO);
}

/* The subcommands by name */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "build", cmd_build },
	{ "send", cmd_send },
	{ "check", cmd_check },
};

int main(int argc, char **argv)
{
	size_t i;

	lh_log_init("lhpkt", LH_LOG_WARN);
	if (argc < 2) {
		lhpkt_usage(stderr);
		return EXIT_USAGE;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		lhpkt_usage(stdout);
		return 0;
	}
	fprintf(stderr, "lhpkt: unknown command '%s' (build, send, check)\n", argv[1]);
	return EXIT_USAGE;
}
