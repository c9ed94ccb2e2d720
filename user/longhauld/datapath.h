/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Loading, attaching and detaching longhaul's BPF programs on a gateway. */
#ifndef LONGHAULD_DATAPATH_H
#define LONGHAULD_DATAPATH_H

#include "config.h"

struct bpf_object;
struct bpf_link;

#define LHD_MAX_LINKS 4
#define LHD_MAX_OBJS 4

struct lhd_datapath {
	struct bpf_object *objs[LHD_MAX_OBJS];
	int nr_objs;
	int xdp_links[2]; /* bpf_link fds of the XDP programs (DC, WAN), -1 when none */
	struct bpf_link *tc_links[3]; /* tcx links (DC ingress, DC egress, WAN ingress) */
	bool tc_legacy; /* attached with a clsact qdisc (kernels without tcx) */
	bool clsact_created; /* ... that we created, so we remove it */
	int kick_fd; /* lh_dc_kick, run by the agent */
	/* credit mode: lh_cr_out on tcx egress of every credit interface */
	struct bpf_link *cr_links[LHD_MAX_CR_ROUTES + 1];
	int cr_ifindex[LHD_MAX_CR_ROUTES + 1];
	int nr_cr;
};

/*
 * Open, size, load the programs of cfg->mode with maps pinned (shared) under
 * cfg->pin_dir, fill the free lists and the config, attach. On error, logs
 * the step and returns EXIT_*; what was done is undone.
 */
int lhd_datapath_up(struct lhd_datapath *dp, const struct lhd_config *cfg);
/* Detach, and unpin unless cfg->keep_pins */
void lhd_datapath_down(struct lhd_datapath *dp, const struct lhd_config *cfg);
/* fd of a map by name, -1 when the data path has none */
int lhd_map_fd(const struct lhd_datapath *dp, const char *name);

#endif /* LONGHAULD_DATAPATH_H */
