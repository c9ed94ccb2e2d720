// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The credit agent's flows: found and made by key, their paths and upstream
 * hops, the credit each grant allows (lh_cr_grant), the held packets sent on
 * as credit comes, the end of a flow, and the program's records of new
 * flows.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "credit.h"
#include "credit_int.h"
#include "lh_credit.h"
#include "log.h"
#include "netlink.h"
#include "rsvp.h"
#include "rsvp_key.h"

/* every sender that passes is_neighbor() has a slot: none is ever refused for room */
_Static_assert(RSVP_REPLAY_SLOTS >= LHD_MAX_NEIGHBORS + LHD_MAX_CR_ROUTES,
	       "a replay slot per RSVP neighbour");

uint64_t ms_ns(uint32_t ms)
{
	return (uint64_t)ms * 1000000ull;
}

void key_v4(struct lh_qp_key *k, uint32_t src, uint32_t dst, uint32_t dqpn)
{
	memset(k, 0, sizeof(*k));
	lh_addr16_from_v4(k->saddr, src);
	lh_addr16_from_v4(k->daddr, dst);
	k->dqpn = dqpn;
}

static bool key_is_v4(const struct lh_qp_key *k)
{
	return lh_addr16_is_v4(k->saddr) && lh_addr16_is_v4(k->daddr);
}

static unsigned int key_hash(const struct lh_qp_key *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 16777619u;
	return h % CR_BUCKETS;
}

struct cr_flow *flow_find(struct cr_agent *a, const struct lh_qp_key *k)
{
	struct cr_flow *f;

	for (f = a->buckets[key_hash(k)]; f; f = f->next)
		if (!memcmp(&f->key, k, sizeof(*k)))
			return f;
	return NULL;
}

const char *ip4(uint32_t a, char *buf)
{
	return inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN);
}

/* Our address toward a neighbour: what the kernel would put as source */
uint32_t local_addr_to(uint32_t nb)
{
	struct lh_nl_route r;
	uint32_t a = 0;

	if (!lh_nl_route_get(AF_INET, &nb, 0, &r) && r.has_prefsrc)
		memcpy(&a, r.prefsrc, 4);
	return a;
}

bool is_neighbor(const struct cr_agent *a, uint32_t addr)
{
	int i;

	for (i = 0; i < a->cfg->n_rsvp_neighbors; i++)
		if (a->cfg->rsvp_neighbors[i] == addr)
			return true;
	for (i = 0; i < a->cfg->n_cr_routes; i++)
		if (a->cfg->cr_routes[i].nexthop == addr)
			return true;
	return false;
}

/* ------------------------------------------------------------ the maps */

void grant_write(struct cr_agent *a, struct cr_flow *f)
{
	if (bpf_map_update_elem(a->grant_fd, &f->key, &f->grant, BPF_ANY))
		pr_warn("credit: write lh_cr_grant: %s\n", strerror(errno));
}

int counted(struct cr_agent *a, const struct cr_flow *f, struct lh_cr_flow *out)
{
	return bpf_map_lookup_elem(a->flow_fd, &f->key, out);
}

void set_dead_end(struct cr_agent *a, struct cr_flow *f, bool dead)
{
	if (f->first || !f->nups || f->dead_end == dead)
		return;
	f->dead_end = dead;
	if (dead)
		send_path_err(a, f);
}

/* ------------------------------------------------------------ flows */

/*
 * The paths of flow f (toward f->dst): the most specific --credit-route
 * prefixes holding dst, in their order, but for next hop exclude_nh
 */
static void flow_paths(struct cr_agent *a, struct cr_flow *f, uint32_t exclude_nh)
{
	uint32_t dst = f->dst;
	uint8_t best = 0;
	int i;

	for (i = 0; i < a->cfg->n_cr_routes; i++) {
		const struct lhd_cr_route *r = &a->cfg->cr_routes[i];

		if ((dst & r->mask) == r->prefix && r->nexthop != exclude_nh && r->plen > best)
			best = r->plen;
	}
	for (i = 0; i < a->cfg->n_cr_routes && f->npaths < LH_CR_MAX_PATHS; i++) {
		const struct lhd_cr_route *r = &a->cfg->cr_routes[i];
		struct cr_path *p;

		if ((dst & r->mask) != r->prefix || r->nexthop == exclude_nh || r->plen != best)
			continue;
		p = &f->path[f->npaths];
		p->rt = r;
		p->local = local_addr_to(r->nexthop);
		f->grant.ifindex[f->npaths] = (uint32_t)r->ifc.ifindex;
		lh_addr16_from_v4(f->grant.nexthop[f->npaths], r->nexthop);
		f->npaths++;
	}
}

