/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Depot reports (include/lh_proto.h) in user space: the agent sends them,
 * tests and tools read them back.
 */
#ifndef LH_USER_REPORT_H
#define LH_USER_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lh_proto.h"
#include "pkt.h"

/* A report's content in host order */
struct lh_report_info {
	uint32_t dqpn; /* the responder's QPN (data direction) */
	uint32_t peer_qpn; /* the requester's QPN */
	uint32_t epsn; /* first PSN not delivered */
	uint32_t nbits; /* PSNs described from epsn: ePSN_D - ePSN, <= 256 */
	uint32_t seq;
	uint16_t flags; /* LH_REPORT_F_* */
	uint8_t held[LH_REPORT_BITS / 8]; /* bit i: epsn + i is held */
};

/*
 * The report as a UDP datagram: s gives the link and IP fields (from the
 * responder to the requester); the ports are set here. Returns its length or
 * a negative errno.
 */
ssize_t lh_report_frame(const struct lh_pkt_spec *s, const struct lh_report_info *ri, void *buf,
			size_t cap);

/* Decode a report's UDP payload; 0, or -EINVAL when it is not a valid report */
int lh_report_parse(const void *payload, size_t len, struct lh_report_info *ri);

static inline bool lh_report_held(const struct lh_report_info *ri, uint32_t i)
{
	return i < ri->nbits && (ri->held[i / 8] >> (i % 8)) & 1;
}

#endif /* LH_USER_REPORT_H */
