// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhwan run's options (user/lib/opts.h tables): the usage text and argv into
 * struct emu. An impairment option applies to both directions unless its value
 * starts with a2b: or b2a:; the main table hands such an option to
 * opt_each_dir(), which applies it by name from dir_table to each direction's
 * struct dir_cfg, so each value is read by the type its entry gives.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "emulator_int.h"
#include "lhwan.h"
#include "log.h"
#include "lossmodel.h"
#include "opts.h"
#include "units.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* "a2b:VALUE" -> mask 1, "b2a:VALUE" -> 2, else 3; *val points after the prefix */
static unsigned int dir_prefix(const char *arg, const char **val)
{
	if (!strncmp(arg, "a2b:", 4)) {
		*val = arg + 4;
		return 1;
	}
	if (!strncmp(arg, "b2a:", 4)) {
		*val = arg + 4;
		return 2;
	}
	*val = arg;
	return 3;
}

/* "P%[,CORR%][,gap N]": P is needed, CORR and the gap (where one is asked for) 0 unless given */
static int parse_prob_corr(const char *s, uint32_t *p, uint32_t *corr, uint32_t *gap)
{
	char buf[128], *save = NULL, *tok;
	int probs = 0;
	double v;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	*corr = 0;
	if (gap)
		*gap = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (gap && !strncmp(tok, "gap ", 4)) {
			*gap = (uint32_t)strtoul(tok + 4, NULL, 0);
			continue;
		}
		if (lh_parse_percent(tok, &v) || probs > 1)
			return -EINVAL;
		if (probs++ == 0)
			*p = lh_prob_to_u32(v);
		else
			*corr = lh_prob_to_u32(v);
	}
	return probs ? 0 : -EINVAL;
}

/* "SPEC for TIME": a loss SPEC picks the frames, each waits TIME more */
static int parse_stall(const char *val, struct lh_loss_spec *spec, uint64_t *ns, char *err,
		       size_t errlen)
{
	const char *sep = NULL, *q;
	char buf[1024];
	size_t n;

	for (q = strstr(val, " for "); q; q = strstr(q + 1, " for "))
		sep = q;
	if (!sep) {
		snprintf(err, errlen, "want 'SPEC for TIME' (psn 1000 for 2ms)");
		return -EINVAL;
	}
	n = (size_t)(sep - val);
	if (n >= sizeof(buf)) {
		snprintf(err, errlen, "too long");
		return -EINVAL;
	}
	memcpy(buf, val, n);
	buf[n] = 0;
	if (lh_parse_time_ns(sep + 5, NULL, ns) || !*ns || *ns > 10000000000ULL) {
		snprintf(err, errlen, "TIME '%s': want 1us to 10s", sep + 5);
		return -EINVAL;
	}
	return lh_loss_parse(buf, spec, err, errlen);
}

/* --overhead: bytes, negative too (a header the rate should not count) */
static int dir_overhead(void *cfg, const char *arg, const struct lh_opt *o,
			const struct lh_opt_ctx *ctx)
{
	char *end;
	long v;

	(void)o;
	(void)ctx;
	errno = 0;
	v = strtol(arg, &end, 0);
	if (errno || end == arg || *end || v < INT32_MIN || v > INT32_MAX)
		return -EINVAL;
	((struct dir_cfg *)cfg)->overhead = (int32_t)v;
	return 0;
}

/* --loss: one more rule (each direction parses its own: it owns its psn list) */
static int dir_loss(void *cfg, const char *arg, const struct lh_opt *o,
		    const struct lh_opt_ctx *ctx)
{
	struct dir_cfg *c = cfg;
	struct lh_loss_spec spec;
	char err[256];

	(void)o;
	(void)ctx;
	if (c->nr_loss == MAX_RULES) {
		pr_warn("at most %d loss rules per direction\n", MAX_RULES);
		return -EBADMSG;
	}
	if (lh_loss_parse(arg, &spec, err, sizeof(err))) {
		pr_warn("--loss '%s': %s\n", arg, err);
		return -EBADMSG;
	}
	if (spec.kind != LH_LOSS_NONE)
		c->loss[c->nr_loss++] = spec;
	return 0;
}

/* --stall 'SPEC for TIME': one more stall rule */
static int dir_stall(void *cfg, const char *arg, const struct lh_opt *o,
		     const struct lh_opt_ctx *ctx)
{
	struct dir_cfg *c = cfg;
	struct lh_loss_spec spec;
	char err[256];
	uint64_t ns;

	(void)o;
	(void)ctx;
	if (c->nr_stall == MAX_RULES) {
		pr_warn("at most %d stall rules per direction\n", MAX_RULES);
		return -EBADMSG;
	}
	if (parse_stall(arg, &spec, &ns, err, sizeof(err))) {
		pr_warn("--stall '%s': %s\n", arg, err);
		return -EBADMSG;
	}
	if (spec.kind == LH_LOSS_NONE)
		return 0;
	c->stall[c->nr_stall] = spec;
	c->stall_ns[c->nr_stall++] = ns;
	return 0;
}