struct cr_flow *flow_new(struct cr_agent *a, uint32_t src, uint32_t dst, uint32_t dqpn,
			 bool first, uint32_t refresh_ms, uint32_t exclude_nh)
{
	struct cr_flow *f = calloc(1, sizeof(*f));
	int i;

	if (!f)
		return NULL;
	key_v4(&f->key, src, dst, dqpn);
	f->src = src;
	f->dst = dst;
	f->dqpn = dqpn;
	f->first = first;
	f->refresh_ms = refresh_ms;
	f->last_activity_ns = lh_now_ns();
	flow_paths(a, f, exclude_nh);
	f->grant.npaths = (uint32_t)f->npaths;
	f->grant.hold_cap = a->cfg->cr_buffer;
	if (!f->npaths) {
		/* no credit route onward: the last hop (or, at a first hop, nothing to control) */
		f->grant.state = first ? LH_CRS_OPEN : LH_CRS_LAST;
		f->phase = PH_RUN;
		if (first)
			a->c.flows_open++;
		else
			a->c.flows_last++;
	} else {
		f->grant.state = LH_CRS_PENDING;
		f->phase = PH_SETUP;
	}
	if (!first) {
		/* the program counts what a transit or last hop forwards from here on */
		struct lh_cr_flow zero = { .first_ns = lh_now_ns() };

		bpf_map_update_elem(a->flow_fd, &f->key, &zero, BPF_NOEXIST);
	}
	grant_write(a, f);
	f->next = a->buckets[key_hash(&f->key)];
	a->buckets[key_hash(&f->key)] = f;
	a->nflows++;
	a->c.flows_created++;
	if (first)
		a->c.flows_first++;
	for (i = 0; i < f->npaths; i++)
		send_path(a, f, i);
	return f;
}

void flow_free(struct cr_agent *a, struct cr_flow *f)
{
	struct cr_flow **pp = &a->buckets[key_hash(&f->key)];
	struct cr_pkt *q;

	while (*pp && *pp != f)
		pp = &(*pp)->next;
	if (*pp)
		*pp = f->next;
	while ((q = f->head)) {
		f->head = q->next;
		free(q);
	}
	bpf_map_delete_elem(a->grant_fd, &f->key);
	bpf_map_delete_elem(a->flow_fd, &f->key);
	a->nflows--;
	free(f);
}

/* Every path's End acknowledged (or given up on): the flow is gone */
void flow_ended(struct cr_agent *a, struct cr_flow *f)
{
	a->c.flows_ended++;
	flow_free(a, f);
}

/* Stop forwarding against credit: End on every path that answered, until End ACKs */
void flow_end(struct cr_agent *a, struct cr_flow *f)
{
	int i, pending = 0;

	f->phase = PH_ENDING;
	f->grant.state = LH_CRS_ENDING;
	grant_write(a, f);
	for (i = 0; i < f->npaths; i++) {
		struct cr_path *p = &f->path[i];

		p->tries = 0;
		p->end_acked = !p->answered && !p->alive;
		if (!p->end_acked) {
			send_end(a, f, i);
			pending++;
		}
	}
	if (!pending)
		flow_ended(a, f);
}

/* The best path that can carry the flow now: the first answered and alive */
int best_path(const struct cr_flow *f)
{
	for (int i = 0; i < f->npaths; i++)
		if (f->path[i].answered && f->path[i].alive)
			return i;
	return -1;
}

