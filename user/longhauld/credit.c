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
#include "lh_credit.h"
#include "log.h"
#include "netlink.h"
#include "rsvp.h"
#include "rsvp_key.h"

#define CR_MAX_UPS 4 /* upstream hops of one flow (a last hop behind several paths) */
#define CR_SETUP_TRIES 10 /* Path init re-sent on a path until answered, then it has failed */
#define CR_END_TRIES 10 /* End re-sent until End ACK */
#define CR_NOLIVE_OPEN_R 10 /* no live path for 10 R: fail open */
#define CR_HEARTBEAT_MISSES 3 /* H = 3 R (RFC 2205's K) */
#define CR_BUCKETS 1024
#define CR_TICK_US 1000

/* Agent counters, printed as JSON on exit ("credit agent: {...}") */
#define CR_COUNTERS(X)                                                                  \
	X(rx_msgs) X(rx_path) X(rx_reserve) X(rx_end) X(rx_end_ack) X(rx_path_err)      \
	X(rx_refused) X(rx_not_neighbor) X(rx_ttl) X(rx_unknown_flow) X(rx_stale)       \
	X(tx_msgs) X(tx_bytes) X(tx_path) X(tx_path_retry) X(tx_reserve_init)          \
	X(tx_reserve) X(tx_heartbeat) X(tx_end) X(tx_end_retry) X(tx_end_ack) X(tx_path_err) \
	X(tx_fail) X(flows_created) X(flows_first) X(flows_last) X(flows_ended)        \
	X(flows_expired) X(flows_open) X(path_failures) X(path_given_up) X(failovers)  \
	X(held) X(released) X(release_fail) X(hold_unknown) X(data_bytes_credited)          \
	X(tx_probe) X(rx_probe) X(probe_answers) X(lost_bytes_recovered)                \
	X(tx_signed) X(rx_verified)

struct cr_counters {
#define CR_CNT_FIELD(n) uint64_t n;
	CR_COUNTERS(CR_CNT_FIELD)
#undef CR_CNT_FIELD
	uint64_t refused[RSVP_ERR_MAX];
};

struct cr_pkt {
	struct cr_pkt *next;
	uint32_t len;
	uint8_t data[];
};

struct cr_up {
	uint32_t addr; /* the upstream hop (network order) */
	uint32_t local; /* our address toward it: RSVP_HOP of what we send it */
	uint32_t lih; /* its LIH, copied back */
	uint64_t returned; /* fwd_bytes already credited to it */
	uint64_t last_tx_ns; /* our last Reserve to it */
	uint64_t last_rx_ns; /* its last message */
};

struct cr_path {
	const struct lhd_cr_route *rt;
	uint32_t local;
	bool answered, alive, failed, end_acked;
	uint64_t limit; /* bytes it granted, cumulative, in our sent[] count */
	int64_t offset; /* our sent[] minus its count of what it got from us */
	uint64_t last_heard_ns;
	uint32_t path_id; /* MESSAGE_ID of our Path init on it (its answer ACKs that) */
	uint32_t end_id;
	int tries;
	uint64_t next_try_ns;
	unsigned int refusals; /* PathErrs in a row: the back-off of its probes */
	/* loss resync: the probe awaiting its answer (0: none), our sent[] when it left */
	uint32_t probe_id;
	uint64_t probe_sent;
	uint64_t probe_acked_sent; /* probe_sent of the last probe answered */
	uint64_t next_probe_ns;
};

enum cr_phase { PH_SETUP, PH_RUN, PH_ENDING };

struct cr_flow {
	struct cr_flow *next; /* hash chain */
	struct lh_qp_key key;
	uint32_t src, dst, dqpn;
	bool first; /* started here: the program saw it come in from the DC */
	enum cr_phase phase;
	uint32_t refresh_ms; /* R */
	struct cr_up up[CR_MAX_UPS];
	int nups;
	struct cr_path path[LH_CR_MAX_PATHS];
	int npaths;
	struct lh_cr_grant grant; /* what was last written to lh_cr_grant */
	uint64_t first_answer_ns;
	uint64_t active_ns; /* when the active path was last chosen */
	uint64_t nolive_since_ns;
	uint64_t last_activity_ns; /* packets or messages */
	uint64_t last_pkts; /* fwd_pkts + held_pkts when last looked at */
	struct cr_pkt *head, *tail; /* held, oldest first */
	uint64_t queued_bytes;
	uint32_t queued;
	bool dead_end; /* a transit hop with no live path: PathErr sent upstream, no heartbeats */
};

