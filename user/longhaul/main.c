// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * longhaul: the operator's view of a running longhauld, in bpftool's form:
 *
 *   longhaul [-j|--json] [-p|--pretty] [--instance NAME | --pin-dir DIR]
 *            OBJECT [COMMAND] [ARGS]
 *
 * Objects are status, stats, qps, pools and credits; the first command of each
 * (show) is the default, and an unambiguous prefix names an object or a
 * command ("longhaul q" is "longhaul qps show"). Everything is read from the
 * agent's lock file and its pinned maps, opened read-only. Errors go to
 * stderr; the exit status tells the failure class apart (longhaul.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "longhaul.h"
#include "output.h"
#include "pins.h"
#include "rocev2.h"

struct cmd {
	const char *name;
	int (*fn)(struct lh_cli *cli);
	unsigned int opts; /* CMD_OPT_* it takes */
};

struct object {
	const char *name;
	const struct cmd *cmds;
	const char *usage;
};

static const struct cmd status_cmds[] = {
	{ "show", do_status_show, 0 },
	{ "list", do_status_list, CMD_OPT_ALL },
	{ NULL, NULL, 0 },
};

static const struct cmd stats_cmds[] = {
	{ "show", do_stats_show, CMD_OPT_ALL },
	{ "opcodes", do_stats_opcodes, CMD_OPT_ALL },
	{ NULL, NULL, 0 },
};

static const struct cmd qps_cmds[] = {
	{ "show", do_qps_show, CMD_OPT_KEY | CMD_OPT_QPN },
	{ "list", do_qps_show, CMD_OPT_KEY | CMD_OPT_QPN },
	{ NULL, NULL, 0 },
};

static const struct cmd pools_cmds[] = {
	{ "show", do_pools_show, 0 },
	{ NULL, NULL, 0 },
};

static const struct cmd credits_cmds[] = {
	{ "show", do_credits_show, CMD_OPT_KEY },
	{ "stats", do_credits_stats, CMD_OPT_ALL },
	{ NULL, NULL, 0 },
};

static const struct object objects[] = {
	{ "status", status_cmds,
	  "  status [show]           does an agent run for the instance: pid, mode, options, its\n"
	  "                          interfaces and the XDP/tc programs on them, its pinned maps\n"
	  "                          (each checked against this build), the pool size\n"
	  "  status list [--all]     the agents running on this host (--all: stopped ones too)\n" },
	{ "stats", stats_cmds,
	  "  stats [show] [--all]    the counters (lh_stats) summed over CPUs, each with its\n"
	  "                          description; the non-zero ones unless --all\n"
	  "  stats opcodes [--all]   RoCEv2 packets per BTH opcode (lh_opcodes)\n" },
	{ "qps", qps_cmds,
	  "  qps [show] [--key SRC,DST,QPN] [--qpn N]\n"
	  "                          the connections (lh_qp), one per data direction: addresses,\n"
	  "                          QPN, role, the requester's QPN, Depot ePSN / ePSN_D / acked,\n"
	  "                          Sentry next PSN / episode, flags, ring and its slots, idle\n"
	  "                          time. --key: one QP (data source, destination, destination\n"
	  "                          QPN); --qpn: QPs with that QPN or that requester QPN\n" },
	{ "pools", pools_cmds,
	  "  pools [show]            the packet pool: slots, used (held / backup / other, counted\n"
	  "                          in the rings of the QPs), free, rings in use\n" },
	{ "credits", credits_cmds,
	  "  credits [show] [--key SRC,DST,QPN]\n"
	  "                          credit flow control (lh_cr_flow, lh_cr_grant), per flow:\n"
	  "                          state, role (first / transit / last hop), active path, bytes\n"
	  "                          forwarded, held now, hold failures, age; per path: interface,\n"
	  "                          next hop, alive, credit limit, sent, credit left (limit - sent,\n"
	  "                          signed). A flow without a grant shows as pending\n"
	  "  credits stats [--all]   the credit program's counters (lh_cr_stats) summed over\n"
	  "                          CPUs; the non-zero ones unless --all\n" },
	{ NULL, NULL, NULL },
};

static void usage_options(FILE *f)
{
	fprintf(f,
		"\nOPTIONS:\n"
		"  -j, --json              JSON on stdout (one document per command)\n"
		"  -p, --pretty            indented JSON (implies --json)\n"
		"  --instance NAME         the agent started with --instance NAME (pins under\n"
		"                          " DEFAULT_PIN_ROOT "/NAME)\n"
		"                          default: " DEFAULT_PIN_ROOT "\n"
		"  --pin-dir DIR           the agent started with --pin-dir DIR\n"
		"  -d, --debug             debug messages, libbpf's included\n"
		"  -h, --help              this help; `longhaul OBJECT help` for one object\n"
		"\n"
		"Exit status:\n"
		"  %d  success\n"
		"  %d  another failure: permission (run as root), the kernel, no such QP\n"
		"  %d  bad usage: unknown object, command or option, bad argument\n"
		"  %d  no agent runs for the instance, or a map the command reads is not pinned\n"
		"     (status prints what it found, then exits %d when no agent runs)\n"
		"  %d  a pinned map does not match this build (map type, key or value size,\n"
		"     field offsets): agent and CLI built from different headers\n",
		LH_EXIT_OK, LH_EXIT_ERROR, LH_EXIT_USAGE, LH_EXIT_NO_AGENT, LH_EXIT_NO_AGENT,
		LH_EXIT_INCOMPAT);
}

static void usage(FILE *f, const struct object *only)
{
	const struct object *o;

	fprintf(f, "Usage: longhaul [OPTIONS] OBJECT [COMMAND] [ARGS]\n"
		   "       longhaul help | longhaul OBJECT help\n"
		   "Reads what a running longhauld pinned, read-only, and prints it as text\n"
		   "or JSON.\n"
		   "\nOBJECT COMMAND (show is the default; prefixes work: `longhaul q`):\n");
	for (o = objects; o->name; o++)
		if (!only || only == o)
			fputs(o->usage, f);
	usage_options(f);
}

void lh_cli_err(const char *fmt, ...)
{
	va_list ap;

	fputs("longhaul: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("longhaul: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try `longhaul help`.\n");
	return LH_EXIT_USAGE;
}

/*
 * Objects and commands are found by name: the exact name, else a prefix of
 * exactly one (bpftool takes the first prefix match; here an ambiguous one is
 * an error, as "stat" could be status or stats). A match of the exact name
 * returns 2, of a prefix 1, none 0.
 */
static int name_match(const char *name, const char *word)
{
	if (!strcmp(name, word))
		return 2;
	return !strncmp(name, word, strlen(word));
}

static const struct object *find_object(const char *word, bool *ambiguous)
{
	const struct object *o, *hit = NULL;
	int n = 0, m;

	for (o = objects; o->name; o++) {
		m = name_match(o->name, word);
		if (m == 2)
			return o;
		if (m && !n++)
			hit = o;
	}
	*ambiguous = n > 1;
	return n == 1 ? hit : NULL;
}

static const struct cmd *find_cmd(const struct object *obj, const char *word, bool *ambiguous)
{
	const struct cmd *c, *hit = NULL;
	int n = 0, m;

	for (c = obj->cmds; c->name; c++) {
		m = name_match(c->name, word);
		if (m == 2)
			return c;
		if (m && !n++)
			hit = c;
	}
	*ambiguous = n > 1;
	return n == 1 ? hit : NULL;
}

static const char *opt_name(unsigned int bit)
{
	switch (bit) {
	case CMD_OPT_ALL:
		return "--all";
	case CMD_OPT_KEY:
		return "--key";
	default:
		return "--qpn";
	}
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

enum {
	OPT_INSTANCE = 256,
	OPT_PIN_DIR,
	OPT_KEY,
	OPT_QPN,
};

static const struct option long_opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "pretty", no_argument, NULL, 'p' },
	{ "instance", required_argument, NULL, OPT_INSTANCE },
	{ "pin-dir", required_argument, NULL, OPT_PIN_DIR },
	{ "debug", no_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ "all", no_argument, NULL, 'a' },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "qpn", required_argument, NULL, OPT_QPN },
	{ NULL, 0, NULL, 0 },
};

