// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Option tables (opts.h): getopt_long, usage lines and config keys from one table. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "opts.h"
#include "units.h"

#define HELP_COL 22
#define LONG_VAL_BASE 256

static bool takes_arg(const struct lh_opt *o)
{
	return o->type != LH_OPT_FLAG && o->type != LH_OPT_COUNT && o->type != LH_OPT_HELP &&
	       !(o->type == LH_OPT_FUNC && !o->metavar);
}

static bool is_option(const struct lh_opt *o)
{
	return o->type != LH_OPT_HEADING;
}

static int store_uint(void *field, size_t size, uint64_t v)
{
	switch (size) {
	case 1:
		*(uint8_t *)field = (uint8_t)v;
		return 0;
	case 2:
		*(uint16_t *)field = (uint16_t)v;
		return 0;
	case 4:
		*(uint32_t *)field = (uint32_t)v;
		return 0;
	case 8:
		*(uint64_t *)field = v;
		return 0;
	default:
		return -EINVAL;
	}
}

static uint64_t field_max(size_t size)
{
	return size >= 8 ? UINT64_MAX : (1ull << (8 * size)) - 1;
}

/* v against the entry's bounds and its field's width */
static int bounded(const struct lh_opt *o, uint64_t v)
{
	if (((o->flags & LH_OPTF_NONZERO) && !v) || (double)v < o->min ||
	    (o->max > 0 && (double)v > o->max) || v > field_max(o->size))
		return -EINVAL;
	return 0;
}

static int parse_uint(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	if (!*s || s[0] == '-' || isspace((unsigned char)s[0]))
		return -EINVAL;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

static int parse_double(const struct lh_opt *o, const char *s, double *d)
{
	char *end;

	errno = 0;
	*d = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(*d) || *d < o->min ||
	    (o->max > 0 && *d > o->max) || ((o->flags & LH_OPTF_NONZERO) && *d == 0))
		return -EINVAL;
	return 0;
}

static int parse_value(const struct lh_opt *o, const char *arg, void *field)
{
	const struct lh_opt_choice *ch;
	uint64_t v;

	switch (o->type) {
	case LH_OPT_UINT:
		if (parse_uint(arg, &v) || bounded(o, v))
			return -EINVAL;
		return store_uint(field, o->size, v);
	case LH_OPT_DOUBLE:
		return parse_double(o, arg, (double *)field);
	case LH_OPT_TIME:
		if (lh_parse_time_ns(arg, o->unit, &v))
			return -EINVAL;
		v /= o->scale ? o->scale : 1;
		if (bounded(o, v))
			return -EINVAL;
		return store_uint(field, o->size, v);
	case LH_OPT_RATE:
		if (lh_parse_rate_bps(arg, true, &v) || bounded(o, v))
			return -EINVAL;
		return store_uint(field, o->size, v);
	case LH_OPT_SIZE:
		if (lh_parse_bytes(arg, &v) || bounded(o, v))
			return -EINVAL;
		return store_uint(field, o->size, v);
	case LH_OPT_STR:
		*(const char **)field = arg;
		return 0;
	case LH_OPT_BUF:
		if (!*arg || strlen(arg) >= o->size)
			return -EINVAL;
		memcpy(field, arg, strlen(arg) + 1);
		return 0;
	case LH_OPT_CHOICE:
		for (ch = o->choices; ch && ch->name; ch++)
			if (!strcmp(ch->name, arg))
				return store_uint(field, o->size, (uint64_t)ch->value);
		return -EINVAL;
	default:
		return -EINVAL;
	}
}

/* That arg is not valid for o: the program's message, else ours */
static void say_invalid(const struct lh_opts *p, const struct lh_opt *o, const char *arg)
{
	if (p->invalid)
		p->invalid(o, arg);
	else
		pr_warn("--%s: '%s' is not valid (see --help)\n", o->name, arg);
}

/* One option with its argument ("" for those without) into cfg */
static int apply_one(const struct lh_opts *p, const struct lh_opt *o, const char *arg, void *cfg,
		     const struct lh_opt_ctx *ctx)
{
	char *field = (char *)cfg + o->off;
	int err = 0;

	switch (o->type) {
	case LH_OPT_FLAG:
		*(bool *)field = true;
		break;
	case LH_OPT_COUNT:
		(*(int *)field)++;
		break;
	case LH_OPT_FUNC:
		err = o->parse(cfg, arg, o, ctx);
		if (err == -EINVAL)
			say_invalid(p, o, arg);
		break;
	case LH_OPT_STR:
		/* a config file's line does not outlive the file's reading */
		if (ctx->from_file) {
			arg = strdup(arg);
			if (!arg)
				return -ENOMEM;
		}
		err = parse_value(o, arg, field);
		break;
	default:
		err = parse_value(o, arg, field);
		if (err)
			say_invalid(p, o, arg);
		break;
	}
	if (!err && o->given)
		*((bool *)cfg + o->given - 1) = true;
	return err;
}

