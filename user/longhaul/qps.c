// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `longhaul qps show`: every entry of lh_qp (one per data direction of an
 * RC connection), read under the entry's spin lock (BPF_F_LOCK) so each is
 * a consistent snapshot: addresses, QPNs, role, Depot and Sentry state, the
 * packets its ring holds, how long ago it saw a packet. Also the QP walk
 * that `longhaul pools show` counts slots with, and what `longhaul credits`
 * shares: flow keys as text and --key, ages against the BPF clock.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>

#include "lh_maps.h"
#include "log.h"
#include "output.h"
#include "pins.h"
#include "qps.h"
#include "rocev2.h"

static bool is_v4mapped(const __u8 *a)
{
	static const __u8 pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(a, pfx, sizeof(pfx));
}

void addr_str(const __u8 *a, char *buf, size_t size)
{
	if (is_v4mapped(a))
		inet_ntop(AF_INET, a + 12, buf, (socklen_t)size);
	else
		inet_ntop(AF_INET6, a, buf, (socklen_t)size);
}

/* "a.b.c.d" or an IPv6 address into a key address (IPv4 mapped) */
static bool addr_parse(const char *s, __u8 *a)
{
	memset(a, 0, 16);
	if (inet_pton(AF_INET, s, a + 12) == 1) {
		a[10] = a[11] = 0xff;
		return true;
	}
	return inet_pton(AF_INET6, s, a) == 1;
}

bool qpn_parse(const char *s, __u32 *qpn)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || end == s || s[0] == '-' || v > ROCE_QPN_MASK)
		return false;
	*qpn = (__u32)v;
	return true;
}

/* --key SRC,DST,QPN: the data direction's source, destination and destination QPN */
int key_parse(const char *arg, struct lh_qp_key *k)
{
	char buf[128], *src, *dst, *qpn, *save = NULL;

	memset(k, 0, sizeof(*k));
	if (strlen(arg) >= sizeof(buf))
		goto bad;
	snprintf(buf, sizeof(buf), "%s", arg);
	src = strtok_r(buf, ",", &save);
	dst = strtok_r(NULL, ",", &save);
	qpn = strtok_r(NULL, ",", &save);
	if (!src || !dst || !qpn || strtok_r(NULL, ",", &save))
		goto bad;
	if (!addr_parse(src, k->saddr) || !addr_parse(dst, k->daddr) || !qpn_parse(qpn, &k->dqpn))
		goto bad;
	return 0;
bad:
	pr_err("--key '%s': want SRC,DST,QPN (e.g. 10.0.0.1,10.0.0.2,0x12)\n", arg);
	return LH_EXIT_USAGE;
}

static int cmp_entry(const void *a, const void *b)
{
	return memcmp(&((const struct qp_entry *)a)->key, &((const struct qp_entry *)b)->key,
		      sizeof(struct lh_qp_key));
}

int qps_read(const struct pinned_map *qp_map, struct qp_entry **out, __u32 *n)
{
	struct lh_qp_key *keys;
	struct lh_qp *vals;
	struct qp_entry *e;
	__u32 i;
	int err;

	*out = NULL;
	*n = 0;
	err = map_read_all(qp_map, BPF_F_LOCK, (void **)&keys, (void **)&vals, n);
	if (err)
		return err;
	e = *n ? calloc(*n, sizeof(*e)) : NULL;
	if (*n && !e)
		err = -ENOMEM;
	for (i = 0; e && i < *n; i++) {
		e[i].key = keys[i];
		e[i].qp = vals[i];
	}
	free(keys);
	free(vals);
	if (err) {
		*n = 0;
		return err;
	}
	if (e) /* NULL when there is no entry */
		qsort(e, *n, sizeof(*e), cmp_entry);
	*out = e;
	return 0;
}

bool qp_has_ring(const struct lh_qp *qp, __u32 nr_rings)
{
	return !(qp->flags & LH_QPF_NO_RING) && qp->ring != LH_NO_SLOT && qp->ring < nr_rings;
}

void ring_count(const struct lh_ring *r, struct slot_counts *c)
{
	unsigned int i;

	for (i = 0; i < LH_RING_SIZE; i++) {
		switch (LH_TAG_STATE(r->ent[i].tag)) {
		case LH_SLOT_FREE:
			break;
		case LH_SLOT_HELD:
			c->held++;
			break;
		case LH_SLOT_BACKUP:
			c->backup++;
			break;
		default:
			c->other++;
			break;
		}
	}
}

