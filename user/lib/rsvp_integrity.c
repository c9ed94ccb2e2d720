// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * RFC 2747's INTEGRITY on encoded RSVP messages (docs/rsvp.md "INTEGRITY"):
 * a key made ready, a message signed (Key Identifier, Sequence Number,
 * HMAC-MD5 digest, then the checksum) and a received one's digest
 * verified. The key file and the replay memory are rsvp_key.c's.
 */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "rsvp_int.h"

int rsvp_key_init(struct rsvp_key *k, uint64_t id, const uint8_t *secret, size_t len)
{
	if (id > RSVP_KEY_ID_MAX || !len)
		return -EINVAL;
	k->id = id;
	hmac_md5_key_init(&k->hmac, secret, len);
	return 0;
}

/* The offset of the first INTEGRITY object of a message we encoded, or 0 */
static size_t integrity_at(const uint8_t *buf, size_t mlen)
{
	size_t off, olen;

	for (off = RSVP_HDR_LEN; off + RSVP_OBJ_HDR_LEN <= mlen; off += olen) {
		olen = get16(buf + off);
		if (olen < RSVP_OBJ_HDR_LEN || olen > mlen - off)
			return 0;
		if (buf[off + 2] == RSVP_CLASS_INTEGRITY)
			return olen == RSVP_INTEGRITY_LEN ? off : 0;
	}
	return 0;
}

int rsvp_sign(uint8_t *buf, size_t len, const struct rsvp_key *k, uint64_t seq)
{
	struct hmac_md5_ctx h;
	size_t mlen, off;
	uint8_t *in;

	if (len < RSVP_HDR_LEN)
		return -EINVAL;
	mlen = get16(buf + 6);
	off = mlen <= len ? integrity_at(buf, mlen) : 0;
	if (!off)
		return -EINVAL;
	in = buf + off + RSVP_OBJ_HDR_LEN;
	put16(in + 2, (uint16_t)(k->id >> 32));
	put32(in + 4, (uint32_t)k->id);
	put64(in + 8, seq);
	/* RFC 2747 section 3 (generation): the digest over the whole message, digest, checksum 0 */
	memset(in + 16, 0, MD5_DIGEST_LEN);
	put16(buf + 2, 0);
	hmac_md5_init(&h, &k->hmac);
	hmac_md5_update(&h, buf, mlen);
	hmac_md5_final(&h, in + 16);
	/* ... and the checksum last, over the digest too */
	rsvp_put_checksum(buf, mlen);
	return 0;
}

enum rsvp_err rsvp_verify(const uint8_t *buf, size_t len, const struct rsvp_msg *m,
			  const struct rsvp_key *k)
{
	static const uint8_t zero[MD5_DIGEST_LEN];
	uint8_t want[MD5_DIGEST_LEN];
	struct hmac_md5_ctx h;
	size_t mlen, d;

	if (!(m->objs & RSVP_OBJ_INTEGRITY))
		return RSVP_E_INTEGRITY_MISSING;
	/* one key per neighbour set: the Key Identifier names it or no association */
	if (m->integrity.key_id != k->id)
		return RSVP_E_INTEGRITY_KEY;
	mlen = len >= RSVP_HDR_LEN ? get16(buf + 6) : 0;
	d = m->integrity.digest_off;
	if (mlen > len || d < RSVP_HDR_LEN || d + MD5_DIGEST_LEN > mlen)
		return RSVP_E_INTEGRITY_DIGEST; /* not the message m was decoded from */
	/*
	 * RFC 2747 section 3 (verification): the digest recomputed as the sender computed it,
	 * the checksum and digest fields read as zero, without copying the message
	 */
	hmac_md5_init(&h, &k->hmac);
	hmac_md5_update(&h, buf, 2);
	hmac_md5_update(&h, zero, 2);
	hmac_md5_update(&h, buf + 4, d - 4);
	hmac_md5_update(&h, zero, MD5_DIGEST_LEN);
	hmac_md5_update(&h, buf + d + MD5_DIGEST_LEN, mlen - d - MD5_DIGEST_LEN);
	hmac_md5_final(&h, want);
	return digest_equal(want, buf + d, MD5_DIGEST_LEN) ? RSVP_E_OK : RSVP_E_INTEGRITY_DIGEST;
}
