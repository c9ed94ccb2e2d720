// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * RSVP credit-based flow control messages: encode, decode and validate
 * (RFC 2205, RFC 2961 MESSAGE_ID, draft-hu-rtgwg-cbfc-rsvp-01; the numbers
 * and layouts longhaul adds are in docs/rsvp.md), and sign and verify them
 * with RFC 2747's INTEGRITY object.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "bytes.h"
#include "rsvp.h"

/* Object sizes, object header included */
#define SESSION4_LEN 12
#define SESSION6_LEN 24
#define HOP4_LEN 12
#define HOP6_LEN 24
#define TIME_VALUES_LEN 8
#define ERROR4_LEN 12
#define ERROR6_LEN 24
#define FILTER4_LEN 12 /* FILTER_SPEC and SENDER_TEMPLATE */
#define FILTER6_LEN 24
#define MSG_ID_LEN 12
#define CREDIT_LEN 24
#define CREDIT_ACC_LEN 32 /* with Accepted */
#define RDMA_QP_LEN 12

/* C-Types: RFC 2205's address families, C-Type 1 for the rest */
#define CTYPE_IPV4 1
#define CTYPE_IPV6 2
#define CTYPE_ONE 1

#define QPN_MASK 0xffffffu
#define EPOCH_MASK 0xffffffu


/* ---------------------------------------------------------------- message types */

#define FLOW_DOWN (RSVP_OBJ_SESSION | RSVP_OBJ_SENDER_TEMPLATE | RSVP_OBJ_RDMA_QP)
#define FLOW_UP (RSVP_OBJ_SESSION | RSVP_OBJ_FILTER_SPEC | RSVP_OBJ_RDMA_QP)

/*
 * Per type: what must be there, what may be. Downstream messages (Path init,
 * End) name the sender in a SENDER_TEMPLATE as RFC 2205's Path and PathTear
 * do; upstream ones (Reserve, End ACK) in a FILTER_SPEC as Resv and ResvTear.
 */
static const struct {
	uint8_t type;
	uint32_t mandatory;
	uint32_t allowed;
} msg_types[] = {
	{RSVP_MSG_PATH_ERR, RSVP_OBJ_SESSION | RSVP_OBJ_ERROR_SPEC,
	 RSVP_OBJ_SESSION | RSVP_OBJ_ERROR_SPEC | RSVP_OBJ_SENDER_TEMPLATE | RSVP_OBJ_RDMA_QP |
		 RSVP_OBJ_MESSAGE_ID_ACK},
	{RSVP_MSG_RESV_ERR, RSVP_OBJ_SESSION | RSVP_OBJ_HOP | RSVP_OBJ_ERROR_SPEC,
	 RSVP_OBJ_SESSION | RSVP_OBJ_HOP | RSVP_OBJ_ERROR_SPEC | RSVP_OBJ_FILTER_SPEC |
		 RSVP_OBJ_RDMA_QP | RSVP_OBJ_MESSAGE_ID_ACK},
	{RSVP_MSG_CB_PATH, FLOW_DOWN | RSVP_OBJ_HOP | RSVP_OBJ_TIME_VALUES | RSVP_OBJ_MESSAGE_ID,
	 FLOW_DOWN | RSVP_OBJ_HOP | RSVP_OBJ_TIME_VALUES | RSVP_OBJ_MESSAGE_ID | RSVP_OBJ_CREDIT},
	{RSVP_MSG_CB_RESERVE, FLOW_UP | RSVP_OBJ_HOP | RSVP_OBJ_CREDIT | RSVP_OBJ_MESSAGE_ID,
	 FLOW_UP | RSVP_OBJ_HOP | RSVP_OBJ_CREDIT | RSVP_OBJ_MESSAGE_ID | RSVP_OBJ_TIME_VALUES |
		 RSVP_OBJ_MESSAGE_ID_ACK},
	{RSVP_MSG_CB_END, FLOW_DOWN | RSVP_OBJ_HOP | RSVP_OBJ_MESSAGE_ID,
	 FLOW_DOWN | RSVP_OBJ_HOP | RSVP_OBJ_MESSAGE_ID},
	{RSVP_MSG_CB_END_ACK, FLOW_UP | RSVP_OBJ_HOP | RSVP_OBJ_MESSAGE_ID_ACK,
	 FLOW_UP | RSVP_OBJ_HOP | RSVP_OBJ_MESSAGE_ID_ACK},
};

