// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhperf's command line: one option table (user/lib/opts.h) gives getopt,
 * the option lines of the usage text and the client-only group; then what
 * no single option can say (the role's arguments, options that exclude each
 * other).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lhperf.h"
#include "opts.h"
#include "units.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* The table's groups: options that describe the run are the client's */
enum {
	GROUP_COMMON,
	GROUP_CLIENT,
};

static void defaults(struct lhp_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->port = LHP_DEFAULT_PORT;
	o->connect_timeout_ns = 10ull * 1000000000;
	o->op = LHP_OP_WRITE;
	o->recovery = LHP_GBN;
	o->qps = 1;
	o->size = 65536;
	o->mtu = 1024;
	o->iters = 1000;
	o->window = 128;
	o->timeout = 14;
	o->retry = LHP_RETRY_INFINITE;
	o->tx_depth = 128;
	o->ackreq_every = 64;
	o->batch = 64;
}

/* -h: the usage text on stdout and exit (LH_OPT_HELP would print it after a bad option too) */
static int opt_help(void *cfg, const char *arg, const struct lh_opt *o,
		    const struct lh_opt_ctx *ctx)
{
	(void)cfg;
	(void)arg;
	(void)o;
	(void)ctx;
	lhp_usage(stdout);
	exit(LHP_EXIT_OK);
}

/* --rate: Gb/s (perftest's unit) when bare, else a rate with its unit (units.h) */
static int opt_rate(void *cfg, const char *arg, const struct lh_opt *o,
		    const struct lh_opt_ctx *ctx)
{
	struct lhp_opts *c = cfg;
	char gbit[64];
	uint64_t bps;

	(void)ctx;
	if (lh_parse_rate_bps(arg, false, &bps)) {
		if ((size_t)snprintf(gbit, sizeof(gbit), "%sgbit", arg) >= sizeof(gbit) ||
		    lh_parse_rate_bps(gbit, false, &bps))
			return -EINVAL;
	}
	if ((double)bps < o->min || (double)bps > o->max)
		return -EINVAL;
	c->rate_bps = bps;
	return 0;
}

/* -s: a client option given is named after the parse, as the first one seen */
static int note_client_opt(void *cfg, const struct lh_opt *o)
{
	struct lhp_opts *c = cfg;

	if (o->group == GROUP_CLIENT && !c->client_opt)
		c->client_opt = o->name;
	return 0;
}

#define OF(field) LH_FIELD(struct lhp_opts, field)
#define SEC .type = LH_OPT_TIME, .metavar = "SEC", .unit = "s", .scale = 1
#define CLIENT .group = GROUP_CLIENT

