// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhperf's port: the interface its RoCEv2 frames leave and arrive on, found
 * like a NIC driver would: the route to the peer gives the interface and the
 * next hop, the neighbour table that hop's MAC address; the IP addresses are
 * those of the side channel (the kernel picked the source for the same
 * route). Frames go out in batches through user/lib/pktio.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lhperf.h"
#include "log.h"
#include "netlink.h"

#define NEIGH_WAIT_MS 1000
/* IPv6 + UDP + BTH + RETH + ICRC: the most header a data packet carries */
#define ROCE_MAX_OVERHEAD (40 + 8 + 12 + 16 + 4)
#define RCVBUF_MIN (8 << 20)
#define RCVBUF_MAX (512 << 20)

static int alloc_frames(struct lh_frame *f, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		f[i].data = malloc(LHP_FRAME_CAP);
		if (!f[i].data)
			return -ENOMEM;
		f[i].cap = LHP_FRAME_CAP;
		f[i].len = 0;
	}
	return 0;
}

/*
 * pktio binds its socket to every protocol (ETH_P_ALL): such sockets see a
 * frame before the tc and netfilter ingress hooks. Bound to the run's IP
 * ethertype instead, lhperf receives after them, as rxe (behind the UDP
 * stack) does: loss injected at ingress (nftables, tc) is then loss on the
 * wire for it. Outgoing frames also get the right skb protocol.
 */
static int bind_after_ingress(struct lhp_port *pt)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(pt->family == AF_INET6 ? ETH_P_IPV6 : ETH_P_IP),
		.sll_ifindex = lh_pktio_ifindex(pt->io),
	};

	if (bind(lh_pktio_fd(pt->io), (struct sockaddr *)&sll, sizeof(sll))) {
		pr_warn("binding the packet socket on %s: %s\n", pt->ifname, strerror(errno));
		return -errno;
	}
	return 0;
}

/* The interface and next hop toward the peer, as the route and neighbour table say */
static int port_next_hop(struct lhp_port *pt, const struct lhp_opts *o, unsigned int mtu,
			 bool *gateway)
{
	struct lh_nl_route rt;
	char peer[INET6_ADDRSTRLEN];
	int oif = 0, err, ifmtu;

	inet_ntop(pt->family, &pt->peer, peer, sizeof(peer));
	if (o->dev) {
		oif = (int)if_nametoindex(o->dev);
		if (!oif) {
			pr_warn("no interface %s\n", o->dev);
			return -ENODEV;
		}
	}
	err = lh_nl_next_hop(pt->family, &pt->peer, oif, NEIGH_WAIT_MS, &rt, pt->hop_mac);
	if (err) {
		if (err == -EADDRNOTAVAIL)
			pr_warn("peer %s is a local address: lhperf needs a peer behind an interface\n",
				peer);
		else if (err == -EAGAIN || err == -ENOENT || err == -EHOSTUNREACH)
			pr_warn("no MAC address for the next hop to %s%s%s: %s\n", peer,
				rt.ifname[0] ? " on " : "", rt.ifname,
				err == -EHOSTUNREACH ? "neighbour resolution failed" :
						       "no neighbour entry");
		else
			pr_warn("no route to %s%s%s: %s\n", peer, o->dev ? " through " : "",
				o->dev ? o->dev : "", strerror(-err));
		return err;
	}
	memcpy(pt->ifname, rt.ifname, sizeof(pt->ifname));
	*gateway = rt.has_gateway;
	ifmtu = lh_if_mtu(pt->ifname);
	if (ifmtu > 0 && (unsigned int)ifmtu < mtu + ROCE_MAX_OVERHEAD) {
		pr_warn("%s has MTU %d: a RoCE MTU of %u needs at least %u\n", pt->ifname, ifmtu,
			mtu, mtu + ROCE_MAX_OVERHEAD);
		return -EMSGSIZE;
	}
	return 0;
}

/* The packet socket, bound after ingress, the UDP 4791 sink and the frames of a batch */
static int port_sockets(struct lhp_port *pt, const struct lhp_opts *o, unsigned int mtu,
			unsigned int nqps, unsigned int window)
{
	struct lh_pktio_opts po = { 0 };
	uint64_t rcvbuf;
	int err;

	/* Enough socket buffer for every QP's full window of frames (truesize ~ 2x) */
	rcvbuf = (uint64_t)nqps * window * (mtu + 1024) * 2;
	rcvbuf = rcvbuf < RCVBUF_MIN ? RCVBUF_MIN : rcvbuf > RCVBUF_MAX ? RCVBUF_MAX : rcvbuf;
	po.ifname = pt->ifname;
	po.roce_only = true;
	po.qdisc_bypass = o->qdisc_bypass;
	po.rcvbuf = (int)rcvbuf;
	err = lh_pktio_open(&po, &pt->io);
	if (err)
		return err;
	err = bind_after_ingress(pt);
	if (err)
		return err;
	memcpy(pt->local_mac, lh_pktio_mac(pt->io), 6);
	pt->sink_fd = lh_udp_port_sink(pt->family, ROCEV2_UDP_PORT);
	if (pt->sink_fd < 0)
		pr_debug("UDP %d sink: %s (another one may hold the port)\n", ROCEV2_UDP_PORT,
			 strerror(-pt->sink_fd));
	if (alloc_frames(pt->tx, pt->batch) || alloc_frames(pt->rx, pt->batch))
		return -ENOMEM;
	return 0;
}

