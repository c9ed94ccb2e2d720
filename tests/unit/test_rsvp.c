// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The RSVP codec (user/lib/rsvp.h): round trips of every message type over
 * IPv4 and IPv6, the checksum against hand-computed vectors, each reason a
 * malformed message is refused, RFC 2205's three rules for unknown classes,
 * and a fuzz loop (random bytes, mutations of valid messages) that must
 * never crash and whose accepted messages must re-encode to themselves.
 * RFC 2747's INTEGRITY: signed round trips, the digest against one computed
 * apart, every byte of a signed message flipped, wrong keys, replays, a
 * missing object, malformed objects, and mutations that must never verify.
 *
 *   test_rsvp                 the TAP tests
 *   test_rsvp --pcap FILE     write one message of each kind, in IPv4/IPv6
 *                             packets, into FILE (raw IP) for
 *                             tests/unit/rsvp-tshark.bats
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "md5.h"
#include "pcap.h"
#include "rsvp.h"
#include "rsvp_key.h"
#include "tap.h"

#define BUF_LEN 1024
#define CREDIT_OBJ_LEN 24

static void addr(union lh_ip_addr *a, int family, const char *s)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(family, s, a->b) != 1)
		abort();
}

/* The flow every sample message is about: 10.0.0.1 -> 10.0.1.2, QP 0x1234 */
static void flow(struct rsvp_msg *m, int family)
{
	m->flow.family = family;
	addr(&m->flow.src, family, family == AF_INET ? "10.0.0.1" : "fd00::1");
	addr(&m->flow.dst, family, family == AF_INET ? "10.0.1.2" : "fd00:1::2");
	m->flow.dqpn = 0x1234;
	addr(&m->hop.addr, family, family == AF_INET ? "192.168.7.1" : "fd07::1");
	m->hop.lih = 2; /* the second path */
}

/* One sample of each kind; variant picks a second form of a type */
static void sample(struct rsvp_msg *m, uint8_t type, int family, int variant)
{
	rsvp_msg_init(m, type);
	flow(m, family);
	m->msg_id.epoch = 0xabcdef;
	m->msg_id.id = 1000 + type;
	switch (type) {
	case RSVP_MSG_CB_PATH:
		m->refresh_ms = 30;
		if (variant == 1) {
			/* a probe of a set-up hop: the sender's bytes sent to it */
			m->objs |= RSVP_OBJ_CREDIT;
			m->credit.unit = RSVP_CREDIT_UNIT_BYTE;
			m->credit.flags = RSVP_CREDIT_F_PROBE;
			m->credit.limit = 5000000;
		}
		break;
	case RSVP_MSG_CB_RESERVE:
		if (variant == 0) {
			/* the answer to a Path init: initial buffer in the draft's MB */
			m->objs |= RSVP_OBJ_TIME_VALUES | RSVP_OBJ_MESSAGE_ID_ACK;
			m->refresh_ms = 10;
			m->msg_id_ack.epoch = 0x123456;
			m->msg_id_ack.id = 1028;
			m->credit.unit = RSVP_CREDIT_UNIT_MB;
			m->credit.flags = RSVP_CREDIT_F_INIT;
			m->credit.credit = 4;
			m->credit.limit = 4;
		} else {
			/* a credit return during data: bytes freed, cumulative limit */
			m->credit.unit = RSVP_CREDIT_UNIT_BYTE;
			m->credit.credit = 65536;
			m->credit.limit = 0x100000000ull + 65536;
		}
		if (variant == 2) {
			/* the answer to a probe: what the hop took in, as well */
			m->objs |= RSVP_OBJ_MESSAGE_ID_ACK;
			m->msg_id_ack.epoch = 0x123456;
			m->msg_id_ack.id = 1040;
			m->credit.has_accepted = true;
			m->credit.accepted = 0x100000000ull + 4096;
		}
		break;
	case RSVP_MSG_CB_END:
		m->msg_id.flags = RSVP_MSG_ID_F_ACK_DESIRED;
		break;
	case RSVP_MSG_CB_END_ACK:
		m->msg_id_ack.epoch = 0x123456;
		m->msg_id_ack.id = 1030;
		break;
	case RSVP_MSG_PATH_ERR:
		m->objs |= RSVP_OBJ_SENDER_TEMPLATE | RSVP_OBJ_RDMA_QP | RSVP_OBJ_MESSAGE_ID_ACK;
		m->msg_id_ack.id = 1028;
		addr(&m->error.node, family, family == AF_INET ? "192.168.7.1" : "fd07::1");
		m->error.code = RSVP_ERRCODE_UNKNOWN_CLASS;
		m->error.value = 100 << 8 | 1;
		break;
	case RSVP_MSG_RESV_ERR:
		addr(&m->error.node, family, family == AF_INET ? "192.168.7.1" : "fd07::1");
		m->error.code = RSVP_ERRCODE_UNKNOWN_CTYPE;
		m->error.value = RSVP_CLASS_CREDIT << 8 | 9;
		break;
	default:
		break;
	}
}

/* Forms of a type sample() makes */
static int variants(uint8_t type)
{
	return type == RSVP_MSG_CB_RESERVE ? 3 : type == RSVP_MSG_CB_PATH ? 2 : 1;
}

static const char *variant_name(uint8_t type, int v)
{
	if (type == RSVP_MSG_CB_PATH)
		return v ? " (probe)" : "";
	if (type == RSVP_MSG_CB_RESERVE)
		return v == 2 ? " (probe answer, Accepted)" : v ? " (credit return)" : "";
	return "";
}

static const uint8_t all_types[] = {RSVP_MSG_CB_PATH,	 RSVP_MSG_CB_RESERVE, RSVP_MSG_CB_END,
				    RSVP_MSG_CB_END_ACK, RSVP_MSG_PATH_ERR,   RSVP_MSG_RESV_ERR};

/* Recompute the checksum of a message changed by hand */
static void fix_csum(uint8_t *buf, size_t len)
{
	uint16_t c;

	buf[2] = buf[3] = 0;
	c = rsvp_checksum(buf, len);
	if (!c)
		c = 0xffff;
	buf[2] = (uint8_t)(c >> 8);
	buf[3] = (uint8_t)c;
}

/* Every field the decoder fills that the encoder writes, for the objects present */
static bool same_msg(const struct rsvp_msg *a, const struct rsvp_msg *b)
{
	size_t al = a->flow.family == AF_INET6 ? 16 : 4;
	uint32_t o = a->objs;

	if (a->type != b->type || a->flags != b->flags || a->send_ttl != b->send_ttl ||
	    o != b->objs || a->flow.family != b->flow.family || a->fwd_len != b->fwd_len ||
	    memcmp(a->fwd, b->fwd, a->fwd_len))
		return false;
	if ((o & RSVP_OBJ_SESSION) &&
	    (memcmp(a->flow.dst.b, b->flow.dst.b, al) || a->flow.proto != b->flow.proto ||
	     a->flow.session_flags != b->flow.session_flags || a->flow.dport != b->flow.dport))
		return false;
	if ((o & (RSVP_OBJ_SENDER_TEMPLATE | RSVP_OBJ_FILTER_SPEC)) &&
	    (memcmp(a->flow.src.b, b->flow.src.b, al) || a->flow.sport != b->flow.sport))
		return false;
	if ((o & RSVP_OBJ_RDMA_QP) && a->flow.dqpn != b->flow.dqpn)
		return false;
	if ((o & RSVP_OBJ_HOP) &&
	    (memcmp(a->hop.addr.b, b->hop.addr.b, al) || a->hop.lih != b->hop.lih))
		return false;
	if ((o & RSVP_OBJ_TIME_VALUES) && a->refresh_ms != b->refresh_ms)
		return false;
	if ((o & RSVP_OBJ_MESSAGE_ID) && memcmp(&a->msg_id, &b->msg_id, sizeof(a->msg_id)))
		return false;
	if ((o & RSVP_OBJ_MESSAGE_ID_ACK) &&
	    memcmp(&a->msg_id_ack, &b->msg_id_ack, sizeof(a->msg_id_ack)))
		return false;
	if ((o & RSVP_OBJ_CREDIT) &&
	    (a->credit.unit != b->credit.unit || a->credit.flags != b->credit.flags ||
	     a->credit.credit != b->credit.credit || a->credit.limit != b->credit.limit ||
	     a->credit.has_accepted != b->credit.has_accepted ||
	     a->credit.accepted != b->credit.accepted))
		return false;
	if ((o & RSVP_OBJ_ERROR_SPEC) &&
	    (memcmp(a->error.node.b, b->error.node.b, al) || a->error.flags != b->error.flags ||
	     a->error.code != b->error.code || a->error.value != b->error.value))
		return false;
	if ((o & RSVP_OBJ_INTEGRITY) &&
	    (a->integrity.flags != b->integrity.flags ||
	     a->integrity.key_id != b->integrity.key_id || a->integrity.seq != b->integrity.seq ||
	     memcmp(a->integrity.digest, b->integrity.digest, MD5_DIGEST_LEN)))
		return false;
	return true;
}

