/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* One leveled logger for every longhaul program; libbpf's messages go through it. */
#ifndef LH_USER_LOG_H
#define LH_USER_LOG_H

#include <stdarg.h>

enum lh_log_level {
	LH_LOG_WARN,
	LH_LOG_INFO,
	LH_LOG_DEBUG,
};

/* Program name printed before every message; defaults to "longhaul" */
void lh_log_init(const char *prog, enum lh_log_level level);
void lh_log_set_level(enum lh_log_level level);
enum lh_log_level lh_log_get_level(void);
void lh_log(enum lh_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lh_vlog(enum lh_log_level level, const char *fmt, va_list ap);
/* Route libbpf_print messages into lh_log (warn -> warn, info -> debug) */
void lh_log_route_libbpf(void);

#define pr_warn(...) lh_log(LH_LOG_WARN, __VA_ARGS__)
#define pr_info(...) lh_log(LH_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) lh_log(LH_LOG_DEBUG, __VA_ARGS__)

#endif /* LH_USER_LOG_H */
