/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Includes and small helpers every longhaul BPF program starts with. */
#ifndef LH_BPF_COMMON_H
#define LH_BPF_COMMON_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/* TC verdicts (linux/pkt_cls.h, which vmlinux.h does not carry) */
#ifndef TC_ACT_OK
#define TC_ACT_UNSPEC (-1)
#define TC_ACT_OK 0
#define TC_ACT_SHOT 2
#define TC_ACT_REDIRECT 7
#endif

/*
 * What a longhaul TC program returns for a packet it lets go on: "next"
 * (TCX_NEXT, the same value as TC_ACT_UNSPEC), not TC_ACT_OK. A hook may run
 * several programs (tcx links, or cls_bpf filters at several priorities on
 * kernels without tcx), and any verdict but this one ends the chain there:
 * with TC_ACT_OK from lh_dc_out, the credit program of another longhauld
 * after it on the DC egress (lh_cr_out) would never see the Depot's
 * deliveries. After the last program the kernel passes the packet, as for
 * TC_ACT_OK (tcx_run(), sch_handle_egress(); cls_bpf_classify() goes on to
 * the next filter).
 */
#define LH_TC_NEXT TC_ACT_UNSPEC

#ifndef READ_ONCE
#define READ_ONCE(x) (*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#endif

/*
 * Decision trace for debugging (`make TRACE=1`, read /sys/kernel/tracing/trace;
 * scripts/lh-trace.py decodes it): off in every normal build. At most
 * three arguments: bpf_printk keeps its format in rodata then, more would
 * put an argument array on a stack the data path has no room for.
 */
#ifdef LH_TRACE
#define lh_trace(fmt, a, b, c) bpf_printk(fmt, a, b, c)
#else
#define lh_trace(fmt, a, b, c) \
	do {                   \
	} while (0)
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define lh_le32_to_cpu(x) (x)
#else
#define lh_le32_to_cpu(x) __builtin_bswap32(x)
#endif

#endif /* LH_BPF_COMMON_H */
