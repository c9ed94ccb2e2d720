// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Parsing and validating RSVP messages (docs/rsvp.md): the common header
 * and checksum, each object's length, C-Type, place and contents, RFC 2205
 * section 3.10's rules for unknown classes, the mandatory objects
 * (rsvp_decode); and the reasons a message is refused, with the
 * ERROR_SPEC a refusal earns.
 */
#include <string.h>
#include <sys/socket.h>

#include "bytes.h"
#include "rsvp_int.h"

/* ---------------------------------------------------------------- object contents */

/*
 * Each reads the contents c of an object of its class (length checked):
 * a the bytes of its address where it has one, olen the object's length.
 */

static enum rsvp_err read_session(const uint8_t *c, size_t a, struct rsvp_msg *out)
{
	memcpy(out->flow.dst.b, c, a);
	out->flow.proto = c[a];
	out->flow.session_flags = c[a + 1];
	out->flow.dport = get16(c + a + 2);
	if (out->flow.proto != RSVP_ROCE_PROTO || out->flow.dport != RSVP_ROCE_PORT)
		return RSVP_E_NOT_RDMA;
	return RSVP_E_OK;
}

static void read_hop(const uint8_t *c, size_t a, struct rsvp_hop *hop)
{
	memcpy(hop->addr.b, c, a);
	hop->lih = get32(c + a);
}

static void read_error_spec(const uint8_t *c, size_t a, struct rsvp_error_spec *e)
{
	memcpy(e->node.b, c, a);
	e->flags = c[a];
	e->code = c[a + 1];
	e->value = get16(c + a + 2);
}

/* FILTER_SPEC or SENDER_TEMPLATE: a message has one of the two, they fill the same fields */
static void read_sender(const uint8_t *c, size_t a, struct rsvp_flow *f)
{
	memcpy(f->src.b, c, a);
	f->sport = get16(c + a + 2);
}

/* MESSAGE_ID or MESSAGE_ID_ACK */
static void read_msg_id(const uint8_t *c, struct rsvp_msg_id *id)
{
	id->flags = c[0];
	id->epoch = get32(c) & EPOCH_MASK;
	id->id = get32(c + 4);
}

static enum rsvp_err read_credit(const uint8_t *c, size_t olen, struct rsvp_credit *cr)
{
	/* c[6..7] reserved: sent as 0, ignored */
	cr->unit = c[4];
	cr->flags = c[5];
	cr->credit = get32(c + 8);
	cr->limit = get64(c + 12);
	cr->has_accepted = olen == CREDIT_ACC_LEN;
	if (cr->has_accepted)
		cr->accepted = get64(c + 20);
	if (cr->unit > RSVP_CREDIT_UNIT_MAX)
		return RSVP_E_OBJ_VALUE;
	return RSVP_E_OK;
}

static void read_integrity(const uint8_t *c, struct rsvp_integrity *in)
{
	/* c[1] reserved: sent as 0, ignored (and covered by the digest) */
	in->flags = c[0];
	in->key_id = (uint64_t)get16(c + 2) << 32 | get32(c + 4);
	in->seq = get64(c + 8);
	memcpy(in->digest, c + 16, MD5_DIGEST_LEN);
}

/* The contents of an object of class bit into out */
static enum rsvp_err read_object(const uint8_t *c, size_t olen, uint32_t bit, size_t a,
				 struct rsvp_msg *out)
{
	switch (bit) {
	case RSVP_OBJ_SESSION:
		return read_session(c, a, out);
	case RSVP_OBJ_HOP:
		read_hop(c, a, &out->hop);
		break;
	case RSVP_OBJ_ERROR_SPEC:
		read_error_spec(c, a, &out->error);
		break;
	case RSVP_OBJ_FILTER_SPEC:
	case RSVP_OBJ_SENDER_TEMPLATE:
		read_sender(c, a, &out->flow);
		break;
	case RSVP_OBJ_TIME_VALUES:
		out->refresh_ms = get32(c);
		break;
	case RSVP_OBJ_MESSAGE_ID:
		read_msg_id(c, &out->msg_id);
		break;
	case RSVP_OBJ_MESSAGE_ID_ACK:
		read_msg_id(c, &out->msg_id_ack);
		break;
	case RSVP_OBJ_CREDIT:
		return read_credit(c, olen, &out->credit);
	case RSVP_OBJ_RDMA_QP:
		/* c[4] reserved: sent as 0, ignored; a QPN has 24 bits */
		out->flow.dqpn = get32(c + 4) & QPN_MASK;
		break;
	case RSVP_OBJ_INTEGRITY:
		read_integrity(c, &out->integrity);
		break;
	default:
		break;
	}
	return RSVP_E_OK;
}

/* ---------------------------------------------------------------- objects */

/*
 * The C-Type and length of an object of class cl: *family the address
 * family it says (0 for a class without an address)
 */
static enum rsvp_err check_shape(const struct rsvp_class *cl, uint8_t ctype, size_t olen,
				 int *family)
{
	if (ctype == CTYPE_ONE) { /* CTYPE_IPV4 for the address objects */
		/* the Credit object has a longer form, with Accepted (longhaul) */
		if (olen != cl->len1 && !(cl->bit == RSVP_OBJ_CREDIT && olen == CREDIT_ACC_LEN))
			return RSVP_E_OBJ_SIZE;
		*family = cl->len6 ? AF_INET : 0;
		return RSVP_E_OK;
	}
	if (ctype == CTYPE_IPV6 && cl->len6) {
		if (olen != cl->len6)
			return RSVP_E_OBJ_SIZE;
		*family = AF_INET6;
		return RSVP_E_OK;
	}
	return RSVP_E_UNKNOWN_CTYPE;
}

