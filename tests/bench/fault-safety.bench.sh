#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Fault safety (issue 16): with longhaul on the path, faults and hostile input
# leave a transfer as it would be without them. two-dc at 2 ms, 1 % random
# loss both ways, 8 QPs of 64 KB messages for 8 s, NICs of 6 retries
# (lhperf -R 6), 8 s; each cell the median goodput of FAULT_BENCH_RUNS runs
# (default 5), as a ratio to the same runs without the fault:
#  - a flood from the WAN side, 40000 RDMA WRITE packets from 10.9.0.1 (a
#    source behind no peer gateway), each a new QPN, 5000 a second (bursts of 10 every 2 ms) over
#    the run: agents with --peer (goal >= 0.95) and without (what --peer
#    changes); the same flood into a sink namespace (the sender's CPU,
#    which shares the host), and the CPU of the flood alone carried through
#    gwb with and without longhaul (what longhaul adds per flood packet);
#  - both agents replaced 1.5 s into the run by longhauld --takeover of the
#    same build (goal >= 0.9) and of a new build (--reload), both stopped
#    keeping their data path (SIGUSR2) and started again, and both stopped
#    (SIGTERM) and started again.
# A row also counts the runs that ended in a QP error (goal 0).
#
# Prints the bench JSON (tests/bench/run.sh) on stdout and a table on stderr.
set -euo pipefail
cd "$(dirname "$0")/../.."
O=${O:-$PWD/build}
case "$O" in /*) ;; *) O=$PWD/$O ;; esac
BIN=$O/bin
P=${FAULT_BENCH_PREFIX:-lhf}
RUNS=${FAULT_BENCH_RUNS:-5}
TOPO=topologies/two-dc.sh
PEERS=(--peer 10.1.0.0/24 --peer 10.2.0.0/24)
XFER=(-q 8 -S 65536 -D 8 -R 6 --psn 1000)
# the paced cells: the senders held to 0.5 Gb/s of frames (unpaced, longhaul's
# runs take about 0.97 Gb/s and the whole of the 2 cores), so that what the
# flood or a restart costs the host's CPU does not count as what it does to a
# QP: a gateway has CPUs of its own, the endpoints and the flood's sender others
PACED=(--rate 0.5)
XFER_EXTRA=()

# shellcheck source=tests/bench/lib.sh
. tests/bench/lib.sh

# agents_up [LONGHAULD OPTIONS]: both gateways; GW_PID[gwa|gwb] their pids
declare -A GW_PID
agents_up() {
	local g
	for g in gwa gwb; do
		agent_start "$g" --dc dc --wan wan --instance "$P-$g" --wan-rtt 2ms "$@"
		GW_PID[$g]=$!
	done
	agents_wait gwa gwb
	sleep 0.5 # past the start-up window of pairing
}

# xfer: one run; its JSON (status, goodput, timeouts, qp_errors)
xfer() {
	ex dst timeout 120 "$BIN/lhperf" --server --json --listen-timeout 30 >/dev/null 2>&1 &
	local srv=$! out
	out=$(ex src timeout 150 "$BIN/lhperf" --json --connect-timeout 10 "${XFER[@]}" "${XFER_EXTRA[@]}" 10.2.0.10 \
		2>/dev/null) || true
	wait "$srv" 2>/dev/null || true
	# a run that did not end ok: what its NICs saw, on stderr (the bench log)
	jq -e '.status == "ok"' <<<"${out:-{\}}" >/dev/null 2>&1 ||
		jq -c '{status, error, goodput_gbps, timeouts, rewinds, qp_errors, retransmitted_packets,
			rewind_events: .requester.rewind_events[-8:]}' <<<"${out:-{\}}" >&2 2>/dev/null || true
	jq -c '{status, goodput: .goodput_gbps, timeouts, qp_errors}' <<<"${out:-{\}}" 2>/dev/null ||
		echo '{"status":"error","goodput":0,"timeouts":0,"qp_errors":0}'
}

FLOOD=(--src 10.9.0.1 --dst 10.2.0.10 --smac 02:4c:48:00:02:02 --dmac 02:4c:48:00:04:02
	--opcode RC_RDMA_WRITE_MIDDLE --payload 1024 --qpn 0x500000 --qpn-step 1 --psn 5000
	--count 40000 --gap-us 200 --burst 10)

# flood: FLOOD into gwb's WAN side, through gwb (longhaul's programs, when
# attached) on to dst
flood() {
	sleep 0.3
	ex wan "$BIN/lhpkt" send --dev gwb "${FLOOD[@]}" >/dev/null
}

# flood_sink: the same packets at the same pace into a veth of a namespace of
# their own, where nothing forwards them: what the sender alone costs the host
flood_sink() {
	sleep 0.3
	nsenter --net="/var/run/netns/$P-ctl" -- "$BIN/lhpkt" send --dev c0 "${FLOOD[@]}" >/dev/null
}

# flood_cpu: the CPU seconds (user + system) of a flood with no transfer
# beside, median of 3: the sender's context carries the packets through the
# veth, gwb's forwarding (and longhaul's programs) and dst's stack
flood_cpu() {
	local i t
	for i in 1 2 3; do
		t=$( { TIMEFORMAT='%U %S'; time flood; } 2>&1 | awk '{print $1 + $2}')
		echo "$t"
	done | sort -n | sed -n 2p
}

# takeover_both [LONGHAULD OPTIONS]: a new longhauld --takeover on each
# gateway, 1.5 s into the run (the same build: it reuses the running programs;
# with --reload it loads its own first, as a new build would)
takeover_both() {
	local g old
	sleep 1.5
	for g in gwa gwb; do
		old=${GW_PID[$g]}
		mv "$TMP/$g.log" "$TMP/$g.old.log"
		agent_start "$g" --dc dc --wan wan --instance "$P-$g" --wan-rtt 2ms --takeover "$@"
		GW_PID[$g]=$!
		agents_wait "$g"
		wait "$old" 2>/dev/null || true
	done
}

upgrade_both() {
	takeover_both --reload
}

# restart_keep_both: both agents stop keeping their data path (SIGUSR2, what
# SIGTERM does with --keep) and start again at once, 1.5 s into the run
restart_keep_both() {
	local g
	sleep 1.5
	for g in gwa gwb; do
		kill -USR2 "${GW_PID[$g]}"
		wait "${GW_PID[$g]}" 2>/dev/null || true
		mv "$TMP/$g.log" "$TMP/$g.old.log"
		agent_start "$g" --dc dc --wan wan --instance "$P-$g" --wan-rtt 2ms
		GW_PID[$g]=$!
		agents_wait "$g"
	done
}

# two_loads: the CPU of a takeover of both without one: two longhaulds loaded,
# one after the other, in a namespace of their own (on a 2-core host an
# agent's load, mostly the verifier, takes a core for about a second)
two_loads() {
	local i pid
	sleep 1.5
	for i in 1 2; do
		nsenter --net="/var/run/netns/$P-ctl" -- "$BIN/longhauld" --dc c0 --wan c1 \
			--instance "$P-ctl" --wan-rtt 2ms >"$TMP/ctl.log" 2>&1 &
		pid=$!
		until grep -qF '; running (SIGINT' "$TMP/ctl.log" || ! kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
		kill -TERM "$pid"
		wait "$pid" || true
	done
}

# restart_both: both agents stopped (SIGTERM) and started again, 1.5 s into the run
restart_both() {
	local g
	sleep 1.5
	for g in gwa gwb; do
		kill -TERM "${GW_PID[$g]}"
		wait "${GW_PID[$g]}" 2>/dev/null || true
	done
	for g in gwa gwb; do
		mv "$TMP/$g.log" "$TMP/$g.old.log"
		agent_start "$g" --dc dc --wan wan --instance "$P-$g" --wan-rtt 2ms
		GW_PID[$g]=$!
	done
	agents_wait gwa gwb
}

# runs [FAULT]: RUNS runs, FAULT (a function, run here: it may replace agents)
# beside each; one JSON a line
runs() {
	local i xp
	for i in $(seq "$RUNS"); do
		xfer >"$TMP/xfer.json" &
		xp=$!
		[ -z "${1:-}" ] || "$1" || echo "fault $1 failed" >&2
		wait "$xp" || true
		cat "$TMP/xfer.json"
	done
}

# summary: {goodput: median, spread: (max - min) / median, errors: runs not
# ok} of the runs' JSON lines
summary() {
	jq -s '(map(.goodput) | sort) as $g | ($g[length / 2 | floor]) as $m |
		{goodput: $m, spread: (if $m > 0 then (($g[-1] - $g[0]) / $m * 100 | round) / 100 else null end),
		errors: (map(select(.status != "ok")) | length), runs: length}'
}

# row CASE SUMMARY BASELINE_CASE BASELINE_SUMMARY
row() {
	local r=null
	[ -z "$4" ] || r=$(ratio "$(jq .goodput <<<"$2")" "$(jq .goodput <<<"$4")")
	add "$1" "goodput (median)" Gb/s "$(jq .goodput <<<"$2")" "$3" "$r" "$RUNS" "$(jq .spread <<<"$2")"
	add "$1" "runs ended in a QP error" count "$(jq .errors <<<"$2")" "" null "$RUNS" null
}

ctl_cleanup() {
	bench_cleanup
	ip netns del "$P-ctl" 2>/dev/null || true
}
trap ctl_cleanup EXIT
ip netns add "$P-ctl"
ip -n "$P-ctl" link add c0 type veth peer name c1
ip -n "$P-ctl" link set c0 up
ip -n "$P-ctl" link set c1 up

"$TOPO" up --prefix "$P" -q --rtt 2ms --match roce --seed 16 --loss-a2b 'random 1%' \
	--loss-b2a 'random 1%'

# cells NAME:[FAULT]...: in this shell (a fault replaces agents, whose pids it
# must keep), RUNS rounds of one run of each, so that a noisy
# host's drift falls on all of them alike (one cell's runs after another's
# put 0.88 and 0.81 on the same flood), the summaries in the variables NAME
cells() {
	local i c
	for c in "$@"; do : >"$TMP/${c%%:*}.jsonl"; done
	for i in $(seq "$RUNS"); do
		for c in "$@"; do RUNS=1 runs "${c#*:}" >>"$TMP/${c%%:*}.jsonl"; done
	done
	for c in "$@"; do printf -v "${c%%:*}" '%s' "$(summary <"$TMP/${c%%:*}.jsonl")"; done
}

# the same runs with nothing of longhaul: what the flood's sender costs this
# 2-core host by itself (lhpkt and the transfer share the CPUs)
cells pb: pf:flood
XFER_EXTRA=("${PACED[@]}")
cells ppb:
XFER_EXTRA=()
cpu_plain=$(flood_cpu)
agents_up "${PEERS[@]}"
cells base: fl:flood fs:flood_sink
XFER_EXTRA=("${PACED[@]}")
cells pbase: pfl:flood
XFER_EXTRA=()
cpu_peer=$(flood_cpu)
agents_down
agents_up
cells fn:flood
# the restarts in rounds with runs of the same agents (no --peer) and no
# fault: the ratios of a restart to runs taken minutes earlier, by other
# agents (base), carried the host's drift (takeover 0.85 at 90ba1e2)
cells nb: ld:two_loads tk:takeover_both tu:upgrade_both rk:restart_keep_both rs:restart_both
XFER_EXTRA=("${PACED[@]}")
cells pnb: ptk:takeover_both prs:restart_both prk:restart_keep_both
XFER_EXTRA=()
agents_down
echo "plain $pb, plain flood $pf; no fault $base; flood with --peer $fl, into a sink $fs, without --peer $fn; no fault (no --peer) $nb; flood CPU $cpu_plain s plain, $cpu_peer s --peer; two loads $ld; takeover $tk; upgrade $tu; restart keeping $rk; restart $rs; paced: plain $ppb, no fault $pbase, flood $pfl, no fault (no --peer) $pnb, takeover $ptk, restart $prs, restart keeping $prk" >&2

row "no fault" "$base" "no fault" "$base"
row "flood, --peer" "$fl" "no fault" "$base"
row "flood, --peer, against the same flood into a sink" "$fl" "the same flood into a namespace of its own (its sender's CPU)" "$fs"
row "the same flood into a namespace of its own (its sender's CPU)" "$fs" "no fault" "$base"
row "flood, no --peer" "$fn" "no fault" "$base"
row "paced 0.5 Gb/s, no fault" "$pbase" "paced 0.5 Gb/s, no fault" "$pbase"
row "paced 0.5 Gb/s, flood, --peer" "$pfl" "paced 0.5 Gb/s, no fault" "$pbase"
add "flood alone, through gwb without longhaul" "CPU (user + system, median of 3)" s "$cpu_plain" \
	"flood alone, through gwb without longhaul" 1 3 null
add "flood alone, through gwb with longhaul (--peer)" "CPU (user + system, median of 3)" s "$cpu_peer" \
	"flood alone, through gwb without longhaul" "$(ratio "$cpu_peer" "$cpu_plain")" 3 null
row "without longhaul, no fault" "$pb" "without longhaul, no fault" "$pb"
row "without longhaul, the same flood (its sender's CPU alone)" "$pf" "without longhaul, no fault" "$pb"
row "no fault, agents without --peer" "$nb" "no fault, agents without --peer" "$nb"
row "no fault, two agent loads beside (CPU)" "$ld" "no fault, agents without --peer" "$nb"
row "both agents taken over by the same build (--takeover: no load)" "$tk" "no fault, agents without --peer" "$nb"
row "both agents taken over by a new build (--takeover --reload: loaded first)" "$tu" "no fault, agents without --peer" "$nb"
row "both agents taken over by a new build, against the loads beside" "$tu" "no fault, two agent loads beside (CPU)" "$ld"
row "both agents stopped keeping the data path (SIGUSR2, or --keep) and started again" "$rk" "no fault, agents without --peer" "$nb"
row "both agents stopped and started (data path detached, reloaded)" "$rs" "no fault, agents without --peer" "$nb"
row "both agents stopped and started, against the loads beside" "$rs" "no fault, two agent loads beside (CPU)" "$ld"
row "paced 0.5 Gb/s, without longhaul" "$ppb" "paced 0.5 Gb/s, no fault" "$pbase"
row "paced 0.5 Gb/s, no fault, agents without --peer" "$pnb" "paced 0.5 Gb/s, no fault, agents without --peer" "$pnb"
row "paced 0.5 Gb/s, both agents taken over by the same build" "$ptk" "paced 0.5 Gb/s, no fault, agents without --peer" "$pnb"
row "paced 0.5 Gb/s, both agents stopped and started (data path detached, reloaded)" "$prs" "paced 0.5 Gb/s, no fault, agents without --peer" "$pnb"
row "paced 0.5 Gb/s, both agents stopped keeping the data path and started again" "$prk" "paced 0.5 Gb/s, no fault, agents without --peer" "$pnb"

printf '%s\n' "${rows[@]}" | jq -s '{
	name: "fault-safety",
	title: "Fault safety: a spoofed flood and agent restarts against the same runs without them",
	notes: "two-dc, 2 ms RTT, 1 % random loss both ways; 8 QPs of 64 KB messages for 8 s, NICs of 6 retries (lhperf -R 6); median of 5 runs a cell (spread: (max - min) / median), the runs without a fault, with the flood and with the flood into a sink taken in turns (a round of each, so that the drift of the host falls on all alike), ratio to the runs without a fault taken in the same rounds (the flood: agents with --peer, and its own without; the restarts: agents without --peer). Flood: 40000 RDMA WRITE packets from 10.9.0.1 (no peer), each a new QPN, 5000 a second in bursts of 10 every 2 ms (lhpkt --burst 10: a wakeup per packet cost the flood sender 3.4 times the CPU on this host) (goal >= 0.95). The flood sender shares the 2 cores: carried through gwb to dst alone its packets cost about 0.3 CPU-seconds a run (1.6 before they were sent in bursts), which a CPU-bound longhaul transfer feels and a plain one (bound by go-back-N) does not; so the flood is also compared with the same flood into a sink (a veth in a namespace of its own, nothing forwarded), and the CPU of the flood alone through gwb with and without longhaul gives what longhaul adds per flood packet. Restarts, 1.5 s into the run (goal >= 0.9): both agents taken over by the same build (longhauld --takeover reuses the running programs: no load), by a new build (--takeover --reload: it loads and verifies its own first), both stopped keeping their data path (SIGUSR2) and started again (the same build adopts it without a load), and both stopped plainly and started (the data path detached, the programs loaded again, the QPs relearned); beside them the same runs with two agent loads in a namespace of their own and no fault, the CPU a load costs on this 2-core host (loads run at the default --load-nice 10), and the loading takeover against those. QP errors: runs whose lhperf ended in a QP error (goal 0). Without longhaul: the same runs with no agent, with and without the flood, to tell the CPU of the flood sender (lhpkt shares the 2 cores with the transfer) from what longhaul adds. Paced rows: the same runs with the senders held to 0.5 Gb/s of frames (lhperf --rate 0.5), a transfer bound by its rate and not by the CPU of this 2-core host, which the endpoints, the WAN emulator, both gateways and the flood sender share; the CPU the flood or a load takes then falls beside the transfer, as on gateways with CPUs of their own, and what is left is what the fault does to the QPs. The integrity checks have their own rows: bpf-datapath (a Depot report with its SipHash tag checked, ns per report) and rsvp-integrity (HMAC-MD5 sign and verify, ns per RSVP message).",
	rows: .}'
printf '%s\n' "${rows[@]}" | jq -r '[.case, .metric, (.value | tostring), .unit, ((.ratio // "") | tostring)] | @tsv' |
	column -t -s $'\t' >&2
