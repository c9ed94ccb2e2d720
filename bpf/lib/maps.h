/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The maps the LR2 data path shares. Every object that includes this header
 * declares them with LIBBPF_PIN_BY_NAME: the agent opens all objects with the
 * same pin directory, so they share one instance of each (docs/maps.md).
 * Sizes marked "agent" are set by longhauld before load from its config.
 */
#ifndef LH_BPF_MAPS_H
#define LH_BPF_MAPS_H

#include "lh_maps.h"

/* Gateway configuration, one entry, written by longhauld */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lh_config);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_config SEC(".maps");

/* Per-QP state by data direction; created by the XDP programs, read by all and the agent */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096); /* agent */
	__type(key, struct lh_qp_key);
	__type(value, struct lh_qp);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_qp SEC(".maps");

/*
 * Per-CPU room where lh_qp_learn builds a new lh_qp (bytes: a spin lock may
 * not live in a per-CPU map): on the stack it would not fit next to its
 * callers' frames in 512 bytes. Not pinned, one per object.
 */
struct lh_qp_buf {
	__u8 b[sizeof(struct lh_qp)];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lh_qp_buf);
} lh_qp_scratch SEC(".maps");

/* ACK direction -> data key, written when an ACK pairs a QP (qp.h) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096); /* agent */
	__type(key, struct lh_ack_key);
	__type(value, struct lh_qp_key);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_ack SEC(".maps");

/* Data key -> requester's QPN of each pairing; one made outside BPF (a test) is copied into lh_qp */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096); /* agent: as lh_qp */
	__type(key, struct lh_qp_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_pair SEC(".maps");

/*
 * Pairing's exact index (qp.h, docs/maps.md): the PSNs unpaired QPs
 * forwarded, keyed by the two hosts and the PSN (a struct lh_qp_key whose
 * dqpn holds the PSN), to the QP's dqpn, or LH_PAIR_PSN_AMBIG when two QPs
 * forwarded it. An ACK finds its QP with one lookup instead of a pass over
 * the host pair's list (two lookups a QP: at 1024-4096 QPs starting at once
 * that cost what made the NICs time out). Least recently used go first.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536); /* agent: 16 x max-qps */
	__type(key, struct lh_qp_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_pair_psn SEC(".maps");

/* Unpaired data QPs per pair of hosts (struct lh_hostpair), for pairing in BPF (qp.h) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256); /* agent: --max-hostpairs */
	__type(key, struct lh_hostpair_key);
	__type(value, struct lh_hostpair);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_hostpair SEC(".maps");

/*
 * Where a new lh_hostpair entry is built (16 KB: no stack holds it; bytes,
 * as for lh_qp_scratch). Not pinned, one per object.
 */
struct lh_hostpair_buf {
	__u8 b[sizeof(struct lh_hostpair)];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lh_hostpair_buf);
} lh_hostpair_scratch SEC(".maps");

/* Pairing's guard (struct lh_pair_guard), one entry: the programs and the agent write it */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lh_pair_guard);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_pair_guard SEC(".maps");

/* Depot QPs' PSN windows (struct lh_ring), one per QP that holds packets */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024); /* agent */
	__type(key, __u32);
	__type(value, struct lh_ring);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_ring SEC(".maps");

/* Free ring indexes: popped when a Depot QP is learned, pushed back by the agent's GC */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 1024); /* agent: as lh_ring */
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_ring_free SEC(".maps");

/*
 * A bound below every packet a pool slot holds: IPv4 and UDP headers (the
 * parser passes no RoCEv2 packet shorter than 44 bytes from its IP header:
 * BTH and ICRC too). Copies into and out of a slot test it, which tells the
 * verifier the copy's size is never 0.
 */
#define LH_SLOT_MIN 28

/* The packet pool: reorder (held) and backup (delivered, not yet acked) slots */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4096); /* agent: sized from rate x RTT */
	__type(key, __u32);
	__type(value, struct lh_slot);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_pool SEC(".maps");

/* Free pool slots: popped to store a packet, pushed when the NIC acks it */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 4096); /* agent: as lh_pool */
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_pool_free SEC(".maps");

/* The DC prefixes behind peer gateways (--peer); empty and unused without LH_CFG_PEERS */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, LH_MAX_PEERS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct lh_peer_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_peer SEC(".maps");

/*
 * QPs learned per far host and per host pair (struct lh_count_key), with
 * --host-qps or --hostpair-qps: lh_qp_learn() adds, the agent's forgetting
 * of a QP takes away (LH_CMD_QP_FORGOTTEN through lh_dc_cmd)
 */
struct {
	/* LRU: a full table forgets an old count (then too lenient), never refuses a host */
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 2048); /* agent: 2 x --max-qps */
	__type(key, struct lh_count_key);
	__type(value, __u32);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_qp_count SEC(".maps");

/* Events the agent acts on (struct lh_event) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
	__uint(pinning, LIBBPF_PIN_BY_NAME);
} lh_events SEC(".maps");

static __always_inline struct lh_config *lh_config_get(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&lh_config, &key);
}

#endif /* LH_BPF_MAPS_H */
