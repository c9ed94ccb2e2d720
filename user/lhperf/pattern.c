// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The payload pattern: byte i of message m on QP q is byte (i mod 8) of the
 * little-endian word base(seed, q, m) + (i / 8) * K, K odd. Every word of a
 * message differs, and so do messages and QPs, so a receiver that compares
 * what it places against the pattern at its own (QP, message, offset) sees
 * corruption, misordering and a re-executed duplicate. The seed is random
 * per run and travels over the side channel.
 */
#include <endian.h>
#include <string.h>

#include "lhperf.h"
#include "lossmodel.h"

#define PATTERN_STEP 0x9e3779b97f4a7c15ull

uint64_t lhp_pattern_base(uint64_t seed, uint32_t qp, uint64_t msg)
{
	return lh_mix64(seed ^ lh_mix64(((uint64_t)qp << 40) ^ msg));
}

void lhp_pattern_fill(uint8_t *dst, uint64_t base, uint64_t off, size_t len)
{
	uint64_t w = off / 8, v, word = base + w * PATTERN_STEP;
	size_t skip = off % 8, n;

	/* the common case: whole words from an aligned offset */
	if (!skip) {
		for (; len >= 8; len -= 8, dst += 8, word += PATTERN_STEP) {
			v = htole64(word);
			memcpy(dst, &v, 8);
		}
		if (len) {
			v = htole64(word);
			memcpy(dst, &v, len);
		}
		return;
	}
	while (len) {
		v = htole64(base + w * PATTERN_STEP);
		n = 8 - skip;
		if (n > len)
			n = len;
		if (n == 8)
			memcpy(dst, &v, 8);
		else
			memcpy(dst, (uint8_t *)&v + skip, n);
		dst += n;
		len -= n;
		skip = 0;
		w++;
	}
}

long lhp_pattern_check(const uint8_t *src, uint64_t base, uint64_t off, size_t len)
{
	uint64_t w = off / 8, v;
	size_t skip = off % 8, n, done = 0, i;

	while (done < len) {
		v = htole64(base + w * PATTERN_STEP);
		n = 8 - skip;
		if (n > len - done)
			n = len - done;
		if (memcmp(src + done, (uint8_t *)&v + skip, n) != 0) {
			for (i = 0; i < n; i++)
				if (src[done + i] != ((uint8_t *)&v)[skip + i])
					return (long)(done + i);
		}
		done += n;
		skip = 0;
		w++;
	}
	return -1;
}
