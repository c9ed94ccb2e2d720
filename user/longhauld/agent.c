// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * longhauld's event loop: one epoll over the ring buffer, a timerfd and the
 * stop flag (the signal handler's). The agent never writes the lh_qp values
 * the programs change under the QP lock: pairing goes through lh_pair and
 * lh_ack, NACKs out of an AF_PACKET socket, continued runs through
 * BPF_PROG_TEST_RUN of lh_dc_kick, GC through deletes.
 */
#include <errno.h>
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

#include "agent.h"
#include "lh_maps.h"
#include "lh_proto.h"
#include "log.h"
#include "netlink.h"
#include "pkt.h"
#include "pktio.h"
#include "report.h"

/*
 * QPs the timer reads per tick at most: a pass over all of them spans
 * ticks beyond that, and each QP's timers (Depot-NACK retry, DC timer,
 * release watchdog, idle) are looked at once a pass. Reading every QP every
 * tick (1 ms at 2 ms RTT) cost each agent a quarter of a core at 1024 QPs
 * and half at 4096, taken from the endpoints on the same host here.
 */
#define SCAN_PER_TICK 256
/*
 * With neither T/C-SACK nor gateway recovery on (LR2 alone), no QP needs
 * the timer every tick but the Depot QPs with a gap, a release or a DC
 * timer open (the hot set: depot_hot()): they are read by key each tick,
 * the rest once per COLD_PASS_US (idle, stale, the path's round trip; a
 * lost event: the ring buffer full). A
 * pass walks every bucket of lh_qp whatever the QPs in it: at 1024 QPs in
 * a table of 8192 a pass each 4 ticks cost each agent a tenth of a core
 * (perf: __htab_map_lookup_and_delete_batch 45 % of the agent), enough to
 * tip the endpoints' 67 ms timers on this 2-core host (35-3096 NIC timeouts
 * in a lossless run, 0 without the agents' scans).
 */
#define COLD_PASS_US 250000
/*
 * ... and with the hot set empty, nothing needs a tick finer than this: the
 * agent wakes 10 times less often (an event that makes a QP hot, a Depot
 * gap or release, wakes it and brings the fine tick back). At 4096 QPs an
 * agent's 1 ms tick alone, the wake-ups, was 6 % of this 2-vCPU host's
 * samples (perf: finish_task_switch, the agents' largest).
 */
#define QUIET_TICK_US 10000
/* Quiet this long, a QP is forgotten when the table is half full (tick()) */
#define LH_IDLE_FULL_S 2
#define MAX_SCAN 65536 /* host pairs looked at per prune */
#define PRUNE_NS 100000000ull /* the pairing lists are pruned every 100 ms */
#define SILENCE_SLOTS 4096
#define PACE_US 100 /* gateway re-sends: the pacer's period */

/* Gateway recovery: one PSN to re-send from its copy (pool slot) */
struct gw_req {
	struct lh_qp_key k;
	uint32_t ring, psn, slot;
};

/* ... and per ring position, what became of the last one (the re-send guard) */
struct gw_mark {
	uint32_t psn;
	uint32_t ms; /* when it was re-sent; GW_QUEUED while in the queue */
	uint32_t tries; /* times re-sent: from the second on, the guard is doubled */
};
#define GW_QUEUED UINT32_MAX

/*
 * Sentry, per QP (by a hash of its key): when its silence rule and its
 * gateway re-sends last acted. Its round trip is measured by the program
 * (lh_qp s_srtt_us, s_rttvar_us: a request with AckReq to its ACK, WAN
 * queueing included, Karn's rule; --wan-rtt is the empty link's).
 */
struct sentry_est {
	uint64_t silence_ns; /* the last silence NAK or re-send */
	uint64_t resend_ns; /* the last gateway re-send (its report is due an RTT later) */
	/* the silence as first seen (sentry_silence): confirmed a tick later, unchanged */
	uint64_t quiet_ns, quiet_sack_ns;
	uint32_t quiet_una, quiet_next;
};

/*
 * Depot, per ring: the receiving NIC's ACK point as last seen, since when,
 * and the replays since it last moved (each waits twice as long).
 */
struct dc_timer {
	uint64_t since_ns;
	uint32_t acked;
	uint32_t told; /* the newest ePSN the agent's NACKs and reports gave the sender */
	bool told_set;
	uint8_t tries;
};

/* Per ring: the agent's state of the QP that has the ring (Depot, mostly) */
struct ring_state {
	uint64_t nacked_ns; /* when the agent last NACKed the QP's gaps */
	/* the last T/C-SACK report, and the QP's last_rx_ns it covered */
	uint64_t sack_ns, sack_rx_ns;
	struct dc_timer dc; /* dc_timer() */
	uint32_t hot_at; /* its place in the hot set + 1, 0 when not in it (LR2 alone) */
	uint8_t nack_tries; /* Depot-NACK retries since the QP last moved (backoff) */
};

struct agent {
	const struct lhd_config *cfg;
	struct lhd_datapath *dp;
	int qp_fd, ack_fd, pair_fd, ring_fd, pool_free_fd, ring_free_fd, hostpair_fd;
	/* one per --wan, in that order: a QP's frames leave by its wan_ifindex */
	struct lh_pktio *wan_io[LHD_MAX_WAN];
	int wan_ifindex[LHD_MAX_WAN];
	struct lh_pktio *dc_io;
	uint8_t dc_mac[6];
	struct lhd_agent_stats st;
	/* what the agent keeps per ring (the QP that has it), cfg->rings of them */
	struct ring_state *rs;
	/* Sentry: per QP, by a hash of its key: silence rate limit, RTT estimate */
	struct sentry_est *est;
	uint32_t path_rto_us; /* the largest RTO of the QPs last tick: the re-send guard */
	uint64_t gw_over_ns; /* since when the copies are over the bound; 0: they are not */
	uint32_t path_srtt_us; /* ... and the largest srtt: every QP's RTO is at least that */
	uint32_t path_stay_us; /* ... and the longest a copy stays (the QPs' s_stay_*) */
	uint32_t guard_ms; /* ... as written to lh_config */
	uint32_t report_seq;
	/* the tick came late (timer expirations missed): the agent itself was not running */
	bool tick_late;
	uint32_t tick_us; /* the timer's period now: cfg->tick_us, or QUIET_TICK_US (tick_rate()) */
	int tick_fd;
	uint64_t prune_ns; /* last prune of the pairing lists */
	/* Sentry, gateway recovery: the re-send queue (FIFO) and its pacer */
	int pool_fd, config_fd, pace_fd;
	struct gw_req *gwq;
	uint32_t gwq_cap, gwq_head, gwq_len;
	struct gw_mark *gw_marks; /* rings x LH_RING_SIZE */
	double gw_tokens; /* bytes the pacer may send now */
	uint64_t gw_pace_ns; /* when the tokens were last topped up */
	bool gw_pacing, gw_full, gw_full_set, rtt_known;
	struct lh_slot *slot_buf;
	struct lh_ring *ring_buf;
	/* the timer's copy of lh_qp, read in batches (a syscall per QP cost a core at 1024 QPs) */
	struct lh_qp_key *tick_keys;
	struct lh_qp *tick_qps;
	uint32_t tick_cap;
	/* a pass over lh_qp spans ticks (SCAN_PER_TICK): where it goes on, and its sums so far */
	uint32_t scan_tok;
	bool scan_on;
	/* LR2 alone: the slow pass and its hot set (Depot QPs by key, one per ring) */
	bool slow_scan;
	struct hot_ent {
		struct lh_qp_key k;
		uint32_t ring;
	} *hot;
	uint32_t hot_n;
	struct {
		uint32_t rto_max_us, srtt_max_us, unmeasured, qps;
		uint32_t stay_max_us; /* how long copies stay (s_stay_us, or the one under way) */
		uint64_t copies;
	} pass;
	uint64_t copies; /* of the last whole pass: gateway recovery's copies */
	uint32_t qps; /* ... the QPs in the table */
};

static struct sentry_est *sentry_est_of(struct agent *ag, const struct lh_qp_key *k)
{
	const uint8_t *b = (const uint8_t *)k;
	uint32_t h = 2166136261u, i;

	for (i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 16777619u;
	return &ag->est[h % SILENCE_SLOTS];
}

static uint32_t est_rto_us(const struct lh_qp *qp)
{
	return lh_rto_us(qp->s_srtt_us, qp->s_rttvar_us);
}

/*
 * What a QP's timers wait for a round trip: its RTO, at least --wan-rtt and
 * at least the largest srtt of the gateway's QPs with data outstanding
 * (path_srtt_us): they share its WAN link and its queue, and a QP whose
 * samples all fell into recoveries (dropped) keeps an estimate from before
 * the queue grew. Late costs more than early here: a re-send that comes
 * after the NIC's own timeout costs a go-back-N of its window, one that
 * comes too early a duplicate packet.
 */
static uint64_t sentry_rto_ns(const struct agent *ag, const struct lh_qp *qp)
{
	uint64_t rto = est_rto_us(qp);

	if (rto < ag->path_srtt_us)
		rto = ag->path_srtt_us;
	return 1000 * (rto > ag->cfg->wan_rtt_us ? rto : ag->cfg->wan_rtt_us);
}

static bool is_v4mapped(const uint8_t *a)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(a, pfx, 12);
}

static void addr_from_key(union lh_ip_addr *dst, const uint8_t *a)
{
	memset(dst, 0, sizeof(*dst));
	if (is_v4mapped(a))
		memcpy(&dst->v4, a + 12, 4);
	else
		memcpy(&dst->v6, a, 16);
}

/* The MAC of a host in the DC (a key's address) from the neighbour table */
static int dc_host_mac(const struct agent *ag, const uint8_t *key_addr, uint8_t mac[6])
{
	union lh_ip_addr a;

	addr_from_key(&a, key_addr);
	return lh_nl_neigh_get(is_v4mapped(key_addr) ? AF_INET : AF_INET6, ag->cfg->dc.ifindex,
			       is_v4mapped(key_addr) ? (void *)&a.v4 : (void *)&a.v6, mac);
}

/* ---- Depot-NACKs and reports from user space ---- */

/* A frame from the responder to the requester of a Depot QP, out of the WAN interface */
static void spec_to_requester(struct lh_pkt_spec *s, const struct lh_qp_key *k,
			      const struct lh_qp *qp)
{
	lh_pkt_spec_init(s, (qp->flags & LH_QPF_IPV6) ? AF_INET6 : AF_INET);
	memcpy(s->dst_mac, qp->wan_peer_mac, 6);
	memcpy(s->src_mac, qp->wan_mac, 6);
	addr_from_key(&s->src, k->daddr); /* from the responder ... */
	addr_from_key(&s->dst, k->saddr); /* ... to the requester */
	s->sport = qp->sport;
}

/*
 * The WAN interface a QP's frames leave by: the one its traffic uses (lh_qp
 * wan_ifindex, recorded in XDP with the MACs the frames carry), else the
 * first --wan (a Sentry QP no ACK has come for yet).
 */
static struct lh_pktio *wan_io_of(const struct agent *ag, const struct lh_qp *qp)
{
	int i;

	for (i = 0; i < ag->cfg->n_wan; i++)
		if (ag->wan_io[i] && (uint32_t)ag->wan_ifindex[i] == qp->wan_ifindex)
			return ag->wan_io[i];
	return ag->wan_io[0];
}

static int send_frame(struct agent *ag, const struct lh_qp *qp, uint8_t *buf, size_t len)
{
	struct lh_frame f = { .data = buf, .len = (uint32_t)len, .cap = (uint32_t)len };

	if (lh_pktio_send(wan_io_of(ag, qp), &f, 1) != 1) {
		ag->st.send_fail++;
		return -EIO;
	}
	return 0;
}

/* What the Depot holds of [ePSN, ePSN_D), read from the QP's ring */
static int held_bitmap(struct agent *ag, const struct lh_qp *qp, uint8_t held[32], uint32_t *nbits,
		       uint32_t *first_gap)
{
	struct lh_ring ring;
	int32_t n = psn_diff(qp->d_high, qp->d_deliv);
	uint32_t i;

	memset(held, 0, 32);
	*nbits = 0;
	*first_gap = 0;
	if (n <= 0)
		return 0;
	if (n > LH_REPORT_BITS)
		n = LH_REPORT_BITS;
	if (qp->ring == LH_NO_SLOT || bpf_map_lookup_elem(ag->ring_fd, &qp->ring, &ring))
		return -ENOENT;
	for (i = 0; i < (uint32_t)n; i++) {
		uint32_t psn = psn_add(qp->d_deliv, i);

		if (ring.ent[psn & LH_RING_MASK].tag == LH_TAG(LH_SLOT_HELD, psn))
			held[i / 8] |= (uint8_t)(1u << (i % 8));
		else if (*first_gap == i)
			(*first_gap)++;
	}
	*nbits = (uint32_t)n;
	return 0;
}

/*
 * The Depot's state of a QP to its Sentry: a Depot-NACK (PSN = ePSN, so the
 * NIC rewinds there if it may) and a report with every PSN held.
 */
static int send_report(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
		       bool with_nack, bool sack)
{
	uint8_t buf[256], held[32];
	struct lh_pkt_spec s;
	uint32_t nbits, gap, peer = qp->peer_qpn;
	struct dc_timer *t;
	ssize_t sz;

	/* a T/C-SACK report goes even with nothing held: it says all arrived */
	if (!ag->wan_io[0] || (!sack && qp->d_deliv == qp->d_high))
		return -EAGAIN;
	/* learned mid-flight, the NIC not yet past its first PSN: no ePSN to claim (LH_QPF_D_UNSURE) */
	if (qp->flags & LH_QPF_D_UNSURE)
		return -EAGAIN;
	/* paired in lh_pair, not yet copied into the QP by the programs */
	if (!(qp->flags & LH_QPF_PAIRED) && bpf_map_lookup_elem(ag->pair_fd, k, &peer))
		return -EAGAIN; /* the timer tries again once the NIC's first ACK paired it */
	if (held_bitmap(ag, qp, held, &nbits, &gap))
		return -ENOENT;
	/* the report's ePSN (and a NACK's PSN, not later) tells the sender what arrived */
	t = qp->ring < ag->cfg->rings ? &ag->rs[qp->ring].dc : NULL;
	if (t && (!t->told_set || psn_diff(qp->d_deliv, t->told) > 0)) {
		t->told = qp->d_deliv;
		t->told_set = true;
	}
	if (with_nack && gap) {
		spec_to_requester(&s, k, qp);
		s.roce.opcode = ROCE_RC_ACKNOWLEDGE;
		s.roce.pkey = qp->pkey;
		s.roce.byte4 = LH_DNACK_MARK | ((lh_depot_nack_len(qp, gap) - 1) & LH_DNACK_LEN_MASK);
		s.roce.dqpn = peer;
		s.roce.psn = lh_depot_nack_psn(qp); /* never acknowledge what has no backup */
		s.roce.aeth.syndrome = AETH_NAK_PSN_SEQ_ERROR;
		s.roce.aeth.msn = qp->msn;
		sz = lh_pkt_build(&s, buf, sizeof(buf));
		if (sz < 0 || send_frame(ag, qp, buf, (size_t)sz))
			return -EIO;
		ag->st.nack_retries++;
	}
	{
		struct lh_report_info ri = {
			.dqpn = k->dqpn,
			.peer_qpn = peer,
			.epsn = qp->d_deliv,
			.nbits = nbits,
			.seq = ag->report_seq,
			.flags = sack ? LH_REPORT_F_SACK : 0,
			.key = ag->cfg->report_key_set ? ag->cfg->report_key : NULL,
		};

		if (!++ag->report_seq)
			ag->report_seq = 1; /* 0 says unordered */
		memcpy(ri.held, held, sizeof(ri.held));
		spec_to_requester(&s, k, qp);
		sz = lh_report_frame(&s, &ri, buf, sizeof(buf));
		if (sz < 0 || send_frame(ag, qp, buf, (size_t)sz))
			return -EIO;
	}
	ag->st.reports++;
	if (sack)
		ag->st.sack_reports++;
	return 0;
}

/* Depot: a T/C-SACK report for a QP (time or count trigger) */
static void send_sack(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
		      uint64_t now)
{
	if (qp->ring >= ag->cfg->rings || !(qp->flags & LH_QPF_DEPOT))
		return;
	if (!send_report(ag, k, qp, false, true)) {
		ag->rs[qp->ring].sack_ns = now;
		ag->rs[qp->ring].sack_rx_ns = qp->last_rx_ns;
	}
}

/*
 * Sentry: an ACK or NAK (syndrome) at psn to the NIC, from the responder to
 * the requester, out of the DC interface: the NAK it was owed once its
 * retry ended (the ACK just passed), or the silence rule's.
 */
static int send_to_nic(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
		       uint32_t psn, uint8_t syndrome)
{
	uint8_t buf[256], nic_mac[6];
	struct lh_pkt_spec s;
	struct lh_frame f;
	ssize_t sz;
	int err;

	if (!ag->dc_io)
		return -ENODEV;
	err = dc_host_mac(ag, k->saddr, nic_mac);
	if (err)
		return err;
	lh_pkt_spec_init(&s, (qp->flags & LH_QPF_IPV6) ? AF_INET6 : AF_INET);
	memcpy(s.dst_mac, nic_mac, 6);
	memcpy(s.src_mac, ag->dc_mac, 6);
	addr_from_key(&s.src, k->daddr);
	addr_from_key(&s.dst, k->saddr);
	s.sport = qp->sport;
	s.roce.opcode = ROCE_RC_ACKNOWLEDGE;
	s.roce.pkey = qp->pkey;
	s.roce.dqpn = qp->peer_qpn;
	s.roce.psn = psn;
	s.roce.aeth.syndrome = syndrome;
	s.roce.aeth.msn = qp->msn;
	sz = lh_pkt_build(&s, buf, sizeof(buf));
	if (sz < 0)
		return (int)sz;
	f = (struct lh_frame){ .data = buf, .len = (uint32_t)sz, .cap = sizeof(buf) };
	if (lh_pktio_send(ag->dc_io, &f, 1) != 1) {
		ag->st.send_fail++;
		return -EIO;
	}
	return 0;
}

/* ---- continuing release and replay runs: lh_dc_kick ---- */

static int kick(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp, bool replay,
		uint32_t psn)
{
	LIBBPF_OPTS(bpf_test_run_opts, o);
	struct __sk_buff skb = { .ifindex = (uint32_t)ag->cfg->dc.ifindex };
	uint8_t buf[256], nic_mac[6];
	struct lh_pkt_spec s;
	ssize_t sz;
	int err;

	/* the frames the kick emits carry this one's link header: the NIC's MAC */
	err = dc_host_mac(ag, k->daddr, nic_mac);
	if (err)
		return err;
	lh_pkt_spec_init(&s, (qp->flags & LH_QPF_IPV6) ? AF_INET6 : AF_INET);
	s.roce.pkey = qp->pkey;
	if (replay) {
		/* as the NIC's NAK: from it, to us; the program swaps the MACs */
		memcpy(s.src_mac, nic_mac, 6);
		memcpy(s.dst_mac, ag->dc_mac, 6);
		addr_from_key(&s.src, k->daddr);
		addr_from_key(&s.dst, k->saddr);
		s.roce.opcode = ROCE_RC_ACKNOWLEDGE;
		s.roce.dqpn = qp->peer_qpn;
		s.roce.aeth.syndrome = AETH_NAK_PSN_SEQ_ERROR;
	} else {
		memcpy(s.dst_mac, nic_mac, 6);
		memcpy(s.src_mac, ag->dc_mac, 6);
		addr_from_key(&s.src, k->saddr);
		addr_from_key(&s.dst, k->daddr);
		s.roce.opcode = ROCE_RC_RDMA_WRITE_MIDDLE;
		s.roce.dqpn = k->dqpn;
	}
	s.roce.psn = psn;
	sz = lh_pkt_build(&s, buf, sizeof(buf));
	if (sz < 0)
		return (int)sz;
	o.data_in = buf;
	o.data_size_in = (uint32_t)sz;
	o.ctx_in = &skb;
	o.ctx_size_in = sizeof(skb);
	err = bpf_prog_test_run_opts(ag->dp->kick_fd, &o);
	if (err)
		return -errno;
	ag->st.kicks++;
	return 0;
}

/* ---- Sentry, gateway recovery: re-sends from the copies, paced ---- */

static void gw_pace_arm(struct agent *ag, bool on)
{
	struct itimerspec its = { 0 };

	if (on == ag->gw_pacing)
		return;
	if (on) {
		its.it_interval.tv_nsec = PACE_US * 1000;
		its.it_value = its.it_interval;
		ag->gw_pace_ns = lh_now_ns();
		ag->gw_tokens = 0;
	}
	timerfd_settime(ag->pace_fd, 0, &its, NULL);
	ag->gw_pacing = on;
}

/*
 * Queue psn of QP k (ring) for a re-send, unless it is queued already or
 * went out less than the guard time ago (a WAN round trip: still on its
 * way; doubled once the PSN was re-sent twice, so an RTT that outgrew the
 * estimate costs fewer duplicates, but a PSN lost again in a burst is not
 * left to the NIC's timeout).
 */
static void gw_enqueue(struct agent *ag, const struct lh_qp_key *k, uint32_t ring, uint32_t psn,
		       uint32_t slot, uint32_t now_ms, uint32_t guard_ms)
{
	struct gw_mark *m = &ag->gw_marks[(size_t)ring * LH_RING_SIZE + (psn & LH_RING_MASK)];
	struct gw_req *r;

	if (m->psn != psn)
		m->tries = 0;
	else if (m->ms == GW_QUEUED || now_ms - m->ms < (m->tries > 1 ? 2 * guard_ms : guard_ms))
		return;
	if (ag->gwq_len == ag->gwq_cap) {
		ag->st.gw_queue_full++;
		return;
	}
	r = &ag->gwq[(ag->gwq_head + ag->gwq_len++) % ag->gwq_cap];
	r->k = *k;
	r->ring = ring;
	r->psn = psn;
	r->slot = slot;
	m->psn = psn;
	m->ms = GW_QUEUED;
	ag->st.gw_queued++;
	gw_pace_arm(ag, true);
}

static uint32_t now_ms(void)
{
	uint32_t ms = (uint32_t)(lh_now_ns() / 1000000);

	return ms ? ms : 1; /* as lh_now_ms() */
}

/* A report named PSNs the Sentry has copies of (LH_EV_RESEND): queue them */
static void gw_collect(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp)
{
	uint32_t i, psn, now = now_ms(), guard = (uint32_t)(sentry_rto_ns(ag, qp) / 1000000) + 1;
	struct lh_ring ring;

	if (qp->ring >= ag->cfg->rings || bpf_map_lookup_elem(ag->ring_fd, &qp->ring, &ring))
		return;
	for (i = 0; i < LH_SR_WORDS * 64; i++) {
		const struct lh_ring_ent *e;

		if (!(qp->s_missing[i / 64] & (1ull << (i % 64))))
			continue;
		psn = psn_add(qp->s_base, i);
		if (psn_diff(psn, qp->s_next) >= 0)
			break; /* not sent yet */
		e = &ring.ent[psn & LH_RING_MASK];
		if (e->tag == LH_TAG(LH_SLOT_CACHED, psn))
			gw_enqueue(ag, k, qp->ring, psn, e->slot, now, guard);
	}
}

/*
 * Re-send one queued PSN from its copy, out of the WAN interface toward the
 * Depot (the MACs the QP's ACKs came with). Returns the bytes sent, 0 when
 * it was acknowledged meanwhile or its slot holds something else now (a
 * slot freed and taken again for the same PSN of the same ring holds the
 * same packet).
 */
static size_t gw_send(struct agent *ag, const struct gw_req *r)
{
	struct gw_mark *m = &ag->gw_marks[(size_t)r->ring * LH_RING_SIZE + (r->psn & LH_RING_MASK)];
	struct lh_slot *slot = ag->slot_buf;
	uint8_t frame[14 + LH_SLOT_DATA];
	struct lh_qp qp;
	size_t len;

	if (m->psn == r->psn && m->ms == GW_QUEUED)
		m->ms = 0;
	if (bpf_map_lookup_elem(ag->qp_fd, &r->k, &qp) || qp.ring != r->ring ||
	    psn_diff(r->psn, qp.s_una) < 0)
		goto stale;
	if (bpf_map_lookup_elem(ag->pool_fd, &r->slot, slot) || slot->psn != r->psn ||
	    slot->ring != r->ring || !slot->len || slot->len > LH_SLOT_DATA)
		goto stale;
	/* the data path sent it on the Depot-NACK (sentry_dnack_resend): on its way */
	if (lh_slot_sent_within(slot, now_ms(), ag->guard_ms)) {
		m->psn = r->psn;
		m->ms = slot->sent_ms;
		m->tries++;
		ag->st.gw_dp_sent++;
		return 0;
	}
	memcpy(frame, qp.wan_peer_mac, 6);
	memcpy(frame + 6, qp.wan_mac, 6);
	frame[12] = (qp.flags & LH_QPF_IPV6) ? 0x86 : 0x08;
	frame[13] = (qp.flags & LH_QPF_IPV6) ? 0xdd : 0x00;
	memcpy(frame + 14, slot->data, slot->len);
	len = 14 + slot->len;
	if (send_frame(ag, &qp, frame, len))
		return 0;
	m->psn = r->psn;
	m->ms = now_ms();
	m->tries++;
	sentry_est_of(ag, &r->k)->resend_ns = lh_now_ns();
	ag->st.gw_resent++;
	return len;
stale:
	ag->st.gw_stale++;
	return 0;
}

/* The pacer: send from the queue at --resend-rate, no window */
static void gw_pace(struct agent *ag)
{
	uint64_t now = lh_now_ns();
	double rate = (double)ag->cfg->resend_rate_bps / 8 / 1e9; /* bytes per ns */
	double burst = rate * PACE_US * 2000; /* two periods' worth */

	ag->gw_tokens += rate * (double)(now - ag->gw_pace_ns);
	ag->gw_pace_ns = now;
	if (burst < 2 * (14 + LH_SLOT_DATA))
		burst = 2 * (14 + LH_SLOT_DATA);
	if (ag->gw_tokens > burst)
		ag->gw_tokens = burst;
	while (ag->gwq_len && ag->gw_tokens > 0) {
		struct gw_req r = ag->gwq[ag->gwq_head];

		ag->gwq_head = (ag->gwq_head + 1) % ag->gwq_cap;
		ag->gwq_len--;
		ag->gw_tokens -= (double)gw_send(ag, &r);
	}
	if (!ag->gwq_len)
		gw_pace_arm(ag, false);
}

/*
 * Each tick: the copies of all QPs in gateway recovery (what their NICs
 * sent and the far NICs have not ACKed) against the bound, rate x 2 T, T
 * being how long a copy stays: the longest of the QPs with data out, from a
 * PSN going toward the WAN to the ACK that covers it, queueing and recovery
 * included (s_stay_*, the one under way if it is older), or the largest
 * srtt if more; at least --wan-rtt's bound, at most half the pool; half the
 * pool while a QP with data outstanding has no round trip measured yet.
 * Over it for a whole RTO, the programs keep no new copy (LH_CFG_GW_FULL):
 * those QPs fall back to LR2 recovery. As copies = the rate they come at x
 * how long each stays, this says the NICs send more than twice what the
 * re-sender may send. Not the RTT: a path that the NICs keep full holds
 * rate x RTT copies at every moment, the RTT's samples are dropped in
 * recoveries (Karn) and lag a filling queue by a round trip (42-gateway #12,
 * 8 QPs into a 200 Mbit/s queue of 45 ms at 1 %: the bound was crossed at
 * an RTT of 7-11 ms and all 8 fell back in 2 of 11 runs with rate x RTO,
 * 2 of 16 with rate x 2 RTT and the RTT's sample under way). A whole RTO: a
 * filling queue adds copies at once and its delay to what was measured only
 * later. The pool bounds the copies meanwhile: a QP that finds it empty
 * falls back at once.
 */
static void gw_bound(struct agent *ag, uint64_t copies, uint64_t now)
{
	uint64_t rtt = ag->path_srtt_us > ag->path_stay_us ? ag->path_srtt_us : ag->path_stay_us;
	uint64_t rto = ag->path_rto_us > rtt ? ag->path_rto_us : rtt;
	uint64_t bound = ag->cfg->resend_rate_bps / 8 * 2 * rtt / 1000000 / 1024;

	if (rto < ag->cfg->wan_rtt_us)
		rto = ag->cfg->wan_rtt_us;

	/* a QP with data out and no round trip measured: it may be any, only the pool bounds */
	if (!ag->rtt_known || bound > ag->cfg->pool_slots / 2)
		bound = ag->cfg->pool_slots / 2;
	if (bound < ag->cfg->gw_bound_pkts)
		bound = ag->cfg->gw_bound_pkts;
	if (copies <= bound) {
		ag->gw_over_ns = 0;
		ag->gw_full = false;
		return;
	}
	if (copies - bound > ag->st.gw_over_copies - ag->st.gw_over_bound) {
		ag->st.gw_over_copies = copies;
		ag->st.gw_over_bound = bound;
		ag->st.gw_over_rtt_us = (uint32_t)rtt;
	}
	if (!ag->gw_over_ns)
		ag->gw_over_ns = now;
	ag->gw_full = now - ag->gw_over_ns >= rto * 1000;
	if (ag->gw_full)
		ag->st.gw_full_ticks++;
}

/*
 * What the programs read from the agent's measurements: GW_FULL, and the
 * re-send guard of the Sentry's own re-sends of cached copies (lh_wan_in:
 * a copy that went out less than this ago is on its way, not lost). A
 * report that calls a copy missing was made at the Depot after the copy
 * would have arrived if the report comes more than the gateways' round trip
 * after the copy left; srtt (the largest of the QPs with data out) is that
 * round trip plus the receiver's own ACK time, a margin already, so no
 * rttvar on top: a re-send that comes one report late may come after the
 * NIC's timeout (a go-back-N of its window), one too early costs a packet.
 * At least --wan-rtt. Written only when it changes.
 */
static void config_sync(struct agent *ag)
{
	uint32_t zero = 0, rtt = ag->path_srtt_us > ag->cfg->wan_rtt_us ? ag->path_srtt_us
									  : ag->cfg->wan_rtt_us;
	uint32_t guard = rtt / 1000 + 1;
	struct lh_config c;

	if ((guard == ag->guard_ms && ag->gw_full == ag->gw_full_set) ||
	    bpf_map_lookup_elem(ag->config_fd, &zero, &c))
		return;
	c.flags = ag->gw_full ? (c.flags | LH_CFG_GW_FULL) : (c.flags & ~LH_CFG_GW_FULL);
	c.resend_guard_ms = guard;
	if (!bpf_map_update_elem(ag->config_fd, &zero, &c, BPF_EXIST)) {
		ag->guard_ms = guard;
		ag->gw_full_set = ag->gw_full;
	}
}

/* ---- the ring buffer ---- */

static void forget_qp(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
		      bool keep_pair);
static void hot_add(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp);

static int on_event(void *ctx, void *data, size_t size)
{
	struct agent *ag = ctx;
	const struct lh_event *ev = data;
	struct lh_qp_key k;
	struct lh_qp qp;

	if (size < sizeof(*ev))
		return 0;
	ag->st.events++;
	memcpy(k.saddr, ev->saddr, 16);
	memcpy(k.daddr, ev->daddr, 16);
	k.dqpn = ev->dqpn;
	switch (ev->type) {
	case LH_EV_QP_NEW:
		pr_debug("new %s QP 0x%x at PSN %u\n", (ev->flags & LH_QPF_DEPOT) ? "Depot" : "Sentry",
			 ev->dqpn, ev->psn);
		break;
	case LH_EV_GAP:
		if (!bpf_map_lookup_elem(ag->qp_fd, &k, &qp)) {
			send_report(ag, &k, &qp, false, false);
			hot_add(ag, &k, &qp);
		}
		break;
	case LH_EV_SACK_DUE:
		if (!bpf_map_lookup_elem(ag->qp_fd, &k, &qp))
			send_sack(ag, &k, &qp, lh_now_ns());
		break;
	case LH_EV_RESEND:
		if (ag->gwq && !bpf_map_lookup_elem(ag->qp_fd, &k, &qp))
			gw_collect(ag, &k, &qp);
		break;
	case LH_EV_NAK_DUE:
		if (!bpf_map_lookup_elem(ag->qp_fd, &k, &qp))
			if (!send_to_nic(ag, &k, &qp, ev->psn, AETH_NAK_PSN_SEQ_ERROR))
				ag->st.naks_owed++;
		break;
	case LH_EV_QP_STALE:
		/* a new connection on the key: the next packet learns the QP anew */
		if (!bpf_map_lookup_elem(ag->qp_fd, &k, &qp) && (qp.flags & LH_QPF_STALE)) {
			forget_qp(ag, &k, &qp, false);
			ag->st.qps_stale++;
		}
		break;
	case LH_EV_RELEASE_MORE:
		if (bpf_map_lookup_elem(ag->qp_fd, &k, &qp))
			break;
		if (kick(ag, &k, &qp, ev->flags == 1, ev->psn))
			ag->st.kick_fail++;
		hot_add(ag, &k, &qp);
		break;
	default:
		break;
	}
	return 0;
}

/* ---- the timer ---- */

/*
 * Drop the QPs that are gone or paired from the host pairs' lists (the
 * programs pair from them). In BPF (lh_dc_cmd): the programs change the
 * lists under their lock, which a read and a write from here are not.
 */
static void prune_hostpairs(struct agent *ag)
{
	struct lh_hostpair_key hk, cur, *prev = NULL;
	struct {
		uint8_t eth[14];
		struct lh_cmd c;
	} __attribute__((packed)) buf = { .eth = { [12] = 0x08 }, .c.op = LH_CMD_HOSTPAIR_PRUNE };
	struct __sk_buff skb = { 0 };
	int scanned = 0;

	while (scanned++ < MAX_SCAN && !bpf_map_get_next_key(ag->hostpair_fd, prev, &cur)) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &buf, .data_size_in = sizeof(buf),
			    .ctx_in = &skb, .ctx_size_in = sizeof(skb));

		hk = cur;
		prev = &hk;
		buf.c.hk = cur;
		if (!bpf_prog_test_run_opts(ag->dp->cmd_fd, &o) && (int32_t)o.retval > 0)
			ag->st.hostpair_pruned += (uint32_t)o.retval;
	}
}

