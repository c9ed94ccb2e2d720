// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhperf: a RoCEv2 RC endpoint and benchmark that plays the RDMA NICs on a
 * machine without any, following Linux rxe's transport rules, with the
 * command line and output of perftest's ib_write_bw / ib_send_bw.
 *
 *   lhperf --server [--dev IFACE] [--port N] [-j]          (the responder)
 *   lhperf [OPTIONS] SERVER                                 (the requester)
 *
 * This file holds the command line and small helpers; see lhperf.h for the
 * layout of the rest and docs/lhperf.md for the model.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <net/if.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lhperf.h"
#include "log.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: lhperf --server [SERVER OPTIONS]\n"
		"       lhperf [CLIENT OPTIONS] SERVER_ADDRESS\n"
		"\n"
		"A RoCEv2 RC endpoint and benchmark: real RoCEv2 frames (UDP 4791, BTH/RETH/AETH,\n"
		"ICRC) sent and received on an interface, with the transport rules of Linux rxe.\n"
		"The server takes the run parameters from the client over a TCP side channel.\n"
		"\n"
		"Common options:\n"
		"  -p, --port N          TCP port of the side channel (default %d)\n"
		"  -d, --dev IFACE       interface for the RoCEv2 frames (default: the one the\n"
		"                        route to the peer uses); the next hop's MAC comes from\n"
		"                        the neighbour table\n"
		"  -j, --json            results as one JSON object on stdout\n"
		"      --pretty          indent the JSON\n"
		"  -b, --batch N         frames per sendmmsg/recvmmsg (default 64, max %d)\n"
		"      --qdisc-bypass    send around the egress qdisc and netfilter egress hooks\n"
		"                        (faster; drops injected on the sender's egress then miss)\n"
		"  -v, --verbose         debug messages on stderr\n"
		"  -h, --help            this text\n"
		"\n"
		"Server options:\n"
		"  -s, --server          be the responder; serves one run, then exits\n"
		"      --bind ADDR       listen address (default: every IPv4 and IPv6 address)\n"
		"      --listen-timeout SEC  give up when no client comes (default: wait forever)\n"
		"\n"
		"Client options (the run):\n"
		"  -o, --op write|send   RDMA WRITE or SEND (default write)\n"
		"  -q, --qps N           RC queue pairs (default 1, max %d)\n"
		"  -S, --size BYTES      message size, K/M/G suffixes (default 65536, max 2G)\n"
		"  -m, --mtu N           path MTU: 256, 512, 1024, 2048 or 4096 (default 1024)\n"
		"  -n, --iters N         messages per QP (default 1000)\n"
		"  -D, --duration SEC    post messages for SEC seconds instead of --iters\n"
		"      --rate GBPS       limit what is sent to GBPS Gb/s of frames (default: none)\n"
		"  -r, --recovery MODE   gbn: go-back-N as rxe (default); gb0: go-back-0, a gap\n"
		"                        discards the partial message at the responder and the\n"
		"                        requester restarts it from its first packet\n"
		"  -w, --window N        unacknowledged PSNs per QP at most (default 128, as rxe)\n"
		"  -t, --timeout N       retransmit timeout 4.096 us * 2^N, 0 none (default 14:\n"
		"                        67 ms, as perftest)\n"
		"  -R, --retry N         retries before the QP fails, 7 infinite (default 7)\n"
		"  -T, --tx-depth N      outstanding messages per QP at most (default 128)\n"
		"      --ackreq N        ACK request every N packets besides each message's last\n"
		"                        (default 64, as rxe)\n"
		"      --psn N           start PSN of every QP, 0..0xffffff (default: random per QP)\n"
		"      --stall-time MS   end the run when no PSN is newly acknowledged for MS ms:\n"
		"                        \"livelock\" if the server kept answering, else \"timeout\"\n"
		"                        (default: 8 retransmit timeouts, at least 2000)\n"
		"      --connect-timeout SEC  how long to retry the side channel (default 10)\n"
		"      --tos N           IPv4 TOS / IPv6 traffic class of the frames (default 0)\n"
		"      --bad-frames N    (tests) before the data, send N frames per QP of each kind\n"
		"                        a receiver must drop: bad ICRC, wrong P_Key, wrong source\n"
		"                        IP, wrong destination IP\n"
		"\n"
		"Exit status: 0 ok and every byte verified, 1 error (setup, peer lost), 2 usage,\n"
		"3 livelock, 4 QP error, 5 timeout, 6 transfer ended but verification failed.\n",
		LHP_DEFAULT_PORT, LHP_MAX_BATCH, LHP_MAX_QPS);
}

