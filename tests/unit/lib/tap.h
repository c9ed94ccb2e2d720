/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Minimal TAP producer for the C unit tests (tests/run.sh counts the lines).
 *
 * A check asserts one value: tap_eq_* and tap_true print "ok N - desc" or
 * "not ok N - desc", and on failure a "# desc: got X, want Y" diagnostic, so
 * a failing run says which value was wrong and what it was.
 */
#ifndef LH_TAP_H
#define LH_TAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TAP_FMT(n) __attribute__((format(printf, n, n + 1)))

/*
 * Checks of one step share a prefix: between tap_prefix() and
 * tap_prefix_end(), each description reads "prefix: desc"
 */
void tap_prefix(const char *fmt, ...) TAP_FMT(1);
void tap_prefix_end(void);
/* One test point: "ok N - desc" or "not ok N - desc"; returns cond */
bool tap_ok(bool cond, const char *fmt, ...) TAP_FMT(2);
/* cond holds; on failure "# desc: got false, want true" */
bool tap_true(bool cond, const char *fmt, ...) TAP_FMT(2);
/* got == want, as signed decimal */
bool tap_eq_int(int64_t got, int64_t want, const char *fmt, ...) TAP_FMT(3);
/* got == want, as unsigned decimal */
bool tap_eq_u64(uint64_t got, uint64_t want, const char *fmt, ...) TAP_FMT(3);
/* got == want, in hex (opcodes, syndromes, flags, masked bits) */
bool tap_eq_hex(uint64_t got, uint64_t want, const char *fmt, ...) TAP_FMT(3);
/* got >= min, as signed decimal */
bool tap_ge_int(int64_t got, int64_t min, const char *fmt, ...) TAP_FMT(3);
/* got <= max, as signed decimal */
bool tap_le_int(int64_t got, int64_t max, const char *fmt, ...) TAP_FMT(3);
/* strcmp(got, want) == 0 (NULL equals only NULL) */
bool tap_eq_str(const char *got, const char *want, const char *fmt, ...) TAP_FMT(3);
/* strstr(got, part) != NULL */
bool tap_has_str(const char *got, const char *part, const char *fmt, ...) TAP_FMT(3);
/* len bytes equal; on failure the first differing offset and both bytes */
bool tap_eq_mem(const void *got, const void *want, size_t len, const char *fmt, ...) TAP_FMT(4);
/* A skipped test point with its reason */
void tap_skip(const char *reason, const char *fmt, ...) TAP_FMT(2);
/* A "# ..." diagnostic line */
void tap_diag(const char *fmt, ...) TAP_FMT(1);
/* Print the plan; returns the exit status (0 when nothing failed) */
int tap_done(void);
int tap_failures(void);

#endif /* LH_TAP_H */
