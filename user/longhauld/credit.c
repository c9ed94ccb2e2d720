// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Credit-based flow control, the agent's half (docs/rsvp.md "What a hop
 * does"). Per flow (an RC data direction, keyed as lh_qp):
 *
 *   upstream hops  the neighbours whose Path init reached us (none at a first
 *                  hop, where the program saw the flow come in from the DC):
 *                  each gets an initial Reserve, then a Reserve whenever a
 *                  quantum was forwarded, R/4 after any forwarding, and at
 *                  least every R (heartbeat); credit limit = buffer + bytes
 *                  forwarded (the program's fwd_bytes); each Reserve also says
 *                  how much of the flow this hop took in (Accepted)
 *   paths          the --credit-route next hops toward the destination, in
 *                  order of preference: a Path init flooded on each (re-sent
 *                  until its initial Reserve), the first path's answer (or
 *                  the best answered after R) makes it active; none answered
 *                  within 3R after its last Reserve: failed, the flow moves
 *                  to the best live path; none live for 10R: fail open;
 *                  every R while the flow sends (R/4 while it holds), a probe (a Path
 *                  with a PROBE Credit) whose answer's Accepted, against what
 *                  we had sent on the path when probing, gives back the
 *                  credit of packets lost on the way (docs/rsvp.md)
 *   held packets   what the program could not send against credit, in order:
 *                  sent on by this agent (raw IP, LH_CR_MARK) as credit comes
 *
 * The first hop ends a flow idle for --credit-idle: End flooded on every
 * path, re-sent until End ACK; each hop answers End ACK, floods it on and
 * drops its state. State nobody ends (an upstream that vanished) expires
 * after 4 x idle without packets or messages.
 *
 * With --rsvp-key-file every message sent carries RFC 2747's INTEGRITY and
 * every one received must verify, with a sequence number above the last
 * accepted from its sender, before it touches any state (docs/rsvp.md).
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
#include "credit_tc.skel.h"
#include "credit_int.h"
#include "lh_credit.h"
#include "log.h"
#include "netlink.h"
#include "rsvp.h"
#include "rsvp_key.h"

/* ------------------------------------------------------------ timers */

static void tick_up(struct cr_agent *a, struct cr_flow *f, const struct lh_cr_flow *cf,
		    uint64_t now)
{
	uint64_t R = ms_ns(f->refresh_ms), fwd = cf->fwd_bytes;

	if (f->dead_end)
		return; /* silence: the upstream hops' heartbeat timers expire too */
	for (int i = 0; i < f->nups; i++) {
		struct cr_up *u = &f->up[i];
		uint64_t fresh = fwd - u->returned, idle = now - u->last_tx_ns;

		if (fresh >= a->cfg->cr_quantum || (fresh && idle >= R / 4) || idle >= R)
			send_reserve(a, f, u, cf, false, 0);
	}
}

/*
 * Probe the active path every R while the flow sent on it since the last
 * answered probe, every R/4 while it holds packets (credit lost on the way
 * may be what they wait for). An unanswered probe is replaced by the next.
 */
static void tick_probe(struct cr_agent *a, struct cr_flow *f, const struct lh_cr_flow *cf,
		       uint64_t now)
{
	uint32_t i = f->grant.active;
	struct cr_path *p;

	if (f->grant.state != LH_CRS_ACTIVE || i >= (uint32_t)f->npaths)
		return;
	p = &f->path[i];
	if (!p->answered || !p->alive || now < p->next_probe_ns)
		return;
	if (cf->sent[i] == p->probe_acked_sent && !f->head)
		return;
	p->next_probe_ns = now + ms_ns(f->refresh_ms) / (f->head ? 4 : 1);
	send_probe(a, f, (int)i, cf->sent[i]);
}

/*
 * Path i's timers: its Path init re-sent until answered (or given up on),
 * and its failure after H without a Reserve. true: it failed now.
 */
