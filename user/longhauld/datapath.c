// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Loader lifecycle (libbpf-bootstrap / xdp-tools style): open every object
 * with the same pin directory so they share their LIBBPF_PIN_BY_NAME maps,
 * size the maps, load, fill the free lists and the config, attach with
 * bpf_link (XDP; tcx, or a clsact qdisc on kernels without tcx). Each error
 * names the step; the unwind runs in reverse order.
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

#include "credit_tc.skel.h"
#include "datapath.h"
#include "dc_tc.skel.h"
#include "dc_xdp.skel.h"
#include "gateway.skel.h"
#include "lh_credit.h"
#include "lh_stats.h"
#include "lh_maps.h"
#include "lh_siphash.h"
#include "log.h"
#include "wan_tc.skel.h"
#include "wan_xdp.skel.h"

static const char *errstr(int err)
{
	static char buf[128];

	libbpf_strerror(err, buf, sizeof(buf));
	return buf;
}

/* Map sizes of the LR2 objects; every object gets the same, as they share pins */
static int size_maps(struct bpf_object *obj, const struct lhd_config *cfg)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		const char *n = bpf_map__name(m);
		uint32_t size = 0;

		if (!strcmp(n, "lh_qp") || !strcmp(n, "lh_ack") || !strcmp(n, "lh_pair") ||
		    !strcmp(n, "lh_cr_flow") || !strcmp(n, "lh_cr_grant"))
			size = cfg->max_qps;
		else if (!strcmp(n, "lh_hostpair"))
			size = cfg->max_hostpairs;
		else if (!strcmp(n, "lh_qp_count"))
			size = 2 * cfg->max_qps;
		else if (!strcmp(n, "lh_pair_psn"))
			size = cfg->max_qps * 16 < 8192 ? 8192 : cfg->max_qps * 16;
		else if (!strcmp(n, "lh_ring") || !strcmp(n, "lh_ring_free"))
			size = cfg->rings;
		else if (!strcmp(n, "lh_pool") || !strcmp(n, "lh_pool_free"))
			size = cfg->pool_slots;
		if (size && bpf_map__set_max_entries(m, size))
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
static int reuse_progs(struct lhd_datapath *dp, struct bpf_object *obj, const char *pin_dir)
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
		dp->progs[dp->nr_progs].obj = dp->nr_objs - 1;
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
static int reuse_maps(struct bpf_object *obj)
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
 * Open one of the objects compiled into longhauld (the skeleton headers carry
 * their ELF bytes), with the shared pin directory, and load it. setup runs
 * between open and load.
 */
/*
 * Objects opened (not loaded) by lhd_datapath_maps_fit(), for the load that
 * follows it: an open parses the ELF and its BTF, about 4 ms an object here,
 * and an adopting agent's time to take over is time its data path is alone
 * (it has 100 ms before it lets every packet pass).
 */
static struct {
	const void *elf;
	struct bpf_object *obj;
} opened[LHD_MAX_OBJS];

static struct bpf_object *open_obj(const void *elf, size_t elf_sz, const char *name,
				   const char *pin_dir)
{
	LIBBPF_OPTS(bpf_object_open_opts, o, .pin_root_path = pin_dir, .object_name = name);
	struct bpf_object *obj;
	int i;

	for (i = 0; i < LHD_MAX_OBJS; i++) {
		if (opened[i].elf != elf)
			continue;
		obj = opened[i].obj;
		opened[i].elf = NULL;
		opened[i].obj = NULL;
		return obj;
	}
	return bpf_object__open_mem(elf, elf_sz, &o);
}

/* keeps obj, opened from elf, for the next open_obj() of it (or closes it) */
static void keep_opened(const void *elf, struct bpf_object *obj)
{
	int i;

	for (i = 0; i < LHD_MAX_OBJS; i++) {
		if (!opened[i].elf) {
			opened[i].elf = elf;
			opened[i].obj = obj;
			return;
		}
	}
	bpf_object__close(obj);
}

