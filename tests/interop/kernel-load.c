// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * kernel-load: does this kernel's verifier accept longhaul's BPF objects?
 * Run by tests/interop/kernel-check.sh inside a guest booted with another
 * kernel; prints one JSON object on stdout.
 *
 *   kernel-load [-v] [-a IFACE] OBJECT.bpf.o...
 *
 * Each object is opened with libbpf as the agent opens it (pinning cleared:
 * nothing is left on the bpffs) and loaded whole, as longhauld and the unit
 * tests load it. When that fails, each program is loaded on its own (every
 * other program's autoload off), so one refused program does not hide the
 * verdict on the others. Objects with one-byte `const volatile`
 * flags in .rodata (lh_verify_icrc) are loaded a second time with every flag
 * set to 1, the most code the agent can ask the verifier to accept.
 *
 * With -a IFACE, every tcx program (SEC("tcx/...")) that loaded is attached to
 * IFACE as longhauld's attach_tc() does it: tcx first; when the kernel has no
 * tcx (EINVAL, EOPNOTSUPP), a clsact qdisc and a cls_bpf filter; then
 * detached. "tc_attach" reports each step's result.
 *
 * A loaded program is reported with its size (insns) and the instructions
 * the verifier walked to accept it (verified_insns, against its limit of 1M).
 * A refused program is reported with the kernel's errno, the verifier's
 * error line (the last line of its log that is not a statistic) and the
 * log's tail. Exit status 0 when every program of every object loaded, 1
 * when something was refused, 2 on bad usage.
 */
#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

/* 6.1 keeps the first bytes of a log that overflows and fails with ENOSPC,
 * losing the error at its end: make room for a long trace */
#define LOG_SIZE (64u << 20)
#define LIBBPF_MSGS 4096
#define TAIL_LINES 6

static char *log_buf;
static char libbpf_msgs[LIBBPF_MSGS];
static size_t libbpf_len;
static bool verbose;

/* libbpf's messages: kept for the report (why a map or BTF was refused) */
static int print_fn(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	if (verbose) {
		va_copy(aq, ap);
		vfprintf(stderr, fmt, aq);
		va_end(aq);
	}
	if (level == LIBBPF_DEBUG || libbpf_len >= LIBBPF_MSGS - 1)
		return 0;
	n = vsnprintf(libbpf_msgs + libbpf_len, LIBBPF_MSGS - libbpf_len, fmt, ap);
	if (n > 0)
		libbpf_len += (size_t)n < LIBBPF_MSGS - libbpf_len ? (size_t)n
								   : LIBBPF_MSGS - libbpf_len - 1;
	return 0;
}

static void json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c == '\n')
			fputs("\\n", stdout);
		else if (c == '\t')
			fputs("\\t", stdout);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/* Lines of text, empty ones dropped, as a JSON array of the last n */
static void json_tail(const char *text, int n)
{
	const char *lines[TAIL_LINES * 4];
	size_t lens[TAIL_LINES * 4];
	int cnt = 0, max = n, i;
	const char *p = text;

	while (p && *p) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l) {
			if (cnt == max) {
				memmove(lines, lines + 1, sizeof(lines[0]) * (size_t)(max - 1));
				memmove(lens, lens + 1, sizeof(lens[0]) * (size_t)(max - 1));
				cnt--;
			}
			lines[cnt] = p;
			lens[cnt++] = l;
		}
		p = e ? e + 1 : p + l;
	}
	putchar('[');
	for (i = 0; i < cnt; i++) {
		char buf[512];
		size_t l = lens[i] < sizeof(buf) - 1 ? lens[i] : sizeof(buf) - 1;

		memcpy(buf, lines[i], l);
		buf[l] = 0;
		if (i)
			putchar(',');
		json_str(buf);
	}
	putchar(']');
}

