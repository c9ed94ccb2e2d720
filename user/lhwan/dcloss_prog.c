// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * lhwan dcloss's program: a few dozen BPF instructions assembled here, so it
 * needs no compiler at run time, and the loss model in its one-entry array
 * map (random, gemodel or every N, with netem's semantics; dcloss.c says
 * where it is attached and why).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dcloss_int.h"
#include "log.h"
#include "lossmodel.h"

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

/* IPv4 or IPv6 UDP on to L_COUNT, anything else to L_PASS (r2 = data, r4 = data + 42) */
static void emit_udp_filter(struct as *a, bool redirect)
{
	short off_data = redirect ? (short)__builtin_offsetof(struct __sk_buff, data) : 0;
	short off_end = redirect ? (short)__builtin_offsetof(struct __sk_buff, data_end) : 4;

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
}

/* L_COUNT: r7 = the model (none: pass), the frame counted as seen, on to its kind's label */
static void emit_lookup(struct as *a, int map_fd)
{
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
}

/* L_RANDOM: drop when p != 0 and p >= rnd (netem) */
static void emit_random(struct as *a)
{
	label(a, L_RANDOM);
	call(a, BPF_FUNC_get_prandom_u32);
	ldx(a, BPF_W, BPF_REG_1, BPF_REG_7, OFF(p));
	jmp(a, BPF_JEQ, BPF_REG_1, 0, false, L_PASS);
	jmp(a, BPF_JGT, BPF_REG_0, BPF_REG_1, true, L_PASS);
	jmp(a, BPF_JA, 0, 0, false, L_DROP);
}

/* L_EVERY: i = ++count; drop when i % n == k */
static void emit_every(struct as *a)
{
	label(a, L_EVERY);
	mov_imm(a, BPF_REG_1, 1);
	atomic_add(a, BPF_REG_7, BPF_REG_1, OFF(count), true);
	emit(a, INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_1, 0, 0, 1));
	ldx(a, BPF_DW, BPF_REG_2, BPF_REG_7, OFF(n));
	emit(a, INSN(BPF_ALU64 | BPF_MOD | BPF_X, BPF_REG_1, BPF_REG_2, 0, 0));
	ldx(a, BPF_DW, BPF_REG_2, BPF_REG_7, OFF(k));
	jmp(a, BPF_JEQ, BPF_REG_1, BPF_REG_2, true, L_DROP);
	jmp(a, BPF_JA, 0, 0, false, L_PASS);
}

/* L_GE: gemodel, as sch_netem's loss_gilb_ell(): transition, then the old state's loss */
static void emit_gemodel(struct as *a)
{
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
}

/* L_DROP (counted; tcx: into the black hole if there is one), L_SHOT and L_PASS */
static void emit_verdicts(struct as *a, int verdict_pass, int verdict_drop, bool redirect)
{
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
static void build_prog(struct as *a, int map_fd, int verdict_pass, int verdict_drop, bool redirect)
{
	memset(a, 0, sizeof(*a));
	emit_udp_filter(a, redirect);
	emit_lookup(a, map_fd);
	emit_random(a);
	emit_every(a);
	emit_gemodel(a);
	emit_verdicts(a, verdict_pass, verdict_drop, redirect);
	resolve(a);
}

int dcloss_prog_load(int map_fd, bool ingress)
{
	LIBBPF_OPTS(bpf_prog_load_opts, po);
	char log[8192] = "";
	struct as a;
	int fd;

	if (ingress)
		build_prog(&a, map_fd, XDP_PASS, XDP_DROP, false);
	else
		build_prog(&a, map_fd, -1, 2, true);
	po.log_buf = log;
	po.log_size = sizeof(log);
	po.log_level = 1;
	fd = bpf_prog_load(ingress ? BPF_PROG_TYPE_XDP : BPF_PROG_TYPE_SCHED_CLS,
			   ingress ? DCLOSS_NAME_IN : DCLOSS_NAME_OUT, "Dual BSD/GPL", a.insn,
			   (size_t)a.n, &po);
	if (fd < 0) {
		fd = -errno;
		pr_warn("loading the %s program: %s\n%s", ingress ? "XDP" : "tcx", strerror(-fd),
			log);
	}
	return fd;
}

int spec_to_val(const char *text, struct dcloss_val *v)
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
