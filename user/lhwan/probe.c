// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhwan probe: numbered test packets through a topology, and what happened
 * to them. The sender puts a BTH (so lhwan's psn rules and --match roce see
 * a RoCEv2 packet) and a probe header (stream, sequence number, total,
 * send time) into UDP datagrams to port 4791 and paces them; the receiver
 * reports, as JSON, which sequence numbers arrived, the loss rate, the loss
 * bursts (runs of consecutive missing numbers), duplicates, reordering, the
 * one-way delay (send time against the kernel's receive time stamp, one
 * host clock) and the rate on the wire.
 *
 * Two ways to move packets: UDP sockets (the kernel builds headers; the
 * ICRC is not valid), or --raw: whole frames through AF_PACKET (pktio) with
 * a valid ICRC, as the RoCEv2 endpoint lhperf sends and receives them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>

#include "json.h"
#include "lhwan.h"
#include "units.h"
#include "log.h"
#include "pkt.h"
#include "pktio.h"

#define PROBE_MAGIC 0x4c485052U /* "LHPR" */
#define PROBE_BTH_LEN ((size_t)sizeof(struct roce_bth))
#define PROBE_BATCH 32
#define MAX_SEQS (1U << 26)
#define MAX_DELAYS (1U << 22)

/* After the BTH, network order */
struct probe_hdr {
	uint32_t magic;
	uint32_t stream;
	uint64_t seq;
	uint64_t count;
	uint64_t tx_ns; /* CLOCK_REALTIME */
} __attribute__((packed));

struct probe_opts {
	bool send;
	bool raw;
	const char *dev;
	int family;
	union lh_ip_addr src, dst;
	bool have_src;
	uint8_t dst_mac[6];
	bool have_dst_mac;
	uint16_t port;
	uint32_t size; /* frame bytes on the wire, Ethernet header included */
	uint64_t count;
	double pps;
	uint32_t burst;
	uint32_t qpn;
	uint32_t psn_start;
	char *psn_list; /* explicit PSN sequence: 0-999,100-109 */
	uint32_t stream;
	bool no_icrc;
	/* receiver */
	uint64_t timeout_ns, idle_ns;
	const char *ready_file;
	bool list_lost;
	bool pretty;
};

static volatile sig_atomic_t probe_stop;

static void probe_on_signal(int sig)
{
	(void)sig;
	probe_stop = 1;
}

static void probe_usage(void)
{
	fprintf(stderr,
		"usage: lhwan probe send --dst IP [OPTIONS]\n"
		"       lhwan probe recv [OPTIONS]\n"
		"  --dst IP              receiver address (send)\n"
		"  --src IP              source address (raw send; UDP: bind to it)\n"
		"  --port N              UDP port (default 4791)\n"
		"  --size BYTES          frame size on the wire incl. Ethernet header (default "
		"1024)\n"
		"  --count N             packets to send / expect (default 10000)\n"
		"  --pps N | --rate RATE pace (packets/s or bits/s of frames, tc units); 0 = flat "
		"out\n"
		"  --burst N             packets per paced burst (default 16)\n"
		"  --qpn N --psn-start N BTH destination QP and first PSN\n"
		"  --psns LIST           explicit PSN sequence (e.g. 0-999,100-109: a "
		"retransmission)\n"
		"  --stream N            stream id; the receiver ignores other streams\n"
		"  --raw --dev IF        whole frames via AF_PACKET on IF (valid ICRC)\n"
		"  --dst-mac MAC         next hop's MAC (raw send)\n"
		"  --no-icrc             raw send: do not recompute the ICRC per packet (benches)\n"
		"  --timeout TIME        receiver: give up after TIME (default 60s)\n"
		"  --idle TIME           receiver: stop TIME after the last packet (default 1s)\n"
		"  --ready-file PATH     receiver: create PATH once listening\n"
		"  --list-lost           receiver: list every lost sequence number and PSN\n"
		"  -p, --pretty          pretty JSON\n");
}

