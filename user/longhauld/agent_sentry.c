// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The agent's Sentry: the round-trip estimate per QP, T/C-SACK's silence
 * rule, and gateway recovery: the re-send queue, its pacer and the bound on
 * the copies, and what of them the programs read (lh_config).
 */
#include <sys/timerfd.h>
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

struct sentry_est *sentry_est_of(struct agent *ag, const struct lh_qp_key *k)
{
	const uint8_t *b = (const uint8_t *)k;
	uint32_t h = 2166136261u, i;

	for (i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 16777619u;
	return &ag->est[h % SILENCE_SLOTS];
}

uint32_t est_rto_us(const struct lh_qp *qp)
{
	return lh_rto_us(qp->s.srtt_us, qp->s.rttvar_us);
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

/* ---- Sentry, gateway recovery: re-sends from the copies, paced ---- */

static void gw_pace_arm(struct agent *ag, bool on)
{
	struct itimerspec its = { 0 };

	if (on == ag->gw_pacing)
		return;
	if (on) {
		its.it_interval.tv_nsec = (long)PACE_US * 1000;
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
void gw_collect(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp)
{
	uint32_t i, psn, now = now_ms(), guard = (uint32_t)(sentry_rto_ns(ag, qp) / 1000000) + 1;
	struct lh_ring ring;

	if (qp->ring >= ag->cfg->rings || bpf_map_lookup_elem(ag->ring_fd, &qp->ring, &ring))
		return;
	for (i = 0; i < LH_SR_WORDS * 64; i++) {
		const struct lh_ring_ent *e;

		if (!(qp->s.missing[i / 64] & (1ull << (i % 64))))
			continue;
		psn = psn_add(qp->s.base, i);
		if (psn_diff(psn, qp->s.next) >= 0)
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
	    psn_diff(r->psn, qp.s.una) < 0)
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
void gw_pace(struct agent *ag)
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
void gw_bound(struct agent *ag, uint64_t copies, uint64_t now)
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
void config_sync(struct agent *ag)
{
	uint32_t zero = 0, guard = lhd_resend_guard_ms(ag->cfg, ag->path_srtt_us);
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
void sentry_silence(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
		    struct sentry_est *est, uint64_t now, uint64_t sack_ns)
{
	uint64_t rto_ns = sentry_rto_ns(ag, qp);
	uint32_t psn;

	if (!qp->s.sack_ns || qp->s.una == qp->s.next || !(qp->flags & LH_QPF_PAIRED))
		return;
	if (now < qp->s.sack_ns + 2 * sack_ns || now < qp->s.tx_ns + rto_ns + sack_ns ||
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
	psn = psn_diff(qp->s.sack_epsn, qp->s.una) > 0 ? qp->s.sack_epsn : qp->s.una;
	if (psn_diff(qp->s.next, psn) < 0)
		return;
	/*
	 * Seen once is not enough: a machine that did not run the WAN's
	 * queues (or this agent) for a few ms looks silent to the first tick
	 * after it, with the ACKs and reports still queued. The same silence,
	 * nothing moved, on a tick T/2 later and on time is a silence
	 * (docs/protocol.md 2.1 has what it changed).
	 */
	if (ag->tick_late || !est->quiet_ns || est->quiet_una != qp->s.una ||
	    est->quiet_next != qp->s.next || est->quiet_sack_ns != qp->s.sack_ns) {
		est->quiet_ns = now;
		est->quiet_una = qp->s.una;
		est->quiet_next = qp->s.next;
		est->quiet_sack_ns = qp->s.sack_ns;
		return;
	}
	if (now < est->quiet_ns + sack_ns / 2)
		return;
	est->quiet_ns = 0;
	est->silence_ns = now;
	if (ag->gwq && !(qp->flags & LH_QPF_GW_OFF) && qp->ring < ag->cfg->rings &&
	    !bpf_map_lookup_elem(ag->ring_fd, &qp->ring, ag->ring_buf)) {
		uint32_t tail = psn_add(qp->s.next, ROCE_PSN_MASK);

		const struct lh_ring_ent *e = &ag->ring_buf->ent[tail & LH_RING_MASK];

		if (e->tag == LH_TAG(LH_SLOT_CACHED, tail)) {
			pr_debug("Sentry QP 0x%x: no T/C-SACK for %llu us: re-send the last, %u\n",
				 k->dqpn, (unsigned long long)((now - qp->s.sack_ns) / 1000), tail);
			gw_enqueue(ag, k, qp->ring, tail, e->slot, now_ms(), 1);
			ag->st.gw_tail_resends++;
			return;
		}
	}
	if (psn == qp->s.next) {
		/*
		 * The Depot's last report had everything the NIC sent: no tail
		 * to recover, only the receiver's ACK lost or late (the Depot's
		 * DC timer sees to its side). What the Depot reported is said
		 * to the NIC as an ACK: a NAK there would say the same and also
		 * rewind it, for nothing (seen on a loaded machine: the
		 * receiver's ACK 2.7 ms late, the NIC rewound).
		 */
		pr_debug("Sentry QP 0x%x: no T/C-SACK for %llu us, all %u..%u at the Depot: ACK\n",
			 k->dqpn, (unsigned long long)((now - qp->s.sack_ns) / 1000), qp->s.una,
			 qp->s.next);
		if (!send_to_nic(ag, k, qp, psn_add(psn, ROCE_PSN_MASK), AETH_ACK_UNLIMITED))
			ag->st.sack_acks++;
		return;
	}
	pr_debug("Sentry QP 0x%x: no T/C-SACK for %llu us, data outstanding (%u..%u): NAK %u\n",
		 k->dqpn, (unsigned long long)((now - qp->s.sack_ns) / 1000), qp->s.una, qp->s.next,
		 psn);
	if (!send_to_nic(ag, k, qp, psn, AETH_NAK_PSN_SEQ_ERROR))
		ag->st.sack_naks++;
}
