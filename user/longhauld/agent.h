/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The agent's part of LR2 at run time: what the programs hand it through the
 * ring buffer (pairing, long runs, long gaps) and what needs time (Depot-NACK
 * retries, stuck releases, forgetting idle QPs).
 */
#ifndef LONGHAULD_AGENT_H
#define LONGHAULD_AGENT_H

#include <stdint.h>

#include "config.h"
#include "datapath.h"

struct lhd_agent_stats {
	uint64_t events;
	uint64_t hostpair_pruned; /* QPs gone or paired, taken out of the pairing lists */
	uint64_t cmd_errors; /* lh_dc_cmd runs that failed (a count not given back) */
	uint64_t nack_retries; /* Depot-NACKs re-sent by the timer */
	uint64_t reports; /* Depot reports sent */
	uint64_t sack_reports; /* ... of them periodic T/C-SACK reports */
	uint64_t sack_naks; /* Sentry: NAKs for data outstanding with its Depot silent for 2T */
	uint64_t sack_acks; /* ... and ACKs instead, the Depot having reported all the NIC sent */
	uint64_t naks_owed; /* Sentry: NAKs sent to the NIC once its retry ended */
	uint64_t kicks; /* release / replay runs continued */
	uint64_t dc_probes; /* Depot: the DC timer's probes of the NIC (--dc-timeout) */
	uint64_t kick_fail;
	uint64_t qps_forgotten;
	uint64_t qps_stale; /* ... of them a new connection on their key (LH_QPF_STALE) */
	uint64_t send_fail;
	/* Sentry, gateway recovery */
	uint64_t gw_queued; /* PSNs a report named that have a copy: queued for a re-send */
	uint64_t gw_resent; /* ... re-sent, paced */
	uint64_t gw_stale; /* ... acknowledged or copy gone by their turn: not sent */
	uint64_t gw_dp_sent; /* ... sent by the data path on a Depot-NACK less than the guard ago */
	uint64_t gw_queue_full; /* ... not queued: the queue was full (the Depot asks again) */
	uint64_t gw_tail_resends; /* T/C-SACK silence: the last packet re-sent (no NAK) */
	uint64_t gw_full_ticks; /* timer ticks with the copies over the bound for an RTO */
	uint64_t gw_over_copies, gw_over_bound; /* the most copies over the bound, and that bound */
	uint32_t gw_over_rtt_us; /* ... and the RTT it was made of */
	uint32_t rto_max_us; /* Sentry: the largest round trip measured (srtt + 4 rttvar) */
};

/* Run until *stop becomes non-zero; returns EXIT_OK or EXIT_KERNEL */
int lhd_agent_run(const struct lhd_config *cfg, struct lhd_datapath *dp, volatile int *stop);

#endif /* LONGHAULD_AGENT_H */
