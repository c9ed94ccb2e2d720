// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * MD5 as RFC 1321 section 3 defines it, and HMAC over it as RFC 2104
 * section 2 does. Written from the RFCs' text; checked against RFC 1321's
 * test suite (appendix A.5) and RFC 2202's HMAC-MD5 cases (tests/unit/test_md5.c).
 */
#include <string.h>

#include "md5.h"

/* RFC 1321 section 3.4: T[i] = floor(2^32 x |sin(i + 1)|), i in radians */
static const uint32_t T[64] = {
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613,
	0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193,
	0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d,
	0x02441453, 0xd8a1e681, 0xe7d3fbc8, 0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed,
	0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122,
	0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
	0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665, 0xf4292244,
	0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
	0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb,
	0xeb86d391,
};

static inline uint32_t rotl(uint32_t x, unsigned int n)
{
	return x << n | x >> (32 - n);
}

/* MD5 reads words low-order byte first (section 2) */
static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* The auxiliary functions of section 3.4 */
#define F(x, y, z) (((x) & (y)) | (~(x) & (z)))
#define G(x, y, z) (((x) & (z)) | ((y) & ~(z)))
#define H(x, y, z) ((x) ^ (y) ^ (z))
#define I(x, y, z) ((y) ^ ((x) | ~(z)))

/* One step: a = b + ((a + f(b, c, d) + X[k] + T[i]) <<< s) */
#define STEP(f, a, b, c, d, x, t, s) ((a) = (b) + rotl((a) + f((b), (c), (d)) + (x) + (t), (s)))

/*
 * One 16-word block (section 3.4): four rounds of 16 steps, each round with
 * its function and its order of the block's words, the registers turning
 * one place a step; then the state adds what it was before. Written out
 * step by step (generated from the section's tables): a loop with a switch
 * per step ran at half the speed.
 */
static void md5_block(uint32_t state[4], const uint8_t *p)
{
	uint32_t X[16], a = state[0], b = state[1], c = state[2], d = state[3];
	unsigned int i;

	for (i = 0; i < 16; i++)
		X[i] = get_le32(p + 4 * i);
	STEP(F, a, b, c, d, X[0], T[0], 7);
	STEP(F, d, a, b, c, X[1], T[1], 12);
	STEP(F, c, d, a, b, X[2], T[2], 17);
	STEP(F, b, c, d, a, X[3], T[3], 22);
	STEP(F, a, b, c, d, X[4], T[4], 7);
	STEP(F, d, a, b, c, X[5], T[5], 12);
	STEP(F, c, d, a, b, X[6], T[6], 17);
	STEP(F, b, c, d, a, X[7], T[7], 22);
	STEP(F, a, b, c, d, X[8], T[8], 7);
	STEP(F, d, a, b, c, X[9], T[9], 12);
	STEP(F, c, d, a, b, X[10], T[10], 17);
	STEP(F, b, c, d, a, X[11], T[11], 22);
	STEP(F, a, b, c, d, X[12], T[12], 7);
	STEP(F, d, a, b, c, X[13], T[13], 12);
	STEP(F, c, d, a, b, X[14], T[14], 17);
	STEP(F, b, c, d, a, X[15], T[15], 22);
	STEP(G, a, b, c, d, X[1], T[16], 5);
	STEP(G, d, a, b, c, X[6], T[17], 9);
	STEP(G, c, d, a, b, X[11], T[18], 14);
	STEP(G, b, c, d, a, X[0], T[19], 20);
	STEP(G, a, b, c, d, X[5], T[20], 5);
	STEP(G, d, a, b, c, X[10], T[21], 9);
	STEP(G, c, d, a, b, X[15], T[22], 14);
	STEP(G, b, c, d, a, X[4], T[23], 20);
	STEP(G, a, b, c, d, X[9], T[24], 5);
	STEP(G, d, a, b, c, X[14], T[25], 9);
	STEP(G, c, d, a, b, X[3], T[26], 14);
	STEP(G, b, c, d, a, X[8], T[27], 20);
	STEP(G, a, b, c, d, X[13], T[28], 5);
	STEP(G, d, a, b, c, X[2], T[29], 9);
	STEP(G, c, d, a, b, X[7], T[30], 14);
	STEP(G, b, c, d, a, X[12], T[31], 20);
	STEP(H, a, b, c, d, X[5], T[32], 4);
	STEP(H, d, a, b, c, X[8], T[33], 11);
	STEP(H, c, d, a, b, X[11], T[34], 16);
	STEP(H, b, c, d, a, X[14], T[35], 23);
	STEP(H, a, b, c, d, X[1], T[36], 4);
	STEP(H, d, a, b, c, X[4], T[37], 11);
	STEP(H, c, d, a, b, X[7], T[38], 16);
	STEP(H, b, c, d, a, X[10], T[39], 23);
	STEP(H, a, b, c, d, X[13], T[40], 4);
	STEP(H, d, a, b, c, X[0], T[41], 11);
	STEP(H, c, d, a, b, X[3], T[42], 16);
	STEP(H, b, c, d, a, X[6], T[43], 23);
	STEP(H, a, b, c, d, X[9], T[44], 4);
	STEP(H, d, a, b, c, X[12], T[45], 11);
	STEP(H, c, d, a, b, X[15], T[46], 16);
	STEP(H, b, c, d, a, X[2], T[47], 23);
	STEP(I, a, b, c, d, X[0], T[48], 6);
	STEP(I, d, a, b, c, X[7], T[49], 10);
	STEP(I, c, d, a, b, X[14], T[50], 15);
	STEP(I, b, c, d, a, X[5], T[51], 21);
	STEP(I, a, b, c, d, X[12], T[52], 6);
	STEP(I, d, a, b, c, X[3], T[53], 10);
	STEP(I, c, d, a, b, X[10], T[54], 15);
	STEP(I, b, c, d, a, X[1], T[55], 21);
	STEP(I, a, b, c, d, X[8], T[56], 6);
	STEP(I, d, a, b, c, X[15], T[57], 10);
	STEP(I, c, d, a, b, X[6], T[58], 15);
	STEP(I, b, c, d, a, X[13], T[59], 21);
	STEP(I, a, b, c, d, X[4], T[60], 6);
	STEP(I, d, a, b, c, X[11], T[61], 10);
	STEP(I, c, d, a, b, X[2], T[62], 15);
	STEP(I, b, c, d, a, X[9], T[63], 21);
	state[0] += a;
	state[1] += b;
	state[2] += c;
	state[3] += d;
}