/* The options, in the order of the usage text */
static const struct lh_opt opts[] = {
	{ .type = LH_OPT_HEADING, .help = "Common options:" },
	{ .type = LH_OPT_UINT, .name = "port", .short_opt = 'p', OF(port), .metavar = "N",
	  .min = 1, .max = 65535,
	  .help = "TCP port of the side channel (default " STR(LHP_DEFAULT_PORT) ")" },
	{ .type = LH_OPT_STR, .name = "dev", .short_opt = 'd', OF(dev), .metavar = "IFACE",
	  .help = "interface for the RoCEv2 frames (default: the one the\n"
		  "route to the peer uses); the next hop's MAC comes from\n"
		  "the neighbour table" },
	{ .type = LH_OPT_FLAG, .name = "json", .short_opt = 'j', OF(json),
	  .help = "results as one JSON object on stdout" },
	{ .type = LH_OPT_FLAG, .name = "pretty", OF(pretty), .help = "indent the JSON" },
	{ .type = LH_OPT_UINT, .name = "batch", .short_opt = 'b', OF(batch), .metavar = "N",
	  .min = 1, .max = LHP_MAX_BATCH,
	  .help = "frames per sendmmsg/recvmmsg (default 64, max " STR(LHP_MAX_BATCH) ")" },
	{ .type = LH_OPT_FLAG, .name = "qdisc-bypass", OF(qdisc_bypass),
	  .help = "send around the egress qdisc and netfilter egress hooks\n"
		  "(faster; drops injected on the sender's egress then miss)" },
	{ .type = LH_OPT_COUNT, .name = "verbose", .short_opt = 'v', OF(verbose),
	  .help = "debug messages on stderr" },
	{ .type = LH_OPT_FUNC, .name = "help", .short_opt = 'h', .parse = opt_help,
	  .help = "this text" },
	{ .type = LH_OPT_HEADING, .help = "\nServer options:" },
	{ .type = LH_OPT_FLAG, .name = "server", .short_opt = 's', OF(server),
	  .help = "be the responder; serves one run, then exits" },
	{ .type = LH_OPT_STR, .name = "bind", OF(bind), .metavar = "ADDR",
	  .help = "listen address (default: every IPv4 and IPv6 address)" },
	{ SEC, .name = "listen-timeout", OF(listen_timeout_ns), .max = 1e15,
	  .help = "give up when no client comes (default: wait forever)" },
	{ .type = LH_OPT_HEADING, .help = "\nClient options (the run):" },
	{ .type = LH_OPT_CHOICE, .name = "op", .short_opt = 'o', OF(op), .choices = lhp_op_choices,
	  .metavar = "write|send", CLIENT, .help = "RDMA WRITE or SEND (default write)" },
	{ .type = LH_OPT_UINT, .name = "qps", .short_opt = 'q', OF(qps), .metavar = "N", .min = 1,
	  .max = LHP_MAX_QPS, CLIENT,
	  .help = "RC queue pairs (default 1, max " STR(LHP_MAX_QPS) ")" },
	{ .type = LH_OPT_SIZE, .name = "size", .short_opt = 'S', OF(size), .metavar = "BYTES",
	  .min = 1, .max = 1ull << 31, CLIENT,
	  .help = "message size, K/M/G suffixes (default 65536, max 2G)" },
	{ .type = LH_OPT_CHOICE, .name = "mtu", .short_opt = 'm', OF(mtu),
	  .choices = lhp_mtu_choices, .metavar = "N", CLIENT,
	  .help = "path MTU: 256, 512, 1024, 2048 or 4096 (default 1024)" },
	{ .type = LH_OPT_UINT, .name = "iters", .short_opt = 'n', OF(iters), .metavar = "N",
	  .min = 1, .max = 1ull << 40, LH_GIVEN(struct lhp_opts, iters_given), CLIENT,
	  .help = "messages per QP (default 1000)" },
	{ SEC, .name = "duration", .short_opt = 'D', OF(duration_ns), .min = 1e6, .max = 1e15,
	  CLIENT, .help = "post messages for SEC seconds instead of --iters" },
	{ .type = LH_OPT_FUNC, .name = "rate", .parse = opt_rate, .metavar = "GBPS", .min = 1e5,
	  .max = 1e13, CLIENT,
	  .help = "limit what is sent to GBPS Gb/s of frames (default: none)" },
	{ .type = LH_OPT_CHOICE, .name = "recovery", .short_opt = 'r', OF(recovery),
	  .choices = lhp_recovery_choices, .metavar = "MODE", CLIENT,
	  .help = "gbn: go-back-N as rxe (default); gb0: go-back-0, a gap\n"
		  "discards the partial message at the responder and the\n"
		  "requester restarts it from its first packet" },
	/* at most 2^20: a window far below 2^23 PSNs maps a wire PSN back to one seq */
	{ .type = LH_OPT_UINT, .name = "window", .short_opt = 'w', OF(window), .metavar = "N",
	  .min = 1, .max = 1u << 20, CLIENT,
	  .help = "unacknowledged PSNs per QP at most (default 128, as rxe)" },
	{ .type = LH_OPT_UINT, .name = "timeout", .short_opt = 't', OF(timeout), .metavar = "N",
	  .max = 31, CLIENT,
	  .help = "retransmit timeout 4.096 us * 2^N, 0 none (default 14:\n"
		  "67 ms, as perftest)" },
	{ .type = LH_OPT_UINT, .name = "retry", .short_opt = 'R', OF(retry), .metavar = "N",
	  .max = LHP_RETRY_INFINITE, CLIENT,
	  .help = "retries before the QP fails, 7 infinite (default 7)" },
	{ .type = LH_OPT_UINT, .name = "tx-depth", .short_opt = 'T', OF(tx_depth), .metavar = "N",
	  .min = 1, .max = 16384, CLIENT,
	  .help = "outstanding messages per QP at most (default 128)" },
	{ .type = LH_OPT_UINT, .name = "ackreq", OF(ackreq_every), .metavar = "N", .min = 1,
	  .max = 1u << 20, CLIENT,
	  .help = "ACK request every N packets besides each message's last\n"
		  "(default 64, as rxe)" },
	{ .type = LH_OPT_UINT, .name = "psn", OF(psn), .metavar = "N", .max = ROCE_PSN_MASK,
	  LH_GIVEN(struct lhp_opts, psn_given), CLIENT,
	  .help = "start PSN of every QP, 0..0xffffff (default: random per QP)" },
	{ .type = LH_OPT_TIME, .name = "stall-time", OF(stall_ms), .metavar = "MS", .unit = "ms",
	  .scale = 1000000, .min = 1, .max = 86400000, CLIENT,
	  .help = "end the run when no PSN is newly acknowledged for MS ms:\n"
		  "\"livelock\" if the server kept answering, else \"timeout\"\n"
		  "(default: 8 retransmit timeouts, at least 2000)" },
	{ SEC, .name = "connect-timeout", OF(connect_timeout_ns), .min = 1e8, .max = 1e15, CLIENT,
	  .help = "how long to retry the side channel (default 10)" },
	{ .type = LH_OPT_UINT, .name = "tos", OF(tos), .metavar = "N", .max = 255, CLIENT,
	  .help = "IPv4 TOS / IPv6 traffic class of the frames (default 0)" },
	{ .type = LH_OPT_UINT, .name = "bad-frames", OF(bad_frames), .metavar = "N", .max = 1000,
	  CLIENT,
	  .help = "(tests) before the data, send N frames per QP of each kind\n"
		  "a receiver must drop: bad ICRC, wrong P_Key, wrong source\n"
		  "IP, wrong destination IP" },
	{ .type = LH_OPT_END },
};

