#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Faults of the gateways' agents mid-transfer: a restart (SIGTERM, start
# again), a kill -9, and a handover that keeps the data path running
# (--takeover: a new longhauld adopting it). 8 QPs at 1 % WAN loss both
# ways, NICs that give up after 6 retries (lhperf -R 6): a QP whose
# retransmissions a gateway drops for good ends in a QP error instead of a
# slow run. Each run is verified byte for byte; the first law asks for 0 QP
# errors, as the same run without longhaul has.

load helpers
load lr2-helpers

setup_file() {
	lr2_require
	lh_topo_up two-dc --rtt 2ms --match roce --seed 49 --loss-a2b 'random 1%' \
		--loss-b2a 'random 1%'
}

teardown_file() {
	lr2_agents_down || true
	lh_cleanup
	# a data path a failed test kept (--keep, SIGUSR2) leaves its pins
	rm -rf "/sys/fs/bpf/longhaul/$LH_PREFIX-gwa" "/sys/fs/bpf/longhaul/$LH_PREFIX-gwb"
}

setup() {
	lr2_require
	lh_wan_loss on # a kill test pauses it
}

# agent_signal GW SIG: send SIG to GW's agent and wait until it is gone
agent_signal() {
	local pid i
	pid=$(cat "$BATS_FILE_TMPDIR/$1.pid")
	kill "-$2" "$pid"
	for i in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.05
	done
	echo "longhauld on $1 did not stop on SIG$2" >&2
	return 1
}

# agent_start GW [OPTIONS]: longhauld on GW again, until it says it runs
agent_start() {
	local g=$1 i
	shift
	lh_bg "$LH_PREFIX-$g" "$BATS_FILE_TMPDIR/$g.log" "$LH_BIN/longhauld" --dc dc --wan wan \
		--instance "$LH_PREFIX-$g" --wan-rtt "${LR2_RTT:-2ms}" "$@" >"$BATS_FILE_TMPDIR/$g.pid"
	for i in $(seq 100); do
		grep -qF '; running (SIGINT' "$BATS_FILE_TMPDIR/$g.log" && return 0
		kill -0 "$(cat "$BATS_FILE_TMPDIR/$g.pid")" 2>/dev/null || break
		sleep 0.1
	done
	cat "$BATS_FILE_TMPDIR/$g.log" >&2
	return 1
}

# fault_run DELAY ACTION...: an 8-QP transfer of 6 s with ACTION run DELAY
# seconds into it; LR2_* as lr2_xfer sets them
fault_run() {
	local delay=$1 pid st=0
	shift
	(sleep "$delay" && "$@") >"$BATS_TEST_TMPDIR/fault.log" 2>&1 &
	pid=$!
	lr2_xfer -D 6 -q 8 -S 65536 -R 6 --psn 1000
	wait "$pid" || st=$?
	cat "$BATS_TEST_TMPDIR/fault.log"
	echo "fault action status $st"
	return "$st"
}

restart_both() {
	agent_signal gwa TERM && agent_signal gwb TERM &&
		agent_start gwa && agent_start gwb
}

# takeover GW: a new longhauld takes GW's running one over (--takeover plus
# TAKEOVER_EXTRA): the old one stops keeping its data path and the new one
# adopts it; a new build loads its programs first, beside it (--reload makes
# this build do so), the same build reuses the running programs. The XDP link
# on GW's WAN interface before and after go to $BATS_TEST_TMPDIR/GW.links
takeover() {
	local g=$1 old i
	old=$(cat "$BATS_FILE_TMPDIR/$g.pid")
	links_of "$g" >"$BATS_TEST_TMPDIR/$g.links"
	cp "$BATS_FILE_TMPDIR/$g.log" "$BATS_TEST_TMPDIR/$g.old.log"
	# shellcheck disable=SC2086
	agent_start "$g" --takeover ${TAKEOVER_EXTRA:-} || return 1
	for i in $(seq 100); do
		kill -0 "$old" 2>/dev/null || break
		sleep 0.05
	done
	! kill -0 "$old" 2>/dev/null || { echo "the old agent on $g still runs" >&2; return 1; }
	# agent_start waits for the agent's "; running (SIGINT" line, printed once
	# all is attached: a bare "running" also matches "loaded beside the running
	# longhauld", printed before the old agent is even asked to stop, when gwb's
	# tcx link may still be on the old program
	links_of "$g" | head -1 >>"$BATS_TEST_TMPDIR/$g.links"
}