/* The statistics the verifier prints after its verdict, not the verdict */
static bool stat_line(const char *l, size_t len)
{
	static const char *const pfx[] = {
		"processed ",	      "verification time", "stack depth", "-- END",
		"-- BEGIN",	      "mark_precise",	   "Validating ", "func#",
		"max_states_per_insn"};
	size_t i;

	for (i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (len >= strlen(pfx[i]) && !strncmp(l, pfx[i], strlen(pfx[i])))
			return true;
	return false;
}

/* The verifier's error: the last line of the log that is not a statistic */
static void verifier_error(const char *log, char *out, size_t out_len)
{
	const char *p = log, *best = NULL;
	size_t best_len = 0;

	out[0] = 0;
	while (p && *p) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l && !stat_line(p, l)) {
			best = p;
			best_len = l;
		}
		p = e ? e + 1 : p + l;
	}
	if (best) {
		if (best_len >= out_len)
			best_len = out_len - 1;
		memcpy(out, best, best_len);
		out[best_len] = 0;
	}
}

static const char *prog_type_str(struct bpf_program *p)
{
	const char *s = libbpf_bpf_prog_type_str(bpf_program__type(p));

	return s ? s : "unknown";
}

/* Set every one-byte variable of .rodata to 1; returns how many, JSON in names */
static int rodata_flags_on(struct bpf_object *obj, char *names, size_t names_len)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	struct bpf_map *map;
	size_t data_size, pos = 0;
	uint8_t *data;
	int id, i, n = 0;

	names[0] = 0;
	if (!btf)
		return 0;
	id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	if (id < 0)
		return 0;
	bpf_object__for_each_map (map, obj) {
		const char *mn = bpf_map__name(map);
		size_t l = strlen(mn);

		if (l >= 7 && !strcmp(mn + l - 7, ".rodata"))
			break;
	}
	if (!map)
		return 0;
	data = bpf_map__initial_value(map, &data_size);
	sec = btf__type_by_id(btf, (uint32_t)id);
	vs = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *v = btf__type_by_id(btf, vs->type);
		const char *vn = btf__name_by_offset(btf, v->name_off);

		if (vs->size != 1 || vs->offset >= data_size)
			continue;
		data[vs->offset] = 1;
		if (pos < names_len)
			pos += (size_t)snprintf(names + pos, names_len - pos, "%s\"%s\":1",
						n ? "," : "", vn);
		n++;
	}
	return n;
}

static struct bpf_object *open_obj(const char *path)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_map *m;

	if (!obj)
		return NULL;
	/* a check leaves nothing behind: no pins */
	bpf_object__for_each_map (m, obj)
		bpf_map__set_pin_path(m, NULL);
	return obj;
}

/*
 * The instructions the verifier walked to accept a loaded program (5.16+;
 * its limit is 1M): how close the program came to "too large" there
 */
static void print_verified(struct bpf_program *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (!bpf_prog_get_info_by_fd(bpf_program__fd(p), &info, &len) &&
	    len >= offsetof(struct bpf_prog_info, verified_insns) + sizeof(info.verified_insns))
		printf(",\"verified_insns\":%u", info.verified_insns);
}

/* Print the result of one load attempt; true when it loaded */
static bool report_load(int err, const char *log)
{
	char msg[160], verr[512];

	if (!err) {
		fputs(",\"loaded\":true", stdout);
		return true;
	}
	libbpf_strerror(err, msg, sizeof(msg));
	fputs(",\"loaded\":false,\"errno\":", stdout);
	printf("%d,\"error\":", -err);
	json_str(msg);
	verifier_error(log, verr, sizeof(verr));
	if (verr[0]) {
		fputs(",\"verifier_error\":", stdout);
		json_str(verr);
		fputs(",\"log_tail\":", stdout);
		json_tail(log, TAIL_LINES);
	}
	if (libbpf_len) {
		fputs(",\"libbpf\":", stdout);
		json_tail(libbpf_msgs, TAIL_LINES);
	}
	return false;
}

/* Open path for one variant: rodata as compiled, or every flag on */
static struct bpf_object *open_variant(const char *path, bool flags_on, char *flags, size_t len)
{
	struct bpf_object *obj = open_obj(path);

	if (obj && flags_on)
		rodata_flags_on(obj, flags, len);
	return obj;
}

