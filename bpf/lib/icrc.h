/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * RoCEv2 ICRC in BPF (IBTA Annex A17.8; the same rules as user/lib/icrc.c):
 * CRC-32 over 8 bytes of 0xff, the IP header with TOS/TTL/checksum (IPv4) or
 * traffic class/flow label/hop limit (IPv6) set to ones, the UDP header with
 * its checksum set to ones, the BTH with byte 4 set to ones, and the rest of
 * the packet up to the ICRC field.
 *
 * Verifier notes: packet bytes are copied with bpf_xdp_load_bytes() /
 * bpf_skb_load_bytes() into a per-CPU scratch buffer (works for multi-buffer
 * XDP too, and keeps offsets bounded). Every loop has a constant bound. The
 * entry points are global functions, so the verifier checks them once
 * however many call sites a program has; unused ones are left out by libbpf.
 */
#ifndef LH_BPF_ICRC_H
#define LH_BPF_ICRC_H

#include "lh_crc32_table.h"
#include "rocev2.h"

#define LH_ICRC_HDR_MAX 128 /* IP header (+ IPv6 extensions), UDP and BTH */
#define LH_ICRC_CHUNK 64
#define LH_ICRC_MAX_CHUNKS 160 /* 10 KiB after the headers: jumbo frames */
/* CRC register after the 8 bytes of 0xff of the pseudo LRH (rxe uses the same) */
#define LH_ICRC_SEED_AFTER_LRH 0xdebb20e3u

#define LH_ICRC_ERR_BOUNDS (-1)
#define LH_ICRC_ERR_LOAD (-2)
#define LH_ICRC_ERR_VERSION (-3)

struct lh_icrc_scratch {
	__u8 hdr[LH_ICRC_HDR_MAX];
	__u8 chunk[LH_ICRC_CHUNK];
};

/* Per-CPU copy buffer for the ICRC; only the programs on this CPU use it */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lh_icrc_scratch);
} lh_icrc_buf SEC(".maps");

static __always_inline __u32 lh_crc32_byte(__u32 crc, __u8 b)
{
	return (crc >> 8) ^ lh_crc32_tab[0][(crc ^ b) & 0xff];
}

/* Slicing-by-8 over one full chunk */
static __always_inline __u32 lh_crc32_chunk(__u32 crc, const __u8 *p)
{
	int i;

	for (i = 0; i < LH_ICRC_CHUNK; i += 8) {
		__u32 lo = crc ^ ((__u32)p[i] | (__u32)p[i + 1] << 8 | (__u32)p[i + 2] << 16 |
				  (__u32)p[i + 3] << 24);

		crc = lh_crc32_tab[7][lo & 0xff] ^ lh_crc32_tab[6][(lo >> 8) & 0xff] ^
		      lh_crc32_tab[5][(lo >> 16) & 0xff] ^ lh_crc32_tab[4][lo >> 24] ^
		      lh_crc32_tab[3][p[i + 4]] ^ lh_crc32_tab[2][p[i + 5]] ^
		      lh_crc32_tab[1][p[i + 6]] ^ lh_crc32_tab[0][p[i + 7]];
	}
	return crc;
}

/*
 * Masks the variant fields of the headers copied into s->hdr (hdr_len bytes,
 * the IP header at 0, UDP at udp_rel) and returns the CRC register after them.
 */
static __always_inline __s64 lh_icrc_hdr(struct lh_icrc_scratch *s, __u32 udp_rel, __u32 hdr_len)
{
	__u32 crc = LH_ICRC_SEED_AFTER_LRH;
	__u32 i;

	if (udp_rel > LH_ICRC_HDR_MAX - 20)
		return LH_ICRC_ERR_BOUNDS;
	switch (s->hdr[0] >> 4) {
	case 4:
		s->hdr[1] = 0xff;
		s->hdr[8] = 0xff;
		s->hdr[10] = 0xff;
		s->hdr[11] = 0xff;
		break;
	case 6:
		s->hdr[0] |= 0x0f;
		s->hdr[1] = 0xff;
		s->hdr[2] = 0xff;
		s->hdr[3] = 0xff;
		s->hdr[7] = 0xff;
		break;
	default:
		return LH_ICRC_ERR_VERSION;
	}
	s->hdr[udp_rel + 6] = 0xff;
	s->hdr[udp_rel + 7] = 0xff;
	s->hdr[udp_rel + 8 + BTH_BYTE4_OFF] = 0xff;

	for (i = 0; i < LH_ICRC_HDR_MAX; i++) {
		if (i >= hdr_len)
			break;
		crc = lh_crc32_byte(crc, s->hdr[i]);
	}
	return crc;
}

