// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A data path kept running by a stopped agent (--keep, SIGUSR2): the pins of
 * its programs and links, the build id that says whether they are this
 * build's, whether its maps fit this agent, whether it let packets pass
 * while alone, and adopting it.
 */
#include <dirent.h>
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
#include "dc_tc.skel.h"
#include "lh_credit.h"
#include "lh_stats.h"
#include "lh_maps.h"
#include "lh_siphash.h"
#include "log.h"

/*
 * Where a data path's program is pinned while it runs and when it is kept:
 * PIN_DIR/prog_BUILD_NAME. The build id in the name tells an agent whether
 * the kept programs are its own, to be reused without a load.
 */
#define PROG_PIN_PREFIX "prog_"
static void prog_pin_path(char *buf, size_t size, const char *pin_dir, uint64_t build,
			  const char *prog)
{
	snprintf(buf, size, "%s/" PROG_PIN_PREFIX "%016llx_%s", pin_dir, (unsigned long long)build,
		 prog);
}

/* A reused data path: obj's programs are the pinned ones of this build */
int reuse_progs(struct lhd_datapath *dp, struct bpf_object *obj, const char *pin_dir)
{
	char path[PIN_DIR_MAX + 96];
	struct bpf_program *p;
	int fd;

	bpf_object__for_each_program(p, obj) {
		prog_pin_path(path, sizeof(path), pin_dir, dp->build, bpf_program__name(p));
		fd = bpf_obj_get(path);
		if (fd < 0 || dp->nr_progs >= LHD_MAX_PROGS) {
			pr_warn("reuse the kept program %s: %s\n", bpf_program__name(p),
				fd < 0 ? errstr(-errno) : "too many programs");
			if (fd >= 0)
				close(fd);
			return -1;
		}
		snprintf(dp->progs[dp->nr_progs].name, sizeof(dp->progs[0].name), "%s",
			 bpf_program__name(p));
		dp->progs[dp->nr_progs++].fd = fd;
	}
	return 0;
}

/*
 * A reused data path's objects are not loaded at all (a load parses the
 * kernel's BTF for each object: 60-110 ms apiece here, 0.3 s for LR2's four):
 * their pinned maps are taken by fd, which is all the agent reads and writes
 */
int reuse_maps(struct bpf_object *obj)
{
	struct bpf_map *m;
	int fd, err;

	bpf_object__for_each_map(m, obj) {
		if (!bpf_map__pin_path(m))
			continue;
		fd = bpf_obj_get(bpf_map__pin_path(m));
		if (fd < 0) {
			pr_warn("reuse the kept map %s: %s\n", bpf_map__name(m), errstr(-errno));
			return -1;
		}
		err = bpf_map__reuse_fd(m, fd);
		close(fd);
		if (err) {
			pr_warn("reuse the kept map %s: %s\n", bpf_map__name(m), errstr(err));
			return -1;
		}
	}
	return 0;
}

/*
 * Where a kept data path's link of program prog on interface ifname is
 * pinned: PIN_DIR/link_PROG_IFNAME (beside the maps)
 */
#define LINK_PIN_PREFIX "link_"
void link_pin_path(char *buf, size_t size, const char *pin_dir, const char *prog,
			  const char *ifname)
{
	snprintf(buf, size, "%s/" LINK_PIN_PREFIX "%s_%s", pin_dir, prog, ifname);
}

/*
 * The kept XDP link of prog on ifc, given the program prog_fd: its fd, or -1
 * when there is none or it cannot be moved (then it is unpinned: gone)
 */
