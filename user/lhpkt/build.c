// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The series of packets that build and send make from their options (each
 * one's PSN, QPN, IP ID and payload moved on from the first's; a wrong ICRC
 * or a Depot report on request), and `lhpkt build`: the series into a pcap.
 */
#include <errno.h>
#include <string.h>

#include "lhpkt.h"
#include "pcap.h"
#include "rocev2.h"

/* The packet's ICRC made wrong: the right one computed first, then inverted */
static int spoil_icrc(struct lh_pkt_spec *s)
{
	uint8_t tmp[9216];
	struct lh_pkt p;
	ssize_t n = lh_pkt_build(s, tmp, sizeof(tmp));

	if (n < 0 || lh_pkt_parse(tmp, (size_t)n, true, &p) != LH_STAT_ROCE)
		return n < 0 ? (int)n : -EINVAL;
	s->icrc_override = true;
	s->icrc = ~p.icrc;
	return 0;
}

ssize_t packet_build(const struct packet_opts *p, unsigned long i, uint8_t *buf, size_t cap)
{
	static uint8_t payload[8192];
	struct lh_pkt_spec s = p->spec;
	size_t k;
	int err;

	if (p->report) {
		struct lh_report_info ri = p->ri;

		ri.dqpn = s.roce.dqpn;
		ri.peer_qpn = s.roce.deth.sqpn;
		return lh_report_frame(&s, &ri, buf, cap);
	}
	for (k = 0; k < p->payload_len; k++)
		payload[k] = (uint8_t)(k + i);
	s.payload = payload;
	s.payload_len = p->payload_len;
	if (!p->same_psn)
		s.roce.psn = psn_add(s.roce.psn, (uint32_t)i);
	s.roce.dqpn = (uint32_t)((s.roce.dqpn + p->qpn_step * i) & ROCE_QPN_MASK);
	s.ip_id = (uint16_t)(s.ip_id + i);
	if (p->bad_icrc) {
		err = spoil_icrc(&s);
		if (err)
			return err;
	}
	return lh_pkt_build(&s, buf, cap);
}

int cmd_build(int argc, char **argv)
{
	struct packet_opts p;
	struct lh_pcap pc;
	uint8_t buf[9216];
	unsigned long i;
	int err, rc = 0;

	if (packet_opts_parse(argc, argv, &p))
		return EXIT_USAGE;
	if (!p.out) {
		fprintf(stderr, "lhpkt build: -w FILE is required\n");
		return EXIT_USAGE;
	}
	err = lh_pcap_create(&pc, p.out, LH_PCAP_LINKTYPE_ETHERNET);
	if (err) {
		fprintf(stderr, "lhpkt: cannot write %s: %s\n", p.out, strerror(-err));
		return EXIT_IO;
	}
	for (i = 0; i < p.count && !rc; i++) {
		ssize_t n = packet_build(&p, i, buf, sizeof(buf));

		if (n < 0) {
			fprintf(stderr, "lhpkt: cannot build packet: %s\n", strerror((int)-n));
			rc = EXIT_USAGE;
		} else if (lh_pcap_write(&pc, buf, (size_t)n, (uint64_t)i * 1000)) {
			fprintf(stderr, "lhpkt: write %s failed\n", p.out);
			rc = EXIT_IO;
		}
	}
	lh_pcap_close(&pc);
	return rc;
}
