/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * RoCEv2 wire formats (InfiniBand Architecture Specification vol. 1, ch. 9,
 * and Annex A17 "RoCEv2"): the Base Transport Header, its extension headers,
 * the opcode table for RC, UC and UD, AETH syndromes and CNP.
 *
 * Every struct is packed and holds fields in network byte order, exactly as
 * on the wire; accessors below take and return host-order values. The file
 * has no libc dependency so BPF programs and user space share it.
 */
#ifndef LH_ROCEV2_H
#define LH_ROCEV2_H

#include "lh_types.h"

#ifdef __bpf__
#include <bpf/bpf_endian.h>
#define lh_ntohs(x) bpf_ntohs(x)
#define lh_htons(x) bpf_htons(x)
#define lh_ntohl(x) bpf_ntohl(x)
#define lh_htonl(x) bpf_htonl(x)
#define lh_be64toh(x) bpf_be64_to_cpu(x)
#define lh_htobe64(x) bpf_cpu_to_be64(x)
#else
#include <endian.h>
#define lh_ntohs(x) ((__u16)be16toh(x))
#define lh_htons(x) ((__be16)htobe16(x))
#define lh_ntohl(x) ((__u32)be32toh(x))
#define lh_htonl(x) ((__be32)htobe32(x))
#define lh_be64toh(x) ((__u64)be64toh(x))
#define lh_htobe64(x) ((__be64)htobe64(x))
#endif

#define ROCEV2_UDP_PORT 4791

#define ROCE_PSN_BITS 24
#define ROCE_PSN_MASK 0x00ffffffU
#define ROCE_QPN_MASK 0x00ffffffU
#define ROCE_MSN_MASK 0x00ffffffU
#define ROCE_ICRC_LEN 4
#define ROCE_DEFAULT_PKEY 0xffff
/* Pseudo LRH of all ones that RoCEv2 prepends for the ICRC (A17.8) */
#define ROCE_ICRC_PSEUDO_LRH_LEN 8

/* ---- Base Transport Header (IBTA 9.2), 12 bytes ---- */
struct roce_bth {
	__u8 opcode;
	__u8 flags; /* SE | M | PadCnt(2) | TVer(4) */
	__be16 pkey;
	__be32 qpn; /* byte 4: FECN | BECN | resv6 (RoCEv2), then DestQP(24) */
	__be32 apsn; /* AckReq | resv7 | PSN(24) */
} LH_PACKED;
_Static_assert(sizeof(struct roce_bth) == 12, "BTH is 12 bytes");

#define BTH_FLAG_SE 0x80
#define BTH_FLAG_MIG 0x40
#define BTH_PAD_MASK 0x30
#define BTH_PAD_SHIFT 4
#define BTH_TVER_MASK 0x0f
/* Byte 4 of the BTH: the only BTH bits the ICRC does not cover */
#define BTH_BYTE4_OFF 4
#define BTH_B4_FECN 0x80
#define BTH_B4_BECN 0x40
#define BTH_B4_RESV_MASK 0x3f
#define BTH_ACKREQ 0x80000000U

/* ---- Extension headers ---- */
/* RDMA Extended Transport Header (9.3.3), 16 bytes */
struct roce_reth {
	__be64 va;
	__be32 rkey;
	__be32 dmalen;
} LH_PACKED;
_Static_assert(sizeof(struct roce_reth) == 16, "RETH is 16 bytes");

/* ACK Extended Transport Header (9.3.5), 4 bytes: syndrome(8) | MSN(24) */
struct roce_aeth {
	__be32 smsn;
} LH_PACKED;
_Static_assert(sizeof(struct roce_aeth) == 4, "AETH is 4 bytes");

/* Datagram Extended Transport Header (9.3.2), 8 bytes */
struct roce_deth {
	__be32 qkey;
	__be32 sqpn; /* resv8 | SrcQP(24) */
} LH_PACKED;
_Static_assert(sizeof(struct roce_deth) == 8, "DETH is 8 bytes");

/* Immediate Data (9.3.6) */
struct roce_immdt {
	__be32 imm;
} LH_PACKED;
_Static_assert(sizeof(struct roce_immdt) == 4, "ImmDt is 4 bytes");

/* Invalidate Extended Transport Header (9.3.7) */
struct roce_ieth {
	__be32 rkey;
} LH_PACKED;
_Static_assert(sizeof(struct roce_ieth) == 4, "IETH is 4 bytes");

