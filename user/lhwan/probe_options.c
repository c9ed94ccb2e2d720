// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* lhwan probe's options (user/lib/opts.h table): the usage text and argv into struct probe_opts */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "lhwan.h"
#include "log.h"
#include "opts.h"
#include "probe_int.h"

/* --dst: the receiver, whose address family the probe uses */
static int opt_dst(void *cfg, const char *arg, const struct lh_opt *o,
		   const struct lh_opt_ctx *ctx)
{
	struct probe_opts *p = cfg;

	(void)o;
	(void)ctx;
	return lh_parse_ip(arg, &p->dst, &p->family);
}

/* --src: the source address (its family is --dst's) */
static int opt_src(void *cfg, const char *arg, const struct lh_opt *o,
		   const struct lh_opt_ctx *ctx)
{
	struct probe_opts *p = cfg;
	int family;

	(void)o;
	(void)ctx;
	if (lh_parse_ip(arg, &p->src, &family))
		return -EINVAL;
	p->have_src = true;
	return 0;
}

/* --dst-mac: aa:bb:cc:dd:ee:ff */
static int opt_dst_mac(void *cfg, const char *arg, const struct lh_opt *o,
		       const struct lh_opt_ctx *ctx)
{
	struct probe_opts *p = cfg;

	(void)o;
	(void)ctx;
	if (lh_parse_mac(arg, p->dst_mac))
		return -EINVAL;
	p->have_dst_mac = true;
	return 0;
}

#define PF(field) LH_FIELD(struct probe_opts, field)

/* The options, in the order of the usage text */
static const struct lh_opt probe_table[] = {
	{ .type = LH_OPT_FUNC, .name = "dst", .parse = opt_dst, .metavar = "IP",
	  .help = "receiver address (send)" },
	{ .type = LH_OPT_FUNC, .name = "src", .parse = opt_src, .metavar = "IP",
	  .help = "source address (raw send; UDP: bind to it)" },
	{ .type = LH_OPT_UINT, .name = "port", PF(port), .metavar = "N",
	  .help = "UDP port (default 4791)" },
	{ .type = LH_OPT_UINT, .name = "size", PF(size), .metavar = "BYTES", .max = PROBE_BUF,
	  .help = "frame size on the wire incl. Ethernet header (default 1024,\n"
		  "at most 9216: a jumbo frame)" },
	{ .type = LH_OPT_UINT, .name = "count", PF(count), .metavar = "N",
	  .help = "packets to send / expect (default 10000)" },
	{ .type = LH_OPT_DOUBLE, .name = "pps", PF(pps), .metavar = "N",
	  .help = "pace in packets/s; 0 = flat out" },
	{ .type = LH_OPT_FUNC, .name = "rate", .parse = lhwan_opt_rate, PF(rate_bps),
	  .metavar = "RATE",
	  .help = "pace in bits/s of frames (tc units), instead of --pps" },
	{ .type = LH_OPT_UINT, .name = "burst", PF(burst), .metavar = "N",
	  .help = "packets per paced burst (default 16)" },
	{ .type = LH_OPT_UINT, .name = "qpn", PF(qpn), .metavar = "N",
	  .help = "BTH destination QP" },
	{ .type = LH_OPT_UINT, .name = "psn-start", PF(psn_start), .metavar = "N",
	  .help = "first PSN" },
	{ .type = LH_OPT_STR, .name = "psns", PF(psn_list), .metavar = "LIST",
	  .help = "explicit PSN sequence (e.g. 0-999,100-109: a retransmission)" },
	{ .type = LH_OPT_UINT, .name = "stream", PF(stream), .metavar = "N",
	  .help = "stream id; the receiver ignores other streams" },
	{ .type = LH_OPT_FLAG, .name = "raw", PF(raw),
	  .help = "whole frames via AF_PACKET on --dev (valid ICRC)" },
	{ .type = LH_OPT_STR, .name = "dev", PF(dev), .metavar = "IF",
	  .help = "the interface of --raw" },
	{ .type = LH_OPT_FUNC, .name = "dst-mac", .parse = opt_dst_mac, .metavar = "MAC",
	  .help = "next hop's MAC (raw send)" },
	{ .type = LH_OPT_FLAG, .name = "no-icrc", PF(no_icrc),
	  .help = "raw send: do not recompute the ICRC per packet (benches)" },
	{ .type = LH_OPT_TIME, .name = "timeout", PF(timeout_ns), .metavar = "TIME",
	  .help = "receiver: give up after TIME (default 60s)" },
	{ .type = LH_OPT_TIME, .name = "idle", PF(idle_ns), .metavar = "TIME",
	  .help = "receiver: stop TIME after the last packet (default 1s)" },
	{ .type = LH_OPT_STR, .name = "ready-file", PF(ready_file), .metavar = "PATH",
	  .help = "receiver: create PATH once listening" },
	{ .type = LH_OPT_FLAG, .name = "list-lost", PF(list_lost),
	  .help = "receiver: list every lost sequence number and PSN" },
	{ .type = LH_OPT_FLAG, .name = "pretty", .short_opt = 'p', PF(pretty),
	  .help = "pretty JSON" },
	{ .type = LH_OPT_HELP, .name = "help", .short_opt = 'h', .help = "this text" },
	{ .type = LH_OPT_END },
};

/* To stderr, --help's too: the probe's stdout carries its JSON result only */
void probe_usage(void)
{
	fprintf(stderr, "usage: lhwan probe send --dst IP [OPTIONS]\n"
			"       lhwan probe recv [OPTIONS]\n");
	lh_opts_print(stderr, probe_table);
}

static void probe_usage_to(FILE *f)
{
	(void)f;
	probe_usage();
}

static const struct lh_opts probe_parser = { .opts = probe_table, .usage = probe_usage_to };

int probe_parse_args(struct probe_opts *o, int argc, char **argv)
{
	o->port = ROCEV2_UDP_PORT;
	o->size = 1024;
	o->count = 10000;
	o->burst = 16;
	o->timeout_ns = 60000000000ULL;
	o->idle_ns = 1000000000ULL;
	o->family = AF_INET;
	if (lh_opts_parse(&probe_parser, argc, argv, o) < 0)
		return -EINVAL;
	if (!o->burst || o->burst > PROBE_BATCH)
		o->burst = PROBE_BATCH;
	o->qpn &= ROCE_QPN_MASK;
	o->psn_start &= ROCE_PSN_MASK;
	if (o->rate_bps)
		o->pps = (double)o->rate_bps / (8.0 * o->size);
	return 0;
}