void lhp_usage(FILE *f)
{
	fprintf(f, "Usage: lhperf --server [SERVER OPTIONS]\n"
		   "       lhperf [CLIENT OPTIONS] SERVER_ADDRESS\n"
		   "\n"
		   "A RoCEv2 RC endpoint and benchmark: real RoCEv2 frames (UDP 4791, BTH/RETH/AETH,\n"
		   "ICRC) sent and received on an interface, with the transport rules of Linux rxe.\n"
		   "The server takes the run parameters from the client over a TCP side channel.\n"
		   "\n");
	lh_opts_print(f, opts);
	fprintf(f, "\n"
		   "Exit status: 0 ok and every byte verified, 1 error (setup, peer lost), 2 usage,\n"
		   "3 livelock, 4 QP error, 5 timeout, 6 transfer ended but verification failed.\n");
}

static const struct lh_opts lhp_opts_table = { .opts = opts, .check = note_client_opt };

/* The server: no run option, no address */
static int check_server(const struct lhp_opts *o, int argc, char **argv, int first)
{
	if (o->client_opt) {
		fprintf(stderr, "lhperf: --%s is a client option: the server takes the run "
				"parameters from the client\n",
			o->client_opt);
		return -EINVAL;
	}
	if (first != argc) {
		fprintf(stderr, "lhperf: the server takes no address ('%s')\n", argv[first]);
		return -EINVAL;
	}
	return 0;
}

/* The client: no server option, one address, --iters or --duration */
static int check_client(struct lhp_opts *o, int argc, char **argv, int first)
{
	if (o->bind || o->listen_timeout_ns) {
		fprintf(stderr, "lhperf: --bind and --listen-timeout are server options\n");
		return -EINVAL;
	}
	if (first + 1 != argc) {
		fprintf(stderr, first == argc ? "lhperf: which server? (lhperf --help)\n" :
						"lhperf: one server address only\n");
		return -EINVAL;
	}
	o->peer = argv[first];
	if (o->iters_given && o->duration_ns) {
		fprintf(stderr, "lhperf: --iters and --duration exclude each other\n");
		return -EINVAL;
	}
	return 0;
}

int lhp_options_parse(int argc, char **argv, struct lhp_opts *o)
{
	int first;

	if (argc < 2) {
		lhp_usage(stderr);
		return -EINVAL;
	}
	defaults(o);
	first = lh_opts_parse(&lhp_opts_table, argc, argv, o);
	if (first < 0)
		return -EINVAL;
	return o->server ? check_server(o, argc, argv, first) : check_client(o, argc, argv, first);
}
