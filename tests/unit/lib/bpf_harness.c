// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* BPF_PROG_TEST_RUN fixtures against the production BPF objects. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf_harness.h"
#include "tap.h"

#define MAX_COUNTER_MAPS 8
#define MAX_FIELDS 128
#define OUT_SLACK 4096

struct counter_map {
	struct bpf_map *map;
	const char *name;
	int nr_fields;
	const char *field[MAX_FIELDS];
	uint32_t off[MAX_FIELDS];
	uint32_t value_size;
	bool percpu;
};

#define MAX_OBJS 8

struct lh_harness {
	struct bpf_object *obj;
	struct bpf_object *objs[MAX_OBJS];
	int nr_objs;
	char pin_dir[128];
	int nr_maps;
	struct counter_map maps[MAX_COUNTER_MAPS];
	int ncpus;
};

/* A struct value made only of 8-byte integer fields: a counter block */
static bool discover_counter_map(struct lh_harness *h, struct bpf_map *map)
{
	const struct btf *btf = bpf_object__btf(h->obj);
	enum bpf_map_type type = bpf_map__type(map);
	const struct btf_type *t;
	const struct btf_member *m;
	struct counter_map *cm;
	int i, n;

	if (!btf || h->nr_maps == MAX_COUNTER_MAPS || bpf_map__max_entries(map) != 1 ||
	    (type != BPF_MAP_TYPE_PERCPU_ARRAY && type != BPF_MAP_TYPE_ARRAY))
		return false;
	t = btf__type_by_id(btf, bpf_map__btf_value_type_id(map));
	if (!t)
		return false;
	t = btf__type_by_id(btf, btf__resolve_type(btf, bpf_map__btf_value_type_id(map)));
	if (!t || !btf_is_struct(t))
		return false;
	n = btf_vlen(t);
	if (n == 0 || n > MAX_FIELDS)
		return false;
	m = btf_members(t);
	for (i = 0; i < n; i++) {
		if (btf__resolve_size(btf, m[i].type) != 8 || btf_member_bitfield_size(t, i))
			return false;
	}
	cm = &h->maps[h->nr_maps++];
	cm->map = map;
	cm->name = bpf_map__name(map);
	cm->nr_fields = n;
	cm->value_size = bpf_map__value_size(map);
	cm->percpu = type == BPF_MAP_TYPE_PERCPU_ARRAY;
	for (i = 0; i < n; i++) {
		cm->field[i] = btf__name_by_offset(btf, m[i].name_off);
		cm->off[i] = btf_member_bit_offset(t, i) / 8;
	}
	return true;
}

int lh_obj_set_rodata(struct bpf_object *obj, const char *var, const void *val, size_t size)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	struct bpf_map *map;
	size_t data_size;
	uint8_t *data;
	int id, i;

	if (!btf)
		return -ENOENT;
	id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	if (id < 0)
		return -ENOENT;
	sec = btf__type_by_id(btf, (uint32_t)id);
	bpf_object__for_each_map(map, obj) {
		const char *n = bpf_map__name(map);
		size_t l = strlen(n);

		if (l >= 7 && !strcmp(n + l - 7, ".rodata"))
			break;
	}
	if (!map)
		return -ENOENT;
	data = bpf_map__initial_value(map, &data_size);
	vs = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *v = btf__type_by_id(btf, vs->type);

		if (strcmp(btf__name_by_offset(btf, v->name_off), var))
			continue;
		if (vs->size != size || vs->offset + size > data_size)
			return -EINVAL;
		memcpy(data + vs->offset, val, size);
		return 0;
	}
	return -ENOENT;
}

struct lh_harness *lh_harness_open(const char *name, lh_harness_setup_fn setup, void *ctx)
{
	char path[512];
	struct lh_harness *h = calloc(1, sizeof(*h));
	struct bpf_map *map;
	int err;

	if (!h)
		return NULL;
	snprintf(path, sizeof(path), "%s/bpf/%s.bpf.o", LH_BUILD_DIR, name);
	h->obj = bpf_object__open_file(path, NULL);
	if (!h->obj) {
		tap_diag("open %s: %s", path, strerror(errno));
		free(h);
		return NULL;
	}
	/* Tests run anywhere, as often as they like: never pin */
	bpf_object__for_each_map(map, h->obj)
		bpf_map__set_pin_path(map, NULL);
	if (setup && (err = setup(h->obj, ctx))) {
		tap_diag("setup of %s failed: %d", name, err);
		goto fail;
	}
	err = bpf_object__load(h->obj);
	if (err) {
		char msg[128];

		libbpf_strerror(err, msg, sizeof(msg));
		tap_diag("load %s: %s", path, msg);
		goto fail;
	}
	h->ncpus = libbpf_num_possible_cpus();
	bpf_object__for_each_map(map, h->obj)
		discover_counter_map(h, map);
	return h;
fail:
	bpf_object__close(h->obj);
	free(h);
	return NULL;
}

