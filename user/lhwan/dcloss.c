// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhwan dcloss: loss on a host's link inside a data center (src <-> gwa,
 * dst <-> gwb), done in the HOST's namespace so the gateways stay untouched.
 *
 *   ingress (frames the host receives): an XDP program. XDP runs before
 *     AF_PACKET taps, so a raw-socket endpoint (lhperf) really misses the
 *     frame; nftables' netdev ingress hook runs after the taps and would not
 *     hide it from such a receiver.
 *   egress (frames the host sends): a tcx egress program. It sees what the IP
 *     stack and AF_PACKET sockets send, except frames sent with
 *     PACKET_QDISC_BYPASS, which skip every egress hook of the kernel. A lost
 *     frame is redirected into a black hole (--blackhole: an interface that
 *     is down) rather than dropped: TC_ACT_SHOT would make an AF_PACKET
 *     sender's sendmsg() fail with ENOBUFS (it would just send again), and
 *     tcx has no TC_ACT_STOLEN. A real link loses frames silently.
 *
 * The program is a few dozen instructions assembled here, so it needs no
 * compiler at run time. Its one-entry array map holds the model (random,
 * gemodel or every N, with netem's semantics) and the counters. Attached
 * without a bpf_link, it stays after this command exits and goes with the
 * namespace; `attach` again only rewrites the map, `stats` reads it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "json.h"
#include "lhwan.h"
#include "log.h"
#include "lossmodel.h"

#define DCLOSS_NAME_IN "lh_dcloss_in"
#define DCLOSS_NAME_OUT "lh_dcloss_out"

enum dcloss_kind { DC_NONE, DC_RANDOM, DC_EVERY, DC_GEMODEL };

/* The map value, shared with the program (offsets used below) */
struct dcloss_val {
	uint32_t kind;
	uint32_t p; /* random: threshold; gemodel: good -> bad */
	uint32_t r; /* gemodel: bad -> good */
	uint32_t h; /* gemodel: transmission probability in bad */
	uint32_t k1; /* gemodel: loss probability in good */
	uint32_t state; /* gemodel: 1 good, 2 bad */
	uint64_t n, k; /* every */
	uint64_t count; /* every: frames counted */
	uint64_t seen;
	uint64_t dropped;
	uint32_t blackhole; /* egress: ifindex lost frames are redirected to, 0: drop */
	uint32_t pad;
	char spec[128]; /* canonical text, for stats */
};

#define OFF(f) ((short)__builtin_offsetof(struct dcloss_val, f))

/* ---- a tiny assembler with forward labels ---- */

enum label {
	L_PASS,
	L_V4,
	L_V6,
	L_COUNT,
	L_DROP,
	L_SHOT,
	L_RANDOM,
	L_EVERY,
	L_GE,
	L_GE_BAD,
	L_GE_G2,
	L_GE_B2,
	NR_LABELS
};

struct as {
	struct bpf_insn insn[128];
	int n;
	int label[NR_LABELS];
	struct {
		int at;
		enum label l;
	} fix[48];
	int nfix;
};

static void emit(struct as *a, struct bpf_insn i)
{
	a->insn[a->n++] = i;
}

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){.code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i)})

static void mov_imm(struct as *a, int d, int imm)
{
	emit(a, INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, imm));
}

static void mov_reg(struct as *a, int d, int s)
{
	emit(a, INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0));
}

static void ldx(struct as *a, int size, int d, int s, short off)
{
	emit(a, INSN(BPF_LDX | BPF_MEM | size, d, s, off, 0));
}

static void stx(struct as *a, int size, int d, int s, short off)
{
	emit(a, INSN(BPF_STX | BPF_MEM | size, d, s, off, 0));
}

static void atomic_add(struct as *a, int d, int s, short off, bool fetch)
{
	emit(a, INSN(BPF_STX | BPF_ATOMIC | BPF_DW, d, s, off, BPF_ADD | (fetch ? BPF_FETCH : 0)));
}

static void call(struct as *a, int helper)
{
	emit(a, INSN(BPF_JMP | BPF_CALL, 0, 0, 0, helper));
}

static void jmp(struct as *a, int op, int d, int s_or_imm, bool reg, enum label l)
{
	a->fix[a->nfix].at = a->n;
	a->fix[a->nfix++].l = l;
	if (op == BPF_JA)
		emit(a, INSN(BPF_JMP | BPF_JA, 0, 0, 0, 0));
	else if (reg)
		emit(a, INSN(BPF_JMP | op | BPF_X, d, s_or_imm, 0, 0));
	else
		emit(a, INSN(BPF_JMP32 | op | BPF_K, d, 0, 0, s_or_imm));
}

