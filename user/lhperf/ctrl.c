// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhperf's TCP side channel, perftest style: the client connects (retrying
 * while the server is not listening yet), sends the run parameters and its
 * QP numbers and start PSNs, the server answers with its own and the WRITE
 * target of each QP. During the run both ends send a heartbeat, so a peer
 * that dies or becomes unreachable is noticed (EOF, or TCP_USER_TIMEOUT on
 * unacknowledged heartbeats); at the end the client sends its summary and
 * the server answers with what its responders saw.
 *
 * The messages are text lines of space separated key=value words.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lhperf.h"
#include "log.h"

#define CTRL_USER_TIMEOUT_MS 10000
#define CTRL_RETRY_MS 100

/* A socket's address as the frames carry it; -EAFNOSUPPORT when not IPv4 or IPv6 */
static int addr_from_sockaddr(const struct sockaddr_storage *ss, socklen_t len, int *family,
			      union lh_ip_addr *a)
{
	const struct in6_addr *v6 = &((const struct sockaddr_in6 *)ss)->sin6_addr;

	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		*family = AF_INET;
		a->v4 = ((const struct sockaddr_in *)ss)->sin_addr;
		return 0;
	}
	if (ss->ss_family != AF_INET6 || len < sizeof(struct sockaddr_in6))
		return -EAFNOSUPPORT;
	if (IN6_IS_ADDR_V4MAPPED(v6)) {
		/* an IPv4 client of a dual-stack listener */
		*family = AF_INET;
		memcpy(&a->v4, &v6->s6_addr[12], 4);
	} else {
		*family = AF_INET6;
		a->v6 = *v6;
	}
	return 0;
}

static int ctrl_addresses(struct lhp_ctrl *c)
{
	struct sockaddr_storage l = { 0 }, p = { 0 };
	socklen_t ll = sizeof(l), pl = sizeof(p);
	int f1, f2;

	if (getsockname(c->fd, (struct sockaddr *)&l, &ll) ||
	    getpeername(c->fd, (struct sockaddr *)&p, &pl))
		return -errno;
	if (addr_from_sockaddr(&l, ll, &f1, &c->local) ||
	    addr_from_sockaddr(&p, pl, &f2, &c->peer) || f1 != f2)
		return -EAFNOSUPPORT;
	c->family = f1;
	return 0;
}

static void ctrl_tune(int fd)
{
	int one = 1, ut = CTRL_USER_TIMEOUT_MS, idle = 2, intvl = 1, cnt = 5;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof(ut));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

/* Non-blocking connect bounded by timeout_ms; 0 or -errno */
static int connect_once(const struct addrinfo *ai, int timeout_ms, int *out)
{
	struct pollfd pfd;
	socklen_t sl = sizeof(int);
	int fd, err = 0, r;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) && errno != EINPROGRESS) {
		err = -errno;
		goto fail;
	}
	pfd.fd = fd;
	pfd.events = POLLOUT;
	r = poll(&pfd, 1, timeout_ms);
	if (r < 0) {
		err = -errno;
		goto fail;
	}
	if (r == 0) {
		err = -ETIMEDOUT;
		goto fail;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl))
		err = errno;
	if (err) {
		err = -err;
		goto fail;
	}
	/* back to blocking: reads below use poll with their own timeouts */
	r = fcntl(fd, F_GETFL);
	if (r < 0 || fcntl(fd, F_SETFL, r & ~O_NONBLOCK)) {
		err = -errno;
		goto fail;
	}
	*out = fd;
	return 0;
fail:
	close(fd);
	return err;
}

/* fd becomes the side channel: tuned, its addresses read (closed when they cannot be) */
static int ctrl_adopt(struct lhp_ctrl *c, int fd)
{
	int err;

	c->fd = fd;
	ctrl_tune(fd);
	err = ctrl_addresses(c);
	if (err)
		lhp_ctrl_close(c);
	return err;
}

