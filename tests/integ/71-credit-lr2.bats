#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# LR2 on gateways with two WAN interfaces, alone and together with credit-based
# flow control (held packets re-sent on the new path, longhaul's recovery
# covering what was in flight), in the dual-path topology. Each
# gateway (gwa, gwb) runs longhauld --mode lr2 on dc, wan1 and wan2; with
# credit a second longhauld --mode credit runs beside it (and on rt1, rt2).
# lhperf from src to dst, data verified; LR2's counters say which mechanism
# recovered what, the credit program's that it saw what the Depot delivered.

load helpers
load lr2-helpers
# shellcheck source=topologies/dual-path-credit.sh
source "$LH_ROOT/topologies/dual-path-credit.sh"

CR_R=50 # heartbeat R, ms: H = 3R
LR2_OPTS=(--wan-rtt 4ms --pool-slots 4096)

setup_file() {
	lr2_require
	lh_require_cmd tc
	lh_bpffs
	lh_topo_up dual-path --rtt 2ms --path2-rtt 4ms --match roce
}

teardown_file() {
	lh_cleanup
	lh_topo_down
}

teardown() {
	agents_down || true
	lh_exec wan1 ip link set rt1 up 2>/dev/null || true
	lh_exec gwa ip route replace 10.2.0.0/24 via 10.0.1.2 metric 10 2>/dev/null || true
	lh_exec gwb ip route replace 10.1.0.0/24 via 10.0.11.1 metric 10 2>/dev/null || true
}

# ---------------------------------------------------------------- agents

# agent_up NAME NODE LONGHAULD ARGS...: longhauld --instance $LH_PREFIX-NAME in NODE,
# until it says it runs
agent_up() {
	local name=$1 node=$2 i
	shift 2
	lh_bg "$LH_PREFIX-$node" "$BATS_TEST_TMPDIR/$name.log" "$LH_BIN/longhauld" \
		--instance "$LH_PREFIX-$name" "$@" >"$BATS_TEST_TMPDIR/$name.pid"
	echo "$name" >>"$BATS_TEST_TMPDIR/agents"
	for i in $(seq 100); do
		grep -qF '; running (SIGINT' "$BATS_TEST_TMPDIR/$name.log" && return 0
		kill -0 "$(cat "$BATS_TEST_TMPDIR/$name.pid")" 2>/dev/null || break
		sleep 0.1
	done
	cat "$BATS_TEST_TMPDIR/$name.log" >&2
	return 1
}

# agent_down NAME: SIGTERM, it must stop within 5 s (its exit log stays)
agent_down() {
	local pid i
	[ -s "$BATS_TEST_TMPDIR/$1.pid" ] || return 0
	pid=$(cat "$BATS_TEST_TMPDIR/$1.pid")
	rm -f "$BATS_TEST_TMPDIR/$1.pid"
	kill -TERM "$pid" 2>/dev/null || return 0
	for i in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	echo "longhauld $1 did not stop" >&2
	return 1
}

agents_down() {
	local n rc=0
	[ -f "$BATS_TEST_TMPDIR/agents" ] || return 0
	for n in $(tac "$BATS_TEST_TMPDIR/agents"); do agent_down "$n" || rc=1; done
	return $rc
}

# LR2 on both gateways, both WAN interfaces each
lr2_up() {
	local g
	for g in gwa gwb; do
		agent_up "$g-lr2" "$g" --mode lr2 --dc dc --wan wan1 --wan wan2 "${LR2_OPTS[@]}" "$@"
	done
}

# credit on the four hops (CR_EXTRA_<node> adds options to one)
cr_up() {
	local n
	for n in gwa rt1 rt2 gwb; do
		# shellcheck disable=SC2046
		agent_up "$n-cr" "$n" --mode credit --heartbeat "${CR_R}ms" $(dual_path_credit_routes "$n") "$@" \
			$(eval echo "\${CR_EXTRA_$n:-}")
	done
}

# ---------------------------------------------------------------- reading

# gw_stats NAME: the LR2 counters of agent NAME ({name: value}); {} when it does not run
gw_stats() {
	lr2_stats "$1" "$BATS_TEST_TMPDIR"
}

# cr_stats NAME: lh_cr_stats of credit agent NAME, summed over CPUs
cr_stats() {
	timeout 30 "$LH_BIN/longhaul" -j --instance "$LH_PREFIX-$1" credits stats --all |
		jq -c '.counters | map_values(.value)'
}

