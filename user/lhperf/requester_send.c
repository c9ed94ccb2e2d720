// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The requester's send side: the send window and TX depth, a packet built
 * at a QP's next PSN, the --rate token bucket, the round robin over the QPs,
 * the time spent with a full window, and the --bad-frames.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "lhperf.h"
#include "log.h"
#include "requester_int.h"

#define BURST_PER_QP 16

/* The four opcodes of the run's operation (WRITE or SEND) */
void req_set_opcodes(struct req_ctx *x)
{
	if (x->p.op == LHP_OP_WRITE) {
		x->op_first = ROCE_RC_RDMA_WRITE_FIRST;
		x->op_middle = ROCE_RC_RDMA_WRITE_MIDDLE;
		x->op_last = ROCE_RC_RDMA_WRITE_LAST;
		x->op_only = ROCE_RC_RDMA_WRITE_ONLY;
	} else {
		x->op_first = ROCE_RC_SEND_FIRST;
		x->op_middle = ROCE_RC_SEND_MIDDLE;
		x->op_last = ROCE_RC_SEND_LAST;
		x->op_only = ROCE_RC_SEND_ONLY;
	}
}

/* The end of a full window: its time counted (window_full_s) */
void req_win_open(struct lhp_req_qp *q, uint64_t now)
{
	if (q->win_full_since) {
		q->win_full_ns += now > q->win_full_since ? now - q->win_full_since : 0;
		q->win_full_since = 0;
	}
}

/* window PSNs sent and not acknowledged: q may send no more until an ACK */
static bool window_full(const struct req_ctx *x, const struct lhp_req_qp *q)
{
	return q->next >= q->una && q->next - q->una >= x->p.window;
}

/* Room in q's window and TX depth for the packet at q->next */
static bool req_can_send(const struct req_ctx *x, const struct lhp_req_qp *q)
{
	if (q->error || q->next >= q->total || window_full(x, q))
		return false;
	return q->next / x->npkts < q->una / x->npkts + x->o->tx_depth;
}

/* Build the packet at q->next into the tx batch */
static int req_build(struct req_ctx *x, struct lhp_req_qp *q, uint64_t now)
{
	struct lh_pkt_spec *s = &x->specs[q->idx];
	uint64_t seq = q->next, m = seq / x->npkts, k = seq % x->npkts;
	uint64_t off = k * x->p.mtu;
	size_t len = x->p.size - off < x->p.mtu ? (size_t)(x->p.size - off) : x->p.mtu;
	bool first = k == 0, last = k == x->npkts - 1;
	struct lh_frame *f;
	ssize_t n;

	f = lhp_port_tx_slot(&x->port);
	if (!f)
		return -ENOSPC;
	s->roce.opcode = x->npkts == 1 ? x->op_only :
			 first	       ? x->op_first :
			 last	       ? x->op_last :
					 x->op_middle;
	s->roce.psn = seq_psn(q, seq);
	s->roce.ackreq = last || ++q->noack >= x->p.ackreq_every;
	if (s->roce.ackreq)
		q->noack = 0;
	if (x->p.op == LHP_OP_WRITE && first) {
		s->roce.reth.va = q->remote_va;
		s->roce.reth.rkey = q->rkey;
		s->roce.reth.dmalen = (uint32_t)x->p.size;
	}
	lhp_pattern_fill(x->payload, lhp_pattern_base(x->p.seed, q->idx, m), off, len);
	s->payload = x->payload;
	s->payload_len = len;
	s->ip_id = x->port.ip_id++;
	n = lh_pkt_build(s, f->data, f->cap);
	if (n < 0) {
		x->port.tx_n--;
		return (int)n;
	}
	f->len = (uint32_t)n;
	if (seq < q->sent_hi) {
		q->retransmitted++;
	} else {
		q->sent_hi = seq + 1;
		if (first)
			q->msg_start_ns[m & q->ring_mask] = now;
	}
	if (!x->sent_any) {
		x->sent_any = true;
		x->t_first_tx = now;
		x->progress_ns = now;
	}
	q->pkts_sent++;
	q->next++;
	if (!q->deadline_ns)
		req_arm_timer(x, q, now);
	x->tokens -= (double)n;
	return 0;
}

