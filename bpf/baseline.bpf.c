// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Bare programs that `make bench` measures longhaul's programs against in the
 * same run: the cost of the XDP hook itself, of a forwarder that does nothing
 * but bounce the frame, and of a TC program that passes every packet (the
 * credit program's baseline), so ratios say what longhaul adds.
 */
#include "lib/common.h"

SEC("xdp.frags")
int lh_bare_pass(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

SEC("xdp.frags")
int lh_bare_tx(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_TX;
}

SEC("tc")
int lh_bare_tc(struct __sk_buff *skb)
{
	(void)skb;
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