static void label(struct as *a, enum label l)
{
	a->label[l] = a->n;
}

static void resolve(struct as *a)
{
	int i;

	for (i = 0; i < a->nfix; i++)
		a->insn[a->fix[i].at].off = (short)(a->label[a->fix[i].l] - a->fix[i].at - 1);
}

/*
 * The program: only IPv4 and IPv6 UDP frames are subject to loss (so are the
 * probe's and every RoCEv2 frame); ARP, neighbour discovery and ICMP pass
 * uncounted, so a neighbour refresh in the middle of a run neither vanishes
 * nor shifts an `every N` pattern. Then look the model up, count the frame,
 * decide. Both verdict pairs are parameters: XDP (pass 2, drop 1) and tcx
 * (next -1, drop 2; next rather than pass so a later tcx program still has
 * its say). The ctx offsets of data and data_end differ between the two.
 */
static int build_prog(struct as *a, int map_fd, int verdict_pass, int verdict_drop, bool redirect)
{
	short off_data = redirect ? (short)__builtin_offsetof(struct __sk_buff, data) : 0;
	short off_end = redirect ? (short)__builtin_offsetof(struct __sk_buff, data_end) : 4;

	memset(a, 0, sizeof(*a));
	/* r2 = data, r3 = data_end; at least Ethernet + IPv4 (20) + UDP (8) */
	ldx(a, BPF_W, BPF_REG_2, BPF_REG_1, off_data);
	ldx(a, BPF_W, BPF_REG_3, BPF_REG_1, off_end);
	mov_reg(a, BPF_REG_4, BPF_REG_2);
	emit(a, INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_4, 0, 0, 42));
	jmp(a, BPF_JGT, BPF_REG_4, BPF_REG_3, true, L_PASS);
	ldx(a, BPF_H, BPF_REG_5, BPF_REG_2, 12); /* EtherType, as stored (big endian) */
	jmp(a, BPF_JEQ, BPF_REG_5, htons(0x0800), false, L_V4);
	jmp(a, BPF_JEQ, BPF_REG_5, htons(0x86dd), false, L_V6);
	jmp(a, BPF_JA, 0, 0, false, L_PASS);
	label(a, L_V4);
	ldx(a, BPF_B, BPF_REG_5, BPF_REG_2, 14 + 9); /* protocol */
	jmp(a, BPF_JEQ, BPF_REG_5, 17, false, L_COUNT);
	jmp(a, BPF_JA, 0, 0, false, L_PASS);
	label(a, L_V6);
	emit(a, INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_4, 0, 0, 20)); /* IPv6 40 + UDP 8 */
	jmp(a, BPF_JGT, BPF_REG_4, BPF_REG_3, true, L_PASS);
	ldx(a, BPF_B, BPF_REG_5, BPF_REG_2, 14 + 6); /* next header */
	jmp(a, BPF_JNE, BPF_REG_5, 17, false, L_PASS);
	label(a, L_COUNT);
	/* key = 0 on the stack */
	mov_imm(a, BPF_REG_1, 0);
	stx(a, BPF_W, BPF_REG_10, BPF_REG_1, -4);
	mov_reg(a, BPF_REG_2, BPF_REG_10);
	emit(a, INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4));
	emit(a, INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd));
	emit(a, INSN(0, 0, 0, 0, 0));
	call(a, BPF_FUNC_map_lookup_elem);
	jmp(a, BPF_JEQ, BPF_REG_0, 0, false, L_PASS);
	mov_reg(a, BPF_REG_7, BPF_REG_0);
	mov_imm(a, BPF_REG_1, 1);
	atomic_add(a, BPF_REG_7, BPF_REG_1, OFF(seen), false);
	ldx(a, BPF_W, BPF_REG_1, BPF_REG_7, OFF(kind));
	jmp(a, BPF_JEQ, BPF_REG_1, DC_RANDOM, false, L_RANDOM);
	jmp(a, BPF_JEQ, BPF_REG_1, DC_EVERY, false, L_EVERY);
	jmp(a, BPF_JEQ, BPF_REG_1, DC_GEMODEL, false, L_GE);
	jmp(a, BPF_JA, 0, 0, false, L_PASS);

	/* random: drop when p != 0 and p >= rnd (netem) */
	label(a, L_RANDOM);
	call(a, BPF_FUNC_get_prandom_u32);
	ldx(a, BPF_W, BPF_REG_1, BPF_REG_7, OFF(p));
	jmp(a, BPF_JEQ, BPF_REG_1, 0, false, L_PASS);
	jmp(a, BPF_JGT, BPF_REG_0, BPF_REG_1, true, L_PASS);
	jmp(a, BPF_JA, 0, 0, false, L_DROP);

	/* every: i = ++count; drop when i % n == k */
	label(a, L_EVERY);
	mov_imm(a, BPF_REG_1, 1);
	atomic_add(a, BPF_REG_7, BPF_REG_1, OFF(count), true);
	emit(a, INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, 1));
	ldx(a, BPF_DW, BPF_REG_2, BPF_REG_7, OFF(n));
	emit(a, INSN(BPF_ALU64 | BPF_MOD | BPF_X, BPF_REG_1, BPF_REG_2, 0, 0));
	ldx(a, BPF_DW, BPF_REG_2, BPF_REG_7, OFF(k));
	jmp(a, BPF_JEQ, BPF_REG_1, BPF_REG_2, true, L_DROP);
	jmp(a, BPF_JA, 0, 0, false, L_PASS);

	/* gemodel, as sch_netem's loss_gilb_ell(): transition, then the old state's loss */
	label(a, L_GE);
	ldx(a, BPF_W, BPF_REG_8, BPF_REG_7, OFF(state));
	jmp(a, BPF_JEQ, BPF_REG_8, 2, false, L_GE_BAD);
	call(a, BPF_FUNC_get_prandom_u32);
	ldx(a, BPF_W, BPF_REG_1, BPF_REG_7, OFF(p));
	jmp(a, BPF_JGE, BPF_REG_0, BPF_REG_1, true, L_GE_G2);
	mov_imm(a, BPF_REG_1, 2);
	stx(a, BPF_W, BPF_REG_7, BPF_REG_1, OFF(state));
	label(a, L_GE_G2);
	call(a, BPF_FUNC_get_prandom_u32);
	ldx(a, BPF_W, BPF_REG_1, BPF_REG_7, OFF(k1));
	jmp(a, BPF_JLT, BPF_REG_0, BPF_REG_1, true, L_DROP);
	jmp(a, BPF_JA, 0, 0, false, L_PASS);
	label(a, L_GE_BAD);
	call(a, BPF_FUNC_get_prandom_u32);
	ldx(a, BPF_W, BPF_REG_1, BPF_REG_7, OFF(r));
	jmp(a, BPF_JGE, BPF_REG_0, BPF_REG_1, true, L_GE_B2);
	mov_imm(a, BPF_REG_1, 1);
	stx(a, BPF_W, BPF_REG_7, BPF_REG_1, OFF(state));
	label(a, L_GE_B2);
	call(a, BPF_FUNC_get_prandom_u32);
	ldx(a, BPF_W, BPF_REG_1, BPF_REG_7, OFF(h));
	jmp(a, BPF_JGT, BPF_REG_0, BPF_REG_1, true, L_DROP);
	jmp(a, BPF_JA, 0, 0, false, L_PASS);

	label(a, L_DROP);
	mov_imm(a, BPF_REG_1, 1);
	atomic_add(a, BPF_REG_7, BPF_REG_1, OFF(dropped), false);
	if (redirect) {
		/* into the black hole if there is one: bpf_redirect() returns TC_ACT_REDIRECT */
		ldx(a, BPF_W, BPF_REG_1, BPF_REG_7, OFF(blackhole));
		jmp(a, BPF_JEQ, BPF_REG_1, 0, false, L_SHOT);
		mov_imm(a, BPF_REG_2, 0);
		call(a, BPF_FUNC_redirect);
		emit(a, INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
	}
	label(a, L_SHOT);
	mov_imm(a, BPF_REG_0, verdict_drop);
	emit(a, INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
	label(a, L_PASS);
	mov_imm(a, BPF_REG_0, verdict_pass);
	emit(a, INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
	resolve(a);
	return a->n;
}

static int spec_to_val(const char *text, struct dcloss_val *v)
{
	struct lh_loss_spec s;
	char err[256];

	memset(v, 0, sizeof(*v));
	if (lh_loss_parse(text, &s, err, sizeof(err))) {
		pr_warn("loss spec '%s': %s\n", text, err);
		return -EINVAL;
	}
	switch (s.kind) {
	case LH_LOSS_NONE:
		v->kind = DC_NONE;
		break;
	case LH_LOSS_RANDOM:
		if (s.random.corr) {
			pr_warn("'%s': correlation is not supported on DC links\n", text);
			return -EINVAL;
		}
		v->kind = DC_RANDOM;
		v->p = s.random.p;
		break;
	case LH_LOSS_EVERY:
		v->kind = DC_EVERY;
		v->n = s.every.n;
		v->k = s.every.k;
		break;
	case LH_LOSS_GEMODEL:
		v->kind = DC_GEMODEL;
		v->p = s.ge.p;
		v->r = s.ge.r;
		v->h = s.ge.h;
		v->k1 = s.ge.k1;
		v->state = 1;
		break;
	default:
		lh_loss_spec_free(&s);
		pr_warn("'%s': DC links support none, random, gemodel and every\n", text);
		return -EINVAL;
	}
	lh_loss_format(&s, v->spec, sizeof(v->spec));
	return 0;
}

/* fd of the program attached at ingress (XDP) or egress (tcx), 0 if none of ours, or -errno */
static int find_prog(int ifindex, bool ingress)
{
	struct bpf_prog_info info = {0};
	uint32_t len = sizeof(info), id = 0, ids[16], cnt = 16, i;
	int fd;

	if (ingress) {
		if (bpf_xdp_query_id(ifindex, 0, &id) || !id)
			return 0;
		ids[0] = id;
		cnt = 1;
	} else {
		LIBBPF_OPTS(bpf_prog_query_opts, q, .prog_ids = ids, .count = cnt);

		if (bpf_prog_query_opts(ifindex, BPF_TCX_EGRESS, &q))
			return 0;
		cnt = q.count;
	}
	for (i = 0; i < cnt; i++) {
		fd = bpf_prog_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_prog_get_info_by_fd(fd, &info, &len) &&
		    !strcmp(info.name, ingress ? DCLOSS_NAME_IN : DCLOSS_NAME_OUT))
			return fd;
		close(fd);
	}
	return 0;
}

static int prog_map_fd(int prog_fd)
{
	struct bpf_prog_info info = {0};
	uint32_t len = sizeof(info), map_id = 0;

	info.nr_map_ids = 1;
	info.map_ids = (uint64_t)(unsigned long)&map_id;
	if (bpf_prog_get_info_by_fd(prog_fd, &info, &len) || !info.nr_map_ids)
		return -ENOENT;
	return bpf_map_get_fd_by_id(map_id);
}

static int attach_one(int ifindex, const char *ifname, bool ingress, const char *text,
		      int blackhole)
{
	struct dcloss_val v;
	struct as a;
	uint32_t key = 0;
	int prog_fd, map_fd, n, err;

	if (spec_to_val(text, &v))
		return -EINVAL;
	v.blackhole = ingress ? 0 : (uint32_t)blackhole;
	prog_fd = find_prog(ifindex, ingress);
	if (prog_fd > 0) {
		/* already there: a new model is a map update */
		map_fd = prog_map_fd(prog_fd);
		close(prog_fd);
		if (map_fd < 0)
			return map_fd;
		err = bpf_map_update_elem(map_fd, &key, &v, BPF_ANY);
		close(map_fd);
		return err;
	}
	map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "lh_dcloss", 4, sizeof(v), 1, NULL);
	if (map_fd < 0) {
		pr_warn("map: %s\n", strerror(errno));
		return -errno;
	}
	err = bpf_map_update_elem(map_fd, &key, &v, BPF_ANY);
	if (err)
		goto out;
	n = ingress ? build_prog(&a, map_fd, XDP_PASS, XDP_DROP, false)
		    : build_prog(&a, map_fd, -1, 2, true);
	{
		LIBBPF_OPTS(bpf_prog_load_opts, po);
		char log[8192] = "";

		po.log_buf = log;
		po.log_size = sizeof(log);
		po.log_level = 1;
		prog_fd = bpf_prog_load(ingress ? BPF_PROG_TYPE_XDP : BPF_PROG_TYPE_SCHED_CLS,
					ingress ? DCLOSS_NAME_IN : DCLOSS_NAME_OUT, "Dual BSD/GPL",
					a.insn, (size_t)n, &po);
		if (prog_fd < 0) {
			err = -errno;
			pr_warn("loading the %s program: %s\n%s", ingress ? "XDP" : "tcx",
				strerror(errno), log);
			goto out;
		}
	}
	if (ingress) {
		err = bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
		if (err)
			pr_warn("XDP attach on %s: %s (another XDP program there?)\n", ifname,
				strerror(-err));
	} else {
		LIBBPF_OPTS(bpf_prog_attach_opts, ao);

		err = bpf_prog_attach_opts(prog_fd, ifindex, BPF_TCX_EGRESS, &ao);
		if (err)
			pr_warn("tcx egress attach on %s: %s\n", ifname, strerror(-err));
	}
	close(prog_fd);
out:
	close(map_fd);
	return err;
}

