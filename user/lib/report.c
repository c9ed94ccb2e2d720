// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Depot reports: encode into a UDP frame, decode from a payload. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "bytes.h"
#include "report.h"

#define KEY_HEX_DIGITS (2 * (size_t)LH_SIPHASH_KEY_LEN) /* a report key in hex */

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
	if (ri->key) {
		uint8_t msg[sizeof(r) + LH_REPORT_MAC_LEN], sa[16], da[16];
		__u64 k[2], tag;
		int i;

		r.flags |= htons(LH_REPORT_F_MAC);
		lh_report_addr16(s->family, &s->src, sa);
		lh_report_addr16(s->family, &s->dst, da);
		lh_sip_key(ri->key, k);
		tag = lh_report_mac(k, sa, da, &r);
		memcpy(msg, &r, sizeof(r));
		for (i = 0; i < LH_REPORT_MAC_LEN; i++)
			msg[sizeof(r) + i] = (uint8_t)(tag >> (8 * i)); /* little-endian, as the paper */
		return lh_udp_build(&us, msg, sizeof(msg), buf, cap);
	}
	return lh_udp_build(&us, &r, sizeof(r), buf, cap);
}

void lh_report_addr16(int family, const union lh_ip_addr *a, uint8_t out[16])
{
	if (family == AF_INET6) {
		memcpy(out, a->b, 16);
		return;
	}
	lh_addr16_from_v4(out, a->v4.s_addr);
}

int lh_report_key_load(const char *path, uint8_t key[LH_SIPHASH_KEY_LEN], char *err, size_t errlen)
{
	char text[256];
	size_t n, i, digits = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	for (i = 0; i < n; i++) {
		int v = lh_hex_nibble(text[i]);

		if (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')
			continue;
		if (v < 0) {
			snprintf(err, errlen, "%s: '%c' at byte %zu is no hex digit", path, text[i], i + 1);
			return -1;
		}
		if (digits >= KEY_HEX_DIGITS) {
			snprintf(err, errlen, "%s: more than %zu hex digits (a 16-byte key)", path,
				 KEY_HEX_DIGITS);
			return -1;
		}
		if (digits % 2 == 0)
			key[digits / 2] = (uint8_t)(v << 4);
		else
			key[digits / 2] |= (uint8_t)v;
		digits++;
	}
	if (digits != KEY_HEX_DIGITS) {
		snprintf(err, errlen, "%s: %zu hex digits, a report key is %zu (16 bytes)", path, digits,
			 KEY_HEX_DIGITS);
		return -1;
	}
	return 0;
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