static void test_checksum_vectors(void)
{
	/* End ACK header alone: 0x101f + 0x0000 + 0x4000 + 0x0008 = 0x5027, ~ = 0xafd8 */
	static const uint8_t hdr[] = {0x10, 0x1f, 0x00, 0x00, 0x40, 0x00, 0x00, 0x08};
	/*
	 * Path init header and a TIME_VALUES of 30000 ms, with a carry:
	 * 0x101c + 0xff00 + 0x0010 + 0x0008 + 0x0501 + 0x0000 + 0x7530 = 0x18965,
	 * folded 0x8966, ~ = 0x7699. The checksum field (0x1234 here) is left out.
	 */
	uint8_t msg[] = {0x10, 0x1c, 0x12, 0x34, 0xff, 0x00, 0x00, 0x10,
			 0x00, 0x08, 0x05, 0x01, 0x00, 0x00, 0x75, 0x30};

	tap_eq_hex(rsvp_checksum(hdr, sizeof(hdr)), 0xafd8, "checksum of a bare header");
	tap_eq_hex(rsvp_checksum(msg, sizeof(msg)), 0x7699,
		   "checksum with an end-around carry, checksum field skipped");
	msg[2] = 0x76;
	msg[3] = 0x99;
	tap_eq_hex(lh_inet_csum(msg, sizeof(msg), 0), 0, "the message with it sums to all ones");
}

static void test_round_trips(void)
{
	static const int families[] = {AF_INET, AF_INET6};
	uint8_t buf[BUF_LEN], again[BUF_LEN];
	struct rsvp_msg m, d;

	for (size_t f = 0; f < 2; f++) {
		for (size_t t = 0; t < sizeof(all_types); t++) {
			for (int v = 0; v < variants(all_types[t]); v++) {
				const char *fam = families[f] == AF_INET ? "IPv4" : "IPv6";
				ssize_t n, n2;
				enum rsvp_err e;

				sample(&m, all_types[t], families[f], v);
				n = rsvp_encode(&m, buf, sizeof(buf));
				e = n > 0 ? rsvp_decode(buf, (size_t)n, &d,
							RSVP_DECODE_REQUIRE_CSUM)
					  : RSVP_ERR_MAX;
				n2 = e == RSVP_E_OK ? rsvp_encode(&d, again, sizeof(again)) : -1;
				tap_prefix("round trip %s %s%s: %zd bytes, %s",
					   rsvp_msg_name(all_types[t]), fam,
					   variant_name(all_types[t], v), n, rsvp_strerror(e));
				tap_ge_int(n, 1, "encoded length");
				tap_eq_str(rsvp_err_name(e), rsvp_err_name(RSVP_E_OK), "decoded");
				tap_true(same_msg(&m, &d), "decoded equals the message");
				tap_eq_int(n2, n, "re-encoded length");
				tap_eq_mem(buf, again, n > 0 ? (size_t)n : 0, "re-encoded bytes");
				tap_prefix_end();
			}
		}
	}

	/* A few exact wire bytes: an IPv4 End ACK is 8 + 12 x 5 = 68 bytes */
	sample(&m, RSVP_MSG_CB_END_ACK, AF_INET, 0);
	tap_prefix("End ACK header: version 1, type 31, Send_TTL 255, length 68");
	tap_eq_int(rsvp_encode(&m, buf, sizeof(buf)), 68, "encoded length");
	tap_eq_hex(buf[0], 0x10, "version and flags (byte 0)");
	tap_eq_int(buf[1], 31, "type (byte 1)");
	tap_eq_int(buf[4], 255, "Send_TTL (byte 4)");
	tap_eq_int(buf[6], 0, "length high (byte 6)");
	tap_eq_int(buf[7], 68, "length low (byte 7)");
	tap_prefix_end();
	/* MESSAGE_ID_ACK first, then SESSION 10.0.1.2 UDP 4791, then RDMA_QP */
	tap_prefix("End ACK objects: MESSAGE_ID_ACK, SESSION (UDP 4791), RDMA_QP (PEN 32473, QPN "
		   "0x1234)");
	tap_eq_mem(buf + 8, "\x00\x0c\x18\x01\x00\x12\x34\x56\x00\x00\x04\x06", 12,
		   "MESSAGE_ID_ACK (bytes 8..19)");
	tap_eq_mem(buf + 20, "\x00\x0c\x01\x01\x0a\x00\x01\x02\x11\x00\x12\xb7", 12,
		   "SESSION (bytes 20..31)");
	tap_eq_mem(buf + 32, "\x00\x0c\x7d\x01\x00\x00\x7e\xd9\x00\x00\x12\x34", 12,
		   "RDMA_QP (bytes 32..43)");
	tap_prefix_end();
	sample(&m, RSVP_MSG_CB_RESERVE, AF_INET, 1);
	{
		ssize_t n = rsvp_encode(&m, buf, sizeof(buf));
		const uint8_t *c = buf + n - 24;

		tap_prefix("Credit object last: class 124, unit 0 (byte), credit 65536, limit 2^32 "
			   "+ 65536");
		tap_eq_int(n, 92, "encoded length");
		tap_eq_mem(c, "\x00\x18\x7c\x01\x00\x00\x7e\xd9\x00\x00\x00\x00", 12,
			   "header, PEN and unit");
		tap_eq_mem(c + 12, "\x00\x01\x00\x00\x00\x00\x00\x01\x00\x01\x00\x00", 12,
			   "credit and limit");
		tap_prefix_end();
	}
	sample(&m, RSVP_MSG_CB_RESERVE, AF_INET, 2);
	{
		ssize_t n = rsvp_encode(&m, buf, sizeof(buf));
		const uint8_t *c = buf + n - 32;

		tap_prefix("Credit object with Accepted: length 32, Accepted 2^32 + 4096 last (%zd "
			   "bytes)",
			   n);
		tap_eq_int(n, 112, "encoded length");
		tap_eq_mem(c, "\x00\x20\x7c\x01\x00\x00\x7e\xd9", 8, "header and PEN");
		tap_eq_mem(c + 24, "\x00\x00\x00\x01\x00\x00\x10\x00", 8, "Accepted");
		tap_prefix_end();
	}
	tap_prefix("credit in bytes: 4 MB, 2^40, saturation");
	tap_eq_u64(rsvp_credit_bytes(4, RSVP_CREDIT_UNIT_MB), 4u << 20, "4 in MB");
	tap_eq_u64(rsvp_credit_bytes(1, 40), 1ull << 40, "1 in units of 2^40");
	tap_eq_u64(rsvp_credit_bytes(0xffffffffu, 63), UINT64_MAX, "2^32 - 1 in units of 2^63");
	tap_eq_u64(rsvp_credit_bytes(0, 63), 0, "0 in units of 2^63");
	tap_prefix_end();
}