static void close_opened(void)
{
	int i;

	for (i = 0; i < LHD_MAX_OBJS; i++) {
		bpf_object__close(opened[i].obj);
		opened[i].elf = NULL;
		opened[i].obj = NULL;
	}
}

static int load_obj(struct lhd_datapath *dp, const void *elf, size_t elf_sz, const char *name,
		    const struct lhd_config *cfg, int (*setup)(struct bpf_object *, const struct lhd_config *))
{
	struct bpf_object *obj = open_obj(elf, elf_sz, name, cfg->pin_dir);
	const char *what = name;
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
	if (setup && setup(obj, cfg)) {
		pr_warn("set up %s before load\n", what);
		return EXIT_KERNEL;
	}
	if (dp->reused)
		return reuse_progs(dp, obj, cfg->pin_dir) || reuse_maps(obj) ? EXIT_KERNEL : 0;
	err = bpf_object__load(obj);
	if (err) {
		pr_warn("load %s: %s (kernel too old or the verifier refused it; -v shows why)\n",
			what, errstr(err));
		return EXIT_KERNEL;
	}
	return 0;
}

/*
 * Where a kept data path's link of program prog on interface ifname is
 * pinned: PIN_DIR/link_PROG_IFNAME (beside the maps)
 */
#define LINK_PIN_PREFIX "link_"
static void link_pin_path(char *buf, size_t size, const char *pin_dir, const char *prog,
			  const char *ifname)
{
	snprintf(buf, size, "%s/" LINK_PIN_PREFIX "%s_%s", pin_dir, prog, ifname);
}

/*
 * The kept XDP link of prog on ifc, given the program prog_fd: its fd, or -1
 * when there is none or it cannot be moved (then it is unpinned: gone)
 */
static int adopt_xdp(int prog_fd, const struct lh_iface *ifc, const char *prog,
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

static int attach_xdp(struct lhd_datapath *dp, int prog_fd, const struct lh_iface *ifc,
		      const char *role, const char *prog, const struct lhd_config *cfg)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts);
	enum lh_xdp_mode mode = cfg->xdp_mode;
	int fd, err;

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
static int attach_tc(struct lhd_datapath *dp, int prog_fd, const char *prog, int ifindex,
		     const char *ifname, bool ingress, bool first, const char *pin_dir)
{
	enum bpf_tc_attach_point pt = ingress ? BPF_TC_INGRESS : BPF_TC_EGRESS;
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = pt);
	LIBBPF_OPTS(bpf_tc_opts, tco, .handle = 1, .priority = dp->tc_prio, .prog_fd = prog_fd);
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = first ? BPF_F_BEFORE : BPF_F_AFTER);
	const char *dir = ingress ? "ingress" : "egress";
	struct lhd_tc *t;
	int err, fd;

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

static int fill_queue(int fd, uint32_t n, const char *name)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (bpf_map_update_elem(fd, NULL, &i, BPF_ANY)) {
			pr_warn("fill %s: %s\n", name, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/*
 * Write every element of an array map once (zeros), so that the data path's
 * first store into each does not pay for the first touch of its page. In
 * this test VM (PVM, shadow page tables) the Depot's first pass through a
 * fresh pool of 16384 slots cost ~180 ms of copies (perf: __pi_memcpy from
 * bpf_xdp_load_bytes 7.5 % of both CPUs in the first 1.2 s, 0.55 % later):
 * the first 1024 QPs of a transfer saw their WAN path take 60-130 ms for
 * 1 ms, and their NICs' 67 ms timers fired with nothing lost. Batches of
 * PREFAULT_BATCH elements; a failure only costs that warm-up.
 */
#define PREFAULT_BATCH 64
static void prefault_array(int fd, const char *name)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info), i, n, keys[PREFAULT_BATCH];
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	void *zero;

	if (bpf_map_get_info_by_fd(fd, &info, &len) || !info.max_entries || !info.value_size)
		return;
	zero = calloc(PREFAULT_BATCH, info.value_size);
	if (!zero)
		return;
	for (i = 0; i < info.max_entries; i += n) {
		uint32_t k;

		n = info.max_entries - i < PREFAULT_BATCH ? info.max_entries - i : PREFAULT_BATCH;
		for (k = 0; k < n; k++)
			keys[k] = i + k;
		if (bpf_map_update_batch(fd, keys, zero, &n, &o)) {
			pr_warn("prefault %s: %s (its first stores will be slower)\n", name,
				strerror(errno));
			break;
		}
	}
	free(zero);
}