int adopt_xdp(int prog_fd, const struct lh_iface *ifc, const char *prog,
		     const char *pin_dir)
{
	char path[PIN_DIR_MAX + 64];
	int fd;

	link_pin_path(path, sizeof(path), pin_dir, prog, ifc->name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	unlink(path); /* this fd holds it now */
	if (bpf_link_update(fd, prog_fd, NULL)) {
		pr_warn("adopt the XDP link on %s: %s; attaching anew\n", ifc->name,
			errstr(-errno));
		close(fd);
		return -1;
	}
	pr_info("adopted the XDP link on %s (%s), now running this build's program\n",
		ifc->name, prog);
	return fd;
}

/*
 * A data path not adopted starts with no QP while transfers may be mid-flight:
 * QPs learned from now on for 4 round trips and 100 ms are LH_QPF_WIDE (and a
 * Depot's LH_QPF_D_UNSURE). Such a QP sends again within a retransmit timeout
 * (67 ms by default on rxe and perftest) or at once. Written before the
 * programs attach, and again as the agent starts (the later end holds): a QP
 * learned in between, on the first packets, would be taken for new (a Depot
 * restarted mid-transfer would NACK a gap from the first PSN it saw, ahead of
 * the receiving NIC: a QP error).
 */
int lhd_datapath_relearn(const struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	struct lh_pair_guard g = { 0 };
	uint32_t zero = 0;
	uint64_t until = lh_now_ns() + 4000ull * cfg->wan_rtt_us + 100000000ull;
	int fd = dp->sk.dc_tc ? lhd_map_fd(dp->sk.dc_tc->maps.lh_pair_guard) : -1;

	if (fd < 0 || (dp->adopted && !dp->stale))
		return 0; /* LR2's only */
	/* what the programs wrote meanwhile stays */
	if (bpf_map_lookup_elem(fd, &zero, &g))
		memset(&g, 0, sizeof(g));
	if (g.wide_until_ns < until)
		g.wide_until_ns = until;
	if (bpf_map_update_elem(fd, &zero, &g, BPF_ANY)) {
		pr_warn("write lh_pair_guard: %s\n", strerror(errno));
		return EXIT_KERNEL;
	}
	return 0;
}

/* agentless_pass of a data path, summed over the CPUs (UINT64_MAX: unreadable) */
static uint64_t agentless_passed(struct lhd_datapath *dp)
{
	int fd = fd_if_any(lhd_stats_map(dp)), n = libbpf_num_possible_cpus(), i;
	struct lh_stats *per;
	uint64_t sum = 0;
	uint32_t zero = 0;

	if (fd < 0 || n <= 0 || !(per = calloc((size_t)n, sizeof(*per))))
		return UINT64_MAX;
	if (bpf_map_lookup_elem(fd, &zero, per))
		sum = UINT64_MAX;
	for (i = 0; i < n && sum != UINT64_MAX; i++)
		sum += per[i].agentless_pass;
	free(per);
	return sum;
}

/*
 * Whether a kept data path, about to be adopted, has let packets pass for
 * want of an agent: its agent stopped long ago, or a start on a busy host
 * (110-170 ms here under a transfer) outlasted the 100 ms a kept data path
 * works alone. Before the config that
 * ends its time alone is written: alone for its agentless_ms less 10 ms
 * or more (it may have begun to pass). Then *before holds agentless_pass,
 * and after the write a count that moved says it passed in between (a start
 * preempted between the two system calls).
 */
bool kept_passed(struct lhd_datapath *dp, uint64_t *before)
{
	int fd = fd_if_any(lhd_config_map(dp));
	struct lh_config c;
	uint32_t zero = 0;
	int64_t alone_ns;

	*before = agentless_passed(dp);
	if (fd < 0 || bpf_map_lookup_elem(fd, &zero, &c) || !(c.flags & LH_CFG_AGENTLESS))
		return false;
	alone_ns = (int64_t)(lh_now_ns() - c.agentless_since_ns);
	dp->alone_ms = alone_ns < 0 ? 0 :
		       alone_ns / 1000000 > UINT32_MAX ? UINT32_MAX : (uint32_t)(alone_ns / 1000000);
	if (alone_ns + 10000000ll <= (int64_t)c.agentless_ms * 1000000)
		return false;
	pr_warn("the kept data path has been without an agent for %lld ms (it works alone for %u "
		"ms, then lets every packet pass): its QPs are forgotten and learned anew\n",
		(long long)(alone_ns / 1000000), c.agentless_ms);
	return true;
}

bool kept_passed_since(struct lhd_datapath *dp, uint64_t before)
{
	uint64_t now;

	usleep(1000); /* a program that read the old config counts meanwhile */
	now = agentless_passed(dp);
	if (now == before)
		return false;
	pr_warn("the kept data path let %llu packets pass while this agent took it over: its QPs "
		"are forgotten and learned anew\n",
		now == UINT64_MAX || before == UINT64_MAX ? 0ull :
							   (unsigned long long)(now - before));
	return true;
}

/* The names of the pins of links a stopped agent kept under pin_dir; returns how many */
int kept_links(const char *pin_dir, bool unpin)
{
	char path[PIN_DIR_MAX + 300];
	struct dirent *de;
	DIR *d = opendir(pin_dir);
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, LINK_PIN_PREFIX, strlen(LINK_PIN_PREFIX)) != 0)
			continue;
		n++;
		if (!unpin)
			continue;
		/* the last reference of a link that no agent holds: it detaches */
		snprintf(path, sizeof(path), "%s/%s", pin_dir, de->d_name);
		if (!unlink(path))
			pr_info("detached the kept link %s\n", de->d_name);
	}
	closedir(d);
	return n;
}

