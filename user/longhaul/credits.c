// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `longhaul credits show` and `longhaul credits stats`: credit-based flow
 * control (include/lh_credit.h) as this hop sees it. Per flow, what the
 * program counted (lh_cr_flow) beside what the agent granted (lh_cr_grant):
 * state, role, and per downstream path its interface, next hop, liveness,
 * credit limit, bytes sent and the credit left; the bytes the agent holds.
 * The two maps are read one after the other, not atomically: a flow may move
 * between the reads (held bytes never print below 0 for that reason).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "lh_credit.h"
#include "log.h"
#include "output.h"
#include "pins.h"
#include "qps.h"

struct credit_entry {
	struct lh_qp_key key;
	struct lh_cr_flow flow;
	struct lh_cr_grant grant;
	bool granted; /* lh_cr_grant has the flow */
};

static const char *const state_names[LH_CRS_MAX] = {
	[LH_CRS_PENDING] = "pending", [LH_CRS_ACTIVE] = "active", [LH_CRS_LAST] = "last",
	[LH_CRS_OPEN] = "open",	      [LH_CRS_ENDING] = "ending",
};

static const char *const cr_stat_names[LH_CR_ST_MAX] = {
#define CR_STAT_NAME(e, n, d) [LH_CR_ST_##e] = #n,
	LH_CR_STATS(CR_STAT_NAME)
#undef CR_STAT_NAME
};

static const char *const cr_stat_descs[LH_CR_ST_MAX] = {
#define CR_STAT_DESC(e, n, d) [LH_CR_ST_##e] = (d),
	LH_CR_STATS(CR_STAT_DESC)
#undef CR_STAT_DESC
};

static int cmp_credit(const void *a, const void *b)
{
	return memcmp(&((const struct credit_entry *)a)->key,
		      &((const struct credit_entry *)b)->key, sizeof(struct lh_qp_key));
}

/* "first" (the flow entered here from the DC), "last" (no credit downstream), "transit" */
static const char *role_of(const struct credit_entry *e)
{
	if (e->flow.flags & LH_CRF_FIRST)
		return "first";
	if (e->granted && e->grant.state == LH_CRS_LAST)
		return "last";
	return "transit";
}

/* Paths to print: those the agent knows, and any the program charged beyond them */
static unsigned int nr_paths(const struct credit_entry *e)
{
	unsigned int n = e->granted ? e->grant.npaths : 0, i;

	if (n > LH_CR_MAX_PATHS)
		n = LH_CR_MAX_PATHS;
	for (i = n; i < LH_CR_MAX_PATHS; i++)
		if (e->flow.sent[i])
			n = i + 1;
	return n;
}

static __u64 sub_floor0(__u64 a, __u64 b)
{
	return a > b ? a - b : 0;
}

static void print_path(const struct credit_entry *e, unsigned int i)
{
	const struct lh_cr_grant *g = &e->grant;
	bool known = e->granted && i < g->npaths;
	char name[IF_NAMESIZE], hop[INET6_ADDRSTRLEN], head[16];

	snprintf(head, sizeof(head), "path %u", i);
	out_row_begin(head);
	out_uint("index", i);
	if (known) {
		out_uint("ifindex", g->ifindex[i]);
		out_str("ifname",
			g->ifindex[i] && if_indextoname(g->ifindex[i], name) ? name : NULL);
		addr_str(g->nexthop[i], hop, sizeof(hop));
		out_str("nexthop", hop);
		out_bool("alive", g->alive[i]);
		out_bool("active", g->state == LH_CRS_ACTIVE && g->active == i);
		out_uint("limit", g->limit[i]);
	} else {
		out_null("ifindex");
		out_null("ifname");
		out_null("nexthop");
		out_null("alive");
		out_null("active");
		out_null("limit");
	}
	out_uint("sent", e->flow.sent[i]);
	/* signed: the data path passes what it cannot hold, charged all the same */
	if (known)
		out_int("credit", (__s64)(g->limit[i] - e->flow.sent[i]));
	else
		out_null("credit");
	out_row_end();
}

