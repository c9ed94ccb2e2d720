// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Option tables (user/lib/opts.h): each type, bound, the config file and the usage lines. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "opts.h"
#include "tap.h"

struct cfg {
	bool flag;
	int verbose;
	uint16_t port;
	uint64_t big;
	double frac;
	uint32_t rtt_us;
	uint32_t idle_s;
	uint64_t rate;
	uint32_t size;
	const char *dev;
	char name[8];
	int color;
	bool fast;
	int funcs;
	bool port_given;
};

enum { RED = 1, BLUE = 2 };

static const struct lh_opt_choice colors[] = { { "red", RED }, { "blue", BLUE }, { NULL, 0 } };

static int count_func(void *cfg, const char *arg, const struct lh_opt *o,
		      const struct lh_opt_ctx *ctx)
{
	(void)o;
	(void)ctx;
	if (!strcmp(arg, "bad"))
		return -EINVAL;
	((struct cfg *)cfg)->funcs++;
	return 0;
}

#define F(x) LH_FIELD(struct cfg, x)
static const struct lh_opt table[] = {
	{ .type = LH_OPT_FLAG, .name = "flag", .short_opt = 'f', F(flag), .help = "a flag" },
	{ .type = LH_OPT_COUNT, .name = "verbose", .short_opt = 'v', F(verbose),
	  .flags = LH_OPTF_CLI_ONLY },
	{ .type = LH_OPT_UINT, .name = "port", .short_opt = 'p', F(port), .metavar = "N", .min = 1,
	  .max = 65535, LH_GIVEN(struct cfg, port_given), .help = "a port\nsecond line" },
	{ .type = LH_OPT_UINT, .name = "big", F(big), .metavar = "N" },
	{ .type = LH_OPT_DOUBLE, .name = "frac", F(frac), .metavar = "X", .max = 1 },
	{ .type = LH_OPT_TIME, .name = "rtt", F(rtt_us), .metavar = "TIME", .unit = "ms",
	  .scale = 1000, .flags = LH_OPTF_NONZERO },
	{ .type = LH_OPT_TIME, .name = "idle", F(idle_s), .metavar = "TIME", .unit = NULL,
	  .scale = 1000000000, .min = 1 },
	{ .type = LH_OPT_RATE, .name = "rate", F(rate), .metavar = "RATE" },
	{ .type = LH_OPT_SIZE, .name = "size", F(size), .metavar = "SIZE", .min = 64 },
	{ .type = LH_OPT_STR, .name = "dev", .short_opt = 'd', F(dev), .metavar = "IFACE" },
	{ .type = LH_OPT_BUF, .name = "name", F(name), .metavar = "NAME" },
	{ .type = LH_OPT_CHOICE, .name = "color", F(color), .choices = colors, .metavar = "C" },
	{ .type = LH_OPT_CHOICE, .name = "speed", F(fast), .choices = colors, .metavar = "C" },
	{ .type = LH_OPT_FUNC, .name = "func", .parse = count_func, .metavar = "X" },
	{ .type = LH_OPT_CONFIG, .name = "config", .metavar = "FILE" },
	{ .type = LH_OPT_HEADING, .help = "A heading:" },
	{ .type = LH_OPT_UINT, .name = "a-very-long-option", F(big), .metavar = "N",
	  .help = "help after two spaces" },
	{ .type = LH_OPT_END },
};

static const struct lh_opts opts = { .opts = table };

