// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Loader lifecycle (libbpf-bootstrap / xdp-tools style): open every object
 * with the same pin directory so they share their LIBBPF_PIN_BY_NAME maps,
 * size the maps, load, fill the free lists and the config, attach with
 * bpf_link (XDP; tcx, or a clsact qdisc on kernels without tcx). Each error
 * names the step; the unwind runs in reverse order.
 */
#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <linux/if_link.h>
#include <linux/pkt_cls.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "datapath.h"
#include "datapath_int.h"
#include "lh_credit.h"
#include "lh_stats.h"
#include "lh_maps.h"
#include "lh_siphash.h"
#include "log.h"

const char *errstr(int err)
{
	static char buf[128];

	libbpf_strerror(err, buf, sizeof(buf));
	return buf;
}

/*
 * Which option sizes each map: max_entries = mul x the option, at least min;
 * every object gets the same, as they share pins. adopt: a kept map's size
 * goes back into the option (lhd_datapath_maps_fit), its companions follow.
 */
static const struct map_size {
	const char *map;
	size_t field; /* offsetof(struct lhd_config, ...), a uint32_t */
	const char *opt;
	uint32_t mul, min;
	bool adopt;
} map_sizes[] = {
	{ "lh_qp", offsetof(struct lhd_config, max_qps), "max-qps", 1, 0, true },
	{ "lh_ack", offsetof(struct lhd_config, max_qps), "max-qps", 1, 0, false },
	{ "lh_pair", offsetof(struct lhd_config, max_qps), "max-qps", 1, 0, false },
	{ "lh_qp_count", offsetof(struct lhd_config, max_qps), "max-qps", 2, 0, false },
	{ "lh_pair_psn", offsetof(struct lhd_config, max_qps), "max-qps", 16, 8192, false },
	{ "lh_cr_flow", offsetof(struct lhd_config, max_qps), "max-qps", 1, 0, true },
	{ "lh_cr_grant", offsetof(struct lhd_config, max_qps), "max-qps", 1, 0, false },
	{ "lh_hostpair", offsetof(struct lhd_config, max_hostpairs), "max-hostpairs", 1, 0, true },
	{ "lh_ring", offsetof(struct lhd_config, rings), "rings", 1, 0, true },
	{ "lh_ring_free", offsetof(struct lhd_config, rings), "rings", 1, 0, false },
	{ "lh_pool", offsetof(struct lhd_config, pool_slots), "pool-slots", 1, 0, true },
	{ "lh_pool_free", offsetof(struct lhd_config, pool_slots), "pool-slots", 1, 0, false },
};

static const struct map_size *map_size_of(const char *map)
{
	size_t i;

	for (i = 0; i < sizeof(map_sizes) / sizeof(map_sizes[0]); i++)
		if (!strcmp(map_sizes[i].map, map))
			return &map_sizes[i];
	return NULL;
}

uint32_t *sized_by(struct lhd_config *cfg, const char *map, const char **opt)
{
	const struct map_size *ms = map_size_of(map);

	if (!ms || !ms->adopt)
		return NULL;
	*opt = ms->opt;
	return (uint32_t *)((char *)cfg + ms->field);
}

static int size_maps(struct bpf_object *obj, const struct lhd_config *cfg)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		const struct map_size *ms = map_size_of(bpf_map__name(m));
		uint32_t size;

		if (!ms)
			continue;
		size = ms->mul * *(const uint32_t *)((const char *)cfg + ms->field);
		if (size < ms->min)
			size = ms->min;
		if (bpf_map__set_max_entries(m, size))
			return -EINVAL;
	}
	return 0;
}

/* Pins a crashed agent left behind: the caller holds the instance lock */
static void remove_stale_pins(struct bpf_object *obj, const char *pin_dir)
{
	struct bpf_map *m;
	char path[PIN_DIR_MAX + 32];

	bpf_object__for_each_map(m, obj) {
		if (!bpf_map__pin_path(m))
			continue;
		snprintf(path, sizeof(path), "%s/%s", pin_dir, bpf_map__name(m));
		if (!unlink(path))
			pr_info("removed stale pin %s\n", path);
	}
}

