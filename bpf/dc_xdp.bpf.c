// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * XDP on a gateway's DC interface: what the local data center sends.
 * Data from a local requester is for this gateway's Sentry; ACKs and NAKs
 * of a local responder go on to the TC program on the same interface
 * (dc_tc.bpf.c), which answers NAKs from the Depot's backup pool.
 */
#include "lib/common.h"
#include "lib/sentry.h"

SEC("xdp.frags")
int lh_dc_xdp(struct xdp_md *ctx)
{
	struct lh_stats *st = lh_stats_get();
	struct lh_config *cfg = lh_config_get();
	struct lh_parsed p;
	int verdict = XDP_PASS;

	if (lh_parse_xdp(ctx, &p) == LH_STAT_ROCE && cfg && lh_is_rc_data(&p) &&
	    (lh_roles(cfg, st) & LH_CFG_SENTRY))
		verdict = sentry_xdp_data(ctx, &p, cfg);
	if (verdict == XDP_PASS)
		lh_count(st, LH_STAT_PASS);
	return verdict;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
