// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Opening a pinned map: read-only (BPF_F_RDONLY: the CLI cannot change it),
 * checked against what this build expects (map_specs.c) before its bytes are
 * read, and on failure what is wrong and what to do about it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "pins.h"

static const char *map_type_str(enum bpf_map_type type)
{
	const char *s = libbpf_bpf_map_type_str(type);

	return s ? s : "unknown";
}

/*
 * The member of struct t named by path ("flags", or "d.deliv" inside a nested
 * struct): its offset in bits from the outer struct and its type; false when
 * there is none
 */
static bool find_member(const struct btf *btf, const struct btf_type *t, const char *path,
			__u32 *bit_off, __u32 *type_id)
{
	const char *dot = strchr(path, '.');
	size_t len = dot ? (size_t)(dot - path) : strlen(path);
	const struct btf_member *m = btf_members(t);
	unsigned int i;
	__u32 inner;
	int id;

	*bit_off = 0;
	for (i = 0; i < btf_vlen(t); i++) {
		const char *mn = btf__name_by_offset(btf, m[i].name_off);

		if (mn && strlen(mn) == len && !strncmp(mn, path, len))
			break;
	}
	if (i == btf_vlen(t))
		return false;
	*bit_off = btf_member_bit_offset(t, i);
	*type_id = m[i].type;
	if (!dot)
		return true;
	id = btf__resolve_type(btf, m[i].type);
	t = id < 0 ? NULL : btf__type_by_id(btf, (__u32)id);
	if (!t || !btf_is_struct(t) || !find_member(btf, t, dot + 1, &inner, type_id))
		return false;
	*bit_off += inner;
	return true;
}

/*
 * The struct type_id of btf (after typedefs and qualifiers) against what
 * this build reads of it: every field at the same offset with the same size.
 * This catches what sizes alone cannot: fields reordered or renamed.
 */
static bool check_struct(const struct btf *btf, __u32 type_id, const struct struct_spec *ss,
			 char *why, size_t size)
{
	const struct btf_type *t;
	const char *name;
	unsigned int k;
	int id;

	id = btf__resolve_type(btf, type_id);
	t = id < 0 ? NULL : btf__type_by_id(btf, (__u32)id);
	if (!t || !btf_is_struct(t)) {
		snprintf(why, size, "its BTF type is not a struct (this build expects struct %s)",
			 ss->name);
		return false;
	}
	name = btf__name_by_offset(btf, t->name_off);
	if (!name || strcmp(name, ss->name) != 0) {
		snprintf(why, size, "it holds struct %s, this build expects struct %s",
			 name && *name ? name : "(anonymous)", ss->name);
		return false;
	}
	for (k = 0; k < ss->nr_fields; k++) {
		const struct field_spec *f = &ss->fields[k];
		__u32 bit_off, mtype;
		__s64 msize;

		if (!find_member(btf, t, f->name, &bit_off, &mtype)) {
			snprintf(why, size, "struct %s has no field %s", ss->name, f->name);
			return false;
		}
		msize = btf__resolve_size(btf, mtype);
		if (bit_off != f->off * 8 || msize != (__s64)f->size) {
			snprintf(why, size,
				 "%s.%s is %lld bytes at offset %u there, %u bytes at offset %u in "
				 "this build",
				 ss->name, f->name, (long long)msize, bit_off / 8, f->size, f->off);
			return false;
		}
	}
	return true;
}

static bool check_btf(const struct pinned_map *pm, char *why, size_t size)
{
	const struct map_spec *s = pm->spec;
	struct btf *btf;
	bool ok = true;
	int id;

	if (!pm->info.btf_id || (!s->key && !s->value && !s->aux))
		return true;
	btf = btf__load_from_kernel_by_id(pm->info.btf_id);
	if (!btf) {
		pr_debug("BTF of %s: %s: field offsets not checked\n", s->name, strerror(errno));
		return true;
	}
	if (s->key && pm->info.btf_key_type_id)
		ok = check_struct(btf, pm->info.btf_key_type_id, s->key, why, size);
	if (ok && s->value && pm->info.btf_value_type_id)
		ok = check_struct(btf, pm->info.btf_value_type_id, s->value, why, size);
	if (ok && s->aux) {
		id = btf__find_by_name_kind(btf, s->aux->name, BTF_KIND_STRUCT);
		if (id > 0)
			ok = check_struct(btf, (__u32)id, s->aux, why, size);
	}
	btf__free(btf);
	return ok;
}

