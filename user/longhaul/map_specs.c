// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What this build expects of each pinned map: its type, key and value sizes,
 * and the offset and size of every struct field the CLI reads (include/),
 * which map_get() checks against the map's BTF.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "lh_credit.h"
#include "lh_maps.h"
#include "lh_stats.h"
#include "pins.h"

#define FIELD(type, f) { #f, offsetof(struct type, f), sizeof(((struct type *)0)->f) }
#define NR(a) (sizeof(a) / sizeof((a)[0]))

#define STAT_FIELD(name, field, desc) FIELD(lh_stats, field),
static const struct field_spec stats_fields[] = { LH_STATS(STAT_FIELD) };
#undef STAT_FIELD

#define OPCODE_FIELD(name, field, val) FIELD(lh_opcode_stats, field),
static const struct field_spec opcode_fields[] = { ROCE_OPCODES(OPCODE_FIELD) };
#undef OPCODE_FIELD

static const struct field_spec qp_key_fields[] = {
	FIELD(lh_qp_key, saddr),
	FIELD(lh_qp_key, daddr),
	FIELD(lh_qp_key, dqpn),
};

/* The fields of struct lh_qp the CLI prints */
static const struct field_spec qp_fields[] = {
	FIELD(lh_qp, flags),
	FIELD(lh_qp, ring),
	FIELD(lh_qp, peer_qpn),
	FIELD(lh_qp, pkey),
	FIELD(lh_qp, sport),
	FIELD(lh_qp, d.deliv),
	FIELD(lh_qp, d.high),
	FIELD(lh_qp, d.acked),
	FIELD(lh_qp, d.release_after),
	FIELD(lh_qp, d.back_psn),
	FIELD(lh_qp, msn),
	FIELD(lh_qp, s.next),
	FIELD(lh_qp, s.una),
	FIELD(lh_qp, s.acked),
	FIELD(lh_qp, s.replay),
	FIELD(lh_qp, s.end),
	FIELD(lh_qp, s.base),
	FIELD(lh_qp, s.missing),
	FIELD(lh_qp, last_rx_ns),
	FIELD(lh_qp, last_progress_ns),
	FIELD(lh_qp, d.last_nack_ns),
	FIELD(lh_qp, wan_ifindex),
};

static const struct field_spec ring_fields[] = { FIELD(lh_ring, ent) };
static const struct field_spec ring_ent_fields[] = {
	FIELD(lh_ring_ent, slot),
	FIELD(lh_ring_ent, tag),
};

static const struct field_spec cr_flow_fields[] = {
	FIELD(lh_cr_flow, fwd_bytes),	FIELD(lh_cr_flow, fwd_pkts),  FIELD(lh_cr_flow, sent),
	FIELD(lh_cr_flow, held_bytes),	FIELD(lh_cr_flow, held_pkts), FIELD(lh_cr_flow, hold_fail),
	FIELD(lh_cr_flow, redirected),	FIELD(lh_cr_flow, first_ns),  FIELD(lh_cr_flow, last_ns),
	FIELD(lh_cr_flow, flags),
};

static const struct field_spec cr_grant_fields[] = {
	FIELD(lh_cr_grant, state),	    FIELD(lh_cr_grant, active),
	FIELD(lh_cr_grant, npaths),	    FIELD(lh_cr_grant, hold_cap),
	FIELD(lh_cr_grant, limit),	    FIELD(lh_cr_grant, released_bytes),
	FIELD(lh_cr_grant, released_pkts), FIELD(lh_cr_grant, ifindex),
	FIELD(lh_cr_grant, nexthop),	    FIELD(lh_cr_grant, alive),
};

static const struct field_spec config_fields[] = {
	FIELD(lh_config, dc_ifindex),
	FIELD(lh_config, flags),
};

#define STRUCT(n, f) { #n, f, NR(f) }
static const struct struct_spec stats_struct = STRUCT(lh_stats, stats_fields);
static const struct struct_spec opcode_struct = STRUCT(lh_opcode_stats, opcode_fields);
static const struct struct_spec qp_key_struct = STRUCT(lh_qp_key, qp_key_fields);
static const struct struct_spec qp_struct = STRUCT(lh_qp, qp_fields);
static const struct struct_spec ring_struct = STRUCT(lh_ring, ring_fields);
static const struct struct_spec ring_ent_struct = STRUCT(lh_ring_ent, ring_ent_fields);
static const struct struct_spec config_struct = STRUCT(lh_config, config_fields);
static const struct struct_spec cr_flow_struct = STRUCT(lh_cr_flow, cr_flow_fields);
static const struct struct_spec cr_grant_struct = STRUCT(lh_cr_grant, cr_grant_fields);

const struct map_spec lh_map_specs[] = {
	{ "lh_stats", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(struct lh_stats), NULL,
	  &stats_struct, NULL },
	{ "lh_opcodes", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(struct lh_opcode_stats),
	  NULL, &opcode_struct, NULL },
	{ "lh_config", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct lh_config), NULL,
	  &config_struct, NULL },
	{ "lh_qp", BPF_MAP_TYPE_HASH, sizeof(struct lh_qp_key), sizeof(struct lh_qp),
	  &qp_key_struct, &qp_struct, NULL },
	{ "lh_ack", BPF_MAP_TYPE_HASH, sizeof(struct lh_ack_key), sizeof(struct lh_qp_key), NULL,
	  NULL, NULL },
	{ "lh_pair", BPF_MAP_TYPE_HASH, sizeof(struct lh_qp_key), sizeof(__u32), NULL, NULL, NULL },
	{ "lh_ring", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct lh_ring), NULL, &ring_struct,
	  &ring_ent_struct },
	{ "lh_ring_free", BPF_MAP_TYPE_QUEUE, 0, sizeof(__u32), NULL, NULL, NULL },
	{ "lh_pool", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct lh_slot), NULL, NULL, NULL },
	{ "lh_pool_free", BPF_MAP_TYPE_QUEUE, 0, sizeof(__u32), NULL, NULL, NULL },
	{ "lh_events", BPF_MAP_TYPE_RINGBUF, 0, 0, NULL, NULL, NULL },
	/* credit flow control (include/lh_credit.h) */
	{ "lh_cr_flow", BPF_MAP_TYPE_HASH, sizeof(struct lh_qp_key), sizeof(struct lh_cr_flow),
	  &qp_key_struct, &cr_flow_struct, NULL },
	{ "lh_cr_grant", BPF_MAP_TYPE_HASH, sizeof(struct lh_qp_key), sizeof(struct lh_cr_grant),
	  &qp_key_struct, &cr_grant_struct, NULL },
	/* struct lh_cr_stats: one __u64 per enum lh_cr_stat, one entry */
	{ "lh_cr_stats", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(struct lh_cr_stats), NULL,
	  NULL, NULL },
};
const unsigned int lh_nr_map_specs = NR(lh_map_specs);

const struct map_spec *map_spec_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < lh_nr_map_specs; i++)
		if (!strcmp(lh_map_specs[i].name, name))
			return &lh_map_specs[i];
	return NULL;
}