enum {
	OPT_PRETTY = 0x100,
	OPT_BIND,
	OPT_LISTEN_TIMEOUT,
	OPT_RATE,
	OPT_ACKREQ,
	OPT_PSN,
	OPT_STALL,
	OPT_CONNECT_TIMEOUT,
	OPT_TOS,
	OPT_BAD_FRAMES,
	OPT_QDISC_BYPASS,
};

static const struct option long_opts[] = {
	{ "server", no_argument, NULL, 's' },
	{ "port", required_argument, NULL, 'p' },
	{ "dev", required_argument, NULL, 'd' },
	{ "json", no_argument, NULL, 'j' },
	{ "pretty", no_argument, NULL, OPT_PRETTY },
	{ "batch", required_argument, NULL, 'b' },
	{ "qdisc-bypass", no_argument, NULL, OPT_QDISC_BYPASS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "bind", required_argument, NULL, OPT_BIND },
	{ "listen-timeout", required_argument, NULL, OPT_LISTEN_TIMEOUT },
	{ "op", required_argument, NULL, 'o' },
	{ "qps", required_argument, NULL, 'q' },
	{ "size", required_argument, NULL, 'S' },
	{ "mtu", required_argument, NULL, 'm' },
	{ "iters", required_argument, NULL, 'n' },
	{ "duration", required_argument, NULL, 'D' },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "recovery", required_argument, NULL, 'r' },
	{ "window", required_argument, NULL, 'w' },
	{ "timeout", required_argument, NULL, 't' },
	{ "retry", required_argument, NULL, 'R' },
	{ "tx-depth", required_argument, NULL, 'T' },
	{ "ackreq", required_argument, NULL, OPT_ACKREQ },
	{ "psn", required_argument, NULL, OPT_PSN },
	{ "stall-time", required_argument, NULL, OPT_STALL },
	{ "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
	{ "tos", required_argument, NULL, OPT_TOS },
	{ "bad-frames", required_argument, NULL, OPT_BAD_FRAMES },
	{ NULL, 0, NULL, 0 },
};

/* Integer with an optional K/M/G (binary) suffix, within [min, max] */
static int parse_num(const char *s, uint64_t min, uint64_t max, uint64_t *out, const char *what)
{
	char *end;
	uint64_t v, mul = 1;

	errno = 0;
	if (!*s || s[0] == '-')
		goto bad;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		goto bad;
	if (*end == 'K' || *end == 'k')
		mul = 1ull << 10;
	else if (*end == 'M' || *end == 'm')
		mul = 1ull << 20;
	else if (*end == 'G' || *end == 'g')
		mul = 1ull << 30;
	else if (*end)
		goto bad;
	if (mul > 1 && end[1])
		goto bad;
	if (v > max / mul || v * mul < min || v * mul > max)
		goto bad;
	*out = v * mul;
	return 0;
bad:
	fprintf(stderr, "lhperf: bad %s '%s' (%llu..%llu)\n", what, s, (unsigned long long)min,
		(unsigned long long)max);
	return -EINVAL;
}

