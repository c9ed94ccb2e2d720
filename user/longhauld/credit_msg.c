// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The credit agent's RSVP messages (docs/rsvp.md): Path (with its PROBE
 * form), Reserve, End, End ACK and PathErr out, each signed with
 * --rsvp-key-file; and in: checked (neighbour, TTL, INTEGRITY and its
 * sequence) before they touch a flow, then what each does to it.
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

void send_path(struct cr_agent *a, struct cr_flow *f, int i)
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
void send_probe(struct cr_agent *a, struct cr_flow *f, int i, uint64_t sent)
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
void send_reserve(struct cr_agent *a, struct cr_flow *f, struct cr_up *u,
		  const struct lh_cr_flow *cf, bool init, uint32_t ack_id)
{
	uint64_t fwd = cf->fwd_bytes, fresh = fwd - u->returned;
	struct rsvp_msg m;

	msg_base(a, &m, RSVP_MSG_CB_RESERVE, f, u->local, u->lih);
	m.objs |= RSVP_OBJ_TIME_VALUES;
	m.refresh_ms = f->refresh_ms;
	m.credit.unit = RSVP_CREDIT_UNIT_BYTE;
	if (init) {
		m.credit.flags = RSVP_CREDIT_F_INIT;
		m.credit.credit = a->cfg->cr_buffer;
	} else {
		m.credit.flags = fresh ? 0 : RSVP_CREDIT_F_HEARTBEAT;
		m.credit.credit = fresh > UINT32_MAX ? UINT32_MAX : (uint32_t)fresh;
	}
	if (init || ack_id) {
		m.objs |= RSVP_OBJ_MESSAGE_ID_ACK;
		m.msg_id_ack.epoch = a->epoch;
		m.msg_id_ack.id = ack_id;
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

void send_end(struct cr_agent *a, struct cr_flow *f, int i)
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
void send_path_err(struct cr_agent *a, struct cr_flow *f)
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

/* ------------------------------------------------------------ RSVP in */

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

/*
 * An initial Reserve on path i: the hop's limit counts what it forwarded of
 * ours; what we sent on this path before (a path that failed and came back,
 * packets lost on the way) it never saw: offset its numbers so that the
 * credit open now is exactly its initial credit.
 */
static void reserve_init(struct cr_agent *a, struct cr_flow *f, int i, const struct rsvp_msg *m,
			 uint64_t now)
{
	struct cr_path *p = &f->path[i];
	struct lh_cr_flow cf = { 0 };

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
}

/* Whether a Reserve on set-up path p answers the probe awaiting its answer */
static bool answers_probe(const struct cr_path *p, const struct rsvp_msg *m)
{
	return p->answered && p->probe_id && (m->objs & RSVP_OBJ_MESSAGE_ID_ACK) &&
	       m->msg_id_ack.id == p->probe_id && m->credit.has_accepted && m->credit.limit;
}

/*
 * The answer to our probe: of what we had sent when probing, what the hop
 * has not taken in was lost on the way (it arrives in order behind the data
 * it follows), and its credit comes back: the offset between our count and
 * the hop's grows by it.
 */
static void probe_answered(struct cr_agent *a, struct cr_path *p, const struct rsvp_msg *m)
{
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

/*
 * The path the flow takes once path i's Reserve is counted: the first to
 * answer while none is active, or a more preferred one late; then the held
 * packets its credit lets go
 */
static void reserve_choose(struct cr_agent *a, struct cr_flow *f, int i, const struct rsvp_msg *m,
			   uint64_t now)
{
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

static void on_reserve(struct cr_agent *a, const struct rsvp_msg *m, uint32_t from,
		       struct cr_flow *f)
{
	uint64_t now = lh_now_ns(), limit;
	int i = path_of(f, from, m->hop.lih);
	bool init = m->credit.flags & RSVP_CREDIT_F_INIT;
	struct cr_path *p;

	if (i < 0) {
		a->c.rx_stale++;
		return;
	}
	p = &f->path[i];
	if (init)
		reserve_init(a, f, i, m, now);
	else if (answers_probe(p, m))
		probe_answered(a, p, m);
	limit = m->credit.limit
			? (uint64_t)((int64_t)limit_bytes(m->credit.limit, m->credit.unit) + p->offset)
			: p->limit + rsvp_credit_bytes(m->credit.credit, m->credit.unit);
	if (!init && !p->answered) {
		a->c.rx_stale++; /* credit before its initial Reserve: a hop that restarted? */
		return;
	}
	/* an initial Reserve sets the limit; a later one only raises it */
	if (init || limit > p->limit)
		p->limit = limit;
	if (!p->alive && p->answered)
		pr_debug("credit: path %d (%s) alive\n", i, p->rt->ifc.name);
	p->alive = true;
	p->last_heard_ns = now;
	f->grant.alive[i] = 1;
	set_dead_end(a, f, false);
	f->grant.limit[i] = p->limit;
	if (f->phase == PH_ENDING)
		return;
	reserve_choose(a, f, i, m, now);
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
	if (!pending)
		flow_ended(a, f);
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

/* A message refused for reason err, counted */
static void refuse(struct cr_agent *a, enum rsvp_err err)
{
	a->c.refused[err]++;
	a->c.rx_refused++;
}

/*
 * The IPv4 datagram of n bytes in a->buf from sender from, decoded into m
 * when it may touch a flow: from a configured neighbour one hop away, valid,
 * verified when keyed, IPv4. false: counted and dropped.
 */
static bool rx_accept(struct cr_agent *a, size_t n, uint32_t from, struct rsvp_msg *m)
{
	size_t ihl = (size_t)(a->buf[0] & 0x0f) * 4;
	enum rsvp_err err;

	if (ihl < 20 || n < ihl) {
		refuse(a, RSVP_E_TRUNC_HDR);
		return false;
	}
	/* only configured neighbours, only from one hop away (TTL 255, as RFC 5082) */
	if (!is_neighbor(a, from)) {
		a->c.rx_not_neighbor++;
		return false;
	}
	if (a->buf[8] != 255) {
		a->c.rx_ttl++;
		return false;
	}
	err = rsvp_decode(a->buf + ihl, n - ihl, m, RSVP_DECODE_REQUIRE_CSUM);
	/* with a key, nothing unverified goes further; without, INTEGRITY is not looked at */
	if (err == RSVP_E_OK && a->keyed)
		err = rx_integrity(a, a->buf + ihl, n - ihl, m, from);
	if (err != RSVP_E_OK) {
		refuse(a, err);
		return false;
	}
	if (m->flow.family != AF_INET) {
		refuse(a, RSVP_E_FAMILY);
		return false;
	}
	return true;
}

/* What message m from sender from does to its flow */
static void rx_dispatch(struct cr_agent *a, const struct rsvp_msg *m, uint32_t from)
{
	struct lh_qp_key k;
	struct cr_flow *f;

	key_v4(&k, m->flow.src.v4.s_addr, m->flow.dst.v4.s_addr, m->flow.dqpn);
	f = flow_find(a, &k);
	switch (m->type) {
	case RSVP_MSG_CB_PATH:
		a->c.rx_path++;
		on_path(a, m, from);
		return;
	case RSVP_MSG_CB_END:
		a->c.rx_end++;
		on_end(a, m, from, f);
		return;
	case RSVP_MSG_PATH_ERR:
		a->c.rx_path_err++;
		if (f)
			on_path_err(a, from, f);
		return;
	default:
		break;
	}
	if (!f) {
		a->c.rx_unknown_flow++;
		return;
	}
	/* a downstream hop's Reserves (heartbeats) are no activity: only packets and Paths are */
	if (m->type == RSVP_MSG_CB_RESERVE) {
		a->c.rx_reserve++;
		on_reserve(a, m, from, f);
	} else if (m->type == RSVP_MSG_CB_END_ACK) {
		a->c.rx_end_ack++;
		on_end_ack(a, m, from, f);
	}
}

void on_rsvp(struct cr_agent *a)
{
	struct sockaddr_in from = { 0 };
	socklen_t fl = sizeof(from);
	ssize_t n = recvfrom(a->rsvp_fd, a->buf, sizeof(a->buf), MSG_DONTWAIT, (struct sockaddr *)&from,
			     &fl);
	struct rsvp_msg m;

	if (n < 20)
		return;
	a->c.rx_msgs++;
	if (rx_accept(a, (size_t)n, from.sin_addr.s_addr, &m))
		rx_dispatch(a, &m, from.sin_addr.s_addr);
}