static void test_encode_refusals(void)
{
	uint8_t buf[BUF_LEN];
	struct rsvp_msg m;

	sample(&m, RSVP_MSG_CB_PATH, AF_INET, 0);
	tap_eq_int(rsvp_encode(&m, buf, 40), -ENOSPC, "encode: -ENOSPC when the buffer is short");
	m.objs &= ~RSVP_OBJ_RDMA_QP;
	tap_eq_int(rsvp_encode(&m, buf, sizeof(buf)), -EINVAL, "encode: mandatory object missing");
	sample(&m, RSVP_MSG_CB_END, AF_INET, 0);
	m.objs |= RSVP_OBJ_CREDIT;
	tap_eq_int(rsvp_encode(&m, buf, sizeof(buf)), -EINVAL, "encode: Credit not allowed in End");
	sample(&m, RSVP_MSG_CB_PATH, AF_INET, 0);
	m.flow.dqpn = 0x1000000;
	tap_eq_int(rsvp_encode(&m, buf, sizeof(buf)), -EINVAL, "encode: QPN beyond 24 bits");
	sample(&m, 1, AF_INET, 0);
	tap_eq_int(rsvp_encode(&m, buf, sizeof(buf)), -EINVAL, "encode: message type 1 not spoken");
}

/* A valid Reserve (IPv4, with the initial-answer objects) into buf; its length */
static size_t valid_reserve(uint8_t *buf)
{
	struct rsvp_msg m;
	ssize_t n;

	sample(&m, RSVP_MSG_CB_RESERVE, AF_INET, 0);
	n = rsvp_encode(&m, buf, BUF_LEN);
	if (n <= 0)
		abort();
	return (size_t)n;
}

/* Offset of the first object of class c in a valid message */
static size_t find_obj(const uint8_t *buf, size_t len, uint8_t c)
{
	for (size_t off = RSVP_HDR_LEN; off + 4 <= len;
	     off += (size_t)(buf[off] << 8 | buf[off + 1]))
		if (buf[off + 2] == c)
			return off;
	abort();
}

/* Append an object of class c, C-Type t, body_len zero bytes; fix length and checksum */
static size_t add_obj(uint8_t *buf, size_t len, uint8_t c, uint8_t t, size_t body_len)
{
	size_t olen = 4 + body_len;

	memset(buf + len, 0, olen);
	buf[len] = (uint8_t)(olen >> 8);
	buf[len + 1] = (uint8_t)olen;
	buf[len + 2] = c;
	buf[len + 3] = t;
	if (body_len)
		buf[len + olen - 1] = 0x5a; /* not all zero */
	len += olen;
	buf[6] = (uint8_t)(len >> 8);
	buf[7] = (uint8_t)len;
	fix_csum(buf, len);
	return len;
}

/* Remove the object at off; fix length and checksum */
static size_t del_obj(uint8_t *buf, size_t len, size_t off)
{
	size_t olen = (size_t)(buf[off] << 8 | buf[off + 1]);

	memmove(buf + off, buf + off + olen, len - off - olen);
	len -= olen;
	buf[6] = (uint8_t)(len >> 8);
	buf[7] = (uint8_t)len;
	fix_csum(buf, len);
	return len;
}

static void expect(const uint8_t *buf, size_t len, unsigned int flags, enum rsvp_err want,
		   const char *what)
{
	struct rsvp_msg d;
	enum rsvp_err e = rsvp_decode(buf, len, &d, flags);

	tap_eq_str(rsvp_err_name(e), rsvp_err_name(want), "%s (%s)", what, rsvp_strerror(e));
}

