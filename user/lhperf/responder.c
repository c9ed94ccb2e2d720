// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhperf server: the responder side of N RC QPs, as Linux rxe's receive path
 * and responder behave (drivers/infiniband/sw/rxe/rxe_recv.c, rxe_resp.c):
 *
 *  - a frame is for a QP when its destination QPN is one of ours (others'
 *    traffic on the same interface is ignored); then, as rxe_recv's
 *    hdr_check() and ICRC check, it is dropped and counted when its IP
 *    addresses are not the QP's, its P_Key is not the QP's or its ICRC is
 *    wrong;
 *  - PSN == ePSN: executed (payload placed and verified), ePSN advances, an
 *    ACK (syndrome 0x1f, unlimited credits, with the MSN) is sent only when
 *    the packet has the ACK-request bit;
 *  - PSN ahead of ePSN: the first such packet of a gap is answered by one
 *    NAK (syndrome 0x60, PSN = ePSN) and dropped; later ones are dropped
 *    silently until a packet with PSN == ePSN arrives (rxe's sent_psn_nak);
 *  - PSN behind ePSN: a duplicate, never executed again, re-ACKed with
 *    PSN = ePSN - 1 (rxe's duplicate_request(), C9-105);
 *  - an opcode out of sequence, a bad length or a RETH not matching the
 *    target buffer is rxe's class C error: NAK invalid request (0x61) or
 *    remote access error (0x62) and the QP goes to the error state.
 *
 * With --recovery gb0 (the client says so on the side channel) the
 * responder is a go-back-0 one: a gap also discards the message partially
 * received, ePSN goes back to that message's first PSN and the NAK names
 * it, so the message can only complete when all its packets arrive in one
 * go.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "lhperf.h"
#include "log.h"

#define WAIT_MS 100
#define VERIFY_LOG_MAX 5

struct resp_ctx {
	const struct lhp_opts *o;
	struct lhp_params p;
	struct lhp_ctrl ctrl;
	struct lhp_port port;
	struct lhp_resp_qp *qps;
	struct lh_pkt_spec *specs; /* ACK templates */
	uint32_t nqps;
	uint64_t last_ping;
	uint64_t t_first_rx, t_last_rx;
	double cpu0;
	unsigned int verify_logged;
	uint64_t ack_tx_drops;
	struct lhp_summary sum;
	struct lhp_events naks;
	/* the client's view at the end */
	uint64_t *c_done, *c_started;
};

static inline uint32_t epsn(const struct lhp_resp_qp *q)
{
	return psn_add(q->psn0, (uint32_t)q->eseq);
}

/* Queue an ACK or NAK (rxe's send_ack()) */
static void send_ack(struct resp_ctx *x, struct lhp_resp_qp *q, uint8_t syndrome, uint32_t psn)
{
	struct lh_pkt_spec *s = &x->specs[q->idx];
	struct lh_frame *f;
	ssize_t n;

	if (lhp_port_tx_slot_flushed(&x->port, &f)) {
		x->ack_tx_drops++;
		return;
	}
	s->roce.psn = psn;
	s->roce.aeth.syndrome = syndrome;
	s->roce.aeth.msn = (uint32_t)(q->msgs & ROCE_MSN_MASK);
	s->ip_id = x->port.ip_id++;
	n = lh_pkt_build(s, f->data, f->cap);
	if (n < 0) {
		x->port.tx_n--;
		x->ack_tx_drops++;
		return;
	}
	f->len = (uint32_t)n;
	if ((syndrome & AETH_TYPE_MASK) == AETH_TYPE_NAK)
		q->naks_sent++;
	else
		q->acks_sent++;
}

/* rxe class C: the request is refused and the QP moves to the error state */
static void resp_class_c(struct resp_ctx *x, struct lhp_resp_qp *q, uint8_t syndrome,
			 uint32_t psn, const char *why)
{
	q->protocol_errors++;
	q->error = true;
	send_ack(x, q, syndrome, psn);
	pr_warn("QP %u (0x%06x) PSN 0x%06x: %s; QP moved to the error state\n", q->idx, q->qpn,
		psn, why);
}

static bool op_is_write(uint8_t opcode)
{
	return roce_opcode_info(opcode) & ROCE_OPF_WRITE;
}

/* rxe's check_op_seq, _length and _rkey (a FIRST starts a message); false: a class C NAK */
static bool resp_check_request(struct resp_ctx *x, struct lhp_resp_qp *q, const struct lh_pkt *p)
{
	uint32_t f = p->opflags, mtu = x->p.mtu;
	size_t len = p->payload_len;
	bool write = x->p.op == LHP_OP_WRITE;

	if (!!(f & ROCE_OPF_WRITE) != write) {
		resp_class_c(x, q, AETH_NAK_INVALID_REQUEST, p->roce.psn,
			     write ? "SEND on a WRITE run" : "WRITE on a SEND run");
		return false;
	}
	/* rxe check_op_seq(): FIRST/ONLY between messages, MIDDLE/LAST inside one */
	if (q->last_opcode < 0 ? !(f & ROCE_OPF_FIRST) :
				 ((f & ROCE_OPF_FIRST) || op_is_write((uint8_t)q->last_opcode) != write)) {
		resp_class_c(x, q, AETH_NAK_INVALID_REQUEST, p->roce.psn,
			     q->last_opcode < 0 ? "missing FIRST opcode" :
						  "missing LAST opcode");
		return false;
	}
	/* rxe check_length(): FIRST/MIDDLE carry exactly an MTU, LAST 1..MTU */
	if ((f & ROCE_OPF_ONLY) == ROCE_OPF_ONLY ? len > mtu :
	    (f & ROCE_OPF_LAST)			 ? (len == 0 || len > mtu) :
						   len != mtu) {
		resp_class_c(x, q, AETH_NAK_INVALID_REQUEST, p->roce.psn, "bad payload length");
		return false;
	}
	if (f & ROCE_OPF_FIRST) {
		q->msg_first = q->eseq;
		q->offset = 0;
		if (write && (p->roce.reth.rkey != q->rkey || p->roce.reth.va != q->va ||
			      p->roce.reth.dmalen != x->p.size)) {
			resp_class_c(x, q, AETH_NAK_REMOTE_ACCESS, p->roce.psn,
				     "RETH outside the registered buffer");
			return false;
		}
	}
	if (q->offset + len > x->p.size) {
		resp_class_c(x, q, AETH_NAK_INVALID_REQUEST, p->roce.psn,
			     "message longer than the buffer");
		return false;
	}
	if (write && (f & ROCE_OPF_LAST) && q->offset + len != x->p.size) {
		resp_class_c(x, q, AETH_NAK_INVALID_REQUEST, p->roce.psn,
			     "WRITE shorter than its RETH length");
		return false;
	}
	return true;
}

/* The payload checked against the pattern and placed; the message counted at its LAST */
static void resp_place(struct resp_ctx *x, struct lhp_resp_qp *q, const uint8_t *frame,
		       const struct lh_pkt *p)
{
	size_t len = p->payload_len;
	long bad;

	bad = lhp_pattern_check(frame + p->payload_off,
				lhp_pattern_base(x->p.seed, q->idx, q->msgs), q->offset, len);
	if (bad >= 0) {
		q->verify_errors++;
		if (x->verify_logged++ < VERIFY_LOG_MAX)
			pr_warn("QP %u message %llu: byte %llu differs from the pattern (PSN 0x%06x)\n",
				q->idx, (unsigned long long)q->msgs,
				(unsigned long long)(q->offset + (uint64_t)bad), p->roce.psn);
	}
	q->offset += len;
	q->eseq++;
	q->last_opcode = p->roce.opcode;
	if (p->opflags & ROCE_OPF_LAST) {
		if (q->offset != x->p.size) {
			q->verify_errors++;
			if (x->verify_logged++ < VERIFY_LOG_MAX)
				pr_warn("QP %u message %llu: %llu bytes, expected %llu\n", q->idx,
					(unsigned long long)q->msgs,
					(unsigned long long)q->offset,
					(unsigned long long)x->p.size);
		}
		q->msgs++;
		q->bytes_ok += q->offset;
		q->offset = 0;
		q->last_opcode = -1;
	}
}

/* A packet with PSN == ePSN: checked as rxe does, placed, ACKed when it asks */
static void resp_execute(struct resp_ctx *x, struct lhp_resp_qp *q, const uint8_t *frame,
			 const struct lh_pkt *p)
{
	if (!resp_check_request(x, q, p))
		return;
	resp_place(x, q, frame, p);
	if (p->roce.ackreq)
		send_ack(x, q, AETH_ACK_UNLIMITED, p->roce.psn);
}

/* A request by its PSN: ahead of ePSN a gap (one NAK), behind it a duplicate, else executed */
static void resp_packet(struct resp_ctx *x, struct lhp_resp_qp *q, const uint8_t *frame,
			const struct lh_pkt *p)
{
	int32_t d = psn_diff(p->roce.psn, epsn(q));

	q->pkts_rx++;
	if (d > 0) {
		q->oos_drops++;
		if (q->nak_sent)
			return; /* one NAK per gap */
		q->nak_sent = true;
		if (x->p.recovery == LHP_GB0 && q->last_opcode >= 0) {
			/* go-back-0: the partial message is thrown away */
			q->discarded_msgs++;
			q->discarded_pkts += q->eseq - q->msg_first;
			q->eseq = q->msg_first;
			q->offset = 0;
			q->last_opcode = -1;
		}
		send_ack(x, q, AETH_NAK_PSN_SEQ_ERROR, epsn(q));
		lhp_event_add_got(&x->naks, q->idx, epsn(q), p->roce.psn, LHP_EV_NAK);
		return;
	}
	if (d < 0) {
		q->dups++;
		send_ack(x, q, AETH_ACK_UNLIMITED, psn_add(epsn(q), ROCE_PSN_MASK));
		return;
	}
	q->nak_sent = false;
	resp_execute(x, q, frame, p);
}

/* A responder takes RC requests that carry a SEND or a WRITE */
static bool is_request(const struct lh_pkt *p)
{
	return (p->roce.opcode & ROCE_TRANSPORT_MASK) == ROCE_TRANSPORT_RC &&
	       (p->opflags & ROCE_OPF_REQ) && (p->opflags & (ROCE_OPF_SEND | ROCE_OPF_WRITE));
}

/* n frames received: the checks of rxe_recv, then each request to its QP */
static void resp_rx(struct resp_ctx *x, int n, uint64_t now)
{
	struct lh_pkt p;
	int i;

	for (i = 0; i < n; i++) {
		const struct lh_frame *f = &x->port.rx[i];
		int idx = lhp_port_rx_check(&x->port, f, x->p.server_qpn_base, x->nqps, is_request,
					    &x->sum.resp_drops, &p);
		struct lhp_resp_qp *q;

		if (idx < 0)
			continue;
		q = &x->qps[idx];
		if (q->error)
			continue;
		if (!x->t_first_rx)
			x->t_first_rx = now;
		x->t_last_rx = now;
		resp_packet(x, q, f->data, &p);
	}
}

/* The client's DONE: its status and per-QP counts */
static int resp_read_done(struct resp_ctx *x, const char *done)
{
	char line[256], st[32];
	uint64_t v;
	uint32_t i;
	int r;

	if (lhp_kv_str(done, "status", st, sizeof(st)) && lhp_status_from_name(st) >= 0)
		x->sum.status = (enum lhp_status)lhp_status_from_name(st);
	else
		x->sum.status = LHP_ST_ERROR;
	for (i = 0;;) {
		r = lhp_ctrl_getline(&x->ctrl, line, sizeof(line), LHP_CTRL_WAIT_MS);
		if (r <= 0)
			return r ? r : -ETIMEDOUT;
		if (!strcmp(line, "END"))
			return i == x->nqps ? 0 : -EPROTO;
		if (!lhp_starts_with(line, "QPDONE "))
			continue;
		if (!lhp_kv_u64(line, "i", &v) || v >= x->nqps)
			return -EPROTO;
		lhp_kv_u64(line, "done", &x->c_done[v]);
		lhp_kv_u64(line, "started", &x->c_started[v]);
		i++;
	}
}

/* Run until the client's DONE, or until the side channel breaks */
static int resp_run(struct resp_ctx *x)
{
	char line[256];
	unsigned int batch = x->port.batch;
	uint64_t now;
	int n, r, err;

	x->last_ping = lh_now_ns();
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = lh_pktio_fd(x->port.io), .events = POLLIN },
			{ .fd = x->ctrl.fd, .events = POLLIN },
		};

		if (poll(pfd, 2, WAIT_MS) < 0 && errno != EINTR)
			return -errno;
		now = lh_now_ns();
		do {
			n = lh_pktio_recv(x->port.io, x->port.rx, batch, 0);
			if (n < 0) {
				snprintf(x->sum.error, sizeof(x->sum.error), "receiving on %s: %s",
					 x->port.ifname, strerror(-n));
				x->sum.status = LHP_ST_ERROR;
				return n;
			}
			x->port.frames_rx += (unsigned int)n;
			resp_rx(x, n, now);
			err = lhp_port_flush(&x->port);
			if (err) {
				snprintf(x->sum.error, sizeof(x->sum.error), "sending on %s: %s",
					 x->port.ifname, strerror(-err));
				x->sum.status = LHP_ST_ERROR;
				return err;
			}
		} while ((unsigned int)n == batch);

		if (now - x->last_ping >= LHP_PING_NS) {
			x->last_ping = now;
			lhp_ctrl_printf(&x->ctrl, "PING\n");
		}
		while ((r = lhp_ctrl_getline(&x->ctrl, line, sizeof(line), 0)) > 0) {
			if (lhp_starts_with(line, "DONE")) {
				r = resp_read_done(x, line);
				if (r)
					goto lost;
				return 0;
			}
		}
		if (r < 0)
			goto lost;
	}
