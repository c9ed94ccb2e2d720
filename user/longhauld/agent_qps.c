// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The agent's QP tables: pruning the pairing lists, the per-host QP counts,
 * and forgetting QPs (gone, stale, or of a data path that let packets pass).
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

/*
 * Drop the QPs that are gone or paired from the host pairs' lists (the
 * programs pair from them). In BPF (lh_dc_cmd): the programs change the
 * lists under their lock, which a read and a write from here are not.
 */
void prune_hostpairs(struct agent *ag)
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
void forget_qp(struct agent *ag, const struct lh_qp_key *k, const struct lh_qp *qp,
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
void forget_all(struct agent *ag)
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