/*
 * With --host-qps or --hostpair-qps: the counts a forgotten QP held, given
 * back in BPF (lh_dc_cmd), where the programs take them atomically
 */
static void put_qp_counts(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp)
{
	struct {
		uint8_t eth[14];
		struct lh_cmd c;
	} __attribute__((packed)) buf = { .eth = { [12] = 0x08 }, .c.op = LH_CMD_QP_FORGOTTEN };
	struct __sk_buff skb = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &buf, .data_size_in = sizeof(buf),
		    .ctx_in = &skb, .ctx_size_in = sizeof(skb));

	if (!ag->cfg->host_qps && !ag->cfg->hostpair_qps)
		return;
	buf.c.role = qp->flags & (LH_QPF_DEPOT | LH_QPF_SENTRY);
	memcpy(buf.c.hk.saddr, k->saddr, 16);
	memcpy(buf.c.hk.daddr, k->daddr, 16);
	if (bpf_prog_test_run_opts(ag->dp->cmd_fd, &o))
		ag->st.cmd_errors++;
}

/*
 * keep_pair: its pairing (lh_ack, lh_pair) stays, and the QP learned anew
 * from its next packet is paired at once (lh_qp_paired()): the requester's
 * QPN of a connection does not change, only what the gateway knew of its
 * PSNs went stale
 */