/*
 * This build's id for cfg's mode: FNV-1a over the ELF bytes of its objects,
 * eight at a time (a byte at a time it took 8 ms of an adopting start here),
 * and what is set in them before the load (observe mode's ICRC check)
 */
uint64_t build_id(const struct lhd_config *cfg)
{
	enum lhd_obj ids[LHD_MAX_OBJS];
	int i, n = mode_objects(cfg->mode, ids);
	uint64_t h = 0xcbf29ce484222325ull, w;
	size_t sz, j;

	for (i = 0; i < n; i++) {
		const uint8_t *b = obj_elf(ids[i], &sz);

		for (j = 0; j < sz; j += sizeof(w)) {
			w = 0;
			memcpy(&w, b + j, sz - j < sizeof(w) ? sz - j : sizeof(w));
			h ^= w;
			h *= 0x100000001b3ull;
			h ^= h >> 29;
		}
		h ^= sz;
		h *= 0x100000001b3ull;
	}
	h ^= (uint64_t)cfg->mode << 8 | (cfg->mode == MODE_OBSERVE && cfg->verify_icrc);
	h *= 0x100000001b3ull;
	return h;
}

/* Whether every program of cfg's mode has a pin of build under cfg->pin_dir */
bool same_build(const struct lhd_config *cfg, uint64_t build)
{
	enum lhd_obj ids[LHD_MAX_OBJS];
	char path[PIN_DIR_MAX + 96];
	int i, n = mode_objects(cfg->mode, ids);
	bool all = n > 0;

	for (i = 0; i < n && all; i++) {
		struct bpf_object *obj = open_for_look(ids[i], cfg->pin_dir);
		struct bpf_program *p;

		if (!obj)
			return false;
		bpf_object__for_each_program(p, obj) {
			prog_pin_path(path, sizeof(path), cfg->pin_dir, build, bpf_program__name(p));
			if (access(path, F_OK)) {
				all = false;
				break;
			}
		}
	}
	return all;
}

bool lhd_datapath_same_build(const struct lhd_config *cfg)
{
	return same_build(cfg, build_id(cfg));
}

/* Remove the program pins under pin_dir: all, or all but build's (other builds' or a crash's) */
void unpin_progs(const char *pin_dir, uint64_t build, bool all)
{
	char path[PIN_DIR_MAX + 300], own[40];
	struct dirent *de;
	DIR *d = opendir(pin_dir);

	if (!d)
		return;
	snprintf(own, sizeof(own), PROG_PIN_PREFIX "%016llx_", (unsigned long long)build);
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, PROG_PIN_PREFIX, strlen(PROG_PIN_PREFIX)) != 0)
			continue;
		if (!all && !strncmp(de->d_name, own, strlen(own)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", pin_dir, de->d_name);
		unlink(path);
	}
	closedir(d);
}

