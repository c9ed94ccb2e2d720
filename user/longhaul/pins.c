// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The agent as the CLI sees it: its lock file in /run/longhaul (a one-line
 * JSON object, flock'ed while longhauld runs) and its pinned maps. Maps are
 * opened read-only (BPF_F_RDONLY: the CLI cannot change them) and checked
 * against this build's structs (include/) before their bytes are read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "lh_credit.h"
#include "lh_maps.h"
#include "lh_stats.h"
#include "log.h"
#include "pins.h"

/* ---- the target ---- */

int target_init(struct lh_target *t, const char *instance, const char *pin_dir)
{
	memset(t, 0, sizeof(*t));
	if (instance && pin_dir) {
		pr_err("--instance and --pin-dir both name the pin directory: give one\n");
		return LH_EXIT_USAGE;
	}
	if (instance) {
		if (!*instance || strchr(instance, '/') || instance[0] == '.' ||
		    strlen(instance) >= sizeof(t->instance)) {
			pr_err("--instance '%s': not an instance name (as longhauld takes it)\n",
			       instance);
			return LH_EXIT_USAGE;
		}
		snprintf(t->instance, sizeof(t->instance), "%s", instance);
		snprintf(t->pin_dir, sizeof(t->pin_dir), DEFAULT_PIN_ROOT "/%s", instance);
	} else if (pin_dir) {
		if (!*pin_dir || strlen(pin_dir) >= sizeof(t->pin_dir)) {
			pr_err("--pin-dir '%s': not a pin directory\n", pin_dir);
			return LH_EXIT_USAGE;
		}
		snprintf(t->pin_dir, sizeof(t->pin_dir), "%s", pin_dir);
	} else {
		snprintf(t->pin_dir, sizeof(t->pin_dir), DEFAULT_PIN_ROOT);
	}
	lh_lock_path(t->lock_path, sizeof(t->lock_path), t->pin_dir);
	return 0;
}

const char *target_name(const struct lh_target *t)
{
	static char buf[PATH_MAX + 32];

	if (t->instance[0])
		snprintf(buf, sizeof(buf), "instance '%s'", t->instance);
	else if (!strcmp(t->pin_dir, DEFAULT_PIN_ROOT))
		snprintf(buf, sizeof(buf), "the default instance");
	else
		snprintf(buf, sizeof(buf), "pin directory %s", t->pin_dir);
	return buf;
}

/* ---- the lock file ---- */

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return s;
}

/* A JSON string at s (after its opening quote) into buf; returns past the closing quote */
static const char *json_str(const char *s, char *buf, size_t size)
{
	size_t n = 0;

	for (; *s && *s != '"'; s++) {
		char c = *s;

		if (c == '\\' && s[1]) {
			s++;
			c = *s == 'n' ? '\n' : *s == 't' ? '\t' : *s;
		}
		if (n + 1 < size)
			buf[n++] = c;
	}
	buf[n] = 0;
	return *s == '"' ? s + 1 : NULL;
}

/* A list of strings into kv->str, each item followed by '\n' (interface names hold none) */
static const char *json_str_list(const char *s, struct agent_kv *kv)
{
	char item[64];
	size_t n = 0;

	kv->is_list = true;
	for (;;) {
		s = skip_ws(s);
		if (*s == ']')
			return s + 1;
		if (*s++ != '"' || !(s = json_str(s, item, sizeof(item))))
			return NULL;
		if (n + strlen(item) + 2 <= sizeof(kv->str))
			n += (size_t)snprintf(kv->str + n, sizeof(kv->str) - n, "%s\n", item);
		s = skip_ws(s);
		if (*s == ',')
			s++;
		else if (*s != ']')
			return NULL;
	}
}

/* The lock file's flat object: strings, numbers and lists of strings (no nesting) */
static bool parse_lock(const char *s, struct agent_info *ai)
{
	s = skip_ws(s);
	if (*s++ != '{')
		return false;
	for (;;) {
		struct agent_kv kv = { 0 };

		s = skip_ws(s);
		if (*s == '}')
			return true;
		if (*s++ != '"' || !(s = json_str(s, kv.key, sizeof(kv.key))))
			return false;
		s = skip_ws(s);
		if (*s++ != ':')
			return false;
		s = skip_ws(s);
		if (*s == '"') {
			s = json_str(s + 1, kv.str, sizeof(kv.str));
			if (!s)
				return false;
		} else if (*s == '[') {
			s = json_str_list(s + 1, &kv);
			if (!s)
				return false;
		} else {
			char *end;

			kv.num = strtoll(s, &end, 10);
			if (end == s)
				return false;
			kv.is_num = true;
			snprintf(kv.str, sizeof(kv.str), "%lld", kv.num);
			s = end;
			/* a fraction or exponent: keep the integer part */
			while (*s && *s != ',' && *s != '}' && *s != ' ')
				s++;
		}
		if (ai->nr_kv < AGENT_KV_MAX)
			ai->kv[ai->nr_kv++] = kv;
		s = skip_ws(s);
		if (*s == ',')
			s++;
		else if (*s != '}')
			return false;
	}
}

