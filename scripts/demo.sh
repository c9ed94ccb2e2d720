#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `make demo`: the main comparison of longhaul in the two-dc topology
# (src - gwa - lossy WAN - gwb - dst, topologies/two-dc.sh): lhperf, an RC
# endpoint with rxe's go-back-N, sends 64 KB RDMA WRITEs from src to dst
# with no gateway (plain go-back-N), then with longhauld on both gateways,
# on a lossless WAN and with 1 % random loss; then go-back-0 endpoints with
# 4 MB messages under the deterministic 1/256 loss that livelocks them.
# First one QP on an unlimited link (its window of 128 PSNs is the limit),
# then 8 QPs sharing a 200 Mbit/s WAN (the link is the limit, as on a
# gateway). The table comes from tests/bench/lr2-e2e.bench.sh (make bench
# runs the full matrix: RTT 2 and 20 ms, loss 0 / 0.1 / 1 / 5 %, 3 runs each).
set -euo pipefail
cd "$(dirname "$0")/.."
O=${O:-build}
case "$O" in /*) ;; *) O=$PWD/$O ;; esac
[ "$(id -u)" -eq 0 ] || { echo "demo: needs root (sudo make demo)" >&2; exit 1; }
for b in longhauld lhperf lhwan; do
	[ -x "$O/bin/$b" ] || { echo "demo: $O/bin/$b missing: run make first" >&2; exit 1; }
done

echo "longhaul demo: plain go-back-N vs longhaul, two-dc topology, WAN RTT 2 ms"
echo "(about a minute; every transfer is verified byte for byte by lhperf)"
echo
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! O=$O LR2_BENCH_PREFIX=lhdemo LR2_BENCH_RUNS=1 LR2_BENCH_SECS=3 LR2_BENCH_RTTS=2ms \
	LR2_BENCH_LOSSES="0 1" LR2_BENCH_LINKS="2ms:200mbit" LR2_BENCH_LINK_LOSSES="0 1" \
	bash tests/bench/lr2-e2e.bench.sh >"$out" 2>/dev/null; then
	echo "demo: the comparison failed (run tests/bench/lr2-e2e.bench.sh to see why)" >&2
	exit 1
fi
jq -r '.rows[] | select(.metric == "goodput") |
	[.case, "\(.value * 1000 | floor) Mb/s", "x\(.ratio * 100 | floor / 100) of its lossless baseline"] | @tsv' "$out" |
	column -t -s $'\t'
echo
jq -r '.rows[] | select(.metric == "fct p99") | "p99 message completion, \(.case): \(.value / 1000) ms"' "$out"
echo
echo "Counters of a run: sudo build/bin/longhaul -j --instance NAME stats (docs/operations.md)."