static const struct lh_opt *find_long(const struct lh_opt *opts, const char *name)
{
	for (; opts->type != LH_OPT_END; opts++)
		if (is_option(opts) && opts->name && !strcmp(opts->name, name))
			return opts;
	return NULL;
}

int lh_opts_apply(const struct lh_opts *p, const char *name, const char *arg, void *cfg)
{
	const struct lh_opt *o = find_long(p->opts, name);
	struct lh_opt_ctx ctx = {.from_file = true};

	if (!o || o->type == LH_OPT_CONFIG || o->type == LH_OPT_HELP)
		return -ENOENT;
	return apply_one(p, o, arg ? arg : "", cfg, &ctx);
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static bool word_in(const char *w, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(w, *list))
			return true;
	return false;
}

/* One `key = value` line (comment and blanks gone): 0, 1 to skip (a flag said no), -EINVAL */
static int file_line(const struct lh_opts *p, char *s, void *cfg, const struct lh_opt_ctx *ctx)
{
	static const char *const yes[] = {"", "yes", "true", "1", NULL};
	static const char *const no[] = {"no", "false", "0", NULL};
	char *eq = strchr(s, '=');
	char *key = trim(eq ? (*eq = 0, s) : s);
	const char *val = eq ? trim(eq + 1) : "";
	const struct lh_opt *o = find_long(p->opts, key);

	if (!o || o->type == LH_OPT_CONFIG || o->type == LH_OPT_HELP ||
	    (o->flags & LH_OPTF_CLI_ONLY)) {
		pr_warn("%s:%d: unknown key '%s'\n", ctx->path, ctx->line, key);
		return -EINVAL;
	}
	if (!takes_arg(o)) {
		if (word_in(val, no))
			return 1;
		if (!word_in(val, yes)) {
			pr_warn("%s:%d: %s takes yes or no\n", ctx->path, ctx->line, key);
			return -EINVAL;
		}
		val = "";
	} else if (!*val) {
		pr_warn("%s:%d: %s needs a value\n", ctx->path, ctx->line, key);
		return -EINVAL;
	}
	if (apply_one(p, o, val, cfg, ctx)) {
		pr_warn("%s:%d: in the config file\n", ctx->path, ctx->line);
		return -EINVAL;
	}
	return 0;
}

int lh_opts_read_file(const struct lh_opts *p, const char *path, void *cfg)
{
	struct lh_opt_ctx ctx = {.from_file = true, .path = path};
	char line[512];
	FILE *f = fopen(path, "r");
	int err = 0;

	if (!f) {
		pr_warn("--config %s: %s\n", path, strerror(errno));
		return -EINVAL;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		char *hash = strchr(line, '#'), *s;

		ctx.line++;
		if (hash)
			*hash = 0;
		s = trim(line);
		if (*s && file_line(p, s, cfg, &ctx) < 0)
			err = -EINVAL;
	}
	fclose(f);
	return err;
}

/*
 * getopt_long's tables from ours: long-only options get values from LONG_VAL_BASE.
 * The short options start with '-' (find_config's: in order, argv left as it is),
 * then ':' when quiet (a missing argument returned as ':')
 */
static int build_getopt(const struct lh_opt *opts, bool quiet, struct option **lo, char **so)
{
	size_t n = 0, i, k = 0, s = 0;
	struct option *l;
	char *sh;

	while (opts[n].type != LH_OPT_END)
		n++;
	l = calloc(n + 1, sizeof(*l));
	sh = calloc(2 * n + 3, 1);
	if (!l || !sh) {
		free(l);
		free(sh);
		return -ENOMEM;
	}
	sh[s++] = '-';
	if (quiet)
		sh[s++] = ':';
	for (i = 0; i < n; i++) {
		const struct lh_opt *o = &opts[i];
		int val = o->short_opt ? o->short_opt : (int)(LONG_VAL_BASE + i);

		if (!is_option(o))
			continue;
		if (o->name)
			l[k++] = (struct option){
				o->name, takes_arg(o) ? required_argument : no_argument, NULL, val};
		if (o->short_opt) {
			sh[s++] = (char)o->short_opt;
			if (takes_arg(o))
				sh[s++] = ':';
		}
	}
	*lo = l;
	*so = sh;
	return 0;
}

