#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Credit-based flow control end to end (issue 7) in the dual-path topology
# (2 ms per path), lhperf WRITE from src to dst, CREDIT_BENCH_QPS QPs:
#  - goodput with credit control on and off, on an uncongested path and on a
#    congested one (rt1 -> gwb limited by tbf to 100 Mbit/s with a 200 KB queue,
#    smaller than the QPs' windows together): ratios against credit off on the
#    same path in the same run; the bottleneck's drops beside them
#  - signalling overhead for a few coalescing settings (--credit-quantum): the
#    RSVP bytes all four agents sent (IPv4 header included) per data byte
#    delivered, from the agents' exit counters; three hop-to-hop links carry
#    data and credit (gwa-rt1, rt1-gwb, and the ACKs' way back), the backup path
#    heartbeats
# gwa, the data's first hop, gets 256 KB per flow: it must hold a NIC's whole
# window (128 x 1 KB); the other hops 48 KB, so that 4 flows' credit (192 KB) fits
# the bottleneck's 200 KB queue.
# Prints the bench JSON (tests/bench/run.sh) on stdout.
#   CREDIT_BENCH_RUNS  runs per case, median taken (default 3)
#   CREDIT_BENCH_SECS  seconds per run (default 2)
#   CREDIT_BENCH_QPS   QPs (default 4)
set -euo pipefail
cd "$(dirname "$0")/../.."
O=${O:-$PWD/build}
case "$O" in /*) ;; *) O=$PWD/$O ;; esac
BIN=$O/bin
P=${CREDIT_BENCH_PREFIX:-lhcb}
RUNS=${CREDIT_BENCH_RUNS:-3}
SECS=${CREDIT_BENCH_SECS:-2}
QPS=${CREDIT_BENCH_QPS:-4}
TOPO=topologies/dual-path.sh
NODES=(gwa rt1 rt2 gwb)

# shellcheck source=tests/bench/lib.sh
. tests/bench/lib.sh
# shellcheck source=topologies/dual-path-credit.sh
. topologies/dual-path-credit.sh

# agents_up [LONGHAULD OPTIONS]: longhauld --mode credit on the four hops; FIRST_BUFFER
# (if set) is gwa's buffer: the data's first hop faces NICs nothing throttles, so it must
# hold a whole window per QP (128 x 1 KB packets) or pass the excess uncontrolled. gwb's
# buffer is the credit it grants rt1, which bounds what queues at the bottleneck
agents_up() {
	local n first=()
	for n in "${NODES[@]}"; do
		first=()
		case $n in gwa) [ -z "${FIRST_BUFFER:-}" ] || first=(--credit-buffer "$FIRST_BUFFER") ;; esac
		# shellcheck disable=SC2046
		agent_start "$n" --mode credit --instance "$P-$n" $(dual_path_credit_routes "$n") "$@" "${first[@]}"
	done
	agents_wait "${NODES[@]}"
}

# rsvp_bytes: RSVP bytes the stopped agents sent, all together
rsvp_bytes() {
	local n
	for n in "${NODES[@]}"; do
		sed -n 's/.*credit agent: //p' "$TMP/$n.log" | tail -1
	done | jq -s 'map(.tx_bytes) | add'
}

drops() {
	ex rt1 tc -s -j qdisc show dev gwb | jq '[.[] | select(.kind == "tbf") | .drops] | add // 0'
}

# xfer: one run; prints {status, goodput, bytes, drops}
xfer() {
	local d0 out
	d0=$(drops)
	ex dst timeout 60 "$BIN/lhperf" --server --json --listen-timeout 20 >/dev/null 2>&1 &
	local srv=$!
	out=$(ex src timeout 90 "$BIN/lhperf" --json --connect-timeout 10 --qps "$QPS" -D "$SECS" \
		-t 16 10.2.0.10 2>/dev/null) || true
	wait "$srv" 2>/dev/null || true
	jq -c --argjson d "$(($(drops) - d0))" '{status, goodput: .goodput_gbps, bytes, drops: $d,
		timeouts}' <<<"${out:-{\}}" 2>/dev/null || echo '{"status":"error","goodput":0,"bytes":0}'
}

# measure: median of RUNS runs by goodput
measure() {
	local i
	for i in $(seq "$RUNS"); do
		xfer
	done | jq -s -c 'sort_by(.goodput) | .[(length / 2 | floor)] + {runs: length,
		spread: ((map(.goodput) | max) - (map(.goodput) | min)), drops_all: (map(.drops) | add)}'
}

r2() { awk -v g="$1" -v b="$2" 'BEGIN { print (b > 0 ? int(g / b * 100) / 100 : 0) }'; }
r4() { awk -v v="$1" 'BEGIN { print int(v * 10000 + 0.5) / 10000 }'; }

"$TOPO" up --prefix "$P" -q --rtt 2ms >/dev/null

# ---- goodput, credit off and on, uncongested then congested
for path in open tbf; do
	label="uncongested"
	if [ "$path" = tbf ]; then
		ex rt1 tc qdisc replace dev gwb root tbf rate 100mbit burst 32kb limit 200kb
		label="rt1->gwb 100 Mbit/s, 200 KB queue"
	fi
	off=$(measure)
	base="credit off, $label"
	add "$base" goodput Gb/s "$(r4 "$(jq .goodput <<<"$off")")" "" null "$RUNS" \
		"$(r4 "$(jq .spread <<<"$off")")"
	[ "$path" = tbf ] && add "$base" "bottleneck drops (all runs)" packets "$(jq .drops_all <<<"$off")" "" null "$RUNS" null
	FIRST_BUFFER=256k agents_up --credit-buffer 48k --credit-quantum 12k
	on=$(measure)
	agents_down
	add "credit on (48 KB per flow and hop), $label" goodput Gb/s "$(r4 "$(jq .goodput <<<"$on")")" \
		"$base" "$(r2 "$(jq .goodput <<<"$on")" "$(jq .goodput <<<"$off")")" "$RUNS" \
		"$(r4 "$(jq .spread <<<"$on")")"
	[ "$path" = tbf ] && add "credit on (48 KB per flow and hop), $label" "bottleneck drops (all runs)" packets \
		"$(jq .drops_all <<<"$on")" "" null "$RUNS" null
	echo "$label: off $off on $on" >&2
done
ex rt1 tc qdisc del dev gwb root 2>/dev/null || true

# ---- 1 % of the packets lost between gwa and rt1 (rt1's ingress): goodput, and the
# credit gwa's flows have left at the end of a run, as a share of rt1's buffer (a lost
# packet's credit comes back with the answer to the next probe; 1.00: all of it)
dual_path_rt1_loss lhcb | ex rt1 nft -f -
label="1 % loss gwa->rt1"
off=$(measure)
base="credit off, $label"
add "$base" goodput Gb/s "$(r4 "$(jq .goodput <<<"$off")")" "" null "$RUNS" \
	"$(r4 "$(jq .spread <<<"$off")")"
FIRST_BUFFER=256k agents_up --credit-buffer 48k --credit-quantum 12k
on=$(measure)
sleep 0.3 # the last probe's answer
left=$(jq -n --argjson f "$(bpftool -j map dump pinned "/sys/fs/bpf/longhaul/$P-gwa/lh_cr_flow")" \
	--argjson g "$(bpftool -j map dump pinned "/sys/fs/bpf/longhaul/$P-gwa/lh_cr_grant")" '
	[$g[] | {k: (.formatted.key // .key | tostring), v: (.formatted.value // .value)} | select(.v.state == 1)] as $gs |
	[$f[] | {k: (.formatted.key // .key | tostring), v: (.formatted.value // .value)}] as $fs |
	[$gs[] | . as $x | ($fs[] | select(.k == $x.k) | .v.sent[$x.v.active]) as $sent |
	 ($x.v.limit[$x.v.active] - $sent) / 49152] | min // 0')
agents_down
recovered=$(sed -n 's/.*credit agent: //p' "$TMP/gwa.log" | tail -1 | jq .lost_bytes_recovered)
ex rt1 nft delete table inet lhcb
add "credit on (48 KB per flow and hop), $label" goodput Gb/s "$(r4 "$(jq .goodput <<<"$on")")" \
	"$base" "$(r2 "$(jq .goodput <<<"$on")" "$(jq .goodput <<<"$off")")" "$RUNS" \
	"$(r4 "$(jq .spread <<<"$on")")"
add "credit on (48 KB per flow and hop), $label" "credit left after a run / buffer (least flow)" ratio \
	"$(r4 "$left")" "" null 1 null
echo "$label: off $off on $on; credit left $left of rt1's buffer, $recovered bytes given back" >&2

# ---- signalling overhead per coalescing quantum (uncongested, buffer 256 KB)
for q in 8k 16k 64k; do
	agents_up --credit-buffer 256k --credit-quantum "$q"
	run=$(xfer)
	agents_down
	rb=$(rsvp_bytes)
	pct=$(awk -v r="$rb" -v d="$(jq .bytes <<<"$run")" 'BEGIN { print (d > 0 ? int(r / d * 100 * 1000 + 0.5) / 1000 : 0) }')
	echo "quantum $q: $run, RSVP $rb bytes, $pct %" >&2
	add "credit quantum $q, buffer 256 KB, 4 hops" "RSVP bytes per data byte" "%" "$pct" "" null 1 null
done

printf '%s\n' "${rows[@]}" | jq -s --arg q "$QPS" --arg s "$SECS" '{name: "credit-e2e",
	title: "Credit-based flow control end to end: goodput on and off, signalling overhead",
	notes: ("lhperf WRITE, 64 KB messages, MTU 1024, \($q) QPs, \($s) s runs, NIC timeout 268 ms (-t 16), dual-path topology (2 ms per path), longhauld --mode credit on gwa, rt1, rt2, gwb. Goodput ratios are against credit off on the same path in the same run. gwa (first hop of the data) 256 KB per flow (a NIC window of 128 x 1 KB must fit: what a first hop cannot hold passes uncontrolled), the other hops 48 KB (4 flows x 48 KB of credit fit the 200 KB queue of the bottleneck). Lossy case: 1 % of the RoCEv2 packets from gwa dropped at the ingress of rt1 (nftables); credit left: of the flows of gwa at the end of the last run, the least credit left on the path (limit - sent) over the 48 KB rt1 grants (1.00: the probes gave back all the credit the losses took). Signalling: RSVP bytes sent by all four agents together (IPv4 header included: Reserves, heartbeats every R = 50 ms, probes and their answers every R while data flows, R/4 while packets wait for credit, Path init, End) per data byte delivered; the target is 1 % per link, and three links carry credit for the data."),
	rows: .}'
