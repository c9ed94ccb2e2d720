// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Batched AF_PACKET frame I/O with an optional RoCEv2-only socket filter. */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "pktio.h"
#include "rocev2.h"

#define PKTIO_BATCH_MAX 256
#define PKTIO_DEFAULT_BUF (8 << 20)

struct lh_pktio {
	int fd;
	int ifindex;
	uint8_t mac[6];
	uint64_t drops; /* tp_drops read so far (reading them resets the kernel's) */
	uint64_t tx_refused; /* frames the egress path refused (ENOBUFS): lost */
};

/*
 * Classic BPF: accept untagged IPv4 (not a fragment) or IPv6 (no extension
 * header) UDP to port 4791, drop the rest. Hand-written, the same program
 * `tcpdump -dd 'udp dst port 4791'` gives minus what RoCEv2 never uses.
 */
static struct sock_filter roce_filter[] = {
	/* index: 14 accepts, 15 drops; jump offsets count from the next insn */
	BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12), /* ethertype */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 7),
	BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 23), /* IPv4 protocol */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, 11),
	BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 20), /* flags and fragment offset */
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x3fff, 9, 0),
	BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 14), /* X = IHL * 4 */
	BPF_STMT(BPF_LD | BPF_H | BPF_IND, 16), /* UDP dport at 14 + IHL*4 + 2 */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ROCEV2_UDP_PORT, 5, 6),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IPV6, 0, 5),
	BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 20), /* IPv6 next header */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, 3),
	BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 56), /* UDP dport */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ROCEV2_UDP_PORT, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, 0x40000), /* accept */
	BPF_STMT(BPF_RET | BPF_K, 0), /* drop */
};

static int set_buf(int fd, int opt, int force_opt, int bytes)
{
	/* SO_*BUFFORCE passes rmem_max/wmem_max as root; fall back to the capped one */
	if (!setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof(bytes)))
		return 0;
	return setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes));
}

int lh_pktio_open(const struct lh_pktio_opts *o, struct lh_pktio **out)
{
	struct sockaddr_ll sll = { 0 };
	struct lh_pktio *io;
	struct ifreq ifr = { 0 };
	int one = 1, err;

	if (!o->ifname || strlen(o->ifname) >= IFNAMSIZ) {
		pr_warn("pktio: bad interface name\n");
		return -EINVAL;
	}
	io = calloc(1, sizeof(*io));
	if (!io)
		return -ENOMEM;
	io->ifindex = (int)if_nametoindex(o->ifname);
	if (!io->ifindex) {
		err = -errno;
		pr_warn("pktio: no interface %s: %s\n", o->ifname, strerror(errno));
		free(io);
		return err;
	}
	/* protocol 0: no frame comes in; a frame sent gets its protocol from its header */
	io->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, o->tx_only ? 0 : htons(ETH_P_ALL));
	if (io->fd < 0) {
		err = -errno;
		pr_warn("pktio: AF_PACKET socket: %s\n", strerror(errno));
		free(io);
		return err;
	}
	if (o->roce_only) {
		struct sock_fprog prog = {
			.len = sizeof(roce_filter) / sizeof(roce_filter[0]),
			.filter = roce_filter,
		};

		if (setsockopt(io->fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog))) {
			err = -errno;
			pr_warn("pktio: attach filter on %s: %s\n", o->ifname, strerror(errno));
			goto fail;
		}
	}
	if (!o->rx_outgoing)
		setsockopt(io->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	if (o->qdisc_bypass)
		setsockopt(io->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	if (!o->tx_only)
		set_buf(io->fd, SO_RCVBUF, SO_RCVBUFFORCE, o->rcvbuf ? o->rcvbuf : PKTIO_DEFAULT_BUF);
	set_buf(io->fd, SO_SNDBUF, SO_SNDBUFFORCE, o->sndbuf ? o->sndbuf : PKTIO_DEFAULT_BUF);

	sll.sll_family = AF_PACKET;
	sll.sll_protocol = o->tx_only ? 0 : htons(ETH_P_ALL);
	sll.sll_ifindex = io->ifindex;
	if (bind(io->fd, (struct sockaddr *)&sll, sizeof(sll))) {
		err = -errno;
		pr_warn("pktio: bind to %s: %s\n", o->ifname, strerror(errno));
		goto fail;
	}
	if (o->promisc) {
		struct packet_mreq mr = { .mr_ifindex = io->ifindex, .mr_type = PACKET_MR_PROMISC };

		if (setsockopt(io->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr))) {
			err = -errno;
			pr_warn("pktio: promiscuous mode on %s: %s\n", o->ifname, strerror(errno));
			goto fail;
		}
	}
	strncpy(ifr.ifr_name, o->ifname, IFNAMSIZ - 1);
	if (ioctl(io->fd, SIOCGIFHWADDR, &ifr)) {
		err = -errno;
		pr_warn("pktio: MAC address of %s: %s\n", o->ifname, strerror(errno));
		goto fail;
	}
	memcpy(io->mac, ifr.ifr_hwaddr.sa_data, 6);
	*out = io;
	return 0;
fail:
	close(io->fd);
	free(io);
	return err;
}

