/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Loading, attaching and detaching longhaul's BPF programs on a gateway. */
#ifndef LONGHAULD_DATAPATH_H
#define LONGHAULD_DATAPATH_H

#include <stdint.h>
#include <time.h>

#include "clock.h"
#include "config.h"

struct bpf_object;
struct bpf_link;
struct bpf_map;
struct bpf_program;
/* the typed skeletons (bpftool gen skeleton: build/skel/NAME.skel.h) */
struct wan_xdp_bpf;
struct dc_xdp_bpf;
struct dc_tc_bpf;
struct wan_tc_bpf;
struct observe_bpf;
struct credit_tc_bpf;

/* The BPF objects longhauld runs; a mode runs some of them (mode_objects) */
enum lhd_obj {
	LHD_OBJ_WAN_XDP, /* lr2: Depot and Sentry decisions on the WAN interfaces */
	LHD_OBJ_DC_XDP, /* lr2: the Sentry on the DC interface */
	LHD_OBJ_DC_TC, /* lr2: releases, replays, the agent's kick and commands */
	LHD_OBJ_WAN_TC, /* lr2: the Sentry's re-sends on the WAN interfaces */
	LHD_OBJ_OBSERVE, /* observe: parse, count, pass */
	LHD_OBJ_CREDIT_TC, /* credit: a hop of credit-based flow control */
	LHD_OBJ_NR,
};

/*
 * The skeletons of the running mode's objects, NULL where the mode has none:
 * its programs and maps are reached as skel->progs.NAME and skel->maps.NAME.
 * The LR2 objects share their maps (pinned by name): dc_tc holds them all.
 */
struct lhd_skels {
	struct wan_xdp_bpf *wan_xdp;
	struct dc_xdp_bpf *dc_xdp;
	struct dc_tc_bpf *dc_tc;
	struct wan_tc_bpf *wan_tc;
	struct observe_bpf *observe;
	struct credit_tc_bpf *credit_tc;
};

#define LHD_MAX_OBJS 4
/* programs of all objects of a mode (LR2: 7) */
#define LHD_MAX_PROGS 16
/* TC attachments of one agent: LR2 2 + one per WAN, credit the DC and every route interface */
#define LHD_MAX_TC (LHD_MAX_CR_ROUTES + LHD_MAX_WAN + 2)

/*
 * Where TC programs go when two longhaulds share a hook (lr2 and credit on
 * one gateway: lh_dc_out and lh_cr_out on the DC egress). LR2's go first:
 * they drop, release and create packets that the credit program must judge
 * as they really leave. tcx: LR2 at the head of the chain (BPF_F_BEFORE),
 * credit at the end (BPF_F_AFTER). clsact (kernels without tcx): cls_bpf
 * filters of handle 1 at these priorities, the lower first.
 */
#define LHD_TC_PRIO_LR2 1
#define LHD_TC_PRIO_CREDIT 2

/* One TC program attached: a tcx link, or a cls_bpf filter of ours on clsact */
struct lhd_tc {
	int link_fd; /* tcx; -1 for a clsact filter */
	int ifindex;
	bool ingress;
	bool clsact_created; /* the clsact qdisc was made for this filter (ours to remove) */
	char pin[PIN_DIR_MAX + 64]; /* where a stop that keeps the data path pins the link */
};

struct lhd_datapath {
	struct lhd_skels sk;
	/* the objects of sk, in load order, for what is done to each alike (pins, sizes) */
	struct bpf_object *objs[LHD_MAX_OBJS];
	int nr_objs;
	/* bpf_link fds of the XDP programs (DC, then each WAN), -1 when none */
	int xdp_links[1 + LHD_MAX_WAN];
	struct lhd_tc tc[LHD_MAX_TC];
	int nr_tc;
	bool tc_legacy; /* attached with a clsact qdisc (kernels without tcx) */
	uint32_t tc_prio; /* the clsact priority of this agent's filters (LHD_TC_PRIO_*) */
	/*
	 * The programs of a kept data path of this very build, reused from their
	 * pins (prog_BUILD_NAME) without a load: the objects are opened, not
	 * loaded, their pinned maps taken by fd (lhd_datapath_load)
	 */
	bool reused;
	uint64_t build; /* this build's id (the objects' ELF bytes hashed) */
	int nr_progs;
	struct {
		char name[64];
		int fd;
	} progs[LHD_MAX_PROGS];
	int kick_fd; /* lh_dc_kick, run by the agent */
	int cmd_fd; /* lh_dc_cmd, the agent's commands */
	/*
	 * A data path a stopped agent kept running (--keep, SIGUSR2) was found
	 * under the pin directory and taken over: its maps with what they held,
	 * its links given this agent's programs (bpf_link_update)
	 */
	bool adopted;
	/*
	 * ... but it let packets pass while no agent had it (past agentless_ms,
	 * during this agent's start): its QPs no longer know where their NICs
	 * are (a Depot held what its receiver had ACKed, waiting on a PSN that
	 * never came: a QP error). The agent forgets them; they are learned
	 * anew, mid-flight (wide).
	 */
	bool stale;
	/* how long it was without an agent when this one took it (stale only), in ms */
	uint32_t alone_ms;
	/* the pinned maps are this agent's to remove at a stop: made by it, or adopted and attached */
	bool owner;
};