static void test_malformed(void)
{
	uint8_t buf[BUF_LEN], b[BUF_LEN];
	size_t len = valid_reserve(buf), off;
	struct rsvp_msg d;

	expect(buf, len, RSVP_DECODE_REQUIRE_CSUM, RSVP_E_OK, "the valid Reserve");
	expect(buf, 7, 0, RSVP_E_TRUNC_HDR, "7 bytes");
	expect(buf, 0, 0, RSVP_E_TRUNC_HDR, "0 bytes");

	memcpy(b, buf, len);
	b[0] = 0x20;
	fix_csum(b, len);
	expect(b, len, 0, RSVP_E_VERSION, "version 2");

	memcpy(b, buf, len);
	b[6] = 0;
	b[7] = 4;
	expect(b, len, 0, RSVP_E_LEN_SHORT, "RSVP length 4");
	b[7] = 10;
	expect(b, len, 0, RSVP_E_LEN_ALIGN, "RSVP length 10");
	b[6] = (uint8_t)((len + 4) >> 8);
	b[7] = (uint8_t)(len + 4);
	expect(b, len, 0, RSVP_E_LEN_OVERRUN, "RSVP length 4 beyond the buffer");
	expect(buf, len - 4, 0, RSVP_E_LEN_OVERRUN, "buffer cut 4 bytes short");

	memcpy(b, buf, len);
	b[len - 1] ^= 0x01;
	expect(b, len, 0, RSVP_E_CHECKSUM, "one bit flipped in the last object");
	memcpy(b, buf, len);
	b[2] ^= 0x80;
	expect(b, len, 0, RSVP_E_CHECKSUM, "checksum field changed");
	memcpy(b, buf, len);
	b[2] = b[3] = 0;
	expect(b, len, 0, RSVP_E_OK, "checksum 0 (none sent) accepted by default (RFC 2205)");
	expect(b, len, RSVP_DECODE_REQUIRE_CSUM, RSVP_E_NO_CHECKSUM,
	       "checksum 0 with RSVP_DECODE_REQUIRE_CSUM");
	memcpy(b, buf, len);
	memset(b + len, 0xee, 8);
	expect(b, len + 8, RSVP_DECODE_REQUIRE_CSUM, RSVP_E_OK,
	       "bytes after the RSVP length are ignored");

	memcpy(b, buf, len);
	b[1] = 1;
	fix_csum(b, len);
	expect(b, len, 0, RSVP_E_MSG_TYPE, "type 1 (Path)");
	b[1] = 32;
	fix_csum(b, len);
	expect(b, len, 0, RSVP_E_MSG_TYPE, "type 32");

	/* object lengths, at the SESSION object */
	off = find_obj(buf, len, RSVP_CLASS_SESSION);
	memcpy(b, buf, len);
	b[off] = 0;
	b[off + 1] = 0;
	fix_csum(b, len);
	expect(b, len, 0, RSVP_E_OBJ_LEN_MIN, "object length 0");
	b[off + 1] = 2;
	fix_csum(b, len);
	expect(b, len, 0, RSVP_E_OBJ_LEN_MIN, "object length 2");
	b[off + 1] = 14;
	fix_csum(b, len);
	expect(b, len, 0, RSVP_E_OBJ_LEN_ALIGN, "object length 14");
	memcpy(b, buf, len);
	off = find_obj(buf, len, RSVP_CLASS_CREDIT); /* the last object */
	b[off + 1] = (uint8_t)(len - off + 4);
	fix_csum(b, len);
	expect(b, len, 0, RSVP_E_OBJ_OVERRUN, "last object's length 4 past the end");
	rsvp_decode(b, len, &d, 0);
	tap_prefix("the reason points at the object: offset %zu, class %u", d.err_off, d.err_class);
	tap_eq_int(d.err_off, off, "offset");
	tap_eq_int(d.err_class, RSVP_CLASS_CREDIT, "class");
	tap_prefix_end();
	memcpy(b, buf, len);
	b[off] = 0x80;
	fix_csum(b, len);
	expect(b, len, 0, RSVP_E_OBJ_OVERRUN, "object length 0x8018 (32 KiB past the end)");

	/* known classes with a wrong C-Type or size */
	off = find_obj(buf, len, RSVP_CLASS_SESSION);
	memcpy(b, buf, len);
	b[off + 3] = 7; /* LSP_TUNNEL_IPv4 */
	fix_csum(b, len);
	expect(b, len, 0, RSVP_E_UNKNOWN_CTYPE, "SESSION C-Type 7");
	rsvp_decode(b, len, &d, 0);
	{
		uint8_t code = 0;
		uint16_t value = 0;
		bool sent = rsvp_err_to_error_spec(RSVP_E_UNKNOWN_CTYPE, &d, &code, &value);

		tap_prefix("unknown C-Type earns ERROR_SPEC code 14, value 0x%04x", value);
		tap_true(sent, "an error message is sent");
		tap_eq_int(code, 14, "ERROR_SPEC code");
		tap_eq_hex(value, (1 << 8 | 7), "ERROR_SPEC value");
		tap_prefix_end();
		tap_true(!rsvp_err_to_error_spec(RSVP_E_CHECKSUM, &d, &code, &value),
			 "a bad checksum earns no error message (dropped silently)");
	}
	memcpy(b, buf, len);
	b[off + 3] = 2; /* IPv6, but 12 bytes long */
	fix_csum(b, len);
	expect(b, len, 0, RSVP_E_OBJ_SIZE, "SESSION C-Type 2 (IPv6) of IPv4 size");
	memcpy(b, buf, len);
	b[off + 8] = 6; /* TCP */
	fix_csum(b, len);
	expect(b, len, 0, RSVP_E_NOT_RDMA, "SESSION protocol 6");
	memcpy(b, buf, len);
	b[off + 11] = 0xb8; /* port 4792 */
	fix_csum(b, len);
	expect(b, len, 0, RSVP_E_NOT_RDMA, "SESSION port 4792");

	off = find_obj(buf, len, RSVP_CLASS_CREDIT);
	tap_eq_int(off + 24, len, "the Credit object is the Reserve's last");
	memcpy(b, buf, len);
	b[off + 8] = 41;
	fix_csum(b, len);
	expect(b, len, 0, RSVP_E_OBJ_VALUE, "Credit unit 2^41");
	memcpy(b, buf, len);
	b[off + 3] = 2;
	fix_csum(b, len);
	expect(b, len, 0, RSVP_E_UNKNOWN_CTYPE, "Credit C-Type 2");
	memcpy(b, buf, len);
	b[off + 7] ^= 1; /* another enterprise's object in class 124: unknown, 0bbbbbbb */
	fix_csum(b, len);
	expect(b, len, 0, RSVP_E_UNKNOWN_CLASS, "class 124 with another enterprise number");
	/* the Credit object (written last) is 24 bytes, or 32 with Accepted: nothing between */
	for (size_t grow = 4; grow <= 8; grow += 4) {
		memcpy(b, buf, len);
		memset(b + len, 0, grow);
		b[off + 1] = (uint8_t)(24 + grow);
		b[7] = (uint8_t)(len + grow);
		fix_csum(b, len + grow);
		expect(b, len + grow, 0, grow == 8 ? RSVP_E_OK : RSVP_E_OBJ_SIZE,
		       grow == 8 ? "Credit object of 32 bytes (with Accepted)" : "Credit object of 28 bytes");
	}

	/* missing, duplicate, not allowed, family */
	memcpy(b, buf, len);
	expect(b, del_obj(b, len, find_obj(buf, len, RSVP_CLASS_CREDIT)), 0, RSVP_E_MISSING,
	       "Reserve without Credit");
	memcpy(b, buf, len);
	expect(b, del_obj(b, len, find_obj(buf, len, RSVP_CLASS_RSVP_HOP)), 0, RSVP_E_MISSING,
	       "Reserve without RSVP_HOP");
	rsvp_decode(b, len - 12, &d, 0);
	tap_eq_int(d.err_class, RSVP_CLASS_RSVP_HOP, "missing object named: class %u", d.err_class);
	memcpy(b, buf, len);
	{
		size_t n = del_obj(b, len, find_obj(buf, len, RSVP_CLASS_TIME_VALUES));

		expect(b, n, 0, RSVP_E_OK, "Reserve without the optional TIME_VALUES");
	}
	memcpy(b, buf, len);
	off = find_obj(buf, len, RSVP_CLASS_TIME_VALUES);
	memcpy(b + len, buf + off, 8);
	b[7] = (uint8_t)(len + 8);
	fix_csum(b, len + 8);
	expect(b, len + 8, 0, RSVP_E_DUP_OBJECT, "TIME_VALUES twice");
	memcpy(b, buf, len);
	expect(b, add_obj(b, len, RSVP_CLASS_SENDER_TEMPLATE, 1, 8), 0, RSVP_E_NOT_ALLOWED,
	       "SENDER_TEMPLATE in a Reserve");
	memcpy(b, buf, len);
	expect(b,
	       add_obj(b, del_obj(b, len, find_obj(buf, len, RSVP_CLASS_RSVP_HOP)),
		       RSVP_CLASS_RSVP_HOP, 2, 20),
	       0, RSVP_E_FAMILY, "IPv6 RSVP_HOP in an IPv4 session");
}

static void test_unknown_classes(void)
{
	uint8_t buf[BUF_LEN], b[BUF_LEN], again[BUF_LEN];
	size_t len = valid_reserve(buf), n;
	struct rsvp_msg d;
	enum rsvp_err e;
	ssize_t n2;

	memcpy(b, buf, len);
	n = add_obj(b, len, 100, 1, 4); /* 0bbbbbbb */
	expect(b, n, 0, RSVP_E_UNKNOWN_CLASS, "class 100 (0bbbbbbb): message rejected");
	rsvp_decode(b, n, &d, 0);
	tap_prefix("... naming the object at %zu, class %u/%u", d.err_off, d.err_class,
		   d.err_ctype);
	tap_eq_int(d.err_off, len, "offset");
	tap_eq_int(d.err_class, 100, "class");
	tap_eq_int(d.err_ctype, 1, "C-Type");
	tap_prefix_end();
	memcpy(b, buf, len);
	n = add_obj(b, len, 127, 9, 0);
	expect(b, n, 0, RSVP_E_UNKNOWN_CLASS, "class 127 (0bbbbbbb, vendor private, not ours)");

	memcpy(b, buf, len);
	n = add_obj(b, len, 150, 1, 8); /* 10bbbbbb */
	n = add_obj(b, n, 191, 3, 4);
	e = rsvp_decode(b, n, &d, RSVP_DECODE_REQUIRE_CSUM);
	tap_prefix("classes 150 and 191 (10bbbbbb): ignored, not forwarded (ignored %u)",
		   d.ignored);
	tap_eq_str(rsvp_err_name(e), rsvp_err_name(RSVP_E_OK), "decoded");
	tap_eq_int(d.ignored, 2, "objects ignored");
	tap_eq_int(d.fwd_len, 0, "bytes to forward");
	tap_prefix_end();

	memcpy(b, buf, len);
	n = add_obj(b, len, 200, 1, 8); /* 11bbbbbb */
	n = add_obj(b, n, 255, 7, 0);
	e = rsvp_decode(b, n, &d, RSVP_DECODE_REQUIRE_CSUM);
	tap_prefix("classes 200 and 255 (11bbbbbb): kept as received (%u objects, %zu bytes)",
		   d.forwarded, d.fwd_len);
	tap_eq_str(rsvp_err_name(e), rsvp_err_name(RSVP_E_OK), "decoded");
	tap_eq_int(d.forwarded, 2, "objects to forward");
	tap_eq_int(d.fwd_len, 16, "bytes to forward");
	tap_eq_mem(d.fwd, b + len, 16, "the objects as received");
	tap_prefix_end();
	n2 = rsvp_encode(&d, again, sizeof(again));
	tap_prefix("... and forwarded unmodified when the message is re-encoded");
	tap_eq_int(n2, (ssize_t)n, "re-encoded length");
	tap_eq_mem(again, b, n, "re-encoded bytes");
	tap_prefix_end();

	/* more to forward than there is room for */
	memcpy(b, buf, len);
	n = add_obj(b, len, 200, 1, RSVP_FORWARD_MAX);
	expect(b, n, 0, RSVP_E_FORWARD_FULL, "a 11bbbbbb object bigger than the forward room");

	/* a hostile object length of 0 in an unknown class must not loop */
	memcpy(b, buf, len);
	n = add_obj(b, len, 200, 1, 0);
	b[len + 1] = 0;
	fix_csum(b, n);
	expect(b, n, 0, RSVP_E_OBJ_LEN_MIN, "unknown class with length 0");
}