/* Connect to ai until the deadline, again while refused: the server may not listen yet */
static int connect_retrying(const struct addrinfo *ai, uint64_t deadline, int *fd)
{
	struct timespec pause = { .tv_nsec = CTRL_RETRY_MS * 1000000L };
	int err;

	for (;;) {
		uint64_t now = lh_now_ns();
		int left = now < deadline ? (int)((deadline - now) / 1000000) : 0;

		err = connect_once(ai, left > 0 ? left : 1, fd);
		if (!err)
			return 0;
		/* perftest's pitfall: a client started before its server */
		if (err != -ECONNREFUSED || lh_now_ns() >= deadline)
			return err;
		nanosleep(&pause, NULL);
	}
}

/* Why the client could not connect, as a user reads it */
static void connect_warn(const struct lhp_opts *o, int err)
{
	if (err == -ECONNREFUSED)
		pr_warn("no lhperf server at %s port %u (connection refused for %.0f s)\n", o->peer,
			o->port, (double)o->connect_timeout_ns / 1e9);
	else if (err == -ETIMEDOUT)
		pr_warn("server %s port %u unreachable: no answer within %.0f s\n", o->peer,
			o->port, (double)o->connect_timeout_ns / 1e9);
	else
		pr_warn("cannot connect to %s port %u: %s\n", o->peer, o->port, strerror(-err));
}

int lhp_ctrl_connect(const struct lhp_opts *o, struct lhp_ctrl *c)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	char port[8];
	uint64_t deadline = lh_now_ns() + o->connect_timeout_ns;
	int err, fd = -1;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	snprintf(port, sizeof(port), "%u", o->port);
	err = getaddrinfo(o->peer, port, &hints, &res);
	if (err) {
		pr_warn("cannot resolve server '%s': %s\n", o->peer, gai_strerror(err));
		return -EINVAL;
	}
	err = connect_retrying(res, deadline, &fd);
	freeaddrinfo(res);
	if (err) {
		connect_warn(o, err);
		return err;
	}
	err = ctrl_adopt(c, fd);
	if (err)
		pr_warn("side channel addresses: %s\n", strerror(-err));
	return err;
}

/* A socket listening on --bind (default every IPv4 and IPv6 address) and --port */
static int listen_socket(const struct lhp_opts *o, int *lfd)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	int one = 1, zero = 0, err;
	socklen_t sl;

	if (o->bind && inet_pton(AF_INET, o->bind, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(o->port);
		sl = sizeof(*s4);
	} else if (!o->bind || inet_pton(AF_INET6, o->bind, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(o->port);
		if (!o->bind)
			s6->sin6_addr = in6addr_any;
		sl = sizeof(*s6);
	} else {
		pr_warn("bad --bind address '%s'\n", o->bind);
		return -EINVAL;
	}
	*lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*lfd < 0)
		return -errno;
	setsockopt(*lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(*lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(*lfd, (struct sockaddr *)&ss, sl) || listen(*lfd, 1)) {
		err = -errno;
		pr_warn("cannot listen on port %u: %s\n", o->port, strerror(-err));
		close(*lfd);
		return err;
	}
	return 0;
}

/* The first client on lfd, within --listen-timeout */
static int accept_client(const struct lhp_opts *o, int lfd, int *fd)
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	int wait_ms = o->listen_timeout_ns ? (int)(o->listen_timeout_ns / 1000000) : -1;
	int r;

	do {
		r = poll(&pfd, 1, wait_ms);
	} while (r < 0 && errno == EINTR);
	if (r <= 0) {
		if (!r)
			pr_warn("no client within %g s\n", (double)o->listen_timeout_ns / 1e9);
		return r ? -errno : -ETIMEDOUT;
	}
	*fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	return *fd < 0 ? -errno : 0;
}