/* bpf_xdp_load_bytes or bpf_skb_load_bytes; 'xdp' is a constant after inlining */
static __always_inline long lh_load_bytes(void *ctx, bool xdp, __u32 off, void *dst, __u32 len)
{
	return xdp ? bpf_xdp_load_bytes(ctx, off, dst, len) : bpf_skb_load_bytes(ctx, off, dst, len);
}

/*
 * Offsets are from the start of the packet: l3_off of the IP header, udp_off
 * of the UDP header, icrc_off of the ICRC field. Returns the ICRC (the value
 * user space's lh_icrc_store() puts on the wire LSB first) or a negative
 * LH_ICRC_ERR_*.
 */
static __always_inline __s64 lh_icrc_calc(void *ctx, bool xdp, __u32 l3_off, __u32 udp_off,
					  __u32 icrc_off)
{
	struct lh_icrc_scratch *s;
	__u32 key = 0, udp_rel, hdr_len, off, rem, n, i, j;
	__u32 crc;
	__s64 r;

	s = bpf_map_lookup_elem(&lh_icrc_buf, &key);
	if (!s || udp_off <= l3_off || icrc_off > 0xffff)
		return LH_ICRC_ERR_BOUNDS;
	udp_rel = udp_off - l3_off;
	hdr_len = udp_rel + 8 + sizeof(struct roce_bth);
	if (udp_rel > LH_ICRC_HDR_MAX - 20 || l3_off + hdr_len > icrc_off)
		return LH_ICRC_ERR_BOUNDS;
	if (lh_load_bytes(ctx, xdp, l3_off, s->hdr, hdr_len))
		return LH_ICRC_ERR_LOAD;
	r = lh_icrc_hdr(s, udp_rel, hdr_len);
	if (r < 0)
		return r;
	crc = (__u32)r;

	off = l3_off + hdr_len;
	for (i = 0; i < LH_ICRC_MAX_CHUNKS; i++) {
		rem = icrc_off - off;
		if (rem >= LH_ICRC_CHUNK) {
			if (lh_load_bytes(ctx, xdp, off, s->chunk, LH_ICRC_CHUNK))
				return LH_ICRC_ERR_LOAD;
			crc = lh_crc32_chunk(crc, s->chunk);
			off += LH_ICRC_CHUNK;
			continue;
		}
		if (!rem)
			return (__u32)~crc;
		/* the tail, 1..63 bytes: written so the verifier sees n >= 1 */
		n = ((rem - 1) & (LH_ICRC_CHUNK - 1)) + 1;
		if (lh_load_bytes(ctx, xdp, off, s->chunk, n))
			return LH_ICRC_ERR_LOAD;
		for (j = 0; j < LH_ICRC_CHUNK; j++) {
			if (j >= n)
				break;
			crc = lh_crc32_byte(crc, s->chunk[j]);
		}
		return (__u32)~crc;
	}
	return LH_ICRC_ERR_BOUNDS; /* longer than LH_ICRC_MAX_CHUNKS chunks */
}

/* ICRC of the RoCEv2 packet in an XDP buffer */
__noinline __s64 lh_icrc_xdp(struct xdp_md *ctx, __u32 l3_off, __u32 udp_off, __u32 icrc_off)
{
	return lh_icrc_calc(ctx, true, l3_off, udp_off, icrc_off);
}

/* ICRC of the RoCEv2 packet in an skb (TC programs) */
__noinline __s64 lh_icrc_skb(struct __sk_buff *ctx, __u32 l3_off, __u32 udp_off, __u32 icrc_off)
{
	return lh_icrc_calc(ctx, false, l3_off, udp_off, icrc_off);
}

#endif /* LH_BPF_ICRC_H */
