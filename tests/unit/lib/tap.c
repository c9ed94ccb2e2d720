// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Minimal TAP producer. */
#include <stdarg.h>
#include <stdio.h>

#include "tap.h"

static int tap_n, tap_failed;

bool tap_ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return cond;
}

void tap_skip(const char *reason, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("ok %d - ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", reason);
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