takeover_both() {
	takeover gwa && takeover gwb
}

# links_of GW: "TCX_LINK TCX_PROG XDP_PROG" on GW's WAN interface: the id of
# the tcx ingress link and of its program, and of the XDP program
links_of() {
	lh_exec "$1" bpftool -j net show dev wan | jq -r '.[0] |
		(.tc[] | select(.kind == "tcx/ingress") | "\(.link_id) \(.prog_id)") + " \(.xdp[0].id)"'
}

restart_gwb() {
	agent_signal gwb TERM && agent_start gwb
}

# the Depot's agent stops keeping its data path (SIGUSR2); the next one starts
# 0.5 s later (plus its load): gwb's counters of the agentless time go to
# $BATS_TEST_TMPDIR/alone.json
keep_then_start_gwb() {
	agent_signal gwb USR2 && sleep 0.5 &&
		lr2_stats gwb >"$BATS_TEST_TMPDIR/alone.json" && agent_start gwb && sleep 0.3 &&
		lh_exec gwb "$LH_BIN/longhaul" -j --instance "$LH_PREFIX-gwb" qps >"$BATS_TEST_TMPDIR/after.json"
}

# keep_restart_both_thrice: three times, each agent in turn stops keeping its
# data path (SIGUSR2) and the next starts as soon as it is gone. A start takes
# 80-250 ms here: the data path works alone for 100 ms, then lets packets
# pass, and may begin to between the new agent's first look (before its
# load) and its config write. Whenever packets passed (agentless_pass moved),
# the new agent must have said so: its QPs forgotten and learned anew. A load
# that wrote the config first would leave the look after it nothing to see
# (thousands of packets passed, QPs kept, the Depot waiting for PSNs the
# receiver has: QP errors in about 1 of 4 paced runs of the fault-safety
# bench's restart). How many restarts went past the time alone goes to
# $BATS_TEST_TMPDIR/passed.
keep_restart_both_thrice() {
	local k g a0 a1 pid i t0 te t1 said n=0
	for k in 1 2 3; do
		for g in gwa gwb; do
			a0=$(lr2_stats "$g" | jq '.agentless_pass // 0')
			pid=$(cat "$BATS_FILE_TMPDIR/$g.pid")
			t0=$(date +%s%N)
			kill -USR2 "$pid"
			for i in $(seq 500); do kill -0 "$pid" 2>/dev/null || break; sleep 0.01; done
			te=$(date +%s%N)
			agent_start "$g" || return 1
			t1=$(date +%s%N)
			a1=$(lr2_stats "$g" | jq '.agentless_pass // 0')
			said=$(grep -c "forgotten and learned anew" \
				"$BATS_FILE_TMPDIR/$g.log" || true)
			echo "$g restart $k: stopped in $(((te - t0) / 1000000)) ms, running after $(((t1 - te) / 1000000)) ms, agentless_pass $a0 -> $a1, said: $said"
			[ "$said" -gt 0 ] && n=$((n + 1))
			# a short absence: the QPs forgotten keep their pairings (said by the
			# agent's loop as it starts, after the "running" line agent_start waits for)
			for i in $(seq 200); do
				[ "$said" -eq 0 ] || grep -q "forgot [0-9]* QPs of the stale" "$BATS_FILE_TMPDIR/$g.log" && break
				sleep 0.01
			done
			[ "$said" -eq 0 ] || grep -q "(their pairings kept)" "$BATS_FILE_TMPDIR/$g.log" ||
				{ echo "$g: QPs forgotten with their pairings" >&2; return 1; }
			[ "$a1" -eq "$a0" ] || [ "$said" -gt 0 ] ||
				{ echo "$g: packets passed, the new agent did not say so" >&2; return 1; }
		done
		sleep 0.4
	done
	echo "$n" >"$BATS_TEST_TMPDIR/passed"
}

