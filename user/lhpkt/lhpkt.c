// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhpkt: craft RoCEv2 packets with longhaul's packet library, write them to
 * a capture or send them on an interface, and check captures: every RoCEv2
 * packet parsed and its ICRC recomputed (the independent ICRC check of a
 * gateway capture).
 *
 *   lhpkt build [PACKET OPTIONS] -w FILE.pcap
 *   lhpkt send  [PACKET OPTIONS] --dev IFACE
 *   lhpkt check [-j] FILE.pcap...
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"
#include "log.h"
#include "pcap.h"
#include "pkt.h"
#include "pktio.h"
#include "report.h"

#define EXIT_BAD_ICRC 1
#define EXIT_USAGE 2
#define EXIT_IO 3

struct build_opts {
	struct lh_pkt_spec spec;
	unsigned long count;
	size_t payload_len;
	bool psn_step; /* PSN advances per packet */
	unsigned long qpn_step; /* --qpn-step: destination QPN advance per packet */
	const char *out;
	const char *dev;
	bool bad_icrc;
	bool have_dmac;
	unsigned long gap_us;
	unsigned long burst; /* send: frames per wakeup (0: 1) */
	/* --report: a Depot report (include/lh_proto.h) instead of a RoCEv2 packet */
	bool report;
	struct lh_report_info ri;
	uint8_t report_key[LH_SIPHASH_KEY_LEN]; /* --report-key-file: ri.key points here */
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: lhpkt build [PACKET OPTIONS] -w FILE.pcap\n"
		"       lhpkt send  [PACKET OPTIONS] --dev IFACE [--gap-us N] [--burst N]\n"
		"       lhpkt check [-j] FILE.pcap...\n"
		"\n"
		"Packet options (defaults: IPv4 10.0.0.1 -> 10.0.0.2, RC_SEND_ONLY, QP 0, PSN 0):\n"
		"  -4 | -6               IP version (also implied by --src/--dst)\n"
		"  --src IP --dst IP     addresses\n"
		"  --smac MAC --dmac MAC Ethernet addresses (send: smac defaults to the interface)\n"
		"  --vlan VID[:PCP]      802.1Q tag; twice for QinQ (outer one is 802.1ad)\n"
		"  --tos N --ttl N --flow-label N --ip-id N\n"
		"  --sport N --dport N   UDP ports (dport 4791)\n"
		"  --udp-csum | --no-udp-csum  (default: on for IPv6, off for IPv4, as rxe)\n"
		"  --opcode NAME|N       e.g. RC_RDMA_WRITE_FIRST, RC_ACKNOWLEDGE, CNP, 0x0a\n"
		"  --qpn N --psn N --pkey N --ackreq --se --mig --fecn --becn\n"
		"  --resv N              BTH byte 4's six reserved bits (a Depot-NACK: 0x20 | range-1)\n"
		"  --syndrome N --msn N  AETH (ACK 0x1f, NAK PSN error 0x60)\n"
		"  --va N --rkey N --dmalen N --imm N --qkey N --sqpn N\n"
		"  --payload LEN         payload bytes (a counting pattern)\n"
		"  --count N             packets to make (default 1); PSN +1 each unless --same-psn\n"
		"  --qpn-step N          destination QPN + N each packet (default 0: a flood of\n"
		"                        new connections with N 1)\n"
		"  --bad-icrc            write a wrong ICRC (receivers must drop it)\n"
		"  --report EPSN:NBITS   a Depot report (UDP %u) for QP --qpn, requester --sqpn,\n"
		"                        ePSN .. ePSN+NBITS-1 all missing; --report-seq N (default 0);\n"
		"                        --report-key-file FILE signs it (longhauld's option)\n"
		"  -w FILE               (build) capture file to write\n"
		"  --dev IFACE           (send) interface to send on\n"
		"  --gap-us N            (send) N us a packet, kept on average from the start\n"
		"  --burst N             (send) N packets back to back, then N x gap (default 1):\n"
		"                        the same rate for a fraction of the wakeups\n"
		"check: exit 0 when every RoCEv2 packet has a valid ICRC, %d when one does not,\n"
		"       %d on bad usage, %d when a file cannot be read.\n",
		(unsigned int)LH_REPORT_PORT, EXIT_BAD_ICRC, EXIT_USAGE, EXIT_IO);
}