static void forget_qp(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
		      bool keep_pair)
{
	struct lh_qp_key ack, dk;
	struct lh_ring ring;
	uint32_t i;

	/* first out of the table: a packet from now on learns it anew, with a ring of its own */
	if (!bpf_map_delete_elem(ag->qp_fd, k))
		put_qp_counts(ag, k, qp);
	if (qp->ring != LH_NO_SLOT && !bpf_map_lookup_elem(ag->ring_fd, &qp->ring, &ring)) {
		for (i = 0; i < LH_RING_SIZE; i++) {
			if (LH_TAG_STATE(ring.ent[i].tag) != LH_SLOT_FREE)
				bpf_map_update_elem(ag->pool_free_fd, NULL, &ring.ent[i].slot, BPF_ANY);
		}
		memset(&ring, 0, sizeof(ring));
		bpf_map_update_elem(ag->ring_fd, &qp->ring, &ring, BPF_ANY);
		bpf_map_update_elem(ag->ring_free_fd, NULL, &qp->ring, BPF_ANY);
		if (qp->ring < ag->cfg->rings)
			memset(&ag->rs[qp->ring].dc, 0, sizeof(struct dc_timer));
	}
	if (!keep_pair) {
		memcpy(ack.saddr, k->daddr, 16);
		memcpy(ack.daddr, k->saddr, 16);
		ack.dqpn = qp->peer_qpn;
		if (!bpf_map_lookup_elem(ag->ack_fd, &ack, &dk) && !memcmp(&dk, k, sizeof(dk)))
			bpf_map_delete_elem(ag->ack_fd, &ack);
		bpf_map_delete_elem(ag->pair_fd, k);
	}
	/* its pair of hosts' list, if it is there, loses it on the next prune */
	ag->st.qps_forgotten++;
}