uint32_t rsvp_mandatory_objs(uint8_t type)
{
	for (size_t i = 0; i < sizeof(msg_types) / sizeof(msg_types[0]); i++)
		if (msg_types[i].type == type)
			return msg_types[i].mandatory;
	return 0;
}

uint32_t rsvp_allowed_objs(uint8_t type)
{
	/* RFC 2205 section 3.1 lets INTEGRITY into every message, as a hop signs them all */
	for (size_t i = 0; i < sizeof(msg_types) / sizeof(msg_types[0]); i++)
		if (msg_types[i].type == type)
			return msg_types[i].allowed | RSVP_OBJ_INTEGRITY;
	return 0;
}

const char *rsvp_msg_name(uint8_t type)
{
	switch (type) {
	case RSVP_MSG_PATH_ERR:
		return "path-err";
	case RSVP_MSG_RESV_ERR:
		return "resv-err";
	case RSVP_MSG_CB_PATH:
		return "cb-path";
	case RSVP_MSG_CB_RESERVE:
		return "cb-reserve";
	case RSVP_MSG_CB_END:
		return "cb-end";
	case RSVP_MSG_CB_END_ACK:
		return "cb-end-ack";
	default:
		return NULL;
	}
}

/* The known objects: the bit of each class in rsvp_msg.objs */
static const struct {
	uint32_t bit;
	uint8_t class_num;
} known_classes[] = {
	{ RSVP_OBJ_SESSION, RSVP_CLASS_SESSION },
	{ RSVP_OBJ_HOP, RSVP_CLASS_RSVP_HOP },
	{ RSVP_OBJ_TIME_VALUES, RSVP_CLASS_TIME_VALUES },
	{ RSVP_OBJ_ERROR_SPEC, RSVP_CLASS_ERROR_SPEC },
	{ RSVP_OBJ_FILTER_SPEC, RSVP_CLASS_FILTER_SPEC },
	{ RSVP_OBJ_SENDER_TEMPLATE, RSVP_CLASS_SENDER_TEMPLATE },
	{ RSVP_OBJ_MESSAGE_ID, RSVP_CLASS_MESSAGE_ID },
	{ RSVP_OBJ_MESSAGE_ID_ACK, RSVP_CLASS_MESSAGE_ID_ACK },
	{ RSVP_OBJ_CREDIT, RSVP_CLASS_CREDIT },
	{ RSVP_OBJ_RDMA_QP, RSVP_CLASS_RDMA_QP },
	{ RSVP_OBJ_INTEGRITY, RSVP_CLASS_INTEGRITY },
};

/* The class of an object bit, for err_class */
static uint8_t obj_class(uint32_t bit)
{
	size_t i;

	for (i = 0; i < sizeof(known_classes) / sizeof(known_classes[0]); i++)
		if (known_classes[i].bit == bit)
			return known_classes[i].class_num;
	return 0;
}

void rsvp_msg_init(struct rsvp_msg *m, uint8_t type)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->send_ttl = 255;
	m->objs = rsvp_mandatory_objs(type);
	m->flow.family = AF_INET;
	m->flow.proto = RSVP_ROCE_PROTO;
	m->flow.dport = RSVP_ROCE_PORT;
}

uint16_t rsvp_checksum(const uint8_t *buf, size_t len)
{
	if (len < RSVP_HDR_LEN)
		return 0;
	/* the first word, then everything after the checksum field */
	return lh_inet_csum(buf + 4, len - 4, get16(buf));
}

uint64_t rsvp_credit_bytes(uint32_t credit, uint8_t unit)
{
	if (unit >= 64 || (unit > 32 && credit >> (64 - unit)))
		return credit ? UINT64_MAX : 0;
	return (uint64_t)credit << unit;
}

/* ---------------------------------------------------------------- encode */

static size_t addr_len(int family)
{
	return family == AF_INET6 ? 16 : 4;
}

static uint8_t addr_ctype(int family)
{
	return family == AF_INET6 ? CTYPE_IPV6 : CTYPE_IPV4;
}