/*
 * Who holds the flock of path, read from /proc/locks (taking the lock to
 * find out would race with an agent starting). Returns the pid, 0 when
 * nobody holds it, -1 when /proc/locks cannot tell.
 */
static int lock_holder(const char *path)
{
	char line[256];
	struct stat st;
	int pid = 0;
	FILE *f;

	if (stat(path, &st))
		return -1;
	f = fopen("/proc/locks", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *tok[10], *save = NULL, *s;
		unsigned int maj, min, n = 0;
		unsigned long ino;

		for (s = strtok_r(line, " \t\n", &save); s && n < 10;
		     s = strtok_r(NULL, " \t\n", &save))
			tok[n++] = s;
		/* "1: FLOCK ADVISORY WRITE <pid> <maj>:<min>:<ino> 0 EOF"; "->" marks a waiter */
		if (n < 8 || strcmp(tok[1], "FLOCK") != 0)
			continue;
		if (sscanf(tok[5], "%x:%x:%lu", &maj, &min, &ino) != 3)
			continue;
		if (ino == st.st_ino && maj == major(st.st_dev) && min == minor(st.st_dev)) {
			pid = atoi(tok[4]);
			if (pid <= 0)
				pid = -2; /* held by a process of another pid namespace */
			break;
		}
	}
	fclose(f);
	return pid;
}

/* Without /proc/locks: a shared lock fails while longhauld holds its exclusive one */
static bool lock_held_by_test(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool held = false;

	if (fd < 0)
		return false;
	if (flock(fd, LOCK_SH | LOCK_NB))
		held = errno == EWOULDBLOCK;
	else
		flock(fd, LOCK_UN);
	close(fd);
	return held;
}

bool agent_probe_file(const char *lock_path, struct agent_info *ai)
{
	char buf[4096];
	ssize_t n;
	int fd, pid;

	memset(ai, 0, sizeof(*ai));
	snprintf(ai->lock_path, sizeof(ai->lock_path), "%s", lock_path);
	fd = open(lock_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ai->lock_exists = true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	if (n > 0 && !parse_lock(buf, ai))
		pr_debug("%s: not the JSON longhauld writes\n", lock_path);
	pid = lock_holder(lock_path);
	if (pid == -1) {
		ai->running = lock_held_by_test(lock_path);
	} else if (pid) {
		ai->running = true;
		ai->holder_pid = pid > 0 ? pid : 0;
	}
	return true;
}

/* Strip trailing slashes: "/a/b/" and "/a/b" are one pin directory */
static void norm_dir(char *d)
{
	size_t n = strlen(d);

	while (n > 1 && d[n - 1] == '/')
		d[--n] = 0;
}

bool agent_probe(const struct lh_target *t, struct agent_info *ai)
{
	char want[PIN_DIR_MAX], path[PATH_MAX + 300];
	struct agent_info cand;
	struct dirent *de;
	bool found = false;
	DIR *d;

	if (agent_probe_file(t->lock_path, ai))
		return true;
	/* the agent names the lock after the pin directory as it was given: "/x/" vs "/x" */
	snprintf(want, sizeof(want), "%s", t->pin_dir);
	norm_dir(want);
	d = opendir(LOCK_DIR);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		const char *pd;
		char have[PIN_DIR_MAX];
		size_t n = strlen(de->d_name);

		if (n < 6 || strcmp(de->d_name + n - 5, ".lock") != 0)
			continue;
		snprintf(path, sizeof(path), LOCK_DIR "/%s", de->d_name);
		if (!agent_probe_file(path, &cand))
			continue;
		pd = agent_str(&cand, "pin_dir");
		if (!pd)
			continue;
		snprintf(have, sizeof(have), "%s", pd);
		norm_dir(have);
		if (!strcmp(have, want)) {
			*ai = cand;
			found = true;
		}
	}
	closedir(d);
	return found;
}

const char *agent_str(const struct agent_info *ai, const char *key)
{
	int i;

	for (i = 0; i < ai->nr_kv; i++)
		if (!strcmp(ai->kv[i].key, key))
			return ai->kv[i].str;
	return NULL;
}

