// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The typed skeletons of the BPF objects (bpftool gen skeleton, as in
 * libbpf-bootstrap): which objects each mode runs, opening one (or taking it
 * from those a fit check opened), loading and destroying it, and the fds of
 * its programs and maps reached through the skeleton's fields.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "credit_tc.skel.h"
#include "datapath.h"
#include "datapath_int.h"
#include "dc_tc.skel.h"
#include "dc_xdp.skel.h"
#include "log.h"
#include "observe.skel.h"
#include "wan_tc.skel.h"
#include "wan_xdp.skel.h"

/* What the loader does to one kind of object, through its own skeleton type */
struct skel_ops {
	const char *name;
	const void *(*elf)(size_t *sz);
	int (*open)(struct lhd_skels *sk, const struct bpf_object_open_opts *o);
	struct bpf_object *(*obj)(const struct lhd_skels *sk);
	int (*load)(struct lhd_skels *sk);
	void (*move)(struct lhd_skels *to, struct lhd_skels *from);
	void (*destroy)(struct lhd_skels *sk);
};

#define SKEL_OPS(n)                                                                         \
	static const void *n##_elf(size_t *sz)                                              \
	{                                                                                   \
		return n##_bpf__elf_bytes(sz);                                              \
	}                                                                                   \
	static int n##_open(struct lhd_skels *sk, const struct bpf_object_open_opts *o)     \
	{                                                                                   \
		sk->n = n##_bpf__open_opts(o);                                              \
		return sk->n ? 0 : -errno;                                                  \
	}                                                                                   \
	static struct bpf_object *n##_obj(const struct lhd_skels *sk)                       \
	{                                                                                   \
		return sk->n ? sk->n->obj : NULL;                                           \
	}                                                                                   \
	static int n##_load(struct lhd_skels *sk)                                           \
	{                                                                                   \
		return n##_bpf__load(sk->n);                                                \
	}                                                                                   \
	static void n##_move(struct lhd_skels *to, struct lhd_skels *from)                  \
	{                                                                                   \
		to->n = from->n;                                                            \
		from->n = NULL;                                                             \
	}                                                                                   \
	static void n##_destroy(struct lhd_skels *sk)                                       \
	{                                                                                   \
		n##_bpf__destroy(sk->n);                                                    \
		sk->n = NULL;                                                               \
	}

SKEL_OPS(wan_xdp)
SKEL_OPS(dc_xdp)
SKEL_OPS(dc_tc)
SKEL_OPS(wan_tc)
SKEL_OPS(observe)
SKEL_OPS(credit_tc)

#define OPS(n) { #n, n##_elf, n##_open, n##_obj, n##_load, n##_move, n##_destroy }
static const struct skel_ops skel_ops[LHD_OBJ_NR] = {
	[LHD_OBJ_WAN_XDP] = OPS(wan_xdp), [LHD_OBJ_DC_XDP] = OPS(dc_xdp),
	[LHD_OBJ_DC_TC] = OPS(dc_tc),	  [LHD_OBJ_WAN_TC] = OPS(wan_tc),
	[LHD_OBJ_OBSERVE] = OPS(observe), [LHD_OBJ_CREDIT_TC] = OPS(credit_tc),
};

int mode_objects(enum lh_mode mode, enum lhd_obj *ids)
{
	static const enum lhd_obj lr2[] = { LHD_OBJ_WAN_XDP, LHD_OBJ_DC_XDP, LHD_OBJ_DC_TC,
					    LHD_OBJ_WAN_TC };
	int n = 0;

	if (mode == MODE_OBSERVE) {
		ids[n++] = LHD_OBJ_OBSERVE;
	} else if (mode == MODE_CREDIT) {
		ids[n++] = LHD_OBJ_CREDIT_TC;
	} else {
		for (n = 0; n < (int)(sizeof(lr2) / sizeof(lr2[0])); n++)
			ids[n] = lr2[n];
	}
	return n;
}

const char *obj_name(enum lhd_obj id)
{
	return skel_ops[id].name;
}

const void *obj_elf(enum lhd_obj id, size_t *sz)
{
	return skel_ops[id].elf(sz);
}

struct bpf_object *skel_obj(const struct lhd_skels *sk, enum lhd_obj id)
{
	return skel_ops[id].obj(sk);
}

/*
 * Skeletons opened (not loaded) by lhd_datapath_maps_fit() and same_build(),
 * for the load that follows: an open parses the ELF and its BTF, about 4 ms
 * an object here, and an adopting agent's time to take over is time its data
 * path is alone (it has 100 ms before it lets every packet pass).
 */
static struct lhd_skels opened;

struct bpf_object *open_skel(struct lhd_skels *into, enum lhd_obj id, const char *pin_dir)
{
	/* the skeleton's own object name: its internal maps (.rodata) are named after it */
	LIBBPF_OPTS(bpf_object_open_opts, o, .pin_root_path = pin_dir);
	const struct skel_ops *op = &skel_ops[id];

	if (op->obj(into))
		return op->obj(into);
	if (into != &opened && op->obj(&opened)) {
		op->move(into, &opened);
		return op->obj(into);
	}
	if (op->open(into, &o))
		return NULL;
	return op->obj(into);
}

/* A skeleton for a look before the load (it stays opened for that load) */
struct bpf_object *open_for_look(enum lhd_obj id, const char *pin_dir)
{
	return open_skel(&opened, id, pin_dir);
}

int load_skel(struct lhd_skels *sk, enum lhd_obj id)
{
	return skel_ops[id].load(sk);
}

void destroy_skels(struct lhd_skels *sk)
{
	int id;

	for (id = LHD_OBJ_NR - 1; id >= 0; id--)
		skel_ops[id].destroy(sk);
}

void close_opened(void)
{
	destroy_skels(&opened);
}

int lhd_prog_fd(const struct lhd_datapath *dp, const struct bpf_program *prog)
{
	const char *name = bpf_program__name(prog);
	int i, fd = -1;

	if (dp->reused) {
		for (i = 0; i < dp->nr_progs; i++)
			if (!strcmp(dp->progs[i].name, name))
				fd = dp->progs[i].fd;
	} else {
		fd = bpf_program__fd(prog);
	}
	if (fd < 0)
		pr_warn("program %s: not loaded\n", name);
	return fd;
}

int lhd_map_fd(const struct bpf_map *map)
{
	int fd = map ? bpf_map__fd(map) : -1;

	if (fd < 0)
		pr_warn("map %s: not loaded\n", map ? bpf_map__name(map) : "(none)");
	return fd;
}

struct bpf_map *lhd_stats_map(const struct lhd_datapath *dp)
{
	if (dp->sk.dc_tc)
		return dp->sk.dc_tc->maps.lh_stats;
	if (dp->sk.observe)
		return dp->sk.observe->maps.lh_stats;
	return dp->sk.credit_tc ? dp->sk.credit_tc->maps.lh_stats : NULL;
}

struct bpf_map *lhd_config_map(const struct lhd_datapath *dp)
{
	return dp->sk.dc_tc ? dp->sk.dc_tc->maps.lh_config : NULL;
}
