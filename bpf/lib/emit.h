/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Emitting a pooled packet from TC: the skb in hand is rewritten with the
 * slot's bytes after its own link header and a clone goes out with
 * bpf_clone_redirect. Used for the Depot's release and replay runs and the
 * Sentry's re-sends: one hook emits a whole run, in order.
 */
#ifndef LH_BPF_EMIT_H
#define LH_BPF_EMIT_H

#include "icrc.h"
#include "maps.h"

/* Rewrite skb as pool slot idx after its l2-byte link header, TTL - 1, and send a clone */
/*
 * Set the AckReq bit of the packet now in skb (IP header at l2, len bytes)
 * and make its ICRC and UDP checksum right again: the receiving NIC then
 * acknowledges it, and that ACK is what lets the sending NIC take the next
 * NAK (rxe ignores NAKs after a rewind until an ACK comes).
 */
static __always_inline int lh_skb_set_ackreq(struct __sk_buff *skb, __u32 l2, __u32 len, bool v6)
{
	__u32 l4 = l2 + (v6 ? 40 : 20), bth = l4 + 8, icrc_off = l2 + len - ROCE_ICRC_LEN;
	__be32 old_apsn, new_apsn, old_icrc, new_icrc;
	__u8 vihl;
	__s64 icrc;

	if (!v6) {
		if (bpf_skb_load_bytes(skb, l2, &vihl, 1) || vihl != 0x45)
			return -1; /* IP options: leave it */
	}
	if (bpf_skb_load_bytes(skb, bth + 8, &old_apsn, 4) ||
	    bpf_skb_load_bytes(skb, icrc_off, &old_icrc, 4))
		return -1;
	if (old_apsn & bpf_htonl(BTH_ACKREQ))
		return 0;
	new_apsn = old_apsn | bpf_htonl(BTH_ACKREQ);
	if (bpf_skb_store_bytes(skb, bth + 8, &new_apsn, 4, 0))
		return -1;
	icrc = lh_icrc_skb(skb, l2, l4, icrc_off);
	if (icrc < 0)
		return -1;
	new_icrc = lh_le32_to_cpu((__u32)icrc);
	if (bpf_skb_store_bytes(skb, icrc_off, &new_icrc, 4, 0))
		return -1;
	/* the UDP checksum covers both; 0 (none, as rxe sends IPv4) stays 0 */
	bpf_l4_csum_replace(skb, l4 + 6, old_apsn, new_apsn, BPF_F_MARK_MANGLED_0 | 4);
	bpf_l4_csum_replace(skb, l4 + 6, old_icrc, new_icrc, BPF_F_MARK_MANGLED_0 | 4);
	return 0;
}

/* The frame in skb goes back the way it came: its Ethernet source and destination swapped */
static __always_inline int lh_skb_swap_macs(struct __sk_buff *skb)
{
	__u8 macs[12];

	if (bpf_skb_load_bytes(skb, 0, macs, 12))
		return -1;
	bpf_skb_store_bytes(skb, 0, macs + 6, 6, 0);
	bpf_skb_store_bytes(skb, 6, macs, 6, 0);
	return 0;
}

static __always_inline int lh_emit_slot(struct __sk_buff *skb, __u32 idx, __u32 l2,
					   __u32 ifindex, bool v6, bool ackreq)
{
	struct lh_slot *slot = bpf_map_lookup_elem(&lh_pool, &idx);
	__u32 len;
	__u8 ttl;

	if (!slot || l2 > 64)
		return -1;
	len = slot->len;
	if (len > LH_SLOT_DATA)
		return -1;
	barrier_var(len); /* keep the two bounds apart for the verifier */
	if (len < LH_SLOT_MIN)
		return -1;
	if (bpf_skb_change_tail(skb, l2 + len, 0))
		return -1;
	if (bpf_skb_store_bytes(skb, l2, slot->data, len, 0))
		return -1;
	/* routing would have decremented the TTL; it is outside the ICRC */
	if (v6) {
		ttl = slot->data[7] > 1 ? slot->data[7] - 1 : 1;
		bpf_skb_store_bytes(skb, l2 + 7, &ttl, 1, 0);
	} else {
		__u16 old = (__u16)slot->data[8] << 8 | slot->data[9], new;

		ttl = slot->data[8] > 1 ? slot->data[8] - 1 : 1;
		new = (__u16)ttl << 8 | slot->data[9];
		bpf_skb_store_bytes(skb, l2 + 8, &ttl, 1, 0);
		bpf_l3_csum_replace(skb, l2 + 10, bpf_htons(old), bpf_htons(new), 2);
	}
	if (ackreq)
		lh_skb_set_ackreq(skb, l2, len, v6); /* best effort: without it, the NIC's timer */
	return bpf_clone_redirect(skb, ifindex, 0) ? -1 : 0;
}

#endif /* LH_BPF_EMIT_H */