/* --rate: the bucket refilled for the time since the last refill */
static void refill_tokens(struct req_ctx *x, uint64_t now)
{
	if (!x->bytes_per_ns)
		return;
	x->tokens += (double)(now - x->tok_ns) * x->bytes_per_ns;
	if (x->tokens > x->bucket)
		x->tokens = x->bucket;
	x->tok_ns = now;
}

/* Fill the tx batch round robin over the QPs; returns frames built */
int req_fill(struct req_ctx *x, uint64_t now)
{
	uint32_t scanned, built = 0;
	int err;

	refill_tokens(x, now);
	for (scanned = 0; scanned < x->nqps; scanned++) {
		struct lhp_req_qp *q = &x->qps[x->rr];
		int burst = scanned ? 0 : x->rr_burst;

		while (burst < BURST_PER_QP && req_can_send(x, q)) {
			/*
			 * Out of tokens or room: the next fill goes on with this QP
			 * and the rest of its turn. Moving on to the next QP instead
			 * left a message cut mid-way for a whole round: under --rate,
			 * 1024 QPs of 2-packet messages at 0.2 Gb/s take 84 ms a
			 * round, and the cut messages' 67 ms timers fired (116 NIC
			 * timeouts on a lossless path).
			 */
			if ((x->bytes_per_ns && x->tokens < 0) || (err = req_build(x, q, now)) == -ENOSPC) {
				x->rr_burst = burst;
				return (int)built;
			}
			if (err) {
				pr_warn("building a packet: %s\n", strerror(-err));
				return err;
			}
			burst++;
			built++;
		}
		/* stopped by its window with data left: the time until an ACK opens it */
		if (!q->win_full_since && !q->error && q->next < q->total && window_full(x, q))
			q->win_full_since = now;
		x->rr = (x->rr + 1) % x->nqps;
		x->rr_burst = 0;
	}
	return (int)built;
}

/*
 * One --bad-frames frame of QP q into f, of a kind a receiver must drop: 0 a
 * bad ICRC, 1 another partition's P_Key, 2 not from the QP's peer, 3 not to
 * the responder's address
 */
static int build_bad_frame(struct req_ctx *x, const struct lhp_req_qp *q, unsigned int kind,
			   struct lh_frame *f)
{
	static const uint8_t junk[64] = { [0 ... 63] = 0xa5 };
	struct lh_pkt_spec s = x->specs[q->idx];
	size_t n = x->port.family == AF_INET6 ? 16 : 4;
	ssize_t len;

	s.roce.opcode = x->op_only;
	s.roce.psn = q->psn0; /* the PSN the responder expects */
	s.roce.ackreq = true;
	s.roce.reth.va = q->remote_va;
	s.roce.reth.rkey = q->rkey;
	s.roce.reth.dmalen = sizeof(junk);
	s.payload = junk;
	s.payload_len = sizeof(junk);
	s.ip_id = x->port.ip_id++;
	if (kind == 1)
		s.roce.pkey = 0x1234; /* another partition */
	else if (kind == 2)
		s.src.b[n - 1] ^= 0x55; /* not the QP's peer */
	else if (kind == 3)
		s.dst.b[n - 1] ^= 0x55; /* not the responder's address */
	len = lh_pkt_build(&s, f->data, f->cap);
	if (len < 0)
		return (int)len;
	if (kind == 0) {
		struct lh_pkt p;

		f->data[len - 1] ^= 0xff; /* the ICRC, nothing else */
		if (lh_pkt_parse(f->data, (size_t)len, true, &p) == LH_STAT_ROCE && s.udp_csum)
			lh_pkt_udp_csum_update(f->data, &p);
	}
	f->len = (uint32_t)len;
	return 0;
}

/* --bad-frames: frames a receiver must drop, sent before the data */
int req_send_bad_frames(struct req_ctx *x)
{
	uint32_t i, k, kind;
	struct lh_frame *f;
	int err;

	for (i = 0; i < x->nqps; i++) {
		for (k = 0; k < x->o->bad_frames; k++) {
			for (kind = 0; kind < 4; kind++) {
				err = lhp_port_tx_slot_flushed(&x->port, &f);
				if (!err)
					err = build_bad_frame(x, &x->qps[i], kind, f);
				if (err)
					return err;
			}
		}
	}
	return lhp_port_flush(&x->port);
}