struct cr_agent {
	const struct lhd_config *cfg;
	int flow_fd, grant_fd;
	int rsvp_fd; /* raw IPv4, protocol 46 */
	int inj_fd; /* raw IPv4, IP_HDRINCL, SO_MARK LH_CR_MARK: held packets sent on */
	uint32_t epoch;
	uint32_t msg_id;
	struct cr_flow *buckets[CR_BUCKETS];
	unsigned int nflows;
	struct cr_counters c;
	/* RFC 2747 (--rsvp-key-file): our key, our last Sequence Number, the senders' last */
	bool keyed;
	struct rsvp_key key;
	uint64_t tx_seq;
	struct rsvp_replay rx_seq;
	uint8_t buf[RSVP_MAX_LEN + 64];
};

/* every sender that passes is_neighbor() has a slot: none is ever refused for room */
_Static_assert(RSVP_REPLAY_SLOTS >= LHD_MAX_NEIGHBORS + LHD_MAX_CR_ROUTES,
	       "a replay slot per RSVP neighbour");

static uint64_t ms_ns(uint32_t ms)
{
	return (uint64_t)ms * 1000000ull;
}

static void key_v4(struct lh_qp_key *k, uint32_t src, uint32_t dst, uint32_t dqpn)
{
	memset(k, 0, sizeof(*k));
	k->saddr[10] = k->saddr[11] = 0xff;
	k->daddr[10] = k->daddr[11] = 0xff;
	memcpy(&k->saddr[12], &src, 4);
	memcpy(&k->daddr[12], &dst, 4);
	k->dqpn = dqpn;
}

static bool key_is_v4(const struct lh_qp_key *k)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(k->saddr, pfx, 12) && !memcmp(k->daddr, pfx, 12);
}

static unsigned int key_hash(const struct lh_qp_key *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 16777619u;
	return h % CR_BUCKETS;
}

static struct cr_flow *flow_find(struct cr_agent *a, const struct lh_qp_key *k)
{
	struct cr_flow *f;

	for (f = a->buckets[key_hash(k)]; f; f = f->next)
		if (!memcmp(&f->key, k, sizeof(*k)))
			return f;
	return NULL;
}

static const char *ip4(uint32_t a, char *buf)
{
	return inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN);
}

/* Our address toward a neighbour: what the kernel would put as source */
static uint32_t local_addr_to(uint32_t nb)
{
	struct lh_nl_route r;
	uint32_t a = 0;

	if (!lh_nl_route_get(AF_INET, &nb, 0, &r) && r.has_prefsrc)
		memcpy(&a, r.prefsrc, 4);
	return a;
}

static bool is_neighbor(const struct cr_agent *a, uint32_t addr)
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

static void grant_write(struct cr_agent *a, struct cr_flow *f)
{
	if (bpf_map_update_elem(a->grant_fd, &f->key, &f->grant, BPF_ANY))
		pr_warn("credit: write lh_cr_grant: %s\n", strerror(errno));
}

static int counted(struct cr_agent *a, const struct cr_flow *f, struct lh_cr_flow *out)
{
	return bpf_map_lookup_elem(a->flow_fd, &f->key, out);
}

/* ------------------------------------------------------------ RSVP out */

static void msg_base(struct cr_agent *a, struct rsvp_msg *m, uint8_t type, const struct cr_flow *f,
		     uint32_t hop, uint32_t lih)
{
	rsvp_msg_init(m, type);
	m->flow.dst.v4.s_addr = f->dst;
	m->flow.src.v4.s_addr = f->src;
	m->flow.dqpn = f->dqpn;
	m->hop.addr.v4.s_addr = hop;
	m->hop.lih = lih;
	if (m->objs & RSVP_OBJ_MESSAGE_ID) {
		m->msg_id.epoch = a->epoch;
		m->msg_id.id = ++a->msg_id;
	}
}

/*
 * The next Sequence Number of our INTEGRITY objects: the wall clock in ns
 * (RFC 2747 section 3 suggests the time), so that it keeps growing across a
 * restart of the agent, and one above the last when the clock has not moved
 * on (or stepped back) since.
 */
static uint64_t next_tx_seq(struct cr_agent *a)
{
	struct timespec ts;
	uint64_t t;

	clock_gettime(CLOCK_REALTIME, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	a->tx_seq = t > a->tx_seq ? t : a->tx_seq + 1;
	return a->tx_seq;
}

static int msg_send(struct cr_agent *a, const struct rsvp_msg *m, uint32_t to)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = to };
	struct rsvp_msg with_integrity;
	uint8_t out[512];
	ssize_t n;

	if (a->keyed) {
		/* RFC 2747 section 3 (generation): INTEGRITY after the header, signed last */
		with_integrity = *m;
		with_integrity.objs |= RSVP_OBJ_INTEGRITY;
		m = &with_integrity;
	}
	n = rsvp_encode(m, out, sizeof(out));
	if (n > 0 && a->keyed && rsvp_sign(out, (size_t)n, &a->key, next_tx_seq(a)))
		n = -EINVAL;
	if (n < 0 || sendto(a->rsvp_fd, out, (size_t)n, 0, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		a->c.tx_fail++;
		return -1;
	}
	a->c.tx_msgs++;
	a->c.tx_bytes += (uint64_t)n + 20; /* with the IPv4 header */
	a->c.tx_signed += a->keyed;
	return 0;
}

