// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What encoding and decoding RSVP share (docs/rsvp.md): the message types
 * longhaul speaks with the objects each must and may carry, and their
 * names; the object classes with their Class-Nums and lengths; the RFC 2205
 * checksum; the Credit object's units.
 */
#include "bytes.h"
#include "rsvp_int.h"

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- message types */

#define FLOW_DOWN (RSVP_OBJ_SESSION | RSVP_OBJ_SENDER_TEMPLATE | RSVP_OBJ_RDMA_QP)
#define FLOW_UP (RSVP_OBJ_SESSION | RSVP_OBJ_FILTER_SPEC | RSVP_OBJ_RDMA_QP)

/*
 * Per type: what must be there, what may be. Downstream messages (Path init,
 * End) name the sender in a SENDER_TEMPLATE as RFC 2205's Path and PathTear
 * do; upstream ones (Reserve, End ACK) in a FILTER_SPEC as Resv and ResvTear.
 */
struct msg_type {
	uint8_t type;
	uint32_t mandatory;
	uint32_t allowed;
	const char *name;
};

static const struct msg_type msg_types[] = {
	{RSVP_MSG_PATH_ERR, RSVP_OBJ_SESSION | RSVP_OBJ_ERROR_SPEC,
	 RSVP_OBJ_SESSION | RSVP_OBJ_ERROR_SPEC | RSVP_OBJ_SENDER_TEMPLATE | RSVP_OBJ_RDMA_QP |
		 RSVP_OBJ_MESSAGE_ID_ACK,
	 "path-err"},
	{RSVP_MSG_RESV_ERR, RSVP_OBJ_SESSION | RSVP_OBJ_HOP | RSVP_OBJ_ERROR_SPEC,
	 RSVP_OBJ_SESSION | RSVP_OBJ_HOP | RSVP_OBJ_ERROR_SPEC | RSVP_OBJ_FILTER_SPEC |
		 RSVP_OBJ_RDMA_QP | RSVP_OBJ_MESSAGE_ID_ACK,
	 "resv-err"},
	{RSVP_MSG_CB_PATH, FLOW_DOWN | RSVP_OBJ_HOP | RSVP_OBJ_TIME_VALUES | RSVP_OBJ_MESSAGE_ID,
	 FLOW_DOWN | RSVP_OBJ_HOP | RSVP_OBJ_TIME_VALUES | RSVP_OBJ_MESSAGE_ID | RSVP_OBJ_CREDIT,
	 "cb-path"},
	{RSVP_MSG_CB_RESERVE, FLOW_UP | RSVP_OBJ_HOP | RSVP_OBJ_CREDIT | RSVP_OBJ_MESSAGE_ID,
	 FLOW_UP | RSVP_OBJ_HOP | RSVP_OBJ_CREDIT | RSVP_OBJ_MESSAGE_ID | RSVP_OBJ_TIME_VALUES |
		 RSVP_OBJ_MESSAGE_ID_ACK,
	 "cb-reserve"},
	{RSVP_MSG_CB_END, FLOW_DOWN | RSVP_OBJ_HOP | RSVP_OBJ_MESSAGE_ID,
	 FLOW_DOWN | RSVP_OBJ_HOP | RSVP_OBJ_MESSAGE_ID, "cb-end"},
	{RSVP_MSG_CB_END_ACK, FLOW_UP | RSVP_OBJ_HOP | RSVP_OBJ_MESSAGE_ID_ACK,
	 FLOW_UP | RSVP_OBJ_HOP | RSVP_OBJ_MESSAGE_ID_ACK, "cb-end-ack"},
};

static const struct msg_type *msg_type_of(uint8_t type)
{
	for (size_t i = 0; i < NELEMS(msg_types); i++)
		if (msg_types[i].type == type)
			return &msg_types[i];
	return NULL;
}

uint32_t rsvp_mandatory_objs(uint8_t type)
{
	const struct msg_type *t = msg_type_of(type);

	return t ? t->mandatory : 0;
}

uint32_t rsvp_allowed_objs(uint8_t type)
{
	const struct msg_type *t = msg_type_of(type);

	/* RFC 2205 section 3.1 lets INTEGRITY into every message, as a hop signs them all */
	return t ? t->allowed | RSVP_OBJ_INTEGRITY : 0;
}

const char *rsvp_msg_name(uint8_t type)
{
	const struct msg_type *t = msg_type_of(type);

	return t ? t->name : NULL;
}

/* ---------------------------------------------------------------- object classes */

static const struct rsvp_class classes[] = {
	{RSVP_OBJ_SESSION, RSVP_CLASS_SESSION, SESSION4_LEN, SESSION6_LEN},
	{RSVP_OBJ_HOP, RSVP_CLASS_RSVP_HOP, HOP4_LEN, HOP6_LEN},
	{RSVP_OBJ_TIME_VALUES, RSVP_CLASS_TIME_VALUES, TIME_VALUES_LEN, 0},
	{RSVP_OBJ_ERROR_SPEC, RSVP_CLASS_ERROR_SPEC, ERROR4_LEN, ERROR6_LEN},
	{RSVP_OBJ_FILTER_SPEC, RSVP_CLASS_FILTER_SPEC, FILTER4_LEN, FILTER6_LEN},
	{RSVP_OBJ_SENDER_TEMPLATE, RSVP_CLASS_SENDER_TEMPLATE, FILTER4_LEN, FILTER6_LEN},
	{RSVP_OBJ_MESSAGE_ID, RSVP_CLASS_MESSAGE_ID, MSG_ID_LEN, 0},
	{RSVP_OBJ_MESSAGE_ID_ACK, RSVP_CLASS_MESSAGE_ID_ACK, MSG_ID_LEN, 0},
	/* CREDIT_ACC_LEN with Accepted (longhaul) */
	{RSVP_OBJ_CREDIT, RSVP_CLASS_CREDIT, CREDIT_LEN, 0},
	{RSVP_OBJ_RDMA_QP, RSVP_CLASS_RDMA_QP, RDMA_QP_LEN, 0},
	/* C-Type 1: HMAC-MD5's 16-byte digest */
	{RSVP_OBJ_INTEGRITY, RSVP_CLASS_INTEGRITY, RSVP_INTEGRITY_LEN, 0},
};

const struct rsvp_class *rsvp_class_of_bit(uint32_t bit)
{
	for (size_t i = 0; i < NELEMS(classes); i++)
		if (classes[i].bit == bit)
			return &classes[i];
	return NULL;
}

const struct rsvp_class *rsvp_class_of_num(uint8_t class_num)
{
	for (size_t i = 0; i < NELEMS(classes); i++)
		if (classes[i].class_num == class_num)
			return &classes[i];
	return NULL;
}

/* ---------------------------------------------------------------- checksum, units */

uint16_t rsvp_checksum(const uint8_t *buf, size_t len)
{
	if (len < RSVP_HDR_LEN)
		return 0;
	/* the first word, then everything after the checksum field */
	return lh_inet_csum(buf + 4, len - 4, get16(buf));
}

void rsvp_put_checksum(uint8_t *buf, size_t len)
{
	uint16_t csum = rsvp_checksum(buf, len);

	/* 0 on the wire means "no checksum": send its other one's complement form */
	put16(buf + 2, csum ? csum : 0xffff);
}

uint64_t rsvp_credit_bytes(uint32_t credit, uint8_t unit)
{
	if (unit >= 64 || (unit > 32 && credit >> (64 - unit)))
		return credit ? UINT64_MAX : 0;
	return (uint64_t)credit << unit;
}
