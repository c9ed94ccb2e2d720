// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The options of `lhpkt build` and `lhpkt send` as one table (opts.h): the
 * packet (addresses, VLAN tags, IP, UDP and RoCEv2 fields, a Depot report
 * instead), the series (count, PSN and QPN steps) and where it goes (-w for
 * build, --dev and pacing for send; both commands take every option).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "lhpkt.h"
#include "opts.h"
#include "rocev2.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* What an error message calls the value of each option (its .group) */
enum value_name {
	V_NONE,
	V_TOS,
	V_TTL,
	V_FLOW,
	V_IPID,
	V_SPORT,
	V_DPORT,
	V_QPN,
	V_PSN,
	V_PKEY,
	V_SYNDROME,
	V_MSN,
	V_VA,
	V_RKEY,
	V_DMALEN,
	V_IMM,
	V_QKEY,
	V_SQPN,
	V_PAYLOAD,
	V_COUNT,
	V_QPN_STEP,
	V_GAP,
	V_BURST,
	V_RESV,
	V_REPORT_SEQ,
};

static const char *const value_names[] = {
	[V_TOS] = "TOS",
	[V_TTL] = "TTL",
	[V_FLOW] = "flow label",
	[V_IPID] = "IP ID",
	[V_SPORT] = "UDP source port",
	[V_DPORT] = "UDP destination port",
	[V_QPN] = "QPN",
	[V_PSN] = "PSN",
	[V_PKEY] = "P_Key",
	[V_SYNDROME] = "AETH syndrome",
	[V_MSN] = "MSN",
	[V_VA] = "virtual address",
	[V_RKEY] = "R_Key",
	[V_DMALEN] = "DMA length",
	[V_IMM] = "immediate data",
	[V_QKEY] = "Q_Key",
	[V_SQPN] = "source QPN",
	[V_PAYLOAD] = "payload length",
	[V_COUNT] = "count",
	[V_QPN_STEP] = "QPN step",
	[V_GAP] = "gap",
	[V_BURST] = "burst",
	[V_RESV] = "BTH reserved bits",
	[V_REPORT_SEQ] = "report seq",
};

/* "lhpkt: bad QPN '0x1000000' (0..16777215)" */
static void say_bad(const char *what, const char *arg, unsigned long min, unsigned long max)
{
	fprintf(stderr, "lhpkt: bad %s '%s' (%lu..%lu)\n", what, arg, min, max);
}

/* The table's message for a number out of its bounds (lh_opts.invalid) */
static void say_invalid(const struct lh_opt *o, const char *arg)
{
	unsigned long max = (unsigned long)o->max;

	if (o->max <= 0) /* no bound but the field's width */
		max = o->size >= sizeof(max) ? ULONG_MAX : (1ul << (8 * o->size)) - 1;
	say_bad(value_names[o->group], arg, (unsigned long)o->min, max);
}

/* A number of 0..max, said bad as what when it is not one */
static int parse_number(const char *s, unsigned long max, unsigned long *out, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || !*s || *end || v > max || s[0] == '-') {
		say_bad(what, s, 0, max);
		return -EBADMSG;
	}
	*out = v;
	return 0;
}

/* -4, -6: the family, which the addresses given must agree with */
static int opt_family(void *cfg, const char *arg, const struct lh_opt *o,
		      const struct lh_opt_ctx *ctx)
{
	struct lh_pkt_spec *s = &((struct packet_opts *)cfg)->spec;
	int family = o->short_opt == '4' ? AF_INET : AF_INET6;

	(void)arg;
	(void)ctx;
	if (s->family && s->family != family) {
		fprintf(stderr, "lhpkt: -4/-6 disagree with the addresses\n");
		return -EBADMSG;
	}
	s->family = family;
	return 0;
}