bool agent_num(const struct agent_info *ai, const char *key, long long *v)
{
	int i;

	for (i = 0; i < ai->nr_kv; i++) {
		if (!strcmp(ai->kv[i].key, key) && ai->kv[i].is_num) {
			*v = ai->kv[i].num;
			return true;
		}
	}
	return false;
}

int agent_pid(const struct agent_info *ai)
{
	long long pid;

	if (ai->holder_pid > 0)
		return ai->holder_pid;
	if (agent_num(ai, "pid", &pid) && pid > 0 && pid <= INT32_MAX)
		return (int)pid;
	return 0;
}

bool pid_alive(int pid)
{
	return pid > 0 && (!kill(pid, 0) || errno == EPERM);
}

void running_instances(char *buf, size_t size)
{
	char path[PATH_MAX + 300];
	struct agent_info ai;
	struct dirent *de;
	size_t used = 0;
	DIR *d;

	buf[0] = 0;
	d = opendir(LOCK_DIR);
	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *pd, *name;
		size_t n = strlen(de->d_name);
		int w;

		if (n < 6 || strcmp(de->d_name + n - 5, ".lock") != 0)
			continue;
		snprintf(path, sizeof(path), LOCK_DIR "/%s", de->d_name);
		if (!agent_probe_file(path, &ai) || !ai.running)
			continue;
		pd = agent_str(&ai, "pin_dir");
		if (!pd)
			continue;
		if (!strcmp(pd, DEFAULT_PIN_ROOT))
			name = "(default)";
		else if (!strncmp(pd, DEFAULT_PIN_ROOT "/", sizeof(DEFAULT_PIN_ROOT)))
			name = pd + sizeof(DEFAULT_PIN_ROOT);
		else
			name = pd;
		w = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name);
		if (w < 0 || (size_t)w >= size - used)
			break;
		used += (size_t)w;
	}
	closedir(d);
}

/* ---- what this build expects of each map ---- */

#define FIELD(type, f) { #f, offsetof(struct type, f), sizeof(((struct type *)0)->f) }
#define NR(a) (sizeof(a) / sizeof((a)[0]))

#define STAT_FIELD(name, field, desc) FIELD(lh_stats, field),
static const struct field_spec stats_fields[] = { LH_STATS(STAT_FIELD) };
#undef STAT_FIELD

#define OPCODE_FIELD(name, field, val) FIELD(lh_opcode_stats, field),
static const struct field_spec opcode_fields[] = { ROCE_OPCODES(OPCODE_FIELD) };
#undef OPCODE_FIELD

static const struct field_spec qp_key_fields[] = {
	FIELD(lh_qp_key, saddr),
	FIELD(lh_qp_key, daddr),
	FIELD(lh_qp_key, dqpn),
};

/* The fields of struct lh_qp the CLI prints */
static const struct field_spec qp_fields[] = {
	FIELD(lh_qp, flags),
	FIELD(lh_qp, ring),
	FIELD(lh_qp, peer_qpn),
	FIELD(lh_qp, pkey),
	FIELD(lh_qp, sport),
	FIELD(lh_qp, d.deliv),
	FIELD(lh_qp, d.high),
	FIELD(lh_qp, d.acked),
	FIELD(lh_qp, d.release_after),
	FIELD(lh_qp, d.back_psn),
	FIELD(lh_qp, msn),
	FIELD(lh_qp, s.next),
	FIELD(lh_qp, s.una),
	FIELD(lh_qp, s.acked),
	FIELD(lh_qp, s.replay),
	FIELD(lh_qp, s.end),
	FIELD(lh_qp, s.base),
	FIELD(lh_qp, s.missing),
	FIELD(lh_qp, last_rx_ns),
	FIELD(lh_qp, last_progress_ns),
	FIELD(lh_qp, d.last_nack_ns),
	FIELD(lh_qp, wan_ifindex),
};

static const struct field_spec ring_fields[] = { FIELD(lh_ring, ent) };
static const struct field_spec ring_ent_fields[] = {
	FIELD(lh_ring_ent, slot),
	FIELD(lh_ring_ent, tag),
};

static const struct field_spec cr_flow_fields[] = {
	FIELD(lh_cr_flow, fwd_bytes),	FIELD(lh_cr_flow, fwd_pkts),  FIELD(lh_cr_flow, sent),
	FIELD(lh_cr_flow, held_bytes),	FIELD(lh_cr_flow, held_pkts), FIELD(lh_cr_flow, hold_fail),
	FIELD(lh_cr_flow, redirected),	FIELD(lh_cr_flow, first_ns),  FIELD(lh_cr_flow, last_ns),
	FIELD(lh_cr_flow, flags),
};