lost:
	x->sum.status = LHP_ST_PEER_LOST;
	snprintf(x->sum.error, sizeof(x->sum.error), "the client %s mid-run",
		 r == -EPIPE ? "closed the side channel" : "became unreachable");
	pr_warn("%s\n", x->sum.error);
	return r;
}

/* Every byte checked, no protocol error, message counts agree with the client's */
static bool resp_verify(struct resp_ctx *x)
{
	bool ok = true;
	uint32_t i;

	for (i = 0; i < x->nqps; i++) {
		const struct lhp_resp_qp *q = &x->qps[i];
		bool qok = !q->verify_errors && !q->protocol_errors && q->msgs >= x->c_done[i] &&
			   q->msgs <= x->c_started[i];

		if (x->sum.status == LHP_ST_OK)
			qok = qok && q->msgs == x->c_done[i] && q->msgs == x->c_started[i];
		if (!qok && ok)
			pr_warn("QP %u: received %llu messages (client: %llu completed, %llu started), "
				"%llu verify errors, %llu protocol errors\n",
				i, (unsigned long long)q->msgs, (unsigned long long)x->c_done[i],
				(unsigned long long)x->c_started[i],
				(unsigned long long)q->verify_errors,
				(unsigned long long)q->protocol_errors);
		ok = ok && qok;
	}
	return ok;
}