void lh_pktio_close(struct lh_pktio *io)
{
	if (!io)
		return;
	close(io->fd);
	free(io);
}

uint64_t lh_pktio_tx_refused(const struct lh_pktio *io)
{
	return io->tx_refused;
}

uint64_t lh_pktio_drops(struct lh_pktio *io)
{
	struct tpacket_stats st = { 0 };
	socklen_t len = sizeof(st);

	if (!getsockopt(io->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len))
		io->drops += st.tp_drops;
	return io->drops;
}

int lh_pktio_fd(const struct lh_pktio *io)
{
	return io->fd;
}

int lh_pktio_ifindex(const struct lh_pktio *io)
{
	return io->ifindex;
}

const uint8_t *lh_pktio_mac(const struct lh_pktio *io)
{
	return io->mac;
}

/*
 * One message of one iovec per frame (n at most PKTIO_BATCH_MAX): the bytes
 * a frame holds (to send), or its room (rx: to receive into)
 */
static void frames_msgs(const struct lh_frame *frames, unsigned int n, bool rx,
			struct mmsghdr *msgs, struct iovec *iov)
{
	memset(msgs, 0, sizeof(msgs[0]) * n);
	for (unsigned int i = 0; i < n; i++) {
		iov[i].iov_base = frames[i].data;
		iov[i].iov_len = rx ? frames[i].cap : frames[i].len;
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
}

int lh_pktio_send(struct lh_pktio *io, const struct lh_frame *frames, unsigned int n)
{
	struct mmsghdr msgs[PKTIO_BATCH_MAX];
	struct iovec iov[PKTIO_BATCH_MAX];
	int r;

	if (n > PKTIO_BATCH_MAX)
		n = PKTIO_BATCH_MAX;
	frames_msgs(frames, n, false, msgs, iov);
	r = sendmmsg(io->fd, msgs, n, MSG_DONTWAIT);
	if (r < 0) {
		/*
		 * ENOBUFS: the egress path (a qdisc, a tc or netfilter egress
		 * drop) freed the first frame. It is gone as if lost on the wire;
		 * reporting it unsent would make the caller resend it forever
		 * under a drop rule.
		 */
		if (errno == ENOBUFS) {
			io->tx_refused++;
			return 1;
		}
		return errno == EAGAIN ? 0 : -errno;
	}
	return r;
}

int lh_pktio_recv(struct lh_pktio *io, struct lh_frame *frames, unsigned int n, int timeout_ms)
{
	struct mmsghdr msgs[PKTIO_BATCH_MAX];
	struct iovec iov[PKTIO_BATCH_MAX];
	struct pollfd pfd = { .fd = io->fd, .events = POLLIN };
	unsigned int i;
	int r;

	if (n > PKTIO_BATCH_MAX)
		n = PKTIO_BATCH_MAX;
	if (timeout_ms != 0) {
		r = poll(&pfd, 1, timeout_ms);
		if (r < 0)
			return errno == EINTR ? 0 : -errno;
		if (r == 0)
			return 0;
	}
	frames_msgs(frames, n, true, msgs, iov);
	r = recvmmsg(io->fd, msgs, n, MSG_DONTWAIT, NULL);
	if (r < 0)
		return (errno == EAGAIN || errno == EINTR) ? 0 : -errno;
	for (i = 0; i < (unsigned int)r; i++)
		frames[i].len = msgs[i].msg_len;
	return r;
}

int lh_udp_port_sink(int family, uint16_t port)
{
	static struct sock_filter drop_all[] = { BPF_STMT(BPF_RET | BPF_K, 0) };
	struct sock_fprog prog = { .len = 1, .filter = drop_all };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd, one = 1, err;

	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) ||
	    bind(fd, family == AF_INET6 ? (struct sockaddr *)&a6 : (struct sockaddr *)&a4,
		 family == AF_INET6 ? sizeof(a6) : sizeof(a4))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int lh_if_mtu(const char *ifname)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), mtu = -1;

	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (!ioctl(fd, SIOCGIFMTU, &ifr))
		mtu = ifr.ifr_mtu;
	close(fd);
	return mtu;
}