/*
 * Every QP of an adopted data path that went stale (lhd_datapath.stale): the
 * keys first, then each forgotten; those learned anew meanwhile stay. After
 * a short time without an agent (a restart) the pairings stay: learned anew
 * mid-flight, QPs with equal start PSNs whose senders go in step have
 * overlapping wide ranges and no ACK pairs them (lhperf --psn 1000 --rate
 * 0.5, 8 QPs: a Depot whose QPs were relearned passed 100 000 packets
 * unpaired, and the NICs had 287-306 timeouts against 40-62 of the runs
 * without a restart). A connection's QPNs stay until it ends, and a NIC
 * gives a QPN again only after it went round its others (rxe allocates them
 * cyclically, rxe_pool.c); after a longer absence they are forgotten too.
 */
#define KEEP_PAIR_ALONE_MS 10000
static void forget_all(struct agent *ag)
{
	bool keep_pair = ag->dp->alone_ms <= KEEP_PAIR_ALONE_MS;
	struct lh_qp_key *keys = calloc(ag->cfg->max_qps, sizeof(*keys));
	struct lh_qp qp;
	uint32_t n = 0, i, done = 0;

	if (!keys) {
		pr_warn("no memory to forget the stale data path's QPs\n");
		return;
	}
	while (n < ag->cfg->max_qps &&
	       !bpf_map_get_next_key(ag->qp_fd, n ? &keys[n - 1] : NULL, &keys[n]))
		n++;
	for (i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(ag->qp_fd, &keys[i], &qp))
			continue;
		forget_qp(ag, &keys[i], &qp, keep_pair);
		done++;
	}
	free(keys);
	pr_info("forgot %u QPs of the stale data path%s\n", done,
		keep_pair ? " (their pairings kept)" : "");
}