static void resp_collect(struct resp_ctx *x)
{
	uint32_t i;

	for (i = 0; i < x->nqps; i++) {
		const struct lhp_resp_qp *q = &x->qps[i];

		x->sum.r_packets += q->pkts_rx;
		x->sum.r_messages += q->msgs;
		x->sum.r_bytes += q->bytes_ok;
		x->sum.naks_sent += q->naks_sent;
		x->sum.acks_sent += q->acks_sent;
		x->sum.oos_drops += q->oos_drops;
		x->sum.dups += q->dups;
		x->sum.verify_errors += q->verify_errors;
		x->sum.protocol_errors += q->protocol_errors;
		x->sum.discarded_msgs += q->discarded_msgs;
		x->sum.discarded_pkts += q->discarded_pkts;
	}
	x->sum.r_cpu_s = lhp_cpu_seconds() - x->cpu0;
	x->sum.resp_drops.socket_drops = lh_pktio_drops(x->port.io);
	x->sum.cpu_s = x->sum.r_cpu_s;
	x->sum.elapsed_s = x->t_last_rx > x->t_first_rx ?
				   (double)(x->t_last_rx - x->t_first_rx) / 1e9 :
				   0;
	x->sum.have_server = true;
}

/* The responders' view to the client: RESULT, the NAK events, END */
static void resp_send_result(struct resp_ctx *x)
{
	if (!lhp_result_send(&x->ctrl, &x->sum))
		lhp_naks_send(&x->ctrl, &x->naks);
	lhp_ctrl_printf(&x->ctrl, "END\n");
}