# A kill -9 takes the agent's data path with it (its links close): what the
# Depot held is lost, and from then on the QPs run as with no gateway, the
# other gateway only passing what it gets (checked: gwa's counters from 0.2 s
# after the kill on). The loss goes on for 1 s after the kill, twice the NICs'
# whole retry budget (7 x 67 ms), then pauses: a QP that the kill left
# waiting on what was held, or that a gateway kept filtering, fails within
# it; what the rest of the run would sample is plain go-back-N's own luck
# with 6 retries at 1 % both ways, which now and then gives up with no
# gateway at all (a QP error 3.5 s after a kill, 1 run in 20, the QP far
# past the kill; plain_run has seen it too).
kill_then_lossless() {
	agent_signal "$1" KILL && sleep 0.2 && lr2_stats gwa >"$BATS_TEST_TMPDIR/at_kill.json" &&
		sleep 0.8 && lh_wan_loss off
}

kill_gwb() {
	kill_then_lossless gwb
}

kill_gwa() {
	kill_then_lossless gwa
}

# plain_run: the same transfer with nothing of longhaul on the path, printed as
# the comparison; not required to succeed (plain go-back-N with 6 retries at
# 1 % may give up, as on a loaded CI host), the run with longhaul is
plain_run() {
	lr2_agents_down
	lr2_xfer -D 6 -q 8 -S 65536 -R 6 --psn 1000 || true
	PLAIN=$LR2_C
	echo "without longhaul: $(jq -c '{status, goodput_gbps, timeouts, qp_errors}' <<<"$PLAIN")"
}

with_fault() {
	lr2_agents_up
	fault_run 2 "$@"
	lr2_show
	echo "with longhaul: $(jq -c '{status, goodput_gbps, timeouts, qp_errors}' <<<"$LR2_C")"
	lr2_ok || {
		# what a failure needs to be told apart: the receiver's drops, the NIC's retries, the Sentry's QPs
		jq -c '{socket_drops: [.requester.rx_drops.socket_drops, .responder.rx_drops.socket_drops],
			errors: [.qp_list[]? | select(.error != null)]}' "$BATS_TEST_TMPDIR/client.json"
		grep -i "retry\|error" "$BATS_TEST_TMPDIR/client.err" | tail -20
		[ ! -s "$BATS_TEST_TMPDIR/at_kill.json" ] ||
			echo "gwa from 0.2 s after the kill on: $(lr2_delta "$(cat "$BATS_TEST_TMPDIR/at_kill.json")" "$(lr2_stats gwa)")"
		local g
		for g in gwa gwb; do
			echo "$g QPs:"
			lh_exec "$g" "$LH_BIN/longhaul" -j --instance "$LH_PREFIX-$g" qps 2>/dev/null |
				jq -c '.[] | del(.ring)' | head -c 8000
		done
		return 1
	}
}

# A plain restart (SIGTERM, start again): the data path detaches, what was held
# is lost, and the new agent relearns the QPs mid-flight (LH_QPF_WIDE: from the
# attach on, 4 round trips + 100 ms). A relearned Depot QP claims no ePSN until
# the receiving NIC ACKs the first PSN it saw (LH_QPF_D_UNSURE); a relearned
# Sentry QP takes a PSN beyond s.next that an ACK or NAK named as sent
# (LH_QPF_S_JUMP), and stops waiting for a replay from a NAK once the
# receiver's ACK passes it. Without each of these a QP ends in a QP error now
# and then (make soak shows it; docs/operations.md).

# qps_all_wide GW: every QP GW holds now was learned mid-flight (wide)
qps_all_wide() {
	local q
	q=$(lh_exec "$1" "$LH_BIN/longhaul" -j --instance "$LH_PREFIX-$1" qps)
	echo "$1 QPs: $(jq -c '[.[] | {dqpn, flags}]' <<<"$q")"
	[ "$(jq length <<<"$q")" -gt 0 ]
	[ "$(jq '[.[] | select(.flags | index("wide") | not)] | length' <<<"$q")" -eq 0 ]
}

@test "restart of both agents mid-transfer (SIGTERM, start again): 0 QP errors, as without longhaul; every QP relearned as learned mid-flight" {
	plain_run
	with_fault restart_both
	qps_all_wide gwa
	qps_all_wide gwb
}

@test "restart of the Depot's agent mid-transfer: 0 QP errors" {
	plain_run
	with_fault restart_gwb
}