static const struct field_spec cr_grant_fields[] = {
	FIELD(lh_cr_grant, state),	    FIELD(lh_cr_grant, active),
	FIELD(lh_cr_grant, npaths),	    FIELD(lh_cr_grant, hold_cap),
	FIELD(lh_cr_grant, limit),	    FIELD(lh_cr_grant, released_bytes),
	FIELD(lh_cr_grant, released_pkts), FIELD(lh_cr_grant, ifindex),
	FIELD(lh_cr_grant, nexthop),	    FIELD(lh_cr_grant, alive),
};

static const struct field_spec config_fields[] = {
	FIELD(lh_config, dc_ifindex),
	FIELD(lh_config, flags),
};

#define STRUCT(n, f) { #n, f, NR(f) }
static const struct struct_spec stats_struct = STRUCT(lh_stats, stats_fields);
static const struct struct_spec opcode_struct = STRUCT(lh_opcode_stats, opcode_fields);
static const struct struct_spec qp_key_struct = STRUCT(lh_qp_key, qp_key_fields);
static const struct struct_spec qp_struct = STRUCT(lh_qp, qp_fields);
static const struct struct_spec ring_struct = STRUCT(lh_ring, ring_fields);
static const struct struct_spec ring_ent_struct = STRUCT(lh_ring_ent, ring_ent_fields);
static const struct struct_spec config_struct = STRUCT(lh_config, config_fields);
static const struct struct_spec cr_flow_struct = STRUCT(lh_cr_flow, cr_flow_fields);
static const struct struct_spec cr_grant_struct = STRUCT(lh_cr_grant, cr_grant_fields);

const struct map_spec lh_map_specs[] = {
	{ "lh_stats", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(struct lh_stats), NULL,
	  &stats_struct, NULL },
	{ "lh_opcodes", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(struct lh_opcode_stats),
	  NULL, &opcode_struct, NULL },
	{ "lh_config", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct lh_config), NULL,
	  &config_struct, NULL },
	{ "lh_qp", BPF_MAP_TYPE_HASH, sizeof(struct lh_qp_key), sizeof(struct lh_qp),
	  &qp_key_struct, &qp_struct, NULL },
	{ "lh_ack", BPF_MAP_TYPE_HASH, sizeof(struct lh_ack_key), sizeof(struct lh_qp_key), NULL,
	  NULL, NULL },
	{ "lh_pair", BPF_MAP_TYPE_HASH, sizeof(struct lh_qp_key), sizeof(__u32), NULL, NULL, NULL },
	{ "lh_ring", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct lh_ring), NULL, &ring_struct,
	  &ring_ent_struct },
	{ "lh_ring_free", BPF_MAP_TYPE_QUEUE, 0, sizeof(__u32), NULL, NULL, NULL },
	{ "lh_pool", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct lh_slot), NULL, NULL, NULL },
	{ "lh_pool_free", BPF_MAP_TYPE_QUEUE, 0, sizeof(__u32), NULL, NULL, NULL },
	{ "lh_events", BPF_MAP_TYPE_RINGBUF, 0, 0, NULL, NULL, NULL },
	/* credit flow control (include/lh_credit.h) */
	{ "lh_cr_flow", BPF_MAP_TYPE_HASH, sizeof(struct lh_qp_key), sizeof(struct lh_cr_flow),
	  &qp_key_struct, &cr_flow_struct, NULL },
	{ "lh_cr_grant", BPF_MAP_TYPE_HASH, sizeof(struct lh_qp_key), sizeof(struct lh_cr_grant),
	  &qp_key_struct, &cr_grant_struct, NULL },
	/* struct lh_cr_stats: one __u64 per enum lh_cr_stat, one entry */
	{ "lh_cr_stats", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(struct lh_cr_stats), NULL,
	  NULL, NULL },
};
const unsigned int lh_nr_map_specs = NR(lh_map_specs);

const struct map_spec *map_spec_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < lh_nr_map_specs; i++)
		if (!strcmp(lh_map_specs[i].name, name))
			return &lh_map_specs[i];
	return NULL;
}

/* ---- opening and checking a pin ---- */

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
	char hint[512];
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
		running_instances(hint, sizeof(hint));
		pr_err("no longhauld runs for %s: %s\n", target_name(t), pm->why);
		if (hint[0])
			fprintf(stderr, "longhaul: running: %s (choose with --instance NAME)\n",
				hint);
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

/* ---- reading every entry of a hash map ---- */

#define READ_BATCH 256

