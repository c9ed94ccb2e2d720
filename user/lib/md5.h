/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * MD5 (RFC 1321) and HMAC-MD5 (RFC 2104): the keyed digest RFC 2747 requires
 * of every implementation of RSVP's INTEGRITY object (user/lib/rsvp_integrity.c).
 * Both stream: init, update any number of times, final.
 *
 * MD5 no longer resists collisions; HMAC-MD5 rests on the pseudo-randomness
 * of MD5's compression function, not on collision resistance (RFC 6151),
 * and is what RFC 2747 section 2.1 names as the algorithm every
 * implementation must have.
 */
#ifndef LH_USER_MD5_H
#define LH_USER_MD5_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MD5_DIGEST_LEN 16
#define MD5_BLOCK_LEN 64

struct md5_ctx {
	uint32_t state[4]; /* A, B, C, D (RFC 1321 section 3.3) */
	uint64_t len; /* bytes hashed so far */
	uint8_t block[MD5_BLOCK_LEN]; /* bytes waiting for a whole block */
};

void md5_init(struct md5_ctx *c);
void md5_update(struct md5_ctx *c, const void *data, size_t len);
void md5_final(struct md5_ctx *c, uint8_t out[MD5_DIGEST_LEN]);
void md5(const void *data, size_t len, uint8_t out[MD5_DIGEST_LEN]);

/*
 * An HMAC-MD5 key made ready: the MD5 states after the key XOR ipad and the
 * key XOR opad blocks, so that each message costs its own blocks and the
 * outer hash's last block only (RFC 2104 section 4, "precomputed").
 */
struct hmac_md5_key {
	struct md5_ctx inner;
	struct md5_ctx outer;
};

struct hmac_md5_ctx {
	struct md5_ctx inner;
	const struct hmac_md5_key *key;
};

/* Any length: a key longer than 64 bytes is replaced by its MD5 (RFC 2104 section 3) */
void hmac_md5_key_init(struct hmac_md5_key *k, const void *key, size_t len);
void hmac_md5_init(struct hmac_md5_ctx *c, const struct hmac_md5_key *k);
void hmac_md5_update(struct hmac_md5_ctx *c, const void *data, size_t len);
void hmac_md5_final(struct hmac_md5_ctx *c, uint8_t out[MD5_DIGEST_LEN]);
void hmac_md5(const void *key, size_t key_len, const void *data, size_t len,
	      uint8_t out[MD5_DIGEST_LEN]);

/* a == b over n bytes in a time that does not depend on where they differ */
bool digest_equal(const uint8_t *a, const uint8_t *b, size_t n);

/* Overwrite a secret so that the compiler cannot drop the stores */
void secret_wipe(void *p, size_t n);

#endif /* LH_USER_MD5_H */