static const struct {
	__u32 bit;
	const char *name;
} qp_flags[] = {
	{ LH_QPF_PAIRED, "paired" },	   { LH_QPF_IPV6, "ipv6" },
	{ LH_QPF_DEPOT, "depot" },	   { LH_QPF_SENTRY, "sentry" },
	{ LH_QPF_RELEASING, "releasing" }, { LH_QPF_EPISODE, "episode" },
	{ LH_QPF_SNAK_SENT, "snak_sent" }, { LH_QPF_NO_RING, "no_ring" },
	{ LH_QPF_REWIND_PENDING, "rewind_pending" }, { LH_QPF_NIC_RETRY, "nic_retry" },
	{ LH_QPF_NAK_DEFERRED, "nak_deferred" }, { LH_QPF_GW_OFF, "gw_off" },
	{ LH_QPF_STALE, "stale" }, { LH_QPF_S_SYNCED, "synced" },
	{ LH_QPF_S_ACKED, "acked" },	   { LH_QPF_LISTED, "listed" },
	{ LH_QPF_WIDE, "wide" },	   { LH_QPF_D_UNSURE, "unsure" },
	{ LH_QPF_D_BACK, "back" },	   { LH_QPF_D_BACK_DUE, "back_due" },
	{ LH_QPF_S_JUMP, "jump" },
};

static void print_flags(__u32 flags)
{
	char buf[16];
	unsigned int i;
	__u32 bit;

	out_array_begin("flags");
	for (i = 0; i < sizeof(qp_flags) / sizeof(qp_flags[0]); i++) {
		if (flags & qp_flags[i].bit)
			out_str(NULL, qp_flags[i].name);
		flags &= ~qp_flags[i].bit;
	}
	for (bit = 1; flags; bit <<= 1) {
		if (!(flags & bit))
			continue;
		snprintf(buf, sizeof(buf), "0x%x", bit); /* a flag newer than this build */
		out_str(NULL, buf);
		flags &= ~bit;
	}
	out_array_end();
}

void print_age(const char *key, __u64 now, __u64 then)
{
	out_usec(key, !then ? OUT_USEC_NONE : now > then ? (now - then) / 1000 : 0);
}

static unsigned int popcount_missing(const struct lh_qp *qp)
{
	unsigned int i, n = 0;

	for (i = 0; i < LH_SR_WORDS; i++)
		n += (unsigned int)__builtin_popcountll(qp->s.missing[i]);
	return n;
}

static const char *role_of(__u32 flags)
{
	if (flags & LH_QPF_DEPOT)
		return "depot";
	if (flags & LH_QPF_SENTRY)
		return "sentry";
	return NULL;
}

