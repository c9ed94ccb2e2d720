// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Minimal TAP producer: test points, typed checks with got/want diagnostics. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"

static int tap_n, tap_failed;
static char tap_pfx[512];

/* The test point line for a formatted description */
static void tap_point(bool cond, const char *desc)
{
	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - %s\n", cond ? "" : "not ", tap_n, desc);
	fflush(stdout);
}

/* The description a check's fmt and arguments give, behind the prefix (cut at 1024 bytes) */
#define TAP_DESC(desc, fmt)                                                                  \
	do {                                                                                 \
		int n_ = tap_pfx[0] ? snprintf(desc, sizeof(desc), "%s: ", tap_pfx) : 0;     \
		va_list ap_;                                                                 \
		va_start(ap_, fmt);                                                          \
		vsnprintf(desc + n_, sizeof(desc) - (size_t)n_, fmt, ap_);                   \
		va_end(ap_);                                                                 \
	} while (0)

void tap_prefix(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tap_pfx, sizeof(tap_pfx), fmt, ap);
	va_end(ap);
}

void tap_prefix_end(void)
{
	tap_pfx[0] = 0;
}

bool tap_ok(bool cond, const char *fmt, ...)
{
	char desc[1024];

	TAP_DESC(desc, fmt);
	tap_point(cond, desc);
	return cond;
}

bool tap_true(bool cond, const char *fmt, ...)
{
	char desc[1024];

	TAP_DESC(desc, fmt);
	tap_point(cond, desc);
	if (!cond)
		tap_diag("%s: got false, want true", desc);
	return cond;
}

bool tap_eq_int(int64_t got, int64_t want, const char *fmt, ...)
{
	char desc[1024];
	bool ok = got == want;

	TAP_DESC(desc, fmt);
	tap_point(ok, desc);
	if (!ok)
		tap_diag("%s: got %" PRId64 ", want %" PRId64, desc, got, want);
	return ok;
}

bool tap_eq_u64(uint64_t got, uint64_t want, const char *fmt, ...)
{
	char desc[1024];
	bool ok = got == want;

	TAP_DESC(desc, fmt);
	tap_point(ok, desc);
	if (!ok)
		tap_diag("%s: got %" PRIu64 ", want %" PRIu64, desc, got, want);
	return ok;
}

bool tap_eq_hex(uint64_t got, uint64_t want, const char *fmt, ...)
{
	char desc[1024];
	bool ok = got == want;

	TAP_DESC(desc, fmt);
	tap_point(ok, desc);
	if (!ok)
		tap_diag("%s: got %#" PRIx64 ", want %#" PRIx64, desc, got, want);
	return ok;
}

bool tap_ge_int(int64_t got, int64_t min, const char *fmt, ...)
{
	char desc[1024];
	bool ok = got >= min;

	TAP_DESC(desc, fmt);
	tap_point(ok, desc);
	if (!ok)
		tap_diag("%s: got %" PRId64 ", want >= %" PRId64, desc, got, min);
	return ok;
}

bool tap_le_int(int64_t got, int64_t max, const char *fmt, ...)
{
	char desc[1024];
	bool ok = got <= max;

	TAP_DESC(desc, fmt);
	tap_point(ok, desc);
	if (!ok)
		tap_diag("%s: got %" PRId64 ", want <= %" PRId64, desc, got, max);
	return ok;
}

bool tap_eq_str(const char *got, const char *want, const char *fmt, ...)
{
	char desc[1024];
	bool ok = (got && want) ? strcmp(got, want) == 0 : got == want;

	TAP_DESC(desc, fmt);
	tap_point(ok, desc);
	if (!ok)
		tap_diag("%s: got \"%s\", want \"%s\"", desc, got ? got : "(null)",
			 want ? want : "(null)");
	return ok;
}

bool tap_has_str(const char *got, const char *part, const char *fmt, ...)
{
	char desc[1024];
	bool ok = got && part && strstr(got, part);

	TAP_DESC(desc, fmt);
	tap_point(ok, desc);
	if (!ok)
		tap_diag("%s: got \"%s\", want it to hold \"%s\"", desc, got ? got : "(null)",
			 part ? part : "(null)");
	return ok;
}

bool tap_eq_mem(const void *got, const void *want, size_t len, const char *fmt, ...)
{
	const uint8_t *g = got, *w = want;
	char desc[1024];
	size_t i;

	TAP_DESC(desc, fmt);
	for (i = 0; i < len && g[i] == w[i]; i++)
		;
	tap_point(i == len, desc);
	if (i < len)
		tap_diag("%s: byte %zu of %zu: got 0x%02x, want 0x%02x", desc, i, len, g[i], w[i]);
	return i == len;
}

void tap_skip(const char *reason, const char *fmt, ...)
{
	char desc[1024];

	TAP_DESC(desc, fmt);
	tap_n++;
	printf("ok %d - %s # SKIP %s\n", tap_n, desc, reason);
	fflush(stdout);
}

void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

int tap_failures(void)
{
	return tap_failed;
}

int tap_done(void)
{
	printf("1..%d\n", tap_n);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}