static bool tick_path(struct cr_agent *a, struct cr_flow *f, int i, uint64_t now)
{
	uint64_t R = ms_ns(f->refresh_ms), H = CR_HEARTBEAT_MISSES * R;
	char b1[INET_ADDRSTRLEN], b2[INET_ADDRSTRLEN];
	struct cr_path *p = &f->path[i];

	if (!p->answered && !p->failed && now >= p->next_try_ns) {
		if (p->tries >= CR_SETUP_TRIES) {
			p->failed = true;
			a->c.path_given_up++;
		} else {
			send_path(a, f, i);
		}
	}
	if (!p->alive || now - p->last_heard_ns <= H)
		return false;
	p->alive = false;
	f->grant.alive[i] = 0;
	a->c.path_failures++;
	pr_info("credit: flow %s -> %s qp %u: no Reserve from %s for %llu ms: path %d failed\n",
		ip4(f->src, b1), ip4(f->dst, b2), f->dqpn, p->rt->ifc.name,
		(unsigned long long)((now - p->last_heard_ns) / 1000000), i);
	/* its next Path init is a re-setup: a hop that comes back answers INIT */
	p->answered = false;
	p->tries = 0;
	p->next_try_ns = now + R;
	return true;
}

/* No path can carry the flow (b < 0): a transit hop says so upstream when it lost its path */
static void tick_dead_end(struct cr_agent *a, struct cr_flow *f)
{
	bool all_failed = true;

	for (int i = 0; i < f->npaths; i++)
		all_failed &= f->path[i].failed;
	/* lost the path it had, or none ever answered */
	if (all_failed || (f->grant.state == LH_CRS_ACTIVE && !f->path[f->grant.active].alive))
		set_dead_end(a, f, true);
}

/*
 * A flow waiting for a path (PENDING): best path b taken when it is the
 * preferred one or R after the first answer; with none for 10 R, fail open.
 * true: the grant was written.
 */
static bool tick_pending(struct cr_agent *a, struct cr_flow *f, int b, uint64_t now)
{
	uint64_t R = ms_ns(f->refresh_ms);
	char b1[INET_ADDRSTRLEN], b2[INET_ADDRSTRLEN];

	if (b >= 0 && (b == 0 || now - f->first_answer_ns >= R)) {
		activate(a, f, b, now);
		return true;
	}
	if (!f->nolive_since_ns)
		f->nolive_since_ns = now;
	if (now - f->nolive_since_ns < CR_NOLIVE_OPEN_R * R)
		return false;
	f->grant.state = LH_CRS_OPEN; /* fail open: nothing lost, nothing controlled */
	a->c.flows_open++;
	pr_warn("credit: flow %s -> %s qp %u: no path answers: passed uncontrolled\n",
		ip4(f->src, b1), ip4(f->dst, b2), f->dqpn);
	grant_write(a, f);
	release(a, f);
	return true;
}

/* The flow's paths: their timers, then which carries the flow (failover, hold, fail open) */
static void tick_paths(struct cr_agent *a, struct cr_flow *f, uint64_t now)
{
	bool changed = false;
	int i, b;

	for (i = 0; i < f->npaths; i++)
		changed |= tick_path(a, f, i, now);
	b = best_path(f);
	if (b < 0 && f->npaths)
		tick_dead_end(a, f);
	if (f->grant.state == LH_CRS_ACTIVE && !(f->path[f->grant.active].alive)) {
		if (b >= 0) {
			a->c.failovers++;
			pr_info("credit: flow qp %u moves to path %d (%s)\n", f->dqpn, b,
				f->path[b].rt->ifc.name);
			activate(a, f, b, now);
			return;
		}
		f->grant.state = LH_CRS_PENDING; /* hold until a path lives again */
		f->nolive_since_ns = now;
		changed = true;
	}
	if (f->grant.state == LH_CRS_PENDING && tick_pending(a, f, b, now))
		return;
	if (changed)
		grant_write(a, f);
}

static void tick_end(struct cr_agent *a, struct cr_flow *f, uint64_t now)
{
	int i, pending = 0;

	for (i = 0; i < f->npaths; i++) {
		struct cr_path *p = &f->path[i];

		if (p->end_acked)
			continue;
		if (now >= p->next_try_ns) {
			if (p->tries >= CR_END_TRIES) {
				p->end_acked = true; /* given up: that hop expires the flow itself */
				continue;
			}
			send_end(a, f, i);
		}
		pending++;
	}
	if (!pending)
		flow_ended(a, f);
}