static void send_path(struct cr_agent *a, struct cr_flow *f, int i)
{
	struct cr_path *p = &f->path[i];
	struct rsvp_msg m;

	msg_base(a, &m, RSVP_MSG_CB_PATH, f, p->local, (uint32_t)i);
	m.refresh_ms = f->refresh_ms;
	if (p->tries)
		m.msg_id.id = p->path_id; /* a retransmission keeps its id (RFC 2961) */
	p->path_id = m.msg_id.id;
	if (!msg_send(a, &m, p->rt->nexthop)) {
		if (p->tries)
			a->c.tx_path_retry++;
		else
			a->c.tx_path++;
	}
	p->tries++;
	p->next_try_ns = lh_now_ns() + (ms_ns(f->refresh_ms) << p->refusals);
}

/*
 * A probe of path i's hop: a Path with a PROBE Credit carrying what we have
 * sent it (informative). Its answer's Accepted, against sent, tells what was
 * lost on the way (on_reserve).
 */
static void send_probe(struct cr_agent *a, struct cr_flow *f, int i, uint64_t sent)
{
	struct cr_path *p = &f->path[i];
	struct rsvp_msg m;

	msg_base(a, &m, RSVP_MSG_CB_PATH, f, p->local, (uint32_t)i);
	m.refresh_ms = f->refresh_ms;
	m.objs |= RSVP_OBJ_CREDIT;
	m.credit.unit = RSVP_CREDIT_UNIT_BYTE;
	m.credit.flags = RSVP_CREDIT_F_PROBE;
	m.credit.limit = sent;
	if (msg_send(a, &m, p->rt->nexthop))
		return;
	a->c.tx_probe++;
	p->probe_id = m.msg_id.id;
	p->probe_sent = sent;
}

/*
 * A Reserve to upstream hop u: initial (answering Path init ack_id), credit
 * return or heartbeat (answering the probe ack_id when not 0). cf: the
 * program's counts of the flow.
 */
static void send_reserve(struct cr_agent *a, struct cr_flow *f, struct cr_up *u,
			 const struct lh_cr_flow *cf, bool init, uint32_t ack_id)
{
	uint64_t fwd = cf->fwd_bytes, fresh = fwd - u->returned;
	struct rsvp_msg m;

	msg_base(a, &m, RSVP_MSG_CB_RESERVE, f, u->local, u->lih);
	m.objs |= RSVP_OBJ_TIME_VALUES;
	m.refresh_ms = f->refresh_ms;
	m.credit.unit = RSVP_CREDIT_UNIT_BYTE;
	if (init) {
		m.objs |= RSVP_OBJ_MESSAGE_ID_ACK;
		m.msg_id_ack.epoch = a->epoch;
		m.msg_id_ack.id = ack_id;
		m.credit.flags = RSVP_CREDIT_F_INIT;
		m.credit.credit = a->cfg->cr_buffer;
	} else {
		m.credit.flags = fresh ? 0 : RSVP_CREDIT_F_HEARTBEAT;
		m.credit.credit = fresh > UINT32_MAX ? UINT32_MAX : (uint32_t)fresh;
		if (ack_id) {
			m.objs |= RSVP_OBJ_MESSAGE_ID_ACK;
			m.msg_id_ack.epoch = a->epoch;
			m.msg_id_ack.id = ack_id;
		}
	}
	/* "less than its buffer": the whole buffer, every byte of it freed once forwarded */
	m.credit.limit = a->cfg->cr_buffer + fwd;
	/* taken in: forwarded, or held here (in the ring or the agent's queue) */
	m.credit.has_accepted = true;
	m.credit.accepted = fwd + cf->held_bytes - f->grant.released_bytes;
	if (msg_send(a, &m, u->addr))
		return;
	if (init)
		a->c.tx_reserve_init++;
	else if (fresh)
		a->c.tx_reserve++;
	else
		a->c.tx_heartbeat++;
	a->c.data_bytes_credited += fresh;
	u->returned = fwd;
	u->last_tx_ns = lh_now_ns();
}

