#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# ns/packet of each LR2 data-path path (Depot, Sentry, release, SR filter) next to the bare
# XDP forwarder, one packet per BPF_PROG_TEST_RUN over prepared sequences (tests/bench/datapath_bench.c).
set -euo pipefail
# nice: fewer other tasks on its CPU between runs, so caches are less cold at random
exec nice -n -20 "$O/tests/bench/datapath_bench"
