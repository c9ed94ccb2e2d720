// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhwan probe recv: probes taken from a UDP socket (with the kernel's receive
 * time stamps) or, --raw, as whole frames through AF_PACKET, until all came
 * (and a little more for duplicates), the sender went quiet or time is up;
 * then the report (probe_report.c).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "clock.h"
#include "log.h"
#include "pkt.h"
#include "pktio.h"
#include "probe_int.h"

#define LINGER_NS 200000000ULL /* all there: wait this long for duplicates, not the idle time */

/* What one run of the receiver keeps */
struct receiver {
	const struct probe_opts *o;
	struct rx_state s;
	struct lh_pktio *io; /* --raw */
	int fd; /* UDP */
	int sink4, sink6; /* --raw: the UDP port held, so no ICMP port unreachable */
};

/* One batch of packets: big, and one receiver a run */
static uint8_t bufs[PROBE_BATCH][PROBE_BUF];

/* The UDP port bound on all addresses, kernel receive time stamps on; the fd or -errno */
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

/* The raw port or the UDP socket opened; 0, or the exit status after saying why */
static int receiver_open(struct receiver *r)
{
	const struct probe_opts *o = r->o;

	if (o->raw) {
		struct lh_pktio_opts po = {.ifname = o->dev, .roce_only = true};

		if (!o->dev) {
			pr_warn("--raw needs --dev\n");
			return 2;
		}
		if (lh_pktio_open(&po, &r->io))
			return 1;
		/* no ICMP port unreachable for what AF_PACKET takes */
		r->sink4 = lh_udp_port_sink(AF_INET, o->port);
		r->sink6 = lh_udp_port_sink(AF_INET6, o->port);
		return 0;
	}
	r->fd = open_udp_receiver(o);
	if (r->fd < 0) {
		pr_warn("UDP port %u: %s\n", o->port, strerror(-r->fd));
		return 1;
	}
	return 0;
}

static void receiver_close(struct receiver *r)
{
	free(r->s.seen);
	free(r->s.psn);
	free(r->s.delays);
	if (r->fd >= 0)
		close(r->fd);
	if (r->sink4 >= 0)
		close(r->sink4);
	if (r->sink6 >= 0)
		close(r->sink6);
	lh_pktio_close(r->io);
}

/* --raw: one batch of frames counted (the first waited for up to 100 ms); 0, or -ENOMEM */
static int recv_raw(struct receiver *r)
{
	struct lh_frame frames[PROBE_BATCH];
	uint64_t rx_ns;
	int n, i, err;

	for (i = 0; i < PROBE_BATCH; i++) {
		frames[i].data = bufs[i];
		frames[i].cap = sizeof(bufs[i]);
	}
	n = lh_pktio_recv(r->io, frames, PROBE_BATCH, 100);
	rx_ns = real_ns();
	for (i = 0; i < n; i++) {
		struct lh_pkt p;

		if (lh_pkt_parse(bufs[i], frames[i].len, true, &p) != LH_STAT_ROCE)
			continue;
		err = rx_account(&r->s, r->o, bufs[i] + p.bth_off, frames[i].len - p.bth_off,
				 frames[i].len, rx_ns);
		if (err)
			return err;
	}
	return 0;
}

/* A datagram's receive time stamp from the kernel (SO_TIMESTAMPNS), else now */
static uint64_t udp_rx_ns(struct msghdr *mh)
{
	struct cmsghdr *cm;
	uint64_t rx_ns = 0;

	for (cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;

			memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
			rx_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
		}
	}
	return rx_ns ? rx_ns : real_ns();
}

/* UDP: one batch of datagrams counted (the first waited for up to 100 ms); 0, or -ENOMEM */
static int recv_udp(struct receiver *r)
{
	char cbuf[PROBE_BATCH][CMSG_SPACE(sizeof(struct timespec))];
	struct mmsghdr msgs[PROBE_BATCH];
	struct iovec iov[PROBE_BATCH];
	struct sockaddr_in6 from[PROBE_BATCH];
	struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
	uint64_t rx_ns;
	int n, i, err;
	bool v6;

	if (poll(&pfd, 1, 100) <= 0)
		return 0;
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
	n = recvmmsg(r->fd, msgs, PROBE_BATCH, MSG_DONTWAIT, NULL);
	for (i = 0; i < n; i++) {
		rx_ns = udp_rx_ns(&msgs[i].msg_hdr);
		/* wire size: the sender's family decides the header sizes */
		v6 = !IN6_IS_ADDR_V4MAPPED(&from[i].sin6_addr);
		err = rx_account(&r->s, r->o, bufs[i], msgs[i].msg_len,
				 msgs[i].msg_len + 8 + (v6 ? 40 : 20) + 14, rx_ns);
		if (err)
			return err;
	}
	return 0;
}

/* Whether to stop: quiet for the idle time since the last probe, or LINGER_NS once all came */
static bool recv_done(const struct rx_state *s, const struct probe_opts *o)
{
	uint64_t wait = s->received >= s->count && o->idle_ns > LINGER_NS ? LINGER_NS : o->idle_ns;

	return s->any && real_ns() - s->last_ns > wait;
}

int probe_recv(const struct probe_opts *o)
{
	struct receiver r = {.o = o, .fd = -1, .sink4 = -1, .sink6 = -1};
	uint64_t start;
	int ret, err = 0;
	FILE *f;

	ret = receiver_open(&r);
	if (ret)
		goto out;
	if (o->ready_file) {
		f = fopen(o->ready_file, "w");
		if (f)
			fclose(f);
	}
	start = lh_now_ns();
	while (!probe_stop && lh_now_ns() - start <= o->timeout_ns) {
		err = o->raw ? recv_raw(&r) : recv_udp(&r);
		if (err || recv_done(&r.s, o))
			break;
	}
	if (err) {
		ret = 1;
		goto out;
	}
	if (!r.s.seen) {
		/* nothing arrived: report an empty result rather than fail */
		r.s.count = 0;
		r.s.seen = calloc(1, 1);
	}
	rx_report(&r.s, o);
out:
	receiver_close(&r);
	return ret;
}
