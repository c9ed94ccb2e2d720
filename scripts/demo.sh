#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `make demo`: the main comparison of longhaul in the two-dc topology.
#
# Until the Depot/Sentry data path lands (issue 5) there is no comparison to
# show: the demo says so, then runs what exists end to end so that it never
# fails silently: a namespace pair, longhauld's gateway pass-through attached
# to a veth, RoCEv2 packets built by the library, and the counters it kept.
set -euo pipefail
cd "$(dirname "$0")/.."
O=${O:-build}
BIN=$O/bin
[ "$(id -u)" -eq 0 ] || { echo "demo: needs root (sudo make demo)" >&2; exit 1; }
for b in longhauld lhpkt; do
	[ -x "$BIN/$b" ] || { echo "demo: $BIN/$b missing: run make first" >&2; exit 1; }
done

echo "longhaul demo"
echo "The LR2 comparison (plain go-back-N vs longhaul vs lossless, across loss and RTT)"
echo "is not yet available: the Depot/Sentry data path is issue 5."
echo "Showing what works today: the gateway pass-through on a veth."
echo

ns_host=lhdemo-host ns_gw=lhdemo-gw pin=/sys/fs/bpf/longhaul/lhdemo
agent=
cleanup() {
	[ -n "$agent" ] && kill "$agent" 2>/dev/null && wait "$agent" 2>/dev/null
	ip netns del "$ns_host" 2>/dev/null || true
	ip netns del "$ns_gw" 2>/dev/null || true
}
trap cleanup EXIT
cleanup
ip netns add "$ns_host"
ip netns add "$ns_gw"
ip link add eth0 netns "$ns_host" type veth peer name dc0 netns "$ns_gw"
ip -n "$ns_host" link set dev eth0 up
ip -n "$ns_gw" link set dev dc0 up

log=$(mktemp)
nsenter --net=/var/run/netns/$ns_gw "$BIN/longhauld" --mode observe --dc dc0 --instance lhdemo --verify-icrc \
	>"$log" 2>&1 &
agent=$!
for _ in $(seq 50); do grep -q running "$log" && break; sleep 0.1; done
grep -q running "$log" || { cat "$log" >&2; echo "demo: longhauld did not start" >&2; exit 1; }
cat "$log"

send() { nsenter --net=/var/run/netns/$ns_host "$BIN/lhpkt" send --dev eth0 "$@"; }
send --opcode RC_RDMA_WRITE_FIRST --payload 1024 --count 100 --psn 16777200
send --opcode RC_ACKNOWLEDGE --syndrome 0x1f --count 20
send -6 --opcode RC_SEND_ONLY --payload 200 --count 10 --bad-icrc
sleep 0.3

echo
echo "counters kept by the gateway (bpftool map dump pinned $pin/lh_stats):"
bpftool map dump pinned "$pin/lh_stats" |
	jq -r '[.[0].values[].value] | reduce .[] as $v ({}; reduce ($v | keys[]) as $k (.; .[$k] += $v[$k])) |
		to_entries[] | select(.value > 0) | "  \(.key)\t\(.value)"'
echo "per opcode:"
bpftool map dump pinned "$pin/lh_opcodes" |
	jq -r '[.[0].values[].value] | reduce .[] as $v ({}; reduce ($v | keys[]) as $k (.; .[$k] += $v[$k])) |
		to_entries[] | select(.value > 0) | "  \(.key)\t\(.value)"'
