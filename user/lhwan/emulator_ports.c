// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The emulator's two ports: AF_PACKET sockets on each, and the frames they
 * read put back as the wire had them (VLAN tag, finished checksum).
 */
#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_packet.h>

#include "bytes.h"
#include "emulator_int.h"
#include "lhwan.h"
#include "log.h"
#include "pkt.h"
#include "pktio.h"

/* the interface's MTU, 1500 when it cannot be read */
static unsigned int iface_mtu(const char *name)
{
	int mtu = lh_if_mtu(name);

	return mtu > 0 ? (unsigned int)mtu : 1500;
}

int open_ports(struct emu *e)
{
	int i, err;

	for (i = 0; i < 2; i++) {
		struct port *p = &e->port[i];
		struct lh_pktio_opts o = {
			.ifname = p->name,
			.promisc = true,
			/* the wan namespace has no qdisc to honour */
			.qdisc_bypass = true,
			.rcvbuf = 32 << 20,
			.sndbuf = 32 << 20,
		};

		err = lh_pktio_open(&o, &p->io);
		if (err) {
			pr_warn("cannot open port %s: %s\n", p->name, strerror(-err));
			return err;
		}
		p->ifindex = lh_pktio_ifindex(p->io);
		/* VLAN tag and checksum state of each frame (fix_frame) */
		setsockopt(lh_pktio_fd(p->io), SOL_PACKET, PACKET_AUXDATA, &(int){1}, sizeof(int));
		p->mtu = iface_mtu(p->name);
		p->xdp_fd = 0;
		if (!e->no_xdp) {
			p->xdp_fd = xdp_pass_attach(p->ifindex);
			if (p->xdp_fd < 0) {
				pr_debug("XDP pass program on %s: %s (continuing without)\n",
					 p->name, strerror(-p->xdp_fd));
				p->xdp_fd = 0;
			}
		}
	}
	return 0;
}

/* Both ports closed, the XDP pass programs of ours taken off */
void close_ports(struct emu *e)
{
	int i;

	for (i = 0; i < 2; i++) {
		xdp_pass_detach(e->port[i].ifindex, e->port[i].xdp_fd);
		lh_pktio_close(e->port[i].io);
	}
}

/*
 * A frame the sending host's kernel left for checksum offload (veth keeps
 * CHECKSUM_PARTIAL) carries only the pseudo-header sum in its TCP/UDP
 * checksum. A real wire never does: finish the checksum here, or the far
 * host drops the frame. IPv4 without fragments and IPv6 without extension
 * headers cover what crosses the test world.
 */
static void csum_complete(uint8_t *f, uint32_t len)
{
	uint32_t off = 12, l4, l4len, sum = 0, i, csum_off;
	uint16_t proto, csum;
	uint8_t ipproto;
	int tags = 0;

	proto = get16(f + off);
	while ((proto == 0x8100 || proto == 0x88a8) && tags++ < 2 && off + 6 <= len) {
		off += 4;
		proto = get16(f + off);
	}
	off += 2;
	if (proto == 0x0800 && off + 20 <= len) {
		if (get16(f + off + 6) & 0x3fff)
			return;
		l4 = off + (f[off] & 0xf) * 4u;
		ipproto = f[off + 9];
		l4len = get16(f + off + 2) - (l4 - off);
		for (i = 0; i < 8; i += 2)
			sum += get16(f + off + 12 + i);
	} else if (proto == 0x86dd && off + 40 <= len) {
		l4 = off + 40;
		ipproto = f[off + 6];
		l4len = get16(f + off + 4);
		for (i = 0; i < 32; i += 2)
			sum += get16(f + off + 8 + i);
	} else {
		return;
	}
	if (l4 + l4len > len)
		return;
	if (ipproto == 17 && l4len >= 8)
		csum_off = 6;
	else if (ipproto == 6 && l4len >= 20)
		csum_off = 16;
	else
		return;
	sum += ipproto + l4len;
	put16(f + l4 + csum_off, 0);
	csum = lh_inet_csum(f + l4, l4len, sum);
	if (ipproto == 17 && !csum)
		csum = 0xffff; /* UDP: 0 means "no checksum" */
	put16(f + l4 + csum_off, csum);
}

/*
 * Put back what AF_PACKET took out of the frame: the VLAN tag (offloaded
 * into metadata) and an unfinished checksum. Returns the new length.
 */
uint32_t fix_frame(uint8_t *f, uint32_t len, uint32_t cap, const struct tpacket_auxdata *aux)
{
	if ((aux->tp_status & TP_STATUS_VLAN_VALID) && len >= 14 && len + 4 <= cap) {
		uint16_t tpid =
			(aux->tp_status & TP_STATUS_VLAN_TPID_VALID) ? aux->tp_vlan_tpid : 0x8100;

		memmove(f + 16, f + 12, len - 12);
		f[12] = (uint8_t)(tpid >> 8);
		f[13] = (uint8_t)tpid;
		f[14] = (uint8_t)(aux->tp_vlan_tci >> 8);
		f[15] = (uint8_t)aux->tp_vlan_tci;
		len += 4;
	}
	if (aux->tp_status & TP_STATUS_CSUMNOTREADY)
		csum_complete(f, len);
	return len;
}

/* recvmmsg on the port's AF_PACKET socket with PACKET_AUXDATA */
int port_recv(struct port *p, struct lh_frame *f, struct tpacket_auxdata *aux, unsigned int n)
{
	char cbuf[RX_BATCH][CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	struct mmsghdr msgs[RX_BATCH];
	struct iovec iov[RX_BATCH];
	struct cmsghdr *cm;
	unsigned int i;
	int r;

	memset(msgs, 0, sizeof(msgs[0]) * n);
	for (i = 0; i < n; i++) {
		iov[i].iov_base = f[i].data;
		iov[i].iov_len = f[i].cap;
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
		msgs[i].msg_hdr.msg_control = cbuf[i];
		msgs[i].msg_hdr.msg_controllen = sizeof(cbuf[i]);
	}
	r = recvmmsg(lh_pktio_fd(p->io), msgs, n, MSG_DONTWAIT, NULL);
	if (r < 0)
		return (errno == EAGAIN || errno == EINTR) ? 0 : -errno;
	for (i = 0; i < (unsigned int)r; i++) {
		f[i].len = msgs[i].msg_len;
		memset(&aux[i], 0, sizeof(aux[i]));
		if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC)
			f[i].len = f[i].cap; /* counted as oversize */
		for (cm = CMSG_FIRSTHDR(&msgs[i].msg_hdr); cm;
		     cm = CMSG_NXTHDR(&msgs[i].msg_hdr, cm))
			if (cm->cmsg_level == SOL_PACKET && cm->cmsg_type == PACKET_AUXDATA)
				memcpy(&aux[i], CMSG_DATA(cm), sizeof(aux[i]));
	}
	return r;
}