/*
 * Open one of the objects compiled into longhauld as its typed skeleton, with
 * the shared pin directory, and load it (or reuse a kept build's programs).
 * setup runs between open and load.
 */
int load_obj(struct lhd_datapath *dp, enum lhd_obj id, const struct lhd_config *cfg,
	     int (*setup)(struct lhd_datapath *, const struct lhd_config *))
{
	struct bpf_object *obj = open_skel(&dp->sk, id, cfg->pin_dir);
	const char *what = obj_name(id);
	int err;

	if (!obj) {
		err = -errno;
		pr_warn("open %s: %s\n", what, errstr(err));
		return EXIT_KERNEL;
	}
	dp->objs[dp->nr_objs++] = obj;
	if (dp->nr_objs == 1 && !dp->adopted)
		remove_stale_pins(obj, cfg->pin_dir);
	if (size_maps(obj, cfg)) {
		pr_warn("size maps of %s\n", what);
		return EXIT_USAGE;
	}
	if (setup && setup(dp, cfg)) {
		pr_warn("set up %s before load\n", what);
		return EXIT_KERNEL;
	}
	if (dp->reused)
		return reuse_progs(dp, obj, cfg->pin_dir) || reuse_maps(obj) ? EXIT_KERNEL : 0;
	err = load_skel(&dp->sk, id);
	if (err) {
		pr_warn("load %s: %s (kernel too old or the verifier refused it; -v shows why)\n",
			what, errstr(err));
		return EXIT_KERNEL;
	}
	return 0;
}

int attach_xdp(struct lhd_datapath *dp, int prog_fd, const struct lh_iface *ifc,
		      const char *role, const char *prog, const struct lhd_config *cfg)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts);
	enum lh_xdp_mode mode = cfg->xdp_mode;
	int fd, err;

	if (prog_fd < 0)
		return -EINVAL; /* said by lhd_prog_fd() */
	if (dp->adopted) {
		fd = adopt_xdp(prog_fd, ifc, prog, cfg->pin_dir);
		if (fd >= 0)
			return fd;
	}

	if (mode == XDPM_NATIVE)
		opts.flags = XDP_FLAGS_DRV_MODE;
	else if (mode == XDPM_GENERIC)
		opts.flags = XDP_FLAGS_SKB_MODE;
	fd = bpf_link_create(prog_fd, ifc->ifindex, BPF_XDP, &opts);
	if (fd < 0) {
		err = -errno;
		if (err == -EBUSY || err == -EEXIST) {
			pr_warn("attach XDP to %s (%s): an XDP program is already attached there "
				"(another longhauld or tool): %s\n", ifc->name, role, errstr(err));
			return -EBUSY;
		}
		pr_warn("attach XDP to %s (%s): %s\n", ifc->name, role, errstr(err));
		return err;
	}
	pr_info("attached XDP to %s (%s side)\n", ifc->name, role);
	return fd;
}

/*
 * tcx where the kernel has it (6.6+), else a clsact qdisc and cls_bpf. first:
 * at the head of the hook's chain (LR2's programs), else at its end (the
 * credit program); with clsact the agent's priority (dp->tc_prio) orders the
 * filters of two agents on one hook the same way (datapath.h).
 */