int lhp_port_open(struct lhp_port *pt, const struct lhp_opts *o, const struct lhp_ctrl *c,
		  unsigned int mtu, unsigned int nqps, unsigned int window)
{
	bool gateway = false;
	int err;

	memset(pt, 0, sizeof(*pt));
	pt->sink_fd = -1;
	pt->family = c->family;
	pt->local = c->local;
	pt->peer = c->peer;
	pt->tos = (uint8_t)o->tos;
	pt->batch = o->batch;
	pt->ip_id = (uint16_t)lhp_random64();
	err = port_next_hop(pt, o, mtu, &gateway);
	if (err)
		return err;
	err = port_sockets(pt, o, mtu, nqps, window);
	if (err) {
		lhp_port_close(pt);
		return err;
	}
	pr_debug("port %s: next hop %02x:%02x:%02x:%02x:%02x:%02x%s\n", pt->ifname,
		 pt->hop_mac[0], pt->hop_mac[1], pt->hop_mac[2], pt->hop_mac[3], pt->hop_mac[4],
		 pt->hop_mac[5], gateway ? " (gateway)" : "");
	return 0;
}

void lhp_port_close(struct lhp_port *pt)
{
	unsigned int i;

	for (i = 0; i < LHP_MAX_BATCH; i++) {
		free(pt->tx[i].data);
		free(pt->rx[i].data);
		pt->tx[i].data = pt->rx[i].data = NULL;
	}
	if (pt->sink_fd >= 0)
		close(pt->sink_fd);
	pt->sink_fd = -1;
	lh_pktio_close(pt->io);
	pt->io = NULL;
}

void lhp_port_spec(const struct lhp_port *pt, struct lh_pkt_spec *s, uint16_t sport,
		   uint32_t dqpn)
{
	lh_pkt_spec_init(s, pt->family);
	memcpy(s->dst_mac, pt->hop_mac, 6);
	memcpy(s->src_mac, pt->local_mac, 6);
	s->src = pt->local;
	s->dst = pt->peer;
	s->tos = pt->tos;
	s->sport = sport;
	s->roce.dqpn = dqpn;
	s->roce.pkey = LHP_PKEY;
}

struct lh_frame *lhp_port_tx_slot(struct lhp_port *pt)
{
	if (pt->tx_n == pt->batch)
		return NULL;
	return &pt->tx[pt->tx_n++];
}

int lhp_port_flush(struct lhp_port *pt)
{
	while (pt->tx_done < pt->tx_n) {
		int r = lh_pktio_send(pt->io, pt->tx + pt->tx_done, pt->tx_n - pt->tx_done);

		if (r < 0)
			return r;
		if (r == 0)
			return 0; /* the kernel's queue is full: the rest goes next time */
		pt->tx_done += (unsigned int)r;
		pt->frames_tx += (unsigned int)r;
	}
	pt->tx_n = pt->tx_done = 0;
	return 0;
}

int lhp_port_tx_slot_flushed(struct lhp_port *pt, struct lh_frame **f)
{
	int err;

	*f = lhp_port_tx_slot(pt);
	if (*f)
		return 0;
	err = lhp_port_flush(pt);
	if (err)
		return err;
	*f = lhp_port_tx_slot(pt);
	return *f ? 0 : -EAGAIN;
}

/* A parsed frame's addresses are the QP's: from the peer, to this port */
static bool port_addr_ok(const struct lhp_port *pt, const struct lh_pkt *p)
{
	size_t n = pt->family == AF_INET6 ? 16 : 4;

	return p->family == pt->family && !memcmp(&p->dst, &pt->local, n) &&
	       !memcmp(&p->src, &pt->peer, n);
}

int lhp_port_rx_check(const struct lhp_port *pt, const struct lh_frame *f, uint32_t qpn_base,
		      uint32_t nqps, bool (*opcode_ok)(const struct lh_pkt *p),
		      struct lhp_rx_drops *d, struct lh_pkt *p)
{
	uint32_t idx;

	if (lh_pkt_parse(f->data, f->len, true, p) != LH_STAT_ROCE) {
		d->not_roce++;
		return -1;
	}
	idx = p->roce.dqpn - qpn_base;
	if (idx >= nqps) {
		d->unknown_qp++;
		return -1;
	}
	if (!opcode_ok(p)) {
		d->bad_opcode++;
		return -1;
	}
	if (!port_addr_ok(pt, p)) {
		d->addr_errors++;
		return -1;
	}
	if (p->roce.pkey != LHP_PKEY) {
		d->pkey_errors++;
		return -1;
	}
	if (!lh_pkt_icrc_ok(f->data, p)) {
		d->icrc_errors++;
		return -1;
	}
	return (int)idx;
}
