// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Loader lifecycle (libbpf-bootstrap / xdp-tools style): open every object
 * with the same pin directory so they share their LIBBPF_PIN_BY_NAME maps,
 * size the maps, load, fill the free lists and the config, attach with
 * bpf_link (XDP; tcx, or a clsact qdisc on kernels without tcx). Each error
 * names the step; the unwind runs in reverse order.
 */
#include <errno.h>
#include <linux/if_link.h>
#include <linux/pkt_cls.h>
#include <stdio.h>
#include <string.h>
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
#include "lh_maps.h"
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
 * Open one of the objects compiled into longhauld (the skeleton headers carry
 * their ELF bytes), with the shared pin directory, and load it. setup runs
 * between open and load.
 */
static int load_obj(struct lhd_datapath *dp, const void *elf, size_t elf_sz, const char *name,
		    const struct lhd_config *cfg, int (*setup)(struct bpf_object *, const struct lhd_config *))
{
	LIBBPF_OPTS(bpf_object_open_opts, o, .pin_root_path = cfg->pin_dir, .object_name = name);
	struct bpf_object *obj = bpf_object__open_mem(elf, elf_sz, &o);
	const char *what = name;
	int err;

	if (!obj) {
		err = -errno;
		pr_warn("open %s: %s\n", what, errstr(err));
		return EXIT_KERNEL;
	}
	dp->objs[dp->nr_objs++] = obj;
	if (dp->nr_objs == 1)
		remove_stale_pins(obj, cfg->pin_dir);
	if (size_maps(obj, cfg)) {
		pr_warn("size maps of %s\n", what);
		return EXIT_USAGE;
	}
	if (setup && setup(obj, cfg)) {
		pr_warn("set up %s before load\n", what);
		return EXIT_KERNEL;
	}
	err = bpf_object__load(obj);
	if (err) {
		pr_warn("load %s: %s (kernel too old or the verifier refused it; -v shows why)\n",
			what, errstr(err));
		return EXIT_KERNEL;
	}
	return 0;
}