static int resp_setup(struct resp_ctx *x)
{
	uint32_t i;

	x->nqps = x->p.qps;
	x->p.server_qpn_base = lhp_random_qpn_base(x->nqps);
	x->qps = calloc(x->nqps, sizeof(*x->qps));
	x->specs = calloc(x->nqps, sizeof(*x->specs));
	x->c_done = calloc(x->nqps, sizeof(uint64_t));
	x->c_started = calloc(x->nqps, sizeof(uint64_t));
	if (!x->qps || !x->specs || !x->c_done || !x->c_started)
		return -ENOMEM;
	for (i = 0; i < x->nqps; i++) {
		struct lhp_resp_qp *q = &x->qps[i];
		struct lh_pkt_spec *s = &x->specs[i];

		q->idx = i;
		q->qpn = x->p.server_qpn_base + i;
		q->dqpn = x->p.client_qpn_base + i;
		q->psn0 = x->p.client_psn[i];
		q->sport = lhp_rxe_sport(q->qpn, q->dqpn);
		q->last_opcode = -1;
		/* the registered buffer a WRITE targets, as perftest's MR */
		q->va = (lhp_random64() & 0x00007ffffffff000ull) | 0x1000;
		q->rkey = (uint32_t)lhp_random64();
		x->p.server_psn[i] = (uint32_t)(lhp_random64() & ROCE_PSN_MASK);
		x->p.server_va[i] = q->va;
		x->p.server_rkey[i] = q->rkey;
		lhp_port_spec(&x->port, s, q->sport, q->dqpn);
		s->roce.opcode = ROCE_RC_ACKNOWLEDGE;
	}
	return 0;
}