/* --src, --dst: an address into the field; every one given of the same family */
static int opt_addr(void *cfg, const char *arg, const struct lh_opt *o,
		    const struct lh_opt_ctx *ctx)
{
	struct lh_pkt_spec *s = &((struct packet_opts *)cfg)->spec;
	union lh_ip_addr *a = (union lh_ip_addr *)((char *)cfg + o->off);
	int f;

	(void)ctx;
	if (lh_parse_ip(arg, a, &f)) {
		fprintf(stderr, "lhpkt: bad IP address '%s'\n", arg);
		return -EBADMSG;
	}
	if (s->family && s->family != f) {
		fprintf(stderr, "lhpkt: '%s': IPv4 and IPv6 mixed\n", arg);
		return -EBADMSG;
	}
	s->family = f;
	return 0;
}

/* --smac, --dmac: aa:bb:cc:dd:ee:ff into the field */
static int opt_mac(void *cfg, const char *arg, const struct lh_opt *o, const struct lh_opt_ctx *ctx)
{
	uint8_t *mac = (uint8_t *)cfg + o->off;

	(void)ctx;
	if (!lh_parse_mac(arg, mac))
		return 0;
	fprintf(stderr, "lhpkt: bad MAC address '%s'\n", arg);
	return -EBADMSG;
}

/* --vlan VID[:PCP]: one more 802.1Q tag */
static int opt_vlan(void *cfg, const char *arg, const struct lh_opt *o,
		    const struct lh_opt_ctx *ctx)
{
	struct lh_pkt_spec *s = &((struct packet_opts *)cfg)->spec;
	unsigned long vid = 0, pcp = 0;
	const char *colon = strchr(arg, ':');
	char *vid_str;
	int err = 0;

	(void)o;
	(void)ctx;
	if (s->nr_vlans == LH_MAX_VLANS) {
		fprintf(stderr, "lhpkt: at most %d VLAN tags\n", LH_MAX_VLANS);
		return -EBADMSG;
	}
	vid_str = strndup(arg, colon ? (size_t)(colon - arg) : strlen(arg));
	if (!vid_str)
		return -ENOMEM;
	if (colon)
		err = parse_number(colon + 1, 7, &pcp, "VLAN PCP");
	err = err ?: parse_number(vid_str, 4095, &vid, "VLAN ID");
	free(vid_str);
	if (err)
		return err;
	s->vlan[s->nr_vlans].tpid = LH_ETH_P_8021Q;
	s->vlan[s->nr_vlans++].tci = (uint16_t)(pcp << 13 | vid);
	return 0;
}

/* --udp-csum, --no-udp-csum: the last one given counts */
static int opt_udp_csum(void *cfg, const char *arg, const struct lh_opt *o,
			const struct lh_opt_ctx *ctx)
{
	(void)arg;
	(void)ctx;
	((struct packet_opts *)cfg)->udp_csum = !strcmp(o->name, "udp-csum");
	return 0;
}

/* --opcode: a name of lh_opcode_name() (any case) or a number */
static int opt_opcode(void *cfg, const char *arg, const struct lh_opt *o,
		      const struct lh_opt_ctx *ctx)
{
	uint8_t *op = &((struct packet_opts *)cfg)->spec.roce.opcode;
	unsigned long v;
	int i;

	(void)o;
	(void)ctx;
	for (i = 0; i < 256; i++) {
		const char *n = lh_opcode_name((uint8_t)i);

		if (n && !strcasecmp(n, arg)) {
			*op = (uint8_t)i;
			return 0;
		}
	}
	if (parse_number(arg, 255, &v, "opcode"))
		return -EBADMSG;
	*op = (uint8_t)v;
	return 0;
}

/* --report EPSN:NBITS */
static int opt_report(void *cfg, const char *arg, const struct lh_opt *o,
		      const struct lh_opt_ctx *ctx)
{
	struct lh_report_info *ri = &((struct packet_opts *)cfg)->ri;
	unsigned long epsn, nbits;
	char *end;

	(void)o;
	(void)ctx;
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
	return -EBADMSG;
}