void lh_harness_close(struct lh_harness *h)
{
	int i;

	if (!h)
		return;
	for (i = 0; i < h->nr_objs; i++) {
		if (h->pin_dir[0])
			bpf_object__unpin_maps(h->objs[i], NULL);
		bpf_object__close(h->objs[i]);
	}
	if (!h->nr_objs)
		bpf_object__close(h->obj);
	if (h->pin_dir[0])
		rmdir(h->pin_dir);
	free(h);
}

struct lh_harness *lh_harness_open_set(const char *const *names, int n, lh_harness_setup_fn setup,
				       void *ctx)
{
	struct lh_harness *h = calloc(1, sizeof(*h));
	struct bpf_map *map;
	char path[512], msg[128];
	int i, err;

	if (!h || n > MAX_OBJS) {
		free(h);
		return NULL;
	}
	mkdir("/sys/fs/bpf/longhaul-test", 0700);
	snprintf(h->pin_dir, sizeof(h->pin_dir), "/sys/fs/bpf/longhaul-test/unit-%d", getpid());
	if (mkdir(h->pin_dir, 0700) && errno != EEXIST) {
		tap_diag("mkdir %s: %s (bpffs mounted?)", h->pin_dir, strerror(errno));
		free(h);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = h->pin_dir);
		struct bpf_object *obj;

		snprintf(path, sizeof(path), "%s/bpf/%s.bpf.o", LH_BUILD_DIR, names[i]);
		obj = bpf_object__open_file(path, &opts);
		if (!obj) {
			tap_diag("open %s: %s", path, strerror(errno));
			goto fail;
		}
		h->objs[h->nr_objs++] = obj;
		if (setup && (err = setup(obj, ctx))) {
			tap_diag("setup of %s failed: %d", names[i], err);
			goto fail;
		}
		err = bpf_object__load(obj);
		if (err) {
			libbpf_strerror(err, msg, sizeof(msg));
			tap_diag("load %s: %s", path, msg);
			goto fail;
		}
	}
	h->obj = h->objs[0];
	h->ncpus = libbpf_num_possible_cpus();
	bpf_object__for_each_map(map, h->obj)
		discover_counter_map(h, map);
	return h;
fail:
	lh_harness_close(h);
	return NULL;
}

int lh_harness_map_fd(struct lh_harness *h, const char *name)
{
	int i, n = h->nr_objs ? h->nr_objs : 1;

	for (i = 0; i < n; i++) {
		struct bpf_object *o = h->nr_objs ? h->objs[i] : h->obj;
		struct bpf_map *m = bpf_object__find_map_by_name(o, name);

		if (m)
			return bpf_map__fd(m);
	}
	return -ENOENT;
}

int lh_harness_fill_queue(struct lh_harness *h, const char *map, uint32_t n)
{
	int fd = lh_harness_map_fd(h, map);
	uint32_t i;

	if (fd < 0)
		return fd;
	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, NULL, &i, BPF_ANY))
			return -errno;
	return 0;
}

static struct bpf_program *find_prog(struct lh_harness *h, const char *prog)
{
	int i, n = h->nr_objs ? h->nr_objs : 1;

	for (i = 0; i < n; i++) {
		struct bpf_object *o = h->nr_objs ? h->objs[i] : h->obj;
		struct bpf_program *p = bpf_object__find_program_by_name(o, prog);

		if (p)
			return p;
	}
	return NULL;
}

int lh_harness_run_tc(struct lh_harness *h, const char *prog, const void *in, size_t in_len,
		      uint32_t ifindex, uint32_t *verdict, void *out, size_t *out_len)
{
	struct __sk_buff skb = { .ifindex = ifindex };

	return lh_harness_run_skb(h, prog, in, in_len, &skb, verdict, out, out_len);
}

/* One BPF_PROG_TEST_RUN of program prog on a frame, with its context ctx */
static int run_once(struct lh_harness *h, const char *prog, const void *in, size_t in_len,
		    void *ctx, size_t ctx_len, uint32_t *verdict, void *out, size_t *out_len)
{
	struct bpf_program *p = find_prog(h, prog);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in, .data_size_in = (uint32_t)in_len,
		    .data_out = out, .data_size_out = (uint32_t)*out_len, .repeat = 1,
		    .ctx_in = ctx, .ctx_size_in = (uint32_t)ctx_len);

	if (!p)
		return -ENOENT;
	if (bpf_prog_test_run_opts(bpf_program__fd(p), &opts))
		return -errno;
	*verdict = opts.retval;
	*out_len = opts.data_size_out;
	return 0;
}