/* Reliable Datagram ETH (9.3.1), carried only by RD opcodes */
struct roce_rdeth {
	__be32 een; /* resv8 | EE-Context(24) */
} LH_PACKED;
_Static_assert(sizeof(struct roce_rdeth) == 4, "RDETH is 4 bytes");

/* Atomic Extended Transport Header (9.3.4), 28 bytes */
struct roce_atomic_eth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} LH_PACKED;
_Static_assert(sizeof(struct roce_atomic_eth) == 28, "AtomicETH is 28 bytes");

/* Atomic Acknowledge ETH (9.3.5.3), 8 bytes */
struct roce_atomic_ack_eth {
	__be64 orig;
} LH_PACKED;
_Static_assert(sizeof(struct roce_atomic_ack_eth) == 8, "AtomicAckETH is 8 bytes");

/* Flush Extended Transport Header (IBTA 1.5 / rxe), 4 bytes */
struct roce_feth {
	__be32 bits;
} LH_PACKED;
_Static_assert(sizeof(struct roce_feth) == 4, "FETH is 4 bytes");

/* CNP (A17.9.3): BTH with opcode 0x81 followed by 16 reserved bytes */
#define ROCE_CNP_PAD_LEN 16

/* ---- Opcodes (IBTA table 38) ---- */
#define ROCE_TRANSPORT_MASK 0xe0
#define ROCE_TRANSPORT_RC 0x00
#define ROCE_TRANSPORT_UC 0x20
#define ROCE_TRANSPORT_RD 0x40
#define ROCE_TRANSPORT_UD 0x60
#define ROCE_TRANSPORT_CNP 0x80
#define ROCE_TRANSPORT_XRC 0xa0

/* Operation codes, the low five bits of the opcode */
enum roce_op {
	ROCE_OP_SEND_FIRST = 0x00,
	ROCE_OP_SEND_MIDDLE = 0x01,
	ROCE_OP_SEND_LAST = 0x02,
	ROCE_OP_SEND_LAST_IMM = 0x03,
	ROCE_OP_SEND_ONLY = 0x04,
	ROCE_OP_SEND_ONLY_IMM = 0x05,
	ROCE_OP_WRITE_FIRST = 0x06,
	ROCE_OP_WRITE_MIDDLE = 0x07,
	ROCE_OP_WRITE_LAST = 0x08,
	ROCE_OP_WRITE_LAST_IMM = 0x09,
	ROCE_OP_WRITE_ONLY = 0x0a,
	ROCE_OP_WRITE_ONLY_IMM = 0x0b,
	ROCE_OP_READ_REQUEST = 0x0c,
	ROCE_OP_READ_RESP_FIRST = 0x0d,
	ROCE_OP_READ_RESP_MIDDLE = 0x0e,
	ROCE_OP_READ_RESP_LAST = 0x0f,
	ROCE_OP_READ_RESP_ONLY = 0x10,
	ROCE_OP_ACK = 0x11,
	ROCE_OP_ATOMIC_ACK = 0x12,
	ROCE_OP_CMP_SWAP = 0x13,
	ROCE_OP_FETCH_ADD = 0x14,
	ROCE_OP_SEND_LAST_INV = 0x16,
	ROCE_OP_SEND_ONLY_INV = 0x17,
	ROCE_OP_FLUSH = 0x1c,
	ROCE_OP_ATOMIC_WRITE = 0x1d,
};

/*
 * Full opcodes, X-macro: X(NAME, field, value). The names match Wireshark's
 * and rxe's spelling so that logs, tshark output and our tables line up;
 * 'field' names the opcode's counter in struct lh_opcode_stats.
 */
