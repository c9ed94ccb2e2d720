// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhwan probe send: numbered probes paced in bursts, through a UDP socket
 * (the kernel builds the headers) or as whole frames through AF_PACKET
 * (--raw, each with a valid ICRC).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "clock.h"
#include "log.h"
#include "pkt.h"
#include "pktio.h"
#include "probe_int.h"

/* What one run of the sender keeps: its socket or port, the batch, the frame template */
struct sender {
	const struct probe_opts *o;
	uint8_t bufs[PROBE_BATCH][PROBE_BUF];
	struct lh_frame frames[PROBE_BATCH]; /* --raw */
	struct mmsghdr msgs[PROBE_BATCH]; /* UDP */
	struct iovec iov[PROBE_BATCH];
	struct lh_pktio *io; /* --raw */
	int fd; /* UDP */
	struct lh_pkt tmpl; /* --raw: the frame parsed, where its checksums are */
	size_t pay; /* UDP payload bytes */
	size_t frame_len; /* --raw: bytes of each frame */
	size_t bth_off; /* where the BTH starts in a buffer */
	uint32_t *psns; /* --psns expanded, or NULL */
	uint64_t count; /* probes to send */
};

/* --psns "0-999,100-109" expanded into one PSN per probe (*n of them), or NULL */
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

/* Bytes of the IP header */
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

/* The PSN into the BTH, and the probe header after it, sent now */
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

/* A UDP socket connected to the receiver (bound to --src if given); the fd or -errno */
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

/* --raw: the port opened and the probe frame built into every buffer; 0, or -1 said why */
static int raw_sender_open(struct sender *s)
{
	const struct probe_opts *o = s->o;
	struct lh_pktio_opts po = {.ifname = o->dev};
	struct lh_pkt_spec spec;
	unsigned int i;
	ssize_t len;

	if (!o->dev || !o->have_dst_mac || !o->have_src) {
		pr_warn("--raw needs --dev, --src and --dst-mac\n");
		return -1;
	}
	if (lh_pktio_open(&po, &s->io))
		return -1;
	lh_pkt_spec_init(&spec, o->family);
	memcpy(spec.src_mac, lh_pktio_mac(s->io), 6);
	memcpy(spec.dst_mac, o->dst_mac, 6);
	spec.src = o->src;
	spec.dst = o->dst;
	spec.dport = o->port;
	spec.roce.dqpn = o->qpn;
	spec.payload_len = s->pay - PROBE_BTH_LEN - ROCE_ICRC_LEN;
	spec.payload = calloc(1, spec.payload_len);
	if (!spec.payload)
		return -1;
	len = lh_pkt_build(&spec, s->bufs[0], sizeof(s->bufs[0]));
	free((void *)spec.payload);
	if (len < 0 || lh_pkt_parse(s->bufs[0], (size_t)len, true, &s->tmpl) != LH_STAT_ROCE) {
		pr_warn("cannot build the probe frame\n");
		return -1;
	}
	s->frame_len = (size_t)len;
	s->bth_off = s->tmpl.bth_off;
	for (i = 1; i < PROBE_BATCH; i++)
		memcpy(s->bufs[i], s->bufs[0], s->frame_len);
	return 0;
}

/* UDP: the socket to the receiver, and a bare BTH at the start of every buffer; 0 or -1 */
static int udp_sender_open(struct sender *s)
{
	const struct probe_opts *o = s->o;
	unsigned int i;

	s->fd = open_udp_sender(o);
	if (s->fd < 0) {
		pr_warn("UDP socket to the receiver: %s\n", strerror(-s->fd));
		return -1;
	}
	s->bth_off = 0;
	for (i = 0; i < PROBE_BATCH; i++) {
		memset(s->bufs[i], 0, s->pay);
		s->bufs[i][0] = ROCE_RC_SEND_ONLY;
		s->bufs[i][2] = 0xff;
		s->bufs[i][3] = 0xff;
		s->bufs[i][5] = (uint8_t)(o->qpn >> 16);
		s->bufs[i][6] = (uint8_t)(o->qpn >> 8);
		s->bufs[i][7] = (uint8_t)o->qpn;
	}
	return 0;
}