/* Whether an object of class bit and family may join those already in out */
static enum rsvp_err check_place(uint32_t bit, int family, struct rsvp_msg *out)
{
	if (out->objs & bit)
		return RSVP_E_DUP_OBJECT;
	if (!(rsvp_allowed_objs(out->type) & bit))
		return RSVP_E_NOT_ALLOWED;
	if (family) {
		if (out->flow.family && out->flow.family != family)
			return RSVP_E_FAMILY;
		out->flow.family = family;
	}
	return RSVP_E_OK;
}

/* One object of a known class: o points at its header, olen is checked against the message */
static enum rsvp_err known_object(const uint8_t *o, size_t olen, const struct rsvp_class *cl,
				  struct rsvp_msg *out)
{
	int family = 0;
	enum rsvp_err e;

	/* C-Type and length first: an object of the wrong size is read no further */
	e = check_shape(cl, o[3], olen, &family);
	if (!e)
		e = check_place(cl->bit, family, out);
	if (!e)
		e = read_object(o + RSVP_OBJ_HDR_LEN, olen, cl->bit, rsvp_addr_len(family), out);
	if (e)
		return e;
	out->objs |= cl->bit;
	return RSVP_E_OK;
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

/* The longhaul classes are vendor-private: ours only with our enterprise number */
static bool lh_object(uint8_t class_num, const uint8_t *o, size_t olen)
{
	if (class_num != RSVP_CLASS_CREDIT && class_num != RSVP_CLASS_RDMA_QP)
		return true;
	return olen >= 8 && get32(o + 4) == RSVP_LH_ENTERPRISE;
}

/* The object at off of a message mlen long, its place noted in out->err_* */
static enum rsvp_err decode_object(const uint8_t *buf, size_t off, size_t mlen,
				   struct rsvp_msg *out, size_t *olen)
{
	const uint8_t *o = buf + off;
	uint8_t class_num = o[2];
	const struct rsvp_class *cl = rsvp_class_of_num(class_num);

	*olen = get16(o);
	out->err_off = off;
	out->err_class = class_num;
	out->err_ctype = o[3];
	if (*olen < RSVP_OBJ_HDR_LEN)
		return RSVP_E_OBJ_LEN_MIN;
	if (*olen % 4)
		return RSVP_E_OBJ_LEN_ALIGN;
	if (*olen > mlen - off)
		return RSVP_E_OBJ_OVERRUN;
	if (cl && lh_object(class_num, o, *olen))
		return known_object(o, *olen, cl, out);
	return unknown_object(o, *olen, class_num, out);
}

/* ---------------------------------------------------------------- message */

/* The common header and checksum: the message's length into *mlen */
static enum rsvp_err decode_header(const uint8_t *buf, size_t len, unsigned int flags,
				   struct rsvp_msg *out, size_t *mlen)
{
	if (len < RSVP_HDR_LEN)
		return RSVP_E_TRUNC_HDR;
	if (buf[0] >> 4 != RSVP_VERSION)
		return RSVP_E_VERSION;
	*mlen = get16(buf + 6);
	if (*mlen < RSVP_HDR_LEN)
		return RSVP_E_LEN_SHORT;
	if (*mlen % 4)
		return RSVP_E_LEN_ALIGN;
	if (*mlen > len)
		return RSVP_E_LEN_OVERRUN;
	if (get16(buf + 2) == 0) {
		if (flags & RSVP_DECODE_REQUIRE_CSUM)
			return RSVP_E_NO_CHECKSUM;
	} else if (lh_inet_csum(buf, *mlen, 0) != 0) {
		/* the sum over the message, checksum included, is all ones */
		return RSVP_E_CHECKSUM;
	}
	out->type = buf[1];
	out->flags = buf[0] & 0xf;
	out->send_ttl = buf[4];
	if (!rsvp_allowed_objs(out->type))
		return RSVP_E_MSG_TYPE;
	return RSVP_E_OK;
}

/* The first mandatory object out lacks, said at the message's end */
static enum rsvp_err check_mandatory(size_t mlen, struct rsvp_msg *out)
{
	uint32_t missing = rsvp_mandatory_objs(out->type) & ~out->objs;

	if (missing) {
		const struct rsvp_class *cl = rsvp_class_of_bit(missing & -missing);

		out->err_off = mlen;
		out->err_class = cl ? cl->class_num : 0;
		out->err_ctype = 0;
		return RSVP_E_MISSING;
	}
	out->err_off = 0;
	out->err_class = 0;
	out->err_ctype = 0;
	return RSVP_E_OK;
}

enum rsvp_err rsvp_decode(const uint8_t *buf, size_t len, struct rsvp_msg *out, unsigned int flags)
{
	size_t mlen = 0, off, olen = 0;
	enum rsvp_err e;

	memset(out, 0, sizeof(*out));
	e = decode_header(buf, len, flags, out, &mlen);
	if (e)
		return e;
	/* mlen and every accepted olen are multiples of 4: an object header always fits */
	for (off = RSVP_HDR_LEN; off < mlen; off += olen) {
		e = decode_object(buf, off, mlen, out, &olen);
		if (e)
			return e;
		if (buf[off + 2] == RSVP_CLASS_INTEGRITY)
			out->integrity.digest_off = off + RSVP_INTEGRITY_DIGEST_OFF;
	}
	return check_mandatory(mlen, out);
}

/* ---------------------------------------------------------------- reasons */

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