static void send_end(struct cr_agent *a, struct cr_flow *f, int i)
{
	struct cr_path *p = &f->path[i];
	struct rsvp_msg m;

	msg_base(a, &m, RSVP_MSG_CB_END, f, p->local, (uint32_t)i);
	m.msg_id.flags = RSVP_MSG_ID_F_ACK_DESIRED;
	if (p->tries)
		m.msg_id.id = p->end_id;
	p->end_id = m.msg_id.id;
	if (!msg_send(a, &m, p->rt->nexthop)) {
		if (p->tries)
			a->c.tx_end_retry++;
		else
			a->c.tx_end++;
	}
	p->tries++;
	p->next_try_ns = lh_now_ns() + ms_ns(f->refresh_ms);
}

static void send_end_ack(struct cr_agent *a, const struct rsvp_msg *end, uint32_t to)
{
	struct cr_flow tmp = { .src = end->flow.src.v4.s_addr, .dst = end->flow.dst.v4.s_addr,
			       .dqpn = end->flow.dqpn };
	struct rsvp_msg m;

	msg_base(a, &m, RSVP_MSG_CB_END_ACK, &tmp, local_addr_to(to), end->hop.lih);
	m.msg_id_ack = end->msg_id;
	m.msg_id_ack.flags = 0;
	if (!msg_send(a, &m, to))
		a->c.tx_end_ack++;
}

/* PathErr to every upstream hop: nothing onward from here (RFC 3209's Routing Problem) */
static void send_path_err(struct cr_agent *a, struct cr_flow *f)
{
	for (int i = 0; i < f->nups; i++) {
		struct rsvp_msg m;

		msg_base(a, &m, RSVP_MSG_PATH_ERR, f, 0, 0);
		m.objs |= RSVP_OBJ_SENDER_TEMPLATE | RSVP_OBJ_RDMA_QP;
		m.error.node.v4.s_addr = f->up[i].local;
		m.error.code = RSVP_ERRCODE_ROUTING;
		m.error.value = RSVP_ERRVAL_NO_ROUTE;
		if (!msg_send(a, &m, f->up[i].addr))
			a->c.tx_path_err++;
	}
}

static void set_dead_end(struct cr_agent *a, struct cr_flow *f, bool dead)
{
	if (f->first || !f->nups || f->dead_end == dead)
		return;
	f->dead_end = dead;
	if (dead)
		send_path_err(a, f);
}

/* ------------------------------------------------------------ flows */

static struct cr_flow *flow_new(struct cr_agent *a, uint32_t src, uint32_t dst, uint32_t dqpn,
				bool first, uint32_t refresh_ms, uint32_t exclude_nh)
{
	struct cr_flow *f = calloc(1, sizeof(*f));
	uint8_t best = 0;
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
	/* the paths: the most specific --credit-route prefixes holding dst, in their order */
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
		f->grant.nexthop[f->npaths][10] = f->grant.nexthop[f->npaths][11] = 0xff;
		memcpy(&f->grant.nexthop[f->npaths][12], &r->nexthop, 4);
		f->npaths++;
	}
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

static void flow_free(struct cr_agent *a, struct cr_flow *f)
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

/* Stop forwarding against credit: End on every path that answered, until End ACKs */
static void flow_end(struct cr_agent *a, struct cr_flow *f)
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
	if (!pending) {
		a->c.flows_ended++;
		flow_free(a, f);
	}
}

/* The best path that can carry the flow now: the first answered and alive */
static int best_path(const struct cr_flow *f)
{
	for (int i = 0; i < f->npaths; i++)
		if (f->path[i].answered && f->path[i].alive)
			return i;
	return -1;
}

/* Send held packets while the active path has credit; in the OPEN state, all of them */
static void release(struct cr_agent *a, struct cr_flow *f)
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

static void activate(struct cr_agent *a, struct cr_flow *f, int p, uint64_t now)
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

/* ------------------------------------------------------------ RSVP in */

static struct cr_up *up_of(struct cr_flow *f, uint32_t addr)
{
	for (int i = 0; i < f->nups; i++)
		if (f->up[i].addr == addr)
			return &f->up[i];
	return NULL;
}

static int path_of(const struct cr_flow *f, uint32_t addr, uint32_t lih)
{
	if (lih < (uint32_t)f->npaths && f->path[lih].rt->nexthop == addr)
		return (int)lih;
	for (int i = 0; i < f->npaths; i++)
		if (f->path[i].rt->nexthop == addr)
			return i;
	return -1;
}