static int parse_mac(const char *s, uint8_t *mac)
{
	unsigned int b[6];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++) {
		if (b[i] > 255)
			return -EINVAL;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

static int parse_ip(const char *s, union lh_ip_addr *a, int *family)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, &a->v4) == 1) {
		*family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, &a->v6) == 1) {
		*family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

static int parse_probe_args(struct probe_opts *o, int argc, char **argv)
{
	enum {
		O_DST = 256,
		O_SRC,
		O_PORT,
		O_SIZE,
		O_COUNT,
		O_PPS,
		O_RATE,
		O_BURST,
		O_QPN,
		O_PSN_START,
		O_PSNS,
		O_STREAM,
		O_RAW,
		O_DEV,
		O_DST_MAC,
		O_NO_ICRC,
		O_TIMEOUT,
		O_IDLE,
		O_READY,
		O_LIST_LOST,
	};
	static const struct option opts[] = {
		{"dst", required_argument, NULL, O_DST},
		{"src", required_argument, NULL, O_SRC},
		{"port", required_argument, NULL, O_PORT},
		{"size", required_argument, NULL, O_SIZE},
		{"count", required_argument, NULL, O_COUNT},
		{"pps", required_argument, NULL, O_PPS},
		{"rate", required_argument, NULL, O_RATE},
		{"burst", required_argument, NULL, O_BURST},
		{"qpn", required_argument, NULL, O_QPN},
		{"psn-start", required_argument, NULL, O_PSN_START},
		{"psns", required_argument, NULL, O_PSNS},
		{"stream", required_argument, NULL, O_STREAM},
		{"raw", no_argument, NULL, O_RAW},
		{"dev", required_argument, NULL, O_DEV},
		{"dst-mac", required_argument, NULL, O_DST_MAC},
		{"no-icrc", no_argument, NULL, O_NO_ICRC},
		{"timeout", required_argument, NULL, O_TIMEOUT},
		{"idle", required_argument, NULL, O_IDLE},
		{"ready-file", required_argument, NULL, O_READY},
		{"list-lost", no_argument, NULL, O_LIST_LOST},
		{"pretty", no_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	uint64_t rate = 0;
	int c, fam;

	o->port = ROCEV2_UDP_PORT;
	o->size = 1024;
	o->count = 10000;
	o->burst = 16;
	o->timeout_ns = 60000000000ULL;
	o->idle_ns = 1000000000ULL;
	o->family = AF_INET;
	while ((c = getopt_long(argc, argv, "ph", opts, NULL)) != -1) {
		switch (c) {
		case O_DST:
			if (parse_ip(optarg, &o->dst, &o->family))
				goto bad;
			break;
		case O_SRC:
			if (parse_ip(optarg, &o->src, &fam))
				goto bad;
			o->have_src = true;
			break;
		case O_PORT:
			o->port = (uint16_t)strtoul(optarg, NULL, 0);
			break;
		case O_SIZE:
			o->size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case O_COUNT:
			o->count = strtoull(optarg, NULL, 0);
			break;
		case O_PPS:
			o->pps = strtod(optarg, NULL);
			break;
		case O_RATE:
			if (lh_parse_rate_bps(optarg, false, &rate))
				goto bad;
			break;
		case O_BURST:
			o->burst = (uint32_t)strtoul(optarg, NULL, 0);
			if (!o->burst || o->burst > PROBE_BATCH)
				o->burst = PROBE_BATCH;
			break;
		case O_QPN:
			o->qpn = (uint32_t)strtoul(optarg, NULL, 0) & ROCE_QPN_MASK;
			break;
		case O_PSN_START:
			o->psn_start = (uint32_t)strtoul(optarg, NULL, 0) & ROCE_PSN_MASK;
			break;
		case O_PSNS:
			o->psn_list = optarg;
			break;
		case O_STREAM:
			o->stream = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case O_RAW:
			o->raw = true;
			break;
		case O_DEV:
			o->dev = optarg;
			break;
		case O_DST_MAC:
			if (parse_mac(optarg, o->dst_mac))
				goto bad;
			o->have_dst_mac = true;
			break;
		case O_NO_ICRC:
			o->no_icrc = true;
			break;
		case O_TIMEOUT:
			if (lh_parse_time_ns(optarg, NULL, &o->timeout_ns))
				goto bad;
			break;
		case O_IDLE:
			if (lh_parse_time_ns(optarg, NULL, &o->idle_ns))
				goto bad;
			break;
		case O_READY:
			o->ready_file = optarg;
			break;
		case O_LIST_LOST:
			o->list_lost = true;
			break;
		case 'p':
			o->pretty = true;
			break;
		case 'h':
			probe_usage();
			exit(0);
		default:
			probe_usage();
			return -EINVAL;
		}
	}
	if (rate)
		o->pps = (double)rate / (8.0 * o->size);
	return 0;
bad:
	pr_warn("bad value '%s'\n", optarg);
	return -EINVAL;
}

/* ---- explicit PSN sequences ---- */

static uint32_t *expand_psns(const char *list, uint64_t *n)
{
	char *copy = strdup(list), *save = NULL, *t, *dash;
	uint32_t *out = NULL, *grow;
	uint64_t cnt = 0, a, b, i;

	if (!copy)
		return NULL;
	for (t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		dash = strchr(t, '-');
		a = strtoull(t, NULL, 0);
		b = dash ? strtoull(dash + 1, NULL, 0) : a;
		if (b < a || b - a > MAX_SEQS || cnt + (b - a + 1) > MAX_SEQS)
			goto bad;
		grow = realloc(out, (cnt + b - a + 1) * sizeof(*out));
		if (!grow)
			goto bad;
		out = grow;
		for (i = a; i <= b; i++)
			out[cnt++] = (uint32_t)i & ROCE_PSN_MASK;
	}
	free(copy);
	*n = cnt;
	return out;
bad:
	free(copy);
	free(out);
	return NULL;
}

/* ---- sender ---- */

static size_t l3_len(int family)
{
	return family == AF_INET6 ? 40 : 20;
}

/* UDP payload length for a frame of o->size bytes */
static size_t udp_payload_len(const struct probe_opts *o)
{
	size_t hdrs = 14 + l3_len(o->family) + 8;
	size_t min = PROBE_BTH_LEN + sizeof(struct probe_hdr) + ROCE_ICRC_LEN;

	if (o->size < hdrs + min)
		return min;
	/* the RoCE payload is padded to 4 bytes; keep the frame exactly o->size when we can */
	return (o->size - hdrs) & ~(size_t)3;
}

static void fill_probe(uint8_t *bth, const struct probe_opts *o, uint64_t seq, uint32_t psn,
		       uint64_t count)
{
	struct probe_hdr *h = (struct probe_hdr *)(bth + PROBE_BTH_LEN);
	uint32_t w;

	w = htonl(psn & ROCE_PSN_MASK);
	memcpy(bth + 8, &w, 4);
	h->magic = htonl(PROBE_MAGIC);
	h->stream = htonl(o->stream);
	h->seq = htobe64(seq);
	h->count = htobe64(count);
	h->tx_ns = htobe64(real_ns());
}

static int open_udp_sender(const struct probe_opts *o)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	int fd, buf = 8 << 20;

	fd = socket(o->family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf));
	if (o->have_src) {
		if (o->family == AF_INET6) {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

			a->sin6_family = AF_INET6;
			a->sin6_addr = o->src.v6;
			sl = sizeof(*a);
		} else {
			struct sockaddr_in *a = (struct sockaddr_in *)&ss;

			a->sin_family = AF_INET;
			a->sin_addr = o->src.v4;
			sl = sizeof(*a);
		}
		if (bind(fd, (struct sockaddr *)&ss, sl))
			goto err;
	}
	memset(&ss, 0, sizeof(ss));
	if (o->family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

		a->sin6_family = AF_INET6;
		a->sin6_addr = o->dst.v6;
		a->sin6_port = htons(o->port);
		sl = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;

		a->sin_family = AF_INET;
		a->sin_addr = o->dst.v4;
		a->sin_port = htons(o->port);
		sl = sizeof(*a);
	}
	if (connect(fd, (struct sockaddr *)&ss, sl))
		goto err;
	return fd;
err:
	buf = -errno;
	close(fd);
	return buf;
}

static int probe_send(struct probe_opts *o)
{
	uint8_t bufs[PROBE_BATCH][9216];
	struct lh_frame frames[PROBE_BATCH];
	struct mmsghdr msgs[PROBE_BATCH];
	struct iovec iov[PROBE_BATCH];
	struct lh_pktio *io = NULL;
	struct lh_pkt tmpl_parsed;
	uint32_t *psns = NULL;
	uint64_t seq = 0, count = o->count, sent_total = 0, t0, next;
	size_t pay = udp_payload_len(o), frame_len = 0, bth_off;
	double interval;
	unsigned int i, n;
	int fd = -1, r, ret = 1;

	if (o->psn_list) {
		psns = expand_psns(o->psn_list, &count);
		if (!psns) {
			pr_warn("bad --psns list\n");
			return 2;
		}
	}
	if (o->raw) {
		struct lh_pktio_opts po = {.ifname = o->dev};
		struct lh_pkt_spec spec;
		ssize_t len;

		if (!o->dev || !o->have_dst_mac || !o->have_src) {
			pr_warn("--raw needs --dev, --src and --dst-mac\n");
			goto out;
		}
		r = lh_pktio_open(&po, &io);
		if (r)
			goto out;
		lh_pkt_spec_init(&spec, o->family);
		memcpy(spec.src_mac, lh_pktio_mac(io), 6);
		memcpy(spec.dst_mac, o->dst_mac, 6);
		spec.src = o->src;
		spec.dst = o->dst;
		spec.dport = o->port;
		spec.roce.dqpn = o->qpn;
		spec.payload_len = pay - PROBE_BTH_LEN - ROCE_ICRC_LEN;
		spec.payload = calloc(1, spec.payload_len);
		if (!spec.payload)
			goto out;
		len = lh_pkt_build(&spec, bufs[0], sizeof(bufs[0]));
		free((void *)spec.payload);
		if (len < 0 ||
		    lh_pkt_parse(bufs[0], (size_t)len, true, &tmpl_parsed) != LH_STAT_ROCE) {
			pr_warn("cannot build the probe frame\n");
			goto out;
		}
		frame_len = (size_t)len;
		bth_off = tmpl_parsed.bth_off;
		for (i = 1; i < PROBE_BATCH; i++)
			memcpy(bufs[i], bufs[0], frame_len);
	} else {
		fd = open_udp_sender(o);
		if (fd < 0) {
			pr_warn("UDP socket to the receiver: %s\n", strerror(-fd));
			goto out;
		}
		bth_off = 0;
		for (i = 0; i < PROBE_BATCH; i++) {
			memset(bufs[i], 0, pay);
			bufs[i][0] = ROCE_RC_SEND_ONLY;
			bufs[i][2] = 0xff;
			bufs[i][3] = 0xff;
			bufs[i][5] = (uint8_t)(o->qpn >> 16);
			bufs[i][6] = (uint8_t)(o->qpn >> 8);
			bufs[i][7] = (uint8_t)o->qpn;
		}
	}
	interval = o->pps > 0 ? 1e9 / o->pps : 0;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	t0 = lh_now_ns();
	while (seq < count && !probe_stop) {
		n = o->burst;
		if (count - seq < n)
			n = (unsigned int)(count - seq);
		if (interval > 0) {
			/* pace: burst k leaves at t0 + k * burst * interval */
			next = t0 + (uint64_t)((double)seq * interval);
			/* sleep, never spin: the emulator under test shares the CPUs */
			if (lh_now_ns() < next) {
				struct timespec ts = {.tv_sec = (time_t)(next / 1000000000ULL),
						      .tv_nsec = (long)(next % 1000000000ULL)};

				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			}
		}
		for (i = 0; i < n; i++) {
			uint32_t psn = psns ? psns[seq + i] : o->psn_start + (uint32_t)(seq + i);

			fill_probe(bufs[i] + bth_off, o, seq + i, psn, count);
			if (o->raw) {
				if (!o->no_icrc) {
					lh_pkt_icrc_update(bufs[i], &tmpl_parsed);
					if (o->family == AF_INET6)
						lh_pkt_udp_csum_update(bufs[i], &tmpl_parsed);
				}
				frames[i].data = bufs[i];
				frames[i].len = (uint32_t)frame_len;
			} else {
				iov[i].iov_base = bufs[i];
				iov[i].iov_len = pay;
				memset(&msgs[i], 0, sizeof(msgs[i]));
				msgs[i].msg_hdr.msg_iov = &iov[i];
				msgs[i].msg_hdr.msg_iovlen = 1;
			}
		}
		if (o->raw) {
			r = lh_pktio_send(io, frames, n);
		} else {
			r = sendmmsg(fd, msgs, n, 0);
			if (r < 0 && (errno == ENOBUFS || errno == EAGAIN || errno == ECONNREFUSED))
				r = 0;
			else if (r < 0)
				r = -errno;
		}
		if (r < 0) {
			pr_warn("send: %s\n", strerror(-r));
			goto out;
		}
		if (r == 0) {
			/* a full queue: wait a little, then resend the same numbers */
			struct timespec ts = {0, 20000};

			nanosleep(&ts, NULL);
			continue;
		}
		seq += (uint64_t)r;
		sent_total += (uint64_t)r;
	}
	printf("{\"sent\":%llu,\"seconds\":%.6f,\"size\":%zu}\n", (unsigned long long)sent_total,
	       (double)(lh_now_ns() - t0) / 1e9,
	       o->raw ? frame_len : 14 + l3_len(o->family) + 8 + pay);
	ret = 0;
out:
	free(psns);
	if (fd >= 0)
		close(fd);
	lh_pktio_close(io);
	return ret;
}

/* ---- receiver ---- */

struct rx_state {
	uint64_t count; /* expected, from the packets */
	uint8_t *seen; /* times each sequence number arrived (saturating) */
	uint32_t *psn; /* PSN of each sequence number */
	uint64_t received, duplicates, reordered, foreign, max_seq;
	bool any;
	uint64_t first_ns, last_ns, bytes, last_bytes;
	double *delays;
	uint64_t nr_delays;
	double dmin, dmax, dsum;
};

static int rx_account(struct rx_state *s, const struct probe_opts *o, const uint8_t *bth,
		      size_t len, size_t wire_len, uint64_t rx_ns)
{
	const struct probe_hdr *h;
	uint64_t seq, count;
	uint32_t psn;
	double d;

	if (len < PROBE_BTH_LEN + sizeof(*h))
		goto foreign;
	h = (const struct probe_hdr *)(bth + PROBE_BTH_LEN);
	if (ntohl(h->magic) != PROBE_MAGIC || ntohl(h->stream) != o->stream)
		goto foreign;
	seq = be64toh(h->seq);
	count = be64toh(h->count);
	if (!s->seen) {
		if (!count || count > MAX_SEQS)
			goto foreign;
		s->count = count;
		s->seen = calloc(count, 1);
		s->psn = calloc(count, sizeof(uint32_t));
		s->delays = malloc((count < MAX_DELAYS ? count : MAX_DELAYS) * sizeof(double));
		if (!s->seen || !s->psn || !s->delays)
			return -ENOMEM;
	}
	if (seq >= s->count)
		goto foreign;
	psn = ((uint32_t)bth[9] << 16 | (uint32_t)bth[10] << 8 | bth[11]);
	if (s->seen[seq]) {
		s->duplicates++;
		if (s->seen[seq] < 255)
			s->seen[seq]++;
		return 0;
	}
	s->seen[seq] = 1;
	s->psn[seq] = psn;
	s->received++;
	if (s->any && seq < s->max_seq)
		s->reordered++;
	if (!s->any || seq > s->max_seq)
		s->max_seq = seq;
	if (!s->any)
		s->first_ns = rx_ns;
	s->any = true;
	s->last_ns = rx_ns;
	s->bytes += wire_len;
	s->last_bytes = wire_len;
	d = ((double)rx_ns - (double)be64toh(h->tx_ns)) / 1000.0;
	if (s->nr_delays < MAX_DELAYS)
		s->delays[s->nr_delays++] = d;
	if (s->received == 1 || d < s->dmin)
		s->dmin = d;
	if (s->received == 1 || d > s->dmax)
		s->dmax = d;
	s->dsum += d;
	return 0;
foreign:
	s->foreign++;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pctl(const double *v, uint64_t n, double q)
{
	uint64_t i;

	if (!n)
		return NAN;
	i = (uint64_t)(q * (double)(n - 1) + 0.5);
	return v[i];
}

static void rx_report(struct rx_state *s, const struct probe_opts *o)
{
	struct lh_json *j = lh_json_new(stdout, o->pretty);
	uint64_t lost = 0, bursts = 0, max_burst = 0, run = 0, i;
	double dur = s->any ? (double)(s->last_ns - s->first_ns) / 1e9 : 0;

	for (i = 0; i < s->count; i++) {
		if (!s->seen[i]) {
			lost++;
			run++;
			if (run == 1)
				bursts++;
			if (run > max_burst)
				max_burst = run;
		} else {
			run = 0;
		}
	}
	if (s->nr_delays)
		qsort(s->delays, s->nr_delays, sizeof(double), cmp_double);
	lh_json_start_object(j);
	lh_json_uint_field(j, "stream", o->stream);
	lh_json_uint_field(j, "expected", s->count);
	lh_json_uint_field(j, "received", s->received);
	lh_json_uint_field(j, "lost", lost);
	lh_json_double_field(j, "loss_rate", s->count ? (double)lost / (double)s->count : 0);
	lh_json_uint_field(j, "bursts", bursts);
	lh_json_double_field(j, "mean_burst", bursts ? (double)lost / (double)bursts : 0);
	lh_json_uint_field(j, "max_burst", max_burst);
	lh_json_uint_field(j, "duplicates", s->duplicates);
	lh_json_uint_field(j, "reordered", s->reordered);
	lh_json_uint_field(j, "foreign", s->foreign);
	lh_json_name(j, "delay_us");
	lh_json_start_object(j);
	lh_json_double_field(j, "min", s->received ? s->dmin : NAN);
	lh_json_double_field(j, "avg", s->received ? s->dsum / (double)s->received : NAN);
	lh_json_double_field(j, "p50", pctl(s->delays, s->nr_delays, 0.5));
	lh_json_double_field(j, "p99", pctl(s->delays, s->nr_delays, 0.99));
	lh_json_double_field(j, "max", s->received ? s->dmax : NAN);
	lh_json_end_object(j);
	lh_json_double_field(j, "seconds", dur);
	lh_json_uint_field(j, "wire_bytes", s->bytes);
	/* the first frame's bits were on the wire before the first time stamp */
	lh_json_double_field(j, "rate_bps",
			     dur > 0 ? (double)(s->bytes - s->last_bytes) * 8 / dur : 0);
	if (o->list_lost) {
		lh_json_name(j, "lost_seqs");
		lh_json_start_array(j);
		for (i = 0; i < s->count; i++)
			if (!s->seen[i])
				lh_json_uint(j, i);
		lh_json_end_array(j);
		lh_json_name(j, "received_psns");
		lh_json_start_array(j);
		for (i = 0; i < s->count; i++)
			if (s->seen[i])
				lh_json_uint(j, s->psn[i]);
		lh_json_end_array(j);
	}
	lh_json_end_object(j);
	lh_json_free(j);
}

static int open_udp_receiver(const struct probe_opts *o)
{
	struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons(o->port)};
	int fd, one = 1, buf = 64 << 20, zero = 0;

	/* one dual-stack socket takes IPv4 and IPv6 */
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a6, sizeof(a6))) {
		buf = -errno;
		close(fd);
		return buf;
	}
	return fd;
}