int attach_tc(struct lhd_datapath *dp, int prog_fd, const char *prog, int ifindex,
		     const char *ifname, bool ingress, bool first, const char *pin_dir)
{
	enum bpf_tc_attach_point pt = ingress ? BPF_TC_INGRESS : BPF_TC_EGRESS;
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = pt);
	LIBBPF_OPTS(bpf_tc_opts, tco, .handle = 1, .priority = dp->tc_prio, .prog_fd = prog_fd);
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = first ? BPF_F_BEFORE : BPF_F_AFTER);
	const char *dir = ingress ? "ingress" : "egress";
	struct lhd_tc *t;
	int err, fd;

	if (prog_fd < 0)
		return -EINVAL; /* said by lhd_prog_fd() */
	if (dp->nr_tc >= LHD_MAX_TC)
		return -E2BIG;
	t = &dp->tc[dp->nr_tc];
	*t = (struct lhd_tc){ .link_fd = -1, .ifindex = ifindex, .ingress = ingress };
	link_pin_path(t->pin, sizeof(t->pin), pin_dir, prog, ifname);
	if (dp->adopted && !dp->tc_legacy) {
		fd = bpf_obj_get(t->pin);
		if (fd >= 0) {
			unlink(t->pin); /* this agent holds it now */
			/* the same program (a reused data path): the kernel keeps it as it is */
			if (!bpf_link_update(fd, prog_fd, NULL)) {
				t->link_fd = fd;
				dp->nr_tc++;
				pr_info("adopted the tcx %s link on %s (%s), now running this "
					"build's program\n", dir, ifname, prog);
				return 0;
			}
			pr_warn("adopt the tcx %s link on %s: %s; attaching anew\n", dir, ifname,
				errstr(-errno));
			close(fd);
		}
	}
	if (!dp->tc_legacy) {
		fd = bpf_link_create(prog_fd, ifindex, ingress ? BPF_TCX_INGRESS : BPF_TCX_EGRESS,
				     &lo);
		if (fd >= 0) {
			t->link_fd = fd;
			dp->nr_tc++;
			pr_info("attached tcx %s to %s (%s of its chain)\n", dir, ifname,
				first ? "head" : "end");
			return 0;
		}
		err = -errno;
		if (err != -EINVAL && err != -EOPNOTSUPP && err != -ENOTSUP) {
			pr_warn("attach tcx %s to %s: %s\n", dir, ifname, errstr(err));
			return err;
		}
		pr_info("no tcx in this kernel: using a clsact qdisc on %s\n", ifname);
		dp->tc_legacy = true;
	}
	hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
	err = bpf_tc_hook_create(&hook);
	if (!err)
		t->clsact_created = true;
	else if (err != -EEXIST) {
		pr_warn("create clsact on %s: %s\n", ifname, errstr(err));
		return err;
	}
	hook.attach_point = pt;
	if (dp->adopted) {
		/* the kept agent's filter (clsact has no links): this build's program in its place */
		tco.flags = BPF_TC_F_REPLACE;
		t->clsact_created = true;
	}
	err = bpf_tc_attach(&hook, &tco);
	if (err) {
		if (err == -EEXIST)
			pr_warn("attach tc %s to %s: a filter of priority %u is there already "
				"(another longhauld of the same mode?)\n", dir, ifname, dp->tc_prio);
		else
			pr_warn("attach tc %s to %s: %s\n", dir, ifname, errstr(err));
		if (t->clsact_created) {
			hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
			bpf_tc_hook_destroy(&hook);
		}
		return err;
	}
	dp->nr_tc++;
	if (dp->adopted) {
		pr_info("adopted tc (clsact, priority %u) %s on %s: its filter now runs this "
			"build's program\n", dp->tc_prio, dir, ifname);
	} else
		pr_info("attached tc (clsact, priority %u) %s to %s\n", dp->tc_prio, dir, ifname);
	return 0;
}

/*
 * Whether ifindex has a filter of the other mode's agent on either hook (ours
 * are gone by now). libbpf prints the kernel's "Cannot find specified filter
 * chain" for each query that finds nothing: the expected answer, kept quiet.
 */