static void on_path(struct cr_agent *a, const struct rsvp_msg *m, uint32_t from)
{
	struct lh_qp_key k;
	struct cr_flow *f;
	struct cr_up *u;
	struct lh_cr_flow cf = { 0 };
	bool probe;

	key_v4(&k, m->flow.src.v4.s_addr, m->flow.dst.v4.s_addr, m->flow.dqpn);
	f = flow_find(a, &k);
	if (f && f->phase == PH_ENDING) {
		a->c.rx_stale++;
		return;
	}
	if (!f) {
		f = flow_new(a, m->flow.src.v4.s_addr, m->flow.dst.v4.s_addr, m->flow.dqpn, false,
			     m->refresh_ms ? m->refresh_ms : a->cfg->heartbeat_ms, from);
		if (!f)
			return;
	}
	u = up_of(f, from);
	probe = u && (m->objs & RSVP_OBJ_CREDIT) && (m->credit.flags & RSVP_CREDIT_F_PROBE);
	if (!u) {
		/* a probe from a hop we know nothing of (we restarted): answered as a Path init */
		if (f->nups >= CR_MAX_UPS) {
			a->c.rx_stale++;
			return;
		}
		u = &f->up[f->nups++];
		u->addr = from;
		u->local = local_addr_to(from);
	}
	u->lih = m->hop.lih;
	u->last_rx_ns = lh_now_ns();
	f->last_activity_ns = u->last_rx_ns;
	if (f->dead_end) {
		send_path_err(a, f); /* still nothing onward: no credit to give */
		return;
	}
	counted(a, f, &cf);
	if (probe) {
		a->c.rx_probe++;
		send_reserve(a, f, u, &cf, false, m->msg_id.id);
		return;
	}
	/* a repeated Path init (our answer was lost) is answered again, same limit */
	send_reserve(a, f, u, &cf, true, m->msg_id.id);
}

/* a Credit limit in bytes, saturated */
static uint64_t limit_bytes(uint64_t limit, uint8_t unit)
{
	if (unit >= 64 || limit > (UINT64_MAX >> unit))
		return UINT64_MAX >> 1;
	return limit << unit;
}

static void on_reserve(struct cr_agent *a, const struct rsvp_msg *m, uint32_t from,
		       struct cr_flow *f)
{
	uint64_t now = lh_now_ns(), limit;
	int i = path_of(f, from, m->hop.lih);
	struct cr_path *p;

	if (i < 0) {
		a->c.rx_stale++;
		return;
	}
	p = &f->path[i];
	if (m->credit.flags & RSVP_CREDIT_F_INIT) {
		struct lh_cr_flow cf = { 0 };

		/*
		 * The hop's limit counts what it forwarded of ours; what we sent on this
		 * path before (a path that failed and came back, packets lost on the
		 * way) it never saw: offset its numbers so that the credit open now is
		 * exactly its initial credit.
		 */
		counted(a, f, &cf);
		p->offset = (int64_t)cf.sent[i] +
			    (int64_t)rsvp_credit_bytes(m->credit.credit, m->credit.unit) -
			    (int64_t)limit_bytes(m->credit.limit, m->credit.unit);
		if (!f->first_answer_ns)
			f->first_answer_ns = now;
		p->answered = true;
		p->failed = false;
		p->refusals = 0;
		pr_debug("credit: qp %u: path %d (%s) answered, credit %llu, try %d\n", f->dqpn, i,
			 p->rt->ifc.name, (unsigned long long)rsvp_credit_bytes(m->credit.credit, m->credit.unit),
			 p->tries);
		p->probe_id = 0;
		p->probe_acked_sent = cf.sent[i];
	} else if (p->answered && p->probe_id && (m->objs & RSVP_OBJ_MESSAGE_ID_ACK) &&
		   m->msg_id_ack.id == p->probe_id && m->credit.has_accepted && m->credit.limit) {
		/*
		 * The answer to our probe: of what we had sent when probing, what
		 * the hop has not taken in was lost on the way (it arrives in
		 * order behind the data it follows), and its credit comes back:
		 * the offset between our count and the hop's grows by it.
		 */
		int64_t off = (int64_t)p->probe_sent -
			      (int64_t)limit_bytes(m->credit.accepted, m->credit.unit);

		a->c.probe_answers++;
		if (off > p->offset) {
			a->c.lost_bytes_recovered += (uint64_t)(off - p->offset);
			p->offset = off;
		}
		p->probe_acked_sent = p->probe_sent;
		p->probe_id = 0;
	}
	limit = m->credit.limit
			? (uint64_t)((int64_t)limit_bytes(m->credit.limit, m->credit.unit) + p->offset)
			: p->limit + rsvp_credit_bytes(m->credit.credit, m->credit.unit);
	if (m->credit.flags & RSVP_CREDIT_F_INIT) {
		p->limit = limit;
	} else if (!p->answered) {
		a->c.rx_stale++; /* credit before its initial Reserve: a hop that restarted? */
		return;
	} else if (limit > p->limit) {
		p->limit = limit;
	}
	if (!p->alive && p->answered)
		pr_debug("credit: path %d (%s) alive\n", i, p->rt->ifc.name);
	p->alive = true;
	p->last_heard_ns = now;
	f->grant.alive[i] = 1;
	set_dead_end(a, f, false);
	f->grant.limit[i] = p->limit;
	if (f->phase == PH_ENDING)
		return;
	if (f->grant.state == LH_CRS_PENDING || f->grant.state == LH_CRS_OPEN) {
		/* the preferred path, or whichever answered once R has passed */
		int b = best_path(f);

		if (b == 0 || (b > 0 && now - f->first_answer_ns >= ms_ns(f->refresh_ms)) ||
		    (b >= 0 && f->grant.state == LH_CRS_OPEN))
			activate(a, f, b, now);
		else
			grant_write(a, f);
		return;
	}
	/*
	 * A more preferred path answering late (its Path init or answer was lost,
	 * or it was slow) takes over while the flow is young: at most R after
	 * activation, when little can be in flight to reorder.
	 */
	if ((m->credit.flags & RSVP_CREDIT_F_INIT) && f->grant.state == LH_CRS_ACTIVE &&
	    (uint32_t)i < f->grant.active && now - f->active_ns < ms_ns(f->refresh_ms)) {
		activate(a, f, i, now);
		return;
	}
	grant_write(a, f);
	release(a, f);
}