# agent_log_num NAME PATTERN: the number before PATTERN in the agent's exit log line
agent_log_num() {
	[ -f "$BATS_TEST_TMPDIR/$1.log" ] || return 0
	sed -n "s/.* \([0-9][0-9]*\) $2.*/\1/p" "$BATS_TEST_TMPDIR/$1.log" | tail -n 1
}

# wan_delta BEFORE AFTER: per direction rx, lost (loss model), drop_tx (a port down)
wan_delta() {
	jq -cn --argjson a "$1" --argjson b "$2" '
		def d(dir): {rx: ($b[dir].rx_packets - $a[dir].rx_packets),
			     lost: ($b[dir].drop_loss - $a[dir].drop_loss),
			     drop_tx: ($b[dir].drop_tx - $a[dir].drop_tx)};
		{a2b: d("a2b"), b2a: d("b2a")}'
}

# ifindex NODE IFACE
ifindex() {
	lh_exec "$1" ip -j link show dev "$2" | jq '.[0].ifindex'
}

# the TC egress programs of NODE's dc interface, in chain order, as its lr2 agent sees them
dc_egress() {
	timeout 30 "$LH_BIN/longhaul" -j --instance "$LH_PREFIX-$1-lr2" status |
		jq -c '[.interfaces[] | select(.name == "dc") | .tc_egress[].name]'
}

# xfer_start [LHPERF CLIENT OPTIONS]: lhperf from src to dst in the background
# (counters read first); xfer_wait collects it. xfer does both.
xfer_start() {
	XA=$(gw_stats gwa-lr2)
	XB=$(gw_stats gwb-lr2)
	XW1=$(lh_wan_stats wan1)
	XW2=$(lh_wan_stats wan2)
	lh_bg "$LH_PREFIX-dst" "$BATS_TEST_TMPDIR/server.log" \
		"$LH_BIN/lhperf" --server --json --listen-timeout 30 >/dev/null
	timeout --kill-after=5 "$LR2_TIMEOUT" nsenter --net="/var/run/netns/$LH_PREFIX-src" -- \
		"$LH_BIN/lhperf" --json --connect-timeout 10 "$@" 10.2.0.10 \
		>"$BATS_TEST_TMPDIR/client.json" 2>"$BATS_TEST_TMPDIR/client.err" &
	XPID=$!
}

# Sets LR2_C, LR2_CS (lhperf's JSON and exit status), LR2_A, LR2_B (LR2 counter
# deltas of gwa and gwb), LR2_W (lhwan deltas: {wan1: ..., wan2: ...})
xfer_wait() {
	LR2_CS=0
	wait "$XPID" || LR2_CS=$?
	LR2_C=$(cat "$BATS_TEST_TMPDIR/client.json")
	sleep 0.3 # the last ACKs and frees
	LR2_A=$(lr2_delta "$XA" "$(gw_stats gwa-lr2)")
	LR2_B=$(lr2_delta "$XB" "$(gw_stats gwb-lr2)")
	LR2_W=$(jq -cn --argjson a "$(wan_delta "$XW1" "$(lh_wan_stats wan1)")" \
		--argjson b "$(wan_delta "$XW2" "$(lh_wan_stats wan2)")" '{wan1: $a, wan2: $b}')
	export LR2_C LR2_CS LR2_A LR2_B LR2_W
}

xfer() {
	xfer_start "$@"
	xfer_wait
}

# ---------------------------------------------------------------- tests

