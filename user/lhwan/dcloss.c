// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhwan dcloss: loss on a host's link inside a data center (src <-> gwa,
 * dst <-> gwb), done in the HOST's namespace so the gateways stay untouched.
 *
 *   ingress (frames the host receives): an XDP program. XDP runs before
 *     AF_PACKET taps, so a raw-socket endpoint (lhperf) really misses the
 *     frame; nftables' netdev ingress hook runs after the taps and would not
 *     hide it from such a receiver.
 *   egress (frames the host sends): a tcx egress program. It sees what the IP
 *     stack and AF_PACKET sockets send, except frames sent with
 *     PACKET_QDISC_BYPASS, which skip every egress hook of the kernel. A lost
 *     frame is redirected into a black hole (--blackhole: an interface that
 *     is down) rather than dropped: TC_ACT_SHOT would make an AF_PACKET
 *     sender's sendmsg() fail with ENOBUFS (it would just send again), and
 *     tcx has no TC_ACT_STOLEN. A real link loses frames silently.
 *
 * The program is a few dozen instructions assembled at run time
 * (dcloss_prog.c). Its one-entry array map holds the model (random, gemodel
 * or every N, with netem's semantics) and the counters. Attached without a
 * bpf_link, it stays after this command exits and goes with the namespace;
 * `attach` again only rewrites the map, `stats` reads it.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dcloss_int.h"
#include "json.h"
#include "lhwan.h"
#include "log.h"
#include "opts.h"

/* fd of the program attached at ingress (XDP) or egress (tcx), 0 if none of ours, or -errno */
static int find_prog(int ifindex, bool ingress)
{
	struct bpf_prog_info info = {0};
	uint32_t len = sizeof(info), id = 0, ids[16], cnt = 16, i;
	int fd;

	if (ingress) {
		if (bpf_xdp_query_id(ifindex, 0, &id) || !id)
			return 0;
		ids[0] = id;
		cnt = 1;
	} else {
		LIBBPF_OPTS(bpf_prog_query_opts, q, .prog_ids = ids, .count = cnt);

		if (bpf_prog_query_opts(ifindex, BPF_TCX_EGRESS, &q))
			return 0;
		cnt = q.count;
	}
	for (i = 0; i < cnt; i++) {
		fd = bpf_prog_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_prog_get_info_by_fd(fd, &info, &len) &&
		    !strcmp(info.name, ingress ? DCLOSS_NAME_IN : DCLOSS_NAME_OUT))
			return fd;
		close(fd);
	}
	return 0;
}

/* The fd of the map a program of ours reads its model from, or -errno */
static int prog_map_fd(int prog_fd)
{
	struct bpf_prog_info info = {0};
	uint32_t len = sizeof(info), map_id = 0;

	info.nr_map_ids = 1;
	info.map_ids = (uint64_t)(unsigned long)&map_id;
	if (bpf_prog_get_info_by_fd(prog_fd, &info, &len) || !info.nr_map_ids)
		return -ENOENT;
	return bpf_map_get_fd_by_id(map_id);
}

/* One direction's model in place: the map rewritten if our program is there, else both created */
static int attach_one(int ifindex, const char *ifname, bool ingress, const char *text,
		      int blackhole)
{
	struct dcloss_val v;
	uint32_t key = 0;
	int prog_fd, map_fd, err;

	if (spec_to_val(text, &v))
		return -EINVAL;
	v.blackhole = ingress ? 0 : (uint32_t)blackhole;
	prog_fd = find_prog(ifindex, ingress);
	if (prog_fd > 0) {
		/* already there: a new model is a map update */
		map_fd = prog_map_fd(prog_fd);
		close(prog_fd);
		if (map_fd < 0)
			return map_fd;
		err = bpf_map_update_elem(map_fd, &key, &v, BPF_ANY);
		close(map_fd);
		return err;
	}
	map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "lh_dcloss", 4, sizeof(v), 1, NULL);
	if (map_fd < 0) {
		pr_warn("map: %s\n", strerror(errno));
		return -errno;
	}
	err = bpf_map_update_elem(map_fd, &key, &v, BPF_ANY);
	if (err)
		goto out;
	prog_fd = dcloss_prog_load(map_fd, ingress);
	if (prog_fd < 0) {
		err = prog_fd;
		goto out;
	}
	if (ingress) {
		err = bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
		if (err)
			pr_warn("XDP attach on %s: %s (another XDP program there?)\n", ifname,
				strerror(-err));
	} else {
		LIBBPF_OPTS(bpf_prog_attach_opts, ao);

		err = bpf_prog_attach_opts(prog_fd, ifindex, BPF_TCX_EGRESS, &ao);
		if (err)
			pr_warn("tcx egress attach on %s: %s\n", ifname, strerror(-err));
	}
	close(prog_fd);
out:
	close(map_fd);
	return err;
}

/* Our program off one direction, if there */
static int detach_one(int ifindex, bool ingress)
{
	int fd = find_prog(ifindex, ingress), err;

	if (fd <= 0)
		return 0;
	if (ingress) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, xo, .old_prog_fd = fd);

		err = bpf_xdp_detach(ifindex, XDP_FLAGS_REPLACE, &xo);
	} else {
		LIBBPF_OPTS(bpf_prog_detach_opts, dopts);

		err = bpf_prog_detach_opts(fd, ifindex, BPF_TCX_EGRESS, &dopts);
	}
	close(fd);
	return err;
}

