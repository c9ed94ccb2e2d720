/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Sentry, the sender-side half of LR2 (docs/design.md).
 *
 * It keeps a model of the sending NIC (rxe's rules): a NAK implicitly
 * acknowledges every PSN before its own, and after a rewind the NIC ignores
 * NAKs until an ACK from its rewind point on comes. So the Sentry never
 * passes a NAK that would be ignored (it would also push the NIC's
 * acknowledged point past ACKs still on their way, which then no longer end
 * the retry): it owes it instead, and the agent sends it when the ACK passes.
 *
 * Data from the DC (XDP on the DC interface), per QP:
 *  - the next new PSN passes; a PSN beyond it (loss inside the sender's DC)
 *    becomes a Sentry-NACK at once: PSN = what the receiver acknowledged
 *    (never more: that is all a NAK may acknowledge), so the NIC goes back
 *    there and the filter drops what already crossed; later ones are dropped
 *    until the NIC resends;
 *  - during a recovery episode a retransmission passes only when the Depot
 *    reported it missing (the SR filter); the Sentry keeps a copy of every
 *    packet of the replay, passed or dropped, and re-sends one itself when a
 *    Depot report names it missing again; outside an episode everything
 *    passes (a timeout retransmission), except what the NIC was told the
 *    receiver has (before s.una): that is answered with the ACK again.
 * From the WAN (XDP on the WAN interface):
 *  - a Depot-NACK (PSN = the receiver's ePSN) records the first hole and goes
 *    on to the NIC as the plain NAK it is (mark cleared) when the NIC will
 *    take it; a Depot report (lh_proto.h) gives the exact missing set, and
 *    copies due again are re-sent by the TC program on the WAN interface;
 *  - a plain NAK from the far NIC ends filtering; ACKs free cached copies,
 *    end the NIC's retry and an episode they cover.
 * Gateway recovery (LH_CFG_GATEWAY, --recovery gateway): every new packet
 * toward the WAN leaves a copy in the QP's ring until the far NIC ACKs it;
 * a Depot-NACK for a PSN with a copy goes no further (the NIC never sees a
 * NAK for WAN loss) and a report naming such PSNs goes to the agent, which
 * re-sends them from the copies at a preset rate, with no window. A QP that
 * gets no copy (pool empty, or the copies of all QPs over rate x RTT: the
 * agent's LH_CFG_GW_FULL) falls back to the LR2 way (LH_QPF_GW_OFF) until
 * all it sent is acknowledged.
 */
#ifndef LH_BPF_SENTRY_H
#define LH_BPF_SENTRY_H

#include "sentry_data.h"
#include "sentry_ack.h"
#include "sentry_report.h"

/* Verified once as a global function (stack and verifier work of its own) */
__noinline int sentry_xdp_data(struct xdp_md *ctx, const struct lh_parsed *p,
			       const struct lh_config *cfg)
{
	if (!p || !cfg)
		return XDP_PASS;
	return sentry_xdp_data_do(ctx, p, cfg, lh_stats_get());
}

/* Verified once as a global function (stack and verifier work of its own) */
__noinline int sentry_xdp_ack(struct xdp_md *ctx, const struct lh_parsed *p)
{
	if (!p)
		return XDP_PASS;
	return sentry_xdp_ack_do(ctx, p, lh_stats_get());
}

/* Verified once as a global function (stack and verifier work of its own) */
__noinline int sentry_xdp_report(struct xdp_md *ctx, const struct lh_parsed *p)
{
	if (!p)
		return XDP_PASS;
	return sentry_xdp_report_do(ctx, p, lh_stats_get());
}

#endif /* LH_BPF_SENTRY_H */