/* One lookup, under the value's spin lock when asked and the map has one */
int map_lookup(int fd, const void *key, void *val, __u64 elem_flags)
{
	if (!bpf_map_lookup_elem_flags(fd, key, val, elem_flags))
		return 0;
	if (!(elem_flags & BPF_F_LOCK) || errno != EINVAL)
		return -errno;
	/* a map without a spin lock in its BTF: a plain copy */
	return bpf_map_lookup_elem(fd, key, val) ? -errno : 0;
}

struct entry_buf {
	__u8 *keys, *vals;
	__u32 n, cap, ksz, vsz;
};

/* Room for more entries: memory for the entries there are, not for max_entries */
static int buf_grow(struct entry_buf *b, __u32 want)
{
	__u32 cap = b->cap ? b->cap : 64;
	__u8 *k, *v;

	if (want <= b->cap)
		return 0;
	while (cap < want)
		cap *= 2;
	k = realloc(b->keys, (size_t)cap * b->ksz);
	if (!k)
		return -ENOMEM;
	b->keys = k;
	v = realloc(b->vals, (size_t)cap * b->vsz);
	if (!v)
		return -ENOMEM;
	b->vals = v;
	b->cap = cap;
	return 0;
}

/*
 * Batched walk: the kernel hands out whole hash buckets, so an entry deleted
 * or added meanwhile cannot make the walk start over (as get_next_key does
 * when its previous key is gone). With BPF_F_LOCK each value is copied
 * under its spin lock.
 */
static int read_batched(int fd, __u32 max, struct entry_buf *b, __u64 flags)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o, .elem_flags = flags);
	__u32 chunk = READ_BATCH, count;
	__u8 *in = calloc(2, b->ksz), *outb;
	bool first = true;
	int err = 0;

	if (!in)
		return -ENOMEM;
	outb = in + b->ksz;
	for (;;) {
		count = chunk;
		err = buf_grow(b, b->n + chunk);
		if (err)
			break;
		/* appended after the entries read so far */
		err = bpf_map_lookup_batch(fd, first ? NULL : in, outb,
					   b->keys + (size_t)b->n * b->ksz,
					   b->vals + (size_t)b->n * b->vsz, &count, &o) ?
			      -errno :
			      0;
		if (err == -ENOSPC && chunk < max) {
			/* a bucket larger than the chunk: take it in a bigger one */
			chunk *= 2;
			continue;
		}
		if (err && err != -ENOENT)
			break;
		b->n = b->n + count < max ? b->n + count : max;
		if (err == -ENOENT || !count || b->n >= max) {
			err = 0;
			break;
		}
		memcpy(in, outb, b->ksz);
		first = false;
	}
	free(in);
	return err;
}

/* Key by key (kernels or maps without batch lookups); stops at max entries */
static int read_iter(int fd, __u32 max, struct entry_buf *b, __u64 flags)
{
	__u8 *prev = NULL, *next = malloc(b->ksz);
	int err = 0;

	if (!next)
		return -ENOMEM;
	while (b->n < max && !bpf_map_get_next_key(fd, prev, next)) {
		err = buf_grow(b, b->n + 1);
		if (err)
			break;
		prev = b->keys + (size_t)b->n * b->ksz;
		memcpy(prev, next, b->ksz);
		if (map_lookup(fd, prev, b->vals + (size_t)b->n * b->vsz, flags))
			continue; /* deleted meanwhile: its slot is reused */
		b->n++;
	}
	free(next);
	return err;
}

int map_read_all(const struct pinned_map *pm, __u64 elem_flags, void **keys, void **vals,
		 __u32 *n)
{
	struct entry_buf b = { .ksz = pm->info.key_size, .vsz = pm->info.value_size };
	__u32 max = pm->info.max_entries;
	int err;

	*keys = *vals = NULL;
	*n = 0;
	err = read_batched(pm->fd, max, &b, elem_flags);
	if (err == -EINVAL && (elem_flags & BPF_F_LOCK)) {
		/* a map without a spin lock in its BTF */
		b.n = 0;
		elem_flags &= ~(__u64)BPF_F_LOCK;
		err = read_batched(pm->fd, max, &b, elem_flags);
	}
	if (err && err != -ENOMEM) {
		pr_debug("batched lookup of %s: %s: walking key by key\n", pm->info.name,
			 strerror(-err));
		b.n = 0;
		err = read_iter(pm->fd, max, &b, elem_flags);
	}
	if (err) {
		free(b.keys);
		free(b.vals);
		return err;
	}
	*keys = b.keys;
	*vals = b.vals;
	*n = b.n;
	return 0;
}