/* Wait until the probe seq is due: burst k leaves at t0 + k * burst * interval */
static void pace(uint64_t t0, uint64_t seq, double interval)
{
	uint64_t next;

	if (interval <= 0)
		return;
	next = t0 + (uint64_t)((double)seq * interval);
	/* sleep, never spin: the emulator under test shares the CPUs */
	if (lh_now_ns() >= next)
		return;
	lh_sleep_until_ns(next);
}

/* The next n probes from sequence number seq numbered, time-stamped and (--raw) checksummed */
static void fill_batch(struct sender *s, uint64_t seq, unsigned int n)
{
	const struct probe_opts *o = s->o;
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint32_t psn = s->psns ? s->psns[seq + i] : o->psn_start + (uint32_t)(seq + i);

		fill_probe(s->bufs[i] + s->bth_off, o, seq + i, psn, s->count);
		if (o->raw) {
			if (!o->no_icrc) {
				lh_pkt_icrc_update(s->bufs[i], &s->tmpl);
				if (o->family == AF_INET6)
					lh_pkt_udp_csum_update(s->bufs[i], &s->tmpl);
			}
			s->frames[i].data = s->bufs[i];
			s->frames[i].len = (uint32_t)s->frame_len;
		} else {
			s->iov[i].iov_base = s->bufs[i];
			s->iov[i].iov_len = s->pay;
			memset(&s->msgs[i], 0, sizeof(s->msgs[i]));
			s->msgs[i].msg_hdr.msg_iov = &s->iov[i];
			s->msgs[i].msg_hdr.msg_iovlen = 1;
		}
	}
}

/* The batch out: how many probes the kernel took (0: its queue is full), or -errno */
static int send_batch(struct sender *s, unsigned int n)
{
	int r;

	if (s->o->raw)
		return lh_pktio_send(s->io, s->frames, n);
	r = sendmmsg(s->fd, s->msgs, n, 0);
	if (r < 0 && (errno == ENOBUFS || errno == EAGAIN || errno == ECONNREFUSED))
		return 0;
	return r < 0 ? -errno : r;
}

/* Every probe sent, paced from t0 (until SIGINT or SIGTERM); *sent of them. 0, or -errno */
static int send_all(struct sender *s, uint64_t t0, uint64_t *sent)
{
	const struct probe_opts *o = s->o;
	double interval = o->pps > 0 ? 1e9 / o->pps : 0;
	uint64_t seq = 0;
	unsigned int n;
	int r;

	while (seq < s->count && !probe_stop) {
		n = o->burst;
		if (s->count - seq < n)
			n = (unsigned int)(s->count - seq);
		pace(t0, seq, interval);
		fill_batch(s, seq, n);
		r = send_batch(s, n);
		if (r < 0) {
			pr_warn("send: %s\n", strerror(-r));
			*sent = seq;
			return r;
		}
		if (r == 0) {
			/* a full queue: wait a little, then resend the same numbers */
			struct timespec ts = {0, 20000};

			nanosleep(&ts, NULL);
			continue;
		}
		seq += (uint64_t)r;
	}
	*sent = seq;
	return 0;
}

int probe_send(const struct probe_opts *o)
{
	struct sender *s = calloc(1, sizeof(*s));
	uint64_t t0, sent;
	int ret = 1;

	if (!s)
		return 1;
	s->o = o;
	s->fd = -1;
	s->count = o->count;
	s->pay = udp_payload_len(o);
	if (o->psn_list) {
		s->psns = expand_psns(o->psn_list, &s->count);
		if (!s->psns) {
			pr_warn("bad --psns list\n");
			ret = 2;
			goto out;
		}
	}
	if (o->raw ? raw_sender_open(s) : udp_sender_open(s))
		goto out;
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	t0 = lh_now_ns();
	if (send_all(s, t0, &sent))
		goto out;
	printf("{\"sent\":%llu,\"seconds\":%.6f,\"size\":%zu}\n", (unsigned long long)sent,
	       (double)(lh_now_ns() - t0) / 1e9,
	       o->raw ? s->frame_len : 14 + l3_len(o->family) + 8 + s->pay);
	ret = 0;
out:
	free(s->psns);
	if (s->fd >= 0)
		close(s->fd);
	lh_pktio_close(s->io);
	free(s);
	return ret;
}
