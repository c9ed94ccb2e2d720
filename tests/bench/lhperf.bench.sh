#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# lhperf's own speed: how many RoCEv2 packets per second it moves at 1 KB
# MTU over a veth between two namespaces, and per core of CPU it uses.
#
#   cli (lhperf client) --- veth --- srv (lhperf server)
#
# Cases, each the median of RUNS runs of SECS seconds (--duration):
#   - WRITE 64 KiB messages (64 packets), 1 QP and 4 QPs;
#   - SEND of one-packet messages (1 KiB), 4 QPs: the message rate;
#   - WRITE 64 KiB, 4 QPs, 1 % random loss at the server's ingress (go-back-N):
#     goodput against the lossless 4-QP case of the same run.
# "per core" divides packets by the CPU time (user + system) the process
# used; the kernel's veth and receive work done in softirq on its CPU counts
# there too. Prints one JSON object (see tests/bench/run.sh); progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/../.."
O=${O:-build}
LHPERF=${LHPERF:-$O/bin/lhperf}
RUNS=${LH_BENCH_RUNS:-3}
SECS=${LH_BENCH_SECS:-3}
P=lhpb$$

log() { printf 'lhperf.bench: %s\n' "$*" >&2; }
nsx() {
	local n=$1
	shift
	nsenter --net="/var/run/netns/$P-$n" -- "$@"
}

cleanup() {
	[ -z "${SRV_PID:-}" ] || kill "$SRV_PID" 2>/dev/null || true
	wait 2>/dev/null || true
	ip netns del "$P-cli" 2>/dev/null || true
	ip netns del "$P-srv" 2>/dev/null || true
	rm -f "/tmp/$P".*
}
trap cleanup EXIT

[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 1; }
[ -x "$LHPERF" ] || { log "lhperf not built ($LHPERF)"; exit 1; }

ip netns add "$P-cli"
ip netns add "$P-srv"
ip link add c0 netns "$P-cli" type veth peer name s0 netns "$P-srv"
for n in cli srv; do ip -n "$P-$n" link set lo up; done
ip -n "$P-cli" link set c0 up
ip -n "$P-srv" link set s0 up
ip -n "$P-cli" addr add 10.31.0.1/24 dev c0
ip -n "$P-srv" addr add 10.31.0.2/24 dev s0

# one_run ARGS...: a server and a client run; prints the client's JSON
one_run() {
	nsx srv "$LHPERF" --server --json --listen-timeout 30 >"/tmp/$P.srv" 2>/dev/null &
	SRV_PID=$!
	nsx cli timeout 120 "$LHPERF" --json --duration "$SECS" "$@" 10.31.0.2 2>"/tmp/$P.err" ||
		{ log "client failed: $(cat "/tmp/$P.err")"; }
	wait "$SRV_PID" || true
	SRV_PID=
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
spread() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.4g", hi - lo }'; }

rows=()
row() { # case metric unit value baseline ratio runs spread
	rows+=("$(jq -n --arg c "$1" --arg m "$2" --arg u "$3" --argjson v "$4" --arg b "$5" \
		--arg r "$6" --argjson n "$7" --arg s "$8" \
		'{case: $c, metric: $m, unit: $u, value: $v, baseline: (if $b == "" then null else $b end),
		  ratio: (if $r == "" then null else ($r | tonumber) end), runs: $n,
		  spread: (if $s == "" then null else ($s | tonumber) end)}')")
}

declare -A MED
# measure CASE ARGS...: RUNS runs; rows for the packet rate, the rates per core
# and the goodput (medians in MED[CASE/metric])
measure() {
	local name=$1 f m vals out
	shift
	local -a runs=()
	for _ in $(seq "$RUNS"); do
		out=$(one_run "$@")
		if ! printf '%s' "$out" | jq -e '.verified' >/dev/null 2>&1; then
			log "$name: run not verified: $(printf '%s' "$out" | jq -c '{status, error}' 2>/dev/null)"
			exit 1
		fi
		runs+=("$out")
	done
	for f in "pps:packets sent per second:packets/s" \
		"pps_per_core:client packets per CPU second:packets/s/core" \
		"responder.pps_per_core:server packets per CPU second:packets/s/core" \
		"goodput_gbps:goodput:Gbit/s" "msg_rate_mpps:message rate:Mmsg/s"; do
		m=${f%%:*}
		vals=$(for out in "${runs[@]}"; do printf '%s' "$out" | jq ".$m"; done)
		MED[$name/$m]=$(printf '%s\n' "$vals" | median)
		row "$name" "$(echo "$f" | cut -d: -f2)" "${f##*:}" \
			"$(printf '%.4g' "${MED[$name/$m]}")" "" "" "$RUNS" "$(printf '%s\n' "$vals" | spread)"
	done
	log "$name: $(printf '%.0f' "${MED[$name/pps]}") packets/s, $(printf '%.0f' "${MED[$name/pps_per_core]}") per client core, $(printf '%.3f' "${MED[$name/goodput_gbps]}") Gbit/s"
}

measure "WRITE 64 KiB, MTU 1024, 1 QP" --op write --size 64K --mtu 1024 --qps 1
measure "WRITE 64 KiB, MTU 1024, 4 QPs" --op write --size 64K --mtu 1024 --qps 4
measure "SEND 1 KiB, MTU 1024, 4 QPs" --op send --size 1K --mtu 1024 --qps 4

# go-back-N under 1 % random loss on the wire, against the lossless case above
printf 'table netdev lhpb {\n chain in {\n  type filter hook ingress device "s0" priority 0; policy accept;\n  udp dport 4791 numgen random mod 100 < 1 drop\n }\n}\n' |
	ip netns exec "$P-srv" nft -f -
lossless="WRITE 64 KiB, MTU 1024, 4 QPs"
lossy="WRITE 64 KiB, MTU 1024, 4 QPs, 1 % loss (gbn)"
vals=()
for _ in $(seq "$RUNS"); do
	out=$(one_run --op write --size 64K --mtu 1024 --qps 4 --timeout 10)
	printf '%s' "$out" | jq -e '.verified' >/dev/null || { log "lossy run not verified"; exit 1; }
	vals+=("$(printf '%s' "$out" | jq .goodput_gbps)")
done
g=$(printf '%s\n' "${vals[@]}" | median)
row "$lossy" "goodput" "Gbit/s" "$(printf '%.4g' "$g")" "$lossless" \
	"$(awk -v a="$g" -v b="${MED[$lossless/goodput_gbps]}" 'BEGIN { printf "%.3f", a / b }')" \
	"$RUNS" "$(printf '%s\n' "${vals[@]}" | spread)"
log "$lossy: $g Gbit/s"

printf '%s\n' "${rows[@]}" | jq -s --arg cpus "$(nproc)" --arg secs "$SECS" '{
	name: "lhperf",
	title: "lhperf: RoCEv2 endpoint packet rate at 1 KB MTU over a veth",
	notes: ("lhperf client and server in two namespaces joined by one veth, on this \($cpus)-CPU machine; each run lasts \($secs) s (--duration). " +
		"Per core: packets divided by the CPU time (user + system) of that process; the veth transfer and the receiving kernel path run in softirq on the sender'"'"'s CPU and count for it. " +
		"Every run is verified byte for byte by the server. The loss row drops 1 % of the frames at the server'"'"'s ingress (nftables numgen), go-back-N with a 4 ms retransmit timeout."),
	rows: .}'
