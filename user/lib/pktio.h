/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Batched raw-frame I/O on one interface (AF_PACKET, sendmmsg/recvmmsg), for
 * programs that build whole frames themselves: lhperf (the RoCEv2 endpoint)
 * and lhwan (the WAN emulator). A faster backend may sit behind the same API.
 */
#ifndef LH_USER_PKTIO_H
#define LH_USER_PKTIO_H

#include <stdbool.h>
#include <stdint.h>

struct lh_pktio;

struct lh_pktio_opts {
	const char *ifname;
	bool roce_only; /* kernel-side filter: only UDP to port 4791 (IPv4/IPv6, untagged) */
	bool promisc; /* receive frames for other MAC addresses too */
	bool qdisc_bypass; /* PACKET_QDISC_BYPASS: skip the egress qdisc */
	bool rx_outgoing; /* also receive what this host sends (default: not) */
	/*
	 * Send only (protocol 0): the socket takes in no frame. One bound
	 * with ETH_P_ALL and never read gets a clone of every frame of its
	 * interface until its buffer is full, and the kernel's drop path for
	 * each after that.
	 */
	bool tx_only;
	int rcvbuf; /* SO_RCVBUF bytes, 0: 8 MiB */
	int sndbuf; /* SO_SNDBUF bytes, 0: 8 MiB */
};

/* One frame of a batch: data points to a buffer of cap bytes, len is used */
struct lh_frame {
	uint8_t *data;
	uint32_t len;
	uint32_t cap;
};

/* Returns 0 or -errno; logs what failed */
int lh_pktio_open(const struct lh_pktio_opts *opts, struct lh_pktio **out);
void lh_pktio_close(struct lh_pktio *io);
int lh_pktio_fd(const struct lh_pktio *io);
int lh_pktio_ifindex(const struct lh_pktio *io);
/* The interface's MAC address (6 bytes) */
const uint8_t *lh_pktio_mac(const struct lh_pktio *io);

/*
 * Send up to n frames; returns how many the kernel took (a short count when
 * its queue is full: retry the rest) or -errno. A frame the egress path drops
 * (qdisc, tc or netfilter egress rule) counts as taken: it is lost, as on a
 * wire.
 */
int lh_pktio_send(struct lh_pktio *io, const struct lh_frame *frames, unsigned int n);

/*
 * Receive up to n frames into the caller's buffers (len set on return).
 * Waits at most timeout_ms for the first (0: poll, -1: forever); returns the
 * number received, 0 on timeout, or -errno.
 */
int lh_pktio_recv(struct lh_pktio *io, struct lh_frame *frames, unsigned int n, int timeout_ms);

/*
 * Frames the kernel dropped for this socket since it was opened: its receive
 * buffer was full when they came (PACKET_STATISTICS tp_drops; a NIC's
 * rx_discards). The socket filter's refusals are not counted.
 */
uint64_t lh_pktio_drops(struct lh_pktio *io);

/*
 * Frames lh_pktio_send() counted as sent that the egress path refused
 * (ENOBUFS: a qdisc, a tc or netfilter drop, a full device queue): lost
 * at this end, as on a wire
 */
uint64_t lh_pktio_tx_refused(const struct lh_pktio *io);

/*
 * Bind a UDP socket to port on all addresses that accepts nothing (its socket
 * filter drops every datagram): frames that raw I/O handles then do not make
 * the kernel answer ICMP port unreachable. Returns the fd or -errno.
 */
int lh_udp_port_sink(int family, uint16_t port);

/* The MTU of interface ifname, -1 when it cannot be read */
int lh_if_mtu(const char *ifname);

#endif /* LH_USER_PKTIO_H */
