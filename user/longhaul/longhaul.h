/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the parts of the longhaul CLI share: exit statuses (one per failure
 * class), the instance it looks at (pin directory and lock file), the command
 * options, and the commands themselves.
 */
#ifndef LONGHAUL_H
#define LONGHAUL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "instance.h"

/* Exit statuses: the failure class, documented in `longhaul help` */
enum {
	LH_EXIT_OK = 0,
	LH_EXIT_ERROR = 1, /* anything else: permission, kernel, no such QP */
	LH_EXIT_USAGE = 2, /* bad object, command, flag or argument */
	LH_EXIT_NO_AGENT = 3, /* no agent runs for the instance, or a pin it needs is missing */
	LH_EXIT_INCOMPAT = 4, /* a pinned map does not match the structs this build knows */
};

/* Which agent: its pin directory and the lock file longhauld names after it */
struct lh_target {
	char instance[LH_INSTANCE_MAX]; /* "" for the default pin directory or --pin-dir */
	char pin_dir[PIN_DIR_MAX];
	char lock_path[PIN_DIR_MAX + 32];
};

/* Options of the commands (flags after OBJECT COMMAND) */
#define CMD_OPT_ALL 0x01
#define CMD_OPT_KEY 0x02
#define CMD_OPT_QPN 0x04

struct lh_cmd_opts {
	unsigned int given; /* CMD_OPT_* seen on the command line */
	bool all;
	const char *key;
	uint32_t qpn;
};

struct lh_cli {
	struct lh_target target;
	struct lh_cmd_opts opt;
};

/* "longhaul: error: ..." on stderr (warnings and debug go through log.h) */
void lh_cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define pr_err(...) lh_cli_err(__VA_ARGS__)

int do_status_show(struct lh_cli *cli);
int do_status_list(struct lh_cli *cli);
int do_stats_show(struct lh_cli *cli);
int do_stats_opcodes(struct lh_cli *cli);
int do_qps_show(struct lh_cli *cli);
int do_pools_show(struct lh_cli *cli);
int do_credits_show(struct lh_cli *cli);
int do_credits_stats(struct lh_cli *cli);
/* Sum a one-entry per-CPU map of n __u64 counters (lh_stats ...) into total[n]; 0 or LH_EXIT_* */
int sum_percpu(const struct lh_target *t, const char *name, __u64 *total, unsigned int n,
	       int *nr_cpus);

#endif /* LONGHAUL_H */