static void resp_free(struct resp_ctx *x)
{
	free(x->qps);
	free(x->specs);
	free(x->c_done);
	free(x->c_started);
	lhp_params_free(&x->p);
	lhp_port_close(&x->port);
	lhp_ctrl_close(&x->ctrl);
	lhp_fct_free(&x->sum.fct);
	free(x);
}

int lhp_server(const struct lhp_opts *o)
{
	struct resp_ctx *x = calloc(1, sizeof(*x));
	char err[160];
	uint32_t i;
	int r, code;

	if (!x)
		return LHP_EXIT_ERROR;
	x->o = o;
	x->ctrl.fd = -1;
	lhp_fct_init(&x->sum.fct);
	if (lhp_ctrl_listen(o, &x->ctrl)) {
		snprintf(err, sizeof(err), "no client connected");
		goto fail;
	}
	r = lhp_params_recv(&x->ctrl, &x->p, err, sizeof(err));
	if (r) {
		pr_warn("client rejected: %s\n", err);
		lhp_ctrl_printf(&x->ctrl, "ERR %s\n", err);
		goto fail;
	}
	r = lhp_port_open(&x->port, o, &x->ctrl, x->p.mtu, x->p.qps, x->p.window);
	if (r) {
		snprintf(err, sizeof(err), "cannot send RoCEv2 frames to the client: %s",
			 strerror(-r));
		lhp_ctrl_printf(&x->ctrl, "ERR server %s\n", err);
		goto fail;
	}
	if (resp_setup(x)) {
		snprintf(err, sizeof(err), "out of memory");
		lhp_ctrl_printf(&x->ctrl, "ERR server out of memory\n");
		goto fail;
	}
	lhp_ctrl_printf(&x->ctrl, "OK qpn=0x%x\n", x->p.server_qpn_base);
	for (i = 0; i < x->nqps; i++)
		lhp_ctrl_printf(&x->ctrl, "QP i=%u psn=0x%x va=0x%llx rkey=0x%x\n", i,
				x->p.server_psn[i], (unsigned long long)x->p.server_va[i],
				x->p.server_rkey[i]);
	if (lhp_ctrl_printf(&x->ctrl, "READY\n")) {
		snprintf(err, sizeof(err), "the client left during the setup");
		goto fail;
	}
	x->cpu0 = lhp_cpu_seconds();
	r = resp_run(x);
	resp_collect(x);
	if (!r) {
		x->sum.verified = resp_verify(x);
		resp_send_result(x);
	}
	lhp_report(stdout, o, &x->p, &x->port, &x->sum, &x->naks, NULL);
	code = lhp_exit_code(&x->sum);
	resp_free(x);
	return code;
fail:
	lhp_report_setup_error(stdout, o, err);
	resp_free(x);
	return LHP_EXIT_ERROR;
}