static int parse_ulong(const char *s, unsigned long max, unsigned long *out, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || !*s || *end || v > max || s[0] == '-') {
		fprintf(stderr, "lhpkt: bad %s '%s' (0..%lu)\n", what, s, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_mac(const char *s, uint8_t *mac)
{
	unsigned int b[6];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6) {
		fprintf(stderr, "lhpkt: bad MAC address '%s'\n", s);
		return -EINVAL;
	}
	for (i = 0; i < 6; i++) {
		if (b[i] > 0xff) {
			fprintf(stderr, "lhpkt: bad MAC address '%s'\n", s);
			return -EINVAL;
		}
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

/* Parse an address; the family of every address given must agree with *family */
static int parse_ip(const char *s, int *family, union lh_ip_addr *a)
{
	int f;

	if (inet_pton(AF_INET, s, &a->v4) == 1) {
		f = AF_INET;
	} else if (inet_pton(AF_INET6, s, &a->v6) == 1) {
		f = AF_INET6;
	} else {
		fprintf(stderr, "lhpkt: bad IP address '%s'\n", s);
		return -EINVAL;
	}
	if (*family && *family != f) {
		fprintf(stderr, "lhpkt: '%s': IPv4 and IPv6 mixed\n", s);
		return -EINVAL;
	}
	*family = f;
	return 0;
}

static int parse_opcode(const char *s, uint8_t *op)
{
	unsigned long v;
	int i;

	for (i = 0; i < 256; i++) {
		const char *n = lh_opcode_name((uint8_t)i);

		if (n && !strcasecmp(n, s)) {
			*op = (uint8_t)i;
			return 0;
		}
	}
	if (parse_ulong(s, 255, &v, "opcode"))
		return -EINVAL;
	*op = (uint8_t)v;
	return 0;
}

enum {
	OPT_SRC = 256,
	OPT_DST,
	OPT_SMAC,
	OPT_DMAC,
	OPT_VLAN,
	OPT_TOS,
	OPT_TTL,
	OPT_FLOW,
	OPT_IPID,
	OPT_SPORT,
	OPT_DPORT,
	OPT_UDPCSUM,
	OPT_NOUDPCSUM,
	OPT_OPCODE,
	OPT_QPN,
	OPT_PSN,
	OPT_PKEY,
	OPT_ACKREQ,
	OPT_SE,
	OPT_MIG,
	OPT_FECN,
	OPT_BECN,
	OPT_SYNDROME,
	OPT_MSN,
	OPT_VA,
	OPT_RKEY,
	OPT_DMALEN,
	OPT_IMM,
	OPT_QKEY,
	OPT_SQPN,
	OPT_PAYLOAD,
	OPT_COUNT,
	OPT_SAMEPSN,
	OPT_QPN_STEP,
	OPT_BADICRC,
	OPT_DEV,
	OPT_GAP,
	OPT_BURST,
	OPT_RESV,
	OPT_REPORT,
	OPT_REPORT_SEQ,
	OPT_REPORT_KEY,
};

/* --report EPSN:NBITS */
static int parse_report(const char *arg, struct lh_report_info *ri)
{
	unsigned long epsn, nbits;
	char *end;

	errno = 0;
	epsn = strtoul(arg, &end, 0);
	if (errno || end == arg || *end != ':' || epsn > ROCE_PSN_MASK)
		goto bad;
	arg = end + 1;
	nbits = strtoul(arg, &end, 0);
	if (errno || end == arg || *end || nbits > LH_REPORT_BITS)
		goto bad;
	ri->epsn = (uint32_t)epsn;
	ri->nbits = (uint32_t)nbits;
	return 0;
bad:
	fprintf(stderr, "lhpkt: --report wants EPSN:NBITS (PSN up to %u, at most %u bits)\n",
		ROCE_PSN_MASK, (unsigned int)LH_REPORT_BITS);
	return -EINVAL;
}

static const struct option build_long[] = {
	{ "src", required_argument, NULL, OPT_SRC },
	{ "dst", required_argument, NULL, OPT_DST },
	{ "smac", required_argument, NULL, OPT_SMAC },
	{ "dmac", required_argument, NULL, OPT_DMAC },
	{ "vlan", required_argument, NULL, OPT_VLAN },
	{ "tos", required_argument, NULL, OPT_TOS },
	{ "ttl", required_argument, NULL, OPT_TTL },
	{ "flow-label", required_argument, NULL, OPT_FLOW },
	{ "ip-id", required_argument, NULL, OPT_IPID },
	{ "sport", required_argument, NULL, OPT_SPORT },
	{ "dport", required_argument, NULL, OPT_DPORT },
	{ "udp-csum", no_argument, NULL, OPT_UDPCSUM },
	{ "no-udp-csum", no_argument, NULL, OPT_NOUDPCSUM },
	{ "opcode", required_argument, NULL, OPT_OPCODE },
	{ "qpn", required_argument, NULL, OPT_QPN },
	{ "psn", required_argument, NULL, OPT_PSN },
	{ "pkey", required_argument, NULL, OPT_PKEY },
	{ "ackreq", no_argument, NULL, OPT_ACKREQ },
	{ "se", no_argument, NULL, OPT_SE },
	{ "mig", no_argument, NULL, OPT_MIG },
	{ "fecn", no_argument, NULL, OPT_FECN },
	{ "becn", no_argument, NULL, OPT_BECN },
	{ "syndrome", required_argument, NULL, OPT_SYNDROME },
	{ "msn", required_argument, NULL, OPT_MSN },
	{ "va", required_argument, NULL, OPT_VA },
	{ "rkey", required_argument, NULL, OPT_RKEY },
	{ "dmalen", required_argument, NULL, OPT_DMALEN },
	{ "imm", required_argument, NULL, OPT_IMM },
	{ "qkey", required_argument, NULL, OPT_QKEY },
	{ "sqpn", required_argument, NULL, OPT_SQPN },
	{ "payload", required_argument, NULL, OPT_PAYLOAD },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "same-psn", no_argument, NULL, OPT_SAMEPSN },
	{ "qpn-step", required_argument, NULL, OPT_QPN_STEP },
	{ "bad-icrc", no_argument, NULL, OPT_BADICRC },
	{ "dev", required_argument, NULL, OPT_DEV },
	{ "gap-us", required_argument, NULL, OPT_GAP },
	{ "burst", required_argument, NULL, OPT_BURST },
	{ "resv", required_argument, NULL, OPT_RESV },
	{ "report", required_argument, NULL, OPT_REPORT },
	{ "report-seq", required_argument, NULL, OPT_REPORT_SEQ },
	{ "report-key-file", required_argument, NULL, OPT_REPORT_KEY },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_build_opts(int argc, char **argv, struct build_opts *o)
{
	struct lh_pkt_spec *s = &o->spec;
	bool udp_csum_set = false, udp_csum = false, have_src = false, have_dst = false;
	unsigned long v = 0;
	int c, err = 0;

	memset(o, 0, sizeof(*o));
	lh_pkt_spec_init(s, AF_INET);
	s->family = 0; /* decided by -4/-6 or the addresses */
	o->count = 1;
	o->psn_step = true;
	optind = 1;
	while (!err && (c = getopt_long(argc, argv, "46w:h", build_long, NULL)) != -1) {
		switch (c) {
		case '4':
		case '6':
			if (s->family && s->family != (c == '4' ? AF_INET : AF_INET6)) {
				fprintf(stderr, "lhpkt: -4/-6 disagree with the addresses\n");
				return -EINVAL;
			}
			s->family = c == '4' ? AF_INET : AF_INET6;
			break;
		case 'w':
			o->out = optarg;
			break;
		case OPT_SRC:
			err = parse_ip(optarg, &s->family, &s->src);
			have_src = true;
			break;
		case OPT_DST:
			err = parse_ip(optarg, &s->family, &s->dst);
			have_dst = true;
			break;
		case OPT_SMAC:
			err = parse_mac(optarg, s->src_mac);
			break;
		case OPT_DMAC:
			err = parse_mac(optarg, s->dst_mac);
			o->have_dmac = true;
			break;
		case OPT_VLAN: {
			unsigned long vid = 0, pcp = 0;
			char *colon = strchr(optarg, ':');

			if (s->nr_vlans == LH_MAX_VLANS) {
				fprintf(stderr, "lhpkt: at most %d VLAN tags\n", LH_MAX_VLANS);
				return -EINVAL;
			}
			if (colon) {
				*colon = 0;
				err = parse_ulong(colon + 1, 7, &pcp, "VLAN PCP");
			}
			err = err ?: parse_ulong(optarg, 4095, &vid, "VLAN ID");
			s->vlan[s->nr_vlans].tpid = LH_ETH_P_8021Q;
			s->vlan[s->nr_vlans++].tci = (uint16_t)(pcp << 13 | vid);
			break;
		}
		case OPT_TOS:
			err = parse_ulong(optarg, 255, &v, "TOS");
			s->tos = (uint8_t)v;
			break;
		case OPT_TTL:
			err = parse_ulong(optarg, 255, &v, "TTL");
			s->ttl = (uint8_t)v;
			break;
		case OPT_FLOW:
			err = parse_ulong(optarg, 0xfffff, &v, "flow label");
			s->flow_label = (uint32_t)v;
			break;
		case OPT_IPID:
			err = parse_ulong(optarg, 0xffff, &v, "IP ID");
			s->ip_id = (uint16_t)v;
			break;
		case OPT_SPORT:
			err = parse_ulong(optarg, 0xffff, &v, "UDP source port");
			s->sport = (uint16_t)v;
			break;
		case OPT_DPORT:
			err = parse_ulong(optarg, 0xffff, &v, "UDP destination port");
			s->dport = (uint16_t)v;
			break;
		case OPT_UDPCSUM:
		case OPT_NOUDPCSUM:
			udp_csum_set = true;
			udp_csum = c == OPT_UDPCSUM;
			break;
		case OPT_OPCODE:
			err = parse_opcode(optarg, &s->roce.opcode);
			break;
		case OPT_QPN:
			err = parse_ulong(optarg, ROCE_QPN_MASK, &v, "QPN");
			s->roce.dqpn = (uint32_t)v;
			break;
		case OPT_PSN:
			err = parse_ulong(optarg, ROCE_PSN_MASK, &v, "PSN");
			s->roce.psn = (uint32_t)v;
			break;
		case OPT_PKEY:
			err = parse_ulong(optarg, 0xffff, &v, "P_Key");
			s->roce.pkey = (uint16_t)v;
			break;
		case OPT_ACKREQ:
			s->roce.ackreq = true;
			break;
		case OPT_SE:
			s->roce.se = true;
			break;
		case OPT_MIG:
			s->roce.mig = true;
			break;
		case OPT_FECN:
			s->roce.byte4 |= BTH_B4_FECN;
			break;
		case OPT_BECN:
			s->roce.byte4 |= BTH_B4_BECN;
			break;
		case OPT_SYNDROME:
			err = parse_ulong(optarg, 255, &v, "AETH syndrome");
			s->roce.aeth.syndrome = (uint8_t)v;
			break;
		case OPT_MSN:
			err = parse_ulong(optarg, ROCE_MSN_MASK, &v, "MSN");
			s->roce.aeth.msn = (uint32_t)v;
			break;
		case OPT_VA:
			err = parse_ulong(optarg, ULONG_MAX, &v, "virtual address");
			s->roce.reth.va = v;
			s->roce.atomic.va = v;
			break;
		case OPT_RKEY:
			err = parse_ulong(optarg, 0xffffffff, &v, "R_Key");
			s->roce.reth.rkey = (uint32_t)v;
			s->roce.atomic.rkey = (uint32_t)v;
			s->roce.ieth_rkey = (uint32_t)v;
			break;
		case OPT_DMALEN:
			err = parse_ulong(optarg, 0xffffffff, &v, "DMA length");
			s->roce.reth.dmalen = (uint32_t)v;
			break;
		case OPT_IMM:
			err = parse_ulong(optarg, 0xffffffff, &v, "immediate data");
			s->roce.imm = (uint32_t)v;
			break;
		case OPT_QKEY:
			err = parse_ulong(optarg, 0xffffffff, &v, "Q_Key");
			s->roce.deth.qkey = (uint32_t)v;
			break;
		case OPT_SQPN:
			err = parse_ulong(optarg, ROCE_QPN_MASK, &v, "source QPN");
			s->roce.deth.sqpn = (uint32_t)v;
			break;
		case OPT_PAYLOAD:
			err = parse_ulong(optarg, 8192, &v, "payload length");
			o->payload_len = v;
			break;
		case OPT_COUNT:
			err = parse_ulong(optarg, 100000000, &v, "count");
			o->count = v;
			break;
		case OPT_SAMEPSN:
			o->psn_step = false;
			break;
		case OPT_QPN_STEP:
			err = parse_ulong(optarg, ROCE_QPN_MASK, &v, "QPN step");
			o->qpn_step = v;
			break;
		case OPT_BADICRC:
			o->bad_icrc = true;
			break;
		case OPT_DEV:
			o->dev = optarg;
			break;
		case OPT_GAP:
			err = parse_ulong(optarg, 10000000, &v, "gap");
			o->gap_us = v;
			break;
		case OPT_BURST:
			err = parse_ulong(optarg, 65536, &v, "burst");
			if (!err && !v) {
				fprintf(stderr, "lhpkt: bad burst '0' (1..65536)\n");
				err = -EINVAL;
			}
			o->burst = v;
			break;
		case OPT_RESV:
			err = parse_ulong(optarg, 0x3f, &v, "BTH reserved bits");
			s->roce.byte4 = (uint8_t)((s->roce.byte4 & ~0x3fu) | v);
			break;
		case OPT_REPORT:
			err = parse_report(optarg, &o->ri);
			o->report = true;
			break;
		case OPT_REPORT_SEQ:
			err = parse_ulong(optarg, 0xffffffff, &v, "report seq");
			o->ri.seq = (uint32_t)v;
			break;
		case OPT_REPORT_KEY: {
			char why[300];

			err = lh_report_key_load(optarg, o->report_key, why, sizeof(why));
			if (err)
				fprintf(stderr, "lhpkt: --report-key-file: %s\n", why);
			o->ri.key = o->report_key;
			break;
		}
		case 'h':
			usage(stdout);
			exit(0);
		default:
			return -EINVAL;
		}
	}
	if (err)
		return err;
	if (optind < argc) {
		fprintf(stderr, "lhpkt: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!s->family)
		s->family = AF_INET;
	if (!have_src || !have_dst) {
		struct lh_pkt_spec d;

		lh_pkt_spec_init(&d, s->family);
		if (!have_src)
			s->src = d.src;
		if (!have_dst)
			s->dst = d.dst;
	}
	s->udp_csum = udp_csum_set ? udp_csum : s->family == AF_INET6;
	if (!roce_opcode_info(s->roce.opcode)) {
		fprintf(stderr, "lhpkt: opcode 0x%02x is not one longhaul can build\n",
			s->roce.opcode);
		return -EINVAL;
	}
	if (o->payload_len && !(roce_opcode_info(s->roce.opcode) & ROCE_OPF_PAYLOAD)) {
		fprintf(stderr, "lhpkt: %s carries no payload\n", lh_opcode_name(s->roce.opcode));
		return -EINVAL;
	}
	return 0;
}

/* Build packet i of the series into buf; returns its length */
static ssize_t build_one(struct build_opts *o, unsigned long i, uint8_t *buf, size_t cap)
{
	static uint8_t payload[8192];
	struct lh_pkt_spec s = o->spec;
	size_t k;

	if (o->report) {
		struct lh_report_info ri = o->ri;

		ri.dqpn = s.roce.dqpn;
		ri.peer_qpn = s.roce.deth.sqpn;
		return lh_report_frame(&s, &ri, buf, cap);
	}
	for (k = 0; k < o->payload_len; k++)
		payload[k] = (uint8_t)(k + i);
	s.payload = payload;
	s.payload_len = o->payload_len;
	if (o->psn_step)
		s.roce.psn = psn_add(s.roce.psn, (uint32_t)i);
	s.roce.dqpn = (uint32_t)((s.roce.dqpn + o->qpn_step * i) & ROCE_QPN_MASK);
	s.ip_id = (uint16_t)(s.ip_id + i);
	if (o->bad_icrc) {
		uint8_t tmp[9216];
		struct lh_pkt p;
		ssize_t n = lh_pkt_build(&s, tmp, sizeof(tmp));

		if (n < 0 || lh_pkt_parse(tmp, (size_t)n, true, &p) != LH_STAT_ROCE)
			return n < 0 ? n : -EINVAL;
		s.icrc_override = true;
		s.icrc = ~p.icrc;
	}
	return lh_pkt_build(&s, buf, cap);
}

static int cmd_build(int argc, char **argv)
{
	struct build_opts o;
	struct lh_pcap pc;
	uint8_t buf[9216];
	unsigned long i;
	int err;

	if (parse_build_opts(argc, argv, &o))
		return EXIT_USAGE;
	if (!o.out) {
		fprintf(stderr, "lhpkt build: -w FILE is required\n");
		return EXIT_USAGE;
	}
	err = lh_pcap_create(&pc, o.out, LH_PCAP_LINKTYPE_ETHERNET);
	if (err) {
		fprintf(stderr, "lhpkt: cannot write %s: %s\n", o.out, strerror(-err));
		return EXIT_IO;
	}
	for (i = 0; i < o.count; i++) {
		ssize_t n = build_one(&o, i, buf, sizeof(buf));

		if (n < 0) {
			fprintf(stderr, "lhpkt: cannot build packet: %s\n", strerror((int)-n));
			lh_pcap_close(&pc);
			return EXIT_USAGE;
		}
		if (lh_pcap_write(&pc, buf, (size_t)n, (uint64_t)i * 1000)) {
			fprintf(stderr, "lhpkt: write %s failed\n", o.out);
			lh_pcap_close(&pc);
			return EXIT_IO;
		}
	}
	lh_pcap_close(&pc);
	return 0;
}

static int cmd_send(int argc, char **argv)
{
	struct lh_pktio_opts po = { 0 };
	struct lh_pktio *io;
	struct build_opts o;
	uint8_t buf[9216];
	unsigned long i, burst;
	uint64_t t0;
	int err;

	if (parse_build_opts(argc, argv, &o))
		return EXIT_USAGE;
	if (!o.dev) {
		fprintf(stderr, "lhpkt send: --dev IFACE is required\n");
		return EXIT_USAGE;
	}
	po.ifname = o.dev;
	err = lh_pktio_open(&po, &io);
	if (err)
		return EXIT_IO;
	if (!memcmp(o.spec.src_mac, "\x02\x00\x00\x00\x00\x01", 6))
		memcpy(o.spec.src_mac, lh_pktio_mac(io), 6);
	if (!o.have_dmac)
		memset(o.spec.dst_mac, 0xff, 6);
	burst = o.burst ? o.burst : 1;
	t0 = lh_now_ns();
	for (i = 0; i < o.count; i++) {
		struct lh_frame f;
		ssize_t n = build_one(&o, i, buf, sizeof(buf));
		int tries;

		if (n < 0) {
			fprintf(stderr, "lhpkt: cannot build packet: %s\n", strerror((int)-n));
			lh_pktio_close(io);
			return EXIT_USAGE;
		}
		f = (struct lh_frame){ .data = buf, .len = (uint32_t)n, .cap = sizeof(buf) };
		for (tries = 0; (err = lh_pktio_send(io, &f, 1)) == 0 && tries < 1000; tries++)
			usleep(100); /* socket queue full: wait for it to drain */
		if (err != 1) {
			fprintf(stderr, "lhpkt: send on %s failed: %s\n", o.dev,
				err < 0 ? strerror(-err) : "queue stayed full");
			lh_pktio_close(io);
			return EXIT_IO;
		}
		/* paced from the start (a sleep per packet drifted by its own overhead) */
		if (o.gap_us && (i + 1) % burst == 0) {
			uint64_t due = t0 + (i + 1) * (uint64_t)o.gap_us * 1000;
			struct timespec ts = { .tv_sec = (time_t)(due / 1000000000ull),
					       .tv_nsec = (long)(due % 1000000000ull) };

			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
		}
	}
	lh_pktio_close(io);
	return 0;
}

struct check_totals {
	unsigned long packets, roce, icrc_ok, icrc_bad, not_roce[LH_STAT_MAX];
};

static int check_file(const char *path, struct lh_json *j, struct check_totals *t)
{
	static uint8_t buf[262144];
	struct lh_pcap pc;
	size_t len, orig;
	unsigned long idx = 0;
	int r, err = lh_pcap_open(&pc, path);

	if (err) {
		fprintf(stderr, "lhpkt: %s: %s\n", path,
			err == -EPROTO ? "not a classic pcap file (pcapng? use tcpdump -w)"
				       : strerror(-err));
		return EXIT_IO;
	}
	if (pc.linktype != LH_PCAP_LINKTYPE_ETHERNET && pc.linktype != LH_PCAP_LINKTYPE_RAW) {
		fprintf(stderr, "lhpkt: %s: link type %u not supported (Ethernet or raw IP)\n", path,
			pc.linktype);
		lh_pcap_close(&pc);
		return EXIT_IO;
	}
	while ((r = lh_pcap_next(&pc, buf, sizeof(buf), &len, &orig, NULL)) == 1) {
		struct lh_pkt p;
		uint32_t want = 0;

		idx++;
		t->packets++;
		if (lh_pkt_parse(buf, len, pc.linktype == LH_PCAP_LINKTYPE_ETHERNET, &p) !=
		    LH_STAT_ROCE) {
			/* a snapped RoCE packet is a capture problem, not a bad ICRC */
			t->not_roce[p.result]++;
			continue;
		}
		t->roce++;
		lh_pkt_icrc_calc(buf, &p, &want);
		if (want == p.icrc) {
			t->icrc_ok++;
			continue;
		}
		t->icrc_bad++;
		if (j) {
			lh_json_start_object(j);
			lh_json_string_field(j, "file", path);
			lh_json_uint_field(j, "index", idx);
			lh_json_string_field(j, "opcode", lh_opcode_name(p.roce.opcode));
			lh_json_uint_field(j, "qpn", p.roce.dqpn);
			lh_json_uint_field(j, "psn", p.roce.psn);
			lh_json_uint_field(j, "icrc_wire", p.icrc);
			lh_json_uint_field(j, "icrc_computed", want);
			lh_json_end_object(j);
		} else {
			printf("%s #%lu: %s QP 0x%06x PSN %u: ICRC 0x%08x on the wire, 0x%08x computed\n",
			       path, idx, lh_opcode_name(p.roce.opcode), p.roce.dqpn, p.roce.psn,
			       p.icrc, want);
		}
	}
	lh_pcap_close(&pc);
	if (r < 0) {
		fprintf(stderr, "lhpkt: %s: truncated or corrupt capture\n", path);
		return EXIT_IO;
	}
	return 0;
}

static int cmd_check(int argc, char **argv)
{
	struct check_totals t = { 0 };
	struct lh_json *j = NULL;
	bool json = false;
	int i, c, rc = 0, s;

	optind = 1;
	while ((c = getopt(argc, argv, "jh")) != -1) {
		if (c == 'j') {
			json = true;
		} else {
			usage(c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : EXIT_USAGE;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "lhpkt check: no capture file given\n");
		return EXIT_USAGE;
	}
	if (json) {
		j = lh_json_new(stdout, false);
		lh_json_start_object(j);
		lh_json_name(j, "bad");
		lh_json_start_array(j);
	}
	for (i = optind; i < argc && !rc; i++)
		rc = check_file(argv[i], j, &t);
	if (j) {
		lh_json_end_array(j);
		lh_json_uint_field(j, "packets", t.packets);
		lh_json_uint_field(j, "roce", t.roce);
		lh_json_uint_field(j, "icrc_ok", t.icrc_ok);
		lh_json_uint_field(j, "icrc_bad", t.icrc_bad);
		lh_json_name(j, "not_roce");
		lh_json_start_object(j);
		for (s = 0; s < LH_STAT_MAX; s++)
			if (t.not_roce[s])
				lh_json_uint_field(j, lh_stat_name((enum lh_stat)s), t.not_roce[s]);
		lh_json_end_object(j);
		lh_json_end_object(j);
		lh_json_free(j);
	} else {
		printf("%lu packets, %lu RoCEv2: %lu ICRC valid, %lu ICRC wrong\n", t.packets, t.roce,
		       t.icrc_ok, t.icrc_bad);
	}
	if (rc)
		return rc;
	return t.icrc_bad ? EXIT_BAD_ICRC : 0;
}

int main(int argc, char **argv)
{
	lh_log_init("lhpkt", LH_LOG_WARN);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "build"))
		return cmd_build(argc - 1, argv + 1);
	if (!strcmp(argv[1], "send"))
		return cmd_send(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return cmd_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "lhpkt: unknown command '%s' (build, send, check)\n", argv[1]);
	return EXIT_USAGE;
}