/*
 * Pin the programs of an attached data path (a reused one's are pinned
 * already): the next agent of this build, taking over or adopting what this
 * one keeps, reuses them without a load of its own
 */
void pin_progs(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	char path[PIN_DIR_MAX + 96];
	struct bpf_program *p;
	int i;

	unpin_progs(cfg->pin_dir, dp->build, !dp->reused);
	if (dp->reused)
		return;
	for (i = 0; i < dp->nr_objs; i++)
		bpf_object__for_each_program(p, dp->objs[i]) {
			if (bpf_program__fd(p) < 0)
				continue;
			prog_pin_path(path, sizeof(path), cfg->pin_dir, dp->build,
				      bpf_program__name(p));
			if (bpf_obj_pin(bpf_program__fd(p), path))
				pr_debug("pin %s: %s (a takeover by this build will load its own)\n",
					 path, strerror(errno));
		}
}

/*
 * Whether the pinned map of m can serve this build as it is: there, of the
 * same type, key, value and flags (a different size it keeps: its entries
 * are what is adopted). Sets *entries to its size.
 */
static bool pinned_map_fits(struct bpf_map *m, const char *pin_dir, uint32_t *entries)
{
	struct bpf_map_info info = {};
	uint32_t len = sizeof(info);
	char path[PIN_DIR_MAX + 64];
	bool fits;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", pin_dir, bpf_map__name(m));
	fd = bpf_obj_get(path);
	if (fd < 0) {
		pr_warn("kept data path: map %s is not pinned\n", bpf_map__name(m));
		return false;
	}
	fits = !bpf_map_get_info_by_fd(fd, &info, &len) && info.type == bpf_map__type(m) &&
	       info.key_size == bpf_map__key_size(m) && info.value_size == bpf_map__value_size(m) &&
	       info.map_flags == bpf_map__map_flags(m);
	if (!fits)
		pr_warn("kept data path: map %s has another layout (type %u key %u value %u, this "
			"build %u %u %u)\n", bpf_map__name(m), info.type, info.key_size,
			info.value_size, bpf_map__type(m), bpf_map__key_size(m),
			bpf_map__value_size(m));
	*entries = info.max_entries;
	close(fd);
	return fits;
}

/* Every pinned map of the mode's objects fits (sizes adopted into cfg) */
bool lhd_datapath_maps_fit(struct lhd_config *cfg)
{
	enum lhd_obj ids[LHD_MAX_OBJS];
	int i, n = mode_objects(cfg->mode, ids);
	const char *opt;
	bool fits = true;

	for (i = 0; i < n && fits; i++) {
		struct bpf_object *obj = open_for_look(ids[i], cfg->pin_dir);
		struct bpf_map *m;

		if (!obj) {
			close_opened();
			return false;
		}
		bpf_object__for_each_map(m, obj) {
			uint32_t entries = 0, *field;

			if (!bpf_map__pin_path(m))
				continue;
			if (!pinned_map_fits(m, cfg->pin_dir, &entries)) {
				fits = false;
				break;
			}
			field = sized_by(cfg, bpf_map__name(m), &opt);
			if (field && *field != entries) {
				pr_warn("adopting the kept data path with its %s %u (the config "
					"asks %u: a stop without --keep applies it)\n", opt, entries,
					*field);
				*field = entries;
			}
		}
	}
	if (!fits)
		close_opened();
	return fits;
}