# A kept data path left alone longer than its bound falls back to passing
# everything; the next agent adopts it (no load: taking it down and loading
# afresh would leave seconds with no data path) and learns every QP anew
@test "the Depot's agent stops keeping its data path and the next comes later: past its bound alone everything passes, the next agent adopts it and learns its QPs anew, 0 QP errors" {
	plain_run
	with_fault keep_then_start_gwb
	cat "$BATS_FILE_TMPDIR/gwb.log"
	grep -q "reusing the kept programs of this build" "$BATS_FILE_TMPDIR/gwb.log"
	grep -q "forgotten and learned anew" "$BATS_FILE_TMPDIR/gwb.log"
	grep -q "forgot [1-9][0-9]* QPs of the stale data path (their pairings kept)" "$BATS_FILE_TMPDIR/gwb.log"
	# learned anew, mid-flight (wide), with equal start PSNs (--psn 1000):
	# paired at once from the kept pairings (no ACK could tell them apart)
	echo "gwb QPs 0.3 s after: $(jq -c '[.[] | {dqpn, flags}]' "$BATS_TEST_TMPDIR/after.json")"
	[ "$(jq length "$BATS_TEST_TMPDIR/after.json")" -gt 0 ]
	[ "$(jq '[.[] | select((.flags | index("wide")) and (.flags | index("paired") | not))] | length' \
		"$BATS_TEST_TMPDIR/after.json")" -eq 0 ]
	echo "gwb while alone: $(cat "$BATS_TEST_TMPDIR/alone.json")"
	[ "$(jq '.agentless_pass // 0' "$BATS_TEST_TMPDIR/alone.json")" -gt 0 ]
}

@test "both agents stop keeping their data path and start again, three times, paced: packets passed while none ran are said and the QPs learned anew, 0 QP errors" {
	LR2_LHPERF_EXTRA="--rate 0.5" plain_run
	LR2_LHPERF_EXTRA="--rate 0.5" with_fault keep_restart_both_thrice
	# a start outlasted the time alone at least once (else nothing was tested)
	[ "$(cat "$BATS_TEST_TMPDIR/passed")" -gt 0 ]
}

@test "kill -9 of the Depot's agent mid-transfer: 0 QP errors" {
	plain_run
	with_fault kill_gwb
}

@test "kill -9 of the Sentry's agent mid-transfer: 0 QP errors" {
	plain_run
	with_fault kill_gwa
}

@test "takeover of both agents mid-transfer by a new build (--reload: loaded beside the running one, then its data path adopted): nothing held is lost, no QP relearned, 0 QP errors" {
	local g l1 p1 x1 l2 p2 x2
	plain_run
	lr2_agents_up
	TAKEOVER_EXTRA=--reload fault_run 2 takeover_both
	lr2_show
	echo "with longhaul: $(jq -c '{status, goodput_gbps, timeouts, qp_errors}' <<<"$LR2_C")"
	lr2_ok
	for g in gwa gwb; do
		cat "$BATS_FILE_TMPDIR/$g.log"
		grep -q "adopting it" "$BATS_FILE_TMPDIR/$g.log"
		# the same links, now with the new agent's programs
		read -r l1 p1 x1 <"$BATS_TEST_TMPDIR/$g.links"
		read -r l2 p2 x2 < <(sed -n 2p "$BATS_TEST_TMPDIR/$g.links")
		echo "$g tcx link, its program, XDP program before: $l1 $p1 $x1, after: $l2 $p2 $x2"
		[ -n "$l1" ]
		[ "$l2" = "$l1" ]
		[ "$p2" != "$p1" ]
		[ "$x2" != "$x1" ]
	done
	# each QP was learned once, before the takeover, on each side
	[ "$(lr2_ctr a sentry_new_qp)" -eq 8 ]
	[ "$(lr2_ctr b depot_new_qp)" -eq 8 ]
	[ "$(lr2_ctr b qp_stale)" -eq 0 ]
}