int lh_harness_run_skb(struct lh_harness *h, const char *prog, const void *in, size_t in_len,
		       const struct __sk_buff *ctx, uint32_t *verdict, void *out, size_t *out_len)
{
	struct __sk_buff skb = *ctx;

	return run_once(h, prog, in, in_len, &skb, sizeof(skb), verdict, out, out_len);
}

int lh_harness_run_xdp(struct lh_harness *h, const char *prog, const void *in, size_t in_len,
		       uint32_t ingress_ifindex, uint32_t *verdict, void *out, size_t *out_len)
{
	struct xdp_md md = { .data_end = (uint32_t)in_len, .ingress_ifindex = ingress_ifindex };

	return run_once(h, prog, in, in_len, &md, sizeof(md), verdict, out, out_len);
}

struct bpf_object *lh_harness_obj(struct lh_harness *h)
{
	return h->obj;
}

static struct bpf_program *find_prog(struct lh_harness *h, const char *prog);

int lh_harness_run(struct lh_harness *h, const char *prog, const void *in, size_t in_len,
		   uint32_t *verdict, void *out, size_t *out_len)
{
	struct bpf_program *p = find_prog(h, prog);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in, .data_size_in = (uint32_t)in_len,
		    .data_out = out, .data_size_out = (uint32_t)*out_len, .repeat = 1);
	int err;

	if (!p)
		return -ENOENT;
	err = bpf_prog_test_run_opts(bpf_program__fd(p), &opts);
	if (err)
		return err;
	*verdict = opts.retval;
	*out_len = opts.data_size_out;
	return 0;
}

/* Sum over CPUs of every field of one counter map into vals[] */
static int read_counter_map(struct lh_harness *h, const struct counter_map *cm, int64_t *vals)
{
	size_t stride = (cm->value_size + 7) & ~7u;
	size_t n = cm->percpu ? (size_t)h->ncpus : 1;
	uint8_t *buf = calloc(n, stride);
	uint32_t key = 0;
	size_t c;
	int i;

	if (!buf)
		return -ENOMEM;
	if (bpf_map__lookup_elem(cm->map, &key, sizeof(key), buf, n * stride, 0)) {
		free(buf);
		return -errno;
	}
	for (i = 0; i < cm->nr_fields; i++) {
		vals[i] = 0;
		for (c = 0; c < n; c++) {
			uint64_t v;

			memcpy(&v, buf + c * stride + cm->off[i], sizeof(v));
			vals[i] += (int64_t)v;
		}
	}
	free(buf);
	return 0;
}

int64_t lh_counter_read(struct lh_harness *h, const char *counter)
{
	int64_t vals[MAX_FIELDS];
	const char *dot = strchr(counter, '.');
	int m, i;

	if (!dot)
		return -1;
	for (m = 0; m < h->nr_maps; m++) {
		const struct counter_map *cm = &h->maps[m];

		if (strlen(cm->name) != (size_t)(dot - counter) ||
		    strncmp(cm->name, counter, (size_t)(dot - counter)))
			continue;
		if (read_counter_map(h, cm, vals))
			return -1;
		for (i = 0; i < cm->nr_fields; i++)
			if (!strcmp(cm->field[i], dot + 1))
				return vals[i];
	}
	return -1;
}

static bool counter_known(struct lh_harness *h, const char *counter)
{
	return lh_counter_read(h, counter) >= 0;
}

static int64_t expected_delta(const struct lh_fixture *f, const char *map, const char *field)
{
	int64_t d = 0;
	int i;

	for (i = 0; i < LH_FIXTURE_MAX_DELTAS && f->deltas[i].counter; i++) {
		const char *c = f->deltas[i].counter, *dot = strchr(c, '.');

		if (dot && strlen(map) == (size_t)(dot - c) && !strncmp(c, map, (size_t)(dot - c)) &&
		    !strcmp(dot + 1, field))
			d += f->deltas[i].delta;
	}
	return d;
}

/* What one run of a fixture gave: verdict, output, each counter field's move */
struct fixture_run {
	uint32_t verdict;
	uint8_t *out;
	size_t out_len;
	int64_t moved[MAX_COUNTER_MAPS][MAX_FIELDS];
};

/* Run f once; 0, or -1 with the reason in err (an unknown counter, a failed test run) */
static int fixture_exec(struct lh_harness *h, const char *prog, const struct lh_fixture *f,
			struct fixture_run *res, char *err, size_t err_len)
{
	static int64_t before[MAX_COUNTER_MAPS][MAX_FIELDS], after[MAX_COUNTER_MAPS][MAX_FIELDS];
	size_t out_cap = f->in_len + OUT_SLACK;
	int m, i, r;