static int detach_one(int ifindex, bool ingress)
{
	int fd = find_prog(ifindex, ingress), err;

	if (fd <= 0)
		return 0;
	if (ingress) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, xo, .old_prog_fd = fd);

		err = bpf_xdp_detach(ifindex, XDP_FLAGS_REPLACE, &xo);
	} else {
		LIBBPF_OPTS(bpf_prog_detach_opts, dopts);

		err = bpf_prog_detach_opts(fd, ifindex, BPF_TCX_EGRESS, &dopts);
	}
	close(fd);
	return err;
}

static void stats_one(struct lh_json *j, int ifindex, bool ingress)
{
	struct dcloss_val v;
	uint32_t key = 0;
	int fd = find_prog(ifindex, ingress), map_fd;

	lh_json_name(j, ingress ? "ingress" : "egress");
	if (fd <= 0) {
		lh_json_null(j);
		return;
	}
	map_fd = prog_map_fd(fd);
	close(fd);
	if (map_fd < 0 || bpf_map_lookup_elem(map_fd, &key, &v)) {
		lh_json_null(j);
		if (map_fd >= 0)
			close(map_fd);
		return;
	}
	close(map_fd);
	lh_json_start_object(j);
	lh_json_string_field(j, "mechanism", ingress ? "xdp" : "tcx-egress");
	lh_json_string_field(j, "spec", v.spec[0] ? v.spec : "none");
	lh_json_uint_field(j, "seen", v.seen);
	lh_json_uint_field(j, "dropped", v.dropped);
	lh_json_end_object(j);
}