#define ROCE_OPCODES(X)                                  \
	X(RC_SEND_FIRST, rc_send_first, 0x00)                           \
	X(RC_SEND_MIDDLE, rc_send_middle, 0x01)                          \
	X(RC_SEND_LAST, rc_send_last, 0x02)                            \
	X(RC_SEND_LAST_WITH_IMMEDIATE, rc_send_last_with_immediate, 0x03)             \
	X(RC_SEND_ONLY, rc_send_only, 0x04)                            \
	X(RC_SEND_ONLY_WITH_IMMEDIATE, rc_send_only_with_immediate, 0x05)             \
	X(RC_RDMA_WRITE_FIRST, rc_rdma_write_first, 0x06)                     \
	X(RC_RDMA_WRITE_MIDDLE, rc_rdma_write_middle, 0x07)                    \
	X(RC_RDMA_WRITE_LAST, rc_rdma_write_last, 0x08)                      \
	X(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, rc_rdma_write_last_with_immediate, 0x09)       \
	X(RC_RDMA_WRITE_ONLY, rc_rdma_write_only, 0x0a)                      \
	X(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, rc_rdma_write_only_with_immediate, 0x0b)       \
	X(RC_RDMA_READ_REQUEST, rc_rdma_read_request, 0x0c)                    \
	X(RC_RDMA_READ_RESPONSE_FIRST, rc_rdma_read_response_first, 0x0d)             \
	X(RC_RDMA_READ_RESPONSE_MIDDLE, rc_rdma_read_response_middle, 0x0e)            \
	X(RC_RDMA_READ_RESPONSE_LAST, rc_rdma_read_response_last, 0x0f)              \
	X(RC_RDMA_READ_RESPONSE_ONLY, rc_rdma_read_response_only, 0x10)              \
	X(RC_ACKNOWLEDGE, rc_acknowledge, 0x11)                          \
	X(RC_ATOMIC_ACKNOWLEDGE, rc_atomic_acknowledge, 0x12)                   \
	X(RC_COMPARE_SWAP, rc_compare_swap, 0x13)                         \
	X(RC_FETCH_ADD, rc_fetch_add, 0x14)                            \
	X(RC_SEND_LAST_WITH_INVALIDATE, rc_send_last_with_invalidate, 0x16)            \
	X(RC_SEND_ONLY_WITH_INVALIDATE, rc_send_only_with_invalidate, 0x17)            \
	X(RC_FLUSH, rc_flush, 0x1c)                                \
	X(RC_ATOMIC_WRITE, rc_atomic_write, 0x1d)                         \
	X(UC_SEND_FIRST, uc_send_first, 0x20)                           \
	X(UC_SEND_MIDDLE, uc_send_middle, 0x21)                          \
	X(UC_SEND_LAST, uc_send_last, 0x22)                            \
	X(UC_SEND_LAST_WITH_IMMEDIATE, uc_send_last_with_immediate, 0x23)             \
	X(UC_SEND_ONLY, uc_send_only, 0x24)                            \
	X(UC_SEND_ONLY_WITH_IMMEDIATE, uc_send_only_with_immediate, 0x25)             \
	X(UC_RDMA_WRITE_FIRST, uc_rdma_write_first, 0x26)                     \
	X(UC_RDMA_WRITE_MIDDLE, uc_rdma_write_middle, 0x27)                    \
	X(UC_RDMA_WRITE_LAST, uc_rdma_write_last, 0x28)                      \
	X(UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, uc_rdma_write_last_with_immediate, 0x29)       \
	X(UC_RDMA_WRITE_ONLY, uc_rdma_write_only, 0x2a)                      \
	X(UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, uc_rdma_write_only_with_immediate, 0x2b)       \
	X(UD_SEND_ONLY, ud_send_only, 0x64)                            \
	X(UD_SEND_ONLY_WITH_IMMEDIATE, ud_send_only_with_immediate, 0x65)             \
	X(CNP, cnp, 0x81)

enum roce_opcode {
#define ROCE_OPCODE_ENUM(name, field, val) ROCE_##name = val,
	ROCE_OPCODES(ROCE_OPCODE_ENUM)
#undef ROCE_OPCODE_ENUM
};

/* Dense index of each known opcode (counters, name tables) */
enum roce_opcode_idx {
#define ROCE_OPCODE_IDX(name, field, val) ROCE_IDX_##name,
	ROCE_OPCODES(ROCE_OPCODE_IDX)
#undef ROCE_OPCODE_IDX
	ROCE_OPCODE_IDX_MAX
};

/* Dense index of an opcode, or -1 for one longhaul does not know */
static __always_inline int roce_opcode_index(__u8 opcode)
{
	switch (opcode) {
#define ROCE_OPCODE_CASE(name, field, val) \
	case val:                          \
		return ROCE_IDX_##name;
		ROCE_OPCODES(ROCE_OPCODE_CASE)
#undef ROCE_OPCODE_CASE
	default:
		return -1;
	}
}

