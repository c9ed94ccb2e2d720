/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
 * 2012): a keyed 64-bit MAC for short messages, the one the Depot signs its
 * reports with and the Sentry's XDP program checks (docs/protocol.md). One
 * implementation for BPF and user space: fixed-width types, no libc, no
 * loop the verifier cannot bound (the message length is a constant at every
 * call in BPF, so clang unrolls it).
 *
 * Key: 16 bytes, k0 = bytes 0-7 and k1 = bytes 8-15, each little-endian
 * (the paper's convention); the message is read as little-endian 64-bit
 * words, the last partial word padded with zeros and the length's low byte
 * in its top byte.
 */
#ifndef LH_SIPHASH_H
#define LH_SIPHASH_H

#include "lh_types.h"

#define LH_SIPHASH_KEY_LEN 16

static __always_inline __u64 lh_sip_rotl(__u64 x, int b)
{
	return (x << b) | (x >> (64 - b));
}

/* bytes p[0..n) (n <= 8) as a little-endian number, whatever the host's order */
static __always_inline __u64 lh_sip_le(const __u8 *p, __u32 n)
{
	__u64 w = 0;
	int i;

LH_UNROLL
	for (i = 7; i >= 0; i--)
		if ((__u32)i < n)
			w = w << 8 | p[i];
	return w;
}

#define LH_SIPROUND(v0, v1, v2, v3)                                                    \
	do {                                                                           \
		v0 += v1;                                                              \
		v1 = lh_sip_rotl(v1, 13);                                              \
		v1 ^= v0;                                                              \
		v0 = lh_sip_rotl(v0, 32);                                              \
		v2 += v3;                                                              \
		v3 = lh_sip_rotl(v3, 16);                                              \
		v3 ^= v2;                                                              \
		v0 += v3;                                                              \
		v3 = lh_sip_rotl(v3, 21);                                              \
		v3 ^= v0;                                                              \
		v2 += v1;                                                              \
		v1 = lh_sip_rotl(v1, 17);                                              \
		v1 ^= v2;                                                              \
		v2 = lh_sip_rotl(v2, 32);                                              \
	} while (0)

struct lh_sip {
	__u64 v0, v1, v2, v3;
};

/* k: the two key words (k0, k1) */
static __always_inline void lh_sip_init(struct lh_sip *s, const __u64 k[2])
{
	s->v0 = k[0] ^ 0x736f6d6570736575ull; /* "somepseudorandomlygeneratedbytes" */
	s->v1 = k[1] ^ 0x646f72616e646f6dull;
	s->v2 = k[0] ^ 0x6c7967656e657261ull;
	s->v3 = k[1] ^ 0x7465646279746573ull;
}

/* Absorb one message word m (2 compression rounds) */
static __always_inline void lh_sip_word(struct lh_sip *s, __u64 m)
{
	__u64 v0 = s->v0, v1 = s->v1, v2 = s->v2, v3 = s->v3;

	v3 ^= m;
	LH_SIPROUND(v0, v1, v2, v3);
	LH_SIPROUND(v0, v1, v2, v3);
	v0 ^= m;
	s->v0 = v0;
	s->v1 = v1;
	s->v2 = v2;
	s->v3 = v3;
}

/* The last word (tail bytes | total length << 56) and 4 finalization rounds */
static __always_inline __u64 lh_sip_final(struct lh_sip *s, __u64 tail, __u32 total)
{
	__u64 v0, v1, v2, v3;

	lh_sip_word(s, tail | (__u64)(total & 0xff) << 56);
	v0 = s->v0;
	v1 = s->v1;
	v2 = s->v2 ^ 0xff;
	v3 = s->v3;
	LH_SIPROUND(v0, v1, v2, v3);
	LH_SIPROUND(v0, v1, v2, v3);
	LH_SIPROUND(v0, v1, v2, v3);
	LH_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* SipHash-2-4 of the n bytes at m (user space, tests: any n) */
static __always_inline __u64 lh_siphash24(const __u64 k[2], const __u8 *m, __u32 n)
{
	struct lh_sip s;
	__u32 i;

	lh_sip_init(&s, k);
	for (i = 0; i + 8 <= n; i += 8)
		lh_sip_word(&s, lh_sip_le(m + i, 8));
	return lh_sip_final(&s, lh_sip_le(m + i, n - i), n);
}

/* The key words of a 16-byte key, as the paper reads them */
static __always_inline void lh_sip_key(const __u8 key[LH_SIPHASH_KEY_LEN], __u64 k[2])
{
	k[0] = lh_sip_le(key, 8);
	k[1] = lh_sip_le(key + 8, 8);
}

#endif /* LH_SIPHASH_H */
