// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * XDP on a gateway's WAN interface: what arrives from the long haul.
 * Data (RC SEND / RDMA WRITE) is for the Depot of this gateway; ACKs, NAKs,
 * Depot-NACKs and Depot reports travelling back to a local requester are
 * for its Sentry.
 * Everything else passes.
 */
#include "lib/common.h"
#include "lib/depot.h"
#include "lib/sentry.h"

SEC("xdp.frags")
int lh_wan_xdp(struct xdp_md *ctx)
{
	struct lh_stats *st = lh_stats_get();
	struct lh_config *cfg = lh_config_get();
	struct lh_parsed p;
	int verdict = XDP_PASS;

	int r = lh_parse_xdp(ctx, &p);

	__u32 roles = 0;

	if (cfg && (r == LH_STAT_ROCE || r == LH_STAT_PARSE_NON_ROCE))
		roles = lh_roles(cfg, st);
	if (!cfg)
		;
	else if (r == LH_STAT_PARSE_NON_ROCE && p.dport == LH_REPORT_PORT &&
		 (roles & LH_CFG_SENTRY))
		verdict = sentry_xdp_report(ctx, &p);
	else if (r != LH_STAT_ROCE || !roles)
		;
	else if ((roles & LH_CFG_DEPOT) && lh_is_rc_data(&p))
		verdict = depot_xdp_data(ctx, &p, cfg->sack_count);
	else if ((roles & LH_CFG_SENTRY) && lh_is_rc_ack(&p))
		verdict = sentry_xdp_ack(ctx, &p);
	else
		lh_count(st, LH_STAT_NOT_HANDLED);
	if (verdict == XDP_PASS)
		lh_count(st, LH_STAT_PASS);
	return verdict;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