static int parse_dbl(const char *s, double min, double max, double *out, const char *what)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !isfinite(v) || v < min || v > max) {
		fprintf(stderr, "lhperf: bad %s '%s' (%g..%g)\n", what, s, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static void opts_defaults(struct lhp_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->port = LHP_DEFAULT_PORT;
	o->connect_timeout = 10;
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
	o->psn = -1;
	o->batch = 64;
}

/* Options that describe the run are the client's: the server takes them from it */
static bool client_only(int c)
{
	switch (c) {
	case 'o': case 'q': case 'S': case 'm': case 'n': case 'D': case 'r': case 'w':
	case 't': case 'R': case 'T': case OPT_RATE: case OPT_ACKREQ: case OPT_PSN:
	case OPT_STALL: case OPT_CONNECT_TIMEOUT: case OPT_TOS: case OPT_BAD_FRAMES:
		return true;
	default:
		return false;
	}
}

static int parse_args(int argc, char **argv, struct lhp_opts *o, int *verbose)
{
	bool have_iters = false, server_flag = false;
	int c, err = 0, bad_for_server = 0;
	uint64_t v = 0;

	opts_defaults(o);
	for (c = 1; c < argc; c++)
		if (!strcmp(argv[c], "-s") || !strcmp(argv[c], "--server"))
			server_flag = true;
	while (!err && (c = getopt_long(argc, argv, "sp:d:jb:vho:q:S:m:n:D:r:w:t:R:T:", long_opts,
					NULL)) != -1) {
		if (server_flag && client_only(c) && !bad_for_server)
			bad_for_server = c;
		switch (c) {
		case 's':
			o->server = true;
			break;
		case 'p':
			err = parse_num(optarg, 1, 65535, &v, "port");
			o->port = (uint16_t)v;
			break;
		case 'd':
			o->dev = optarg;
			break;
		case 'j':
			o->json = true;
			break;
		case OPT_PRETTY:
			o->pretty = true;
			break;
		case 'b':
			err = parse_num(optarg, 1, LHP_MAX_BATCH, &v, "batch");
			o->batch = (unsigned int)v;
			break;
		case OPT_QDISC_BYPASS:
			o->qdisc_bypass = true;
			break;
		case 'v':
			(*verbose)++;
			break;
		case 'h':
			usage(stdout);
			exit(LHP_EXIT_OK);
		case OPT_BIND:
			o->bind = optarg;
			break;
		case OPT_LISTEN_TIMEOUT:
			err = parse_dbl(optarg, 0, 1e6, &o->listen_timeout, "listen timeout");
			break;
		case 'o':
			if (!strcmp(optarg, "write")) {
				o->op = LHP_OP_WRITE;
			} else if (!strcmp(optarg, "send")) {
				o->op = LHP_OP_SEND;
			} else {
				fprintf(stderr, "lhperf: bad --op '%s' (write or send)\n", optarg);
				err = -EINVAL;
			}
			break;
		case 'q':
			err = parse_num(optarg, 1, LHP_MAX_QPS, &v, "number of QPs");
			o->qps = (unsigned int)v;
			break;
		case 'S':
			err = parse_num(optarg, 1, 1ull << 31, &o->size, "message size");
			break;
		case 'm':
			err = parse_num(optarg, 256, 4096, &v, "MTU");
			if (!err && (v & (v - 1))) {
				fprintf(stderr, "lhperf: bad MTU %llu (256, 512, 1024, 2048 or 4096)\n",
					(unsigned long long)v);
				err = -EINVAL;
			}
			o->mtu = (unsigned int)v;
			break;
		case 'n':
			err = parse_num(optarg, 1, 1ull << 40, &o->iters, "number of iterations");
			have_iters = true;
			break;
		case 'D':
			err = parse_dbl(optarg, 0.001, 1e6, &o->duration, "duration");
			break;
		case OPT_RATE:
			err = parse_dbl(optarg, 0.0001, 1e4, &o->rate_gbps, "rate");
			break;
		case 'r':
			if (!strcmp(optarg, "gbn")) {
				o->recovery = LHP_GBN;
			} else if (!strcmp(optarg, "gb0")) {
				o->recovery = LHP_GB0;
			} else {
				fprintf(stderr, "lhperf: bad --recovery '%s' (gbn or gb0)\n", optarg);
				err = -EINVAL;
			}
			break;
		case 'w':
			err = parse_num(optarg, 1, 1u << 20, &v, "window");
			o->window = (unsigned int)v;
			break;
		case 't':
			err = parse_num(optarg, 0, 31, &v, "timeout");
			o->timeout = (unsigned int)v;
			break;
		case 'R':
			err = parse_num(optarg, 0, 7, &v, "retry count");
			o->retry = (unsigned int)v;
			break;
		case 'T':
			err = parse_num(optarg, 1, 16384, &v, "TX depth");
			o->tx_depth = (unsigned int)v;
			break;
		case OPT_ACKREQ:
			err = parse_num(optarg, 1, 1u << 20, &v, "ACK request interval");
			o->ackreq_every = (unsigned int)v;
			break;
		case OPT_PSN:
			err = parse_num(optarg, 0, ROCE_PSN_MASK, &v, "start PSN");
			o->psn = (int64_t)v;
			break;
		case OPT_STALL:
			err = parse_num(optarg, 1, 86400000, &v, "stall time");
			o->stall_ms = (unsigned int)v;
			break;
		case OPT_CONNECT_TIMEOUT:
			err = parse_dbl(optarg, 0.1, 1e6, &o->connect_timeout, "connect timeout");
			break;
		case OPT_TOS:
			err = parse_num(optarg, 0, 255, &v, "TOS");
			o->tos = (unsigned int)v;
			break;
		case OPT_BAD_FRAMES:
			err = parse_num(optarg, 0, 1000, &v, "bad frame count");
			o->bad_frames = (unsigned int)v;
			break;
		default:
			err = -EINVAL;
		}
	}
	if (err)
		return err;
	if (bad_for_server) {
		const struct option *l;

		for (l = long_opts; l->name && l->val != bad_for_server; l++)
			;
		fprintf(stderr, "lhperf: --%s is a client option: the server takes the run "
				"parameters from the client\n",
			l->name ? l->name : "?");
		return -EINVAL;
	}
	if (o->server) {
		if (optind != argc) {
			fprintf(stderr, "lhperf: the server takes no address ('%s')\n", argv[optind]);
			return -EINVAL;
		}
		return 0;
	}
	if (o->bind || o->listen_timeout) {
		fprintf(stderr, "lhperf: --bind and --listen-timeout are server options\n");
		return -EINVAL;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, optind == argc ? "lhperf: which server? (lhperf --help)\n" :
						 "lhperf: one server address only\n");
		return -EINVAL;
	}
	o->peer = argv[optind];
	if (have_iters && o->duration > 0) {
		fprintf(stderr, "lhperf: --iters and --duration exclude each other\n");
		return -EINVAL;
	}
	if (o->window >= (1u << 22)) {
		fprintf(stderr, "lhperf: the window must stay far below 2^23 PSNs\n");
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct lhp_opts o;
	int verbose = 0;

	lh_log_init("lhperf", LH_LOG_WARN);
	signal(SIGPIPE, SIG_IGN);
	if (argc < 2) {
		usage(stderr);
		return LHP_EXIT_USAGE;
	}
	if (parse_args(argc, argv, &o, &verbose))
		return LHP_EXIT_USAGE;
	if (o.dev && !if_nametoindex(o.dev)) {
		fprintf(stderr, "lhperf: no interface %s\n", o.dev);
		return LHP_EXIT_ERROR;
	}
	lh_log_set_level(verbose ? LH_LOG_DEBUG : o.server && !o.json ? LH_LOG_INFO : LH_LOG_WARN);
	return o.server ? lhp_server(&o) : lhp_client(&o);
}
