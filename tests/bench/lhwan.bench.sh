#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# lhwan's ceiling: 1 KB frames through lhwan with a 10 ms one-way delay.
#
#   gen --- [wan: lhwan --delay 10ms] --- sink
#
# gen sends raw frames flat out or paced (lhwan probe send --raw), sink only
# counts what its veth receives. Rows, each the median of RUNS runs:
#   - saturation throughput of a Linux bridge in the wan namespace (baseline:
#     the same veths and generator, no emulator, no delay);
#   - saturation throughput of lhwan (delivered, whatever its timing);
#   - for a ladder of offered rates, what lhwan delivers and how late frames
#     leave on average; the ceiling is the highest offered rate delivered with
#     < 0.1 % loss and frames leaving < 0.5 ms (5 % of the delay) late.
# Prints one JSON object (see tests/bench/run.sh); progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/../.."
O=${O:-build}
LHWAN=${LHWAN:-$O/bin/lhwan}
RUNS=${LH_BENCH_RUNS:-3}
SECS=${LH_BENCH_SECS:-3}
LADDER=${LH_BENCH_LADDER:-"1 2 3 4 5 6"}
P=lhbench$$
SIZE=1024
DELAY=10ms

log() { printf 'lhwan.bench: %s\n' "$*" >&2; }
nsx() {
	local n=$1
	shift
	nsenter --net="/var/run/netns/$P-$n" -- "$@"
}

cleanup() {
	local n
	[ -z "${LHWAN_PID:-}" ] || kill "$LHWAN_PID" 2>/dev/null || true
	wait 2>/dev/null || true
	for n in gen wan sink; do ip netns del "$P-$n" 2>/dev/null || true; done
}
trap 'cleanup; rm -f "/tmp/$P.stats.json"*' EXIT

[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 1; }
[ -x "$LHWAN" ] || { log "lhwan not built ($LHWAN)"; exit 1; }

for n in gen wan sink; do
	ip netns add "$P-$n"
	ip -n "$P-$n" link set lo up
done
nsx wan sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip link add g0 netns "$P-gen" type veth peer name pa netns "$P-wan"
ip link add pb netns "$P-wan" type veth peer name s0 netns "$P-sink"
ip -n "$P-gen" link set g0 up
ip -n "$P-wan" link set pa up
ip -n "$P-wan" link set pb up
ip -n "$P-sink" link set s0 up
ip -n "$P-gen" addr add 10.9.0.1/24 dev g0

# (nsenter keeps the root namespace's /sys: ask netlink)
sink_bytes() { ip -n "$P-sink" -j -s link show dev s0 | jq '.[0].stats64.rx.bytes'; }
sink_pkts() { ip -n "$P-sink" -j -s link show dev s0 | jq '.[0].stats64.rx.packets'; }