static void tick(struct cr_agent *a)
{
	uint64_t now = lh_now_ns(), idle = ms_ns(a->cfg->cr_idle_ms);

	for (unsigned int b = 0; b < CR_BUCKETS; b++) {
		struct cr_flow *f = a->buckets[b], *next;

		for (; f; f = next) {
			struct lh_cr_flow cf = { 0 };
			uint64_t pkts;

			next = f->next;
			if (f->phase == PH_ENDING) {
				tick_end(a, f, now);
				continue;
			}
			counted(a, f, &cf);
			pkts = cf.fwd_pkts + cf.held_pkts;
			if (pkts != f->last_pkts) {
				f->last_pkts = pkts;
				f->last_activity_ns = now;
			}
			tick_up(a, f, &cf, now);
			tick_paths(a, f, now);
			tick_probe(a, f, &cf, now);
			release(a, f);
			if (f->head)
				continue;
			if (f->first && now - f->last_activity_ns >= idle) {
				flow_end(a, f);
			} else if (!f->first && now - f->last_activity_ns >= 4 * idle) {
				a->c.flows_expired++; /* nobody ended it: its upstream vanished */
				flow_free(a, f);
			}
		}
	}
}

/* ------------------------------------------------------------ run */

static void print_counters(const struct cr_agent *a)
{
	char line[4096];
	size_t o = 0;
	int e;

#define CR_CNT_PRINT(n) \
	o += (size_t)snprintf(line + o, sizeof(line) - o, "%s\"%s\":%llu", o > 1 ? "," : "", #n, \
			      (unsigned long long)a->c.n);
	o += (size_t)snprintf(line + o, sizeof(line) - o, "{");
	CR_COUNTERS(CR_CNT_PRINT)
#undef CR_CNT_PRINT
	o += (size_t)snprintf(line + o, sizeof(line) - o, ",\"refused\":{");
	for (e = 1; e < RSVP_ERR_MAX; e++)
		o += (size_t)snprintf(line + o, sizeof(line) - o, "%s\"%s\":%llu", e > 1 ? "," : "",
				      rsvp_err_name((enum rsvp_err)e),
				      (unsigned long long)a->c.refused[e]);
	snprintf(line + o, sizeof(line) - o, "},\"flows_left\":%u}", a->nflows);
	pr_info("credit agent: %s\n", line);
}

static int open_sockets(struct cr_agent *a)
{
	int one = 1, ttl = 255;
	uint32_t mark = LH_CR_MARK;

	a->rsvp_fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, RSVP_IPPROTO);
	a->inj_fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (a->rsvp_fd < 0 || a->inj_fd < 0)
		return -errno;
	if (setsockopt(a->rsvp_fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl)) ||
	    setsockopt(a->inj_fd, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one)) ||
	    setsockopt(a->inj_fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)))
		return -errno;
	return 0;
}

/* The ring buffer of the program's records, the tick timer, and the epoll set of both and RSVP */
static bool open_events(struct cr_agent *a, struct lhd_datapath *dp)
{
	struct itimerspec its = { .it_interval.tv_nsec = (long)CR_TICK_US * 1000 };
	struct epoll_event ev = { .events = EPOLLIN };

	a->rb = ring_buffer__new(lhd_map_fd(dp->sk.credit_tc->maps.lh_cr_events), on_record, a,
				 NULL);
	a->tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	a->ep_fd = epoll_create1(EPOLL_CLOEXEC);
	if (!a->rb || a->tick_fd < 0 || a->ep_fd < 0) {
		pr_warn("credit: ring buffer lh_cr_events / timer: %s\n", strerror(errno));
		return false;
	}
	its.it_value = its.it_interval;
	timerfd_settime(a->tick_fd, 0, &its, NULL);
	ev.data.fd = a->tick_fd;
	epoll_ctl(a->ep_fd, EPOLL_CTL_ADD, a->tick_fd, &ev);
	ev.data.fd = a->rsvp_fd;
	epoll_ctl(a->ep_fd, EPOLL_CTL_ADD, a->rsvp_fd, &ev);
	ev.data.fd = ring_buffer__epoll_fd(a->rb);
	epoll_ctl(a->ep_fd, EPOLL_CTL_ADD, ev.data.fd, &ev);
	return true;
}