int lhd_map_fd(const struct lhd_datapath *dp, const char *name)
{
	int i;

	for (i = 0; i < dp->nr_objs; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(dp->objs[i], name);

		if (m)
			return bpf_map__fd(m);
	}
	return -1;
}

/*
 * Set the one-byte const volatile variable var of obj's .rodata before load:
 * its offset comes from the object's BTF (the section holds the CRC tables
 * too, in whatever order the compiler chose).
 */
static int set_rodata_u8(struct bpf_object *obj, const char *var, __u8 value)
{
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	struct bpf_map *m = NULL, *it;
	struct btf *btf = bpf_object__btf(obj);
	size_t sz = 0;
	__u8 *v;
	int id, i;

	bpf_object__for_each_map(it, obj)
		if (strstr(bpf_map__name(it), ".rodata"))
			m = it;
	if (!m || !btf)
		return -ENOENT;
	id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	if (id < 0)
		return -ENOENT;
	sec = btf__type_by_id(btf, (__u32)id);
	v = bpf_map__initial_value(m, &sz);
	if (!sec || !v)
		return -EINVAL;
	vs = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *t = btf__type_by_id(btf, vs->type);

		if (t && !strcmp(btf__name_by_offset(btf, t->name_off), var)) {
			if (vs->size != 1 || vs->offset >= sz)
				return -EINVAL;
			v[vs->offset] = value;
			return 0;
		}
	}
	return -ENOENT;
}

static int setup_gateway(struct bpf_object *obj, const struct lhd_config *cfg)
{
	return set_rodata_u8(obj, "lh_verify_icrc", cfg->verify_icrc ? 1 : 0);
}

static int prog_fd(const struct lhd_datapath *dp, int obj, const char *name)
{
	struct bpf_program *p;
	int i;

	if (dp->reused) {
		for (i = 0; i < dp->nr_progs; i++)
			if (dp->progs[i].obj == obj && !strcmp(dp->progs[i].name, name))
				return dp->progs[i].fd;
		return -1;
	}
	p = bpf_object__find_program_by_name(dp->objs[obj], name);
	return p ? bpf_program__fd(p) : -1;
}

static int load_observe(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	const void *elf;
	size_t sz;

	elf = gateway_bpf__elf_bytes(&sz);
	return load_obj(dp, elf, sz, "gateway", cfg, setup_gateway);
}

static int attach_observe(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	int fd, i;

	/* the DC interface (when given), then each WAN interface */
	for (i = 0; i <= cfg->n_wan; i++) {
		const struct lh_iface *ifc = i ? &cfg->wan[i - 1] : &cfg->dc;

		if (!ifc->ifindex)
			continue;
		fd = attach_xdp(dp, prog_fd(dp, 0, "lh_gateway"), ifc, i ? "wan" : "dc", "lh_gateway",
				cfg);
		if (fd < 0)
			return fd == -EBUSY ? EXIT_BUSY : EXIT_KERNEL;
		dp->xdp_links[i] = fd;
	}
	return 0;
}

/*
 * How long a data path kept by a stopped agent works on alone: the Sentry's
 * watchdog time (4 x wan-rtt + 50 ms), at least 100 ms. A --takeover's pause
 * is well inside (about 40 ms here); a NIC of 6 retries at 67 ms has
 * most of its budget left when everything then passes.
 */
static uint32_t agentless_ms(const struct lhd_config *cfg)
{
	uint32_t ms = 4 * (cfg->wan_rtt_us / 1000) + 50;

	return ms < 100 ? 100 : ms;
}