/* xorshift64*: the fuzz loop's inputs are the same on every run */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

/*
 * Decode buf; when accepted, the decoded message must re-encode and decode to
 * the same message. Returns false on a broken invariant.
 */
static bool fuzz_one(const uint8_t *buf, size_t len, unsigned int *accepted, unsigned int *hist)
{
	uint8_t *copy = malloc(len ? len : 1), again[RSVP_MAX_LEN];
	struct rsvp_msg d, d2;
	enum rsvp_err e;
	ssize_t n;
	bool ok = true;

	/* an exact-size heap copy, so that ASan / valgrind catch any read past the end */
	if (!copy)
		abort();
	memcpy(copy, buf, len);
	e = rsvp_decode(copy, len, &d, 0);
	free(copy);
	if ((unsigned int)e >= RSVP_ERR_MAX)
		return false;
	hist[e]++;
	if (e != RSVP_E_OK)
		return true;
	(*accepted)++;
	n = rsvp_encode(&d, again, sizeof(again));
	ok = n > 0 && rsvp_decode(again, (size_t)n, &d2, RSVP_DECODE_REQUIRE_CSUM) == RSVP_E_OK &&
	     same_msg(&d, &d2);
	return ok;
}

static void test_fuzz(int rounds)
{
	unsigned int hist[RSVP_ERR_MAX] = {0}, accepted = 0, bad = 0;
	uint8_t seeds[12][BUF_LEN], b[BUF_LEN];
	size_t seed_len[12], ns = 0;
	struct rsvp_msg m;

	for (int f = 0; f < 2; f++)
		for (size_t t = 0; t < sizeof(all_types); t++) {
			sample(&m, all_types[t], f ? AF_INET6 : AF_INET, 1);
			seed_len[ns] = (size_t)rsvp_encode(&m, seeds[ns], BUF_LEN);
			ns++;
		}

	/* random bytes, with a valid-looking header half of the time */
	for (int i = 0; i < rounds; i++) {
		size_t len = rnd() % 160;

		for (size_t j = 0; j < len; j++)
			b[j] = (uint8_t)rnd();
		if (len >= 8 && (i & 1)) {
			b[0] = 0x10;
			b[1] = (uint8_t)(28 + rnd() % 4);
			b[6] = (uint8_t)(len >> 8);
			b[7] = (uint8_t)(len & ~3u);
			fix_csum(b, len & ~(size_t)3);
		}
		bad += !fuzz_one(b, len, &accepted, hist);
	}
	/* mutations of valid messages: bit flips, byte sets, cuts, checksum fixed or not */
	for (int i = 0; i < 3 * rounds; i++) {
		size_t s = rnd() % ns, len = seed_len[s];
		int nmut = 1 + (int)(rnd() % 4);

		memcpy(b, seeds[s], len);
		for (int k = 0; k < nmut && len; k++) {
			size_t at = rnd() % len;

			switch (rnd() % 4) {
			case 0:
				b[at] ^= (uint8_t)(1u << (rnd() % 8));
				break;
			case 1:
				b[at] = (uint8_t)rnd();
				break;
			case 2: /* an object length or class */
				b[at & ~(size_t)3] = (uint8_t)(rnd() % 2);
				b[(at & ~(size_t)3) + 1] = (uint8_t)rnd();
				break;
			default:
				len = at;
				break;
			}
		}
		if (rnd() % 4 && len >= 8)
			fix_csum(b, len);
		bad += !fuzz_one(b, len, &accepted, hist);
	}
	tap_eq_int(
		bad, 0,
		"fuzz: %d inputs, no crash, every accepted one re-encodes to itself (%u accepted, "
		"%u broken)",
		4 * rounds, accepted, bad);
	for (int e = 0; e < RSVP_ERR_MAX; e++)
		if (hist[e])
			tap_diag("  %-14s %u", rsvp_err_name((enum rsvp_err)e), hist[e]);
}

/* ---------------------------------------------------------------- INTEGRITY */

/* The sample key: id 0x123456789abc (48 bits), 16 bytes 00 11 .. ff */
#define SAMPLE_KEY_ID 0x123456789abcull
#define SAMPLE_SEQ 0x0123456789abcdefull

static const uint8_t sample_secret[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
					  0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};

static void sample_key(struct rsvp_key *k, uint64_t id, uint8_t first_byte)
{
	uint8_t s[sizeof(sample_secret)];

	memcpy(s, sample_secret, sizeof(s));
	s[0] = first_byte;
	if (rsvp_key_init(k, id, s, sizeof(s)))
		abort();
}

/* m encoded with an INTEGRITY object and signed with k at seq; the length */
static size_t encode_signed(struct rsvp_msg *m, uint8_t *buf, const struct rsvp_key *k,
			    uint64_t seq)
{
	ssize_t n;

	m->objs |= RSVP_OBJ_INTEGRITY;
	n = rsvp_encode(m, buf, BUF_LEN);
	if (n <= 0 || rsvp_sign(buf, (size_t)n, k, seq))
		abort();
	return (size_t)n;
}

/* decode, then verify: the first reason a message is refused */
static enum rsvp_err check_signed(const uint8_t *buf, size_t len, const struct rsvp_key *k,
				  struct rsvp_msg *d)
{
	enum rsvp_err e = rsvp_decode(buf, len, d, RSVP_DECODE_REQUIRE_CSUM);

	return e ? e : rsvp_verify(buf, len, d, k);
}

