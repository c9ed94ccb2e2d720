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
#include "observe.skel.h"
#include "lh_credit.h"
#include "lh_stats.h"
#include "lh_maps.h"
#include "lh_siphash.h"
#include "log.h"
#include "wan_tc.skel.h"
#include "wan_xdp.skel.h"

static int fill_queue(const struct bpf_map *m, uint32_t n)
{
	const char *name = bpf_map__name(m);
	int fd = lhd_map_fd(m);
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
static void prefault_array(const struct bpf_map *m)
{
	const char *name = bpf_map__name(m);
	int fd = bpf_map__fd(m);
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

/* Before the load: what observe mode's program checks (its .rodata) */
static int setup_observe(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	dp->sk.observe->rodata->lh_verify_icrc = cfg->verify_icrc ? 1 : 0;
	return 0;
}

int load_observe(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	return load_obj(dp, LHD_OBJ_OBSERVE, cfg, setup_observe);
}

int attach_observe(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	int fd, i, prog = lhd_prog_fd(dp, dp->sk.observe->progs.lh_observe);

	if (prog < 0)
		return EXIT_KERNEL;
	/* the DC interface (when given), then each WAN interface */
	for (i = 0; i <= cfg->n_wan; i++) {
		const struct lh_iface *ifc = i ? &cfg->wan[i - 1] : &cfg->dc;

		if (!ifc->ifindex)
			continue;
		fd = attach_xdp(dp, prog, ifc, i ? "wan" : "dc", "lh_observe", cfg);
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
	if (bpf_map_update_elem(lhd_map_fd(dp->sk.dc_tc->maps.lh_config), &zero, &bc, BPF_ANY)) {
		pr_warn("write lh_config: %s\n", strerror(errno));
		return EXIT_KERNEL;
	}
	return 0;
}

/* lh_peer as --peer says (an adopted one is emptied first: the config may have changed) */
static int fill_peers(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	int fd = lhd_map_fd(dp->sk.dc_tc->maps.lh_peer), i;
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
	enum lhd_obj objs[LHD_MAX_OBJS];
	int i, n = mode_objects(MODE_LR2, objs), rc;

	for (i = 0; i < n; i++) {
		rc = load_obj(dp, objs[i], cfg, NULL);
		if (rc)
			return rc;
	}
	/* adopted: the free lists are the kept ones, every slot and ring either in them or in use */
	if (!dp->adopted) {
		if (fill_queue(dp->sk.dc_tc->maps.lh_pool_free, cfg->pool_slots) ||
		    fill_queue(dp->sk.dc_tc->maps.lh_ring_free, cfg->rings))
			return EXIT_KERNEL;
		prefault_array(dp->sk.dc_tc->maps.lh_pool);
		prefault_array(dp->sk.dc_tc->maps.lh_ring);
	}
	/* the config is attach_lr2()'s to write */
	if (fill_peers(dp, cfg))
		return EXIT_KERNEL;
	dp->kick_fd = lhd_prog_fd(dp, dp->sk.dc_tc->progs.lh_dc_kick);
	dp->cmd_fd = lhd_prog_fd(dp, dp->sk.dc_tc->progs.lh_dc_cmd);
	return dp->kick_fd < 0 || dp->cmd_fd < 0 ? EXIT_KERNEL : 0;
}

int attach_lr2(struct lhd_datapath *dp, const struct lhd_config *cfg)
{
	const struct lhd_skels *sk = &dp->sk;
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

	fd = attach_xdp(dp, lhd_prog_fd(dp, sk->dc_xdp->progs.lh_dc_xdp), &cfg->dc, "dc",
			"lh_dc_xdp", cfg);
	if (fd < 0)
		return fd == -EBUSY ? EXIT_BUSY : EXIT_KERNEL;
	dp->xdp_links[0] = fd;
	/* every WAN interface the same: the programs find a QP by its key, whichever path */
	for (i = 0; i < cfg->n_wan; i++) {
		fd = attach_xdp(dp, lhd_prog_fd(dp, sk->wan_xdp->progs.lh_wan_xdp), &cfg->wan[i],
				"wan", "lh_wan_xdp", cfg);
		if (fd < 0)
			return fd == -EBUSY ? EXIT_BUSY : EXIT_KERNEL;
		dp->xdp_links[1 + i] = fd;
	}
	dp->tc_prio = LHD_TC_PRIO_LR2;
	if (attach_tc(dp, lhd_prog_fd(dp, sk->dc_tc->progs.lh_dc_in), "lh_dc_in", cfg->dc.ifindex,
		      cfg->dc.name, true, true, cfg->pin_dir) ||
	    attach_tc(dp, lhd_prog_fd(dp, sk->dc_tc->progs.lh_dc_out), "lh_dc_out",
		      cfg->dc.ifindex, cfg->dc.name, false, true, cfg->pin_dir))
		return EXIT_KERNEL;
	for (i = 0; i < cfg->n_wan; i++)
		if (attach_tc(dp, lhd_prog_fd(dp, sk->wan_tc->progs.lh_wan_in), "lh_wan_in",
			      cfg->wan[i].ifindex, cfg->wan[i].name, true, true, cfg->pin_dir))
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
	int rc;

	rc = load_obj(dp, LHD_OBJ_CREDIT_TC, cfg, NULL);
	if (rc)
		return rc;
	if (bpf_map_update_elem(lhd_map_fd(dp->sk.credit_tc->maps.lh_cr_config), &zero, &cc,
				BPF_ANY)) {
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
	prog = lhd_prog_fd(dp, dp->sk.credit_tc->progs.lh_cr_out);
	/* last on each egress: after an LR2 agent's lh_dc_out on the same DC interface */
	dp->tc_prio = LHD_TC_PRIO_CREDIT;
	for (i = 0; i < n; i++)
		if (attach_tc(dp, prog, "lh_cr_out", ifs[i]->ifindex, ifs[i]->name, false, false,
			      cfg->pin_dir))
			return EXIT_KERNEL;
	return 0;
}