static int attach_xdp(int prog_fd, const struct lh_iface *ifc, const char *role,
		      enum lh_xdp_mode mode)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts);
	int fd, err;

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
static int attach_tc(struct lhd_datapath *dp, struct bpf_program *prog, int ifindex,
		     const char *ifname, bool ingress, bool first)
{
	enum bpf_tc_attach_point pt = ingress ? BPF_TC_INGRESS : BPF_TC_EGRESS;
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = pt);
	LIBBPF_OPTS(bpf_tc_opts, tco, .handle = 1, .priority = dp->tc_prio,
		    .prog_fd = bpf_program__fd(prog));
	LIBBPF_OPTS(bpf_tcx_opts, to, .flags = first ? BPF_F_BEFORE : BPF_F_AFTER);
	const char *dir = ingress ? "ingress" : "egress";
	struct lhd_tc *t;
	struct bpf_link *l;
	int err;

	if (dp->nr_tc >= LHD_MAX_TC)
		return -E2BIG;
	t = &dp->tc[dp->nr_tc];
	*t = (struct lhd_tc){ .ifindex = ifindex, .ingress = ingress };
	if (!dp->tc_legacy) {
		l = bpf_program__attach_tcx(prog, ifindex, &to);
		if (l) {
			t->link = l;
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

		if (t->link) {
			bpf_link__destroy(t->link);
			t->link = NULL;
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
	struct bpf_program *p = bpf_object__find_program_by_name(dp->objs[obj], name);

	return p ? bpf_program__fd(p) : -1;
}

static int up_observe(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	const void *elf;
	size_t sz;
	int rc, fd, i;

	elf = gateway_bpf__elf_bytes(&sz);
	rc = load_obj(dp, elf, sz, "gateway", cfg, setup_gateway);
	if (rc)
		return rc;
	/* the DC interface (when given), then each WAN interface */
	for (i = 0; i <= cfg->n_wan; i++) {
		const struct lh_iface *ifc = i ? &cfg->wan[i - 1] : &cfg->dc;

		if (!ifc->ifindex)
			continue;
		fd = attach_xdp(prog_fd(dp, 0, "lh_gateway"), ifc, i ? "wan" : "dc", cfg->xdp_mode);
		if (fd < 0)
			return fd == -EBUSY ? EXIT_BUSY : EXIT_KERNEL;
		dp->xdp_links[i] = fd;
	}
	return 0;
}

static int up_lr2(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	struct lh_config bc = {
		.dc_ifindex = (uint32_t)cfg->dc.ifindex,
		.wan_ifindex = (uint32_t)cfg->wan[0].ifindex, /* the first: no program reads it */
		.flags = (cfg->depot ? LH_CFG_DEPOT : 0) | (cfg->sentry ? LH_CFG_SENTRY : 0) |
			 (cfg->gateway ? LH_CFG_GATEWAY : 0),
		/* a copy that went out within a WAN round trip is in flight, not lost */
		.resend_guard_ms = cfg->wan_rtt_us / 1000 + 1,
		.watchdog_ms = cfg->sentry_watchdog_ms,
		.sack_count = cfg->sack_count,
	};
	uint32_t zero = 0;
	const void *elf;
	size_t sz;
	int rc, fd, i;

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

	if (fill_queue(lhd_map_fd(dp, "lh_pool_free"), cfg->pool_slots, "lh_pool_free") ||
	    fill_queue(lhd_map_fd(dp, "lh_ring_free"), cfg->rings, "lh_ring_free"))
		return EXIT_KERNEL;
	if (bpf_map_update_elem(lhd_map_fd(dp, "lh_config"), &zero, &bc, BPF_ANY)) {
		pr_warn("write lh_config: %s\n", strerror(errno));
		return EXIT_KERNEL;
	}
	dp->kick_fd = prog_fd(dp, 2, "lh_dc_kick");
	dp->cmd_fd = prog_fd(dp, 2, "lh_dc_cmd");

	fd = attach_xdp(prog_fd(dp, 1, "lh_dc_xdp"), &cfg->dc, "dc", cfg->xdp_mode);
	if (fd < 0)
		return fd == -EBUSY ? EXIT_BUSY : EXIT_KERNEL;
	dp->xdp_links[0] = fd;
	/* every WAN interface the same: the programs find a QP by its key, whichever path */
	for (i = 0; i < cfg->n_wan; i++) {
		fd = attach_xdp(prog_fd(dp, 0, "lh_wan_xdp"), &cfg->wan[i], "wan", cfg->xdp_mode);
		if (fd < 0)
			return fd == -EBUSY ? EXIT_BUSY : EXIT_KERNEL;
		dp->xdp_links[1 + i] = fd;
	}
	dp->tc_prio = LHD_TC_PRIO_LR2;
	if (attach_tc(dp, bpf_object__find_program_by_name(dp->objs[2], "lh_dc_in"),
		      cfg->dc.ifindex, cfg->dc.name, true, true) ||
	    attach_tc(dp, bpf_object__find_program_by_name(dp->objs[2], "lh_dc_out"),
		      cfg->dc.ifindex, cfg->dc.name, false, true))
		return EXIT_KERNEL;
	for (i = 0; i < cfg->n_wan; i++)
		if (attach_tc(dp, bpf_object__find_program_by_name(dp->objs[3], "lh_wan_in"),
			      cfg->wan[i].ifindex, cfg->wan[i].name, true, true))
			return EXIT_KERNEL;
	return 0;
}

/*
 * Credit mode: lh_cr_out on the egress of the DC interface (where a last hop
 * counts what it forwards) and of every --credit-route interface (where a
 * hop sends against its next hop's credit), each interface once.
 */
static int up_credit(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	struct lh_cr_config cc = {
		.dc_ifindex = (uint32_t)cfg->dc.ifindex,
		.hold_cap = cfg->cr_buffer,
	};
	const struct lh_iface *ifs[LHD_MAX_CR_ROUTES + 1];
	struct bpf_program *prog;
	uint32_t zero = 0;
	const void *elf;
	size_t sz;
	int rc, i, j, n = 0;

	elf = credit_tc_bpf__elf_bytes(&sz);
	rc = load_obj(dp, elf, sz, "credit_tc", cfg, NULL);
	if (rc)
		return rc;
	if (bpf_map_update_elem(lhd_map_fd(dp, "lh_cr_config"), &zero, &cc, BPF_ANY)) {
		pr_warn("write lh_cr_config: %s\n", strerror(errno));
		return EXIT_KERNEL;
	}
	if (cfg->dc.ifindex)
		ifs[n++] = &cfg->dc;
	for (i = 0; i < cfg->n_cr_routes; i++) {
		for (j = 0; j < n && ifs[j]->ifindex != cfg->cr_routes[i].ifc.ifindex; j++)
			;
		if (j == n)
			ifs[n++] = &cfg->cr_routes[i].ifc;
	}
	prog = bpf_object__find_program_by_name(dp->objs[0], "lh_cr_out");
	/* last on each egress: after an LR2 agent's lh_dc_out on the same DC interface */
	dp->tc_prio = LHD_TC_PRIO_CREDIT;
	for (i = 0; i < n; i++)
		if (attach_tc(dp, prog, ifs[i]->ifindex, ifs[i]->name, false, false))
			return EXIT_KERNEL;
	return 0;
}

int lhd_datapath_up(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	int rc, i;

	memset(dp, 0, sizeof(*dp));
	for (i = 0; i < 1 + LHD_MAX_WAN; i++)
		dp->xdp_links[i] = -1;
	dp->kick_fd = -1;
	dp->cmd_fd = -1;
	if (cfg->mode == MODE_OBSERVE)
		rc = up_observe(dp, cfg);
	else if (cfg->mode == MODE_CREDIT)
		rc = up_credit(dp, cfg);
	else
		rc = up_lr2(dp, cfg);
	if (rc)
		lhd_datapath_down(dp, cfg);
	return rc;
}

void lhd_datapath_down(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	int i;

	for (i = 0; i < 1 + LHD_MAX_WAN; i++) {
		if (dp->xdp_links[i] >= 0)
			close(dp->xdp_links[i]); /* the last reference to an XDP link detaches it */
		dp->xdp_links[i] = -1;
	}
	detach_tc(dp);
	for (i = dp->nr_objs - 1; i >= 0; i--) {
		if (!cfg->keep_pins)
			bpf_object__unpin_maps(dp->objs[i], NULL);
		bpf_object__close(dp->objs[i]);
	}
	dp->nr_objs = 0;
}
