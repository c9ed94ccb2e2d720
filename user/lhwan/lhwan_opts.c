// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The option callbacks lhwan's option tables share (lhwan.h) */
#include <errno.h>
#include <stdint.h>

#include "lhwan.h"
#include "opts.h"
#include "units.h"

int lhwan_opt_rate(void *cfg, const char *arg, const struct lh_opt *o, const struct lh_opt_ctx *ctx)
{
	(void)ctx;
	if (o->size != sizeof(uint64_t))
		return -EINVAL;
	return lh_parse_rate_bps(arg, false, (uint64_t *)((char *)cfg + o->off));
}