/*
 * The Sentry's watchdog: --sentry-watchdog (scaled up by a QP's round trip
 * and doubled per recovery given up), or with --nic-timeout a bound, the
 * shorter of the two, that a NIC's retry budget can count on
 */
static uint32_t watchdog_ms(const struct lhd_config *cfg)
{
	uint32_t nic = (cfg->nic_timeout_us + 999) / 1000, wd = cfg->sentry_watchdog_ms;

	return nic && (!wd || nic < wd) ? nic : wd;
}

/* lh_config as this agent runs it (no LH_CFG_AGENTLESS) */
static int write_lr2_config(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	struct lh_config bc = {
		.dc_ifindex = (uint32_t)cfg->dc.ifindex,
		.flags = (cfg->depot ? LH_CFG_DEPOT : 0) | (cfg->sentry ? LH_CFG_SENTRY : 0) |
			 (cfg->gateway ? LH_CFG_GATEWAY : 0) | (cfg->n_peers ? LH_CFG_PEERS : 0) |
			 (cfg->report_key_set ? LH_CFG_REPORT_MAC : 0) |
			 (cfg->nic_timeout_us ? LH_CFG_WD_BOUND : 0),
		/* a copy that went out within a WAN round trip is in flight, not lost */
		.resend_guard_ms = lhd_resend_guard_ms(cfg, 0),
		.watchdog_ms = watchdog_ms(cfg),
		.sack_count = cfg->sack_count,
		.agentless_ms = agentless_ms(cfg),
		.host_qps = cfg->host_qps,
		.hostpair_qps = cfg->hostpair_qps,
	};
	uint32_t zero = 0;

	if (cfg->report_key_set)
		lh_sip_key(cfg->report_key, bc.report_key);
	if (bpf_map_update_elem(lhd_map_fd(dp, "lh_config"), &zero, &bc, BPF_ANY)) {
		pr_warn("write lh_config: %s\n", strerror(errno));
		return EXIT_KERNEL;
	}
	return 0;
}

/* lh_peer as --peer says (an adopted one is emptied first: the config may have changed) */
static int fill_peers(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	int fd = lhd_map_fd(dp, "lh_peer"), i;
	struct lh_peer_key k, next;
	uint32_t one = 1;

	while (!bpf_map_get_next_key(fd, NULL, &next))
		if (bpf_map_delete_elem(fd, &next))
			break;
	for (i = 0; i < cfg->n_peers; i++) {
		k.prefixlen = cfg->peers[i].prefixlen;
		memcpy(k.addr, cfg->peers[i].addr, 16);
		if (bpf_map_update_elem(fd, &k, &one, BPF_ANY)) {
			pr_warn("write lh_peer: %s\n", strerror(errno));
			return -errno;
		}
	}
	return 0;
}

static int load_lr2(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	const void *elf;
	size_t sz;
	int rc;

	elf = wan_xdp_bpf__elf_bytes(&sz);
	rc = load_obj(dp, elf, sz, "wan_xdp", cfg, NULL);
	if (!rc) {
		elf = dc_xdp_bpf__elf_bytes(&sz);
		rc = load_obj(dp, elf, sz, "dc_xdp", cfg, NULL);
	}
	if (!rc) {
		elf = dc_tc_bpf__elf_bytes(&sz);
		rc = load_obj(dp, elf, sz, "dc_tc", cfg, NULL);
	}
	if (!rc) {
		elf = wan_tc_bpf__elf_bytes(&sz);
		rc = load_obj(dp, elf, sz, "wan_tc", cfg, NULL);
	}
	if (rc)
		return rc;

	/* adopted: the free lists are the kept ones, every slot and ring either in them or in use */
	if (!dp->adopted) {
		if (fill_queue(lhd_map_fd(dp, "lh_pool_free"), cfg->pool_slots, "lh_pool_free") ||
		    fill_queue(lhd_map_fd(dp, "lh_ring_free"), cfg->rings, "lh_ring_free"))
			return EXIT_KERNEL;
		prefault_array(lhd_map_fd(dp, "lh_pool"), "lh_pool");
		prefault_array(lhd_map_fd(dp, "lh_ring"), "lh_ring");
	}
	/* the config is attach_lr2()'s to write */
	if (fill_peers(dp, cfg))
		return EXIT_KERNEL;
	dp->kick_fd = prog_fd(dp, 2, "lh_dc_kick");
	dp->cmd_fd = prog_fd(dp, 2, "lh_dc_cmd");
	return 0;
}