/* An fd of bpffs may be a program or a link as well: only maps are wanted */
static bool fd_is_map(int fd)
{
	char link[64], target[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return true; /* no /proc: the info call below is all we have */
	target[n] = 0;
	return !strcmp(target, "anon_inode:bpf-map");
}

int map_get(const struct lh_target *t, const char *name, struct pinned_map *pm)
{
	LIBBPF_OPTS(bpf_obj_get_opts, o, .file_flags = BPF_F_RDONLY);
	const struct map_spec *s = map_spec_find(name);
	char path[PIN_DIR_MAX + 32], detail[320];
	__u32 len = sizeof(pm->info);
	int err;

	memset(pm, 0, sizeof(*pm));
	pm->spec = s;
	pm->fd = -1;
	snprintf(path, sizeof(path), "%s/%s", t->pin_dir, name);
	pm->fd = bpf_obj_get_opts(path, &o);
	if (pm->fd < 0) {
		err = errno;
		if (err == ENOENT || err == ENOTDIR) {
			snprintf(pm->why, sizeof(pm->why), "%s is not pinned", path);
			return LH_EXIT_NO_AGENT;
		}
		if (err == EINVAL) {
			snprintf(pm->why, sizeof(pm->why), "%s is not a BPF map", path);
			return LH_EXIT_INCOMPAT;
		}
		snprintf(pm->why, sizeof(pm->why), "open %s: %s%s", path, strerror(err),
			 err == EPERM || err == EACCES ? " (pinned maps are read as root)" : "");
		return LH_EXIT_ERROR;
	}
	if (!fd_is_map(pm->fd) || bpf_map_get_info_by_fd(pm->fd, &pm->info, &len)) {
		snprintf(pm->why, sizeof(pm->why), "%s is not a BPF map", path);
		return LH_EXIT_INCOMPAT;
	}
	if (!s)
		return 0;
	if (pm->info.type != s->type) {
		snprintf(pm->why, sizeof(pm->why),
			 "%s is a map of type %s, this build expects type %s", path,
			 map_type_str(pm->info.type), map_type_str(s->type));
		return LH_EXIT_INCOMPAT;
	}
	if (pm->info.key_size != s->key_size || pm->info.value_size != s->value_size) {
		snprintf(pm->why, sizeof(pm->why),
			 "%s has %u-byte keys and %u-byte values, this build expects %u and %u",
			 path, pm->info.key_size, pm->info.value_size, s->key_size, s->value_size);
		return LH_EXIT_INCOMPAT;
	}
	if (!check_btf(pm, detail, sizeof(detail))) {
		snprintf(pm->why, sizeof(pm->why), "%s: %s", path, detail);
		return LH_EXIT_INCOMPAT;
	}
	return 0;
}

/* Maps only the LR2 data path has: an observe-mode agent pins lh_stats and lh_opcodes */
static bool lr2_only(const char *name)
{
	return strcmp(name, "lh_stats") != 0 && strcmp(name, "lh_opcodes") != 0;
}

int map_open(const struct lh_target *t, const char *name, struct pinned_map *pm)
{
	struct agent_info ai;
	const char *mode;
	int rc = map_get(t, name, pm);

	if (!rc)
		return 0;
	if (rc == LH_EXIT_INCOMPAT) {
		pr_err("pinned map incompatible with this build of longhaul: %s\n"
		       "  (agent and CLI must come from the same headers: rebuild longhaul,\n"
		       "  or restart longhauld from this build)\n",
		       pm->why);
	} else if (rc != LH_EXIT_NO_AGENT) {
		pr_err("%s\n", pm->why);
	} else if (agent_probe(t, &ai) && ai.running) {
		mode = agent_str(&ai, "mode");
		if (mode && !strcmp(mode, "observe") && lr2_only(name))
			pr_err("the longhauld of %s (pid %d) runs in observe mode: it keeps no %s "
			       "(only lr2 mode has QPs and pools)\n",
			       target_name(t), agent_pid(&ai), name);
		else
			pr_err("the longhauld of %s (pid %d) runs, but %s (still starting?)\n",
			       target_name(t), agent_pid(&ai), pm->why);
	} else {
		pr_err("no longhauld runs for %s: %s\n", target_name(t), pm->why);
		hint_running_instances();
	}
	map_close(pm);
	return rc;
}

void map_close(struct pinned_map *pm)
{
	if (pm->fd >= 0)
		close(pm->fd);
	pm->fd = -1;
}

uint32_t percpu_stride(const struct pinned_map *pm)
{
	return (pm->info.value_size + 7) & ~7U;
}

int possible_cpus(void)
{
	int n = libbpf_num_possible_cpus();

	return n > 0 ? n : 1;
}

void warn_if_stopped(const struct lh_target *t)
{
	static bool warned;
	struct agent_info ai;

	if (warned)
		return;
	warned = true;
	if (!agent_probe(t, &ai) || !ai.running)
		pr_warn("no longhauld runs for %s: reading the pins it left behind (--keep-pins "
			"or a crash)\n",
			target_name(t));
}