/* argv from a string of words split at spaces, parsed by p */
static int parse_by(const struct lh_opts *p, struct cfg *c, char *line)
{
	char *argv[32], *save, *w;
	int argc = 0;

	argv[argc++] = "test";
	for (w = strtok_r(line, " ", &save); w && argc < 31; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	memset(c, 0, sizeof(*c));
	return lh_opts_parse(p, argc, argv, c);
}

static int parse(struct cfg *c, char *line)
{
	return parse_by(&opts, c, line);
}

static void refused(const char *name, const char *arg)
{
	struct cfg c = { 0 };
	int rc = lh_opts_apply(&opts, name, arg, &c);

	tap_ok(rc < 0, "--%s '%s' refused (rc %d)", name, arg, rc);
}

static void cli_values(void)
{
	char line[] = "-f -vv -p 4791 --big 0x10 --frac 0.25 --rtt 250us --idle 2s --rate 10g "
		      "--size 4k -d eth0 --name gw1 --color blue --speed red --func x --func y "
		      "rest";
	struct cfg c;
	int first = parse(&c, line);

	tap_ok(first == 29, "first non-option argument: %d (want 29)", first);
	tap_ok(c.flag, "-f: flag %d (want 1)", c.flag);
	tap_ok(c.verbose == 2, "-vv: verbose %d (want 2)", c.verbose);
	tap_ok(c.port == 4791, "-p: port %u (want 4791)", c.port);
	tap_ok(c.port_given, "-p: given %d (want 1)", c.port_given);
	tap_ok(c.big == 16, "--big 0x10: %" PRIu64 " (want 16)", c.big);
	tap_ok(c.frac == 0.25, "--frac: %g (want 0.25)", c.frac);
	tap_ok(c.rtt_us == 250, "--rtt 250us: %u us (want 250)", c.rtt_us);
	tap_ok(c.idle_s == 2, "--idle 2s: %u s (want 2)", c.idle_s);
	tap_ok(c.rate == 10000000000ull, "--rate 10g: %" PRIu64 " (want 1e10)", c.rate);
	tap_ok(c.size == 4096, "--size 4k: %u (want 4096)", c.size);
	tap_eq_str(c.dev, "eth0", "-d: dev");
	tap_ok(!strcmp(c.name, "gw1"), "--name: %s (want gw1)", c.name);
	tap_ok(c.color == BLUE, "--color blue: %d (want %d)", c.color, BLUE);
	tap_ok(c.fast == true, "--speed red into a bool: %d (want 1)", c.fast);
	tap_ok(c.funcs == 2, "--func twice: %d calls (want 2)", c.funcs);
}

static void bounds(void)
{
	refused("port", "0");
	refused("port", "65536");
	refused("port", "-1");
	refused("port", "12x");
	refused("port", "");
	refused("big", "18446744073709551616");
	refused("frac", "1.5");
	refused("frac", "nan");
	refused("rtt", "0");
	refused("rtt", "5000s"); /* 5e9 us does not fit 32 bits */
	refused("idle", "10");	 /* a unit is needed */
	refused("idle", "500ms"); /* under the least, 1 s */
	refused("rate", "fast");
	refused("size", "32");
	refused("name", "toolongname");
	refused("name", "");
	refused("color", "green");
	refused("func", "bad");
	refused("nosuch", "1");
	refused("config", "x");
}

static void config_file(void)
{
	char path[] = "/tmp/test_opts.XXXXXX";
	char line[64];
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct cfg c;
	int first;

	if (!tap_ok(f != NULL, "a config file written (%s)", path))
		return;
	fprintf(f, "# a comment\n  port = 80  \nflag = no\nname = fromfi # trailing\n"
		   "dev = wan0\n\n");
	fclose(f);
	snprintf(line, sizeof(line), "--conf %s --port 81", path);
	first = parse(&c, line);
	tap_ok(first == 5, "config run: first argument %d (want 5)", first);
	tap_ok(c.port == 81, "the command line wins: port %u (want 81)", c.port);
	tap_ok(!strcmp(c.name, "fromfi"), "file's name: %s (want fromfi)", c.name);
	tap_ok(!c.flag, "flag = no: flag %d (want 0)", c.flag);
	tap_eq_str(c.dev, "wan0", "file's dev outlives the file");

	f = fopen(path, "w");
	if (f) {
		fprintf(f, "verbose = yes\n");
		fclose(f);
	}
	tap_ok(lh_opts_read_file(&opts, path, &c) < 0, "a command-line-only key refused in a file");
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "flag = maybe\n");
		fclose(f);
	}
	tap_ok(lh_opts_read_file(&opts, path, &c) < 0, "flag = maybe refused");
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "port =\n");
		fclose(f);
	}
	tap_ok(lh_opts_read_file(&opts, path, &c) < 0, "a key without a value refused");
	unlink(path);
	tap_ok(lh_opts_read_file(&opts, path, &c) < 0, "a missing file refused");
}

/* What the program's own message hooks were told */
static struct {
	char invalid[64];
	char bad[64];
	bool missing;
} told;

static void tell_invalid(const struct lh_opt *o, const char *arg)
{
	snprintf(told.invalid, sizeof(told.invalid), "%s=%s", o->name, arg);
}

static void tell_bad_option(const char *word, bool missing_arg)
{
	snprintf(told.bad, sizeof(told.bad), "%s", word);
	told.missing = missing_arg;
}

static void program_messages(void)
{
	static const struct lh_opts own = { .opts = table, .invalid = tell_invalid,
					    .bad_option = tell_bad_option };
	char bad_value[] = "-p 0", unknown[] = "-f --nosuch", missing[] = "-f --port";
	char after_word[] = "word --port", word_first[] = "word -f";
	struct cfg c;
	int rc;

	rc = parse_by(&own, &c, bad_value);
	tap_ok(rc < 0 && !strcmp(told.invalid, "port=0"), "invalid hook: rc %d, told '%s'", rc,
	       told.invalid);
	rc = parse_by(&own, &c, unknown);
	tap_ok(rc < 0 && !strcmp(told.bad, "--nosuch") && !told.missing,
	       "bad_option hook, unknown: rc %d, told '%s' missing %d", rc, told.bad, told.missing);
	rc = parse_by(&own, &c, missing);
	tap_ok(rc < 0 && !strcmp(told.bad, "--port") && told.missing,
	       "bad_option hook, no argument: rc %d, told '%s' missing %d", rc, told.bad,
	       told.missing);
	rc = parse_by(&own, &c, after_word);
	tap_ok(rc < 0 && !strcmp(told.bad, "--port") && told.missing,
	       "an argument before an option lacking its own is not taken for it: rc %d, "
	       "told '%s' missing %d",
	       rc, told.bad, told.missing);
	rc = parse_by(&own, &c, word_first);
	tap_ok(rc == 2 && c.flag, "an option after an argument: first %d (want 2), flag %d", rc,
	       c.flag);
}

static void usage_lines(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!tap_ok(f != NULL, "a memory stream"))
		return;
	lh_opts_print(f, table);
	fclose(f);
	tap_ok(strstr(buf, "  -p, --port N        a port\n                      second line\n") !=
		       NULL,
	       "short and long name, help at column 22, continuation indented");
	tap_ok(strstr(buf, "  -f, --flag          a flag\n") != NULL, "a flag has no metavar");
	tap_ok(strstr(buf, "\nA heading:\n") != NULL, "a heading printed as it is");
	tap_ok(strstr(buf, "  --a-very-long-option N  help after two spaces\n") != NULL,
	       "a long name: help two spaces after it");
	free(buf);
}

int main(void)
{
	lh_log_init("test_opts", LH_LOG_WARN);
	cli_values();
	bounds();
	config_file();
	program_messages();
	usage_lines();
	return tap_done();
}