static void on_end(struct cr_agent *a, const struct rsvp_msg *m, uint32_t from, struct cr_flow *f)
{
	int i;

	send_end_ack(a, m, from); /* always: a repeated End (our ACK lost) is answered again */
	if (!f)
		return;
	for (i = 0; i < f->nups && f->up[i].addr != from; i++)
		;
	if (i < f->nups) {
		f->up[i] = f->up[f->nups - 1];
		f->nups--;
	}
	if (f->nups || f->first || f->phase == PH_ENDING)
		return;
	flow_end(a, f);
}

static void on_end_ack(struct cr_agent *a, const struct rsvp_msg *m, uint32_t from,
		       struct cr_flow *f)
{
	int i = path_of(f, from, m->hop.lih), pending = 0;

	if (i < 0 || f->phase != PH_ENDING || m->msg_id_ack.id != f->path[i].end_id) {
		a->c.rx_stale++;
		return;
	}
	f->path[i].end_acked = true;
	for (i = 0; i < f->npaths; i++)
		pending += !f->path[i].end_acked;
	if (!pending) {
		a->c.flows_ended++;
		flow_free(a, f);
	}
}

/* The next hop of a path has nothing onward: that path is as good as failed */
static void on_path_err(struct cr_agent *a, uint32_t from, struct cr_flow *f)
{
	int i = path_of(f, from, UINT32_MAX);
	struct cr_path *p;

	if (i < 0) {
		a->c.rx_stale++;
		return;
	}
	p = &f->path[i];
	if (p->alive)
		a->c.path_failures++;
	p->alive = false;
	p->answered = false;
	/* probed again with Path inits, backing off while the hop keeps refusing: R, 2R ... 64R */
	p->tries = 1;
	p->refusals += p->refusals < 6;
	p->next_try_ns = lh_now_ns() + (ms_ns(f->refresh_ms) << p->refusals);
	f->grant.alive[i] = 0;
	grant_write(a, f);
}

/*
 * RFC 2747 section 3 (verification) on a message the decoder accepted: the digest under
 * our key, then the sequence number against the last accepted from this
 * sender (only a verified message may move it).
 */
static enum rsvp_err rx_integrity(struct cr_agent *a, const uint8_t *msg, size_t len,
				  const struct rsvp_msg *m, uint32_t from)
{
	union lh_ip_addr sender = {0};
	enum rsvp_err err = rsvp_verify(msg, len, m, &a->key);

	if (err != RSVP_E_OK)
		return err;
	sender.v4.s_addr = from;
	err = rsvp_replay_accept(&a->rx_seq, &sender, m->integrity.key_id, m->integrity.seq);
	if (err == RSVP_E_OK)
		a->c.rx_verified++;
	return err;
}