static void dcloss_usage(void)
{
	fprintf(stderr,
		"usage: lhwan dcloss attach --dev IF [--ingress SPEC] [--egress SPEC]\n"
		"                           [--blackhole IF]\n"
		"       lhwan dcloss stats --dev IF [-p]\n"
		"       lhwan dcloss detach --dev IF\n"
		"       lhwan dcloss check [--ingress SPEC] [--egress SPEC]\n"
		"SPEC: none | random P%% | gemodel P%% [R%% [1-H%% [1-K%%]]] | every N [K]\n"
		"ingress = frames IF receives (XDP), egress = frames IF sends (tcx).\n");
}

int dcloss_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"dev", required_argument, NULL, 'd'},
		{"ingress", required_argument, NULL, 'i'},
		{"egress", required_argument, NULL, 'e'},
		{"pretty", no_argument, NULL, 'p'},
		{"blackhole", required_argument, NULL, 'b'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *dev = NULL, *in = "none", *out = "none", *cmd, *bh = NULL;
	int bh_index = 0;
	bool pretty = false;
	int c, ifindex, err;

	if (argc < 2) {
		dcloss_usage();
		return 2;
	}
	cmd = argv[1];
	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "d:i:e:b:ph", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 'i':
			in = optarg;
			break;
		case 'e':
			out = optarg;
			break;
		case 'b':
			bh = optarg;
			break;
		case 'p':
			pretty = true;
			break;
		case 'h':
			dcloss_usage();
			return 0;
		default:
			dcloss_usage();
			return 2;
		}
	}
	if (!strcmp(cmd, "check")) {
		struct dcloss_val v;

		return spec_to_val(in, &v) || spec_to_val(out, &v) ? 2 : 0;
	}
	if (!dev) {
		dcloss_usage();
		return 2;
	}
	ifindex = (int)if_nametoindex(dev);
	if (!ifindex) {
		pr_warn("no interface %s\n", dev);
		return 1;
	}
	if (!strcmp(cmd, "attach")) {
		struct dcloss_val v;

		/* both specs must be good before anything is attached */
		if (spec_to_val(in, &v) || spec_to_val(out, &v))
			return 2;
		if (bh) {
			bh_index = (int)if_nametoindex(bh);
			if (!bh_index) {
				pr_warn("no black-hole interface %s\n", bh);
				return 1;
			}
		}
		err = attach_one(ifindex, dev, true, in, 0);
		if (!err)
			err = attach_one(ifindex, dev, false, out, bh_index);
		return err ? 1 : 0;
	}
	if (!strcmp(cmd, "detach")) {
		err = detach_one(ifindex, true);
		err = detach_one(ifindex, false) ?: err;
		return err ? 1 : 0;
	}
	if (!strcmp(cmd, "stats")) {
		struct lh_json *j = lh_json_new(stdout, pretty);

		lh_json_start_object(j);
		lh_json_string_field(j, "dev", dev);
		stats_one(j, ifindex, true);
		stats_one(j, ifindex, false);
		lh_json_end_object(j);
		lh_json_free(j);
		return 0;
	}
	dcloss_usage();
	return 2;
}
