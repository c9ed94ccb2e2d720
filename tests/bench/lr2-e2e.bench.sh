#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# End to end, same run, same link: goodput and message completion times of
# lhperf (rxe's go-back-N) from src to dst in the two-dc topology, with no
# gateway (plain GBN) and with longhaul on both gateways, across WAN loss
# {0, 0.1 %, 1 %, 5 %} (random, src -> dst) and RTT {2 ms, 20 ms}; and
# go-back-0 endpoints with 4 MB messages under deterministic 1/256 loss.
# Ratios are against the lossless plain run of the same RTT.
#
# Prints the bench JSON (tests/bench/run.sh) on stdout and a table on stderr.
#   LR2_BENCH_RUNS   runs per case, median taken (default 3)
#   LR2_BENCH_SECS   seconds per run (default 2)
#   LR2_BENCH_RTTS   RTTs (default "2ms 20ms")
#   LR2_BENCH_LOSSES loss percentages (default "0 0.1 1 5")
#   LR2_BENCH_GB0    1: the go-back-0 case too (default 1)
#   LR2_BENCH_LINKS  the shared-link cases, RTT:RATE (default "2ms:200mbit 20ms:100mbit"):
#                    LR2_BENCH_QPS QPs (default 8) over a WAN bottleneck of RATE
#                    with a queue larger than their windows together, so
#                    the link (not one QP's window) is what limits; loss
#                    {0, 1 %, 5 %} (LR2_BENCH_LINK_LOSSES), and go-back-0 with
#                    4 QPs at 1/256 on the first link
#
# One rxe QP (window 128 PSNs) on an unlimited link is window-limited: every
# loss stops its ACK point for the round trip the retransmission needs, and
# 128 PSNs cover about one RTT, so the first matrix measures that limit. The
# shared-link matrix is a gateway's real situation: many QPs share a WAN
# link slower than the DCs, and redundant retransmissions cost WAN capacity.
set -euo pipefail
cd "$(dirname "$0")/../.."
O=${O:-$PWD/build}
case "$O" in /*) ;; *) O=$PWD/$O ;; esac
BIN=$O/bin
P=${LR2_BENCH_PREFIX:-lhb}
RUNS=${LR2_BENCH_RUNS:-3}
SECS=${LR2_BENCH_SECS:-2}
RTTS=${LR2_BENCH_RTTS:-2ms 20ms}
LOSSES=${LR2_BENCH_LOSSES:-0 0.1 1 5}
GB0=${LR2_BENCH_GB0:-1}
LINKS=${LR2_BENCH_LINKS-2ms:200mbit 20ms:100mbit}
QPS=${LR2_BENCH_QPS:-8}
LINK_LOSSES=${LR2_BENCH_LINK_LOSSES:-0 1 5}
TOPO=topologies/two-dc.sh

# shellcheck source=tests/bench/lib.sh
. tests/bench/lib.sh

# agents_up RTT [LONGHAULD OPTIONS]: longhauld on both gateways, until both run
agents_up() {
	local g
	for g in gwa gwb; do
		agent_start "$g" --dc dc --wan wan --instance "$P-$g" --wan-rtt "$1" --pool-slots 16384 "${@:2}"
	done
	agents_wait gwa gwb
}

# topo RTT LOSS%: converge the topology (lhwan restarts with the new loss)
topo() {
	local loss=()
	[ "$2" = 0 ] || loss=(--loss-a2b "random $2%")
	"$TOPO" up --prefix "$P" -q --rtt "$1" --match roce --seed 7 "${loss[@]}" "${@:3}"
}

# xfer [LHPERF OPTIONS]: one run; prints its JSON (status, goodput, fct)
xfer() {
	ex dst timeout 60 "$BIN/lhperf" --server --json --listen-timeout 20 >/dev/null 2>&1 &
	local srv=$! out
	out=$(ex src timeout 90 "$BIN/lhperf" --json --connect-timeout 10 "$@" 10.2.0.10 2>/dev/null) || true
	wait "$srv" 2>/dev/null || true
	jq -c '{status, goodput: .goodput_gbps, bytes, p50: .fct_us.p50, p99: .fct_us.p99,
		retx: .retransmitted_packets, timeouts}' <<<"${out:-{\}}" 2>/dev/null ||
		echo '{"status":"error","goodput":0}'
}

# median of the goodputs of RUNS runs, the run that gave it
measure() {
	local i
	for i in $(seq "$RUNS"); do
		xfer "$@"
	done | jq -s -c 'sort_by(.goodput) | .[(length / 2 | floor)] + {runs: length,
		spread: ((map(.goodput) | max) - (map(.goodput) | min))}'
}


# the longhauld options of a mode: longhaul (LR2 recovery, the default) or
# gateway (--recovery gateway, T/C-SACK T = RTT / 2, re-sends paced at RATE)
mode_opts() {
	case $1 in
	gateway) echo "--recovery gateway --sack-time $(($2 * 1000 / 2))us --resend-rate ${3:-1gbit}" ;;
	tcsack) echo "--sack-time $(($2 * 1000 / 2))us" ;;
	*) ;;
	esac
}

# matrix PREFIX RTT LOSSES TOPO_EXTRA LHPERF_EXTRA [RATE]: plain, longhaul and
# gateway recovery at each loss; rows "PREFIX, loss L%, MODE" against
# PREFIX's lossless plain run
declare -A res
matrix() {
	local pre=$1 rtt=$2 losses=$3 l mode r g base
	local -a tx=($4) mx=($5)
	for mode in plain longhaul gateway; do
		# shellcheck disable=SC2046 # the options are words
		[ "$mode" = plain ] || { topo "$rtt" 0 "${tx[@]}"; agents_up "$rtt" $(mode_opts "$mode" "${rtt%ms}" "${6:-}"); }
		for l in $losses; do
			topo "$rtt" "$l" "${tx[@]}"
			r=$(measure -D "$SECS" -S 65536 "${mx[@]}")
			res["$pre $l $mode"]=$r
			echo "$pre, loss $l% $mode: $r" >&2
		done
		agents_down
	done
	base=$(jq .goodput <<<"${res["$pre 0 plain"]}")
	for l in $losses; do
		for mode in plain longhaul gateway; do
			r=${res["$pre $l $mode"]}
			g=$(jq .goodput <<<"$r")
			add "$pre, loss $l%, $mode" goodput Gb/s "$g" "$pre, loss 0%, plain" \
				"$(ratio "$g" "$base")" "$(jq .runs <<<"$r")" "$(jq .spread <<<"$r")"
			add "$pre, loss $l%, $mode" "fct p99" us "$(jq '.p99 // 0' <<<"$r")" "" null \
				"$(jq .runs <<<"$r")" null
		done
	done
}

# gb0 PREFIX RTT TOPO_EXTRA LHPERF_EXTRA [RATE]: go-back-0 endpoints, 4 MB
# messages, lossless, then 1/256 loss without longhaul, with it and with
# gateway recovery; one run each
gb0() {
	local pre=$1 rtt=$2 g0 gp gl gg b x r g
	local -a tx=($3) mx=($4)
	topo "$rtt" 0 "${tx[@]}"
	g0=$(RUNS=1 measure -r gb0 -S 4M "${mx[@]}")
	topo "$rtt" 0 "${tx[@]}" --loss-a2b 'every 256'
	gp=$(RUNS=1 measure -r gb0 -S 4M "${mx[@]}" --stall-time 3000)
	agents_up "$rtt"
	gl=$(RUNS=1 measure -r gb0 -S 4M "${mx[@]}")
	agents_down
	# shellcheck disable=SC2046
	agents_up "$rtt" $(mode_opts gateway "${rtt%ms}" "${5:-}")
	gg=$(RUNS=1 measure -r gb0 -S 4M "${mx[@]}")
	agents_down
	echo "$pre: lossless $g0, 1/256 plain $gp, 1/256 longhaul $gl, gateway $gg" >&2
	b=$(jq .goodput <<<"$g0")
	for x in "lossless:$g0" "1/256 loss, plain:$gp" "1/256 loss, longhaul:$gl" \
		"1/256 loss, gateway:$gg"; do
		r=${x#*:}
		g=$(jq .goodput <<<"$r")
		add "$pre, ${x%%:*} ($(jq -r .status <<<"$r"))" goodput Gb/s "$g" "$pre, lossless (ok)" \
			"$(ratio "$g" "$b")" 1 null
	done
}

# small LOSS: tail-loss heavy: 4 KB messages (4 packets), one outstanding at
# a time (-T 1), so a quarter of the losses hit a message's last packet,
# which nothing after it reveals (only a timer: the NIC's 67 ms, or T/C-SACK's
# 2T): plain, longhaul (LR2), LR2 with T/C-SACK, gateway (with T/C-SACK)
small() {
	local pre="4 KB messages, rtt 2ms, loss 1%" mode r g base
	for mode in plain longhaul tcsack gateway; do
		topo 2ms 0
		# shellcheck disable=SC2046
		[ "$mode" = plain ] || agents_up 2ms $(mode_opts "$mode" 2)
		topo 2ms "$1"
		r=$(measure -D "$SECS" -S 4096 -T 1)
		agents_down
		res["small $mode"]=$r
		echo "$pre $mode: $r" >&2
	done
	topo 2ms 0
	base=$(RUNS=1 measure -D "$SECS" -S 4096 -T 1)
	for mode in plain longhaul tcsack gateway; do
		r=${res["small $mode"]}
		g=$(jq .goodput <<<"$r")
		add "$pre, $mode" goodput Gb/s "$g" "4 KB messages, rtt 2ms, lossless, plain" \
			"$(ratio "$g" "$(jq .goodput <<<"$base")")" "$(jq .runs <<<"$r")" "$(jq .spread <<<"$r")"
		add "$pre, $mode" "fct p99" us "$(jq '.p99 // 0' <<<"$r")" "" null "$(jq .runs <<<"$r")" null
	done
}

# overhead: T/C-SACK report bytes against data bytes, lossless, per (T, N):
# reports x their frame (102 bytes) / the payload bytes lhperf moved
overhead() {
	local tn t n out bytes reports
	topo 2ms 0
	for tn in ${LR2_BENCH_SACK:-1ms:64 500us:16 2ms:256 1ms:1000000}; do
		t=${tn%%:*}
		n=${tn#*:}
		agents_up 2ms --sack-time "$t" --sack-count "$n"
		out=$(xfer -D "$SECS" -S 65536)
		bytes=$(jq '.bytes // 0' <<<"$out")
		agents_down
		reports=$(sed -n 's/.* reports (\([0-9]*\) T\/C-SACK).*/\1/p' "$TMP/gwb.log" | tail -1)
		echo "T/C-SACK T=$t N=$n: $reports reports, $out" >&2
		add "T/C-SACK reports, T $t, N $n" "report bytes / data bytes" "%" \
			"$(awk -v r="${reports:-0}" -v b="$bytes" 'BEGIN { print (b > 0 ? 100 * r * 102 / b : 0) }')" \
			"" null 1 null
	done
}