/* An object header at p; returns where its contents start */
static uint8_t *put_obj(uint8_t *p, size_t len, uint8_t class_num, uint8_t ctype)
{
	put16(p, (uint16_t)len);
	p[2] = class_num;
	p[3] = ctype;
	return p + RSVP_OBJ_HDR_LEN;
}

/* Bytes the objects of m take; 0 when a field cannot be written */
static size_t encoded_len(const struct rsvp_msg *m)
{
	size_t a = addr_len(m->flow.family), len = RSVP_HDR_LEN;

	if (m->objs & RSVP_OBJ_INTEGRITY)
		len += RSVP_INTEGRITY_LEN;
	if (m->objs & RSVP_OBJ_MESSAGE_ID_ACK)
		len += MSG_ID_LEN;
	if (m->objs & RSVP_OBJ_MESSAGE_ID)
		len += MSG_ID_LEN;
	if (m->objs & RSVP_OBJ_SESSION)
		len += 8 + a;
	if (m->objs & RSVP_OBJ_RDMA_QP)
		len += RDMA_QP_LEN;
	if (m->objs & RSVP_OBJ_HOP)
		len += 8 + a;
	if (m->objs & RSVP_OBJ_TIME_VALUES)
		len += TIME_VALUES_LEN;
	if (m->objs & RSVP_OBJ_ERROR_SPEC)
		len += 8 + a;
	if (m->objs & RSVP_OBJ_SENDER_TEMPLATE)
		len += 8 + a;
	if (m->objs & RSVP_OBJ_FILTER_SPEC)
		len += 8 + a;
	if (m->objs & RSVP_OBJ_CREDIT)
		len += m->credit.has_accepted ? CREDIT_ACC_LEN : CREDIT_LEN;
	return len + m->fwd_len;
}

static int check_encodable(const struct rsvp_msg *m)
{
	uint32_t mand = rsvp_mandatory_objs(m->type), allowed = rsvp_allowed_objs(m->type);

	if (!allowed || (m->objs & mand) != mand || (m->objs & ~allowed))
		return -EINVAL;
	if (m->flow.family != AF_INET && m->flow.family != AF_INET6)
		return -EINVAL;
	if (m->flags > 0xf || m->flow.dqpn > QPN_MASK || m->msg_id.epoch > EPOCH_MASK ||
	    m->msg_id_ack.epoch > EPOCH_MASK || m->credit.unit > RSVP_CREDIT_UNIT_MAX ||
	    m->integrity.key_id > RSVP_KEY_ID_MAX)
		return -EINVAL;
	if ((m->objs & RSVP_OBJ_SESSION) &&
	    (m->flow.proto != RSVP_ROCE_PROTO || m->flow.dport != RSVP_ROCE_PORT))
		return -EINVAL;
	if (m->fwd_len > RSVP_FORWARD_MAX || m->fwd_len % 4)
		return -EINVAL;
	return 0;
}

static uint8_t *put_msg_id(uint8_t *p, uint8_t class_num, const struct rsvp_msg_id *id)
{
	p = put_obj(p, MSG_ID_LEN, class_num, CTYPE_ONE);
	put32(p, (uint32_t)id->flags << 24 | id->epoch);
	put32(p + 4, id->id);
	return p + 8;
}

/* INTEGRITY (RFC 2747 section 2.1): flags, reserved, Key Identifier, Sequence Number, digest */
static uint8_t *put_integrity(uint8_t *p, const struct rsvp_integrity *in)
{
	p = put_obj(p, RSVP_INTEGRITY_LEN, RSVP_CLASS_INTEGRITY, CTYPE_ONE);
	p[0] = in->flags;
	p[1] = 0;
	put16(p + 2, (uint16_t)(in->key_id >> 32));
	put32(p + 4, (uint32_t)in->key_id);
	put64(p + 8, in->seq);
	memcpy(p + 16, in->digest, MD5_DIGEST_LEN);
	return p + RSVP_INTEGRITY_LEN - RSVP_OBJ_HDR_LEN;
}

/* SENDER_TEMPLATE / FILTER_SPEC (RFC 2205 C-Types 1, 2): address, 2 reserved, port */
static uint8_t *put_sender(uint8_t *p, uint8_t class_num, const struct rsvp_flow *f)
{
	size_t a = addr_len(f->family);

	p = put_obj(p, 8 + a, class_num, addr_ctype(f->family));
	memcpy(p, f->src.b, a);
	put16(p + a, 0);
	put16(p + a + 2, f->sport);
	return p + a + 4;
}

