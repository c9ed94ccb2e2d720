// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `longhaul pools show`: how the packet pool (lh_pool) is used. A queue map
 * cannot be counted without popping it, so the free list (lh_pool_free) is
 * not read: the used slots are counted in the rings of the QPs that have one
 * (lh_ring, by the state in each entry's tag), and free = slots - used. The
 * programs keep running meanwhile: the numbers are a snapshot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "lh_maps.h"
#include "log.h"
#include "output.h"
#include "pins.h"
#include "qps.h"

int do_pools_show(struct lh_cli *cli)
{
	struct pinned_map qp_map, ring_map, pool_map;
	struct slot_counts c = { 0 };
	__u64 used, depot = 0, sentry = 0, no_ring = 0, rings_used = 0;
	struct qp_entry *e = NULL;
	__u8 *seen = NULL;
	__u32 n = 0, i, nr_rings;
	struct lh_ring r;
	int rc;

	rc = map_open(&cli->target, "lh_qp", &qp_map);
	if (rc)
		return rc;
	rc = map_open(&cli->target, "lh_ring", &ring_map);
	if (rc)
		goto out_qp;
	rc = map_open(&cli->target, "lh_pool", &pool_map);
	if (rc)
		goto out_ring;
	warn_if_stopped(&cli->target);

	nr_rings = ring_map.info.max_entries;
	seen = calloc(nr_rings / 8 + 1, 1);
	rc = seen ? qps_read(&qp_map, &e, &n) : -ENOMEM;
	if (rc) {
		pr_err("read lh_qp: %s\n", strerror(-rc));
		rc = LH_EXIT_ERROR;
		goto out;
	}
	for (i = 0; i < n; i++) {
		const struct lh_qp *qp = &e[i].qp;

		depot += !!(qp->flags & LH_QPF_DEPOT);
		sentry += !!(qp->flags & LH_QPF_SENTRY);
		no_ring += !!(qp->flags & LH_QPF_NO_RING);
		if (!qp_has_ring(qp, nr_rings) || (seen[qp->ring / 8] & (1u << (qp->ring % 8))))
			continue;
		seen[qp->ring / 8] |= (__u8)(1u << (qp->ring % 8));
		rings_used++;
		if (!bpf_map_lookup_elem(ring_map.fd, &qp->ring, &r))
			ring_count(&r, &c);
	}
	used = c.held + c.backup + c.other;

	out_key_width(18);
	out_object_begin(NULL);
	out_uint("slots", pool_map.info.max_entries);
	out_uint("used", used);
	out_uint("free", used < pool_map.info.max_entries ? pool_map.info.max_entries - used : 0);
	out_uint("held", c.held);
	out_uint("backup", c.backup);
	out_uint("other", c.other);
	out_uint("slot_bytes", pool_map.info.value_size);
	out_uint("rings", nr_rings);
	out_uint("rings_used", rings_used);
	out_uint("qps", n);
	out_uint("max_qps", qp_map.info.max_entries);
	out_uint("depot_qps", depot);
	out_uint("sentry_qps", sentry);
	out_uint("qps_without_ring", no_ring);
	out_object_end();
	rc = 0;
out:
	free(e);
	free(seen);
	map_close(&pool_map);
out_ring:
	map_close(&ring_map);
out_qp:
	map_close(&qp_map);
	return rc;
}
