/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Fixed-width types for the headers in include/, which BPF programs and user
 * space share. BPF objects include vmlinux.h first (it defines __u8 ... __be64);
 * user space gets the same names from the kernel's uapi <linux/types.h>.
 */
#ifndef LH_TYPES_H
#define LH_TYPES_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define LH_PACKED __attribute__((packed))

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* a loop with a constant count, unrolled for the verifier (gcc, for user space, has no such pragma) */
#ifdef __clang__
#define LH_UNROLL _Pragma("unroll")
#else
#define LH_UNROLL
#endif

#endif /* LH_TYPES_H */