static const struct lh_opt *by_val(const struct lh_opt *opts, int val)
{
	size_t i;

	if (val >= LONG_VAL_BASE)
		return &opts[val - LONG_VAL_BASE];
	for (i = 0; opts[i].type != LH_OPT_END; i++)
		if (is_option(&opts[i]) && opts[i].short_opt == val)
			return &opts[i];
	return NULL;
}

static void print_name(char *buf, size_t len, const struct lh_opt *o)
{
	if (o->short_opt && o->name)
		snprintf(buf, len, "-%c, --%s", o->short_opt, o->name);
	else if (o->short_opt)
		snprintf(buf, len, "-%c", o->short_opt);
	else
		snprintf(buf, len, "--%s", o->name);
}

/*
 * The config file's path, from a quiet first pass (it may come anywhere,
 * abbreviated). It takes the words in order (so: "-..."): permuted, argv would
 * give the second pass "--dc x" for "x --dc"
 */
static const char *find_config(const struct lh_opt *opts, int argc, char **argv,
			       const struct option *lo, const char *so)
{
	const struct lh_opt *o;
	const char *path = NULL;
	int c;

	opterr = 0;
	optind = 0; /* glibc's full reset: the ordering read again from so */
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		o = c == '?' || c == 1 ? NULL : by_val(opts, c);
		if (o && o->type == LH_OPT_CONFIG)
			path = optarg;
	}
	return path;
}

static int parse_cli(const struct lh_opts *p, int argc, char **argv, void *cfg,
		     const struct option *lo, const char *so)
{
	struct lh_opt_ctx ctx = {.from_file = false};
	int c;

	/* getopt says what was wrong ("unrecognized option '--x'") unless the program does */
	opterr = !p->bad_option;
	optind = 0; /* a full reset: so + 1, argv permuted (options may follow arguments) */
	while ((c = getopt_long(argc, argv, so + 1, lo, NULL)) != -1) {
		const struct lh_opt *o = c == '?' || c == ':' ? NULL : by_val(p->opts, c);

		if (!o && p->bad_option) {
			p->bad_option(argv[optind - 1], c == ':');
			return -1;
		}
		if (!o) {
			if (p->usage)
				p->usage(stderr);
			return -1;
		}
		if (o->type == LH_OPT_HELP) {
			if (p->usage)
				p->usage(stdout);
			exit(0);
		}
		if (o->type == LH_OPT_CONFIG)
			continue;
		if ((p->check && p->check(cfg, o)) || apply_one(p, o, optarg ? optarg : "", cfg, &ctx))
			return -1;
	}
	return optind;
}

int lh_opts_parse(const struct lh_opts *p, int argc, char **argv, void *cfg)
{
	const char *path;
	struct option *lo;
	char *so;
	int ret = -1;

	if (build_getopt(p->opts, p->bad_option != NULL, &lo, &so))
		return -1;
	path = find_config(p->opts, argc, argv, lo, so);
	if (!path || !lh_opts_read_file(p, path, cfg))
		ret = parse_cli(p, argc, argv, cfg, lo, so);
	free(lo);
	free(so);
	return ret;
}

static void print_help(FILE *f, const char *left, const char *help)
{
	const char *nl;
	int col;

	col = fprintf(f, "  %s", left);
	if (!help || !*help) {
		fputc('\n', f);
		return;
	}
	if (col + 2 > HELP_COL)
		col += fprintf(f, "  ");
	for (;;) {
		nl = strchr(help, '\n');
		fprintf(f, "%*s%.*s\n", col < HELP_COL ? HELP_COL - col : 0, "",
			nl ? (int)(nl - help) : (int)strlen(help), help);
		if (!nl)
			break;
		help = nl + 1;
		col = 0;
	}
}

void lh_opts_print(FILE *f, const struct lh_opt *opts)
{
	char left[96], name[64];

	for (; opts->type != LH_OPT_END; opts++) {
		if (opts->type == LH_OPT_HEADING) {
			fprintf(f, "%s\n", opts->help);
			continue;
		}
		print_name(name, sizeof(name), opts);
		if (takes_arg(opts) && opts->metavar)
			snprintf(left, sizeof(left), "%s %s", name, opts->metavar);
		else
			snprintf(left, sizeof(left), "%s", name);
		print_help(f, left, opts->help);
	}
}