/* --duplicate P%[,CORR%] */
static int dir_duplicate(void *cfg, const char *arg, const struct lh_opt *o,
			 const struct lh_opt_ctx *ctx)
{
	struct dir_cfg *c = cfg;
	uint32_t p, corr;

	(void)o;
	(void)ctx;
	if (parse_prob_corr(arg, &p, &corr, NULL))
		return -EINVAL;
	c->dup_p = p;
	c->dup_corr = corr;
	return 0;
}

/* --reorder P%[,CORR%][,gap N] (gap 1 unless given) */
static int dir_reorder(void *cfg, const char *arg, const struct lh_opt *o,
		       const struct lh_opt_ctx *ctx)
{
	struct dir_cfg *c = cfg;
	uint32_t p, corr, gap;

	(void)o;
	(void)ctx;
	if (parse_prob_corr(arg, &p, &corr, &gap))
		return -EINVAL;
	c->reorder_p = p;
	c->reorder_corr = corr;
	c->reorder_gap = gap ? gap : 1;
	return 0;
}

#define DF(field) LH_FIELD(struct dir_cfg, field)

static const struct lh_opt_choice jitter_dists[] = {
	{ "uniform", JITTER_UNIFORM }, { "normal", JITTER_NORMAL }, { NULL, 0 },
};

/* How each impairment option reads its value into one direction (no usage text here) */
static const struct lh_opt dir_table[] = {
	{ .type = LH_OPT_TIME, .name = "delay", DF(delay_ns) },
	{ .type = LH_OPT_TIME, .name = "jitter", DF(jitter_ns) },
	{ .type = LH_OPT_CHOICE, .name = "jitter-dist", DF(jitter_dist), .choices = jitter_dists },
	{ .type = LH_OPT_FLAG, .name = "jitter-reorder", DF(jitter_reorder) },
	{ .type = LH_OPT_FUNC, .name = "rate", .parse = lhwan_opt_rate, DF(rate_bps),
	  .metavar = "RATE" },
	{ .type = LH_OPT_SIZE, .name = "queue", DF(queue_bytes) },
	{ .type = LH_OPT_FUNC, .name = "overhead", .parse = dir_overhead, .metavar = "BYTES" },
	{ .type = LH_OPT_FUNC, .name = "loss", .parse = dir_loss, .metavar = "SPEC" },
	{ .type = LH_OPT_FUNC, .name = "duplicate", .parse = dir_duplicate, .metavar = "P" },
	{ .type = LH_OPT_FUNC, .name = "reorder", .parse = dir_reorder, .metavar = "P" },
	{ .type = LH_OPT_FUNC, .name = "stall", .parse = dir_stall, .metavar = "SPEC" },
	{ .type = LH_OPT_END },
};

static const struct lh_opts dir_opts = { .opts = dir_table };

/* An impairment option: dir_table's entry of the same name, applied to the directions named */
static int opt_each_dir(void *cfg, const char *arg, const struct lh_opt *o,
			const struct lh_opt_ctx *ctx)
{
	struct emu *e = cfg;
	const char *val;
	unsigned int mask = dir_prefix(arg, &val), d;

	(void)ctx;
	for (d = 0; d < NR_DIRS; d++)
		if ((mask & (1U << d)) && lh_opts_apply(&dir_opts, o->name, val, &e->dir[d].cfg))
			return -EBADMSG; /* the reason is printed */
	return 0;
}

#define EF(field) LH_FIELD(struct emu, field)
#define EACH_DIR .type = LH_OPT_FUNC, .parse = opt_each_dir

static const struct lh_opt_choice match_choices[] = {
	{ "all", false }, { "roce", true }, { NULL, 0 },
};