	err[0] = 0;
	res->out = malloc(out_cap);
	res->out_len = out_cap;
	res->verdict = 0;
	if (!res->out) {
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	for (i = 0; i < LH_FIXTURE_MAX_DELTAS && f->deltas[i].counter; i++) {
		if (!counter_known(h, f->deltas[i].counter)) {
			snprintf(err, err_len, "fixture names unknown counter %s", f->deltas[i].counter);
			return -1;
		}
	}
	for (m = 0; m < h->nr_maps; m++)
		read_counter_map(h, &h->maps[m], before[m]);
	r = lh_harness_run(h, prog, f->in, f->in_len, &res->verdict, res->out, &res->out_len);
	if (r) {
		snprintf(err, err_len, "test run of %s failed: %s", prog, strerror(-r));
		return -1;
	}
	for (m = 0; m < h->nr_maps; m++) {
		read_counter_map(h, &h->maps[m], after[m]);
		for (i = 0; i < h->maps[m].nr_fields; i++)
			res->moved[m][i] = after[m][i] - before[m][i];
	}
	return 0;
}

bool lh_fixture_check(struct lh_harness *h, const char *prog, const struct lh_fixture *f, char *err,
		      size_t err_len)
{
	static struct fixture_run res;
	const void *want = f->out ? f->out : f->in;
	size_t want_len = f->out ? f->out_len : f->in_len, pos = 0;
	bool ok = true;
	int m, i;

	if (fixture_exec(h, prog, f, &res, err, err_len)) {
		free(res.out);
		return false;
	}

#define ERRF(...)                                                                         \
	do {                                                                              \
		if (pos < err_len)                                                        \
			pos += (size_t)snprintf(err + pos, err_len - pos, __VA_ARGS__);  \
		ok = false;                                                               \
	} while (0)

	if ((int)res.verdict != f->verdict)
		ERRF("verdict %u, want %d; ", res.verdict, f->verdict);
	if (res.out_len != want_len) {
		ERRF("output %zu bytes, want %zu; ", res.out_len, want_len);
	} else if (memcmp(res.out, want, want_len)) {
		for (i = 0; i < (int)want_len; i++)
			if (res.out[i] != ((const uint8_t *)want)[i])
				break;
		ERRF("output differs from byte %d; ", i);
	}
	for (m = 0; m < h->nr_maps; m++) {
		const struct counter_map *cm = &h->maps[m];

		for (i = 0; i < cm->nr_fields; i++) {
			int64_t exp = expected_delta(f, cm->name, cm->field[i]);

			if (res.moved[m][i] != exp)
				ERRF("%s.%s moved %+" PRId64 ", want %+" PRId64 "; ", cm->name,
				     cm->field[i], res.moved[m][i], exp);
		}
	}
#undef ERRF
	free(res.out);
	return ok;
}

/*
 * One test point per value under the fixture's description: the verdict,
 * the output's length and bytes, each counter the fixture names, and every
 * other counter field unchanged (those that moved listed as diagnostics)
 */
bool lh_fixture_run(struct lh_harness *h, const char *prog, const struct lh_fixture *f)
{
	static struct fixture_run res;
	const void *want = f->out ? f->out : f->in;
	size_t want_len = f->out ? f->out_len : f->in_len;
	int m, i, others = 0;
	char err[1024];
	bool ok = true;

	tap_prefix("%s", f->desc);
	if (fixture_exec(h, prog, f, &res, err, sizeof(err))) {
		ok = tap_true(false, "run: %s", err);
		goto out;
	}
	ok &= tap_eq_int((int32_t)res.verdict, f->verdict, "verdict");
	ok &= tap_eq_u64(res.out_len, want_len, "output length");
	ok &= tap_eq_mem(res.out, want, res.out_len < want_len ? res.out_len : want_len,
			 "output bytes");
	for (m = 0; m < h->nr_maps; m++) {
		const struct counter_map *cm = &h->maps[m];

		for (i = 0; i < cm->nr_fields; i++) {
			int64_t exp = expected_delta(f, cm->name, cm->field[i]);

			if (exp)
				ok &= tap_eq_int(res.moved[m][i], exp, "%s.%s moved", cm->name,
						 cm->field[i]);
			else if (res.moved[m][i])
				others++;
		}
	}
	ok &= tap_eq_int(others, 0, "other counter fields that moved");
	for (m = 0; others && m < h->nr_maps; m++)
		for (i = 0; i < h->maps[m].nr_fields; i++)
			if (!expected_delta(f, h->maps[m].name, h->maps[m].field[i]) &&
			    res.moved[m][i])
				tap_diag("  %s.%s moved %+" PRId64 ", want +0", h->maps[m].name,
					 h->maps[m].field[i], res.moved[m][i]);
out:
	tap_prefix_end();
	free(res.out);
	res.out = NULL;
	return ok;
}