/* --report-key-file: longhauld's key file; the report is signed with it */
static int opt_report_key_file(void *cfg, const char *arg, const struct lh_opt *o,
			       const struct lh_opt_ctx *ctx)
{
	struct packet_opts *p = cfg;
	char why[300];

	(void)o;
	(void)ctx;
	if (lh_report_key_load(arg, p->report_key, why, sizeof(why))) {
		fprintf(stderr, "lhpkt: --report-key-file: %s\n", why);
		return -EBADMSG;
	}
	p->ri.key = p->report_key;
	return 0;
}

/* -h, --help: the usage text on stdout, exit 0 (a bad option prints getopt's line alone) */
static int opt_help(void *cfg, const char *arg, const struct lh_opt *o,
		    const struct lh_opt_ctx *ctx)
{
	(void)cfg;
	(void)arg;
	(void)o;
	(void)ctx;
	lhpkt_usage(stdout);
	exit(0);
}

#define PF(field) LH_FIELD(struct packet_opts, field)
#define GIVEN(field) LH_GIVEN(struct packet_opts, field)
/* A number of at most m, called `name` in errors */
#define NUM(field, m, name) .type = LH_OPT_UINT, PF(field), .max = (m), .group = (name)
#define FUNC(fn) .type = LH_OPT_FUNC, .parse = (fn)