/* The options, in the order of the usage text */
static const struct lh_opt emu_table[] = {
	{ EACH_DIR, .name = "delay", .short_opt = 'd', .metavar = "TIME",
	  .help = "one-way propagation delay (10ms, 250us)" },
	{ EACH_DIR, .name = "jitter", .short_opt = 'J', .metavar = "TIME",
	  .help = "+- jitter added to the delay (uniform)" },
	{ EACH_DIR, .name = "jitter-dist", .metavar = "uniform|normal",
	  .help = "(normal: TIME is the standard deviation)" },
	{ .type = LH_OPT_FUNC, .parse = opt_each_dir, .name = "jitter-reorder",
	  .help = "let jitter reorder frames (default: keep FIFO order)" },
	{ EACH_DIR, .name = "rate", .short_opt = 'r', .metavar = "RATE",
	  .help = "bottleneck rate (100mbit, 1gbit; tc units), 0 = none" },
	{ EACH_DIR, .name = "queue", .metavar = "BYTES",
	  .help = "bottleneck buffer (default: 50 ms at the rate)" },
	{ EACH_DIR, .name = "overhead", .metavar = "BYTES",
	  .help = "added to each frame's length for the rate" },
	{ EACH_DIR, .name = "loss", .short_opt = 'l', .metavar = "SPEC",
	  .help = "loss rule (repeatable, any rule drops):\n"
		  "  random P% [CORR%] | gemodel P% [R% [1-H% [1-K%]]]\n"
		  "  state P13% [P31% [P32% [P23% [P14%]]]]\n"
		  "  every N [K] | psn [QPN:]PSN[-PSN][,...] [times T]" },
	{ EACH_DIR, .name = "duplicate", .metavar = "P%[,CORR%]" },
	{ EACH_DIR, .name = "reorder", .metavar = "P%[,CORR%][,gap N]",
	  .help = "a chosen frame skips the delay (netem)" },
	{ EACH_DIR, .name = "stall", .metavar = "'SPEC for TIME'",
	  .help = "a frame the loss SPEC picks waits TIME more;\n"
		  "frames behind it keep their order (a link that\n"
		  "stalls), unless --jitter-reorder (repeatable)" },
	{ .type = LH_OPT_CHOICE, .name = "match", EF(match_roce), .choices = match_choices,
	  .metavar = "all|roce",
	  .help = "frames the models see (default all); others only\n"
		  "get rate and delay" },
	{ .type = LH_OPT_UINT, .name = "seed", .short_opt = 's', EF(seed), .metavar = "N",
	  .help = "PRNG seed (default: from the clock, printed in stats)" },
	{ .type = LH_OPT_UINT, .name = "pool", EF(pool), .metavar = "N", .min = 1024,
	  .help = "frame slots per direction (default " STR(DEFAULT_POOL) ")" },
	{ .type = LH_OPT_UINT, .name = "threads", EF(threads), .metavar = "1|2", .min = 1, .max = 2,
	  .help = "worker threads (default 2: one per direction)" },
	{ .type = LH_OPT_STR, .name = "stats-file", EF(stats_file), .metavar = "PATH",
	  .help = "write JSON stats there (atomically) at start, on\n"
		  "SIGUSR1, every --stats-interval and at exit\n"
		  "(SIGUSR2 pauses the loss rules, the next resumes)" },
	{ .type = LH_OPT_TIME, .name = "stats-interval", EF(stats_interval_ns), .metavar = "TIME" },
	{ .type = LH_OPT_TIME, .name = "duration", EF(duration_ns), .metavar = "TIME",
	  .help = "exit after TIME" },
	{ .type = LH_OPT_FLAG, .name = "no-xdp", EF(no_xdp),
	  .help = "do not attach the XDP pass program to the ports" },
	{ .type = LH_OPT_FLAG, .name = "check", EF(check), .help = "validate the options and exit" },
	{ .type = LH_OPT_FLAG, .name = "json", .short_opt = 'j', EF(json),
	  .help = "print the final stats as JSON on stdout" },
	{ .type = LH_OPT_FLAG, .name = "pretty", .short_opt = 'p', EF(pretty),
	  .help = "the same, pretty" },
	{ .type = LH_OPT_FLAG, .name = "verbose", .short_opt = 'v', EF(verbose),
	  .help = "debug messages" },
	{ .type = LH_OPT_HELP, .name = "help", .short_opt = 'h', .help = "this text" },
	{ .type = LH_OPT_END },
};

/* lhwan's usage goes to stderr, --help's too: its stdout carries the JSON stats only */
static void emu_usage(FILE *f)
{
	(void)f;
	fprintf(stderr,
		"usage: lhwan [run] [OPTIONS] PORT_A PORT_B\n"
		"Forward frames between PORT_A and PORT_B (both ways, unchanged) emulating a WAN.\n"
		"Direction a2b: in on PORT_A, out on PORT_B; b2a the reverse. Every impairment\n"
		"option applies to both directions unless its value starts with a2b: or b2a:.\n");
	lh_opts_print(stderr, emu_table);
	fprintf(stderr, "Only the first transmission(s) of a listed psn are dropped: retransmissions\n"
			"pass, else the QP could never recover.\n");
}

static const struct lh_opts emu_opts = { .opts = emu_table, .usage = emu_usage };

int emu_parse_args(struct emu *e, int argc, char **argv)
{
	int first;

	e->seed = lh_now_ns() ^ ((uint64_t)getpid() << 32);
	e->threads = 2;
	e->pool = DEFAULT_POOL;
	first = lh_opts_parse(&emu_opts, argc, argv, e);
	if (first < 0)
		return -EINVAL;
	if (e->pretty)
		e->json = true;
	if (e->verbose)
		lh_log_set_level(LH_LOG_DEBUG);
	if (argc - first != 2) {
		pr_warn("need two ports (PORT_A PORT_B)\n");
		emu_usage(stderr);
		return -EINVAL;
	}
	e->port[0].name = argv[first];
	e->port[1].name = argv[first + 1];
	if (!strcmp(e->port[0].name, e->port[1].name)) {
		pr_warn("PORT_A and PORT_B must differ\n");
		return -EINVAL;
	}
	return 0;
}