@test "LR2 alone, two WAN interfaces a gateway, data on path 1 and the way back on path 2, loss on both: the receiver never sees a gap" {
	lh_topo_up dual-path --rtt 2ms --path2-rtt 4ms --match roce --seed 71 --loss 'random 1%'
	# dst -> src (ACKs, the Depot's NACKs) over path 2 only
	lh_exec gwb ip route del 10.1.0.0/24 via 10.0.11.1
	lr2_up
	# every WAN interface has the Depot's and the Sentry's programs
	run_t "$LH_BIN/longhaul" -j --instance "$LH_PREFIX-gwa-lr2" status
	jq_assert "$output" '[.interfaces[] | select(.role == "wan") | {name, xdp: .xdp.name, tc: [.tc_ingress[].name]}] ==
		[{"name": "wan1", "xdp": "lh_wan_xdp", "tc": ["lh_wan_in"]}, {"name": "wan2", "xdp": "lh_wan_xdp", "tc": ["lh_wan_in"]}]'
	xfer -S 65536 -n 200
	lr2_show
	lr2_ok
	receiver_saw_no_gap
	# loss where each direction went: data on path 1, ACKs and Depot-NACKs on path 2
	jq_assert "$LR2_W" '.wan1.a2b.lost > 0 and .wan2.b2a.lost > 0 and .wan2.a2b.rx < 100'
	[ "$(lr2_ctr b depot_held)" -gt 0 ]
	[ "$(lr2_ctr b depot_nack)" -gt 0 ]
	[ "$(lr2_ctr b depot_released)" -eq "$(lr2_ctr b depot_held)" ]
	[ "$(lr2_ctr a sentry_sr_drop)" -gt 0 ]
	# the reports went out of the interface the data came in by (wan1), and the
	# Sentry took them in there: its XDP on wan1 and on wan2 both acted
	[ "$(lr2_ctr a sentry_report)" -gt 0 ]
	[ "$(lr2_ctr a sentry_dnack_forward)" -gt 0 ]
	# what each QP recorded: the Depot its data's interface, the Sentry its ACKs'
	run_t "$LH_BIN/longhaul" -j --instance "$LH_PREFIX-gwb-lr2" qps
	jq_assert "$output" '[.[] | select(.role == "depot") | .wan_ifindex] | unique == ['"$(ifindex gwb wan1)"']'
	run_t "$LH_BIN/longhaul" -j --instance "$LH_PREFIX-gwa-lr2" qps
	jq_assert "$output" '[.[] | select(.role == "sentry") | .wan_ifindex] | unique == ['"$(ifindex gwa wan2)"']'
}

# cr_map NAME MAP: a pinned credit map of agent NAME (JSON entries)
cr_map() {
	bpftool -j map dump pinned "$LH_BPFFS/longhaul/$LH_PREFIX-$1/$2"
}

@test "LR2 and credit on the same gateways, WAN loss: verified, NIC timeouts as rare as with LR2 alone (credit alone: dozens), the credit program sees every delivery of the Depot" {
	lh_topo_up dual-path --rtt 2ms --path2-rtt 4ms --match roce --seed 72 --loss 'random 1%'
	# credit first, LR2 after: LR2's programs still go first on the DC egress
	cr_up
	lr2_up
	for g in gwa gwb; do
		[ "$(dc_egress "$g")" = '["lh_dc_out","lh_cr_out"]' ]
	done
	xfer --qps 2 -S 65536 -n 100
	lr2_show
	# credit the flows have left on path 1 now that everything is acknowledged:
	# the buffer (256k) less what was sent and never forwarded by the next hop
	for n in gwa rt1; do
		echo "credit left at $n: $(timeout 30 "$LH_BIN/longhaul" -j --instance "$LH_PREFIX-$n-cr" credits |
			jq -c '[.[] | select(.state == "active") | {dqpn, credit: .paths[0].credit}]')"
	done
	lr2_ok
	# the NICs' timers: this transfer took 0 NIC timeouts in 22 runs of 26 and 1
	# in 4, as often as with LR2 alone (2 in 12); with credit alone 27 to 35
	lr2_to=$(jq .timeouts <<<"$LR2_C")
	[ "$lr2_to" -le 2 ]
	receiver_saw_no_gap
	jq_assert "$LR2_W" '.wan1.a2b.lost > 0'
	[ "$(lr2_ctr b depot_nack)" -gt 0 ]
	[ "$(lr2_ctr b depot_released)" -gt 0 ]
	[ "$(lr2_ctr b depot_released)" -eq "$(lr2_ctr b depot_held)" ]
	[ "$(lr2_ctr a sentry_sr_drop)" -gt 0 ]
	sa=$(cr_stats gwa-cr)
	s1=$(cr_stats rt1-cr)
	sb=$(cr_stats gwb-cr)
	echo "credit: gwa $sa"
	echo "credit: rt1 $s1"
	echo "credit: gwb $sb"
	# the data went against credit at the first hop and at rt1
	jq_assert "$sa" '.new_flow >= 2 and .forwarded > 10000 and .hold_full == 0 and .ring_full == 0'
	jq_assert "$s1" '.forwarded > 10000 and .hold_full == 0'
	# gwb's DC egress: lh_cr_out after lh_dc_out counted every packet the Depot
	# delivered, in order as it came and released from the pool (a chain cut
	# short by lh_dc_out's verdict would count none of the released)
	delivered=$(($(lr2_ctr b depot_in_order) + $(lr2_ctr b depot_released)))
	echo "gwb: the Depot delivered $delivered, the credit program counted $(jq .counted <<<"$sb")"
	jq_assert "$sb" ".counted >= $delivered"
	# each agent detaches its own programs only
	agent_down gwa-lr2
	agent_down gwb-lr2
	run_t "$LH_BIN/longhaul" -j --instance "$LH_PREFIX-gwa-cr" status
	jq_assert "$output" '[.interfaces[] | select(.name == "dc") | .tc_egress[].name] == ["lh_cr_out"]'
	run_t ip -n "$LH_PREFIX-gwa" -j link show dev wan1
	jq_assert "$output" '.[0].xdp == null'
	# the same transfer under credit alone: the NICs' go-back-N and their timers
	xfer --qps 2 -S 65536 -n 100
	lr2_ok
	echo "NIC timeouts: $lr2_to with LR2, $(jq .timeouts <<<"$LR2_C") without"
	[ "$(jq .timeouts <<<"$LR2_C")" -ge $((lr2_to + 5)) ]
}

