// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Building RSVP messages (docs/rsvp.md): a message made ready for its type
 * (rsvp_msg_init), checked, and written object by object in RFC 2205's
 * order with its checksum (rsvp_encode).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "bytes.h"
#include "rsvp_int.h"

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

static uint8_t addr_ctype(int family)
{
	return family == AF_INET6 ? CTYPE_IPV6 : CTYPE_IPV4;
}

/* Bytes of the object of class cl in m (its family, the Credit object's form) */
static size_t object_len(const struct rsvp_class *cl, const struct rsvp_msg *m)
{
	if (cl->bit == RSVP_OBJ_CREDIT && m->credit.has_accepted)
		return CREDIT_ACC_LEN;
	return m->flow.family == AF_INET6 && cl->len6 ? cl->len6 : cl->len1;
}

/* Bytes the header and objects of m take, the objects to forward included */
static size_t encoded_len(const struct rsvp_msg *m)
{
	size_t len = RSVP_HDR_LEN;

	for (uint32_t bit = 1; bit && bit <= m->objs; bit <<= 1) {
		const struct rsvp_class *cl = rsvp_class_of_bit(bit);

		if ((m->objs & bit) && cl)
			len += object_len(cl, m);
	}
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

/* ---------------------------------------------------------------- objects */

/* An object header at p; returns where its contents start */
static uint8_t *put_obj(uint8_t *p, size_t len, uint8_t class_num, uint8_t ctype)
{
	put16(p, (uint16_t)len);
	p[2] = class_num;
	p[3] = ctype;
	return p + RSVP_OBJ_HDR_LEN;
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

/* SESSION (RFC 2205 C-Types 1, 2): destination address, Protocol Id, flags, DstPort */
static uint8_t *put_session(uint8_t *p, const struct rsvp_flow *f)
{
	size_t a = rsvp_addr_len(f->family);

	p = put_obj(p, 8 + a, RSVP_CLASS_SESSION, addr_ctype(f->family));
	memcpy(p, f->dst.b, a);
	p[a] = f->proto;
	p[a + 1] = f->session_flags;
	put16(p + a + 2, f->dport);
	return p + a + 4;
}

/* RDMA_QP (longhaul): enterprise number, destination QPN */
static uint8_t *put_rdma_qp(uint8_t *p, const struct rsvp_flow *f)
{
	p = put_obj(p, RDMA_QP_LEN, RSVP_CLASS_RDMA_QP, CTYPE_ONE);
	put32(p, RSVP_LH_ENTERPRISE);
	put32(p + 4, f->dqpn);
	return p + 8;
}

/* RSVP_HOP (RFC 2205 C-Types 1, 2): address, Logical Interface Handle */
static uint8_t *put_hop(uint8_t *p, int family, const struct rsvp_hop *h)
{
	size_t a = rsvp_addr_len(family);

	p = put_obj(p, 8 + a, RSVP_CLASS_RSVP_HOP, addr_ctype(family));
	memcpy(p, h->addr.b, a);
	put32(p + a, h->lih);
	return p + a + 4;
}

/* TIME_VALUES (RFC 2205): the refresh period R */
static uint8_t *put_time_values(uint8_t *p, uint32_t refresh_ms)
{
	p = put_obj(p, TIME_VALUES_LEN, RSVP_CLASS_TIME_VALUES, CTYPE_ONE);
	put32(p, refresh_ms);
	return p + 4;
}

/* ERROR_SPEC (RFC 2205 C-Types 1, 2): node address, flags, code, value */
static uint8_t *put_error_spec(uint8_t *p, int family, const struct rsvp_error_spec *e)
{
	size_t a = rsvp_addr_len(family);

	p = put_obj(p, 8 + a, RSVP_CLASS_ERROR_SPEC, addr_ctype(family));
	memcpy(p, e->node.b, a);
	p[a] = e->flags;
	p[a + 1] = e->code;
	put16(p + a + 2, e->value);
	return p + a + 4;
}

/* SENDER_TEMPLATE / FILTER_SPEC (RFC 2205 C-Types 1, 2): address, 2 reserved, port */
static uint8_t *put_sender(uint8_t *p, uint8_t class_num, const struct rsvp_flow *f)
{
	size_t a = rsvp_addr_len(f->family);

	p = put_obj(p, 8 + a, class_num, addr_ctype(f->family));
	memcpy(p, f->src.b, a);
	put16(p + a, 0);
	put16(p + a + 2, f->sport);
	return p + a + 4;
}

/* Credit (the draft, longhaul's layout): enterprise, unit, flags, credit, limit [, Accepted] */
static uint8_t *put_credit(uint8_t *p, const struct rsvp_credit *c)
{
	size_t clen = c->has_accepted ? CREDIT_ACC_LEN : CREDIT_LEN;

	p = put_obj(p, clen, RSVP_CLASS_CREDIT, CTYPE_ONE);
	put32(p, RSVP_LH_ENTERPRISE);
	p[4] = c->unit;
	p[5] = c->flags;
	put16(p + 6, 0);
	put32(p + 8, c->credit);
	put64(p + 12, c->limit);
	if (c->has_accepted)
		put64(p + 20, c->accepted);
	return p + clen - RSVP_OBJ_HDR_LEN;
}

/*
 * The objects m->objs names from p on: INTEGRITY immediately after the
 * common header (RFC 2205 section 3.1's message formats), then RFC 2961's
 * MESSAGE_ID objects, then RFC 2205's order for the rest. Returns their end.
 */
static uint8_t *put_objects(uint8_t *p, const struct rsvp_msg *m)
{
	if (m->objs & RSVP_OBJ_INTEGRITY)
		p = put_integrity(p, &m->integrity);
	if (m->objs & RSVP_OBJ_MESSAGE_ID_ACK)
		p = put_msg_id(p, RSVP_CLASS_MESSAGE_ID_ACK, &m->msg_id_ack);
	if (m->objs & RSVP_OBJ_MESSAGE_ID)
		p = put_msg_id(p, RSVP_CLASS_MESSAGE_ID, &m->msg_id);
	if (m->objs & RSVP_OBJ_SESSION)
		p = put_session(p, &m->flow);
	if (m->objs & RSVP_OBJ_RDMA_QP)
		p = put_rdma_qp(p, &m->flow);
	if (m->objs & RSVP_OBJ_HOP)
		p = put_hop(p, m->flow.family, &m->hop);
	if (m->objs & RSVP_OBJ_TIME_VALUES)
		p = put_time_values(p, m->refresh_ms);
	if (m->objs & RSVP_OBJ_ERROR_SPEC)
		p = put_error_spec(p, m->flow.family, &m->error);
	if (m->objs & RSVP_OBJ_SENDER_TEMPLATE)
		p = put_sender(p, RSVP_CLASS_SENDER_TEMPLATE, &m->flow);
	if (m->objs & RSVP_OBJ_FILTER_SPEC)
		p = put_sender(p, RSVP_CLASS_FILTER_SPEC, &m->flow);
	if (m->objs & RSVP_OBJ_CREDIT)
		p = put_credit(p, &m->credit);
	return p;
}

/* ---------------------------------------------------------------- message */

ssize_t rsvp_encode(const struct rsvp_msg *m, uint8_t *buf, size_t cap)
{
	size_t len;
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

	/* the common header, its checksum 0 until the message is whole */
	buf[0] = (uint8_t)(RSVP_VERSION << 4 | m->flags);
	buf[1] = m->type;
	put16(buf + 2, 0);
	buf[4] = m->send_ttl;
	buf[5] = 0;
	put16(buf + 6, (uint16_t)len);
	p = put_objects(buf + RSVP_HDR_LEN, m);
	memcpy(p, m->fwd, m->fwd_len);
	rsvp_put_checksum(buf, len);
	return (ssize_t)len;
}