# gen RATE_GBIT: send for SECS seconds (0: flat out); prints "sent delivered_bits_per_s"
gen() {
	local rate=$1 pkts0 bytes0 pkts1 bytes1 sent args
	args=(--raw --no-icrc --dev g0 --src 10.9.0.1 --dst 10.9.0.2 --dst-mac 02:00:00:00:00:99
		--size "$SIZE" --burst 32)
	if [ "$rate" = 0 ]; then
		args+=(--count 1000000000)
	else
		args+=(--rate "${rate}gbit" --count "$(awk -v r="$rate" -v s="$SECS" -v z="$SIZE" \
			'BEGIN { printf "%d", r * 1e9 * s / (8 * z) }')")
	fi
	pkts0=$(sink_pkts)
	bytes0=$(sink_bytes)
	# timeout ends a flat-out run (status 124); the sender still prints its count
	sent=$({ nsx gen timeout -s TERM "$SECS" "$LHWAN" probe send "${args[@]}" || true; } | jq .sent)
	# the last frames are still on the 10 ms wire
	sleep 0.2
	pkts1=$(sink_pkts)
	bytes1=$(sink_bytes)
	echo "$sent $((pkts1 - pkts0)) $(awk -v b=$((bytes1 - bytes0)) -v s="$SECS" 'BEGIN { printf "%.0f", b * 8 / s }')"
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

# ---- baseline: a bridge
nsx wan ip link add br0 type bridge
nsx wan ip link set pa master br0
nsx wan ip link set pb master br0
nsx wan ip link set br0 up
vals=()
for _ in $(seq "$RUNS"); do
	read -r _ _ bps < <(gen 0)
	vals+=("$bps")
done
bridge=$(printf '%s\n' "${vals[@]}" | median)
bridge_spread=$(printf '%s\n' "${vals[@]}" | awk '{ print $1 / 1e9 }' | spread)
log "bridge saturation: $bridge b/s"
nsx wan ip link del br0

# ---- lhwan
start_lhwan() {
	rm -f "/tmp/$P.stats.json"*
	nsx wan "$LHWAN" --delay "$DELAY" --stats-file "/tmp/$P.stats.json" pa pb >/dev/null 2>&1 &
	for _ in $(seq 100); do [ -e "/tmp/$P.stats.json" ] && break; sleep 0.02; done
	# the stats file names the emulator's own pid ($! is a subshell's)
	LHWAN_PID=$(jq .pid "/tmp/$P.stats.json")
}
stop_lhwan() {
	kill "$LHWAN_PID"
	wait || true
	LHWAN_PID=
}
lhwan_late_ms() {
	jq '.a2b.late_avg_ns / 1e6' "/tmp/$P.stats.json"
}

vals=()
for _ in $(seq "$RUNS"); do
	start_lhwan
	read -r _ _ bps < <(gen 0)
	stop_lhwan
	vals+=("$bps")
done
sat=$(printf '%s\n' "${vals[@]}" | median)
sat_spread=$(printf '%s\n' "${vals[@]}" | awk '{ print $1 / 1e9 }' | spread)
log "lhwan saturation: $sat b/s"

row "bridge, no delay (baseline)" "saturation throughput" "Gbit/s" "$(awk -v v="$bridge" 'BEGIN { printf "%.3f", v / 1e9 }')" "" "" "$RUNS" "$bridge_spread"
row "lhwan, 10 ms" "saturation throughput" "Gbit/s" "$(awk -v v="$sat" 'BEGIN { printf "%.3f", v / 1e9 }')" \
	"bridge, no delay (baseline)" "$(awk -v a="$sat" -v b="$bridge" 'BEGIN { printf "%.3f", a / b }')" "$RUNS" "$sat_spread"

ceiling=0
for rate in $LADDER; do
	dl=()
	late=()
	offered=()
	for _ in $(seq "$RUNS"); do
		start_lhwan
		read -r sent got bps < <(gen "$rate")
		kill -USR1 "$LHWAN_PID"
		sleep 0.1
		late+=("$(lhwan_late_ms)")
		stop_lhwan
		# the sink also sees the odd IPv6 frame of the generator's own stack: cap at 1
		dl+=("$(awk -v s="$sent" -v g="$got" 'BEGIN { f = s ? g / s : 0; printf "%.6f", (f > 1 ? 1 : f) }')")
		offered+=("$(awk -v s="$sent" -v z="$SIZE" -v t="$SECS" 'BEGIN { printf "%.3f", s * z * 8 / t / 1e9 }')")
	done
	d=$(printf '%s\n' "${dl[@]}" | median)
	l=$(printf '%s\n' "${late[@]}" | median)
	o=$(printf '%s\n' "${offered[@]}" | median)
	log "offered $rate Gbit/s (generator reached $o): delivered fraction $d, frames late by $l ms on average"
	row "lhwan, 10 ms, offered $rate Gbit/s" "offered rate reached by the generator" "Gbit/s" "$o" "" "" "$RUNS" \
		"$(printf '%s\n' "${offered[@]}" | spread)"
	row "lhwan, 10 ms, offered $rate Gbit/s" "delivered fraction" "ratio" "$d" "" "" "$RUNS" \
		"$(printf '%s\n' "${dl[@]}" | spread)"
	row "lhwan, 10 ms, offered $rate Gbit/s" "mean lateness of departures" "ms" "$l" "" "" "$RUNS" \
		"$(printf '%s\n' "${late[@]}" | spread)"
	# a rate counts only if the generator really offered it
	if awk -v d="$d" -v l="$l" -v o="$o" -v r="$rate" 'BEGIN { exit !(d >= 0.999 && l < 0.5 && o >= 0.98 * r) }'; then
		ceiling=$rate
	fi
done
row "lhwan, 10 ms" "ceiling (< 0.1 % loss, < 0.5 ms late)" "Gbit/s" "$ceiling" "" "" "$RUNS" ""
log "ceiling: $ceiling Gbit/s"

printf '%s\n' "${rows[@]}" | jq -s --arg cpus "$(nproc)" '{
	name: "lhwan",
	title: "lhwan: WAN emulator ceiling (1 KB frames, 10 ms one-way delay)",
	notes: ("gen -> lhwan -> sink over veths on this \($cpus)-CPU machine; the generator (AF_PACKET, batched) and lhwan share the CPUs. " +
		"Saturation: generator flat out, delivered bit rate at the sink. Ladder: paced offered load; the ceiling is the highest offered rate delivered with < 0.1 % loss and frames leaving < 0.5 ms after their due time. " +
		"Baseline: a Linux bridge in place of lhwan, no delay."),
	rows: .}'