int lhp_ctrl_listen(const struct lhp_opts *o, struct lhp_ctrl *c)
{
	int lfd = -1, fd = -1, err;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	err = listen_socket(o, &lfd);
	if (err)
		return err;
	pr_info("waiting for a client on port %u\n", o->port);
	err = accept_client(o, lfd, &fd);
	close(lfd);
	return err ? err : ctrl_adopt(c, fd);
}

void lhp_ctrl_close(struct lhp_ctrl *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

int lhp_ctrl_printf(struct lhp_ctrl *c, const char *fmt, ...)
{
	char line[4096];
	va_list ap;
	size_t off = 0;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -EMSGSIZE;
	while (off < (size_t)n) {
		ssize_t w = send(c->fd, line + off, (size_t)n - off, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)w;
	}
	return 0;
}

int lhp_ctrl_getline(struct lhp_ctrl *c, char *line, size_t cap, int timeout_ms)
{
	uint64_t deadline = timeout_ms > 0 ? lh_now_ns() + (uint64_t)timeout_ms * 1000000 : 0;

	for (;;) {
		char *nl = memchr(c->buf, '\n', c->len);
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		int wait, r;
		ssize_t n;

		if (nl) {
			size_t l = (size_t)(nl - c->buf);

			if (l >= cap)
				return -EMSGSIZE;
			memcpy(line, c->buf, l);
			line[l] = 0;
			memmove(c->buf, nl + 1, c->len - l - 1);
			c->len -= l + 1;
			return 1;
		}
		if (c->eof)
			return -EPIPE;
		if (c->len == sizeof(c->buf))
			return -EMSGSIZE;
		if (timeout_ms < 0) {
			wait = -1;
		} else if (timeout_ms == 0) {
			wait = 0;
		} else {
			uint64_t now = lh_now_ns();

			wait = now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
		}
		r = poll(&pfd, 1, wait);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return 0;
		n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			c->eof = true;
		c->len += (size_t)n;
	}
}

/* Find "key=" as a whole word; returns a pointer to the value */
static const char *kv_find(const char *line, const char *key)
{
	size_t kl = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=')
			return p + kl + 1;
		p += kl;
	}
	return NULL;
}

bool lhp_kv_str(const char *line, const char *key, char *out, size_t cap)
{
	const char *v = kv_find(line, key);
	size_t n;

	if (!v)
		return false;
	n = strcspn(v, " ");
	if (n >= cap)
		return false;
	memcpy(out, v, n);
	out[n] = 0;
	return true;
}

bool lhp_kv_u64(const char *line, const char *key, uint64_t *v)
{
	const char *s = kv_find(line, key);
	char *end;

	if (!s)
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && end != s && (*end == ' ' || !*end);
}

bool lhp_kv_dbl(const char *line, const char *key, double *v)
{
	const char *s = kv_find(line, key);
	char *end;

	if (!s)
		return false;
	*v = strtod(s, &end);
	return end != s && (*end == ' ' || !*end);
}

/* The responder's counters in a RESULT line: the key, the field of struct lhp_summary */
#define RESULT_COUNTERS(X)                                                                  \
	X(packets, r_packets) X(messages, r_messages) X(bytes, r_bytes) X(naks_sent, naks_sent)  \
	X(acks_sent, acks_sent) X(oos_drops, oos_drops) X(dups, dups)                            \
	X(verify_errors, verify_errors) X(protocol_errors, protocol_errors)                      \
	X(discarded_msgs, discarded_msgs) X(discarded_pkts, discarded_pkts)
#define COUNTER_FMT(key, field) " " #key "=%llu"
#define COUNTER_ARG(key, field) , (unsigned long long)s->field
#define DROP_FMT(field) " " #field "=%llu"
#define DROP_ARG(field) , (unsigned long long)s->resp_drops.field

