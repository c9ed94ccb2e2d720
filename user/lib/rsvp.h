/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * RSVP messages of credit-based flow control (draft-hu-rtgwg-cbfc-rsvp-01):
 * the RFC 2205 common header and objects, the draft's message types 28-31
 * and Credit object, and longhaul's extensions (docs/rsvp.md), encoded from
 * and decoded into a plain struct. User space only: the agent speaks RSVP
 * over raw IP protocol 46, the BPF programs never see it.
 *
 * The decoder validates everything before it trusts a byte (header, length,
 * checksum, every object's length, mandatory and duplicate objects, RFC 2205
 * section 3.10's rules for unknown classes) and returns one reason per
 * failure (enum rsvp_err), so the agent can count each.
 */
#ifndef LH_USER_RSVP_H
#define LH_USER_RSVP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "md5.h"
#include "pkt.h"

#define RSVP_IPPROTO 46
#define RSVP_VERSION 1
#define RSVP_HDR_LEN 8
#define RSVP_OBJ_HDR_LEN 4
#define RSVP_MAX_LEN 65532 /* the 16-bit length, a multiple of 4 */
#define RSVP_ROCE_PORT 4791 /* SESSION DstPort of an RDMA flow */
#define RSVP_ROCE_PROTO 17 /* SESSION Protocol Id: UDP */

/* Message types: RFC 2205 (errors) and the draft's four */
#define RSVP_MSG_PATH_ERR 3
#define RSVP_MSG_RESV_ERR 4
#define RSVP_MSG_CB_PATH 28 /* Credit-based Path initialization */
#define RSVP_MSG_CB_RESERVE 29 /* Credit-based Reserve */
#define RSVP_MSG_CB_END 30 /* Credit-based End */
#define RSVP_MSG_CB_END_ACK 31 /* Credit-based End ACK */

/* Class-Nums: RFC 2205, RFC 2747 (INTEGRITY), RFC 2961 (MESSAGE_ID), longhaul (RFC 3936) */
#define RSVP_CLASS_SESSION 1
#define RSVP_CLASS_RSVP_HOP 3
#define RSVP_CLASS_INTEGRITY 4
#define RSVP_CLASS_TIME_VALUES 5
#define RSVP_CLASS_ERROR_SPEC 6
#define RSVP_CLASS_FILTER_SPEC 10
#define RSVP_CLASS_SENDER_TEMPLATE 11
#define RSVP_CLASS_MESSAGE_ID 23
#define RSVP_CLASS_MESSAGE_ID_ACK 24
#define RSVP_CLASS_CREDIT 124 /* the draft's Credit object: longhaul's number */
#define RSVP_CLASS_RDMA_QP 125 /* the RDMA flow's destination QP: longhaul */

/* RFC 2205 section 3.10: the top two bits of an unknown Class-Num */
#define RSVP_CLASS_RULE_MASK 0xc0
#define RSVP_CLASS_RULE_IGNORE 0x80 /* 10bbbbbb: drop the object silently */
#define RSVP_CLASS_RULE_FORWARD 0xc0 /* 11bbbbbb: keep it, forward it unexamined */
/* 0bbbbbbb: reject the message ("Unknown object class", error code 13) */

/*
 * The SMI enterprise number that opens each longhaul object (RFC 3936: an
 * object in a vendor-private class starts with one). longhaul has none of its
 * own yet: 32473 is the number RFC 5612 sets aside for documentation.
 */
#define RSVP_LH_ENTERPRISE 32473

/* Credit object: the unit is a power of two, the draft's MB is 2^20 bytes */
#define RSVP_CREDIT_UNIT_BYTE 0
#define RSVP_CREDIT_UNIT_KB 10
#define RSVP_CREDIT_UNIT_MB 20
#define RSVP_CREDIT_UNIT_MAX 40
#define RSVP_CREDIT_F_INIT 0x01 /* the hop's initial buffer (answer to a Path init) */
#define RSVP_CREDIT_F_HEARTBEAT 0x02 /* no buffer freed: the hop is alive */
/* on a Path (longhaul): a probe of a set-up hop, answered by a Reserve carrying Accepted */
#define RSVP_CREDIT_F_PROBE 0x04

/*
 * INTEGRITY, RFC 2747 section 2.1: Class 4, C-Type 1, with the one digest
 * every implementation has, HMAC-MD5 (16 bytes): Flags, a reserved byte,
 * the 48-bit Key Identifier, the 64-bit Sequence Number, the digest.
 */
#define RSVP_INTEGRITY_LEN 36
#define RSVP_INTEGRITY_DIGEST_OFF 20 /* from the object's start */
/* Flags: the sender answers Integrity Challenges (RFC 2747's Integrity Handshake) */
#define RSVP_INTEGRITY_F_HANDSHAKE 0x01
#define RSVP_KEY_ID_MAX 0xffffffffffffull

/* MESSAGE_ID flags (RFC 2961) */
#define RSVP_MSG_ID_F_ACK_DESIRED 0x01

/* RFC 2205 ERROR_SPEC codes that the decoder's reasons map to */
#define RSVP_ERRCODE_UNKNOWN_CLASS 13
#define RSVP_ERRCODE_UNKNOWN_CTYPE 14
/* RFC 3209: Routing Problem / No route available toward destination (a hop's paths all failed) */
#define RSVP_ERRCODE_ROUTING 24
#define RSVP_ERRVAL_NO_ROUTE 5

/* Which objects a struct rsvp_msg holds (bit per class) */
enum rsvp_obj {
	RSVP_OBJ_SESSION = 1u << 0,
	RSVP_OBJ_HOP = 1u << 1,
	RSVP_OBJ_TIME_VALUES = 1u << 2,
	RSVP_OBJ_ERROR_SPEC = 1u << 3,
	RSVP_OBJ_FILTER_SPEC = 1u << 4,
	RSVP_OBJ_SENDER_TEMPLATE = 1u << 5,
	RSVP_OBJ_MESSAGE_ID = 1u << 6,
	RSVP_OBJ_MESSAGE_ID_ACK = 1u << 7,
	RSVP_OBJ_CREDIT = 1u << 8,
	RSVP_OBJ_RDMA_QP = 1u << 9,
	RSVP_OBJ_INTEGRITY = 1u << 10, /* allowed in every message type */
};

/*
 * Every reason a message is refused, in the order the decoder checks them,
 * then those of RFC 2747's checks (rsvp_verify(), rsvp_replay_accept()),
 * added last so that the counters keep their places.
 * X(ENUM, name, description): name is the counter's field name.
 */
#define RSVP_ERRORS(X)                                                                   \
	X(OK, ok, "valid message")                                                       \
	X(TRUNC_HDR, trunc_hdr, "shorter than the 8-byte common header")                 \
	X(VERSION, version, "version is not 1")                                          \
	X(LEN_SHORT, len_short, "RSVP length below the common header")                   \
	X(LEN_ALIGN, len_align, "RSVP length not a multiple of 4")                       \
	X(LEN_OVERRUN, len_overrun, "RSVP length beyond the bytes received")             \
	X(NO_CHECKSUM, no_checksum, "checksum 0 (none sent) where one is required")      \
	X(CHECKSUM, checksum, "checksum wrong")                                          \
	X(MSG_TYPE, msg_type, "message type not one longhaul speaks")                    \
	X(OBJ_LEN_MIN, obj_len_min, "object length below 4 (0 would never advance)")     \
	X(OBJ_LEN_ALIGN, obj_len_align, "object length not a multiple of 4")             \
	X(OBJ_OVERRUN, obj_overrun, "object runs past the end of the message")           \
	X(UNKNOWN_CLASS, unknown_class, "unknown class (Class-Num 0bbbbbbb): rejected")  \
	X(UNKNOWN_CTYPE, unknown_ctype, "known class with an unknown C-Type")            \
	X(OBJ_SIZE, obj_size, "object length wrong for its class and C-Type")            \
	X(OBJ_VALUE, obj_value, "object field out of range (credit unit above 2^40)")    \
	X(DUP_OBJECT, dup_object, "an object of this class appears twice")               \
	X(FORWARD_FULL, forward_full, "too many bytes of objects to forward (11bbbbbb)") \
	X(NOT_ALLOWED, not_allowed, "object not allowed in this message type")           \
	X(MISSING, missing, "a mandatory object is missing")                             \
	X(FAMILY, family, "objects disagree on IPv4 / IPv6")                             \
	X(NOT_RDMA, not_rdma, "SESSION is not an RDMA flow (UDP port 4791)")             \
	X(INTEGRITY_MISSING, integrity_missing, "a key is configured, no INTEGRITY")     \
	X(INTEGRITY_KEY, integrity_key, "INTEGRITY Key Identifier not configured")       \
	X(INTEGRITY_DIGEST, integrity_digest,                                            \
	  "INTEGRITY digest wrong (altered or keyed otherwise)")                         \
	X(INTEGRITY_REPLAY, integrity_replay,                                            \
	  "INTEGRITY Sequence Number not above the last accepted from the sender")

enum rsvp_err {
#define RSVP_ERR_ENUM(name, field, desc) RSVP_E_##name,
	RSVP_ERRORS(RSVP_ERR_ENUM)
#undef RSVP_ERR_ENUM
		RSVP_ERR_MAX
};

/*
 * The RDMA flow a message is about: SESSION (destination host, UDP 4791),
 * SENDER_TEMPLATE or FILTER_SPEC (source host), RDMA_QP (destination QPN):
 * the key of longhaul's lh_qp map.
 */
struct rsvp_flow {
	int family; /* AF_INET or AF_INET6 */
	union lh_ip_addr dst;
	union lh_ip_addr src;
	uint8_t proto; /* SESSION Protocol Id: 17 */
	uint8_t session_flags; /* SESSION Flags (E_Police 0x01) */
	uint16_t dport; /* SESSION DstPort: 4791 */
	uint16_t sport; /* SENDER_TEMPLATE / FILTER_SPEC SrcPort: 0, RoCEv2's is entropy */
	uint32_t dqpn; /* RDMA_QP: 24 bits */
};

/* RSVP_HOP: the sending hop and its Logical Interface Handle (longhaul: the path) */
struct rsvp_hop {
	union lh_ip_addr addr;
	uint32_t lih;
};

/* MESSAGE_ID / MESSAGE_ID_ACK (RFC 2961) */
struct rsvp_msg_id {
	uint8_t flags;
	uint32_t epoch; /* 24 bits */
	uint32_t id;
};

/* The Credit object: credit and limit count units of 2^unit bytes */
struct rsvp_credit {
	uint8_t unit;
	uint8_t flags; /* RSVP_CREDIT_F_* */
	uint32_t credit; /* the draft's credit value: buffer reserved or freed */
	uint64_t limit; /* cumulative credit granted since the Path init (0: not kept) */
	/*
	 * longhaul, in the 32-byte form of the object: bytes of the flow the hop
	 * has taken in (forwarded or holding), cumulative, in units. A Reserve's
	 * sender uses it to give back what was lost on the way (docs/rsvp.md).
	 */
	bool has_accepted;
	uint64_t accepted;
};

/* ERROR_SPEC (PathErr, ResvErr) */
struct rsvp_error_spec {
	union lh_ip_addr node;
	uint8_t flags;
	uint8_t code;
	uint16_t value;
};

/* INTEGRITY (RFC 2747 section 2.1) */
struct rsvp_integrity {
	uint8_t flags; /* RSVP_INTEGRITY_F_* */
	uint64_t key_id; /* 48 bits */
	uint64_t seq;
	uint8_t digest[MD5_DIGEST_LEN]; /* HMAC-MD5; encoded as given (rsvp_sign() fills it) */
	size_t digest_off; /* decode: the digest's offset in the message, for rsvp_verify() */
};

/* A security association's key (RFC 2747 section 2.2): its id and the HMAC-MD5 key made ready */
struct rsvp_key {
	uint64_t id;
	struct hmac_md5_key hmac;
};

/* Room kept for unknown objects of class 11bbbbbb, forwarded unexamined */
#define RSVP_FORWARD_MAX 256

struct rsvp_msg {
	uint8_t type; /* RSVP_MSG_* */
	uint8_t flags; /* common header flags (4 bits) */
	uint8_t send_ttl;
	uint32_t objs; /* enum rsvp_obj: the objects present (decode) or to write (encode) */
	struct rsvp_flow flow;
	struct rsvp_hop hop;
	uint32_t refresh_ms; /* TIME_VALUES refresh period R */
	struct rsvp_msg_id msg_id;
	struct rsvp_msg_id msg_id_ack;
	struct rsvp_credit credit;
	struct rsvp_error_spec error;
	struct rsvp_integrity integrity;
	unsigned int ignored; /* unknown 10bbbbbb objects dropped */
	unsigned int forwarded; /* unknown 11bbbbbb objects kept in fwd */
	size_t fwd_len;
	uint8_t fwd[RSVP_FORWARD_MAX]; /* those objects as received, appended when encoding */
	/* Where decoding stopped: the offending object's offset, Class-Num, C-Type */
	size_t err_off;
	uint8_t err_class;
	uint8_t err_ctype;
};

/* Objects a message type must carry, and those it may carry; 0 for a type not spoken */
uint32_t rsvp_mandatory_objs(uint8_t type);
uint32_t rsvp_allowed_objs(uint8_t type);

/*
 * A message of this type with its mandatory objects marked present, Send_TTL
 * 255, family AF_INET, UDP 4791: the caller fills the values.
 */
void rsvp_msg_init(struct rsvp_msg *m, uint8_t type);

/*
 * Write m into buf: the objects m->objs names in RFC 2205 order, then m->fwd,
 * and the checksum. Returns the length, -EINVAL (type not spoken, mandatory
 * object missing, object not allowed, field out of range) or -ENOSPC.
 */
ssize_t rsvp_encode(const struct rsvp_msg *m, uint8_t *buf, size_t cap);

#define RSVP_DECODE_REQUIRE_CSUM 0x01 /* refuse checksum 0 ("none transmitted") */

/*
 * Decode and validate the RSVP message at buf (the IP payload, len bytes;
 * bytes after the RSVP length are ignored). Returns RSVP_E_OK with out
 * filled, or the first reason the message is refused, with out->err_off,
 * err_class and err_ctype saying where. Never reads outside buf[0, len).
 */
enum rsvp_err rsvp_decode(const uint8_t *buf, size_t len, struct rsvp_msg *out, unsigned int flags);

/* The RFC 2205 checksum of a message: its one's complement sum with the checksum field as 0 */
uint16_t rsvp_checksum(const uint8_t *buf, size_t len);

/* A reason's description, and its counter name ("checksum") */
const char *rsvp_strerror(enum rsvp_err err);
const char *rsvp_err_name(enum rsvp_err err);
/* A message type's name ("cb-path") or NULL */
const char *rsvp_msg_name(uint8_t type);

/*
 * The ERROR_SPEC a refused message earns (RFC 2205 3.10: unknown class 13,
 * unknown C-Type 14, value Class-Num << 8 | C-Type); false when RFC 2205
 * has the message dropped silently.
 */
bool rsvp_err_to_error_spec(enum rsvp_err err, const struct rsvp_msg *m, uint8_t *code,
			    uint16_t *value);

/*
 * RFC 2747 (docs/rsvp.md "INTEGRITY"). rsvp_key_init: id of at most 48 bits,
 * a secret of 1 byte or more; 0 or -EINVAL. The agent reads both from
 * --rsvp-key-file (user/lib/rsvp_key.h).
 */
int rsvp_key_init(struct rsvp_key *k, uint64_t id, const uint8_t *secret, size_t len);

/*
 * Sign an encoded message (its INTEGRITY object written by rsvp_encode(),
 * RSVP_OBJ_INTEGRITY in objs) as RFC 2747 section 3 has a sender generate it: Key
 * Identifier and Sequence Number filled in, digest and checksum zero, the
 * HMAC-MD5 of the whole message into the digest, then the RFC 2205
 * checksum. len: the message's length. 0, or -EINVAL when the message has no
 * INTEGRITY object or is not whole.
 */
int rsvp_sign(uint8_t *buf, size_t len, const struct rsvp_key *k, uint64_t seq);

/*
 * Check the digest of a message rsvp_decode() accepted into m (RFC 2747
 * section 3, verification): RSVP_E_OK, RSVP_E_INTEGRITY_MISSING (none),
 * RSVP_E_INTEGRITY_KEY (another Key Identifier) or RSVP_E_INTEGRITY_DIGEST.
 * The digests are compared in constant time. The sequence number is the
 * caller's to check, once the digest is right (rsvp_replay_accept()).
 */
enum rsvp_err rsvp_verify(const uint8_t *buf, size_t len, const struct rsvp_msg *m,
			  const struct rsvp_key *k);

/* credit << unit in bytes, saturated at UINT64_MAX */
uint64_t rsvp_credit_bytes(uint32_t credit, uint8_t unit);

#endif /* LH_USER_RSVP_H */