/*
 * A data path not adopted starts with no QP while transfers may be mid-flight:
 * QPs learned from now on for 4 round trips and 100 ms are LH_QPF_WIDE (and a
 * Depot's LH_QPF_D_UNSURE). Such a QP sends again within a retransmit timeout
 * (67 ms by default on rxe and perftest) or at once. Written before the
 * programs attach, and again as the agent starts (the later end holds): a QP
 * learned in between, on the first packets, was taken for new (a Depot
 * restarted mid-transfer NACKed a gap from the first PSN it saw, ahead of the
 * receiving NIC: a QP error, in a soak at 01975f9).
 */
int lhd_datapath_relearn(const struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	struct lh_pair_guard g = { 0 };
	uint32_t zero = 0;
	uint64_t until = lh_now_ns() + 4000ull * cfg->wan_rtt_us + 100000000ull;
	int fd = lhd_map_fd(dp, "lh_pair_guard");

	if (fd < 0 || (dp->adopted && !dp->stale))
		return 0;
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
	int fd = lhd_map_fd(dp, "lh_stats"), n = libbpf_num_possible_cpus(), i;
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
static bool kept_passed(struct lhd_datapath *dp, uint64_t *before)
{
	int fd = lhd_map_fd(dp, "lh_config");
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

static bool kept_passed_since(struct lhd_datapath *dp, uint64_t before)
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

static int attach_lr2(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	uint64_t passed = 0;
	int fd, i;

	/*
	 * The config written here only, as the programs attach. An adopted data
	 * path (the stopped agent marked it agentless after this one loaded)
	 * keeps its old one, and its time alone, until this agent has looked
	 * whether it let packets pass meanwhile: written in the load, it hid
	 * every such pass (a start of 95-250 ms under a transfer, past the
	 * 100 ms alone: 3199 packets passed, QPs kept, QP errors).
	 */
	if (dp->adopted)
		dp->stale = kept_passed(dp, &passed);
	if (write_lr2_config(dp, cfg))
		return EXIT_KERNEL;
	if (dp->adopted && !dp->stale)
		dp->stale = kept_passed_since(dp, passed);
	if (lhd_datapath_relearn(dp, cfg))
		return EXIT_KERNEL;

	fd = attach_xdp(dp, prog_fd(dp, 1, "lh_dc_xdp"), &cfg->dc, "dc", "lh_dc_xdp", cfg);
	if (fd < 0)
		return fd == -EBUSY ? EXIT_BUSY : EXIT_KERNEL;
	dp->xdp_links[0] = fd;
	/* every WAN interface the same: the programs find a QP by its key, whichever path */
	for (i = 0; i < cfg->n_wan; i++) {
		fd = attach_xdp(dp, prog_fd(dp, 0, "lh_wan_xdp"), &cfg->wan[i], "wan", "lh_wan_xdp",
				cfg);
		if (fd < 0)
			return fd == -EBUSY ? EXIT_BUSY : EXIT_KERNEL;
		dp->xdp_links[1 + i] = fd;
	}
	dp->tc_prio = LHD_TC_PRIO_LR2;
	if (attach_tc(dp, prog_fd(dp, 2, "lh_dc_in"), "lh_dc_in", cfg->dc.ifindex, cfg->dc.name,
		      true, true, cfg->pin_dir) ||
	    attach_tc(dp, prog_fd(dp, 2, "lh_dc_out"), "lh_dc_out", cfg->dc.ifindex,
		      cfg->dc.name, false, true, cfg->pin_dir))
		return EXIT_KERNEL;
	for (i = 0; i < cfg->n_wan; i++)
		if (attach_tc(dp, prog_fd(dp, 3, "lh_wan_in"), "lh_wan_in", cfg->wan[i].ifindex,
			      cfg->wan[i].name, true, true, cfg->pin_dir))
			return EXIT_KERNEL;
	return 0;
}

/*
 * Credit mode: lh_cr_out on the egress of the DC interface (where a last hop
 * counts what it forwards) and of every --credit-route interface (where a
 * hop sends against its next hop's credit), each interface once.
 */
static int load_credit(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	struct lh_cr_config cc = {
		.dc_ifindex = (uint32_t)cfg->dc.ifindex,
		.hold_cap = cfg->cr_buffer,
	};
	uint32_t zero = 0;
	const void *elf;
	size_t sz;
	int rc;

	elf = credit_tc_bpf__elf_bytes(&sz);
	rc = load_obj(dp, elf, sz, "credit_tc", cfg, NULL);
	if (rc)
		return rc;
	if (bpf_map_update_elem(lhd_map_fd(dp, "lh_cr_config"), &zero, &cc, BPF_ANY)) {
		pr_warn("write lh_cr_config: %s\n", strerror(errno));
		return EXIT_KERNEL;
	}
	return 0;
}

static int attach_credit(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	const struct lh_iface *ifs[LHD_MAX_CR_ROUTES + 1];
	int i, j, n = 0, prog;

	if (cfg->dc.ifindex)
		ifs[n++] = &cfg->dc;
	for (i = 0; i < cfg->n_cr_routes; i++) {
		for (j = 0; j < n && ifs[j]->ifindex != cfg->cr_routes[i].ifc.ifindex; j++)
			;
		if (j == n)
			ifs[n++] = &cfg->cr_routes[i].ifc;
	}
	prog = prog_fd(dp, 0, "lh_cr_out");
	/* last on each egress: after an LR2 agent's lh_dc_out on the same DC interface */
	dp->tc_prio = LHD_TC_PRIO_CREDIT;
	for (i = 0; i < n; i++)
		if (attach_tc(dp, prog, "lh_cr_out", ifs[i]->ifindex, ifs[i]->name, false, false,
			      cfg->pin_dir))
			return EXIT_KERNEL;
	return 0;
}

/* The names of the pins of links a stopped agent kept under pin_dir; returns how many */
static int kept_links(const char *pin_dir, bool unpin)
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

/* The objects of a mode, as their skeletons carry them */
static int mode_objects(enum lh_mode mode, const void **elf, size_t *sz, const char **name)
{
	int n = 0;

	if (mode == MODE_OBSERVE) {
		name[n] = "gateway";
		elf[n] = gateway_bpf__elf_bytes(&sz[n]);
		n++;
	} else if (mode == MODE_CREDIT) {
		name[n] = "credit_tc";
		elf[n] = credit_tc_bpf__elf_bytes(&sz[n]);
		n++;
	} else {
		name[n] = "wan_xdp";
		elf[n] = wan_xdp_bpf__elf_bytes(&sz[n]);
		n++;
		name[n] = "dc_xdp";
		elf[n] = dc_xdp_bpf__elf_bytes(&sz[n]);
		n++;
		name[n] = "dc_tc";
		elf[n] = dc_tc_bpf__elf_bytes(&sz[n]);
		n++;
		name[n] = "wan_tc";
		elf[n] = wan_tc_bpf__elf_bytes(&sz[n]);
		n++;
	}
	return n;
}

/*
 * This build's id for cfg's mode: FNV-1a over the ELF bytes of its objects,
 * eight at a time (a byte at a time it took 8 ms of an adopting start here),
 * and what is set in them before the load (observe mode's ICRC check)
 */
static uint64_t build_id(const struct lhd_config *cfg)
{
	const void *elf[LHD_MAX_OBJS];
	const char *name[LHD_MAX_OBJS];
	size_t sz[LHD_MAX_OBJS], j;
	int i, n = mode_objects(cfg->mode, elf, sz, name);
	uint64_t h = 0xcbf29ce484222325ull, w;

	for (i = 0; i < n; i++) {
		const uint8_t *b = elf[i];

		for (j = 0; j < sz[i]; j += sizeof(w)) {
			w = 0;
			memcpy(&w, b + j, sz[i] - j < sizeof(w) ? sz[i] - j : sizeof(w));
			h ^= w;
			h *= 0x100000001b3ull;
			h ^= h >> 29;
		}
		h ^= sz[i];
		h *= 0x100000001b3ull;
	}
	h ^= (uint64_t)cfg->mode << 8 | (cfg->mode == MODE_OBSERVE && cfg->verify_icrc);
	h *= 0x100000001b3ull;
	return h;
}

/* Whether every program of cfg's mode has a pin of build under cfg->pin_dir */
static bool same_build(const struct lhd_config *cfg, uint64_t build)
{
	const void *elf[LHD_MAX_OBJS];
	const char *name[LHD_MAX_OBJS];
	char path[PIN_DIR_MAX + 96];
	size_t sz[LHD_MAX_OBJS];
	int i, n = mode_objects(cfg->mode, elf, sz, name);
	bool all = n > 0;

	for (i = 0; i < n && all; i++) {
		struct bpf_object *obj = open_obj(elf[i], sz[i], name[i], cfg->pin_dir);
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
		keep_opened(elf[i], obj);
	}
	return all;
}

bool lhd_datapath_same_build(const struct lhd_config *cfg)
{
	return same_build(cfg, build_id(cfg));
}

/* Remove the program pins under pin_dir: all, or all but build's (other builds' or a crash's) */
static void unpin_progs(const char *pin_dir, uint64_t build, bool all)
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
static void pin_progs(struct lhd_datapath *dp, const struct lhd_config *cfg)
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

/* What cfg sizes a map, adopted from the kept one: the config's field, or NULL */
static uint32_t *sized_by(struct lhd_config *cfg, const char *map, const char **opt)
{
	if (!strcmp(map, "lh_qp") || !strcmp(map, "lh_cr_flow")) {
		*opt = "max-qps";
		return &cfg->max_qps;
	}
	if (!strcmp(map, "lh_hostpair")) {
		*opt = "max-hostpairs";
		return &cfg->max_hostpairs;
	}
	if (!strcmp(map, "lh_ring")) {
		*opt = "rings";
		return &cfg->rings;
	}
	if (!strcmp(map, "lh_pool")) {
		*opt = "pool-slots";
		return &cfg->pool_slots;
	}
	return NULL;
}

/* Every pinned map of the mode's objects fits (sizes adopted into cfg) */
bool lhd_datapath_maps_fit(struct lhd_config *cfg)
{
	const void *elf[LHD_MAX_OBJS];
	const char *name[LHD_MAX_OBJS], *opt;
	size_t sz[LHD_MAX_OBJS];
	int i, n = mode_objects(cfg->mode, elf, sz, name);
	bool fits = true;

	for (i = 0; i < n && fits; i++) {
		struct bpf_object *obj = open_obj(elf[i], sz[i], name[i], cfg->pin_dir);
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
		keep_opened(elf[i], obj);
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

/* From now on the data path runs without an agent (lh_config, LR2 only) */
static void mark_agentless(struct lhd_datapath *dp)
{
	int fd = lhd_map_fd(dp, "lh_config");
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
static void keep_links(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	char path[PIN_DIR_MAX + 64];
	int i;

	for (i = 0; i < 1 + LHD_MAX_WAN; i++) {
		const struct lh_iface *ifc = i ? &cfg->wan[i - 1] : &cfg->dc;
		const char *prog = cfg->mode == MODE_OBSERVE ? "lh_gateway" :
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
		for (i = dp->nr_objs - 1; i >= 0; i--)
			bpf_object__close(dp->objs[i]);
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
	for (i = dp->nr_objs - 1; i >= 0; i--) {
		/* a takeover that failed before attaching leaves the running agent's maps alone */
		if (!cfg->keep_pins && dp->owner)
			bpf_object__unpin_maps(dp->objs[i], NULL);
		bpf_object__close(dp->objs[i]);
	}
	dp->nr_objs = 0;
}