ssize_t rsvp_encode(const struct rsvp_msg *m, uint8_t *buf, size_t cap)
{
	size_t a = addr_len(m->flow.family), len;
	uint8_t ctype = addr_ctype(m->flow.family);
	uint16_t csum;
	uint8_t *p;
	int err;

	err = check_encodable(m);
	if (err)
		return err;
	len = encoded_len(m);
	if (len > RSVP_MAX_LEN)
		return -EINVAL;
	if (len > cap)
		return -ENOSPC;

	p = buf;
	p[0] = (uint8_t)(RSVP_VERSION << 4 | m->flags);
	p[1] = m->type;
	put16(p + 2, 0);
	p[4] = m->send_ttl;
	p[5] = 0;
	put16(p + 6, (uint16_t)len);
	p += RSVP_HDR_LEN;

	/*
	 * INTEGRITY immediately after the common header (RFC 2205 section 3.1's
	 * message formats), then RFC 2961's MESSAGE_ID objects, then RFC 2205's
	 * order for the rest
	 */
	if (m->objs & RSVP_OBJ_INTEGRITY)
		p = put_integrity(p, &m->integrity);
	if (m->objs & RSVP_OBJ_MESSAGE_ID_ACK)
		p = put_msg_id(p, RSVP_CLASS_MESSAGE_ID_ACK, &m->msg_id_ack);
	if (m->objs & RSVP_OBJ_MESSAGE_ID)
		p = put_msg_id(p, RSVP_CLASS_MESSAGE_ID, &m->msg_id);
	if (m->objs & RSVP_OBJ_SESSION) {
		p = put_obj(p, 8 + a, RSVP_CLASS_SESSION, ctype);
		memcpy(p, m->flow.dst.b, a);
		p[a] = m->flow.proto;
		p[a + 1] = m->flow.session_flags;
		put16(p + a + 2, m->flow.dport);
		p += a + 4;
	}
	if (m->objs & RSVP_OBJ_RDMA_QP) {
		p = put_obj(p, RDMA_QP_LEN, RSVP_CLASS_RDMA_QP, CTYPE_ONE);
		put32(p, RSVP_LH_ENTERPRISE);
		put32(p + 4, m->flow.dqpn);
		p += 8;
	}
	if (m->objs & RSVP_OBJ_HOP) {
		p = put_obj(p, 8 + a, RSVP_CLASS_RSVP_HOP, ctype);
		memcpy(p, m->hop.addr.b, a);
		put32(p + a, m->hop.lih);
		p += a + 4;
	}
	if (m->objs & RSVP_OBJ_TIME_VALUES) {
		p = put_obj(p, TIME_VALUES_LEN, RSVP_CLASS_TIME_VALUES, CTYPE_ONE);
		put32(p, m->refresh_ms);
		p += 4;
	}
	if (m->objs & RSVP_OBJ_ERROR_SPEC) {
		p = put_obj(p, 8 + a, RSVP_CLASS_ERROR_SPEC, ctype);
		memcpy(p, m->error.node.b, a);
		p[a] = m->error.flags;
		p[a + 1] = m->error.code;
		put16(p + a + 2, m->error.value);
		p += a + 4;
	}
	if (m->objs & RSVP_OBJ_SENDER_TEMPLATE)
		p = put_sender(p, RSVP_CLASS_SENDER_TEMPLATE, &m->flow);
	if (m->objs & RSVP_OBJ_FILTER_SPEC)
		p = put_sender(p, RSVP_CLASS_FILTER_SPEC, &m->flow);
	if (m->objs & RSVP_OBJ_CREDIT) {
		size_t clen = m->credit.has_accepted ? CREDIT_ACC_LEN : CREDIT_LEN;

		p = put_obj(p, clen, RSVP_CLASS_CREDIT, CTYPE_ONE);
		put32(p, RSVP_LH_ENTERPRISE);
		p[4] = m->credit.unit;
		p[5] = m->credit.flags;
		put16(p + 6, 0);
		put32(p + 8, m->credit.credit);
		put64(p + 12, m->credit.limit);
		if (m->credit.has_accepted)
			put64(p + 20, m->credit.accepted);
		p += clen - RSVP_OBJ_HDR_LEN;
	}
	memcpy(p, m->fwd, m->fwd_len);

	/* 0 on the wire means "no checksum": send its other one's complement form */
	csum = rsvp_checksum(buf, len);
	put16(buf + 2, csum ? csum : 0xffff);
	return (ssize_t)len;
}