int lhp_result_send(struct lhp_ctrl *c, const struct lhp_summary *s)
{
	return lhp_ctrl_printf(c,
			       "RESULT verified=%d" RESULT_COUNTERS(COUNTER_FMT) " cpu=%.6f"
			       LHP_RX_DROPS(DROP_FMT) "\n",
			       s->verified RESULT_COUNTERS(COUNTER_ARG), s->r_cpu_s
			       LHP_RX_DROPS(DROP_ARG));
}

void lhp_result_parse(const char *line, struct lhp_summary *s, uint64_t *verified)
{
#define COUNTER_GET(key, field) lhp_kv_u64(line, #key, &s->field);
#define DROP_GET(field) lhp_kv_u64(line, #field, &s->resp_drops.field);
	lhp_kv_u64(line, "verified", verified);
	RESULT_COUNTERS(COUNTER_GET)
	lhp_kv_dbl(line, "cpu", &s->r_cpu_s);
	LHP_RX_DROPS(DROP_GET)
#undef COUNTER_GET
#undef DROP_GET
}

int lhp_naks_send(struct lhp_ctrl *c, const struct lhp_events *e)
{
	unsigned int i;
	int err = 0;

	for (i = 0; !err && i < e->n; i++)
		err = lhp_ctrl_printf(c, "NAK qp=%u psn=0x%06x got=0x%06x\n", e->ev[i].qp,
				      e->ev[i].psn, e->ev[i].got);
	if (!err && e->dropped)
		err = lhp_ctrl_printf(c, "NAK more=%llu\n", (unsigned long long)e->dropped);
	return err;
}

void lhp_nak_parse(const char *line, struct lhp_events *e)
{
	uint64_t qp = 0, psn = 0, got = LHP_NO_PSN, more;

	if (lhp_kv_u64(line, "qp", &qp) && lhp_kv_u64(line, "psn", &psn)) {
		lhp_kv_u64(line, "got", &got);
		lhp_event_add_got(e, (uint32_t)qp, (uint32_t)psn, (uint32_t)got, LHP_EV_NAK);
	} else if (lhp_kv_u64(line, "more", &more)) {
		e->dropped += more;
	}
}

int lhp_params_alloc(struct lhp_params *p, uint32_t qps)
{
	p->client_psn = calloc(qps, sizeof(*p->client_psn));
	p->server_psn = calloc(qps, sizeof(*p->server_psn));
	p->server_va = calloc(qps, sizeof(*p->server_va));
	p->server_rkey = calloc(qps, sizeof(*p->server_rkey));
	if (!p->client_psn || !p->server_psn || !p->server_va || !p->server_rkey) {
		lhp_params_free(p);
		return -ENOMEM;
	}
	return 0;
}

void lhp_params_free(struct lhp_params *p)
{
	free(p->client_psn);
	free(p->server_psn);
	free(p->server_va);
	free(p->server_rkey);
	p->client_psn = p->server_psn = NULL;
	p->server_va = NULL;
	p->server_rkey = NULL;
}

int lhp_params_send(struct lhp_ctrl *c, const struct lhp_params *p)
{
	uint32_t i;
	int err;

	err = lhp_ctrl_printf(c,
			      "LHPERF version=%d op=%s recovery=%s qps=%u size=%llu mtu=%u "
			      "iters=%llu window=%u ackreq=%u seed=0x%llx qpn=0x%x\n",
			      LHP_VERSION, lhp_op_name(p->op), lhp_recovery_name(p->recovery),
			      p->qps, (unsigned long long)p->size, p->mtu,
			      (unsigned long long)p->iters, p->window, p->ackreq_every,
			      (unsigned long long)p->seed, p->client_qpn_base);
	for (i = 0; !err && i < p->qps; i++)
		err = lhp_ctrl_printf(c, "QP i=%u psn=0x%x\n", i, p->client_psn[i]);
	return err ? err : lhp_ctrl_printf(c, "END\n");
}