static int probe_recv(struct probe_opts *o)
{
	static uint8_t bufs[PROBE_BATCH][9216];
	char cbuf[PROBE_BATCH][CMSG_SPACE(sizeof(struct timespec))];
	struct mmsghdr msgs[PROBE_BATCH];
	struct iovec iov[PROBE_BATCH];
	struct sockaddr_in6 from[PROBE_BATCH];
	struct lh_frame frames[PROBE_BATCH];
	struct rx_state s = {0};
	struct lh_pktio *io = NULL;
	uint64_t start, now, rx_ns;
	int fd = -1, sink4 = -1, sink6 = -1, n, i, ret = 1;
	FILE *f;

	if (o->raw) {
		struct lh_pktio_opts po = {.ifname = o->dev, .roce_only = true};

		if (!o->dev) {
			pr_warn("--raw needs --dev\n");
			return 2;
		}
		if (lh_pktio_open(&po, &io))
			return 1;
		/* no ICMP port unreachable for what AF_PACKET takes */
		sink4 = lh_udp_port_sink(AF_INET, o->port);
		sink6 = lh_udp_port_sink(AF_INET6, o->port);
	} else {
		fd = open_udp_receiver(o);
		if (fd < 0) {
			pr_warn("UDP port %u: %s\n", o->port, strerror(-fd));
			return 1;
		}
	}
	if (o->ready_file) {
		f = fopen(o->ready_file, "w");
		if (f)
			fclose(f);
	}
	start = lh_now_ns();
	while (!probe_stop) {
		now = lh_now_ns();
		if (now - start > o->timeout_ns)
			break;
		if (o->raw) {
			for (i = 0; i < PROBE_BATCH; i++) {
				frames[i].data = bufs[i];
				frames[i].cap = sizeof(bufs[i]);
			}
			n = lh_pktio_recv(io, frames, PROBE_BATCH, 100);
			rx_ns = real_ns();
			for (i = 0; i < n; i++) {
				struct lh_pkt p;

				if (lh_pkt_parse(bufs[i], frames[i].len, true, &p) != LH_STAT_ROCE)
					continue;
				if (rx_account(&s, o, bufs[i] + p.bth_off,
					       frames[i].len - p.bth_off, frames[i].len, rx_ns))
					goto out;
			}
		} else {
			struct pollfd pfd = {.fd = fd, .events = POLLIN};

			n = poll(&pfd, 1, 100);
			if (n > 0) {
				for (i = 0; i < PROBE_BATCH; i++) {
					iov[i].iov_base = bufs[i];
					iov[i].iov_len = sizeof(bufs[i]);
					memset(&msgs[i], 0, sizeof(msgs[i]));
					msgs[i].msg_hdr.msg_iov = &iov[i];
					msgs[i].msg_hdr.msg_iovlen = 1;
					msgs[i].msg_hdr.msg_name = &from[i];
					msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
					msgs[i].msg_hdr.msg_control = cbuf[i];
					msgs[i].msg_hdr.msg_controllen = sizeof(cbuf[i]);
				}
				n = recvmmsg(fd, msgs, PROBE_BATCH, MSG_DONTWAIT, NULL);
			}
			for (i = 0; i < n; i++) {
				struct cmsghdr *cm;
				bool v6 = false;

				rx_ns = 0;
				for (cm = CMSG_FIRSTHDR(&msgs[i].msg_hdr); cm;
				     cm = CMSG_NXTHDR(&msgs[i].msg_hdr, cm)) {
					if (cm->cmsg_level == SOL_SOCKET &&
					    cm->cmsg_type == SCM_TIMESTAMPNS) {
						struct timespec ts;

						memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
						rx_ns = (uint64_t)ts.tv_sec * 1000000000ULL +
							(uint64_t)ts.tv_nsec;
					}
				}
				if (!rx_ns)
					rx_ns = real_ns();
				/* wire size: the sender's family decides the header sizes */
				v6 = !IN6_IS_ADDR_V4MAPPED(&from[i].sin6_addr);
				if (rx_account(&s, o, bufs[i], msgs[i].msg_len,
					       msgs[i].msg_len + 8 + (v6 ? 40 : 20) + 14, rx_ns))
					goto out;
			}
		}
		/* all there: linger a little for duplicates, not the whole idle time */
		if (s.any &&
		    (real_ns() - s.last_ns) > (s.received >= s.count && o->idle_ns > 200000000ULL
						       ? 200000000ULL
						       : o->idle_ns))
			break;
	}
	if (!s.seen) {
		/* nothing arrived: report an empty result rather than fail */
		s.count = 0;
		s.seen = calloc(1, 1);
	}
	rx_report(&s, o);
	ret = 0;
out:
	free(s.seen);
	free(s.psn);
	free(s.delays);
	if (fd >= 0)
		close(fd);
	if (sink4 >= 0)
		close(sink4);
	if (sink6 >= 0)
		close(sink6);
	lh_pktio_close(io);
	return ret;
}

int probe_main(int argc, char **argv)
{
	struct probe_opts o = {0};
	struct sigaction sa = {.sa_handler = probe_on_signal};

	if (argc < 2 || (strcmp(argv[1], "send") && strcmp(argv[1], "recv"))) {
		probe_usage();
		return 2;
	}
	o.send = !strcmp(argv[1], "send");
	if (parse_probe_args(&o, argc - 1, argv + 1))
		return 2;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (o.send) {
		if (!o.dst.v4.s_addr && o.family == AF_INET) {
			pr_warn("send needs --dst\n");
			return 2;
		}
		return probe_send(&o);
	}
	return probe_recv(&o);
}