static void print_qp(const struct qp_entry *e, const struct pinned_map *ring_map, __u64 now)
{
	const struct lh_qp *qp = &e->qp;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN], head[160];
	const char *role = role_of(qp->flags);
	bool ring = ring_map && qp_has_ring(qp, ring_map->info.max_entries);
	struct slot_counts c = { 0 };
	struct lh_ring r;

	addr_str(e->key.saddr, src, sizeof(src));
	addr_str(e->key.daddr, dst, sizeof(dst));
	snprintf(head, sizeof(head), "qp 0x%06x  %s -> %s  %s", e->key.dqpn, src, dst,
		 role ? role : "");
	out_object_begin(head);
	out_str("saddr", src);
	out_str("daddr", dst);
	out_hex("dqpn", e->key.dqpn, 6);
	out_str("role", role);
	if (qp->flags & LH_QPF_PAIRED)
		out_hex("peer_qpn", qp->peer_qpn, 6);
	else
		out_null("peer_qpn");
	print_flags(qp->flags);
	if (qp->ring != LH_NO_SLOT && !(qp->flags & LH_QPF_NO_RING))
		out_uint("ring", qp->ring);
	else
		out_null("ring");
	out_hex("pkey", qp->pkey, 4);
	out_uint("sport", qp->sport);
	/* an index in the agent's network namespace, which need not be ours */
	if (qp->wan_ifindex)
		out_uint("wan_ifindex", qp->wan_ifindex);
	else
		out_null("wan_ifindex");
	if (ring && !bpf_map_lookup_elem(ring_map->fd, &qp->ring, &r)) {
		ring_count(&r, &c);
		out_object_begin("slots");
		out_uint("held", c.held);
		out_uint("backup", c.backup);
		out_uint("other", c.other);
		out_object_end();
	}
	if (qp->flags & LH_QPF_DEPOT) {
		out_object_begin("depot");
		out_uint("epsn", qp->d.deliv);
		out_uint("epsn_d", qp->d.high);
		out_uint("acked", qp->d.acked);
		/* PSNs received beyond ePSN: held, or missing */
		out_int("pending", psn_diff(qp->d.high, qp->d.deliv));
		out_uint("msn", qp->msn);
		if (qp->flags & LH_QPF_RELEASING)
			out_uint("release_after", qp->d.release_after);
		else
			out_null("release_after");
		if (qp->flags & LH_QPF_D_BACK_DUE)
			out_uint("back_due", qp->d.back_psn);
		print_age("last_progress_age_us", now, qp->last_progress_ns);
		print_age("last_nack_age_us", now, qp->d.last_nack_ns);
		out_object_end();
	}
	if (qp->flags & LH_QPF_SENTRY) {
		out_object_begin("sentry");
		out_uint("next", qp->s.next);
		out_uint("una", qp->s.una); /* the receiver's once "synced" is among the flags */
		if (qp->flags & LH_QPF_S_ACKED)
			out_uint("acked", qp->s.acked);
		else
			out_null("acked");
		out_bool("episode", qp->flags & LH_QPF_EPISODE);
		if (qp->flags & LH_QPF_EPISODE) {
			out_uint("replay", qp->s.replay);
			out_uint("end", qp->s.end);
		} else {
			out_null("replay");
			out_null("end");
		}
		out_uint("base", qp->s.base);
		out_uint("missing", popcount_missing(qp));
		out_object_end();
	}
	print_age("last_rx_age_us", now, qp->last_rx_ns);
	out_object_end();
}

int do_qps_show(struct lh_cli *cli)
{
	struct pinned_map qp_map, ring_map;
	struct qp_entry *e = NULL, one;
	bool have_ring;
	__u32 n = 0, i, shown = 0;
	__u64 now;
	int rc;

	if (cli->opt.key && key_parse(cli->opt.key, &one.key))
		return LH_EXIT_USAGE;
	rc = map_open(&cli->target, "lh_qp", &qp_map);
	if (rc)
		return rc;
	warn_if_stopped(&cli->target);
	/* the rings are optional here (slot counts); a wrong one is refused all the same */
	rc = map_get(&cli->target, "lh_ring", &ring_map);
	if (rc == LH_EXIT_INCOMPAT || rc == LH_EXIT_ERROR) {
		map_close(&qp_map);
		return map_open(&cli->target, "lh_ring", &ring_map);
	}
	have_ring = !rc;

	if (cli->opt.key) {
		rc = map_lookup(qp_map.fd, &one.key, &one.qp, BPF_F_LOCK);
		if (rc) {
			pr_err("no QP %s in lh_qp%s%s\n", cli->opt.key, rc == -ENOENT ? "" : ": ",
			       rc == -ENOENT ? "" : strerror(-rc));
			rc = LH_EXIT_ERROR;
			goto out;
		}
		e = malloc(sizeof(*e));
		if (!e) {
			rc = LH_EXIT_ERROR;
			goto out;
		}
		*e = one;
		n = 1;
	} else {
		rc = qps_read(&qp_map, &e, &n);
		if (rc) {
			pr_err("read lh_qp: %s\n", strerror(-rc));
			rc = LH_EXIT_ERROR;
			goto out;
		}
	}
	now = lh_now_ns();
	out_key_width(22);
	out_array_begin(NULL);
	for (i = 0; i < n; i++) {
		const struct lh_qp *qp = &e[i].qp;

		if ((cli->opt.given & CMD_OPT_QPN) && e[i].key.dqpn != cli->opt.qpn &&
		    !((qp->flags & LH_QPF_PAIRED) && qp->peer_qpn == cli->opt.qpn))
			continue;
		print_qp(&e[i], have_ring ? &ring_map : NULL, now);
		shown++;
	}
	out_array_end();
	if (!shown && !out_json())
		printf("no QPs\n");
	rc = 0;
out:
	free(e);
	if (have_ring)
		map_close(&ring_map);
	map_close(&qp_map);
	return rc;
}
