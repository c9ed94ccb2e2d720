// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Depot reports: encode into a UDP frame, decode from a payload. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "report.h"

ssize_t lh_report_frame(const struct lh_pkt_spec *s, const struct lh_report_info *ri, void *buf,
			size_t cap)
{
	struct lh_pkt_spec us = *s;
	struct lh_report r;

	if (ri->nbits > LH_REPORT_BITS)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.magic = htons(LH_REPORT_MAGIC);
	r.version = LH_REPORT_VERSION;
	r.type = LH_MSG_DEPOT_REPORT;
	r.dqpn = htonl(ri->dqpn & ROCE_QPN_MASK);
	r.peer_qpn = htonl(ri->peer_qpn & ROCE_QPN_MASK);
	r.epsn = htonl(ri->epsn & ROCE_PSN_MASK);
	r.epsn_d = htonl(psn_add(ri->epsn, ri->nbits));
	r.nbits = htons((uint16_t)ri->nbits);
	r.seq = htonl(ri->seq);
	r.flags = htons(ri->flags);
	memcpy(r.held, ri->held, sizeof(r.held));
	us.sport = LH_REPORT_PORT;
	us.dport = LH_REPORT_PORT;
	return lh_udp_build(&us, &r, sizeof(r), buf, cap);
}

int lh_report_parse(const void *payload, size_t len, struct lh_report_info *ri)
{
	struct lh_report r;

	if (len < sizeof(r))
		return -EINVAL;
	memcpy(&r, payload, sizeof(r));
	if (ntohs(r.magic) != LH_REPORT_MAGIC || r.version != LH_REPORT_VERSION ||
	    r.type != LH_MSG_DEPOT_REPORT || ntohs(r.nbits) > LH_REPORT_BITS ||
	    psn_diff(ntohl(r.epsn_d), ntohl(r.epsn)) != ntohs(r.nbits))
		return -EINVAL;
	ri->dqpn = ntohl(r.dqpn) & ROCE_QPN_MASK;
	ri->peer_qpn = ntohl(r.peer_qpn) & ROCE_QPN_MASK;
	ri->epsn = ntohl(r.epsn) & ROCE_PSN_MASK;
	ri->nbits = ntohs(r.nbits);
	ri->seq = ntohl(r.seq);
	ri->flags = ntohs(r.flags);
	memcpy(ri->held, r.held, sizeof(ri->held));
	return 0;
}
