#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# ns/packet of the gateway XDP program next to bare XDP programs (tests/bench/bpf_bench.c).
set -euo pipefail
exec "$O/tests/bench/bpf_bench"