/* What an opcode carries: flags returned by roce_opcode_info() */
enum roce_opf {
	ROCE_OPF_VALID = 1U << 0, /* opcode known to longhaul */
	ROCE_OPF_FIRST = 1U << 1, /* first packet of a message */
	ROCE_OPF_MIDDLE = 1U << 2,
	ROCE_OPF_LAST = 1U << 3, /* last packet of a message */
	ROCE_OPF_REQ = 1U << 4, /* requester -> responder */
	ROCE_OPF_RESP = 1U << 5, /* responder -> requester (ACK, read resp) */
	ROCE_OPF_PAYLOAD = 1U << 6, /* may carry payload */
	ROCE_OPF_SEND = 1U << 7,
	ROCE_OPF_WRITE = 1U << 8,
	ROCE_OPF_READ = 1U << 9,
	ROCE_OPF_ATOMIC = 1U << 10,
	/* Extension headers present, in wire order after the BTH */
	ROCE_OPF_RDETH = 1U << 11,
	ROCE_OPF_DETH = 1U << 12,
	ROCE_OPF_FETH = 1U << 13,
	ROCE_OPF_RETH = 1U << 14,
	ROCE_OPF_ATOMIC_ETH = 1U << 15,
	ROCE_OPF_AETH = 1U << 16,
	ROCE_OPF_ATOMIC_ACK_ETH = 1U << 17,
	ROCE_OPF_IMM = 1U << 18,
	ROCE_OPF_IETH = 1U << 19,
	ROCE_OPF_CNP = 1U << 20, /* 16 reserved bytes follow the BTH */
	ROCE_OPF_ONLY = ROCE_OPF_FIRST | ROCE_OPF_LAST,
};

/*
 * Flags for an opcode, 0 when longhaul does not know it (RD and XRC are not
 * supported). A switch rather than a table: the BPF verifier sees constants.
 */