static void print_prog_head(struct bpf_program *p, int idx)
{
	printf("%s{\"name\":", idx ? "," : "");
	json_str(bpf_program__name(p));
	fputs(",\"section\":", stdout);
	json_str(bpf_program__section_name(p));
	fputs(",\"type\":", stdout);
	json_str(prog_type_str(p));
}

/*
 * One variant of one object (rodata as compiled, or flags on). The whole
 * object first, as the agent loads it: when the verifier takes it, every
 * program is accepted in one pass (under TCG a pass costs seconds). Else
 * each program alone, to tell which are refused and why. Returns the number
 * of refused programs, or -1 when the object does not open.
 */
static int check_variant(const char *path, bool flags_on, bool *first)
{
	char flags[512] = "", msg[160];
	struct bpf_object *obj;
	struct bpf_program *p;
	int nprogs = 0, refused = 0, idx, err;

	obj = open_obj(path);
	if (!obj)
		return -1;
	if (flags_on && rodata_flags_on(obj, flags, sizeof(flags)) == 0) {
		bpf_object__close(obj);
		return 0; /* nothing to vary */
	}
	bpf_object__close(obj);

	printf("%s{\"object\":", *first ? "" : ",");
	*first = false;
	json_str(strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	printf(",\"rodata\":{%s}", flags);

	obj = open_variant(path, flags_on, flags, sizeof(flags));
	if (!obj)
		return -1;
	libbpf_len = 0;
	libbpf_msgs[0] = 0;
	err = bpf_object__load(obj);
	printf(",\"object_loads\":%s", err ? "false" : "true");
	if (err) {
		libbpf_strerror(err, msg, sizeof(msg));
		fputs(",\"object_error\":", stdout);
		json_str(msg);
	}
	fputs(",\"programs\":[", stdout);
	if (!err) {
		idx = 0;
		bpf_object__for_each_program (p, obj) {
			print_prog_head(p, idx++);
			printf(",\"loaded\":true,\"insns\":%zu", bpf_program__insn_cnt(p));
			print_verified(p);
			putchar('}');
		}
		nprogs = idx;
		bpf_object__close(obj);
		printf("],\"nr_programs\":%d,\"nr_refused\":0}", nprogs);
		return 0;
	}
	bpf_object__for_each_program (p, obj)
		nprogs++;
	bpf_object__close(obj);

	for (idx = 0; idx < nprogs; idx++) {
		struct bpf_program *want = NULL, *q;
		int i = 0;

		obj = open_variant(path, flags_on, flags, sizeof(flags));
		if (!obj)
			return -1;
		bpf_object__for_each_program (q, obj) {
			bool mine = i++ == idx;

			bpf_program__set_autoload(q, mine);
			if (mine)
				want = q;
		}
		log_buf[0] = 0;
		libbpf_len = 0;
		libbpf_msgs[0] = 0;
		/* log level 0: libbpf asks for the log (level 1) only when the load fails */
		bpf_program__set_log_buf(want, log_buf, LOG_SIZE);
		err = bpf_object__load(obj);
		print_prog_head(want, idx);
		if (!report_load(err, log_buf))
			refused++;
		else {
			printf(",\"insns\":%zu", bpf_program__insn_cnt(want));
			print_verified(want);
		}
		putchar('}');
		bpf_object__close(obj);
	}
	printf("],\"nr_programs\":%d,\"nr_refused\":%d}", nprogs, refused);
	return refused;
}

/* longhauld's attach_tc(): tcx, else clsact + cls_bpf; detach again */
static void attach_one(struct bpf_program *p, int ifindex, bool *first)
{
	bool ingress = !strstr(bpf_program__section_name(p), "egress");
	enum bpf_tc_attach_point pt = ingress ? BPF_TC_INGRESS : BPF_TC_EGRESS;
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = pt);
	LIBBPF_OPTS(bpf_tc_opts, tco, .handle = 1, .priority = 1, .prog_fd = bpf_program__fd(p));
	struct bpf_link *l;
	char msg[160];
	int err;

	printf("%s{\"name\":", *first ? "" : ",");
	*first = false;
	json_str(bpf_program__name(p));
	printf(",\"hook\":\"%s\"", ingress ? "ingress" : "egress");
	l = bpf_program__attach_tcx(p, ifindex, NULL);
	if (l) {
		fputs(",\"tcx\":\"attached\"}", stdout);
		bpf_link__destroy(l);
		return;
	}
	err = -errno;
	libbpf_strerror(err, msg, sizeof(msg));
	printf(",\"tcx_errno\":%d,\"tcx\":", -err);
	json_str(msg);
	/* the errors longhauld takes for "no tcx here" */
	printf(",\"fallback\":%s", err == -EINVAL || err == -EOPNOTSUPP ? "true" : "false");
	hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
	err = bpf_tc_hook_create(&hook);
	if (err && err != -EEXIST) {
		libbpf_strerror(err, msg, sizeof(msg));
		fputs(",\"clsact\":", stdout);
		json_str(msg);
		putchar('}');
		return;
	}
	hook.attach_point = pt;
	err = bpf_tc_attach(&hook, &tco);
	libbpf_strerror(err, msg, sizeof(msg));
	fputs(",\"clsact\":", stdout);
	json_str(err ? msg : "attached");
	if (!err) {
		tco.prog_fd = tco.prog_id = tco.flags = 0;
		bpf_tc_detach(&hook, &tco);
	}
	hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
	bpf_tc_hook_destroy(&hook);
	putchar('}');
}