static void test_integrity_round_trips(void)
{
	uint8_t buf[BUF_LEN], again[BUF_LEN], copy[BUF_LEN], want[MD5_DIGEST_LEN];
	struct rsvp_msg m, d;
	struct rsvp_key k;
	bool all = true;
	size_t n;

	sample_key(&k, SAMPLE_KEY_ID, 0x00);
	for (int f = 0; f < 2; f++)
		for (size_t t = 0; t < sizeof(all_types); t++)
			for (int v = 0; v < variants(all_types[t]); v++) {
				enum rsvp_err e;
				ssize_t n2;

				sample(&m, all_types[t], f ? AF_INET6 : AF_INET, v);
				n = encode_signed(&m, buf, &k, SAMPLE_SEQ + t);
				e = check_signed(buf, n, &k, &d);
				n2 = e ? -1 : rsvp_encode(&d, again, sizeof(again));
				if (e || !(d.objs & RSVP_OBJ_INTEGRITY) ||
				    d.integrity.seq != SAMPLE_SEQ + t || n2 != (ssize_t)n ||
				    memcmp(buf, again, n)) {
					tap_diag("%s %s%s: %s", rsvp_msg_name(all_types[t]),
						 f ? "IPv6" : "IPv4", variant_name(all_types[t], v),
						 rsvp_err_name(e));
					all = false;
				}
			}
	tap_true(all, "every message type, IPv4 and IPv6, signed: decodes, verifies, re-encodes to "
		      "itself");

	sample(&m, RSVP_MSG_CB_RESERVE, AF_INET, 1);
	n = encode_signed(&m, buf, &k, SAMPLE_SEQ);
	/* RFC 2747 section 2.1's layout, right after the common header */
	tap_prefix("INTEGRITY first: length 36, class 4, C-Type 1, flags 0, key id 0x123456789abc, "
		   "sequence 0x0123456789abcdef (%zu bytes)",
		   n);
	tap_eq_int(n, 92 + RSVP_INTEGRITY_LEN, "encoded length");
	tap_eq_mem(buf + 8, "\x00\x24\x04\x01\x00\x00\x12\x34\x56\x78\x9a\xbc", 12,
		   "header, flags and key id (bytes 8..19)");
	tap_eq_mem(buf + 20, "\x01\x23\x45\x67\x89\xab\xcd\xef", 8, "sequence (bytes 20..27)");
	tap_eq_hex(buf[44], 0x00, "next object's length high (byte 44)");
	tap_eq_hex(buf[45], 0x0c, "next object's length low (byte 45): MESSAGE_ID follows");
	tap_prefix_end();
	/* the digest, computed apart: HMAC-MD5 of the message with checksum and digest zero */
	memcpy(copy, buf, n);
	memset(copy + 2, 0, 2);
	memset(copy + 28, 0, MD5_DIGEST_LEN);
	hmac_md5(sample_secret, sizeof(sample_secret), copy, n, want);
	tap_eq_mem(buf + 28, want, MD5_DIGEST_LEN,
		   "the digest is HMAC-MD5 over the whole message, checksum and digest zero");
	tap_eq_int(lh_inet_csum(buf, n, 0), 0, "the checksum, computed after the digest, is right");

	/* INTEGRITY elsewhere than first (another sender's order): found and verified */
	sample(&m, RSVP_MSG_CB_RESERVE, AF_INET, 1);
	n = (size_t)rsvp_encode(&m, buf, sizeof(buf));
	tap_eq_int(rsvp_sign(buf, n, &k, 1), -EINVAL,
		   "rsvp_sign: a message without INTEGRITY, -EINVAL");
	n = add_obj(buf, n, RSVP_CLASS_INTEGRITY, 1, RSVP_INTEGRITY_LEN - 4);
	{
		tap_prefix("INTEGRITY as the last object");
		tap_eq_int(rsvp_sign(buf, n, &k, 5), 0, "signed");
		tap_eq_str(rsvp_err_name(check_signed(buf, n, &k, &d)), rsvp_err_name(RSVP_E_OK),
			   "decoded and verified");
		tap_eq_int(d.integrity.digest_off, n - MD5_DIGEST_LEN, "digest offset");
		tap_eq_int(d.integrity.seq, 5, "sequence");
		tap_prefix_end();
	}

	sample(&m, RSVP_MSG_CB_END, AF_INET, 0);
	m.objs |= RSVP_OBJ_INTEGRITY;
	m.integrity.key_id = RSVP_KEY_ID_MAX + 1;
	tap_eq_int(rsvp_encode(&m, buf, sizeof(buf)), -EINVAL,
		   "encode: Key Identifier beyond 48 bits");
	tap_eq_int(rsvp_key_init(&k, RSVP_KEY_ID_MAX + 1, sample_secret, 16), -EINVAL,
		   "rsvp_key_init: Key Identifier beyond 48 bits");
}

static void test_integrity_refusals(void)
{
	uint8_t buf[BUF_LEN], b[BUF_LEN];
	unsigned int digest = 0, decoder = 0, keyid = 0, accepted = 0;
	struct rsvp_key k, other_id, other_secret;
	union lh_ip_addr from = {.b = {192, 168, 7, 1}};
	struct rsvp_replay replay = {0};
	struct rsvp_msg m, d;
	enum rsvp_err e;
	size_t n, off;

	sample_key(&k, SAMPLE_KEY_ID, 0x00);
	sample_key(&other_id, SAMPLE_KEY_ID + 1, 0x00);
	sample_key(&other_secret, SAMPLE_KEY_ID, 0x01);
	sample(&m, RSVP_MSG_CB_RESERVE, AF_INET, 2);
	n = encode_signed(&m, buf, &k, SAMPLE_SEQ);

	/* every byte flipped, the checksum then fixed as a forger would (but for the checksum's
	 * own) */
	for (off = 0; off < n; off++) {
		memcpy(b, buf, n);
		b[off] ^= 0xff;
		if (off != 2 && off != 3)
			fix_csum(b, n);
		e = check_signed(b, n, &k, &d);
		if (e == RSVP_E_OK)
			accepted++;
		else if (e == RSVP_E_INTEGRITY_DIGEST)
			digest++;
		else if (e == RSVP_E_INTEGRITY_KEY)
			keyid++;
		else
			decoder++;
	}
	tap_prefix("each of the %zu bytes flipped: refused, %u as integrity_digest, %u as "
		   "integrity_key (the Key Identifier's 6), %u by the decoder",
		   n, digest, keyid, decoder);
	tap_eq_int(accepted, 0, "accepted");
	tap_eq_int(keyid, 6, "refused as integrity_key");
	tap_eq_int(digest + keyid + decoder, n, "refused in all");
	tap_ge_int(digest, n / 2 + 1, "refused as integrity_digest (more than half)");
	tap_prefix_end();
	/* the bytes the decoder does not look into are all the digest's to catch */
	{
		size_t c = find_obj(buf, n, RSVP_CLASS_CREDIT), i;
		bool all = true;

		e = RSVP_E_OK;
		for (i = c + 8; i < c + 32 && all; i++) {
			memcpy(b, buf, n);
			b[i] ^= 0x01;
			fix_csum(b, n);
			e = check_signed(b, n, &k, &d);
			all = e == RSVP_E_INTEGRITY_DIGEST;
		}
		tap_eq_str(rsvp_err_name(e), rsvp_err_name(RSVP_E_INTEGRITY_DIGEST),
			   "a bit flipped in each byte of the Credit values: integrity_digest "
			   "(the last byte tried: %zu)",
			   i - 1);
		memcpy(b, buf, n);
		b[9 + 4] ^= 0x01; /* the INTEGRITY reserved byte */
		fix_csum(b, n);
		tap_eq_str(rsvp_err_name(check_signed(b, n, &k, &d)),
			   rsvp_err_name(RSVP_E_INTEGRITY_DIGEST),
			   "a bit flipped in INTEGRITY's reserved byte: integrity_digest");
	}

	e = check_signed(buf, n, &other_id, &d);
	tap_eq_str(rsvp_err_name(e), rsvp_err_name(RSVP_E_INTEGRITY_KEY),
		   "verified against another key id: %s", rsvp_err_name(e));
	e = check_signed(buf, n, &other_secret, &d);
	tap_eq_str(rsvp_err_name(e), rsvp_err_name(RSVP_E_INTEGRITY_DIGEST),
		   "same key id, another secret: %s", rsvp_err_name(e));
	memcpy(b, buf, n);
	if (rsvp_sign(b, n, &other_secret, SAMPLE_SEQ + 1))
		abort();
	e = check_signed(b, n, &k, &d);
	tap_eq_str(rsvp_err_name(e), rsvp_err_name(RSVP_E_INTEGRITY_DIGEST),
		   "signed with another secret under our key id: %s", rsvp_err_name(e));

	/* the same message twice: the digest is right both times, the sequence number is not */
	e = check_signed(buf, n, &k, &d);
	if (!e)
		e = rsvp_replay_accept(&replay, &from, d.integrity.key_id, d.integrity.seq);
	tap_eq_str(rsvp_err_name(e), rsvp_err_name(RSVP_E_OK),
		   "first arrival: verified and accepted");
	e = check_signed(buf, n, &k, &d);
	if (!e)
		e = rsvp_replay_accept(&replay, &from, d.integrity.key_id, d.integrity.seq);
	tap_eq_str(rsvp_err_name(e), rsvp_err_name(RSVP_E_INTEGRITY_REPLAY),
		   "the same message replayed: %s", rsvp_err_name(e));
	memcpy(b, buf, n);
	rsvp_sign(b, n, &k, SAMPLE_SEQ + 1);
	e = check_signed(b, n, &k, &d);
	if (!e)
		e = rsvp_replay_accept(&replay, &from, d.integrity.key_id, d.integrity.seq);
	tap_eq_str(rsvp_err_name(e), rsvp_err_name(RSVP_E_OK),
		   "the next sequence number: accepted");

	sample(&m, RSVP_MSG_CB_RESERVE, AF_INET, 2);
	n = (size_t)rsvp_encode(&m, buf, sizeof(buf));
	e = check_signed(buf, n, &k, &d);
	tap_eq_str(rsvp_err_name(e), rsvp_err_name(RSVP_E_INTEGRITY_MISSING),
		   "no INTEGRITY while a key is configured: %s", rsvp_err_name(e));
	e = rsvp_decode(buf, n, &d, RSVP_DECODE_REQUIRE_CSUM);
	tap_eq_str(rsvp_err_name(e), rsvp_err_name(RSVP_E_OK),
		   "... and the same message decodes where no key is (not verified)");
}

