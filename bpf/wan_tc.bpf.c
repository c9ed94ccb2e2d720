// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * TC (tcx) ingress on a gateway's WAN interface: the Sentry's re-sends
 * (bpf/lib/sentry_tc.h).
 */
#include "lib/common.h"
#include "lib/sentry_tc.h"

SEC("tcx/ingress")
int lh_wan_in(struct __sk_buff *skb)
{
	return sentry_tc_wan_in(skb);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