/* ---------------------------------------------------------------- decode */

/* The longhaul classes are vendor-private: ours only with our enterprise number */
static bool lh_object(uint8_t class_num, const uint8_t *o, size_t olen)
{
	if (class_num != RSVP_CLASS_CREDIT && class_num != RSVP_CLASS_RDMA_QP)
		return true;
	return olen >= 8 && get32(o + 4) == RSVP_LH_ENTERPRISE;
}

/* The object bit of a known class, or 0 */
static uint32_t class_bit(uint8_t class_num)
{
	size_t i;

	for (i = 0; i < sizeof(known_classes) / sizeof(known_classes[0]); i++)
		if (known_classes[i].class_num == class_num)
			return known_classes[i].bit;
	return 0;
}

/* An object of a class the decoder does not know: RFC 2205 section 3.10 */
static enum rsvp_err unknown_object(const uint8_t *o, size_t olen, uint8_t class_num,
				    struct rsvp_msg *out)
{
	switch (class_num & RSVP_CLASS_RULE_MASK) {
	case RSVP_CLASS_RULE_IGNORE:
		out->ignored++;
		return RSVP_E_OK;
	case RSVP_CLASS_RULE_FORWARD:
		if (olen > RSVP_FORWARD_MAX - out->fwd_len)
			return RSVP_E_FORWARD_FULL;
		memcpy(out->fwd + out->fwd_len, o, olen);
		out->fwd_len += olen;
		out->forwarded++;
		return RSVP_E_OK;
	default:
		return RSVP_E_UNKNOWN_CLASS;
	}
}

/*
 * The length of each known object: with C-Type 1 (IPv4 for the classes that
 * carry an address), and with C-Type 2 (IPv6) for those, 0 for the others.
 */
static const struct {
	uint32_t bit;
	uint8_t len1;
	uint8_t len6;
} obj_shapes[] = {
	{RSVP_OBJ_SESSION, SESSION4_LEN, SESSION6_LEN},
	{RSVP_OBJ_HOP, HOP4_LEN, HOP6_LEN},
	{RSVP_OBJ_ERROR_SPEC, ERROR4_LEN, ERROR6_LEN},
	{RSVP_OBJ_FILTER_SPEC, FILTER4_LEN, FILTER6_LEN},
	{RSVP_OBJ_SENDER_TEMPLATE, FILTER4_LEN, FILTER6_LEN},
	{RSVP_OBJ_TIME_VALUES, TIME_VALUES_LEN, 0},
	{RSVP_OBJ_MESSAGE_ID, MSG_ID_LEN, 0},
	{RSVP_OBJ_MESSAGE_ID_ACK, MSG_ID_LEN, 0},
	{RSVP_OBJ_CREDIT, CREDIT_LEN, 0},
	{RSVP_OBJ_RDMA_QP, RDMA_QP_LEN, 0},
	{RSVP_OBJ_INTEGRITY, RSVP_INTEGRITY_LEN, 0}, /* C-Type 1: HMAC-MD5's 16-byte digest */
};

/* One object of a known class: o points at its header, olen is checked against the message */
static enum rsvp_err known_object(const uint8_t *o, size_t olen, uint32_t bit, struct rsvp_msg *out)
{
	const uint8_t *c = o + RSVP_OBJ_HDR_LEN;
	uint8_t ctype = o[3];
	int family;
	size_t a, i;