for rtt in $RTTS; do
	matrix "rtt $rtt" "$rtt" "$LOSSES" "" ""
done
[ "${LR2_BENCH_SMALL:-1}" = 1 ] && small 1
[ "${LR2_BENCH_OVERHEAD:-1}" = 1 ] && overhead
[ "$GB0" = 1 ] && gb0 "gb0 4 MB, rtt 2ms" 2ms "" "-n 4"

# The shared WAN link: the queue holds every QP's window (no tail drop)
queue=$((QPS * 128 * 1100 * 2))
for link in $LINKS; do
	rtt=${link%%:*}
	rate=${link#*:}
	matrix "$QPS QPs, WAN $rate rtt $rtt" "$rtt" "$LINK_LOSSES" "--rate $rate --queue $queue" \
		"--qps $QPS" "$rate"
done
if [ "$GB0" = 1 ] && [ -n "$LINKS" ]; then
	link=${LINKS%% *}
	gb0 "gb0 4 MB, 4 QPs, WAN ${link#*:} rtt ${link%%:*}" "${link%%:*}" \
		"--rate ${link#*:} --queue $queue" "-n 2 --qps 4" "${link#*:}"
fi

printf '%s\n' "${rows[@]}" | jq -s --arg secs "$SECS" --arg runs "$RUNS" --arg qps "$QPS" '{
	name: "lr2-e2e",
	title: "End to end: goodput and p99 message completion time, plain go-back-N vs longhaul",
	notes: ("lhperf WRITE, 64 KB messages, 1 QP, MTU 1024, rxe window 128, for \($secs) s per run, median of \($runs) runs; two-dc topology, lhwan random loss src->dst; ratio = goodput / lossless plain goodput of the same RTT. One QP with a window of 128 PSNs is window-limited: 128 KB per RTT, and each loss stops its ACK point for a round trip. The shared-link rows: \($qps) QPs over a WAN bottleneck (lhwan rate, queue larger than all windows together), ratio against the lossless plain run of the same link; gb0 there with 4 QPs."),
	rows: .}'
printf '%s\n' "${rows[@]}" | jq -r '[.case, .metric, (.value | tostring), .unit, ((.ratio // "") | tostring)] | @tsv' |
	column -t -s $'\t' >&2