static __always_inline __u32 roce_opcode_info(__u8 opcode)
{
	__u32 t = opcode & ROCE_TRANSPORT_MASK;
	__u32 op = opcode & ~ROCE_TRANSPORT_MASK;
	__u32 base = ROCE_OPF_VALID | ROCE_OPF_REQ;
	__u32 f;

	if (opcode == ROCE_CNP)
		return ROCE_OPF_VALID | ROCE_OPF_CNP;

	if (t == ROCE_TRANSPORT_UD) {
		if (op == ROCE_OP_SEND_ONLY)
			return base | ROCE_OPF_ONLY | ROCE_OPF_SEND | ROCE_OPF_PAYLOAD | ROCE_OPF_DETH;
		if (op == ROCE_OP_SEND_ONLY_IMM)
			return base | ROCE_OPF_ONLY | ROCE_OPF_SEND | ROCE_OPF_PAYLOAD | ROCE_OPF_DETH |
			       ROCE_OPF_IMM;
		return 0;
	}
	if (t != ROCE_TRANSPORT_RC && t != ROCE_TRANSPORT_UC)
		return 0;
	/* UC has only SEND and RDMA WRITE */
	if (t == ROCE_TRANSPORT_UC && op > ROCE_OP_WRITE_ONLY_IMM)
		return 0;

	switch (op) {
	case ROCE_OP_SEND_FIRST:
		f = ROCE_OPF_FIRST;
		break;
	case ROCE_OP_SEND_MIDDLE:
		f = ROCE_OPF_MIDDLE;
		break;
	case ROCE_OP_SEND_LAST:
		f = ROCE_OPF_LAST;
		break;
	case ROCE_OP_SEND_LAST_IMM:
		f = ROCE_OPF_LAST | ROCE_OPF_IMM;
		break;
	case ROCE_OP_SEND_ONLY:
		f = ROCE_OPF_ONLY;
		break;
	case ROCE_OP_SEND_ONLY_IMM:
		f = ROCE_OPF_ONLY | ROCE_OPF_IMM;
		break;
	case ROCE_OP_SEND_LAST_INV:
		f = ROCE_OPF_LAST | ROCE_OPF_IETH;
		break;
	case ROCE_OP_SEND_ONLY_INV:
		f = ROCE_OPF_ONLY | ROCE_OPF_IETH;
		break;
	case ROCE_OP_WRITE_FIRST:
		return base | ROCE_OPF_WRITE | ROCE_OPF_PAYLOAD | ROCE_OPF_FIRST | ROCE_OPF_RETH;
	case ROCE_OP_WRITE_MIDDLE:
		return base | ROCE_OPF_WRITE | ROCE_OPF_PAYLOAD | ROCE_OPF_MIDDLE;
	case ROCE_OP_WRITE_LAST:
		return base | ROCE_OPF_WRITE | ROCE_OPF_PAYLOAD | ROCE_OPF_LAST;
	case ROCE_OP_WRITE_LAST_IMM:
		return base | ROCE_OPF_WRITE | ROCE_OPF_PAYLOAD | ROCE_OPF_LAST | ROCE_OPF_IMM;
	case ROCE_OP_WRITE_ONLY:
		return base | ROCE_OPF_WRITE | ROCE_OPF_PAYLOAD | ROCE_OPF_ONLY | ROCE_OPF_RETH;
	case ROCE_OP_WRITE_ONLY_IMM:
		return base | ROCE_OPF_WRITE | ROCE_OPF_PAYLOAD | ROCE_OPF_ONLY | ROCE_OPF_RETH |
		       ROCE_OPF_IMM;
	case ROCE_OP_READ_REQUEST:
		return base | ROCE_OPF_READ | ROCE_OPF_ONLY | ROCE_OPF_RETH;
	case ROCE_OP_READ_RESP_FIRST:
		return ROCE_OPF_VALID | ROCE_OPF_RESP | ROCE_OPF_READ | ROCE_OPF_PAYLOAD |
		       ROCE_OPF_FIRST | ROCE_OPF_AETH;
	case ROCE_OP_READ_RESP_MIDDLE:
		return ROCE_OPF_VALID | ROCE_OPF_RESP | ROCE_OPF_READ | ROCE_OPF_PAYLOAD |
		       ROCE_OPF_MIDDLE;
	case ROCE_OP_READ_RESP_LAST:
		return ROCE_OPF_VALID | ROCE_OPF_RESP | ROCE_OPF_READ | ROCE_OPF_PAYLOAD |
		       ROCE_OPF_LAST | ROCE_OPF_AETH;
	case ROCE_OP_READ_RESP_ONLY:
		return ROCE_OPF_VALID | ROCE_OPF_RESP | ROCE_OPF_READ | ROCE_OPF_PAYLOAD |
		       ROCE_OPF_ONLY | ROCE_OPF_AETH;
	case ROCE_OP_ACK:
		return ROCE_OPF_VALID | ROCE_OPF_RESP | ROCE_OPF_ONLY | ROCE_OPF_AETH;
	case ROCE_OP_ATOMIC_ACK:
		return ROCE_OPF_VALID | ROCE_OPF_RESP | ROCE_OPF_ONLY | ROCE_OPF_AETH |
		       ROCE_OPF_ATOMIC_ACK_ETH | ROCE_OPF_ATOMIC;
	case ROCE_OP_CMP_SWAP:
	case ROCE_OP_FETCH_ADD:
		return base | ROCE_OPF_ATOMIC | ROCE_OPF_ONLY | ROCE_OPF_ATOMIC_ETH;
	case ROCE_OP_FLUSH:
		return base | ROCE_OPF_ONLY | ROCE_OPF_FETH | ROCE_OPF_RETH;
	case ROCE_OP_ATOMIC_WRITE:
		return base | ROCE_OPF_ONLY | ROCE_OPF_ATOMIC | ROCE_OPF_RETH | ROCE_OPF_PAYLOAD;
	default:
		return 0;
	}
	/* SEND family: shared bits */
	return base | ROCE_OPF_SEND | ROCE_OPF_PAYLOAD | f;
}

/* Bytes of extension headers that follow the BTH for these opcode flags */
static __always_inline __u32 roce_ext_hdr_len(__u32 f)
{
	__u32 len = 0;

	if (f & ROCE_OPF_RDETH)
		len += sizeof(struct roce_rdeth);
	if (f & ROCE_OPF_DETH)
		len += sizeof(struct roce_deth);
	if (f & ROCE_OPF_FETH)
		len += sizeof(struct roce_feth);
	if (f & ROCE_OPF_RETH)
		len += sizeof(struct roce_reth);
	if (f & ROCE_OPF_ATOMIC_ETH)
		len += sizeof(struct roce_atomic_eth);
	if (f & ROCE_OPF_AETH)
		len += sizeof(struct roce_aeth);
	if (f & ROCE_OPF_ATOMIC_ACK_ETH)
		len += sizeof(struct roce_atomic_ack_eth);
	if (f & ROCE_OPF_IMM)
		len += sizeof(struct roce_immdt);
	if (f & ROCE_OPF_IETH)
		len += sizeof(struct roce_ieth);
	if (f & ROCE_OPF_CNP)
		len += ROCE_CNP_PAD_LEN;
	return len;
}