/*
 * Sentry, T/C-SACK: "no ACK within 2T: resend the last packet". Data is
 * outstanding (the receiver has not acknowledged all the NIC sent), the
 * Depot has reported this QP before but not for 2T, and the NIC has sent
 * nothing new for an RTO + T, nor the gateway re-sent anything (so nothing
 * is merely in flight, or queued on the WAN: the RTO is the QP's measured
 * round trip, see sentry_rtt): the
 * tail of what it sent, or the reports, were lost. The NIC gets a NAK at
 * what the Depot last said it delivered (or the receiver's ACK point, if
 * later): it resends from there, which either fills the tail or, if
 * everything arrived, only acknowledges it. At most one per QP per 2T + RTO.
 * With gateway recovery the Sentry does what the draft says instead: it
 * re-sends the last packet from its copy (the Depot then sees any gap
 * before it), and the NIC hears nothing.
 */
static void sentry_silence(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
			   struct sentry_est *est, uint64_t now, uint64_t sack_ns)
{
	uint64_t rto_ns = sentry_rto_ns(ag, qp);
	uint32_t psn;

	if (!qp->s_sack_ns || qp->s_una == qp->s_next || !(qp->flags & LH_QPF_PAIRED))
		return;
	if (now < qp->s_sack_ns + 2 * sack_ns || now < qp->s_tx_ns + rto_ns + sack_ns ||
	    now < est->resend_ns + rto_ns + sack_ns)
		return;
	if (now < est->silence_ns + 2 * sack_ns + rto_ns)
		return;
	/*
	 * Nor while the NIC's replay moves on (last_progress_ns: the filter
	 * drops what the Depot holds or delivered, so the Depot hears nothing
	 * and reports nothing) or an ACK moved: that is not a silence. A
	 * go-back-0 NIC replays its whole message toward the hole, paced by
	 * the Sentry's echoed ACKs; a NAK restarts it from the message's first
	 * PSN. Gateway recovery fallen back to LR2 (8 QPs of 4 MB, 1/256):
	 * a silence NAK every 2T + RTO restarted replays of 2000+ PSNs before
	 * they reached the hole, 2 runs in 30 livelocked.
	 */
	if (now < qp->last_progress_ns + rto_ns + sack_ns)
		return;
	psn = psn_diff(qp->s_sack_epsn, qp->s_una) > 0 ? qp->s_sack_epsn : qp->s_una;
	if (psn_diff(qp->s_next, psn) < 0)
		return;
	/*
	 * Seen once is not enough: a machine that did not run the WAN's
	 * queues (or this agent) for a few ms looks silent to the first tick
	 * after it, with the ACKs and reports still queued. The same silence,
	 * nothing moved, on a tick T/2 later and on time is a silence
	 * (docs/protocol.md 2.1 has what it changed).
	 */
	if (ag->tick_late || !est->quiet_ns || est->quiet_una != qp->s_una ||
	    est->quiet_next != qp->s_next || est->quiet_sack_ns != qp->s_sack_ns) {
		est->quiet_ns = now;
		est->quiet_una = qp->s_una;
		est->quiet_next = qp->s_next;
		est->quiet_sack_ns = qp->s_sack_ns;
		return;
	}
	if (now < est->quiet_ns + sack_ns / 2)
		return;
	est->quiet_ns = 0;
	est->silence_ns = now;
	if (ag->gwq && !(qp->flags & LH_QPF_GW_OFF) && qp->ring < ag->cfg->rings &&
	    !bpf_map_lookup_elem(ag->ring_fd, &qp->ring, ag->ring_buf)) {
		uint32_t tail = psn_add(qp->s_next, ROCE_PSN_MASK);

		const struct lh_ring_ent *e = &ag->ring_buf->ent[tail & LH_RING_MASK];

		if (e->tag == LH_TAG(LH_SLOT_CACHED, tail)) {
			pr_debug("Sentry QP 0x%x: no T/C-SACK for %llu us: re-send the last, %u\n",
				 k->dqpn, (unsigned long long)((now - qp->s_sack_ns) / 1000), tail);
			gw_enqueue(ag, k, qp->ring, tail, e->slot, now_ms(), 1);
			ag->st.gw_tail_resends++;
			return;
		}
	}
	if (psn == qp->s_next) {
		/*
		 * The Depot's last report had everything the NIC sent: no tail
		 * to recover, only the receiver's ACK lost or late (the Depot's
		 * DC timer sees to its side). What the Depot reported is said
		 * to the NIC as an ACK: a NAK there would say the same and also
		 * rewind it, for nothing (seen on a loaded machine: the
		 * receiver's ACK 2.7 ms late, the NIC rewound).
		 */
		pr_debug("Sentry QP 0x%x: no T/C-SACK for %llu us, all %u..%u at the Depot: ACK\n",
			 k->dqpn, (unsigned long long)((now - qp->s_sack_ns) / 1000), qp->s_una,
			 qp->s_next);
		if (!send_to_nic(ag, k, qp, psn_add(psn, ROCE_PSN_MASK), AETH_ACK_UNLIMITED))
			ag->st.sack_acks++;
		return;
	}
	pr_debug("Sentry QP 0x%x: no T/C-SACK for %llu us, data outstanding (%u..%u): NAK %u\n",
		 k->dqpn, (unsigned long long)((now - qp->s_sack_ns) / 1000), qp->s_una, qp->s_next,
		 psn);
	if (!send_to_nic(ag, k, qp, psn, AETH_NAK_PSN_SEQ_ERROR))
		ag->st.sack_naks++;
}

