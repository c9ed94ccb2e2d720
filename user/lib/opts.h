/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One table per program for its options: getopt_long's tables, the option
 * lines of the usage text and the config-file keys all come from it, so an
 * option is written once (xdp-tools' prog_option tables are the model).
 *
 * A program keeps its settings in one struct; each entry names a field of it
 * (LH_FIELD) and how its argument is read. What no type covers is an
 * LH_OPT_FUNC entry with a parse callback.
 */
#ifndef LH_USER_OPTS_H
#define LH_USER_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum lh_opt_type {
	LH_OPT_END, /* ends the table */
	LH_OPT_HEADING, /* no option: its help is a line of the usage text */
	LH_OPT_FLAG, /* bool = true (a config file says yes or no) */
	LH_OPT_COUNT, /* int, one more each time given (-vv) */
	LH_OPT_UINT, /* unsigned integer field of 1, 2, 4 or 8 bytes in [min, max] */
	LH_OPT_DOUBLE, /* double in [min, max] */
	LH_OPT_TIME, /* a time (units.h) kept in units of `scale` ns, bare numbers in `unit` */
	LH_OPT_RATE, /* bit/s (units.h), a uint64_t; bare numbers are bit/s */
	LH_OPT_SIZE, /* bytes (units.h, powers of 1024), a uint32_t or uint64_t */
	LH_OPT_STR, /* const char * = the argument, which lives as long as the program */
	LH_OPT_BUF, /* copied into char[size]; empty or too long refused */
	LH_OPT_CHOICE, /* the value of the choice named, into an int, enum or bool field */
	LH_OPT_FUNC, /* parse() reads it; it takes an argument when it has a metavar */
	LH_OPT_CONFIG, /* a config file, read before the command line (which wins) */
	LH_OPT_HELP, /* the usage text to stdout, exit 0 */
};

/* Flags of an entry */
#define LH_OPTF_CLI_ONLY 0x1 /* not a config-file key */
#define LH_OPTF_NONZERO 0x2 /* 0 is refused (numbers, times, rates, sizes) */

struct lh_opt_choice {
	const char *name;
	int value;
};

/* Where a value came from, for callbacks that treat the file and the command line apart */
struct lh_opt_ctx {
	bool from_file;
	const char *path; /* the config file, when from_file */
	int line;
};

struct lh_opt {
	enum lh_opt_type type;
	const char *name; /* --name, and the config key */
	int short_opt; /* 'v', or 0 */
	size_t off, size; /* the field (LH_FIELD) */
	const char *metavar;
	const char *help; /* lines split by '\n' */
	double min, max; /* numbers, in the field's unit; max 0: no bound */
	const char *unit; /* LH_OPT_TIME: the unit of bare numbers ("ms"), NULL: one needed */
	uint64_t scale; /* LH_OPT_TIME: ns per unit of the field (1000: microseconds) */
	const struct lh_opt_choice *choices; /* LH_OPT_CHOICE, ended by a NULL name */
	/* LH_OPT_FUNC: 0; -EINVAL, the generic "is not valid" printed; another error, its own */
	int (*parse)(void *cfg, const char *arg, const struct lh_opt *o,
		     const struct lh_opt_ctx *ctx);
	size_t given; /* LH_GIVEN: offset + 1 of a bool made true when given */
	unsigned int flags;
	int group; /* the program's own tag (e.g. client-only), see lh_opts_parse */
};

#define LH_FIELD(type, field) .off = offsetof(type, field), .size = sizeof(((type *)0)->field)
#define LH_GIVEN(type, field) .given = offsetof(type, field) + 1

struct lh_opts {
	const struct lh_opt *opts; /* ended by an LH_OPT_END entry */
	void (*usage)(FILE *f); /* the whole usage text (--help, and after a bad option) */
	/* called for each option given on the command line, before it is applied; nonzero stops */
	int (*check)(void *cfg, const struct lh_opt *o);
	/* says that arg is not valid for o in the program's words; NULL: opts' own message */
	void (*invalid)(const struct lh_opt *o, const char *arg);
	/*
	 * says that word, a word of argv, is no option (unknown, ambiguous) or lacks its
	 * argument; NULL: getopt says so, then usage(stderr)
	 */
	void (*bad_option)(const char *word, bool missing_arg);
};

/*
 * Apply argv to cfg (already holding the defaults), a config file first when an
 * LH_OPT_CONFIG option names one. Returns the index of the first argument that
 * is not an option, or -1 after a bad one (the reason printed with pr_warn).
 */
int lh_opts_parse(const struct lh_opts *p, int argc, char **argv, void *cfg);

/* `key = value` lines (keys are long options without "--"), `#` a comment */
int lh_opts_read_file(const struct lh_opts *p, const char *path, void *cfg);

/* The option lines of the usage text: "  -v, --verbose  help", help at column 22 */
void lh_opts_print(FILE *f, const struct lh_opt *opts);

/* Apply one option by its long name, as a config file would: for tests and callers */
int lh_opts_apply(const struct lh_opts *p, const char *name, const char *arg, void *cfg);

#endif
