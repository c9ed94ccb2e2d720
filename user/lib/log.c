// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Leveled logger to stderr, with libbpf's print callback routed into it. */
#include <stdio.h>
#include <bpf/libbpf.h>

#include "log.h"

static const char *log_prog = "longhaul";
static enum lh_log_level log_level = LH_LOG_INFO;

void lh_log_init(const char *prog, enum lh_log_level level)
{
	if (prog)
		log_prog = prog;
	log_level = level;
}

void lh_log_set_level(enum lh_log_level level)
{
	log_level = level;
}

enum lh_log_level lh_log_get_level(void)
{
	return log_level;
}

void lh_vlog(enum lh_log_level level, const char *fmt, va_list ap)
{
	static const char *const tag[] = { "warning: ", "", "debug: " };

	if (level > log_level)
		return;
	fprintf(stderr, "%s: %s", log_prog, tag[level]);
	vfprintf(stderr, fmt, ap);
}

void lh_log(enum lh_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lh_vlog(level, fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	enum lh_log_level l = level == LIBBPF_WARN ? LH_LOG_WARN : LH_LOG_DEBUG;

	lh_vlog(l, fmt, ap);
	return 0;
}

void lh_log_route_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
