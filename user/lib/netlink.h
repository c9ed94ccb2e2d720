/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The kernel's routing and neighbour tables over rtnetlink, for programs that
 * build whole Ethernet frames themselves (lhperf, lhwan): which interface and
 * next hop a destination goes through (RTM_GETROUTE, what `ip route get`
 * asks), and the next hop's MAC address (RTM_GETNEIGH).
 */
#ifndef LH_USER_NETLINK_H
#define LH_USER_NETLINK_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

/* What the kernel answers for a route lookup; addresses are in network order */
struct lh_nl_route {
	int family; /* AF_INET or AF_INET6 */
	int ifindex; /* output interface */
	char ifname[IF_NAMESIZE];
	bool has_gateway; /* false: the destination is on the link */
	uint8_t gateway[16];
	bool has_prefsrc; /* source address the kernel would pick */
	uint8_t prefsrc[16];
	uint8_t type; /* RTN_UNICAST, RTN_LOCAL ... */
};

/*
 * Look up the route to dst (4 or 16 bytes by family). oif > 0 restricts the
 * lookup to that interface, as `ip route get DST oif IFACE`. Returns 0 or
 * -errno (-ENETUNREACH, -EHOSTUNREACH ... from the kernel).
 */
int lh_nl_route_get(int family, const void *dst, int oif, struct lh_nl_route *r);

/*
 * MAC address of neighbour addr on ifindex. Returns 0 when the entry holds a
 * usable address (reachable, stale, permanent, delay, probe or noarp),
 * -ENOENT when there is no entry, -EAGAIN while it is being resolved
 * (incomplete) and -EHOSTUNREACH when resolution failed.
 */
int lh_nl_neigh_get(int family, int ifindex, const void *addr, uint8_t mac[6]);

/*
 * Route to dst plus the MAC address of its next hop (the gateway, or dst
 * itself on the link), waiting up to wait_ms for a neighbour entry that is
 * being resolved. Returns 0 or -errno; a local destination is -EADDRNOTAVAIL.
 */
int lh_nl_next_hop(int family, const void *dst, int oif, unsigned int wait_ms,
		   struct lh_nl_route *r, uint8_t mac[6]);

#endif /* LH_USER_NETLINK_H */
