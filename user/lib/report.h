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
	/* the peers' report key: the frame carries its tag (LH_REPORT_F_MAC); NULL none */
	const uint8_t *key;
};

/*
 * The report as a UDP datagram: s gives the link and IP fields (from the
 * responder to the requester); the ports are set here. Returns its length or
 * a negative errno.
 */
ssize_t lh_report_frame(const struct lh_pkt_spec *s, const struct lh_report_info *ri, void *buf,
			size_t cap);

/*
 * Read a report key file (--report-key-file): 32 hex digits, the 16-byte
 * SipHash key, spaces and a final newline allowed, nothing else. 0, or -1
 * with why in err.
 */
int lh_report_key_load(const char *path, uint8_t key[LH_SIPHASH_KEY_LEN], char *err, size_t errlen);

/* An address as the tag covers it: IPv6, or IPv4 mapped (::ffff:a.b.c.d) */
void lh_report_addr16(int family, const union lh_ip_addr *a, uint8_t out[16]);

/* Decode a report's UDP payload; 0, or -EINVAL when it is not a valid report */
int lh_report_parse(const void *payload, size_t len, struct lh_report_info *ri);

static inline bool lh_report_held(const struct lh_report_info *ri, uint32_t i)
{
	return i < ri->nbits && (ri->held[i / 8] >> (i % 8)) & 1;
}

#endif /* LH_USER_REPORT_H */