static const struct lh_opt packet_opt_table[] = {
	{ .type = LH_OPT_HEADING,
	  .help = "Packet options (defaults: IPv4 10.0.0.1 -> 10.0.0.2, RC_SEND_ONLY, "
		  "QP 0, PSN 0):" },
	{ FUNC(opt_family), .short_opt = '4', .help = "IPv4 (also implied by --src/--dst)" },
	{ FUNC(opt_family), .short_opt = '6', .help = "IPv6 (also implied by --src/--dst)" },
	{ FUNC(opt_addr), .name = "src", PF(spec.src), GIVEN(have_src), .metavar = "IP",
	  .help = "source address" },
	{ FUNC(opt_addr), .name = "dst", PF(spec.dst), GIVEN(have_dst), .metavar = "IP",
	  .help = "destination address" },
	{ FUNC(opt_mac), .name = "smac", PF(spec.src_mac), .metavar = "MAC",
	  .help = "source Ethernet address (send: the interface's by default)" },
	{ FUNC(opt_mac), .name = "dmac", PF(spec.dst_mac), GIVEN(have_dmac), .metavar = "MAC",
	  .help = "destination Ethernet address" },
	{ FUNC(opt_vlan), .name = "vlan", .metavar = "VID[:PCP]",
	  .help = "802.1Q tag; twice for QinQ (outer one is 802.1ad)" },
	{ NUM(spec.tos, 255, V_TOS), .name = "tos", .metavar = "N",
	  .help = "IPv4 TOS, IPv6 traffic class" },
	{ NUM(spec.ttl, 255, V_TTL), .name = "ttl", .metavar = "N", .help = "TTL, hop limit" },
	{ NUM(spec.flow_label, 0xfffff, V_FLOW), .name = "flow-label", .metavar = "N",
	  .help = "IPv6 flow label" },
	{ NUM(spec.ip_id, 0xffff, V_IPID), .name = "ip-id", .metavar = "N", .help = "IPv4 ID" },
	{ NUM(spec.sport, 0xffff, V_SPORT), .name = "sport", .metavar = "N",
	  .help = "UDP source port" },
	{ NUM(spec.dport, 0xffff, V_DPORT), .name = "dport", .metavar = "N",
	  .help = "UDP destination port (4791)" },
	{ FUNC(opt_udp_csum), .name = "udp-csum", GIVEN(udp_csum_set),
	  .help = "UDP checksum (default: on for IPv6, off for IPv4, as rxe)" },
	{ FUNC(opt_udp_csum), .name = "no-udp-csum", GIVEN(udp_csum_set),
	  .help = "no UDP checksum" },
	{ FUNC(opt_opcode), .name = "opcode", .metavar = "NAME|N",
	  .help = "e.g. RC_RDMA_WRITE_FIRST, RC_ACKNOWLEDGE, CNP, 0x0a" },
	{ NUM(spec.roce.dqpn, ROCE_QPN_MASK, V_QPN), .name = "qpn", .metavar = "N",
	  .help = "BTH destination QP" },
	{ NUM(spec.roce.psn, ROCE_PSN_MASK, V_PSN), .name = "psn", .metavar = "N",
	  .help = "BTH PSN" },
	{ NUM(spec.roce.pkey, 0xffff, V_PKEY), .name = "pkey", .metavar = "N",
	  .help = "BTH P_Key" },
	{ .type = LH_OPT_FLAG, .name = "ackreq", PF(spec.roce.ackreq), .help = "BTH AckReq bit" },
	{ .type = LH_OPT_FLAG, .name = "se", PF(spec.roce.se), .help = "BTH SE bit" },
	{ .type = LH_OPT_FLAG, .name = "mig", PF(spec.roce.mig), .help = "BTH MigReq bit" },
	{ .type = LH_OPT_FLAG, .name = "fecn", PF(fecn), .help = "BTH FECN bit" },
	{ .type = LH_OPT_FLAG, .name = "becn", PF(becn), .help = "BTH BECN bit" },
	{ NUM(resv, 0x3f, V_RESV), .name = "resv", .metavar = "N",
	  .help = "BTH byte 4's six reserved bits (a Depot-NACK: 0x20 | range-1)" },
	{ NUM(spec.roce.aeth.syndrome, 255, V_SYNDROME), .name = "syndrome", .metavar = "N",
	  .help = "AETH syndrome (ACK 0x1f, NAK PSN error 0x60)" },
	{ NUM(spec.roce.aeth.msn, ROCE_MSN_MASK, V_MSN), .name = "msn", .metavar = "N",
	  .help = "AETH MSN" },
	{ NUM(spec.roce.reth.va, 0, V_VA), .name = "va", .metavar = "N",
	  .help = "virtual address (RETH, AtomicETH)" },
	{ NUM(spec.roce.reth.rkey, 0xffffffff, V_RKEY), .name = "rkey", .metavar = "N",
	  .help = "R_Key (RETH, AtomicETH, IETH)" },
	{ NUM(spec.roce.reth.dmalen, 0xffffffff, V_DMALEN), .name = "dmalen", .metavar = "N",
	  .help = "RETH DMA length" },
	{ NUM(spec.roce.imm, 0xffffffff, V_IMM), .name = "imm", .metavar = "N",
	  .help = "immediate data" },
	{ NUM(spec.roce.deth.qkey, 0xffffffff, V_QKEY), .name = "qkey", .metavar = "N",
	  .help = "DETH Q_Key" },
	{ NUM(spec.roce.deth.sqpn, ROCE_QPN_MASK, V_SQPN), .name = "sqpn", .metavar = "N",
	  .help = "DETH source QP" },
	{ NUM(payload_len, 8192, V_PAYLOAD), .name = "payload", .metavar = "LEN",
	  .help = "payload bytes (a counting pattern)" },
	{ NUM(count, 100000000, V_COUNT), .name = "count", .metavar = "N",
	  .help = "packets to make (default 1); PSN +1 each unless --same-psn" },
	{ .type = LH_OPT_FLAG,
	  .name = "same-psn",
	  PF(same_psn),
	  .help = "the same PSN in every packet" },
	{ NUM(qpn_step, ROCE_QPN_MASK, V_QPN_STEP), .name = "qpn-step", .metavar = "N",
	  .help = "destination QPN + N each packet (default 0: a flood of\n"
		  "new connections with N 1)" },
	{ .type = LH_OPT_FLAG,
	  .name = "bad-icrc",
	  PF(bad_icrc),
	  .help = "write a wrong ICRC (receivers must drop it)" },
	{ FUNC(opt_report), .name = "report", GIVEN(report), .metavar = "EPSN:NBITS",
	  .help = "a Depot report (UDP " STR(
		  LH_REPORT_PORT) ") for QP --qpn, requester\n"
				  "--sqpn, ePSN .. ePSN+NBITS-1 all missing" },
	{ NUM(ri.seq, 0xffffffff, V_REPORT_SEQ), .name = "report-seq", .metavar = "N",
	  .help = "the report's sequence number (default 0)" },
	{ FUNC(opt_report_key_file), .name = "report-key-file", .metavar = "FILE",
	  .help = "signs the report (longhauld's option)" },
	{ .type = LH_OPT_STR,
	  .short_opt = 'w',
	  PF(out),
	  .metavar = "FILE",
	  .help = "(build) capture file to write" },
	{ .type = LH_OPT_STR,
	  .name = "dev",
	  PF(dev),
	  .metavar = "IFACE",
	  .help = "(send) interface to send on" },
	{ .type = LH_OPT_TIME,
	  .name = "gap-us",
	  PF(gap_us),
	  .unit = "us",
	  .scale = 1000,
	  .max = 10000000,
	  .group = V_GAP,
	  .metavar = "N",
	  .help = "(send) N us a packet (or with a unit: 2ms), kept on\n"
		  "average from the start" },
	{ NUM(burst, 65536, V_BURST), .min = 1, .name = "burst", .metavar = "N",
	  .help = "(send) N packets back to back, then N x gap (default 1):\n"
		  "the same rate for a fraction of the wakeups" },
	{ FUNC(opt_help), .name = "help", .short_opt = 'h', .help = "this help" },
	{ .type = LH_OPT_END },
};