/* The run's values from the client's LHPERF line; false when one is missing or out of range */
static bool params_from_line(const char *line, struct lhp_params *p)
{
	char word[32];
	uint64_t v;
	int op, recovery;

	if (!lhp_kv_str(line, "op", word, sizeof(word)) ||
	    (op = lhp_choice_value(lhp_op_choices, word)) < 0 ||
	    !lhp_kv_str(line, "recovery", word, sizeof(word)) ||
	    (recovery = lhp_choice_value(lhp_recovery_choices, word)) < 0)
		return false;
	p->op = (enum lhp_op)op;
	p->recovery = (enum lhp_recovery)recovery;
	if (!lhp_kv_u64(line, "qps", &v) || !v || v > LHP_MAX_QPS)
		return false;
	p->qps = (uint32_t)v;
	if (!lhp_kv_u64(line, "size", &p->size) || !p->size || p->size > (1ull << 31))
		return false;
	if (!lhp_kv_u64(line, "mtu", &v) || v > 4096 || !lhp_choice_name(lhp_mtu_choices, (int)v))
		return false;
	p->mtu = (uint32_t)v;
	if (!lhp_kv_u64(line, "iters", &p->iters))
		return false;
	if (!lhp_kv_u64(line, "window", &v) || !v || v > (1u << 20))
		return false;
	p->window = (uint32_t)v;
	if (!lhp_kv_u64(line, "ackreq", &v) || !v)
		return false;
	p->ackreq_every = (uint32_t)v;
	if (!lhp_kv_u64(line, "seed", &p->seed) || !lhp_kv_u64(line, "qpn", &v) ||
	    v > ROCE_QPN_MASK)
		return false;
	p->client_qpn_base = (uint32_t)v;
	return true;
}

/* The client's QP lines (each start PSN) and END; false when malformed or missing */
static bool params_qp_lines(struct lhp_ctrl *c, struct lhp_params *p)
{
	char line[1024];
	uint64_t v;
	uint32_t i;
	int r;

	for (i = 0; i < p->qps; i++) {
		r = lhp_ctrl_getline(c, line, sizeof(line), LHP_CTRL_WAIT_MS);
		if (r <= 0 || !lhp_starts_with(line, "QP ") || !lhp_kv_u64(line, "i", &v) ||
		    v != i || !lhp_kv_u64(line, "psn", &v) || v > ROCE_PSN_MASK)
			return false;
		p->client_psn[i] = (uint32_t)v;
	}
	r = lhp_ctrl_getline(c, line, sizeof(line), LHP_CTRL_WAIT_MS);
	return r > 0 && strcmp(line, "END") == 0;
}

int lhp_params_recv(struct lhp_ctrl *c, struct lhp_params *p, char *err, size_t errcap)
{
	char line[1024];
	uint64_t ver;
	int r;

	r = lhp_ctrl_getline(c, line, sizeof(line), LHP_CTRL_WAIT_MS);
	if (r <= 0) {
		snprintf(err, errcap, "%s",
			 r == -EPIPE ? "the client left before sending the run parameters" :
				       "no run parameters from the client");
		return r ? r : -ETIMEDOUT;
	}
	if (!lhp_starts_with(line, "LHPERF ") || !lhp_kv_u64(line, "version", &ver)) {
		snprintf(err, errcap, "not an lhperf client");
		return -EPROTO;
	}
	if (ver != LHP_VERSION) {
		snprintf(err, errcap, "protocol version %llu, server speaks %d",
			 (unsigned long long)ver, LHP_VERSION);
		return -EPROTO;
	}
	if (!params_from_line(line, p))
		goto bad;
	if (lhp_params_alloc(p, p->qps)) {
		snprintf(err, errcap, "out of memory");
		return -ENOMEM;
	}
	if (!params_qp_lines(c, p))
		goto bad;
	return 0;
bad:
	snprintf(err, errcap, "malformed parameters from the client");
	return -EPROTO;
}
