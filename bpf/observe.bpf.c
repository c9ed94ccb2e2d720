// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Observe mode's pass-through (XDP): parses every frame (Ethernet, VLAN, IPv4/IPv6,
 * UDP, BTH), counts its parse outcome and RoCEv2 opcode, optionally verifies
 * the ICRC, and passes it on unchanged. It is the first customer of the
 * parser and the unit-test harness, and the safe mode of a gateway: it
 * observes and never changes traffic.
 */
#include "lib/common.h"
#include "lib/xdp_entry.h"
#include "lib/icrc.h"

/* Set by the loader before load: recompute every RoCEv2 ICRC (costs ~1 ns/byte) */
const volatile __u8 lh_verify_icrc = 0;

static __always_inline void observe_check_icrc(struct xdp_md *ctx, const struct lh_pkt_meta *m,
					       struct lh_stats *st)
{
	__s64 icrc = lh_icrc_xdp(ctx, m->l3_off, m->l4_off, m->icrc_off);
	__u32 wire;

	if (icrc < 0 || bpf_xdp_load_bytes(ctx, m->icrc_off, &wire, sizeof(wire))) {
		lh_count(st, LH_STAT_ICRC_ERROR);
		return;
	}
	lh_count(st, lh_le32_to_cpu(wire) == (__u32)icrc ? LH_STAT_ICRC_OK : LH_STAT_ICRC_BAD);
}

/* xdp.frags: jumbo frames (RoCE MTU 4096 needs a 9000-byte link MTU) arrive in frags */
SEC("xdp.frags")
int lh_observe(struct xdp_md *ctx)
{
	struct lh_stats *st = lh_stats_get();
	struct lh_pkt_meta m = {};
	struct hdr_cursor c;

	if (lh_xdp_count_frame(ctx, &c, &m, st) == LH_STAT_ROCE && lh_verify_icrc)
		observe_check_icrc(ctx, &m, st);
	return lh_xdp_verdict(st, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