/* Send held packets while the active path has credit; in the OPEN state, all of them */
void release(struct cr_agent *a, struct cr_flow *f)
{
	struct lh_cr_flow cf;
	uint64_t sent;
	uint32_t p = f->grant.active;
	bool changed = false;

	if (!f->head || (f->grant.state != LH_CRS_ACTIVE && f->grant.state != LH_CRS_OPEN &&
			 f->grant.state != LH_CRS_ENDING))
		return;
	if (counted(a, f, &cf))
		return;
	sent = cf.sent[p];
	while (f->head) {
		struct cr_pkt *q = f->head;
		struct sockaddr_in sin = { .sin_family = AF_INET };

		if (f->grant.state == LH_CRS_ACTIVE && sent + q->len > f->grant.limit[p])
			break;
		memcpy(&sin.sin_addr, q->data + 16, 4);
		if (sendto(a->inj_fd, q->data, q->len, 0, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
			a->c.release_fail++;
			if (errno == ENOBUFS || errno == EAGAIN)
				break; /* the device queue is full: next tick */
		} else {
			a->c.released++;
		}
		sent += q->len;
		f->head = q->next;
		if (!f->head)
			f->tail = NULL;
		f->grant.released_bytes += q->len;
		f->grant.released_pkts++;
		f->queued--;
		f->queued_bytes -= q->len;
		free(q);
		changed = true;
	}
	if (changed)
		grant_write(a, f);
}

void activate(struct cr_agent *a, struct cr_flow *f, int p, uint64_t now)
{
	char b1[INET_ADDRSTRLEN], b2[INET_ADDRSTRLEN];

	f->grant.active = (uint32_t)p;
	f->grant.state = LH_CRS_ACTIVE;
	f->active_ns = now;
	f->nolive_since_ns = 0;
	if (f->phase == PH_SETUP)
		f->phase = PH_RUN;
	grant_write(a, f);
	pr_debug("credit: flow %s -> %s qp %u on path %d via %s\n", ip4(f->src, b1),
		 ip4(f->dst, b2), f->dqpn, p, f->path[p].rt->ifc.name);
	release(a, f);
}

/* the upstream hop and the path a message came by */

struct cr_up *up_of(struct cr_flow *f, uint32_t addr)
{
	for (int i = 0; i < f->nups; i++)
		if (f->up[i].addr == addr)
			return &f->up[i];
	return NULL;
}

int path_of(const struct cr_flow *f, uint32_t addr, uint32_t lih)
{
	if (lih < (uint32_t)f->npaths && f->path[lih].rt->nexthop == addr)
		return (int)lih;
	for (int i = 0; i < f->npaths; i++)
		if (f->path[i].rt->nexthop == addr)
			return i;
	return -1;
}

/* ------------------------------------------------------------ the program's records */

static struct cr_flow *first_hop_flow(struct cr_agent *a, const struct lh_qp_key *k)
{
	uint32_t src, dst;
	struct cr_flow *f = flow_find(a, k);

	if (f || !key_is_v4(k))
		return f;
	memcpy(&src, &k->saddr[12], 4);
	memcpy(&dst, &k->daddr[12], 4);
	return flow_new(a, src, dst, k->dqpn, true, a->cfg->heartbeat_ms, 0);
}

int on_record(void *ctx, void *data, size_t size)
{
	struct cr_agent *a = ctx;
	const struct lh_cr_event *ev = data;
	struct cr_flow *f;
	struct cr_pkt *q;

	if (size < offsetof(struct lh_cr_event, data))
		return 0;
	if (ev->type == LH_CR_EV_NEW) {
		first_hop_flow(a, &ev->key);
		return 0;
	}
	if (ev->type != LH_CR_EV_HOLD || ev->len < 20 || ev->len > LH_CR_DATA ||
	    size < offsetof(struct lh_cr_event, data) + ev->len)
		return 0;
	f = flow_find(a, &ev->key);
	if (!f) {
		/* held for a flow the agent does not know (it restarted): take it up */
		a->c.hold_unknown++;
		f = first_hop_flow(a, &ev->key);
		if (!f)
			return 0;
	}
	q = malloc(sizeof(*q) + ev->len);
	if (!q) {
		/* counted as released so the program does not wait for it forever */
		f->grant.released_pkts++;
		f->grant.released_bytes += ev->len;
		grant_write(a, f);
		return 0;
	}
	q->next = NULL;
	q->len = ev->len;
	memcpy(q->data, ev->data, ev->len);
	if (f->tail)
		f->tail->next = q;
	else
		f->head = q;
	f->tail = q;
	f->queued++;
	f->queued_bytes += ev->len;
	a->c.held++;
	f->last_activity_ns = lh_now_ns();
	release(a, f);
	return 0;
}
