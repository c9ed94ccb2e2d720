/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Numbers with units, as command lines and config files give them: times,
 * bit rates and byte sizes. Each returns 0, or -EINVAL for what is not such a
 * number (negative, not finite, an unknown unit).
 */
#ifndef LH_USER_UNITS_H
#define LH_USER_UNITS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * "250us", "20ms", "1.5s", "100ns" (also usec, msec, sec) -> ns. A number
 * without a unit is in bare_unit ("ms"); with bare_unit NULL it needs one,
 * 0 excepted (10 could mean anything).
 */
int lh_parse_time_ns(const char *s, const char *bare_unit, uint64_t *ns);

/*
 * "100mbit", "10gbit", "1g", "500m", "2kbit", "1tbit", "125mbps" (bytes a
 * second), case aside -> bit/s. A number without a unit is in bit/s when
 * bare_ok, else only 0 is.
 */
int lh_parse_rate_bps(const char *s, bool bare_ok, uint64_t *bps);

/* "65536", "64k", "64kb", "4m", "1g", "512b" (powers of 1024), case aside -> bytes */
int lh_parse_bytes(const char *s, uint64_t *bytes);

#endif