/* Offset after the BTH of the extension header 'which' (one ROCE_OPF_*) */
static __always_inline __u32 roce_ext_hdr_off(__u32 f, __u32 which)
{
	/* Header flags are numbered in wire order: the ones below 'which' precede it */
	return roce_ext_hdr_len(f & (which - 1));
}

/* ---- AETH syndromes (9.7.5.1.2) ---- */
#define AETH_TYPE_MASK 0xe0
#define AETH_TYPE_ACK 0x00
#define AETH_TYPE_RNR_NAK 0x20
#define AETH_TYPE_RESERVED 0x40
#define AETH_TYPE_NAK 0x60
#define AETH_VALUE_MASK 0x1f
/* ACK carrying "no credit count": what rxe sends (AETH_ACK_UNLIMITED) */
#define AETH_ACK_UNLIMITED 0x1f
#define AETH_NAK_PSN_SEQ_ERROR 0x60
#define AETH_NAK_INVALID_REQUEST 0x61
#define AETH_NAK_REMOTE_ACCESS 0x62
#define AETH_NAK_REMOTE_OP 0x63
#define AETH_NAK_INVALID_RD_REQUEST 0x64

/* ---- accessors (host order in, host order out) ---- */
static __always_inline __u32 bth_qpn(const struct roce_bth *b)
{
	return lh_ntohl(b->qpn) & ROCE_QPN_MASK;
}

static __always_inline __u32 bth_psn(const struct roce_bth *b)
{
	return lh_ntohl(b->apsn) & ROCE_PSN_MASK;
}

static __always_inline int bth_ackreq(const struct roce_bth *b)
{
	return (lh_ntohl(b->apsn) & BTH_ACKREQ) != 0;
}

static __always_inline __u8 bth_byte4(const struct roce_bth *b)
{
	return (__u8)(lh_ntohl(b->qpn) >> 24);
}

static __always_inline __u32 bth_padcnt(const struct roce_bth *b)
{
	return (b->flags & BTH_PAD_MASK) >> BTH_PAD_SHIFT;
}

static __always_inline __u32 bth_tver(const struct roce_bth *b)
{
	return b->flags & BTH_TVER_MASK;
}

static __always_inline void bth_set_qpn(struct roce_bth *b, __u8 byte4, __u32 qpn)
{
	b->qpn = lh_htonl(((__u32)byte4 << 24) | (qpn & ROCE_QPN_MASK));
}

static __always_inline void bth_set_psn(struct roce_bth *b, int ackreq, __u32 psn)
{
	b->apsn = lh_htonl((ackreq ? BTH_ACKREQ : 0) | (psn & ROCE_PSN_MASK));
}

static __always_inline __u8 aeth_syndrome(const struct roce_aeth *a)
{
	return (__u8)(lh_ntohl(a->smsn) >> 24);
}

static __always_inline __u32 aeth_msn(const struct roce_aeth *a)
{
	return lh_ntohl(a->smsn) & ROCE_MSN_MASK;
}

static __always_inline void aeth_set(struct roce_aeth *a, __u8 syndrome, __u32 msn)
{
	a->smsn = lh_htonl(((__u32)syndrome << 24) | (msn & ROCE_MSN_MASK));
}

/* ---- PSN arithmetic modulo 2^24 (9.7.1: half the space is "ahead") ---- */
static __always_inline __u32 psn_add(__u32 psn, __u32 n)
{
	return (psn + n) & ROCE_PSN_MASK;
}

/* Signed distance a - b in (-2^23, 2^23] */
static __always_inline __s32 psn_diff(__u32 a, __u32 b)
{
	return (__s32)((a - b) << 8) >> 8;
}

static __always_inline int psn_before(__u32 a, __u32 b)
{
	return psn_diff(a, b) < 0;
}

#endif /* LH_ROCEV2_H */