static bool clsact_has_other_filter(int ifindex, uint32_t own_prio)
{
	uint32_t prio = own_prio == LHD_TC_PRIO_LR2 ? LHD_TC_PRIO_CREDIT : LHD_TC_PRIO_LR2;
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex);
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = 1, .priority = prio);
	libbpf_print_fn_t print = libbpf_set_print(NULL);
	bool found = false;
	int i;

	for (i = 0; i < 2 && !found; i++) {
		hook.attach_point = i ? BPF_TC_EGRESS : BPF_TC_INGRESS;
		q.prog_id = 0;
		found = !bpf_tc_query(&hook, &q);
	}
	libbpf_set_print(print);
	return found;
}

/*
 * Detach what this agent attached, and only that: its tcx links, or its own
 * cls_bpf filters (its priority). A clsact qdisc it created goes too, unless
 * another agent's filter sits on it now (removing the qdisc would remove
 * that one): then it stays, also after the other agent stops (which did not
 * create it and so never removes it), empty and harmless.
 */
static void detach_tc(struct lhd_datapath *dp)
{
	int i, j;

	for (i = dp->nr_tc - 1; i >= 0; i--) {
		struct lhd_tc *t = &dp->tc[i];
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = t->ifindex,
			    .attach_point = t->ingress ? BPF_TC_INGRESS : BPF_TC_EGRESS);
		LIBBPF_OPTS(bpf_tc_opts, tco, .handle = 1, .priority = dp->tc_prio);

		if (t->link_fd >= 0) {
			close(t->link_fd); /* the last reference to a tcx link detaches it */
			t->link_fd = -1;
			continue;
		}
		bpf_tc_detach(&hook, &tco);
	}
	for (i = 0; i < dp->nr_tc; i++) {
		struct lhd_tc *t = &dp->tc[i];
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = t->ifindex,
			    .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);

		if (!t->clsact_created)
			continue;
		/* all our filters on this interface are gone by now: what is left is another's */
		for (j = i + 1; j < dp->nr_tc; j++)
			if (dp->tc[j].ifindex == t->ifindex)
				dp->tc[j].clsact_created = false;
		if (clsact_has_other_filter(t->ifindex, dp->tc_prio))
			pr_info("clsact on ifindex %d left in place: another longhauld's filter "
				"is on it\n", t->ifindex);
		else
			bpf_tc_hook_destroy(&hook);
	}
	dp->nr_tc = 0;
}

static int load_mode_here(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	if (cfg->mode == MODE_OBSERVE)
		return load_observe(dp, cfg);
	if (cfg->mode == MODE_CREDIT)
		return load_credit(dp, cfg);
	return load_lr2(dp, cfg);
}

struct load_job {
	struct lhd_datapath *dp;
	const struct lhd_config *cfg;
	int rc;
};

static void *load_thread(void *arg)
{
	struct load_job *j = arg;

	/* this thread only (a TID names one thread); raising nice needs no privilege */
	id_t tid = (id_t)syscall(SYS_gettid);

	if (setpriority(PRIO_PROCESS, tid, (int)j->cfg->load_nice))
		pr_warn("--load-nice %u: %s (loading at the agent's priority)\n", j->cfg->load_nice,
			strerror(errno));
	pr_debug("loading the programs in thread %d at nice %d\n", (int)tid,
		 getpriority(PRIO_PROCESS, tid));
	j->rc = load_mode_here(j->dp, j->cfg);
	return NULL;
}

/*
 * Load in a thread of its own at nice --load-nice: the verifier runs in the
 * loading thread's system call, about a second of a core for the LR2 objects,
 * and must not take it from a running data path (ksoftirqd), the running agent
 * a takeover loads beside, or the gateway's other work. The agent's own
 * threads keep their priority.
 */
static int load_mode(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	struct load_job j = { .dp = dp, .cfg = cfg };
	pthread_t t;

	if (!cfg->load_nice || dp->reused || pthread_create(&t, NULL, load_thread, &j))
		return load_mode_here(dp, cfg);
	pthread_join(t, NULL);
	return j.rc;
}

