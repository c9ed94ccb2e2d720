/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Reading lh_qp and the rings of its QPs: shared by `qps show` and `pools
 * show`; flow keys and ages, shared with `credits show`.
 */
#ifndef LONGHAUL_QPS_H
#define LONGHAUL_QPS_H

#include <stddef.h>

#include "clock.h"
#include "lh_maps.h"
#include "pins.h"

struct qp_entry {
	struct lh_qp_key key;
	struct lh_qp qp;
};

/* Pool slots a ring points at, by LH_TAG_STATE of each entry */
struct slot_counts {
	__u64 held;
	__u64 backup;
	__u64 other; /* states this build has no name for */
};

/* Every entry of lh_qp, each copied under its lock, sorted by key; *out is malloc'ed */
int qps_read(const struct pinned_map *qp_map, struct qp_entry **out, __u32 *n);
/* A key address (IPv4 mapped or IPv6) as text */
void addr_str(const __u8 *a, char *buf, size_t size);
/* A QPN (0 to 0xffffff, any base strtoul reads) into *qpn; false when it is not one */
bool qpn_parse(const char *s, __u32 *qpn);
/* --key SRC,DST,QPN into a key; LH_EXIT_USAGE (printed) when it is not one */
int key_parse(const char *arg, struct lh_qp_key *k);
/* key: microseconds from then to now (JSON null / "-" when then is 0) */
void print_age(const char *key, __u64 now, __u64 then);
/* The QP owns ring qp->ring of an lh_ring with nr_rings entries */
bool qp_has_ring(const struct lh_qp *qp, __u32 nr_rings);
/* Add the used entries of a ring to c */
void ring_count(const struct lh_ring *r, struct slot_counts *c);

#endif /* LONGHAUL_QPS_H */