/* One direction's model and counters as a JSON field (null: none of ours) */
static void stats_one(struct lh_json *j, int ifindex, bool ingress)
{
	struct dcloss_val v;
	uint32_t key = 0;
	int fd = find_prog(ifindex, ingress), map_fd;

	lh_json_name(j, ingress ? "ingress" : "egress");
	if (fd <= 0) {
		lh_json_null(j);
		return;
	}
	map_fd = prog_map_fd(fd);
	close(fd);
	if (map_fd < 0 || bpf_map_lookup_elem(map_fd, &key, &v)) {
		lh_json_null(j);
		if (map_fd >= 0)
			close(map_fd);
		return;
	}
	close(map_fd);
	lh_json_start_object(j);
	lh_json_string_field(j, "mechanism", ingress ? "xdp" : "tcx-egress");
	lh_json_string_field(j, "spec", v.spec[0] ? v.spec : "none");
	lh_json_uint_field(j, "seen", v.seen);
	lh_json_uint_field(j, "dropped", v.dropped);
	lh_json_end_object(j);
}

/* What the command line gives */
struct dcloss_opts {
	const char *dev;
	const char *in, *out; /* the ingress and egress SPECs */
	const char *blackhole;
	bool pretty;
};

#define DF(field) LH_FIELD(struct dcloss_opts, field)

static const struct lh_opt dcloss_table[] = {
	{ .type = LH_OPT_STR, .name = "dev", .short_opt = 'd', DF(dev), .metavar = "IF",
	  .help = "the host's interface" },
	{ .type = LH_OPT_STR, .name = "ingress", .short_opt = 'i', DF(in), .metavar = "SPEC",
	  .help = "loss of the frames IF receives (XDP)" },
	{ .type = LH_OPT_STR, .name = "egress", .short_opt = 'e', DF(out), .metavar = "SPEC",
	  .help = "loss of the frames IF sends (tcx)" },
	{ .type = LH_OPT_STR, .name = "blackhole", .short_opt = 'b', DF(blackhole), .metavar = "IF",
	  .help = "an interface that is down, where lost frames go" },
	{ .type = LH_OPT_FLAG, .name = "pretty", .short_opt = 'p', DF(pretty),
	  .help = "pretty JSON" },
	{ .type = LH_OPT_HELP, .name = "help", .short_opt = 'h', .help = "this text" },
	{ .type = LH_OPT_END },
};

/* To stderr, --help's too: stdout carries the stats' JSON only */
static void dcloss_usage(FILE *f)
{
	(void)f;
	fprintf(stderr,
		"usage: lhwan dcloss attach --dev IF [--ingress SPEC] [--egress SPEC]\n"
		"                           [--blackhole IF]\n"
		"       lhwan dcloss stats --dev IF [-p]\n"
		"       lhwan dcloss detach --dev IF\n"
		"       lhwan dcloss check [--ingress SPEC] [--egress SPEC]\n");
	lh_opts_print(stderr, dcloss_table);
	fprintf(stderr, "SPEC: none | random P%% | gemodel P%% [R%% [1-H%% [1-K%%]]] | every N [K]\n"
			"ingress = frames IF receives (XDP), egress = frames IF sends (tcx).\n");
}

static const struct lh_opts dcloss_parser = { .opts = dcloss_table, .usage = dcloss_usage };

/* attach: both models checked, then the ingress and egress programs (or their maps) */
static int cmd_attach(const struct dcloss_opts *o, int ifindex)
{
	struct dcloss_val v;
	int bh_index = 0, err;

	/* both specs must be good before anything is attached */
	if (spec_to_val(o->in, &v) || spec_to_val(o->out, &v))
		return 2;
	if (o->blackhole) {
		bh_index = (int)if_nametoindex(o->blackhole);
		if (!bh_index) {
			pr_warn("no black-hole interface %s\n", o->blackhole);
			return 1;
		}
	}
	err = attach_one(ifindex, o->dev, true, o->in, 0);
	if (!err)
		err = attach_one(ifindex, o->dev, false, o->out, bh_index);
	return err ? 1 : 0;
}

/* stats: each direction's model and counters as JSON */
static int cmd_stats(const struct dcloss_opts *o, int ifindex)
{
	struct lh_json *j = lh_json_new(stdout, o->pretty);

	lh_json_start_object(j);
	lh_json_string_field(j, "dev", o->dev);
	stats_one(j, ifindex, true);
	stats_one(j, ifindex, false);
	lh_json_end_object(j);
	lh_json_free(j);
	return 0;
}

int dcloss_main(int argc, char **argv)
{
	struct dcloss_opts o = { .in = "none", .out = "none" };
	struct dcloss_val v;
	const char *cmd;
	int ifindex, err;

	if (argc < 2) {
		dcloss_usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (lh_opts_parse(&dcloss_parser, argc - 1, argv + 1, &o) < 0)
		return 2;
	if (!strcmp(cmd, "check"))
		return spec_to_val(o.in, &v) || spec_to_val(o.out, &v) ? 2 : 0;
	if (!o.dev) {
		dcloss_usage(stderr);
		return 2;
	}
	ifindex = (int)if_nametoindex(o.dev);
	if (!ifindex) {
		pr_warn("no interface %s\n", o.dev);
		return 1;
	}
	if (!strcmp(cmd, "attach"))
		return cmd_attach(&o, ifindex);
	if (!strcmp(cmd, "detach")) {
		err = detach_one(ifindex, true);
		err = detach_one(ifindex, false) ?: err;
		return err ? 1 : 0;
	}
	if (!strcmp(cmd, "stats"))
		return cmd_stats(&o, ifindex);
	dcloss_usage(stderr);
	return 2;
}