void md5_init(struct md5_ctx *c)
{
	/* section 3.3: the words A, B, C, D, low-order bytes first 01 23 45 67 ... */
	c->state[0] = 0x67452301;
	c->state[1] = 0xefcdab89;
	c->state[2] = 0x98badcfe;
	c->state[3] = 0x10325476;
	c->len = 0;
}

void md5_update(struct md5_ctx *c, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t have = (size_t)(c->len % MD5_BLOCK_LEN);

	c->len += len;
	if (have) {
		size_t take = MD5_BLOCK_LEN - have < len ? MD5_BLOCK_LEN - have : len;

		memcpy(c->block + have, p, take);
		p += take;
		len -= take;
		if (have + take < MD5_BLOCK_LEN)
			return;
		md5_block(c->state, c->block);
	}
	for (; len >= MD5_BLOCK_LEN; p += MD5_BLOCK_LEN, len -= MD5_BLOCK_LEN)
		md5_block(c->state, p);
	memcpy(c->block, p, len);
}

void md5_final(struct md5_ctx *c, uint8_t out[MD5_DIGEST_LEN])
{
	/* section 3.1: a 1 bit, 0 bits to 56 bytes mod 64; 3.2: the bit length, 64 bits LE */
	static const uint8_t pad[MD5_BLOCK_LEN] = {0x80};
	uint64_t bits = c->len * 8;
	size_t have = (size_t)(c->len % MD5_BLOCK_LEN);
	uint8_t lenb[8];
	int i;

	md5_update(c, pad, have < 56 ? 56 - have : 120 - have);
	put_le32(lenb, (uint32_t)bits);
	put_le32(lenb + 4, (uint32_t)(bits >> 32));
	md5_update(c, lenb, 8);
	for (i = 0; i < 4; i++)
		put_le32(out + 4 * i, c->state[i]);
}

void md5(const void *data, size_t len, uint8_t out[MD5_DIGEST_LEN])
{
	struct md5_ctx c;

	md5_init(&c);
	md5_update(&c, data, len);
	md5_final(&c, out);
}

/* ---------------------------------------------------------------- HMAC */

#define HMAC_IPAD 0x36
#define HMAC_OPAD 0x5c

void hmac_md5_key_init(struct hmac_md5_key *k, const void *key, size_t len)
{
	uint8_t kb[MD5_BLOCK_LEN] = {0}, pad[MD5_BLOCK_LEN];
	size_t i;

	/* RFC 2104 section 3: a key longer than B = 64 bytes is first hashed */
	if (len > MD5_BLOCK_LEN)
		md5(key, len, kb);
	else
		memcpy(kb, key, len);
	/* section 2, steps (1)-(2) and (5): K padded with zeros to B, XOR ipad / opad */
	for (i = 0; i < MD5_BLOCK_LEN; i++)
		pad[i] = kb[i] ^ HMAC_IPAD;
	md5_init(&k->inner);
	md5_update(&k->inner, pad, sizeof(pad));
	for (i = 0; i < MD5_BLOCK_LEN; i++)
		pad[i] = kb[i] ^ HMAC_OPAD;
	md5_init(&k->outer);
	md5_update(&k->outer, pad, sizeof(pad));
	secret_wipe(kb, sizeof(kb));
	secret_wipe(pad, sizeof(pad));
}

void hmac_md5_init(struct hmac_md5_ctx *c, const struct hmac_md5_key *k)
{
	c->inner = k->inner;
	c->key = k;
}

void hmac_md5_update(struct hmac_md5_ctx *c, const void *data, size_t len)
{
	md5_update(&c->inner, data, len);
}

/* H(K XOR opad, H(K XOR ipad, text)): section 2, steps (3)-(4) and (6)-(7) */
void hmac_md5_final(struct hmac_md5_ctx *c, uint8_t out[MD5_DIGEST_LEN])
{
	struct md5_ctx outer = c->key->outer;
	uint8_t inner[MD5_DIGEST_LEN];

	md5_final(&c->inner, inner);
	md5_update(&outer, inner, sizeof(inner));
	md5_final(&outer, out);
}

void hmac_md5(const void *key, size_t key_len, const void *data, size_t len,
	      uint8_t out[MD5_DIGEST_LEN])
{
	struct hmac_md5_key k;
	struct hmac_md5_ctx c;

	hmac_md5_key_init(&k, key, key_len);
	hmac_md5_init(&c, &k);
	hmac_md5_update(&c, data, len);
	hmac_md5_final(&c, out);
	secret_wipe(&k, sizeof(k));
}

bool digest_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	volatile uint8_t diff = 0;
	size_t i;

	/* every byte is read whatever the earlier ones were: no early exit to time */
	for (i = 0; i < n; i++)
		diff |= a[i] ^ b[i];
	return diff == 0;
}

void secret_wipe(void *p, size_t n)
{
	volatile uint8_t *v = p;

	while (n--)
		*v++ = 0;
}