	/* C-Type and length first: an object of the wrong size is read no further */
	for (i = 0; i < sizeof(obj_shapes) / sizeof(obj_shapes[0]); i++)
		if (obj_shapes[i].bit == bit)
			break;
	if (i == sizeof(obj_shapes) / sizeof(obj_shapes[0]))
		return RSVP_E_UNKNOWN_CLASS;
	if (ctype == CTYPE_ONE) { /* CTYPE_IPV4 for the address objects */
		/* the Credit object has a longer form, with Accepted (longhaul) */
		if (olen != obj_shapes[i].len1 && !(bit == RSVP_OBJ_CREDIT && olen == CREDIT_ACC_LEN))
			return RSVP_E_OBJ_SIZE;
		family = obj_shapes[i].len6 ? AF_INET : 0;
	} else if (ctype == CTYPE_IPV6 && obj_shapes[i].len6) {
		if (olen != obj_shapes[i].len6)
			return RSVP_E_OBJ_SIZE;
		family = AF_INET6;
	} else {
		return RSVP_E_UNKNOWN_CTYPE;
	}
	if (out->objs & bit)
		return RSVP_E_DUP_OBJECT;
	if (!(rsvp_allowed_objs(out->type) & bit))
		return RSVP_E_NOT_ALLOWED;
	if (family) {
		if (out->flow.family && out->flow.family != family)
			return RSVP_E_FAMILY;
		out->flow.family = family;
	}
	a = addr_len(family);

	switch (bit) {
	case RSVP_OBJ_SESSION:
		memcpy(out->flow.dst.b, c, a);
		out->flow.proto = c[a];
		out->flow.session_flags = c[a + 1];
		out->flow.dport = get16(c + a + 2);
		if (out->flow.proto != RSVP_ROCE_PROTO || out->flow.dport != RSVP_ROCE_PORT)
			return RSVP_E_NOT_RDMA;
		break;
	case RSVP_OBJ_HOP:
		memcpy(out->hop.addr.b, c, a);
		out->hop.lih = get32(c + a);
		break;
	case RSVP_OBJ_ERROR_SPEC:
		memcpy(out->error.node.b, c, a);
		out->error.flags = c[a];
		out->error.code = c[a + 1];
		out->error.value = get16(c + a + 2);
		break;
	case RSVP_OBJ_FILTER_SPEC:
	case RSVP_OBJ_SENDER_TEMPLATE:
		/* a message has one of the two (msg_types): they fill the same fields */
		memcpy(out->flow.src.b, c, a);
		out->flow.sport = get16(c + a + 2);
		break;
	case RSVP_OBJ_TIME_VALUES:
		out->refresh_ms = get32(c);
		break;
	case RSVP_OBJ_MESSAGE_ID:
		out->msg_id.flags = c[0];
		out->msg_id.epoch = get32(c) & EPOCH_MASK;
		out->msg_id.id = get32(c + 4);
		break;
	case RSVP_OBJ_MESSAGE_ID_ACK:
		out->msg_id_ack.flags = c[0];
		out->msg_id_ack.epoch = get32(c) & EPOCH_MASK;
		out->msg_id_ack.id = get32(c + 4);
		break;
	case RSVP_OBJ_CREDIT:
		/* c[6..7] reserved: sent as 0, ignored */
		out->credit.unit = c[4];
		out->credit.flags = c[5];
		out->credit.credit = get32(c + 8);
		out->credit.limit = get64(c + 12);
		out->credit.has_accepted = olen == CREDIT_ACC_LEN;
		if (out->credit.has_accepted)
			out->credit.accepted = get64(c + 20);
		if (out->credit.unit > RSVP_CREDIT_UNIT_MAX)
			return RSVP_E_OBJ_VALUE;
		break;
	case RSVP_OBJ_RDMA_QP:
		/* c[4] reserved: sent as 0, ignored; a QPN has 24 bits */
		out->flow.dqpn = get32(c + 4) & QPN_MASK;
		break;
	case RSVP_OBJ_INTEGRITY:
		/* c[1] reserved: sent as 0, ignored (and covered by the digest) */
		out->integrity.flags = c[0];
		out->integrity.key_id = (uint64_t)get16(c + 2) << 32 | get32(c + 4);
		out->integrity.seq = get64(c + 8);
		memcpy(out->integrity.digest, c + 16, MD5_DIGEST_LEN);
		break;
	default:
		break;
	}
	out->objs |= bit;
	return RSVP_E_OK;
}

enum rsvp_err rsvp_decode(const uint8_t *buf, size_t len, struct rsvp_msg *out, unsigned int flags)
{
	size_t mlen, off;
	uint32_t missing;
	enum rsvp_err e;