int main(int argc, char **argv)
{
	const char *instance = NULL, *pin_dir = NULL, *word;
	const struct object *obj;
	const struct cmd *cmd;
	struct lh_cli cli = { 0 };
	bool json = false, pretty = false, ambiguous;
	unsigned long v;
	char *end;
	int c, rc;

	lh_log_init("longhaul", LH_LOG_INFO);
	libbpf_set_print(libbpf_quiet);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":jpdh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'p':
			json = pretty = true;
			break;
		case 'd':
			lh_log_set_level(LH_LOG_DEBUG);
			lh_log_route_libbpf();
			break;
		case 'h':
			usage(stdout, NULL);
			return LH_EXIT_OK;
		case OPT_INSTANCE:
			instance = optarg;
			break;
		case OPT_PIN_DIR:
			pin_dir = optarg;
			break;
		case 'a':
			cli.opt.given |= CMD_OPT_ALL;
			cli.opt.all = true;
			break;
		case OPT_KEY:
			cli.opt.given |= CMD_OPT_KEY;
			cli.opt.key = optarg;
			break;
		case OPT_QPN:
			errno = 0;
			v = strtoul(optarg, &end, 0);
			if (errno || *end || end == optarg || optarg[0] == '-' || v > ROCE_QPN_MASK)
				return usage_error("--qpn '%s': not a QPN (0 to 0xffffff)\n",
						   optarg);
			cli.opt.given |= CMD_OPT_QPN;
			cli.opt.qpn = (uint32_t)v;
			break;
		case ':':
			return usage_error("option '%s' needs an argument\n", argv[optind - 1]);
		default:
			return usage_error("unrecognized option '%s'\n", argv[optind - 1]);
		}
	}
	argc -= optind;
	argv += optind;

	if (argc < 1 || !strcmp(argv[0], "help")) {
		if (argc < 1)
			return usage_error("no object given\n");
		usage(stdout, NULL);
		return LH_EXIT_OK;
	}
	word = argv[0];
	obj = find_object(word, &ambiguous);
	if (!obj)
		return usage_error("%s object '%s'\n", ambiguous ? "ambiguous" : "unknown", word);
	if (argc >= 2 && !strcmp(argv[1], "help")) {
		usage(stdout, obj);
		return LH_EXIT_OK;
	}
	if (argc < 2) {
		cmd = obj->cmds;
	} else {
		word = argv[1];
		cmd = find_cmd(obj, word, &ambiguous);
		if (!cmd)
			return usage_error("%s command '%s' for %s\n",
					   ambiguous ? "ambiguous" : "unknown", word, obj->name);
	}
	if (argc > 2)
		return usage_error("unexpected argument '%s' after '%s %s'\n", argv[2], obj->name,
				   cmd->name);
	if (cli.opt.given & ~cmd->opts) {
		unsigned int bit = cli.opt.given & ~cmd->opts;

		return usage_error("%s does not apply to '%s %s'\n", opt_name(bit & -bit),
				   obj->name, cmd->name);
	}
	rc = target_init(&cli.target, instance, pin_dir);
	if (rc)
		return rc;

	out_init(json, pretty);
	rc = cmd->fn(&cli);
	out_finish();
	return rc;
}