/* A kept agent's clsact filters (kernels without tcx have no links to unpin) */
static void detach_kept_filters(const struct lhd_config *cfg)
{
	libbpf_print_fn_t print = libbpf_set_print(NULL);
	int i;

	for (i = -1; i < cfg->n_wan; i++) {
		int ifindex = i < 0 ? cfg->dc.ifindex : cfg->wan[i].ifindex;
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = BPF_TC_INGRESS);
		LIBBPF_OPTS(bpf_tc_opts, tco, .handle = 1,
			    .priority = cfg->mode == MODE_CREDIT ? LHD_TC_PRIO_CREDIT :
								  LHD_TC_PRIO_LR2);

		if (!ifindex)
			continue;
		bpf_tc_detach(&hook, &tco);
		tco.prog_fd = tco.prog_id = tco.flags = 0;
		hook.attach_point = BPF_TC_EGRESS;
		bpf_tc_detach(&hook, &tco);
	}
	libbpf_set_print(print);
}

int lhd_datapath_probe_kept(struct lhd_config *cfg)
{
	int n = kept_links(cfg->pin_dir, false);

	if (!n)
		return 0;
	/*
	 * One that has let every packet pass for want of an agent is adopted
	 * all the same: kept_passed() finds it and its QPs are forgotten and
	 * learned anew. Taken down and loaded fresh, the gateway had no data
	 * path for the load (1-8 s under a transfer on 2 cores, the verifier
	 * beside the NICs), for the same relearning in the end.
	 */
	if (lhd_datapath_maps_fit(cfg)) {
		pr_info("found the data path a stopped agent kept running under %s (%d links): "
			"adopting it\n", cfg->pin_dir, n);
		return 1;
	}
	pr_warn("the data path kept under %s cannot be adopted by this build: taking it down "
		"(what it held is lost; its QPs fall back to their NICs' go-back-N)\n",
		cfg->pin_dir);
	kept_links(cfg->pin_dir, true);
	detach_kept_filters(cfg);
	return 0;
}

/* From now on the data path runs without an agent (lh_config, LR2 only) */
void mark_agentless(struct lhd_datapath *dp)
{
	int fd = fd_if_any(lhd_config_map(dp));
	struct lh_config c;
	uint32_t zero = 0;

	if (fd < 0 || bpf_map_lookup_elem(fd, &zero, &c))
		return;
	c.agentless_since_ns = lh_now_ns();
	c.flags |= LH_CFG_AGENTLESS;
	if (bpf_map_update_elem(fd, &zero, &c, BPF_EXIST))
		pr_warn("mark the kept data path agentless: %s\n", strerror(errno));
	else
		pr_info("the kept data path works on alone for %u ms, then lets every packet "
			"pass until an agent adopts it\n", c.agentless_ms);
}

/* Pin what a kept data path needs: the XDP links and the tcx links (clsact filters stay by themselves) */
void keep_links(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	char path[PIN_DIR_MAX + 64];
	int i;

	for (i = 0; i < 1 + LHD_MAX_WAN; i++) {
		const struct lh_iface *ifc = i ? &cfg->wan[i - 1] : &cfg->dc;
		const char *prog = cfg->mode == MODE_OBSERVE ? "lh_observe" :
				   i			 ? "lh_wan_xdp" :
							   "lh_dc_xdp";

		if (dp->xdp_links[i] < 0)
			continue;
		link_pin_path(path, sizeof(path), cfg->pin_dir, prog, ifc->name);
		if (bpf_obj_pin(dp->xdp_links[i], path))
			pr_warn("keep the XDP link on %s: pin %s: %s (it detaches)\n", ifc->name,
				path, strerror(errno));
		close(dp->xdp_links[i]);
		dp->xdp_links[i] = -1;
	}
	for (i = 0; i < dp->nr_tc; i++) {
		struct lhd_tc *t = &dp->tc[i];

		if (t->link_fd < 0)
			continue;
		if (bpf_obj_pin(t->link_fd, t->pin))
			pr_warn("keep the tcx link %s: %s (it detaches)\n", t->pin, strerror(errno));
		close(t->link_fd);
		t->link_fd = -1;
	}
	dp->nr_tc = 0;
}
