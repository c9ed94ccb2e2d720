// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The agent's Depot: Depot-NACKs and reports (with T/C-SACK), their retries,
 * the DC timer that probes a silent receiving NIC, and the hot set of QPs
 * that need the timer every tick when LR2 runs alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent_state.h"
#include "lh_proto.h"
#include "log.h"
#include "netlink.h"
#include "report.h"

/* What the Depot holds of [ePSN, ePSN_D), read from the QP's ring */
static int held_bitmap(struct agent *ag, const struct lh_qp *qp, uint8_t held[32], uint32_t *nbits,
		       uint32_t *first_gap)
{
	struct lh_ring ring;
	int32_t n = psn_diff(qp->d.high, qp->d.deliv);
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
		uint32_t psn = psn_add(qp->d.deliv, i);

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
int send_report(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
		bool with_nack, bool sack)
{
	uint8_t buf[256], held[32];
	struct lh_pkt_spec s;
	uint32_t nbits, gap, peer = qp->peer_qpn;
	struct dc_timer *t;
	ssize_t sz;

	/* a T/C-SACK report goes even with nothing held: it says all arrived */
	if (!ag->wan_io[0] || (!sack && qp->d.deliv == qp->d.high))
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
	if (t && (!t->told_set || psn_diff(qp->d.deliv, t->told) > 0)) {
		t->told = qp->d.deliv;
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
			.epsn = qp->d.deliv,
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
void send_sack(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
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
 * The DC timer's probe: the backup copies of the NIC's ACK point and of the
 * newest AckReq packet (d.ar_psn), to the NIC, out of the DC interface. A
 * NIC that lost the first takes it in order, which ends its silence (rxe
 * NAKs again only after an in-order packet), and the second, out of order
 * now, gets the Depot a fresh NAK that it answers with the whole replay
 * from its pool. A NIC that had both only ACKs two duplicates: a slow NIC
 * costs two packets, not a replay (a replay into a busy receiver made it
 * slower still: 64 QPs on one lhperf went from 0.6 to 13 s).
 */
static int dc_probe(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp)
{
	uint32_t psn[2] = { qp->d.acked, qp->d.ar_psn };
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
	return t->told_set && psn_diff(t->told, qp->d.nacked_psn) > 0 ? t->told : qp->d.nacked_psn;
}

/*
 * Depot: loss inside the receiver's DC that no NAK reported. rxe NAKs a gap
 * once, then drops what follows in silence; if that NAK, or the replay the
 * Depot answered it with, is lost too, nothing would ever fill the gap: the
 * sender was told (by the Depot-NACK that moved its ACK point) that the
 * receiver has those PSNs, and it never sends them again. So the timer
 * watches only a QP whose sender was told more than its NIC ACKed (the
 * programs' Depot-NACKs: d.nacked_psn; the agent's NACKs and reports). A packet with
 * AckReq is ACKed by the NIC at once: when the NIC's ACK point is still
 * before the newest one that went to it (d.ar_psn) a timeout after it went,
 * and has not moved for as long, the Depot probes the NIC (dc_probe: two
 * packets, which make it NAK if it lacks them). The timeout is the round
 * trip into the DC measured (d.srtt_us, AckReq to ACK: a busy NIC takes
 * long), srtt + 4 rttvar, at least --dc-timeout; each probe without
 * progress waits twice as long as the last (up to 8 x).
 */
static void dc_timer(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
		     uint64_t now)
{
	struct dc_timer *t = &ag->rs[qp->ring].dc;
	uint64_t rto = lh_rto_us(qp->d.srtt_us, qp->d.rttvar_us);
	uint64_t wait = (rto > ag->cfg->dc_timeout_us ? rto : ag->cfg->dc_timeout_us) * 1000
			<< (t->tries < 3 ? t->tries : 3);

	uint32_t told = dc_told(t, qp);

	if (qp->d.acked != t->acked) {
		t->acked = qp->d.acked;
		t->since_ns = now;
		t->tries = 0;
		return;
	}
	/* only what the sender was told the receiver has: the rest it sends again itself */
	if (psn_diff(told, qp->d.acked) <= 0 || psn_diff(told, qp->d.deliv) > 0)
		return;
	if (qp->d.acked == qp->d.deliv || !qp->d.ar_ns || psn_diff(qp->d.ar_psn, qp->d.acked) < 0 ||
	    psn_diff(qp->d.ar_psn, qp->d.deliv) >= 0 || (qp->flags & LH_QPF_RELEASING) ||
	    !(qp->flags & LH_QPF_PAIRED))
		return;
	if (now < qp->d.ar_ns + wait || now < t->since_ns + wait)
		return;
	pr_debug("Depot QP 0x%x: no ACK past %u for %llu us (AckReq %u): probe\n", k->dqpn,
		 qp->d.acked, (unsigned long long)((now - t->since_ns) / 1000), qp->d.ar_psn);
	t->since_ns = now;
	if (t->tries < UINT8_MAX)
		t->tries++;
	if (!dc_probe(ag, k, qp))
		ag->st.dc_probes++;
}

/* A Depot QP's timers: T/C-SACK time trigger, release watchdog, DC timer, Depot-NACK retry */
void depot_timers(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
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
		if (kick(ag, k, qp, false, qp->d.release_after))
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
	if (qp->d.deliv != qp->d.high && now > qp->last_progress_ns &&
	    now - qp->last_progress_ns > nack_to && now - qp->d.last_nack_ns > nack_to &&
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
bool depot_hot(const struct agent *ag, const struct lh_qp *qp)
{
	if (!(qp->flags & LH_QPF_DEPOT) || qp->ring >= ag->cfg->rings || (qp->flags & LH_QPF_STALE))
		return false;
	if (qp->d.deliv != qp->d.high || (qp->flags & LH_QPF_RELEASING))
		return true;
	if (!ag->cfg->dc_timeout_us)
		return false;
	return psn_diff(dc_told(&ag->rs[qp->ring].dc, qp), qp->d.acked) > 0;
}

/*
 * Into the hot set, once per ring (so it holds at most cfg->rings): a ring
 * given to a new QP since replaces the old QP's key
 */
void hot_add(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp)
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
void hot_tick(struct agent *ag, uint64_t now)
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