/*
 * The DC timer's probe: the backup copies of the NIC's ACK point and of the
 * newest AckReq packet (d_ar_psn), to the NIC, out of the DC interface. A
 * NIC that lost the first takes it in order, which ends its silence (rxe
 * NAKs again only after an in-order packet), and the second, out of order
 * now, gets the Depot a fresh NAK that it answers with the whole replay
 * from its pool. A NIC that had both only ACKs two duplicates: a slow NIC
 * costs two packets, not a replay (a replay into a busy receiver made it
 * slower still: 64 QPs on one lhperf went from 0.6 to 13 s).
 */
static int dc_probe(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp)
{
	uint32_t psn[2] = { qp->d_acked, qp->d_ar_psn };
	uint8_t frame[14 + LH_SLOT_DATA], nic_mac[6];
	struct lh_slot *slot = ag->slot_buf;
	struct lh_frame f;
	int i, sent = 0, err;

	if (!ag->dc_io || qp->ring >= ag->cfg->rings ||
	    bpf_map_lookup_elem(ag->ring_fd, &qp->ring, ag->ring_buf))
		return -ENOENT;
	err = dc_host_mac(ag, k->daddr, nic_mac);
	if (err)
		return err;
	for (i = 0; i < (psn[0] == psn[1] ? 1 : 2); i++) {
		const struct lh_ring_ent *e = &ag->ring_buf->ent[psn[i] & LH_RING_MASK];

		if (e->tag != LH_TAG(LH_SLOT_BACKUP, psn[i]) ||
		    bpf_map_lookup_elem(ag->pool_fd, &e->slot, slot) || slot->psn != psn[i] ||
		    slot->ring != qp->ring || !slot->len || slot->len > LH_SLOT_DATA)
			continue; /* acknowledged and freed meanwhile */
		memcpy(frame, nic_mac, 6);
		memcpy(frame + 6, ag->dc_mac, 6);
		frame[12] = (qp->flags & LH_QPF_IPV6) ? 0x86 : 0x08;
		frame[13] = (qp->flags & LH_QPF_IPV6) ? 0xdd : 0x00;
		memcpy(frame + 14, slot->data, slot->len);
		f = (struct lh_frame){ .data = frame, .len = 14 + slot->len, .cap = sizeof(frame) };
		if (lh_pktio_send(ag->dc_io, &f, 1) != 1) {
			ag->st.send_fail++;
			return -EIO;
		}
		sent++;
	}
	return sent ? 0 : -ENOENT;
}

/* The newest ePSN the sender was told: the programs' Depot-NACKs, the agent's NACKs and reports */
static uint32_t dc_told(const struct dc_timer *t, const struct lh_qp *qp)
{
	return t->told_set && psn_diff(t->told, qp->d_nacked_psn) > 0 ? t->told : qp->d_nacked_psn;
}

/*
 * Depot: loss inside the receiver's DC that no NAK reported. rxe NAKs a gap
 * once, then drops what follows in silence; if that NAK, or the replay the
 * Depot answered it with, is lost too, nothing would ever fill the gap: the
 * sender was told (by the Depot-NACK that moved its ACK point) that the
 * receiver has those PSNs, and it never sends them again. So the timer
 * watches only a QP whose sender was told more than its NIC ACKed (the
 * programs' Depot-NACKs: d_nacked_psn; the agent's NACKs and reports). A packet with
 * AckReq is ACKed by the NIC at once: when the NIC's ACK point is still
 * before the newest one that went to it (d_ar_psn) a timeout after it went,
 * and has not moved for as long, the Depot probes the NIC (dc_probe: two
 * packets, which make it NAK if it lacks them). The timeout is the round
 * trip into the DC measured (d_srtt_us, AckReq to ACK: a busy NIC takes
 * long), srtt + 4 rttvar, at least --dc-timeout; each probe without
 * progress waits twice as long as the last (up to 8 x).
 */
static void dc_timer(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
		     uint64_t now)
{
	struct dc_timer *t = &ag->rs[qp->ring].dc;
	uint64_t rto = lh_rto_us(qp->d_srtt_us, qp->d_rttvar_us);
	uint64_t wait = (rto > ag->cfg->dc_timeout_us ? rto : ag->cfg->dc_timeout_us) * 1000
			<< (t->tries < 3 ? t->tries : 3);

	uint32_t told = dc_told(t, qp);

	if (qp->d_acked != t->acked) {
		t->acked = qp->d_acked;
		t->since_ns = now;
		t->tries = 0;
		return;
	}
	/* only what the sender was told the receiver has: the rest it sends again itself */
	if (psn_diff(told, qp->d_acked) <= 0 || psn_diff(told, qp->d_deliv) > 0)
		return;
	if (qp->d_acked == qp->d_deliv || !qp->d_ar_ns || psn_diff(qp->d_ar_psn, qp->d_acked) < 0 ||
	    psn_diff(qp->d_ar_psn, qp->d_deliv) >= 0 || (qp->flags & LH_QPF_RELEASING) ||
	    !(qp->flags & LH_QPF_PAIRED))
		return;
	if (now < qp->d_ar_ns + wait || now < t->since_ns + wait)
		return;
	pr_debug("Depot QP 0x%x: no ACK past %u for %llu us (AckReq %u): probe\n", k->dqpn,
		 qp->d_acked, (unsigned long long)((now - t->since_ns) / 1000), qp->d_ar_psn);
	t->since_ns = now;
	if (t->tries < UINT8_MAX)
		t->tries++;
	if (!dc_probe(ag, k, qp))
		ag->st.dc_probes++;
}

/*
 * Every QP into tick_keys / tick_qps, a batch per syscall; *n: how many.
 * Returns whether that is all of them (the map may have grown since).
 */
static bool read_qps(struct agent *ag, uint32_t *n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	uint32_t total = 0, cnt, tok_out = 0;
	uint32_t want = ag->tick_cap < SCAN_PER_TICK ? ag->tick_cap : SCAN_PER_TICK;
	static bool warned;
	int err;

	if (ag->slow_scan) {
		uint64_t qps = ag->qps > ag->pass.qps ? ag->qps : ag->pass.qps;
		uint64_t per = (qps * ag->tick_us + COLD_PASS_US - 1) / COLD_PASS_US;

		if (per < 16)
			per = 16;
		if (per < want)
			want = (uint32_t)per;
	}

	for (;;) {
		cnt = want - total;
		if (!cnt)
			break;
		err = bpf_map_lookup_batch(ag->qp_fd, ag->scan_on ? &ag->scan_tok : NULL, &tok_out,
					   ag->tick_keys + total, ag->tick_qps + total, &cnt, &o);
		total += cnt;
		if (err && errno == ENOSPC && !cnt) {
			/* the next hash bucket is larger than what is left: next tick */
			if (total)
				break;
			/* ... larger than the whole budget: all of it */
			if (want < ag->tick_cap) {
				want = ag->tick_cap;
				continue;
			}
		}
		if (err) {
			ag->scan_on = false; /* the next tick begins a new pass */
			if (errno == ENOENT) {
				*n = total;
				return true;
			}
			if (!warned)
				pr_warn("reading lh_qp: %s\n", strerror(errno));
			warned = true;
			break;
		}
		ag->scan_tok = tok_out;
		ag->scan_on = true;
	}
	*n = total;
	return false;
}

/* A Depot QP's timers: T/C-SACK time trigger, release watchdog, DC timer, Depot-NACK retry */
static void depot_timers(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
			 uint64_t now)
{
	const struct lhd_config *cfg = ag->cfg;
	uint64_t nack_to = (uint64_t)cfg->nack_timeout_us * 1000;
	uint64_t sack_ns = (uint64_t)cfg->sack_time_us * 1000, retry_to;
	struct ring_state *r = &ag->rs[qp->ring];

	/* T/C-SACK, time trigger: a QP that received data since its last report */
	if (sack_ns && qp->last_rx_ns != r->sack_rx_ns && now - r->sack_ns >= sack_ns)
		send_sack(ag, k, qp, now);
	/* a release that should have happened: its filler never reached the DC egress */
	if ((qp->flags & LH_QPF_RELEASING) && now > qp->last_progress_ns &&
	    now - qp->last_progress_ns > (uint64_t)cfg->release_watchdog_us * 1000) {
		if (kick(ag, k, qp, false, qp->d_release_after))
			ag->st.kick_fail++;
		return;
	}
	if (cfg->dc_timeout_us)
		dc_timer(ag, k, qp, now);
	/*
	 * A gap still open: its Depot-NACK or its retransmission was lost,
	 * or is queued on the WAN longer than the timeout: each retry
	 * without progress doubles the wait (up to 16 x), so a queue
	 * that outgrew --wan-rtt does not fill with NACKed copies.
	 */
	if (qp->last_progress_ns > r->nacked_ns)
		r->nack_tries = 0;
	retry_to = nack_to << (r->nack_tries < 4 ? r->nack_tries : 4);
	if (qp->d_deliv != qp->d_high && now > qp->last_progress_ns &&
	    now - qp->last_progress_ns > nack_to && now - qp->last_nack_ns > nack_to &&
	    now - r->nacked_ns > retry_to) {
		r->nacked_ns = now;
		if (r->nack_tries < UINT8_MAX)
			r->nack_tries++;
		send_report(ag, k, qp, true, false);
	}
}

