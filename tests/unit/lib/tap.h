/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Minimal TAP producer for the C unit tests (tests/run.sh counts the lines). */
#ifndef LH_TAP_H
#define LH_TAP_H

#include <stdbool.h>

/* One test point: "ok N - desc" or "not ok N - desc"; returns cond */
bool tap_ok(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A skipped test point with its reason */
void tap_skip(const char *reason, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A "# ..." diagnostic line */
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print the plan; returns the exit status (0 when nothing failed) */
int tap_done(void);
int tap_failures(void);

#endif /* LH_TAP_H */
