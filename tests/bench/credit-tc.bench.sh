#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# ns/packet of the credit program (bpf/credit_tc.bpf.c) per verdict next to a bare TC
# program, one packet per BPF_PROG_TEST_RUN (tests/bench/bpf_bench.c credit).
set -euo pipefail
exec nice -n -20 "$O/tests/bench/bpf_bench" credit
