// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Numbers with units (units.h) */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "units.h"

struct unit {
	const char *name;
	double mult;
};

/* A number at least 0 and its unit (what follows it) */
static int parse_scaled(const char *s, double *v, const char **unit)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	if (errno || end == s || !isfinite(*v) || *v < 0)
		return -EINVAL;
	*unit = end;
	return 0;
}

/* v in unit u of units (n of them), rounded, into *out; -EINVAL: no such unit or too large */
static int scale(double v, const char *u, const struct unit *units, size_t n, bool nocase,
		 uint64_t *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if ((nocase ? strcasecmp(u, units[i].name) : strcmp(u, units[i].name)) != 0)
			continue;
		if (v * units[i].mult >= 18446744073709551615.0)
			return -EINVAL;
		*out = (uint64_t)llround(v * units[i].mult);
		return 0;
	}
	return -EINVAL;
}

/*
 * s as a number and a unit of units (n; the first one's factor is 1). A bare
 * number is in bare_unit; with bare_unit NULL only 0 may be bare.
 */
static int parse_units(const char *s, const char *bare_unit, const struct unit *units, size_t n,
		       bool nocase, uint64_t *out)
{
	const char *u;
	double v;

	if (parse_scaled(s, &v, &u))
		return -EINVAL;
	if (!*u) {
		if (!bare_unit && v != 0)
			return -EINVAL;
		u = bare_unit ? bare_unit : units[0].name;
	}
	return scale(v, u, units, n, nocase, out);
}

#define NUNITS(a) (sizeof(a) / sizeof((a)[0]))

int lh_parse_time_ns(const char *s, const char *bare_unit, uint64_t *ns)
{
	static const struct unit units[] = {
		{ "ns", 1 },	 { "us", 1e3 }, { "usec", 1e3 }, { "ms", 1e6 },
		{ "msec", 1e6 }, { "s", 1e9 },	{ "sec", 1e9 },
	};

	return parse_units(s, bare_unit, units, NUNITS(units), false, ns);
}

int lh_parse_rate_bps(const char *s, bool bare_ok, uint64_t *bps)
{
	static const struct unit units[] = {
		{ "bit", 1 },	  { "k", 1e3 },	   { "kbit", 1e3 }, { "m", 1e6 },
		{ "mbit", 1e6 },  { "g", 1e9 },	   { "gbit", 1e9 }, { "t", 1e12 },
		{ "tbit", 1e12 }, { "bps", 8 },	   { "kbps", 8e3 }, { "mbps", 8e6 },
		{ "gbps", 8e9 },  { "tbps", 8e12 },
	};

	return parse_units(s, bare_ok ? "bit" : NULL, units, NUNITS(units), true, bps);
}

int lh_parse_bytes(const char *s, uint64_t *bytes)
{
	static const struct unit units[] = {
		{ "b", 1 },	      { "k", 1024 },	       { "kb", 1024 },
		{ "m", 1048576 },     { "mb", 1048576 },       { "g", 1073741824.0 },
		{ "gb", 1073741824.0 },
	};

	return parse_units(s, "b", units, NUNITS(units), true, bytes);
}