/* The agent's maps, key, sockets, ring buffer and timer; false (said) when one fails */
static bool credit_open(struct cr_agent *a, struct lhd_datapath *dp)
{
	const struct lhd_config *cfg = a->cfg;
	int err;

	a->flow_fd = lhd_map_fd(dp->sk.credit_tc->maps.lh_cr_flow);
	a->grant_fd = lhd_map_fd(dp->sk.credit_tc->maps.lh_cr_grant);
	if (a->flow_fd < 0 || a->grant_fd < 0)
		return false; /* said by lhd_map_fd() */
	a->epoch = (uint32_t)(lh_now_ns() >> 20) & 0xffffff;
	if (cfg->rsvp_key_len) {
		a->keyed =
			!rsvp_key_init(&a->key, cfg->rsvp_key_id, cfg->rsvp_key, cfg->rsvp_key_len);
		if (!a->keyed) {
			pr_warn("credit: RSVP key id %llu refused\n",
				(unsigned long long)cfg->rsvp_key_id);
			return false;
		}
		pr_info("credit: RSVP signed and verified: INTEGRITY (RFC 2747, HMAC-MD5), key id "
			"%llu\n",
			(unsigned long long)cfg->rsvp_key_id);
	}
	err = open_sockets(a);
	if (err) {
		pr_warn("credit: raw sockets (RSVP, protocol 46; held packets): %s\n", strerror(-err));
		return false;
	}
	return open_events(a, dp);
}

/* The paths and the credit rules the agent runs with */
static void credit_announce(const struct lhd_config *cfg)
{
	char b1[INET_ADDRSTRLEN], b2[INET_ADDRSTRLEN];

	for (int i = 0; i < cfg->n_cr_routes; i++)
		pr_info("credit: path %d toward %s/%u via %s on %s\n", i,
			ip4(cfg->cr_routes[i].prefix, b1), cfg->cr_routes[i].plen,
			ip4(cfg->cr_routes[i].nexthop, b2), cfg->cr_routes[i].ifc.name);
	pr_info("credit: buffer %u bytes per flow, credit returned per %u bytes, heartbeat %u ms\n",
		cfg->cr_buffer, cfg->cr_quantum, cfg->heartbeat_ms);
}

/* RSVP messages waiting, at most 64 at a time so that the timer is not starved */
static void rsvp_drain(struct cr_agent *a)
{
	for (int j = 0; j < 64; j++) {
		struct pollfd pfd = { .fd = a->rsvp_fd, .events = POLLIN };

		if (poll(&pfd, 1, 0) <= 0)
			break;
		on_rsvp(a);
	}
}

/* Until *stop: the timer, RSVP and the ring buffer, as they wake */
static void credit_loop(struct cr_agent *a, volatile int *stop)
{
	uint64_t ticks;

	while (!*stop) {
		struct epoll_event out[4];
		int n = epoll_wait(a->ep_fd, out, 4, 200);

		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++) {
			if (out[i].data.fd == a->tick_fd) {
				if (read(a->tick_fd, &ticks, sizeof(ticks)) > 0)
					tick(a);
			} else if (out[i].data.fd == a->rsvp_fd) {
				rsvp_drain(a);
			} else {
				ring_buffer__consume(a->rb);
			}
		}
	}
}

/* Stopping: tell the hops downstream, once, so that no state outlives us there */
static void end_first_flows(struct cr_agent *a)
{
	for (unsigned int i = 0; i < CR_BUCKETS; i++)
		for (struct cr_flow *f = a->buckets[i]; f; f = f->next)
			for (int j = 0; f->first && f->phase != PH_ENDING && j < f->npaths; j++)
				if (f->path[j].answered) {
					f->path[j].tries = 0; /* a first End, not a retry */
					send_end(a, f, j);
				}
}

static void credit_close(struct cr_agent *a)
{
	for (unsigned int i = 0; i < CR_BUCKETS; i++)
		while (a->buckets[i])
			flow_free(a, a->buckets[i]);
	ring_buffer__free(a->rb);
	if (a->ep_fd >= 0)
		close(a->ep_fd);
	if (a->tick_fd >= 0)
		close(a->tick_fd);
	if (a->rsvp_fd >= 0)
		close(a->rsvp_fd);
	if (a->inj_fd >= 0)
		close(a->inj_fd);
	secret_wipe(&a->key, sizeof(a->key));
}

int lhd_credit_run(const struct lhd_config *cfg, struct lhd_datapath *dp, volatile int *stop)
{
	struct cr_agent *a = calloc(1, sizeof(*a));
	int rc = EXIT_KERNEL;

	if (!a)
		return EXIT_KERNEL;
	a->cfg = cfg;
	a->rsvp_fd = a->inj_fd = a->tick_fd = a->ep_fd = -1;
	if (credit_open(a, dp)) {
		credit_announce(cfg);
		credit_loop(a, stop);
		rc = EXIT_OK;
		end_first_flows(a);
	}
	print_counters(a);
	credit_close(a);
	free(a);
	return rc;
}
