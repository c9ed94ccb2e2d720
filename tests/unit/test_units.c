// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Numbers with units (user/lib/units.h): each value expected against what was parsed. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "tap.h"
#include "units.h"

/* s as a time, bare numbers in bare (NULL: a unit needed): want its ns, or rc -EINVAL */
static void time_is(const char *s, const char *bare, int want_rc, uint64_t want)
{
	uint64_t ns = 0;
	int rc = lh_parse_time_ns(s, bare, &ns);

	if (want_rc) {
		tap_eq_int(rc, want_rc, "time '%s' (bare %s): refused", s, bare ? bare : "none");
	} else {
		tap_eq_int(rc, 0, "time '%s' (bare %s): taken", s, bare ? bare : "none");
		tap_eq_u64(ns, want, "time '%s' (bare %s): ns", s, bare ? bare : "none");
	}
}

static void rate_is(const char *s, bool bare_ok, int want_rc, uint64_t want)
{
	uint64_t bps = 0;
	int rc = lh_parse_rate_bps(s, bare_ok, &bps);

	if (want_rc) {
		tap_eq_int(rc, want_rc, "rate '%s': refused", s);
	} else {
		tap_eq_int(rc, 0, "rate '%s': taken", s);
		tap_eq_u64(bps, want, "rate '%s': bit/s", s);
	}
}

static void bytes_is(const char *s, int want_rc, uint64_t want)
{
	uint64_t b = 0;
	int rc = lh_parse_bytes(s, &b);

	if (want_rc) {
		tap_eq_int(rc, want_rc, "size '%s': refused", s);
	} else {
		tap_eq_int(rc, 0, "size '%s': taken", s);
		tap_eq_u64(b, want, "size '%s': bytes", s);
	}
}

int main(void)
{
	/* longhauld's times: a bare number is in ms */
	time_is("250us", "ms", 0, 250000);
	time_is("20ms", "ms", 0, 20000000);
	time_is("1.5s", "ms", 0, 1500000000);
	time_is("5", "ms", 0, 5000000);
	time_is("0", "ms", 0, 0);
	/* lhwan's: a unit is needed, 0 aside */
	time_is("10", NULL, -EINVAL, 0);
	time_is("0", NULL, 0, 0);
	time_is("800ns", NULL, 0, 800);
	time_is("2usec", NULL, 0, 2000);
	time_is("3msec", NULL, 0, 3000000);
	time_is("1sec", NULL, 0, 1000000000);
	time_is("-1ms", "ms", -EINVAL, 0);
	time_is("5min", "ms", -EINVAL, 0);
	time_is("ms", "ms", -EINVAL, 0);
	time_is("inf", "ms", -EINVAL, 0);
	time_is("1e30s", NULL, -EINVAL, 0);

	rate_is("100mbit", true, 0, 100000000);
	rate_is("10gbit", true, 0, 10000000000ull);
	rate_is("1g", true, 0, 1000000000);
	rate_is("500M", true, 0, 500000000);
	rate_is("2000000", true, 0, 2000000);
	rate_is("2000000", false, -EINVAL, 0);
	rate_is("0", false, 0, 0);
	rate_is("125mbps", false, 0, 1000000000);
	rate_is("1tbit", false, 0, 1000000000000ull);
	rate_is("10furlongs", true, -EINVAL, 0);
	rate_is("-5mbit", true, -EINVAL, 0);

	bytes_is("65536", 0, 65536);
	bytes_is("64k", 0, 65536);
	bytes_is("64KB", 0, 65536);
	bytes_is("4m", 0, 4194304);
	bytes_is("1g", 0, 1073741824);
	bytes_is("512b", 0, 512);
	bytes_is("1.5k", 0, 1536);
	bytes_is("64kib", -EINVAL, 0);
	bytes_is("", -EINVAL, 0);
	return tap_done();
}
