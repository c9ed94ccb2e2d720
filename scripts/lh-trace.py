#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Decode the Sentry's decision trace (a `make TRACE=1` build, bpf/lib/common.h
lh_trace) from the kernel's trace buffer into one line per decision:

  TIME D PSN ACTION [FLAGS] next=S_NEXT una=S_UNA rep=S_REPLAY   data from the NIC
  TIME A PSN KIND b4=BYTE4 ACTION [FLAGS] una=S_UNA              ACK/NAK from the WAN

FLAGS are the QP's after the decision (include/lh_maps.h LH_QPF_*).

  scripts/lh-trace.py [/sys/kernel/tracing/trace | FILE]
"""
import re
import sys

DATA_ACTS = ["NEW", "NACK", "GAPDROP", "UNPAIRED", "RETX", "SRPASS", "SRDROP", "ECHO", "ACKEDDROP"]
ACK_ACTS = ["pass", "FWD", "ABSORB", "CANCEL", "END"]
FLAGS = [(0x01, "PAIRED"), (0x02, "V6"), (0x10, "RELEASING"), (0x20, "EP"), (0x40, "SNAK"),
         (0x80, "NORING"), (0x100, "REW"), (0x200, "RETRY"), (0x400, "DEFER"), (0x800, "GWOFF")]
LINE = re.compile(r"\s([\d.]+): bpf_trace_printk: (LH\w+) (.*)")


def flags(f):
    return "|".join(n for b, n in FLAGS if f & b)


def name(table, i):
    return table[i] if i < len(table) else str(i)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "/sys/kernel/tracing/trace"
    pending = None
    with open(src) as f:
        for line in f:
            m = LINE.search(line)
            if not m:
                continue
            t, kind, args = float(m.group(1)), m.group(2), m.group(3).split()
            if kind == "LHD":
                x = int(args[1], 16)
                pending = (t, int(args[0]), x >> 16, x & 0xffff, int(args[2]))
            elif kind == "LHD2" and pending:
                t0, psn, act, f, nxt = pending
                print("%.6f D %d %s [%s] next=%d una=%s rep=%s" %
                      (t0, psn, name(DATA_ACTS, act), flags(f), nxt, args[0], args[1]))
                pending = None
            elif kind == "LHA":
                x = int(args[1], 16)
                syn, b4, act, f = x >> 24, (x >> 16) & 0xff, (x >> 12) & 0xf, x & 0xfff
                what = "ACK" if syn & 0xe0 == 0 else ("DNACK" if b4 & 0x20 else
                                                      "RNR" if syn & 0xe0 == 0x20 else "NAK")
                print("%.6f A %s %s b4=%02x %s [%s] una=%d" %
                      (t, args[0], what, b4, name(ACK_ACTS, act), flags(f), int(args[2], 16)))


if __name__ == "__main__":
    main()