/*
 * Before lhd_datapath_up, under the instance lock: whether a stopped agent
 * left a data path running under cfg->pin_dir (its links pinned). One whose
 * maps this build can use is adopted: cfg's map sizes become the pinned
 * ones (said when they differ from the config). One it cannot use (another
 * layout: an older or newer build) is taken down, said so, and 0 returned:
 * its QPs fall back to their NICs' go-back-N. Returns 1 to adopt, 0 to
 * start fresh.
 */
int lhd_datapath_probe_kept(struct lhd_config *cfg);
/*
 * Whether this build can use the maps pinned under cfg->pin_dir as they are
 * (a running agent's, for --takeover); their sizes go into cfg
 */
bool lhd_datapath_maps_fit(struct lhd_config *cfg);
/*
 * Open, size, load the programs of cfg->mode with maps pinned (shared) under
 * cfg->pin_dir, fill the free lists and the config, attach. adopt (from
 * lhd_datapath_probe_kept): reuse the pinned maps as they are and move the
 * pinned links to the new programs. On error, logs the step and returns
 * EXIT_*; what was done is undone.
 */
int lhd_datapath_up(struct lhd_datapath *dp, const struct lhd_config *cfg, bool adopt);
/*
 * lhd_datapath_up in two steps: load (open, size, verify, fill), then attach.
 * A takeover loads while the agent it replaces still runs and attaches once
 * that one has stopped, keeping its data path. On error each undoes all.
 */
int lhd_datapath_load(struct lhd_datapath *dp, const struct lhd_config *cfg, bool adopt);
int lhd_datapath_attach(struct lhd_datapath *dp, const struct lhd_config *cfg);
/*
 * Detach, and unpin unless cfg->keep_pins. keep: leave everything attached
 * and pinned, the links too, for the next agent to adopt.
 */
void lhd_datapath_down(struct lhd_datapath *dp, const struct lhd_config *cfg, bool keep);
/*
 * Whether the running (or kept) data path under cfg->pin_dir runs this very
 * build's programs (their pins carry its build id): a --takeover then needs
 * no load of its own
 */
bool lhd_datapath_same_build(const struct lhd_config *cfg);
/*
 * fd of a program of dp's skeletons (dp->sk.dc_tc->progs.lh_dc_kick): loaded,
 * or reused from its pin; -1 (said) when it has none
 */
int lhd_prog_fd(const struct lhd_datapath *dp, const struct bpf_program *prog);
/* fd of a map of dp's skeletons (dp->sk.dc_tc->maps.lh_events); -1 (said) when none */
int lhd_map_fd(const struct bpf_map *map);
/* lh_stats and lh_config of whichever objects the mode runs (lh_config: lr2 only, else NULL) */
struct bpf_map *lhd_stats_map(const struct lhd_datapath *dp);
struct bpf_map *lhd_config_map(const struct lhd_datapath *dp);
/*
 * lh_config.resend_guard_ms of a round trip of rtt_us (at least --wan-rtt),
 * in whole ms + 1: what the programs take for a copy still in flight
 */
static inline uint32_t lhd_resend_guard_ms(const struct lhd_config *cfg, uint32_t rtt_us)
{
	return (rtt_us > cfg->wan_rtt_us ? rtt_us : cfg->wan_rtt_us) / 1000 + 1;
}
/* QPs learned from now on for a while were mid-flight (LH_QPF_WIDE): not when adopted */
int lhd_datapath_relearn(const struct lhd_datapath *dp, const struct lhd_config *cfg);

#endif /* LONGHAULD_DATAPATH_H */