/*
 * LR2 alone (slow_scan): does this Depot QP need its timers every tick? A
 * gap open (Depot-NACK retry), a release under way (its watchdog), or the
 * sender told more than the receiving NIC ACKed (dc_timer()).
 */
static bool depot_hot(const struct agent *ag, const struct lh_qp *qp)
{
	if (!(qp->flags & LH_QPF_DEPOT) || qp->ring >= ag->cfg->rings || (qp->flags & LH_QPF_STALE))
		return false;
	if (qp->d_deliv != qp->d_high || (qp->flags & LH_QPF_RELEASING))
		return true;
	if (!ag->cfg->dc_timeout_us)
		return false;
	return psn_diff(dc_told(&ag->rs[qp->ring].dc, qp), qp->d_acked) > 0;
}

/*
 * Into the hot set, once per ring (so it holds at most cfg->rings): a ring
 * given to a new QP since replaces the old QP's key
 */
static void hot_add(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp)
{
	uint32_t at;

	if (!ag->slow_scan || qp->ring >= ag->cfg->rings)
		return;
	at = ag->rs[qp->ring].hot_at;
	if (at) {
		ag->hot[at - 1].k = *k;
		return;
	}
	ag->hot[ag->hot_n++] = (struct hot_ent){ .k = *k, .ring = qp->ring };
	ag->rs[qp->ring].hot_at = ag->hot_n;
}

/*
 * The hot set's timers, each QP read by key; a QP gone, on another ring, or
 * with nothing open any more leaves the set (the slow pass or an event
 * brings it back).
 */
static void hot_tick(struct agent *ag, uint64_t now)
{
	struct lh_qp qp;
	uint32_t i = 0;

	while (i < ag->hot_n) {
		const struct lh_qp_key k = ag->hot[i].k;
		uint32_t ring = ag->hot[i].ring;

		if (bpf_map_lookup_elem(ag->qp_fd, &k, &qp) || qp.ring != ring || !depot_hot(ag, &qp)) {
			ag->rs[ring].hot_at = 0;
			ag->hot_n--;
			if (i < ag->hot_n) {
				ag->hot[i] = ag->hot[ag->hot_n];
				ag->rs[ag->hot[i].ring].hot_at = i + 1;
			}
			continue;
		}
		depot_timers(ag, &k, &qp, now);
		i++;
	}
}

/*
 * The timer's period: the configured tick while any QP needs it, the quiet
 * one (slow pass, hot set empty) while none does. Called after each tick
 * and each batch of events.
 */
/* The tick timer's period set to us, its first expiry one period from now */
static void tick_set(struct agent *ag, uint32_t us)
{
	struct itimerspec its = { 0 };

	its.it_interval.tv_sec = us / 1000000;
	its.it_interval.tv_nsec = (long)(us % 1000000) * 1000;
	its.it_value = its.it_interval;
	if (!timerfd_settime(ag->tick_fd, 0, &its, NULL))
		ag->tick_us = us;
}

static void tick_rate(struct agent *ag)
{
	uint32_t want = ag->cfg->tick_us;

	if (ag->slow_scan && !ag->hot_n && want < QUIET_TICK_US)
		want = QUIET_TICK_US;
	if (want != ag->tick_us)
		tick_set(ag, want);
}

static void tick(struct agent *ag)
{
	const struct lhd_config *cfg = ag->cfg;
	uint64_t now = lh_now_ns(), idle = (uint64_t)cfg->qp_idle_s * 1000000000ull;
	uint64_t sack_ns = (uint64_t)cfg->sack_time_us * 1000;
	struct lh_qp_key gone[64];
	int nr_gone = 0, i;
	uint32_t n, j;
	struct lh_qp qp;
	bool pass_end;

	pass_end = read_qps(ag, &n);
	/*
	 * A table half full forgets QPs quiet for LH_IDLE_FULL_S already: QPs
	 * that ended linger for --qp-idle, and a full table learns no new one
	 * (it passes unchanged) and blocks all pairing while it is full (a QP
	 * not learned could take another's ACKs): 20 transfers of 64 QPs one
	 * after another, 1280 QPs in 30 s, livelocked the last ones (2 of 20)
	 */
	if (ag->qps >= cfg->max_qps / 2 && idle > LH_IDLE_FULL_S * 1000000000ull)
		idle = LH_IDLE_FULL_S * 1000000000ull;
	ag->pass.qps += n;
	for (j = 0; j < n; j++) {
		const struct lh_qp_key cur = ag->tick_keys[j];

		qp = ag->tick_qps[j];
		/* idle, or stale and its event lost (ring buffer full) */
		if ((now > qp.last_rx_ns && now - qp.last_rx_ns > idle) || (qp.flags & LH_QPF_STALE)) {
			if (nr_gone < 64)
				gone[nr_gone++] = cur;
			continue;
		}
		if (qp.flags & LH_QPF_SENTRY) {
			struct sentry_est *est = sentry_est_of(ag, &cur);

			if (!qp.s_srtt_us && qp.s_una != qp.s_next)
				ag->pass.unmeasured++;
			/* the path: QPs with data out now (not a finished QP's old estimate) */
			if (qp.s_srtt_us && qp.s_una != qp.s_next) {
				if (est_rto_us(&qp) > ag->pass.rto_max_us)
					ag->pass.rto_max_us = est_rto_us(&qp);
				if (qp.s_srtt_us > ag->pass.srtt_max_us)
					ag->pass.srtt_max_us = qp.s_srtt_us;
			}
			if (qp.s_una != qp.s_next) {
				uint64_t stay = qp.s_stay_us;

				/* one under way for longer says more */
				if (qp.s_stay_tx_ns && now > qp.s_stay_tx_ns &&
				    (now - qp.s_stay_tx_ns) / 1000 > stay)
					stay = (now - qp.s_stay_tx_ns) / 1000;
				if (stay > ag->pass.stay_max_us)
					ag->pass.stay_max_us =
						stay > UINT32_MAX ? UINT32_MAX : (uint32_t)stay;
			}
			if (sack_ns)
				sentry_silence(ag, &cur, &qp, est, now, sack_ns);
		}
		if ((qp.flags & (LH_QPF_SENTRY | LH_QPF_GW_OFF)) == LH_QPF_SENTRY &&
		    psn_diff(qp.s_next, qp.s_una) > 0)
			ag->pass.copies += (uint64_t)psn_diff(qp.s_next, qp.s_una);
		if (!(qp.flags & LH_QPF_DEPOT) || qp.ring >= cfg->rings)
			continue;
		if (!ag->slow_scan)
			depot_timers(ag, &cur, &qp, now);
		else if (depot_hot(ag, &qp))
			hot_add(ag, &cur, &qp); /* its timers below, from a fresh read */
	}
	if (ag->slow_scan)
		hot_tick(ag, now);
	for (i = 0; i < nr_gone; i++)
		if (!bpf_map_lookup_elem(ag->qp_fd, &gone[i], &qp))
			forget_qp(ag, &gone[i], &qp, false);
	if (now - ag->prune_ns >= PRUNE_NS) {
		ag->prune_ns = now;
		prune_hostpairs(ag);
	}
	/* the path's figures: of a whole pass */
	if (pass_end) {
		ag->path_rto_us = ag->pass.rto_max_us;
		ag->path_srtt_us = ag->pass.srtt_max_us;
		ag->path_stay_us = ag->pass.stay_max_us;
		ag->rtt_known = ag->pass.rto_max_us && !ag->pass.unmeasured;
		ag->copies = ag->pass.copies;
		ag->qps = ag->pass.qps;
		memset(&ag->pass, 0, sizeof(ag->pass));
	}
	if (ag->path_rto_us > ag->st.rto_max_us)
		ag->st.rto_max_us = ag->path_rto_us;
	if (ag->gwq)
		gw_bound(ag, ag->copies, now);
	config_sync(ag);
}

