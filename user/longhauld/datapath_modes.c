// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Each mode's data path: its objects, what is set in them before the load,
 * its config and free lists after, and where its programs attach (LR2:
 * Depot and Sentry; credit; observe).
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
#include "datapath_int.h"
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

int load_observe(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	const void *elf;
	size_t sz;

	elf = gateway_bpf__elf_bytes(&sz);
	return load_obj(dp, elf, sz, "gateway", cfg, setup_gateway);
}

int attach_observe(struct lhd_datapath *dp, const struct lhd_config *cfg)
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
uint32_t agentless_ms(const struct lhd_config *cfg)
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

int load_lr2(struct lhd_datapath *dp, const struct lhd_config *cfg)
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

int attach_lr2(struct lhd_datapath *dp, const struct lhd_config *cfg)
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
int load_credit(struct lhd_datapath *dp, const struct lhd_config *cfg)
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

int attach_credit(struct lhd_datapath *dp, const struct lhd_config *cfg)
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

/* The objects of a mode, as their skeletons carry them */
int mode_objects(enum lh_mode mode, const void **elf, size_t *sz, const char **name)
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