/* Load each object that loads whole and attach its TC programs to ifname */
static void attach_tc_all(char **paths, int n, const char *ifname)
{
	int ifindex = (int)if_nametoindex(ifname), i;
	bool first = true;

	fputs(",\"tc_attach\":{\"dev\":", stdout);
	json_str(ifname);
	if (!ifindex) {
		fputs(",\"error\":\"no such interface\"}", stdout);
		return;
	}
	fputs(",\"programs\":[", stdout);
	for (i = 0; i < n; i++) {
		struct bpf_object *obj = open_obj(paths[i]);
		struct bpf_program *p;

		if (!obj)
			continue;
		if (bpf_object__load(obj)) {
			bpf_object__close(obj);
			continue;
		}
		bpf_object__for_each_program (p, obj)
			if (!strncmp(bpf_program__section_name(p), "tcx/", 4))
				attach_one(p, ifindex, &first);
		bpf_object__close(obj);
	}
	fputs("]}", stdout);
}

int main(int argc, char **argv)
{
	struct utsname u;
	bool first = true;
	const char *attach_dev = NULL;
	int i, refused = 0, bad_open = 0;

	while (argc > 1 && argv[1][0] == '-') {
		if (!strcmp(argv[1], "-v")) {
			verbose = true;
		} else if (!strcmp(argv[1], "-a") && argc > 2) {
			attach_dev = argv[2];
			argv++;
			argc--;
		} else {
			break;
		}
		argv++;
		argc--;
	}
	if (argc < 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: kernel-load [-v] [-a IFACE] OBJECT.bpf.o...\n");
		return 2;
	}
	log_buf = malloc(LOG_SIZE);
	if (!log_buf) {
		fprintf(stderr, "kernel-load: no memory for the verifier log\n");
		return 1;
	}
	libbpf_set_print(print_fn);
	uname(&u);
	fputs("{\"kernel\":", stdout);
	json_str(u.release);
	printf(",\"libbpf\":\"%u.%u\",\"objects\":[", libbpf_major_version(),
	       libbpf_minor_version());
	for (i = 1; i < argc; i++) {
		int r = check_variant(argv[i], false, &first);

		if (r < 0) {
			char msg[160];

			libbpf_strerror(-errno, msg, sizeof(msg));
			printf("%s{\"object\":", first ? "" : ",");
			first = false;
			json_str(strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i]);
			fputs(",\"open\":false,\"error\":", stdout);
			json_str(msg);
			putchar('}');
			bad_open++;
			continue;
		}
		refused += r;
		r = check_variant(argv[i], true, &first);
		if (r > 0)
			refused += r;
	}
	putchar(']');
	if (attach_dev)
		attach_tc_all(argv + 1, argc - 1, attach_dev);
	puts("}");
	free(log_buf);
	return refused || bad_open ? 1 : 0;
}