static void print_flow(const struct credit_entry *e, __u64 now)
{
	const struct lh_cr_flow *f = &e->flow;
	const struct lh_cr_grant *g = &e->grant;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], head[192], st[16];
	const char *state = "pending";
	unsigned int i, n = nr_paths(e);

	if (e->granted) {
		if (g->state < LH_CRS_MAX) {
			state = state_names[g->state];
		} else {
			snprintf(st, sizeof(st), "%u", g->state); /* newer than this build */
			state = st;
		}
	}
	addr_str(e->key.saddr, src, sizeof(src));
	addr_str(e->key.daddr, dst, sizeof(dst));
	snprintf(head, sizeof(head), "flow 0x%06x  %s -> %s  %s%s  %s", e->key.dqpn, src, dst,
		 state, e->granted ? "" : " (no grant)", role_of(e));
	out_object_begin(head);
	out_str("saddr", src);
	out_str("daddr", dst);
	out_hex("dqpn", e->key.dqpn, 6);
	out_str("state", state);
	out_bool("granted", e->granted);
	out_str("role", role_of(e));
	if (e->granted && g->state == LH_CRS_ACTIVE && g->active < LH_CR_MAX_PATHS)
		out_uint("active_path", g->active);
	else
		out_null("active_path");
	out_uint("fwd_bytes", f->fwd_bytes);
	out_uint("fwd_pkts", f->fwd_pkts);
	/* held now: handed to the agent and not yet sent or discarded by it */
	out_uint("held_bytes", sub_floor0(f->held_bytes, e->granted ? g->released_bytes : 0));
	out_uint("held_pkts", sub_floor0(f->held_pkts, e->granted ? g->released_pkts : 0));
	if (e->granted)
		out_uint("hold_cap", g->hold_cap);
	else
		out_null("hold_cap");
	out_uint("held_total_bytes", f->held_bytes);
	out_uint("held_total_pkts", f->held_pkts);
	out_uint("hold_fail", f->hold_fail);
	out_uint("redirected", f->redirected);
	print_age("first_age_us", now, f->first_ns);
	print_age("last_age_us", now, f->last_ns);
	out_array_begin("paths");
	for (i = 0; i < n; i++)
		print_path(e, i);
	out_array_end();
	out_object_end();
}

/* Every flow of lh_cr_flow with its grant, if any, sorted by key */
static int credits_read(const struct pinned_map *flow_map, const struct pinned_map *grant_map,
			struct credit_entry **out, __u32 *n)
{
	struct lh_qp_key *keys;
	struct lh_cr_flow *flows;
	struct credit_entry *e;
	__u32 i;
	int err;

	err = map_read_all(flow_map, 0, (void **)&keys, (void **)&flows, n);
	if (err)
		return err;
	e = *n ? calloc(*n, sizeof(*e)) : NULL;
	if (*n && !e)
		err = -ENOMEM;
	for (i = 0; e && i < *n; i++) {
		e[i].key = keys[i];
		e[i].flow = flows[i];
		e[i].granted = !bpf_map_lookup_elem(grant_map->fd, &keys[i], &e[i].grant);
	}
	free(keys);
	free(flows);
	if (err) {
		*n = 0;
		return err;
	}
	if (e) /* NULL when there is no entry */
		qsort(e, *n, sizeof(*e), cmp_credit);
	*out = e;
	return 0;
}

int do_credits_show(struct lh_cli *cli)
{
	struct pinned_map flow_map, grant_map;
	struct credit_entry *e = NULL, one = { 0 };
	__u32 n = 0, i;
	int rc;

	if (cli->opt.key && key_parse(cli->opt.key, &one.key))
		return LH_EXIT_USAGE;
	rc = map_open(&cli->target, "lh_cr_flow", &flow_map);
	if (rc)
		return rc;
	rc = map_open(&cli->target, "lh_cr_grant", &grant_map);
	if (rc) {
		map_close(&flow_map);
		return rc;
	}
	warn_if_stopped(&cli->target);
	if (cli->opt.key) {
		if (bpf_map_lookup_elem(flow_map.fd, &one.key, &one.flow)) {
			rc = errno;
			pr_err("no flow %s in lh_cr_flow%s%s\n", cli->opt.key,
			       rc == ENOENT ? "" : ": ", rc == ENOENT ? "" : strerror(rc));
			rc = LH_EXIT_ERROR;
			goto out;
		}
		one.granted = !bpf_map_lookup_elem(grant_map.fd, &one.key, &one.grant);
		e = &one;
		n = 1;
	} else {
		rc = credits_read(&flow_map, &grant_map, &e, &n);
		if (rc) {
			pr_err("read lh_cr_flow: %s\n", strerror(-rc));
			rc = LH_EXIT_ERROR;
			goto out;
		}
	}
	out_key_width(20);
	out_array_begin(NULL);
	for (i = 0; i < n; i++)
		print_flow(&e[i], lh_now_ns());
	out_array_end();
	if (!n && !out_json())
		printf("no flows\n");
	rc = 0;
out:
	if (e != &one)
		free(e);
	map_close(&grant_map);
	map_close(&flow_map);
	return rc;
}

/* lh_cr_stats: struct lh_cr_stats per CPU, summed */
int do_credits_stats(struct lh_cli *cli)
{
	__u64 total[LH_CR_ST_MAX] = { 0 };
	unsigned int key;
	int cpus, rc;

	rc = sum_percpu(&cli->target, "lh_cr_stats", total, LH_CR_ST_MAX, &cpus);
	if (rc)
		return rc;
	out_key_width(24);
	out_num_width(12);
	out_object_begin(NULL);
	out_uint("cpus", (uint64_t)cpus);
	out_object_begin("counters");
	for (key = 0; key < LH_CR_ST_MAX; key++) {
		if (!total[key] && !cli->opt.all)
			continue;
		out_row_begin(cr_stat_names[key]);
		out_uint("value", total[key]);
		out_str("description", cr_stat_descs[key]);
		out_row_end();
	}
	out_object_end();
	out_object_end();
	return 0;
}