static void on_rsvp(struct cr_agent *a)
{
	struct sockaddr_in from;
	socklen_t fl = sizeof(from);
	ssize_t n = recvfrom(a->rsvp_fd, a->buf, sizeof(a->buf), MSG_DONTWAIT, (struct sockaddr *)&from,
			     &fl);
	struct rsvp_msg m;
	struct lh_qp_key k;
	struct cr_flow *f;
	enum rsvp_err err;
	size_t ihl;

	if (n < 20)
		return;
	a->c.rx_msgs++;
	ihl = (size_t)(a->buf[0] & 0x0f) * 4;
	if (ihl < 20 || (size_t)n < ihl) {
		a->c.refused[RSVP_E_TRUNC_HDR]++;
		a->c.rx_refused++;
		return;
	}
	/* only configured neighbours, only from one hop away (TTL 255, as RFC 5082) */
	if (!is_neighbor(a, from.sin_addr.s_addr)) {
		a->c.rx_not_neighbor++;
		return;
	}
	if (a->buf[8] != 255) {
		a->c.rx_ttl++;
		return;
	}
	err = rsvp_decode(a->buf + ihl, (size_t)n - ihl, &m, RSVP_DECODE_REQUIRE_CSUM);
	/* with a key, nothing unverified goes further; without, INTEGRITY is not looked at */
	if (err == RSVP_E_OK && a->keyed)
		err = rx_integrity(a, a->buf + ihl, (size_t)n - ihl, &m, from.sin_addr.s_addr);
	if (err != RSVP_E_OK) {
		a->c.refused[err]++;
		a->c.rx_refused++;
		return;
	}
	if (m.flow.family != AF_INET) {
		a->c.refused[RSVP_E_FAMILY]++;
		a->c.rx_refused++;
		return;
	}
	key_v4(&k, m.flow.src.v4.s_addr, m.flow.dst.v4.s_addr, m.flow.dqpn);
	f = flow_find(a, &k);
	switch (m.type) {
	case RSVP_MSG_CB_PATH:
		a->c.rx_path++;
		on_path(a, &m, from.sin_addr.s_addr);
		return;
	case RSVP_MSG_CB_END:
		a->c.rx_end++;
		on_end(a, &m, from.sin_addr.s_addr, f);
		return;
	case RSVP_MSG_PATH_ERR:
		a->c.rx_path_err++;
		if (f)
			on_path_err(a, from.sin_addr.s_addr, f);
		return;
	default:
		break;
	}
	if (!f) {
		a->c.rx_unknown_flow++;
		return;
	}
	/* a downstream hop's Reserves (heartbeats) are no activity: only packets and Paths are */
	if (m.type == RSVP_MSG_CB_RESERVE) {
		a->c.rx_reserve++;
		on_reserve(a, &m, from.sin_addr.s_addr, f);
	} else if (m.type == RSVP_MSG_CB_END_ACK) {
		a->c.rx_end_ack++;
		on_end_ack(a, &m, from.sin_addr.s_addr, f);
	}
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

static int on_record(void *ctx, void *data, size_t size)
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

static void tick_paths(struct cr_agent *a, struct cr_flow *f, uint64_t now)
{
	uint64_t R = ms_ns(f->refresh_ms), H = CR_HEARTBEAT_MISSES * R;
	char b1[INET_ADDRSTRLEN], b2[INET_ADDRSTRLEN];
	bool changed = false;
	int i, b;

	for (i = 0; i < f->npaths; i++) {
		struct cr_path *p = &f->path[i];

		if (!p->answered && !p->failed && now >= p->next_try_ns) {
			if (p->tries >= CR_SETUP_TRIES) {
				p->failed = true;
				a->c.path_given_up++;
			} else {
				send_path(a, f, i);
			}
		}
		if (p->alive && now - p->last_heard_ns > H) {
			p->alive = false;
			f->grant.alive[i] = 0;
			changed = true;
			a->c.path_failures++;
			pr_info("credit: flow %s -> %s qp %u: no Reserve from %s for %llu ms: path %d failed\n",
				ip4(f->src, b1), ip4(f->dst, b2), f->dqpn, p->rt->ifc.name,
				(unsigned long long)((now - p->last_heard_ns) / 1000000), i);
			/* its next Path init is a re-setup: a hop that comes back answers INIT */
			p->answered = false;
			p->tries = 0;
			p->next_try_ns = now + R;
		}
	}
	b = best_path(f);
	if (b < 0 && f->npaths) {
		bool all_failed = true;

		for (i = 0; i < f->npaths; i++)
			all_failed &= f->path[i].failed;
		/* lost the path it had, or none ever answered */
		if (all_failed || (f->grant.state == LH_CRS_ACTIVE && !f->path[f->grant.active].alive))
			set_dead_end(a, f, true);
	}
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
	if (f->grant.state == LH_CRS_PENDING) {
		if (b >= 0 && (b == 0 || now - f->first_answer_ns >= R)) {
			activate(a, f, b, now);
			return;
		}
		if (!f->nolive_since_ns)
			f->nolive_since_ns = now;
		if (now - f->nolive_since_ns >= CR_NOLIVE_OPEN_R * R) {
			f->grant.state = LH_CRS_OPEN; /* fail open: nothing lost, nothing controlled */
			a->c.flows_open++;
			pr_warn("credit: flow %s -> %s qp %u: no path answers: passed uncontrolled\n",
				ip4(f->src, b1), ip4(f->dst, b2), f->dqpn);
			grant_write(a, f);
			release(a, f);
			return;
		}
	}
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
	if (!pending) {
		a->c.flows_ended++;
		flow_free(a, f);
	}
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

int lhd_credit_run(const struct lhd_config *cfg, struct lhd_datapath *dp, volatile int *stop)
{
	struct cr_agent *a = calloc(1, sizeof(*a));
	struct itimerspec its = { .it_interval.tv_nsec = CR_TICK_US * 1000 };
	struct epoll_event ev = { .events = EPOLLIN };
	struct ring_buffer *rb = NULL;
	int ep = -1, tfd = -1, rc = EXIT_KERNEL, err;
	uint64_t ticks;
	char b[INET_ADDRSTRLEN];

	if (!a)
		return EXIT_KERNEL;
	a->cfg = cfg;
	a->rsvp_fd = a->inj_fd = -1;
	a->flow_fd = lhd_map_fd(dp, "lh_cr_flow");
	a->grant_fd = lhd_map_fd(dp, "lh_cr_grant");
	a->epoch = (uint32_t)(lh_now_ns() >> 20) & 0xffffff;
	if (cfg->rsvp_key_len) {
		a->keyed =
			!rsvp_key_init(&a->key, cfg->rsvp_key_id, cfg->rsvp_key, cfg->rsvp_key_len);
		if (!a->keyed) {
			pr_warn("credit: RSVP key id %llu refused\n",
				(unsigned long long)cfg->rsvp_key_id);
			goto out;
		}
		pr_info("credit: RSVP signed and verified: INTEGRITY (RFC 2747, HMAC-MD5), key id "
			"%llu\n",
			(unsigned long long)cfg->rsvp_key_id);
	}
	err = open_sockets(a);
	if (err) {
		pr_warn("credit: raw sockets (RSVP, protocol 46; held packets): %s\n", strerror(-err));
		goto out;
	}
	rb = ring_buffer__new(lhd_map_fd(dp, "lh_cr_events"), on_record, a, NULL);
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (!rb || tfd < 0 || ep < 0) {
		pr_warn("credit: ring buffer lh_cr_events / timer: %s\n", strerror(errno));
		goto out;
	}
	its.it_value = its.it_interval;
	timerfd_settime(tfd, 0, &its, NULL);
	ev.data.fd = tfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
	ev.data.fd = a->rsvp_fd;
	epoll_ctl(ep, EPOLL_CTL_ADD, a->rsvp_fd, &ev);
	ev.data.fd = ring_buffer__epoll_fd(rb);
	epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev);
	for (int i = 0; i < cfg->n_cr_routes; i++)
		pr_info("credit: path %d toward %s/%u via %s on %s\n", i,
			ip4(cfg->cr_routes[i].prefix, b), cfg->cr_routes[i].plen,
			inet_ntop(AF_INET, &cfg->cr_routes[i].nexthop, (char[INET_ADDRSTRLEN]){ 0 },
				  INET_ADDRSTRLEN),
			cfg->cr_routes[i].ifc.name);
	pr_info("credit: buffer %u bytes per flow, credit returned per %u bytes, heartbeat %u ms\n",
		cfg->cr_buffer, cfg->cr_quantum, cfg->heartbeat_ms);

	while (!*stop) {
		struct epoll_event out[4];
		int n = epoll_wait(ep, out, 4, 200);

		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < n; i++) {
			if (out[i].data.fd == tfd) {
				if (read(tfd, &ticks, sizeof(ticks)) > 0)
					tick(a);
			} else if (out[i].data.fd == a->rsvp_fd) {
				for (int j = 0; j < 64; j++) {
					struct pollfd pfd = { .fd = a->rsvp_fd, .events = POLLIN };

					if (poll(&pfd, 1, 0) <= 0)
						break;
					on_rsvp(a);
				}
			} else {
				ring_buffer__consume(rb);
			}
		}
	}
	rc = EXIT_OK;
	/* stopping: tell the hops downstream, once, so that no state outlives us there */
	for (unsigned int i = 0; i < CR_BUCKETS; i++)
		for (struct cr_flow *f = a->buckets[i]; f; f = f->next)
			for (int j = 0; f->first && f->phase != PH_ENDING && j < f->npaths; j++)
				if (f->path[j].answered) {
					f->path[j].tries = 0; /* a first End, not a retry */
					send_end(a, f, j);
				}
out:
	print_counters(a);
	for (unsigned int i = 0; i < CR_BUCKETS; i++)
		while (a->buckets[i])
			flow_free(a, a->buckets[i]);
	ring_buffer__free(rb);
	if (ep >= 0)
		close(ep);
	if (tfd >= 0)
		close(tfd);
	if (a->rsvp_fd >= 0)
		close(a->rsvp_fd);
	if (a->inj_fd >= 0)
		close(a->inj_fd);
	secret_wipe(&a->key, sizeof(a->key));
	free(a);
	return rc;
}