/* dp as no load has touched it yet: nothing attached, no fd */
static void dp_init(struct lhd_datapath *dp, bool adopt, uint64_t build)
{
	int i;

	memset(dp, 0, sizeof(*dp));
	for (i = 0; i < 1 + LHD_MAX_WAN; i++)
		dp->xdp_links[i] = -1;
	dp->kick_fd = -1;
	dp->cmd_fd = -1;
	dp->adopted = adopt;
	dp->owner = !adopt;
	dp->build = build;
}

int lhd_datapath_load(struct lhd_datapath *dp, const struct lhd_config *cfg, bool adopt)
{
	uint64_t build = build_id(cfg);
	int rc;

	dp_init(dp, adopt, build);
	/* a kept data path of this very build: its programs as they are, no verifier */
	dp->reused = adopt && !cfg->reload && same_build(cfg, build);
	rc = load_mode(dp, cfg);
	if (rc && dp->reused) {
		pr_warn("the kept programs of this build cannot be reused (above): loading them "
			"anew\n");
		lhd_datapath_down(dp, cfg, false);
		dp_init(dp, adopt, build);
		rc = load_mode(dp, cfg);
	}
	close_opened(); /* what lhd_datapath_maps_fit() opened and this mode did not use */
	if (rc)
		lhd_datapath_down(dp, cfg, false);
	else if (dp->reused)
		pr_info("reusing the kept programs of this build (%016llx): no load\n",
			(unsigned long long)dp->build);
	return rc;
}

int lhd_datapath_attach(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	int rc;

	if (cfg->mode == MODE_OBSERVE)
		rc = attach_observe(dp, cfg);
	else if (cfg->mode == MODE_CREDIT)
		rc = attach_credit(dp, cfg);
	else
		rc = attach_lr2(dp, cfg);
	if (rc) {
		lhd_datapath_down(dp, cfg, false);
		return rc;
	}
	/* kept links of interfaces this agent was not given: they detach */
	if (dp->adopted)
		kept_links(cfg->pin_dir, true);
	dp->owner = true;
	pin_progs(dp, cfg);
	close_opened(); /* a takeover's look after the old agent stopped */
	return 0;
}

int lhd_datapath_up(struct lhd_datapath *dp, const struct lhd_config *cfg, bool adopt)
{
	int rc = lhd_datapath_load(dp, cfg, adopt);

	return rc ? rc : lhd_datapath_attach(dp, cfg);
}

static void close_progs(struct lhd_datapath *dp)
{
	int i;

	for (i = 0; i < dp->nr_progs; i++)
		close(dp->progs[i].fd);
	dp->nr_progs = 0;
}

void lhd_datapath_down(struct lhd_datapath *dp, const struct lhd_config *cfg, bool keep)
{
	int i;

	if (keep) {
		mark_agentless(dp);
		keep_links(dp, cfg);
		close_progs(dp);
		destroy_skels(&dp->sk);
		dp->nr_objs = 0;
		pr_info("data path left running under %s for the next longhauld\n", cfg->pin_dir);
		return;
	}
	for (i = 0; i < 1 + LHD_MAX_WAN; i++) {
		if (dp->xdp_links[i] >= 0)
			close(dp->xdp_links[i]); /* the last reference to an XDP link detaches it */
		dp->xdp_links[i] = -1;
	}
	detach_tc(dp);
	close_progs(dp);
	/* the program pins go with the data path (they would keep the programs loaded) */
	if (dp->owner && !cfg->keep_pins)
		unpin_progs(cfg->pin_dir, dp->build, true);
	/* a takeover that failed before attaching leaves the running agent's maps alone */
	for (i = dp->nr_objs - 1; i >= 0; i--)
		if (!cfg->keep_pins && dp->owner)
			bpf_object__unpin_maps(dp->objs[i], NULL);
	destroy_skels(&dp->sk);
	dp->nr_objs = 0;
}