	memset(out, 0, sizeof(*out));
	if (len < RSVP_HDR_LEN)
		return RSVP_E_TRUNC_HDR;
	if (buf[0] >> 4 != RSVP_VERSION)
		return RSVP_E_VERSION;
	mlen = get16(buf + 6);
	if (mlen < RSVP_HDR_LEN)
		return RSVP_E_LEN_SHORT;
	if (mlen % 4)
		return RSVP_E_LEN_ALIGN;
	if (mlen > len)
		return RSVP_E_LEN_OVERRUN;
	if (get16(buf + 2) == 0) {
		if (flags & RSVP_DECODE_REQUIRE_CSUM)
			return RSVP_E_NO_CHECKSUM;
	} else if (lh_inet_csum(buf, mlen, 0) != 0) {
		/* the sum over the message, checksum included, is all ones */
		return RSVP_E_CHECKSUM;
	}
	out->type = buf[1];
	out->flags = buf[0] & 0xf;
	out->send_ttl = buf[4];
	if (!rsvp_allowed_objs(out->type))
		return RSVP_E_MSG_TYPE;

	/* mlen and every accepted olen are multiples of 4: an object header always fits */
	for (off = RSVP_HDR_LEN; off < mlen;) {
		const uint8_t *o = buf + off;
		size_t olen = get16(o);
		uint8_t class_num = o[2];

		out->err_off = off;
		out->err_class = class_num;
		out->err_ctype = o[3];
		if (olen < RSVP_OBJ_HDR_LEN)
			return RSVP_E_OBJ_LEN_MIN;
		if (olen % 4)
			return RSVP_E_OBJ_LEN_ALIGN;
		if (olen > mlen - off)
			return RSVP_E_OBJ_OVERRUN;
		if (class_bit(class_num) && lh_object(class_num, o, olen))
			e = known_object(o, olen, class_bit(class_num), out);
		else
			e = unknown_object(o, olen, class_num, out);
		if (e)
			return e;
		if (class_num == RSVP_CLASS_INTEGRITY)
			out->integrity.digest_off = off + RSVP_INTEGRITY_DIGEST_OFF;
		off += olen;
	}

	missing = rsvp_mandatory_objs(out->type) & ~out->objs;
	if (missing) {
		out->err_off = mlen;
		out->err_class = obj_class(missing & -missing);
		out->err_ctype = 0;
		return RSVP_E_MISSING;
	}
	out->err_off = 0;
	out->err_class = 0;
	out->err_ctype = 0;
	return RSVP_E_OK;
}

/* ---------------------------------------------------------------- INTEGRITY */

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
	uint16_t csum;

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
	/* ... and the checksum last, over the digest too (0 on the wire means none) */
	csum = rsvp_checksum(buf, mlen);
	put16(buf + 2, csum ? csum : 0xffff);
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

/* ---------------------------------------------------------------- errors */

static const char *const err_names[] = {
#define RSVP_ERR_NAME(name, field, desc) #field,
	RSVP_ERRORS(RSVP_ERR_NAME)
#undef RSVP_ERR_NAME
};

static const char *const err_descs[] = {
#define RSVP_ERR_DESC(name, field, desc) desc,
	RSVP_ERRORS(RSVP_ERR_DESC)
#undef RSVP_ERR_DESC
};

const char *rsvp_strerror(enum rsvp_err err)
{
	return (unsigned int)err < RSVP_ERR_MAX ? err_descs[err] : "unknown reason";
}

const char *rsvp_err_name(enum rsvp_err err)
{
	return (unsigned int)err < RSVP_ERR_MAX ? err_names[err] : "unknown";
}

bool rsvp_err_to_error_spec(enum rsvp_err err, const struct rsvp_msg *m, uint8_t *code,
			    uint16_t *value)
{
	if (err == RSVP_E_UNKNOWN_CLASS)
		*code = RSVP_ERRCODE_UNKNOWN_CLASS;
	else if (err == RSVP_E_UNKNOWN_CTYPE)
		*code = RSVP_ERRCODE_UNKNOWN_CTYPE;
	else
		return false;
	*value = (uint16_t)(m->err_class << 8 | m->err_ctype);
	return true;
}