static int open_wan_io(struct agent *ag)
{
	int i, err;

	for (i = 0; i < ag->cfg->n_wan; i++) {
		struct lh_pktio_opts o = { .ifname = ag->cfg->wan[i].name, .tx_only = true };

		err = lh_pktio_open(&o, &ag->wan_io[i]);
		if (err)
			return err;
		ag->wan_ifindex[i] = ag->cfg->wan[i].ifindex;
	}
	return 0;
}

static int open_dc_io(struct agent *ag)
{
	struct lh_pktio_opts o = { .ifname = ag->cfg->dc.name, .tx_only = true };
	int err = lh_pktio_open(&o, &ag->dc_io);

	if (err)
		return err;
	memcpy(ag->dc_mac, lh_pktio_mac(ag->dc_io), 6);
	return 0;
}

int lhd_agent_run(const struct lhd_config *cfg, struct lhd_datapath *dp, volatile int *stop)
{
	struct ring_buffer *rb = NULL;
	struct agent ag = { .cfg = cfg, .dp = dp, .pace_fd = -1 };
	struct epoll_event ev = { .events = EPOLLIN };
	int ep = -1, tfd = -1, rc = EXIT_KERNEL;
	uint64_t ticks;

	if (cfg->mode != MODE_LR2) {
		while (!*stop)
			pause();
		return EXIT_OK;
	}
	ag.qp_fd = lhd_map_fd(dp, "lh_qp");
	ag.ack_fd = lhd_map_fd(dp, "lh_ack");
	ag.pair_fd = lhd_map_fd(dp, "lh_pair");
	ag.ring_fd = lhd_map_fd(dp, "lh_ring");
	ag.pool_free_fd = lhd_map_fd(dp, "lh_pool_free");
	ag.ring_free_fd = lhd_map_fd(dp, "lh_ring_free");
	ag.hostpair_fd = lhd_map_fd(dp, "lh_hostpair");
	/*
	 * QPs may be mid-flight now: their ACKs can name PSNs from before the
	 * programs saw them, which pairing must count in (LH_QPF_WIDE); from
	 * the attach on (datapath.c), and from here. Not so in an adopted data
	 * path: it saw every packet meanwhile.
	 */
	if (lhd_datapath_relearn(dp, cfg))
		goto out;
	ag.config_fd = lhd_map_fd(dp, "lh_config");
	ag.guard_ms = cfg->wan_rtt_us / 1000 + 1; /* as datapath.c set it */
	ag.rs = calloc(cfg->rings, sizeof(*ag.rs));
	ag.est = calloc(SILENCE_SLOTS, sizeof(*ag.est));
	if (!ag.rs || !ag.est)
		goto out;
	ag.ring_buf = malloc(sizeof(*ag.ring_buf));
	ag.tick_cap = cfg->max_qps;
	ag.tick_keys = calloc(ag.tick_cap, sizeof(*ag.tick_keys));
	ag.tick_qps = calloc(ag.tick_cap, sizeof(*ag.tick_qps));
	if (!ag.ring_buf || !ag.tick_keys || !ag.tick_qps)
		goto out;
	ag.slow_scan = !cfg->sack_time_us && !cfg->gateway;
	ag.hot = calloc(cfg->rings, sizeof(*ag.hot));
	if (!ag.hot)
		goto out;
	/* the Depot's DC probes and the Sentry's gateway re-sends read pool slots */
	ag.pool_fd = lhd_map_fd(dp, "lh_pool");
	ag.slot_buf = malloc(sizeof(*ag.slot_buf));
	if (!ag.slot_buf)
		goto out;
	if (cfg->gateway) {
		ag.gwq_cap = cfg->gw_bound_pkts;
		ag.gwq = calloc(ag.gwq_cap, sizeof(*ag.gwq));
		ag.gw_marks = calloc((size_t)cfg->rings * LH_RING_SIZE, sizeof(*ag.gw_marks));
		ag.pace_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (!ag.gwq || !ag.gw_marks || ag.pace_fd < 0)
			goto out;
	}
	if (dp->stale)
		forget_all(&ag);
	/* reports are ordered by seq; a restarted agent starts somewhere else */
	ag.report_seq = (uint32_t)(lh_now_ns() >> 10) | 1;
	if (open_wan_io(&ag) || open_dc_io(&ag)) {
		pr_warn("raw sockets on the WAN interfaces and %s for NACKs and kicks failed\n",
			cfg->dc.name);
		goto out;
	}
	rb = ring_buffer__new(lhd_map_fd(dp, "lh_events"), on_event, &ag, NULL);
	if (!rb) {
		pr_warn("ring buffer lh_events: %s\n", strerror(errno));
		goto out;
	}
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (tfd < 0 || ep < 0)
		goto out;
	ag.tick_fd = tfd;
	tick_set(&ag, cfg->tick_us);
	ev.data.fd = tfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev);
	ev.data.fd = ring_buffer__epoll_fd(rb);
	epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev);
	if (ag.pace_fd >= 0) {
		ev.data.fd = ag.pace_fd;
		epoll_ctl(ep, EPOLL_CTL_ADD, ag.pace_fd, &ev);
		pr_debug("agent: gateway recovery, re-sends paced at %llu bit/s, copies bound %u\n",
			 (unsigned long long)cfg->resend_rate_bps, cfg->gw_bound_pkts);
	}
	pr_debug("agent: tick %u us, Depot-NACK retry after %u us\n", cfg->tick_us,
		 cfg->nack_timeout_us);

	while (!*stop) {
		struct epoll_event out[4];
		int n = epoll_wait(ep, out, 4, 200), i;

		if (n < 0 && errno != EINTR)
			break;
		for (i = 0; i < n; i++) {
			if (out[i].data.fd == tfd) {
				if (read(tfd, &ticks, sizeof(ticks)) > 0) {
					ag.tick_late = ticks > 1;
					tick(&ag);
				}
				/* the events that wake nobody (LH_EV_QP_NEW) */
				ring_buffer__consume(rb);
				tick_rate(&ag);
			} else if (out[i].data.fd == ag.pace_fd) {
				if (read(ag.pace_fd, &ticks, sizeof(ticks)) > 0)
					gw_pace(&ag);
			} else {
				ring_buffer__consume(rb);
				tick_rate(&ag);
			}
		}
	}
	pr_info("agent: %llu events, %llu reports (%llu T/C-SACK), "
		"%llu NACK retries, %llu silence NAKs, %llu silence ACKs, %llu runs continued, "
		"%llu QPs forgotten (%llu new connections on their keys), %llu DC probes, "
		"%llu gone from the pairing lists\n",
		(unsigned long long)ag.st.events,
		(unsigned long long)ag.st.reports, (unsigned long long)ag.st.sack_reports,
		(unsigned long long)ag.st.nack_retries, (unsigned long long)ag.st.sack_naks,
		(unsigned long long)ag.st.sack_acks,
		(unsigned long long)ag.st.kicks, (unsigned long long)ag.st.qps_forgotten,
		(unsigned long long)ag.st.qps_stale,
		(unsigned long long)ag.st.dc_probes, (unsigned long long)ag.st.hostpair_pruned);
	if (ag.st.cmd_errors)
		pr_warn("agent: %llu commands to the data path failed (QP counts of --host-qps not given back)\n",
			(unsigned long long)ag.st.cmd_errors);
	if (cfg->sentry)
		pr_info("agent: Sentry round trips (RTO: srtt + 4 rttvar, at most 2 srtt): largest %u us, last %u us "
			"(--wan-rtt %u us)\n",
			ag.st.rto_max_us, ag.path_rto_us, cfg->wan_rtt_us);
	if (cfg->gateway)
		pr_info("agent: gateway recovery: %llu re-sends queued, %llu sent, %llu stale, "
			"%llu sent by the data path already, %llu not queued (queue full), "
			"%llu tail re-sends, %llu ticks over the bound (most over it: %llu copies, "
			"bound %llu of a %u us RTT)\n",
			(unsigned long long)ag.st.gw_queued, (unsigned long long)ag.st.gw_resent,
			(unsigned long long)ag.st.gw_stale, (unsigned long long)ag.st.gw_dp_sent,
			(unsigned long long)ag.st.gw_queue_full,
			(unsigned long long)ag.st.gw_tail_resends,
			(unsigned long long)ag.st.gw_full_ticks,
			(unsigned long long)ag.st.gw_over_copies,
			(unsigned long long)ag.st.gw_over_bound, ag.st.gw_over_rtt_us);
	rc = EXIT_OK;
out:
	if (ep >= 0)
		close(ep);
	if (tfd >= 0)
		close(tfd);
	ring_buffer__free(rb);
	for (int i = 0; i < LHD_MAX_WAN; i++)
		lh_pktio_close(ag.wan_io[i]);
	lh_pktio_close(ag.dc_io);
	if (ag.pace_fd >= 0)
		close(ag.pace_fd);
	free(ag.gwq);
	free(ag.gw_marks);
	free(ag.slot_buf);
	free(ag.ring_buf);
	free(ag.tick_keys);
	free(ag.tick_qps);
	free(ag.hot);
	free(ag.rs);
	free(ag.est);
	return rc;
}