/* Malformed INTEGRITY objects: the decoder refuses them, key or none */
static void test_integrity_malformed(void)
{
	uint8_t buf[BUF_LEN], b[BUF_LEN];
	struct rsvp_msg m;
	struct rsvp_key k;
	size_t n, i;

	sample_key(&k, SAMPLE_KEY_ID, 0x00);
	sample(&m, RSVP_MSG_CB_END_ACK, AF_INET, 0);
	n = encode_signed(&m, buf, &k, SAMPLE_SEQ);
	expect(buf, n, RSVP_DECODE_REQUIRE_CSUM, RSVP_E_OK, "a signed End ACK");
	/* 4 bytes short: the digest cut (object length 32, message 4 bytes shorter) */
	memcpy(b, buf, 8 + 32);
	memcpy(b + 40, buf + 44, n - 44);
	b[9] = 32;
	b[7] = (uint8_t)(n - 4);
	fix_csum(b, n - 4);
	expect(b, n - 4, 0, RSVP_E_OBJ_SIZE, "INTEGRITY of 32 bytes (digest truncated)");
	/* 4 bytes more: a 20-byte digest */
	memcpy(b, buf, 44);
	memset(b + 44, 0, 4);
	memcpy(b + 48, buf + 44, n - 44);
	b[9] = 40;
	b[7] = (uint8_t)(n + 4);
	fix_csum(b, n + 4);
	expect(b, n + 4, 0, RSVP_E_OBJ_SIZE,
	       "INTEGRITY of 40 bytes (a digest other than HMAC-MD5's)");
	/* only the header and part of it */
	memcpy(b, buf, n);
	b[9] = 12;
	fix_csum(b, n);
	expect(b, n, 0, RSVP_E_OBJ_SIZE, "INTEGRITY object length 12");
	memcpy(b, buf, n);
	b[9] = 0x28; /* 40: past the end of the message by nothing, but the next object's header */
	b[8] = 0x01; /* 296 bytes: past the end */
	fix_csum(b, n);
	expect(b, n, 0, RSVP_E_OBJ_OVERRUN, "INTEGRITY object length 296, past the end");
	memcpy(b, buf, n);
	b[11] = 2;
	fix_csum(b, n);
	expect(b, n, 0, RSVP_E_UNKNOWN_CTYPE, "INTEGRITY C-Type 2");
	memcpy(b, buf, n);
	memcpy(b + n, buf + 8, RSVP_INTEGRITY_LEN);
	b[7] = (uint8_t)(n + RSVP_INTEGRITY_LEN);
	fix_csum(b, n + RSVP_INTEGRITY_LEN);
	expect(b, n + RSVP_INTEGRITY_LEN, 0, RSVP_E_DUP_OBJECT, "INTEGRITY twice");
	/* allowed in each type: every type was signed in the round trips; refused in none */
	for (i = 0; i < sizeof(all_types); i++)
		if (!(rsvp_allowed_objs(all_types[i]) & RSVP_OBJ_INTEGRITY))
			break;
	tap_eq_int(i, sizeof(all_types), "INTEGRITY allowed in every message type longhaul speaks");
}

/* Mutations of a signed message: whatever decodes must not verify unless unchanged */
static void test_integrity_fuzz(int rounds)
{
	uint8_t buf[BUF_LEN], b[BUF_LEN];
	unsigned int decoded = 0, bad = 0;
	struct rsvp_msg m, d;
	struct rsvp_key k;
	size_t n;

	sample_key(&k, SAMPLE_KEY_ID, 0x00);
	sample(&m, RSVP_MSG_CB_RESERVE, AF_INET, 2);
	n = encode_signed(&m, buf, &k, SAMPLE_SEQ);
	for (int i = 0; i < rounds; i++) {
		int nmut = 1 + (int)(rnd() % 3);

		memcpy(b, buf, n);
		for (int j = 0; j < nmut; j++) {
			size_t at = rnd() % n;

			if (rnd() & 1)
				b[at] ^= (uint8_t)(1u << (rnd() % 8));
			else
				b[at] = (uint8_t)rnd();
		}
		if (rnd() % 4)
			fix_csum(b, n);
		if (!memcmp(b, buf, n))
			continue;
		if (rsvp_decode(b, n, &d, RSVP_DECODE_REQUIRE_CSUM) != RSVP_E_OK)
			continue;
		decoded++;
		bad += rsvp_verify(b, n, &d, &k) == RSVP_E_OK;
	}
	tap_eq_int(bad, 0,
		   "fuzz: %d mutations of a signed Reserve, %u decoded, none verified (%u did)",
		   rounds, decoded, bad);
}

/* ---------------------------------------------------------------- --pcap */

/* The message in an IPv4 or IPv6 packet, protocol 46, TTL Send_TTL (RFC 2205) */
static size_t ip_wrap(const struct rsvp_msg *m, const uint8_t *msg, size_t len, uint8_t *pkt)
{
	union lh_ip_addr src = m->hop.addr, dst;
	size_t h;

	/* from the hop the message names to a neighbour */
	addr(&dst, m->flow.family, m->flow.family == AF_INET ? "192.168.7.2" : "fd07::2");
	if (m->flow.family == AF_INET) {
		uint16_t c;

		h = 20;
		memset(pkt, 0, h);
		pkt[0] = 0x45;
		pkt[2] = (uint8_t)((h + len) >> 8);
		pkt[3] = (uint8_t)(h + len);
		pkt[8] = m->send_ttl;
		pkt[9] = RSVP_IPPROTO;
		memcpy(pkt + 12, src.b, 4);
		memcpy(pkt + 16, dst.b, 4);
		c = lh_inet_csum(pkt, h, 0);
		pkt[10] = (uint8_t)(c >> 8);
		pkt[11] = (uint8_t)c;
	} else {
		h = 40;
		memset(pkt, 0, h);
		pkt[0] = 0x60;
		pkt[4] = (uint8_t)(len >> 8);
		pkt[5] = (uint8_t)len;
		pkt[6] = RSVP_IPPROTO;
		pkt[7] = m->send_ttl;
		memcpy(pkt + 8, src.b, 16);
		memcpy(pkt + 24, dst.b, 16);
	}
	memcpy(pkt + h, msg, len);
	return h + len;
}

