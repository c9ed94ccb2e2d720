// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhwan entry point: picks the subcommand (run, probe, dcloss).
 */
#include <stdio.h>
#include <string.h>

#include "lhwan.h"
#include "log.h"

static void usage(void)
{
	fprintf(stderr,
		"usage: lhwan [run] [OPTIONS] PORT_A PORT_B   WAN emulator (lhwan run --help)\n"
		"       lhwan probe send|recv [OPTIONS]       test traffic (lhwan probe --help)\n"
		"       lhwan dcloss attach|stats|detach ...  host-link loss (lhwan dcloss "
		"--help)\n");
}

int main(int argc, char **argv)
{
	lh_log_init("lhwan", LH_LOG_INFO);
	if (argc > 1 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))) {
		usage();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "probe")) {
		lh_log_init("lhwan probe", LH_LOG_INFO);
		return probe_main(argc - 1, argv + 1);
	}
	if (argc > 1 && !strcmp(argv[1], "dcloss")) {
		lh_log_init("lhwan dcloss", LH_LOG_INFO);
		return dcloss_main(argc - 1, argv + 1);
	}
	if (argc > 1 && !strcmp(argv[1], "run"))
		return emulator_main(argc - 1, argv + 1);
	return emulator_main(argc, argv);
}
