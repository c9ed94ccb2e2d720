/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the CLI reads of an agent: its lock file (who runs, with which
 * options) and its pinned maps, each opened read-only and checked against
 * the structs compiled into this build before anything in it is trusted.
 * target.c: which agent; agent.c: its lock file; map_specs.c: what this
 * build expects of each map; map_open.c: opening and checking a pin;
 * map_read.c: reading entries.
 */
#ifndef LONGHAUL_PINS_H
#define LONGHAUL_PINS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/bpf.h>

#include "longhaul.h"

/* ---- the agent's lock file (agent.c) ---- */

#define AGENT_KV_MAX 32

/* One field of the lock file's flat JSON object */
struct agent_kv {
	char key[32];
	char str[256]; /* a list of strings (["a","b"]): its items, each ended by '\n' */
	bool is_num;
	bool is_list;
	long long num;
};

struct agent_info {
	char lock_path[PATH_MAX]; /* the lock file found ("" when none) */
	bool lock_exists;
	bool running; /* the lock is held: an agent runs */
	int holder_pid; /* who holds it (/proc/locks), 0 when unknown */
	int nr_kv;
	struct agent_kv kv[AGENT_KV_MAX];
};

/* Set pin directory and lock path from --instance / --pin-dir (both may be NULL) */
int target_init(struct lh_target *t, const char *instance, const char *pin_dir);
/* "instance 'x'", "the default instance" or "pin directory D", for messages */
const char *target_name(const struct lh_target *t);

/* Read the target's lock file and whether it is held; false when there is none */
bool agent_probe(const struct lh_target *t, struct agent_info *ai);
/* The same for one lock file */
bool agent_probe_file(const char *lock_path, struct agent_info *ai);
const char *agent_str(const struct agent_info *ai, const char *key);
bool agent_num(const struct agent_info *ai, const char *key, long long *v);
/* The agent's pid: the lock holder's, else the lock file's; 0 when unknown */
int agent_pid(const struct agent_info *ai);
bool pid_alive(int pid);
/* After "no longhauld runs": the instances that do, if any ("longhaul: running: a, b ...") */
void hint_running_instances(void);

/* ---- pinned maps (map_specs.c, map_open.c, map_read.c) ---- */

struct field_spec {
	const char *name;
	uint32_t off;
	uint32_t size;
};

struct struct_spec {
	const char *name; /* the struct's name in BTF */
	const struct field_spec *fields;
	unsigned int nr_fields;
};

/* What this build expects of a pinned map */
struct map_spec {
	const char *name;
	enum bpf_map_type type;
	uint32_t key_size;
	uint32_t value_size; /* per CPU for per-CPU maps */
	const struct struct_spec *key; /* checked by BTF when the map has it */
	const struct struct_spec *value;
	const struct struct_spec *aux; /* another struct of the map's BTF, looked up by name */
};

extern const struct map_spec lh_map_specs[];
extern const unsigned int lh_nr_map_specs;
const struct map_spec *map_spec_find(const char *name);

struct pinned_map {
	const struct map_spec *spec; /* NULL for a map this build does not know */
	int fd;
	struct bpf_map_info info;
	char why[PIN_DIR_MAX + 512]; /* why it is missing or incompatible */
};

/*
 * Open <pin_dir>/<name> read-only and check type, key and value size and,
 * when the map carries BTF, the offset and size of every field this build
 * reads. Returns 0, LH_EXIT_NO_AGENT (no such pin), LH_EXIT_INCOMPAT or
 * LH_EXIT_ERROR; pm->why says why. Prints nothing.
 */
int map_get(const struct lh_target *t, const char *name, struct pinned_map *pm);
/* map_get, printing on failure what is wrong and what to do about it */
int map_open(const struct lh_target *t, const char *name, struct pinned_map *pm);
void map_close(struct pinned_map *pm);
/* Bytes of one CPU's value in a per-CPU map: the kernel rounds up to 8 */
uint32_t percpu_stride(const struct pinned_map *pm);
int possible_cpus(void);
/* bpf_map_lookup_elem_flags; with BPF_F_LOCK on a map without a spin lock, a plain copy */
int map_lookup(int fd, const void *key, void *val, __u64 elem_flags);
/*
 * Every entry of a hash map (at most max_entries), in batches where the
 * kernel has them, else key by key: *keys holds n keys of key_size bytes,
 * *vals n values of value_size bytes, both malloc'ed (NULL when n is 0).
 * elem_flags: BPF_F_LOCK copies each value under its spin lock (dropped
 * for a map without one). Returns 0 or -errno.
 */
int map_read_all(const struct pinned_map *pm, __u64 elem_flags, void **keys, void **vals,
		 __u32 *n);
/* Warn once when the pins read have no running agent (left by --keep-pins or a crash) */
void warn_if_stopped(const struct lh_target *t);

#endif /* LONGHAUL_PINS_H */