/* One frame: the message in an IP packet, and the decoder's verdict on stdout */
static void emit(struct lh_pcap *p, const struct rsvp_msg *m, const uint8_t *msg, size_t len,
		 int *frame)
{
	uint8_t pkt[BUF_LEN + 40];
	struct rsvp_msg d;
	enum rsvp_err e = rsvp_decode(msg, len, &d, RSVP_DECODE_REQUIRE_CSUM);

	++*frame;
	lh_pcap_write(p, pkt, ip_wrap(m, msg, len, pkt), (uint64_t)*frame * 1000000);
	printf("%d %s %s\n", *frame, rsvp_msg_name(msg[1]) ?: "-", rsvp_err_name(e));
}

/* A signed frame: the verdict is the decoder's, then rsvp_verify()'s with key k */
static void emit_signed(struct lh_pcap *p, const struct rsvp_msg *m, const uint8_t *msg, size_t len,
			const struct rsvp_key *k, int *frame)
{
	uint8_t pkt[BUF_LEN + 40];
	struct rsvp_msg d;

	++*frame;
	lh_pcap_write(p, pkt, ip_wrap(m, msg, len, pkt), (uint64_t)*frame * 1000000);
	printf("%d %s %s\n", *frame, rsvp_msg_name(msg[1]) ?: "-",
	       rsvp_err_name(check_signed(msg, len, k, &d)));
}

/*
 * Frames 1-5 IPv4: Path init, Reserve (initial), Reserve (credit return),
 * End, End ACK; 6-10 the same over IPv6; 11 PathErr; 12 a Reserve with an
 * unknown 11bbbbbb object (forwarded), 13 with a 10bbbbbb one (ignored);
 * refused: 14 bad checksum, 15 unknown 0bbbbbbb class, 16 no Credit, 17 a
 * Credit object in an End, 18 Credit unit 2^41; valid again: 19 a Path probe,
 * 20 the Reserve answering it (Credit with Accepted); signed with INTEGRITY
 * (RFC 2747, key id 0x123456789abc, the 16 bytes 00 11 .. ff): 21 a Path init
 * (sequence number 0x0123456789abcdef), 22 a Reserve (the next one). Prints
 * "FRAME TYPE REASON" for each, the decoder's verdict (and rsvp_verify()'s).
 */
static int write_pcap(const char *path)
{
	uint8_t msg[BUF_LEN];
	struct lh_pcap p;
	struct rsvp_msg m;
	int err, frame = 0;
	size_t len;

	err = lh_pcap_create(&p, path, LH_PCAP_LINKTYPE_RAW);
	if (err) {
		fprintf(stderr, "%s: %s\n", path, strerror(-err));
		return 1;
	}
	for (int f = 0; f < 2; f++) {
		for (size_t t = 0; t < 4; t++) {
			for (int v = 0; v < (all_types[t] == RSVP_MSG_CB_RESERVE ? 2 : 1); v++) {
				sample(&m, all_types[t], f ? AF_INET6 : AF_INET, v);
				emit(&p, &m, msg, (size_t)rsvp_encode(&m, msg, sizeof(msg)),
				     &frame);
			}
		}
	}
	sample(&m, RSVP_MSG_PATH_ERR, AF_INET, 0);
	emit(&p, &m, msg, (size_t)rsvp_encode(&m, msg, sizeof(msg)), &frame);

	sample(&m, RSVP_MSG_CB_RESERVE, AF_INET, 1);
	len = (size_t)rsvp_encode(&m, msg, sizeof(msg));
	emit(&p, &m, msg, add_obj(msg, len, 200, 1, 4), &frame);
	len = (size_t)rsvp_encode(&m, msg, sizeof(msg));
	emit(&p, &m, msg, add_obj(msg, len, 150, 1, 4), &frame);

	len = (size_t)rsvp_encode(&m, msg, sizeof(msg));
	msg[3] ^= 0x01;
	emit(&p, &m, msg, len, &frame);
	len = (size_t)rsvp_encode(&m, msg, sizeof(msg));
	emit(&p, &m, msg, add_obj(msg, len, 100, 1, 4), &frame);
	len = (size_t)rsvp_encode(&m, msg, sizeof(msg));
	emit(&p, &m, msg, del_obj(msg, len, find_obj(msg, len, RSVP_CLASS_CREDIT)), &frame);
	{
		struct rsvp_msg end;
		size_t off, elen;
		uint8_t credit[CREDIT_OBJ_LEN];

		len = (size_t)rsvp_encode(&m, msg, sizeof(msg));
		off = find_obj(msg, len, RSVP_CLASS_CREDIT);
		memcpy(credit, msg + off, sizeof(credit));
		sample(&end, RSVP_MSG_CB_END, AF_INET, 0);
		elen = (size_t)rsvp_encode(&end, msg, sizeof(msg));
		memcpy(msg + elen, credit, sizeof(credit));
		elen += sizeof(credit);
		msg[6] = (uint8_t)(elen >> 8);
		msg[7] = (uint8_t)elen;
		fix_csum(msg, elen);
		emit(&p, &end, msg, elen, &frame);

		len = (size_t)rsvp_encode(&m, msg, sizeof(msg));
		msg[off + 8] = 41;
		fix_csum(msg, len);
		emit(&p, &m, msg, len, &frame);
	}
	sample(&m, RSVP_MSG_CB_PATH, AF_INET, 1);
	emit(&p, &m, msg, (size_t)rsvp_encode(&m, msg, sizeof(msg)), &frame);
	sample(&m, RSVP_MSG_CB_RESERVE, AF_INET, 2);
	emit(&p, &m, msg, (size_t)rsvp_encode(&m, msg, sizeof(msg)), &frame);
	{
		struct rsvp_key k;

		sample_key(&k, SAMPLE_KEY_ID, 0x00);
		sample(&m, RSVP_MSG_CB_PATH, AF_INET, 0);
		len = encode_signed(&m, msg, &k, SAMPLE_SEQ);
		emit_signed(&p, &m, msg, len, &k, &frame);
		sample(&m, RSVP_MSG_CB_RESERVE, AF_INET, 1);
		len = encode_signed(&m, msg, &k, SAMPLE_SEQ + 1);
		emit_signed(&p, &m, msg, len, &k, &frame);
	}
	lh_pcap_close(&p);
	return 0;
}

int main(int argc, char **argv)
{
	int rounds = 20000;

	if (argc == 3 && !strcmp(argv[1], "--pcap"))
		return write_pcap(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--fuzz"))
		rounds = atoi(argv[2]);
	else if (argc != 1) {
		fprintf(stderr, "usage: %s [--pcap FILE | --fuzz ROUNDS]\n", argv[0]);
		return 2;
	}
	test_checksum_vectors();
	test_round_trips();
	test_encode_refusals();
	test_malformed();
	test_unknown_classes();
	test_fuzz(rounds);
	test_integrity_round_trips();
	test_integrity_refusals();
	test_integrity_malformed();
	test_integrity_fuzz(rounds);
	return tap_done();
}