# grant_active NAME: the active path of the flows credit agent NAME is first hop of
grant_active() {
	cr_map "$1" lh_cr_grant | jq -c '[.[] | (.formatted.value // .value) | select(.state == 1) | .active] | unique'
}

# cut_path1 [LHPERF OPTIONS]: a transfer of a few seconds from src to dst; path 1
# cut in the middle of it beyond gwa's own link (the emulator's port toward rt1
# goes down); credit moves both directions to path 2; the routes follow 1 s later
# (the side channel, TCP, needs them). Sets what xfer_wait sets, and CUT_MS:
# how long until both directions were on path 2.
cut_path1() {
	local i t0 t1
	xfer_start --qps 2 -D 3 "$@"
	for i in $(seq 100); do
		[ "$(grant_active gwa-cr)" = "[0]" ] && [ "$(grant_active gwb-cr)" = "[0]" ] && break
		sleep 0.05
	done
	[ "$(grant_active gwa-cr)" = "[0]" ]
	sleep 0.5
	t0=$(date +%s%N)
	lh_exec wan1 ip link set rt1 down
	for i in $(seq 200); do
		[ "$(grant_active gwa-cr)" = "[1]" ] && [ "$(grant_active gwb-cr)" = "[1]" ] && break
		sleep 0.01
	done
	t1=$(date +%s%N)
	CUT_MS=$(((t1 - t0) / 1000000))
	[ "$(grant_active gwa-cr)" = "[1]" ]
	[ "$(grant_active gwb-cr)" = "[1]" ]
	sleep 1
	lh_exec gwa ip route del 10.2.0.0/24 via 10.0.1.2
	lh_exec gwb ip route del 10.1.0.0/24 via 10.0.11.1
	xfer_wait
}

