/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the loader's files share: datapath.c (open, load, attach, detach),
 * datapath_modes.c (each mode's objects, config and attach: LR2, credit,
 * observe), datapath_kept.c (a data path kept running by a stopped agent:
 * its pins, the build id, adopting it, whether it passed packets alone).
 */
#ifndef LONGHAULD_DATAPATH_INT_H
#define LONGHAULD_DATAPATH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bpf/libbpf.h>

#include "datapath.h"

struct bpf_object;
struct lh_iface;

/* fd of a map a mode may not have (NULL: -1, said by nobody) */
static inline int fd_if_any(const struct bpf_map *m)
{
	return m ? bpf_map__fd(m) : -1;
}

/* datapath.c */
const char *errstr(int err);
int load_obj(struct lhd_datapath *dp, enum lhd_obj id, const struct lhd_config *cfg,
	     int (*setup)(struct lhd_datapath *, const struct lhd_config *));
int attach_xdp(struct lhd_datapath *dp, int prog_fd, const struct lh_iface *ifc,
	       const char *role, const char *prog, const struct lhd_config *cfg);
int attach_tc(struct lhd_datapath *dp, int prog_fd, const char *prog, int ifindex,
	      const char *ifname, bool ingress, bool first, const char *pin_dir);

/* datapath_modes.c */
int load_observe(struct lhd_datapath *dp, const struct lhd_config *cfg);
int attach_observe(struct lhd_datapath *dp, const struct lhd_config *cfg);
uint32_t agentless_ms(const struct lhd_config *cfg);
int load_lr2(struct lhd_datapath *dp, const struct lhd_config *cfg);
int attach_lr2(struct lhd_datapath *dp, const struct lhd_config *cfg);
int load_credit(struct lhd_datapath *dp, const struct lhd_config *cfg);
int attach_credit(struct lhd_datapath *dp, const struct lhd_config *cfg);

/* datapath_skel.c */
int mode_objects(enum lh_mode mode, enum lhd_obj *ids);
const char *obj_name(enum lhd_obj id);
const void *obj_elf(enum lhd_obj id, size_t *sz);
struct bpf_object *skel_obj(const struct lhd_skels *sk, enum lhd_obj id);
/* open id's skeleton into sk (or take the one a look opened); its object, NULL on error */
struct bpf_object *open_skel(struct lhd_skels *sk, enum lhd_obj id, const char *pin_dir);
/* open id's skeleton for a look before the load, which takes it (close_opened() if not) */
struct bpf_object *open_for_look(enum lhd_obj id, const char *pin_dir);
int load_skel(struct lhd_skels *sk, enum lhd_obj id);
void destroy_skels(struct lhd_skels *sk);
void close_opened(void);
/* the config option a pinned map's size comes from (&cfg->max_qps ...), NULL none */
uint32_t *sized_by(struct lhd_config *cfg, const char *map, const char **opt);

/* datapath_kept.c */
int reuse_progs(struct lhd_datapath *dp, struct bpf_object *obj, const char *pin_dir);
int reuse_maps(struct bpf_object *obj);
void link_pin_path(char *buf, size_t size, const char *pin_dir, const char *prog,
		   const char *ifname);
int adopt_xdp(int prog_fd, const struct lh_iface *ifc, const char *prog,
	      const char *pin_dir);
bool kept_passed(struct lhd_datapath *dp, uint64_t *before);
bool kept_passed_since(struct lhd_datapath *dp, uint64_t before);
int kept_links(const char *pin_dir, bool unpin);
uint64_t build_id(const struct lhd_config *cfg);
bool same_build(const struct lhd_config *cfg, uint64_t build);
void unpin_progs(const char *pin_dir, uint64_t build, bool all);
void pin_progs(struct lhd_datapath *dp, const struct lhd_config *cfg);
void mark_agentless(struct lhd_datapath *dp);
void keep_links(struct lhd_datapath *dp, const struct lhd_config *cfg);

#endif
