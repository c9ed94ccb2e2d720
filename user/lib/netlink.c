// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Route and neighbour lookups over rtnetlink (RTM_GETROUTE, RTM_GETNEIGH). */
#include <errno.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "netlink.h"

#define NL_BUF 8192

struct nl_req {
	struct nlmsghdr nh;
	union {
		struct rtmsg rt;
		struct ndmsg nd;
	};
	char attrs[64];
};

static int addr_len(int family)
{
	return family == AF_INET6 ? 16 : family == AF_INET ? 4 : -1;
}

static void add_attr(struct nl_req *req, unsigned short type, const void *data, int len)
{
	struct rtattr *rta = (struct rtattr *)((char *)req + NLMSG_ALIGN(req->nh.nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, (size_t)len);
	req->nh.nlmsg_len = NLMSG_ALIGN(req->nh.nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

/*
 * Send one request and receive its answer into buf. Returns the length of the
 * answer message, or -errno from an NLMSG_ERROR.
 */
static int nl_transact(struct nl_req *req, char *buf, size_t cap)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct nlmsghdr *nh;
	int fd, len, err, one = 1;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	/* Errors come back with the request only, not with a copy of it */
	setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	req->nh.nlmsg_seq = 1;
	if (sendto(fd, req, req->nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = -errno;
		goto out;
	}
	len = (int)recv(fd, buf, cap, 0);
	if (len < 0) {
		err = -errno;
		goto out;
	}
	nh = (struct nlmsghdr *)buf;
	if (!NLMSG_OK(nh, (unsigned int)len)) {
		err = -EBADMSG;
		goto out;
	}
	if (nh->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr *e = NLMSG_DATA(nh);

		err = e->error ? e->error : -ENODATA;
		goto out;
	}
	err = len;
out:
	close(fd);
	return err;
}

int lh_nl_route_get(int family, const void *dst, int oif, struct lh_nl_route *r)
{
	struct nl_req req = { 0 };
	char buf[NL_BUF] = { 0 };
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	struct rtmsg *rt;
	struct rtattr *a;
	int alen = addr_len(family), len, attrlen;

	if (alen < 0)
		return -EAFNOSUPPORT;
	memset(r, 0, sizeof(*r));
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	req.nh.nlmsg_type = RTM_GETROUTE;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.rt.rtm_family = (unsigned char)family;
	req.rt.rtm_dst_len = (unsigned char)(alen * 8);
	add_attr(&req, RTA_DST, dst, alen);
	if (oif > 0)
		add_attr(&req, RTA_OIF, &oif, sizeof(oif));

	len = nl_transact(&req, buf, sizeof(buf));
	if (len < 0)
		return len;
	if (nh->nlmsg_type != RTM_NEWROUTE)
		return -EBADMSG;
	rt = NLMSG_DATA(nh);
	r->family = family;
	r->type = rt->rtm_type;
	attrlen = (int)RTM_PAYLOAD(nh);
	for (a = RTM_RTA(rt); RTA_OK(a, attrlen); a = RTA_NEXT(a, attrlen)) {
		switch (a->rta_type) {
		case RTA_OIF:
			memcpy(&r->ifindex, RTA_DATA(a), sizeof(int));
			break;
		case RTA_GATEWAY:
			if (RTA_PAYLOAD(a) == (unsigned int)alen) {
				memcpy(r->gateway, RTA_DATA(a), (size_t)alen);
				r->has_gateway = true;
			}
			break;
		case RTA_VIA:
			/* IPv4 through an IPv6 next hop: frames need that neighbour */
			return -EOPNOTSUPP;
		case RTA_PREFSRC:
			if (RTA_PAYLOAD(a) == (unsigned int)alen) {
				memcpy(r->prefsrc, RTA_DATA(a), (size_t)alen);
				r->has_prefsrc = true;
			}
			break;
		}
	}
	if (!r->ifindex)
		return -ENETUNREACH;
	if (!if_indextoname((unsigned int)r->ifindex, r->ifname))
		return -errno;
	return 0;
}

int lh_nl_neigh_get(int family, int ifindex, const void *addr, uint8_t mac[6])
{
	struct nl_req req = { 0 };
	char buf[NL_BUF] = { 0 };
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	struct ndmsg *nd;
	struct rtattr *a;
	int alen = addr_len(family), len, attrlen;
	bool have_mac = false;

	if (alen < 0)
		return -EAFNOSUPPORT;
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg));
	req.nh.nlmsg_type = RTM_GETNEIGH;
	req.nh.nlmsg_flags = NLM_F_REQUEST;
	req.nd.ndm_family = (unsigned char)family;
	req.nd.ndm_ifindex = ifindex;
	add_attr(&req, NDA_DST, addr, alen);

	len = nl_transact(&req, buf, sizeof(buf));
	if (len < 0)
		return len;
	if (nh->nlmsg_type != RTM_NEWNEIGH)
		return -EBADMSG;
	nd = NLMSG_DATA(nh);
	attrlen = (int)(nh->nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));
	for (a = (struct rtattr *)((char *)nd + NLMSG_ALIGN(sizeof(*nd))); RTA_OK(a, attrlen);
	     a = RTA_NEXT(a, attrlen)) {
		if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(mac, RTA_DATA(a), 6);
			have_mac = true;
		}
	}
	if (nd->ndm_state & NUD_FAILED)
		return -EHOSTUNREACH;
	if (nd->ndm_state & NUD_INCOMPLETE)
		return -EAGAIN;
	if (!have_mac)
		return nd->ndm_state & NUD_NOARP ? -EOPNOTSUPP : -EAGAIN;
	return 0;
}

int lh_nl_next_hop(int family, const void *dst, int oif, unsigned int wait_ms,
		   struct lh_nl_route *r, uint8_t mac[6])
{
	const struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	unsigned int waited = 0;
	const void *hop;
	int err;

	err = lh_nl_route_get(family, dst, oif, r);
	if (err)
		return err;
	if (r->type == RTN_LOCAL)
		return -EADDRNOTAVAIL;
	if (r->type != RTN_UNICAST)
		return -ENETUNREACH;
	hop = r->has_gateway ? (const void *)r->gateway : dst;
	for (;;) {
		err = lh_nl_neigh_get(family, r->ifindex, hop, mac);
		if ((err != -EAGAIN && err != -ENOENT) || waited >= wait_ms)
			return err;
		nanosleep(&tick, NULL);
		waited += 10;
	}
}
