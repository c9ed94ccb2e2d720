#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Real RoCEv2 peers: ib_write_bw goodput between Linux Soft-RoCE (rdma_rxe) in
# two qemu guests (tests/interop/run-pair.sh) across the two-dc topology, with
# no gateway (plain rxe go-back-N) and with longhauld on both gateways, at WAN
# loss {0, 0.1 %, 1 %, every 256th} on the data direction (src -> dst) and a
# 4 ms round trip. Ratios are against the lossless plain run of the same
# session: TCG guests are slow and noisy (about +-30 % run to run), so only
# ratios measured together mean anything, and each value is a median.
#
# Prints the bench JSON (tests/bench/run.sh) on stdout and a table on stderr.
#   IO_BENCH_RUNS    runs per case, median taken (default 3)
#   IO_BENCH_SECS    seconds of ib_write_bw per run (default 8)
#   IO_BENCH_LOSSES  loss models: a percentage or every:N (default "0 0.1 1 every:256")
#   LH_QEMU_LOCK     a lock file each pair run holds while its guests run
set -euo pipefail
cd "$(dirname "$0")/../.."
O=${O:-$PWD/build}
case "$O" in /*) ;; *) O=$PWD/$O ;; esac
export O
BIN=$O/bin
P=${IO_BENCH_PREFIX:-lhio}
RUNS=${IO_BENCH_RUNS:-3}
SECS=${IO_BENCH_SECS:-8}
LOSSES=${IO_BENCH_LOSSES:-0 0.1 1 every:256}
RTT=4ms
TOPO=topologies/two-dc.sh
export LHWAN=${LHWAN:-$BIN/lhwan}

for c in qemu-system-x86_64 jq; do
	command -v "$c" >/dev/null || { echo "interop bench: $c missing (make deps)" >&2; exit 1; }
done
for b in longhauld lhwan; do
	[ -x "$BIN/$b" ] || { echo "interop bench: $BIN/$b missing (make)" >&2; exit 1; }
done
# no-op when the guest image is up to date
bash tests/interop/build-image.sh >&2

# shellcheck source=tests/bench/lib.sh
. tests/bench/lib.sh

# agents_up: longhauld on both gateways (as the e2e tests start it), until both run
agents_up() {
	local g
	for g in gwa gwb; do
		agent_start "$g" --dc dc --wan wan --instance "$P-$g" --wan-rtt "$RTT" --pool-slots 16384
	done
	agents_wait gwa gwb
}

# topo LOSS: converge the topology (lhwan restarts with the new loss)
topo() {
	local loss=()
	case $1 in
	0) ;;
	every:*) loss=(--loss-a2b "every ${1#every:}") ;;
	*) loss=(--loss-a2b "random $1%") ;;
	esac
	"$TOPO" up --prefix "$P" -q --rtt "$RTT" --match roce --seed 8 "${loss[@]}"
}

# one: one pair run; prints {status, goodput (Mb/s), retries, naks}
one() {
	local lock=() out st=0
	[ -z "${LH_QEMU_LOCK:-}" ] || lock=(flock "$LH_QEMU_LOCK")
	out=$("${lock[@]}" timeout --kill-after=10 150 tests/interop/run-pair.sh -q --prefix "$P" \
		--image "$O/interop" --name "${P}v" --test ib_write_bw -- -s 65536 -D "$SECS" 2>/dev/null) || st=$?
	jq -c --argjson st "$st" '{status: (if $st == 0 then "ok" else "error \($st)" end),
		goodput: (if $st == 0 then .client.result.bw_avg_mbps else 0 end),
		retries: .client.counters.completer_retry_err, naks: .client.counters.rcvd_seq_err,
		oos: .server.counters.out_of_seq_request}' <<<"${out:-{\}}" 2>/dev/null ||
		echo '{"status":"error","goodput":0}'
}

# median RUNS: the median of RUNS one-line results on stdin, with the spread
median() {
	jq -s -c 'sort_by(.goodput) | .[(length / 2 | floor)] + {runs: length,
		spread: ((map(.goodput) | max) - (map(.goodput) | min)),
		all: map(.goodput)}'
}

name() { case $1 in every:*) echo "1/${1#every:}" ;; *) echo "$1%" ;; esac; }

# Plain and longhaul runs alternate under each loss model (agents up for one
# run, down for the next): TCG guests drift with whatever else the host does,
# and a ratio of runs taken minutes apart would measure that drift
declare -A res
for l in $LOSSES; do
	topo "$l"
	: >"$TMP/plain" && : >"$TMP/longhaul"
	for _ in $(seq "$RUNS"); do
		one >>"$TMP/plain"
		agents_up
		one >>"$TMP/longhaul"
		agents_down
	done
	for mode in plain longhaul; do
		res["$l $mode"]=$(median <"$TMP/$mode")
		echo "$mode, loss $(name "$l"): $(jq -c . <<<"${res["$l $mode"]}")" >&2
	done
done

base=$(jq .goodput <<<"${res["0 plain"]}")
for l in $LOSSES; do
	for mode in plain longhaul; do
		r=${res["$l $mode"]}
		g=$(jq .goodput <<<"$r")
		add "ib_write_bw, loss $(name "$l"), $mode" goodput Mb/s "$g" "ib_write_bw, loss 0%, plain" \
			"$(ratio "$g" "$base")" "$(jq .runs <<<"$r")" "$(jq .spread <<<"$r")"
	done
done

printf '%s\n' "${rows[@]}" | jq -s --arg runs "$RUNS" --arg secs "$SECS" '{
	name: "interop", title: "Real rxe peers (qemu, TCG) through longhaul: ib_write_bw",
	notes: ("Linux Soft-RoCE (rdma_rxe, kernel 6.1) in two qemu guests under TCG (one vCPU each) as two-dc'"'"'s hosts (tests/interop/run-pair.sh), ib_write_bw -s 65536 -D \($secs) (rxe MTU 1024, one QP), WAN RTT 4 ms, loss on src -> dst only (random, or every 256th frame). plain: no gateway program, rxe go-back-N; longhaul: longhauld (Depot and Sentry) on both gateways. Median of \($runs) runs, plain and longhaul runs alternating under each loss model; ratios against the lossless plain runs of the same session. The guests, not the link, set the ceiling: TCG is slow and varies by about 30 % run to run, so small ratio differences are noise."),
	rows: .}'
jq -r '.case + "\t" + (.value | tostring) + " Mb/s\t" + ((.ratio // 0) * 100 | round | tostring) + " %"' \
	< <(printf '%s\n' "${rows[@]}") | column -t -s $'\t' >&2
