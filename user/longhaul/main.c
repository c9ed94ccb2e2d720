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
 *
 * This file: the objects and their commands, the options as one table
 * (opts.h; the commands' own tagged CMD_OPT_*), the usage text and the
 * choice of the command. Each command is in the file of its object.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "longhaul.h"
#include "opts.h"
#include "output.h"
#include "pins.h"
#include "qps.h"

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

/* The command line: the global options and the commands' (flags after OBJECT COMMAND) */
struct cli_opts {
	bool json, pretty, debug;
	const char *instance, *pin_dir;
	struct lh_cmd_opts cmd;
};

static void usage_all(FILE *f);
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --qpn N: a QPN, as the QPs' own (qps show) or their requester's */
static int opt_qpn(void *cfg, const char *arg, const struct lh_opt *o, const struct lh_opt_ctx *ctx)
{
	(void)o;
	(void)ctx;
	if (!qpn_parse(arg, &((struct cli_opts *)cfg)->cmd.qpn)) {
		usage_error("--qpn '%s': not a QPN (0 to 0xffffff)\n", arg);
		return -EBADMSG;
	}
	return 0;
}

#define CO(field) LH_FIELD(struct cli_opts, field)

/* Before OBJECT or anywhere after it; the commands' own are tagged (.group) with CMD_OPT_* */
static const struct lh_opt cli_opt_table[] = {
	{ .type = LH_OPT_FLAG, .name = "json", .short_opt = 'j', CO(json),
	  .help = "JSON on stdout (one document per command)" },
	{ .type = LH_OPT_FLAG, .name = "pretty", .short_opt = 'p', CO(pretty),
	  .help = "indented JSON (implies --json)" },
	{ .type = LH_OPT_STR, .name = "instance", CO(instance), .metavar = "NAME",
	  .help = "the agent started with --instance NAME (pins under\n" DEFAULT_PIN_ROOT "/NAME)\n"
		  "default: " DEFAULT_PIN_ROOT },
	{ .type = LH_OPT_STR, .name = "pin-dir", CO(pin_dir), .metavar = "DIR",
	  .help = "the agent started with --pin-dir DIR" },
	{ .type = LH_OPT_FLAG, .name = "debug", .short_opt = 'd', CO(debug),
	  .help = "debug messages, libbpf's included" },
	{ .type = LH_OPT_HELP, .name = "help", .short_opt = 'h',
	  .help = "this help; `longhaul OBJECT help` for one object" },
	{ .type = LH_OPT_HEADING, .help = "Options of the commands (see OBJECT COMMAND above):" },
	{ .type = LH_OPT_FLAG, .name = "all", CO(cmd.all), .group = CMD_OPT_ALL,
	  .help = "every counter, or every agent, not only some" },
	{ .type = LH_OPT_STR, .name = "key", CO(cmd.key), .group = CMD_OPT_KEY,
	  .metavar = "SRC,DST,QPN", .help = "one QP or flow" },
	{ .type = LH_OPT_FUNC, .name = "qpn", .parse = opt_qpn, .group = CMD_OPT_QPN,
	  .metavar = "N", .help = "QPs with that QPN or that requester QPN" },
	{ .type = LH_OPT_END },
};

/* Each option given: the commands' noted, for the check that they apply (lh_opts.check) */
static int note_given(void *cfg, const struct lh_opt *o)
{
	((struct cli_opts *)cfg)->cmd.given |= (unsigned int)o->group;
	return 0;
}

/* A word that is no option or lacks its argument (lh_opts.bad_option) */
static void bad_option(const char *word, bool missing_arg)
{
	if (missing_arg)
		usage_error("option '%s' needs an argument\n", word);
	else
		usage_error("unrecognized option '%s'\n", word);
}

static const struct lh_opts cli_opts = {
	.opts = cli_opt_table,
	.usage = usage_all,
	.check = note_given,
	.bad_option = bad_option,
};

/* OPTIONS (from the table) and the exit statuses */
static void usage_options(FILE *f)
{
	fprintf(f, "\nOPTIONS:\n");
	lh_opts_print(f, cli_opt_table);
	fprintf(f,
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

/* The usage text, of one object's commands or (only NULL) of all */
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

/* The whole usage text (lh_opts.usage: --help) */
static void usage_all(FILE *f)
{
	usage(f, NULL);
}

void lh_cli_err(const char *fmt, ...)
{
	va_list ap;

	fputs("longhaul: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* "longhaul: error: ..." and a pointer to the help; returns LH_EXIT_USAGE */
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

/* The name of entry i of a table of objects or of commands (NULL past the last) */
typedef const char *(*name_at_fn)(const void *table, int i);

/* name_at_fn of objects[] */
static const char *object_name_at(const void *table, int i)
{
	return ((const struct object *)table)[i].name;
}

/* name_at_fn of an object's commands */
static const char *cmd_name_at(const void *table, int i)
{
	return ((const struct cmd *)table)[i].name;
}

/* The entry of table that word names; -1 when none or, *ambiguous, several */
static int find_name(name_at_fn name_at, const void *table, const char *word, bool *ambiguous)
{
	const char *name;
	int i, hit = -1, n = 0, m;

	for (i = 0; (name = name_at(table, i)); i++) {
		m = name_match(name, word);
		if (m == 2)
			return i;
		if (m && !n++)
			hit = i;
	}
	*ambiguous = n > 1;
	return n == 1 ? hit : -1;
}

/* The object word names (exactly or by a prefix of one) */
static const struct object *find_object(const char *word, bool *ambiguous)
{
	int i = find_name(object_name_at, objects, word, ambiguous);

	return i < 0 ? NULL : &objects[i];
}

/* The command of obj that word names */
static const struct cmd *find_cmd(const struct object *obj, const char *word, bool *ambiguous)
{
	int i = find_name(cmd_name_at, obj->cmds, word, ambiguous);

	return i < 0 ? NULL : &obj->cmds[i];
}

/* The long name of the command option tagged bit */
static const char *opt_name(unsigned int bit)
{
	const struct lh_opt *o;

	for (o = cli_opt_table; o->type != LH_OPT_END; o++)
		if (o->group == (int)bit)
			return o->name;
	return "?";
}

/* libbpf says nothing unless -d routes it into the log */
static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/*
 * OBJECT [COMMAND] into *obj and *cmd: 0, or the exit status after a message;
 * `help` and `OBJECT help` print the usage and leave *cmd NULL
 */
static int pick_command(int argc, char **argv, const struct object **obj, const struct cmd **cmd)
{
	bool ambiguous = false;

	*cmd = NULL;
	if (argc < 1)
		return usage_error("no object given\n");
	if (!strcmp(argv[0], "help")) {
		usage(stdout, NULL);
		return LH_EXIT_OK;
	}
	*obj = find_object(argv[0], &ambiguous);
	if (!*obj)
		return usage_error("%s object '%s'\n", ambiguous ? "ambiguous" : "unknown",
				   argv[0]);
	if (argc >= 2 && !strcmp(argv[1], "help")) {
		usage(stdout, *obj);
		return LH_EXIT_OK;
	}
	*cmd = argc < 2 ? (*obj)->cmds : find_cmd(*obj, argv[1], &ambiguous);
	if (!*cmd)
		return usage_error("%s command '%s' for %s\n", ambiguous ? "ambiguous" : "unknown",
				   argv[1], (*obj)->name);
	if (argc > 2)
		return usage_error("unexpected argument '%s' after '%s %s'\n", argv[2],
				   (*obj)->name, (*cmd)->name);
	return 0;
}

/* The commands' options given must be ones this command takes */
static int check_cmd_opts(const struct lh_cmd_opts *c, const struct object *obj,
			  const struct cmd *cmd)
{
	unsigned int bit = c->given & ~cmd->opts;

	if (!bit)
		return 0;
	return usage_error("--%s does not apply to '%s %s'\n", opt_name(bit & -bit), obj->name,
			   cmd->name);
}

int main(int argc, char **argv)
{
	struct cli_opts o = { 0 };
	const struct object *obj = NULL;
	const struct cmd *cmd;
	struct lh_cli cli = { 0 };
	int first, rc;

	lh_log_init("longhaul", LH_LOG_INFO);
	libbpf_set_print(libbpf_quiet);
	first = lh_opts_parse(&cli_opts, argc, argv, &o);
	if (first < 0)
		return LH_EXIT_USAGE;
	if (o.debug) {
		lh_log_set_level(LH_LOG_DEBUG);
		lh_log_route_libbpf();
	}
	rc = pick_command(argc - first, argv + first, &obj, &cmd);
	if (rc || !cmd)
		return rc;
	rc = check_cmd_opts(&o.cmd, obj, cmd);
	if (rc)
		return rc;
	rc = target_init(&cli.target, o.instance, o.pin_dir);
	if (rc)
		return rc;
	cli.opt = o.cmd;
	out_init(o.json || o.pretty, o.pretty);
	rc = cmd->fn(&cli);
	out_finish();
	return rc;
}