# The same build taking over (a restart): the programs running are its own
# (their pins carry the build's id), so it loads none, verifies none, and
# adopts the data path as it is, programs and all: the pause is the old
# agent's stop and the new one's start, not a load (about 1 s of a core here)
@test "takeover of both agents mid-transfer by the same build: its programs reused without a load, the same links and programs, no QP relearned, 0 QP errors" {
	local g l1 p1 x1 l2 p2 x2
	plain_run
	lr2_agents_up
	fault_run 2 takeover_both
	lr2_show
	echo "with longhaul: $(jq -c '{status, goodput_gbps, timeouts, qp_errors}' <<<"$LR2_C")"
	lr2_ok
	for g in gwa gwb; do
		cat "$BATS_FILE_TMPDIR/$g.log"
		grep -q "runs this very build" "$BATS_FILE_TMPDIR/$g.log"
		grep -q "reusing the kept programs of this build" "$BATS_FILE_TMPDIR/$g.log"
		read -r l1 p1 x1 <"$BATS_TEST_TMPDIR/$g.links"
		read -r l2 p2 x2 < <(sed -n 2p "$BATS_TEST_TMPDIR/$g.links")
		echo "$g tcx link, its program, XDP program before: $l1 $p1 $x1, after: $l2 $p2 $x2"
		[ -n "$l1" ] && [ -n "$p1" ] && [ -n "$x1" ]
		[ "$l2" = "$l1" ]
		[ "$p2" = "$p1" ]
		[ "$x2" = "$x1" ]
	done
	[ "$(lr2_ctr a sentry_new_qp)" -eq 8 ]
	[ "$(lr2_ctr b depot_new_qp)" -eq 8 ]
	[ "$(lr2_ctr b qp_stale)" -eq 0 ]
	# a plain stop takes the programs' pins with the data path
	lr2_agents_down
	for g in gwa gwb; do
		! ls "/sys/fs/bpf/longhaul/$LH_PREFIX-$g/" 2>/dev/null | grep -q "^prog_"
	done
}

# fake_kept GW: GW's pin directory as a kept data path of another build would
# leave it: a link pin and an lh_qp of another layout (8-byte values)
fake_kept() {
	local d=/sys/fs/bpf/longhaul/$LH_PREFIX-$1
	mkdir -p "$d"
	bpftool map create "$d/lh_qp" type hash key 16 value 8 entries 16 name lh_qp
	bpftool map create "$d/link_lh_wan_xdp_wan" type array key 4 value 4 entries 1 name lh_fake
}

@test "a kept data path of another layout is taken down, said so, and the agent starts fresh" {
	lr2_agents_down
	fake_kept gwa
	agent_start gwa
	cat "$BATS_FILE_TMPDIR/gwa.log"
	grep -Eq "kept data path: map lh_[a-z_]+ (has another layout|is not pinned)" \
		"$BATS_FILE_TMPDIR/gwa.log"
	grep -q "cannot be adopted by this build: taking it down" "$BATS_FILE_TMPDIR/gwa.log"
	[ ! -e "/sys/fs/bpf/longhaul/$LH_PREFIX-gwa/link_lh_wan_xdp_wan" ]
	# the fresh lh_qp is this build's, and a transfer runs through it
	agent_start gwb
	lr2_xfer -n 20 -S 65536
	lr2_ok
	[ "$(lr2_ctr a sentry_new_qp)" -eq 1 ]
	lr2_agents_down
}

@test "--takeover of an agent whose maps have another layout: refused (exit 4), that agent left running" {
	local lock=/run/longhaul/_sys_fs_bpf_longhaul_$LH_PREFIX-gwa.lock st=0 holder alive=0
	lr2_agents_down
	fake_kept gwa
	rm -f "/sys/fs/bpf/longhaul/$LH_PREFIX-gwa/link_lh_wan_xdp_wan"
	# a stand-in for the running agent of another build: it holds the lock
	mkdir -p /run/longhaul
	flock -o "$lock" sleep 30 &
	holder=$!
	lh_track pid "$holder"
	sleep 0.3
	echo "{\"pid\":$holder}" >"$lock"
	timeout 30 nsenter --net="/var/run/netns/$LH_PREFIX-gwa" -- "$LH_BIN/longhauld" --dc dc \
		--wan wan --instance "$LH_PREFIX-gwa" --wan-rtt 2ms --takeover \
		>"$BATS_TEST_TMPDIR/take.log" 2>&1 || st=$?
	cat "$BATS_TEST_TMPDIR/take.log"
	kill -0 "$holder" && alive=1
	kill "$holder" 2>/dev/null || true
	rm -rf "/sys/fs/bpf/longhaul/$LH_PREFIX-gwa" "$lock"
	[ "$st" -eq 4 ]
	[ "$alive" -eq 1 ]
	grep -q "takeover: the running agent's maps cannot serve this build" "$BATS_TEST_TMPDIR/take.log"
}