# cut_run lr2|plain [LHPERF OPTIONS]: credit on every hop (CR_EXTRA_<node>), LR2
# on the gateways (CUT_LR2 options) unless plain; cut_path1; the data verified;
# agents stopped and path 1 restored. Sets CUT_R: what the NICs and the
# gateways did about the cut (one JSON object).
cut_run() {
	local with=$1 depot_if=null
	shift
	rm -f "$BATS_TEST_TMPDIR/agents" "$BATS_TEST_TMPDIR"/*.log
	# LR2 first here (the other test starts credit first): either way lh_dc_out runs first
	if [ "$with" != plain ]; then
		lr2_up "${CUT_LR2[@]}"
		cr_up
		[ "$(dc_egress gwb)" = '["lh_dc_out","lh_cr_out"]' ]
	else
		cr_up
	fi
	cut_path1 "$@"
	lr2_show
	lr2_ok
	if [ "$with" != plain ]; then
		run_t "$LH_BIN/longhaul" -j --instance "$LH_PREFIX-gwb-lr2" qps
		depot_if=$(jq -c '[.[] | select(.role == "depot") | .wan_ifindex] | unique' <<<"$output")
	fi
	agents_down
	CUT_R=$(jq -c --argjson a "$LR2_A" --argjson b "$LR2_B" --argjson w "$LR2_W" --arg ms "$CUT_MS" \
		--argjson depot_if "$depot_if" --arg nr "$(agent_log_num gwb-lr2 'NACK retries')" '
		{failover_ms: ($ms | tonumber), timeouts, retransmitted_packets, naks_received, rewinds,
		 path2_data: $w.wan2.a2b.rx, depot_wan_ifindex: $depot_if,
		 depot_nack: ($b.depot_nack // 0), depot_held: ($b.depot_held // 0),
		 depot_dup: ($b.depot_dup_delivered // 0), nack_retries: ($nr | tonumber? // 0),
		 dnack_forward: ($a.sentry_dnack_forward // 0), sr_pass: ($a.sentry_sr_pass // 0),
		 sr_drop: ($a.sentry_sr_drop // 0), retx_pass: ($a.sentry_retx_pass // 0),
		 resent: ($a.sentry_resent // 0), watchdog: ($a.sentry_watchdog // 0)}' <<<"$LR2_C")
	lh_exec wan1 ip link set rt1 up
	lh_exec gwa ip route replace 10.2.0.0/24 via 10.0.1.2 metric 10
	lh_exec gwb ip route replace 10.1.0.0/24 via 10.0.11.1 metric 10
	sleep 0.5
}

@test "LR2 and credit, path 1 cut mid-transfer: both directions move to path 2; what was in flight is recovered by LR2, only it crosses again, no NIC timeout" {
	local lr2 plain lr2_wan
	# Sized as docs/operations.md says: the first hops hold a NIC window per flow
	# (256k), the transit hops only their link's round trip (32k): at the cut
	# most of each window waits at gwa (held, re-sent on path 2), what was in
	# flight on path 1 is lost. The NICs' timeout (-t 17: 537 ms) is longer than
	# the failover (3R = 150 ms and the agents' ticks); the Sentry's watchdog is
	# longer than the NIC's replay waits in the credit queue behind held data.
	lh_topo_up dual-path --rtt 2ms --path2-rtt 4ms --match roce
	CR_EXTRA_rt1="--credit-buffer 32k"
	CR_EXTRA_rt2="--credit-buffer 32k"
	CUT_LR2=(--sentry-watchdog 500ms)
	cut_run lr2 -t 17
	lr2=$CUT_R
	echo "with LR2: $lr2"
	cut_run plain -t 17
	plain=$CUT_R
	echo "without LR2: $plain"
	for r in "$lr2" "$plain"; do
		jq_assert "$r" '.path2_data > 1000 and .failover_ms <= '$((3 * CR_R + 500))
	done
	# the Depot's data moved to wan2 with the traffic: its NACK retries and reports go there
	jq_assert "$lr2" '.depot_wan_ifindex == ['"$(ifindex gwb wan2)"']'
	jq_assert "$lr2" '.timeouts == 0 and .watchdog == 0'
	# Whether anything was in flight on path 1 at the cut is chance, with LR2 as
	# without (a run may lose nothing there, with LR2 or without: no gap, no
	# NACK, no replay). Nothing lost: nothing to recover, and
	# the NIC sent nothing twice.
	if jq -e '.depot_nack == 0 and .depot_held == 0' <<<"$lr2" >/dev/null; then
		echo "nothing in flight on path 1 was lost at the cut: nothing for LR2 to recover"
		jq_assert "$lr2" '.retransmitted_packets == 0 and .dnack_forward == 0'
		return 0
	fi
	# in flight on path 1 when it was cut: lost; after it, the held packets came by
	# path 2 with that gap: the Depot held them and NACKed, the NIC rewound at once
	# (no timeout), and the Sentry let only the lost PSNs cross again
	jq_assert "$lr2" '.depot_nack >= 1 and .depot_held > 0 and .dnack_forward >= 1'
	jq_assert "$lr2" '.sr_pass > 0 and .sr_drop > 0'
	# what crossed the WAN again: with LR2 the lost PSNs (plus what passed unfiltered),
	# less than the sending NIC's go-back-N replayed; without LR2 all of its replay
	# crosses. The plain run is printed, not compared (chance, above)
	lr2_wan=$(jq '.sr_pass + .retx_pass + .resent' <<<"$lr2")
	echo "crossed the WAN again: $lr2_wan of the NIC's $(jq .retransmitted_packets <<<"$lr2") with LR2, $(jq .retransmitted_packets <<<"$plain") without"
	[ "$lr2_wan" -lt "$(jq .retransmitted_packets <<<"$lr2")" ]
}
