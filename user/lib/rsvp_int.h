/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the RSVP codec's files share and its users need not see:
 * rsvp_types.c (message types, object classes, checksum), rsvp_encode.c,
 * rsvp_decode.c, rsvp_integrity.c. The public interface is rsvp.h.
 */
#ifndef LH_USER_RSVP_INT_H
#define LH_USER_RSVP_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

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

/*
 * A known object class: its bit in rsvp_msg.objs, its Class-Num, and its
 * length with C-Type 1 (IPv4 for the classes that carry an address) and
 * with C-Type 2 (IPv6) for those, 0 for the others.
 */
struct rsvp_class {
	uint32_t bit;
	uint8_t class_num;
	uint8_t len1;
	uint8_t len6;
};

/* The class of a bit of rsvp_msg.objs, of a Class-Num; NULL when not known */
const struct rsvp_class *rsvp_class_of_bit(uint32_t bit);
const struct rsvp_class *rsvp_class_of_num(uint8_t class_num);

/* Bytes of an address of family (AF_INET6: 16, else 4) */
static inline size_t rsvp_addr_len(int family)
{
	return family == AF_INET6 ? 16 : 4;
}

/* The checksum of a message into its header (0 on the wire means none: its other form) */
void rsvp_put_checksum(uint8_t *buf, size_t len);

#endif /* LH_USER_RSVP_INT_H */