static const struct lh_opts packet_opts = {
	.opts = packet_opt_table,
	.invalid = say_invalid,
};

void packet_opts_print(FILE *f)
{
	lh_opts_print(f, packet_opt_table);
}

/* Before the options: one packet of lh_pkt_spec_init's, the family left to them */
static void packet_opts_defaults(struct packet_opts *p)
{
	memset(p, 0, sizeof(*p));
	lh_pkt_spec_init(&p->spec, AF_INET);
	p->spec.family = 0; /* decided by -4/-6 or the addresses */
	p->count = 1;
}

/* After them: the family's defaults, the fields that go to several headers, the checks */
static int packet_opts_finish(struct packet_opts *p)
{
	struct lh_pkt_spec *s = &p->spec, d;

	if (!s->family)
		s->family = AF_INET;
	lh_pkt_spec_init(&d, s->family);
	if (!p->have_src)
		s->src = d.src;
	if (!p->have_dst)
		s->dst = d.dst;
	s->udp_csum = p->udp_csum_set ? p->udp_csum : s->family == AF_INET6;
	s->roce.byte4 =
		(uint8_t)((p->fecn ? BTH_B4_FECN : 0) | (p->becn ? BTH_B4_BECN : 0) | p->resv);
	s->roce.atomic.va = s->roce.reth.va;
	s->roce.atomic.rkey = s->roce.reth.rkey;
	s->roce.ieth_rkey = s->roce.reth.rkey;
	if (!roce_opcode_info(s->roce.opcode)) {
		fprintf(stderr, "lhpkt: opcode 0x%02x is not one longhaul can build\n",
			s->roce.opcode);
		return -EINVAL;
	}
	if (p->payload_len && !(roce_opcode_info(s->roce.opcode) & ROCE_OPF_PAYLOAD)) {
		fprintf(stderr, "lhpkt: %s carries no payload\n", lh_opcode_name(s->roce.opcode));
		return -EINVAL;
	}
	return 0;
}

int packet_opts_parse(int argc, char **argv, struct packet_opts *p)
{
	int first;

	packet_opts_defaults(p);
	first = lh_opts_parse(&packet_opts, argc, argv, p);
	if (first < 0)
		return -EINVAL;
	if (first < argc) {
		fprintf(stderr, "lhpkt: unexpected argument '%s'\n", argv[first]);
		return -EINVAL;
	}
	return packet_opts_finish(p);
}
