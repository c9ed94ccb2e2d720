#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The operator CLI, longhaul, against two longhaulds in namespaces: one in
# observe mode (one interface) and one in lr2 mode (DC and WAN interfaces).
# RoCEv2 frames from lhpkt make counters move and QPs appear (data into the
# gateway's WAN side: a Depot QP; into its DC side: a Sentry QP; an ACK from
# the responder pairs the Depot QP, after which a packet beyond a gap is
# held). `longhaul -j` output is checked against what was sent and against
# bpftool's own reading of the same pins; the failure classes have their exit
# statuses: 2 usage, 3 no agent, 4 a pinned map this build cannot read.

load helpers
bats_require_minimum_version 1.5.0

# longhaul under a timeout, for command substitutions
longhaul() {
	timeout --kill-after=5 30 "$LH_BIN/longhaul" "$@"
}

# send NS [LHPKT OPTIONS]: frames from namespace NS into the gateway
send() {
	local ns=$1
	shift
	timeout 30 nsenter --net="/var/run/netns/$ns" "$LH_BIN/lhpkt" send --dev eth0 "$@" >/dev/null
}

# start_agent INSTANCE NS [LONGHAULD OPTIONS]: longhauld in NS, until it says it runs
start_agent() {
	local name=$1 ns=$2 i
	shift 2
	lh_bg "$ns" "$BATS_FILE_TMPDIR/$name.log" \
		"$LH_BIN/longhauld" --instance "$name" "$@" >"$BATS_FILE_TMPDIR/$name.pid"
	for i in $(seq 100); do
		grep -qF '; running (SIGINT' "$BATS_FILE_TMPDIR/$name.log" && return 0
		sleep 0.1
	done
	cat "$BATS_FILE_TMPDIR/$name.log" >&2
	return 1
}

agent_pid() {
	cat "$BATS_FILE_TMPDIR/$1.pid"
}

# bpftool's sum over CPUs of every field of a pinned per-CPU counter struct: the oracle
bpftool_sums() {
	bpftool map dump pinned "$1" |
		jq -S '[.[0].values[].value] | reduce .[] as $v ({}; reduce ($v | to_entries[]) as $e (.; .[$e.key] += $e.value))'
}

# pool slots in state STATE (1 held, 2 backup) over every ring, as bpftool reads lh_ring
bpftool_ring_state() {
	bpftool map dump pinned "$PIN_LR2/lh_ring" |
		jq "[.[].value.ent[] | select((.tag / 16777216 | floor) == $1)] | length"
}

# QP 0x12 is paired: by the agent (lh_pair), or by the data path itself (its flags)
paired() {
	bpftool map dump pinned "$PIN_LR2/lh_pair" 2>/dev/null | jq -e 'length > 0' >/dev/null ||
		longhaul -j --instance "$LR2" qps --key 10.0.0.1,10.0.0.2,0x12 2>/dev/null |
		jq -e '.[0].flags | index("paired")' >/dev/null
}

setup_file() {
	local ns i
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	lh_bpffs
	HO=$(lh_ns ho)
	GO=$(lh_ns go)
	DC=$(lh_ns dc)
	GW=$(lh_ns gw)
	WAN=$(lh_ns wan)
	# no IPv6 autoconfiguration traffic: the counters see only what the tests send
	for ns in "$HO" "$GO" "$DC" "$GW" "$WAN"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1
	done
	lh_veth "$HO" eth0 "$GO" dc0
	lh_veth "$DC" eth0 "$GW" dc0
	lh_veth "$WAN" eth0 "$GW" wan0
	OBS=${LH_PREFIX}o
	LR2=${LH_PREFIX}l
	PIN_OBS=/sys/fs/bpf/longhaul/$OBS
	PIN_LR2=/sys/fs/bpf/longhaul/$LR2
	export HO GO DC GW WAN OBS LR2 PIN_OBS PIN_LR2
	# pins (the observe agent keeps them) and lock files the agents leave
	lh_track cmd "rm -rf $PIN_OBS $PIN_LR2 /run/longhaul/_sys_fs_bpf_longhaul_$OBS.lock /run/longhaul/_sys_fs_bpf_longhaul_$LR2.lock"
	start_agent "$OBS" "$GO" --mode observe --dc dc0 --keep-pins
	start_agent "$LR2" "$GW" --dc dc0 --wan wan0 --pool-slots 256 --max-qps 64 --rings 8 \
		--qp-idle 600s

	# observe: 75 RoCEv2 frames of three opcodes, 7 UDP frames to another port
	send "$HO" --opcode RC_RDMA_WRITE_FIRST --payload 1024 --count 40 --qpn 0x11
	send "$HO" --opcode RC_ACKNOWLEDGE --syndrome 0x1f --count 25
	send "$HO" -6 --opcode RC_SEND_ONLY --payload 17 --count 10
	send "$HO" --dport 53 --count 7

	# lr2: two Depot QPs (IPv4 and IPv6) from the WAN side, a Sentry QP from the DC side
	send "$WAN" --opcode RC_RDMA_WRITE_MIDDLE --payload 100 --count 5 --qpn 0x12 --psn 1000 \
		--src 10.0.0.1 --dst 10.0.0.2
	send "$WAN" --opcode RC_SEND_ONLY --payload 64 --count 2 --qpn 0x56 --psn 7 \
		--src fd00::1 --dst fd00::2
	send "$DC" --opcode RC_SEND_ONLY --payload 10 --count 3 --qpn 0x34 --psn 500 \
		--src 10.0.1.1 --dst 10.0.1.2
	# the responder's ACK lets the agent pair QP 0x12 with its requester's QPN 0x77 ...
	send "$DC" --opcode RC_ACKNOWLEDGE --syndrome 0x1f --msn 1 --qpn 0x77 --psn 1004 \
		--src 10.0.0.2 --dst 10.0.0.1
	for i in $(seq 50); do
		paired && break
		sleep 0.1
	done
	# ... so that PSN 1010, after the gap 1005-1009, is held in the reorder pool
	send "$WAN" --opcode RC_RDMA_WRITE_MIDDLE --payload 100 --qpn 0x12 --psn 1010 \
		--src 10.0.0.1 --dst 10.0.0.2
	sleep 0.3
}

teardown_file() {
	lh_cleanup
}

@test "status: the observe agent runs, with its pid, mode, interface, XDP program and maps" {
	local xdp_id
	run_t "$LH_BIN/longhaul" -j --instance "$OBS" status
	[ "$status" -eq 0 ]
	jq_assert "$output" ".running == true and .pid_alive and .pid == $(agent_pid "$OBS")"
	jq_assert "$output" '.mode == "observe" and .instance == "'"$OBS"'"'
	jq_assert "$output" '.pin_dir == "'"$PIN_OBS"'" and (.lock_file | endswith(".lock"))'
	jq_assert "$output" '.netns == "'"$GO"'" and (.interfaces | length) == 1'
	jq_assert "$output" '.interfaces[0] | .role == "dc" and .name == "dc0" and .xdp.name == "lh_observe"'
	xdp_id=$(ip -n "$GO" -j link show dev dc0 | jq '.[0].xdp.prog.id')
	jq_assert "$output" ".interfaces[0].xdp.id == $xdp_id"
	jq_assert "$output" '.maps | keys == ["lh_opcodes", "lh_stats"]'
	jq_assert "$output" '[.maps[].compatible] | all'
	jq_assert "$output" '.options.max_qps > 0 and .pool == null'
}

@test "status: the lr2 agent, its roles, the programs on both interfaces, the pool size" {
	run_t "$LH_BIN/longhaul" -j --instance "$LR2" status
	[ "$status" -eq 0 ]
	jq_assert "$output" '.running and .mode == "lr2" and .roles == ["depot", "sentry"]'
	jq_assert "$output" '.interfaces | map(.name) == ["dc0", "wan0"]'
	jq_assert "$output" '.interfaces[0] | .xdp.name == "lh_dc_xdp" and .tc_ingress[0].name == "lh_dc_in" and .tc_egress[0].name == "lh_dc_out"'
	jq_assert "$output" '.interfaces[1].xdp.name == "lh_wan_xdp"'
	jq_assert "$output" '.pool == {"slots": 256, "rings": 8, "max_qps": 64}'
	jq_assert "$output" '.options.pool_slots == 256 and .options.rings == 8'
	jq_assert "$output" '(.maps | has("lh_qp") and has("lh_ring") and has("lh_pool")) and ([.maps[].compatible] | all)'
	# the text form says the same
	run_t "$LH_BIN/longhaul" --instance "$LR2" status
	[ "$status" -eq 0 ]
	[[ "$output" =~ running\ +yes ]]
	[[ "$output" =~ mode\ +lr2 ]]
	[[ "$output" == *"lh_wan_xdp"* ]]
}

@test "status list: both agents of this file run" {
	run_t "$LH_BIN/longhaul" -j status list
	[ "$status" -eq 0 ]
	jq_assert "$output" '[.[] | select(.instance == "'"$OBS"'" and .running and .mode == "observe")] | length == 1'
	jq_assert "$output" '[.[] | select(.instance == "'"$LR2"'" and .running and .wan == "wan0")] | length == 1'
}

@test "stats: the counters of the packets sent, and every counter as bpftool sums it" {
	local want got i
	run_t "$LH_BIN/longhaul" -j --instance "$OBS" stats
	[ "$status" -eq 0 ]
	jq_assert "$output" '.cpus >= 1'
	jq_assert "$output" '.counters.roce.value == 75 and .counters.parse_non_roce.value == 7'
	jq_assert "$output" '.counters.pass.value >= 82 and .counters.rx.value == .counters.pass.value'
	jq_assert "$output" '.counters.roce.description | test("RoCEv2")'
	# without --all only the counters that moved
	jq_assert "$output" '[.counters[].value] | all(. > 0)'
	run_t "$LH_BIN/longhaul" -j --instance "$OBS" stats --all
	jq_assert "$output" "(.counters | length) == $(bpftool map dump pinned "$PIN_OBS/lh_stats" | jq '.[0].values[0].value | length')"
	# the same numbers as bpftool's (read again if a stray frame came between the two reads)
	for i in 1 2 3; do
		want=$(bpftool_sums "$PIN_OBS/lh_stats")
		got=$(longhaul -j --instance "$OBS" stats --all | jq -S '.counters | map_values(.value)')
		[ "$want" = "$got" ] && break
	done
	[ "$want" = "$got" ]
}

@test "stats opcodes: RoCEv2 packets per opcode, as bpftool sums them" {
	run_t "$LH_BIN/longhaul" -j --instance "$OBS" stats opcodes
	[ "$status" -eq 0 ]
	jq_assert "$output" '.total == 75 and (.opcodes | length) == 3'
	jq_assert "$output" '.opcodes.rc_rdma_write_first == {"value": 40, "opcode": 6}'
	jq_assert "$output" '.opcodes.rc_acknowledge == {"value": 25, "opcode": 17}'
	jq_assert "$output" '.opcodes.rc_send_only == {"value": 10, "opcode": 4}'
	[ "$(longhaul -j --instance "$OBS" stats opcodes --all | jq -S '.opcodes | map_values(.value)')" = \
		"$(bpftool_sums "$PIN_OBS/lh_opcodes")" ]
}

@test "stats in text: one line per counter with its value and description" {
	run_t "$LH_BIN/longhaul" --instance "$OBS" stats
	[ "$status" -eq 0 ]
	[[ "$output" =~ roce\ +75\ +RoCEv2\ packets\ parsed ]]
	[[ "$output" =~ parse_non_roce\ +7\ +UDP ]]
	run_t "$LH_BIN/longhaul" --instance "$OBS" stats opcodes
	[[ "$output" =~ rc_rdma_write_first\ +40\ +0x06 ]]
}

@test "qps: a Depot QP per data direction from the WAN, a Sentry QP from the DC" {
	local qps
	run_t "$LH_BIN/longhaul" -j --instance "$LR2" qps
	[ "$status" -eq 0 ]
	qps=$output
	jq_assert "$qps" 'length == 3'
	jq_assert "$qps" '[.[] | select(.role == "depot")] | length == 2'
	jq_assert "$qps" '.[] | select(.dqpn == 18) | .saddr == "10.0.0.1" and .daddr == "10.0.0.2" and .role == "depot" and (.flags | index("depot"))'
	jq_assert "$qps" '.[] | select(.dqpn == 86) | .saddr == "fd00::1" and .daddr == "fd00::2" and (.flags | index("ipv6")) and .depot.epsn == 9'
	jq_assert "$qps" '.[] | select(.dqpn == 52) | .saddr == "10.0.1.1" and .role == "sentry" and .sentry.next == 503 and .sentry.episode == false and .depot == null'
	jq_assert "$qps" '.[] | .last_rx_age_us >= 0 and .pkey == 65535'
	# the same QP as bpftool reads it
	jq_assert "$qps" ".[] | select(.dqpn == 18) | .depot.epsn == $(bpftool map dump pinned "$PIN_LR2/lh_qp" | jq '.[] | select(.key.dqpn == 18) | .value.d.deliv')"
}

@test "qps: the paired Depot QP holds the packet after its gap" {
	run_t "$LH_BIN/longhaul" -j --instance "$LR2" qps --key 10.0.0.1,10.0.0.2,0x12
	[ "$status" -eq 0 ]
	jq_assert "$output" 'length == 1 and .[0].dqpn == 18'
	jq_assert "$output" '.[0] | .peer_qpn == 119 and (.flags | index("paired")) and .ring != null'
	jq_assert "$output" '.[0].depot | .epsn == 1005 and .epsn_d == 1011 and .pending == 6'
	# a backup copy for every PSN delivered and not yet acknowledged (the ACK may have freed some)
	jq_assert "$output" '.[0].depot.acked as $a | ($a == 1000 or $a == 1005) and .[0].slots == {"held": 1, "backup": (1005 - $a), "other": 0}'
	# --qpn finds a QP by its QPN or by its requester's
	run_t "$LH_BIN/longhaul" -j --instance "$LR2" qps --qpn 0x77
	jq_assert "$output" 'length == 1 and .[0].dqpn == 18'
	run_t "$LH_BIN/longhaul" --instance "$LR2" qps --qpn 0x34
	[[ "$output" == *"qp 0x000034  10.0.1.1 -> 10.0.1.2  sentry"* ]]
	[[ "$output" =~ next\ +503 ]]
	# no such QP: a failure of its own (1), not "no agent"
	run_t "$LH_BIN/longhaul" --instance "$LR2" qps --key 10.0.0.1,10.0.0.2,0x99
	[ "$status" -eq 1 ]
	[[ "$output" == *"no QP"* ]]
}

@test "pools: held and backup slots add up, free = slots - used, as bpftool's rings say" {
	local unacked
	# backups: the PSNs the Depot QPs delivered and the NIC has not acknowledged
	unacked=$(longhaul -j --instance "$LR2" qps | jq '[.[].depot | select(.) | .epsn - .acked] | add')
	run_t "$LH_BIN/longhaul" -j --instance "$LR2" pools
	[ "$status" -eq 0 ]
	jq_assert "$output" '.slots == 256 and .rings == 8 and .max_qps == 64'
	# 1 beyond the gap (held)
	jq_assert "$output" ".held == 1 and .backup == $unacked and .backup >= 2 and .other == 0"
	jq_assert "$output" '.used == .held + .backup + .other and .free == .slots - .used'
	jq_assert "$output" '.rings_used == 2 and .qps == 3 and .depot_qps == 2 and .sentry_qps == 1'
	jq_assert "$output" ".held == $(bpftool_ring_state 1) and .backup == $(bpftool_ring_state 2)"
	jq_assert "$output" ".slots == $(bpftool map show pinned "$PIN_LR2/lh_pool" -j | jq .max_entries)"
}

@test "qps and pools of an observe agent: exit 3, it keeps no QPs" {
	run_t "$LH_BIN/longhaul" --instance "$OBS" qps
	[ "$status" -eq 3 ]
	[[ "$output" == *"observe mode"* ]]
	run_t "$LH_BIN/longhaul" -j --instance "$OBS" pools
	[ "$status" -eq 3 ]
}

@test "no agent for an instance: exit 3 and a message that names it" {
	run_t "$LH_BIN/longhaul" --instance "${LH_PREFIX}none" stats
	[ "$status" -eq 3 ]
	[[ "$output" == *"no longhauld runs for instance '${LH_PREFIX}none'"* ]]
	[[ "$output" == *"$LR2"* ]] # the hint names the running instances
	run --separate-stderr timeout 30 "$LH_BIN/longhaul" -j --instance "${LH_PREFIX}none" status
	[ "$status" -eq 3 ]
	jq_assert "$output" '.running == false and .pid == null and .lock_file == null and .interfaces == []'
	[[ "$stderr" == *"no longhauld runs"* ]]
	run_t "$LH_BIN/longhaul" --pin-dir /sys/fs/bpf/longhaul-none-$LH_PREFIX qps
	[ "$status" -eq 3 ]
}

@test "bad usage: exit 2 and a message" {
	run_t "$LH_BIN/longhaul"
	[ "$status" -eq 2 ]
	run_t "$LH_BIN/longhaul" frobnicate
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown object 'frobnicate'"* ]]
	run_t "$LH_BIN/longhaul" stats frobnicate
	[ "$status" -eq 2 ]
	run_t "$LH_BIN/longhaul" --frobnicate stats
	[ "$status" -eq 2 ]
	[[ "$output" == *"unrecognized option '--frobnicate'"* ]]
	run_t "$LH_BIN/longhaul" stat
	[ "$status" -eq 2 ]
	[[ "$output" == *"ambiguous"* ]]
	run_t "$LH_BIN/longhaul" --instance "$OBS" stats --key 1.2.3.4,1.2.3.5,1
	[ "$status" -eq 2 ]
	[[ "$output" == *"--key does not apply to 'stats show'"* ]]
	run_t "$LH_BIN/longhaul" --instance "$OBS" stats show extra
	[ "$status" -eq 2 ]
	run_t "$LH_BIN/longhaul" --instance a --pin-dir /sys/fs/bpf/b status
	[ "$status" -eq 2 ]
	run_t "$LH_BIN/longhaul" --instance ../etc status
	[ "$status" -eq 2 ]
	run_t "$LH_BIN/longhaul" --instance "$LR2" qps --key 10.0.0.1,0x12
	[ "$status" -eq 2 ]
	run_t "$LH_BIN/longhaul" --instance "$LR2" qps --qpn 0x1000000
	[ "$status" -eq 2 ]
	run_t "$LH_BIN/longhaul" qps --qpn
	[ "$status" -eq 2 ]
	# help: exit 0, with the exit statuses
	run_t "$LH_BIN/longhaul" help
	[ "$status" -eq 0 ]
	[[ "$output" == *"Exit status"* ]]
	run_t "$LH_BIN/longhaul" pools help
	[ "$status" -eq 0 ]
	[[ "$output" == *"pools [show]"* ]]
	# a prefix is enough when it names one object or command
	run_t "$LH_BIN/longhaul" -j --instance "$OBS" stats op
	[ "$status" -eq 0 ]
	jq_assert "$output" '.total == 75'
}

@test "a pinned map of the wrong value size or type is refused: exit 4" {
	local d
	d=$(lh_pin_dir)
	bpftool map create "$d/lh_stats" type percpu_array key 4 value 16 entries 1 name lh_stats
	bpftool map create "$d/lh_qp" type array key 4 value 8 entries 1 name lh_qp
	run_t "$LH_BIN/longhaul" --pin-dir "$d" stats
	[ "$status" -eq 4 ]
	[[ "$output" == *"$d/lh_stats has 4-byte keys and 16-byte values"* ]]
	run_t "$LH_BIN/longhaul" -j --pin-dir "$d" qps
	[ "$status" -eq 4 ]
	[[ "$output" == *"lh_qp is a map of type array, this build expects type hash"* ]]
	# status reports them (and exits 3: no agent runs there)
	run --separate-stderr timeout 30 "$LH_BIN/longhaul" -j --pin-dir "$d" status
	[ "$status" -eq 3 ]
	jq_assert "$output" '.maps.lh_stats.compatible == false and .maps.lh_qp.compatible == false'
	rm -f "$d/lh_stats" "$d/lh_qp"
}

@test "a pinned map whose fields moved is refused by its BTF: exit 4" {
	local d n
	command -v clang-19 >/dev/null || skip "needs clang-19 (make deps installs it)"
	d=$(lh_pin_dir)/btf
	mkdir -p "$d"
	# struct lh_stats of the right size with rx and pass swapped, as a stale build might have it
	n=$(($(bpftool map show pinned "$PIN_OBS/lh_stats" -j | jq .bytes_value) / 8))
	cat >"$BATS_FILE_TMPDIR/swapped.bpf.c" <<-EOF
		#include <linux/bpf.h>
		#include <bpf/bpf_helpers.h>
		struct lh_stats { __u64 pass; __u64 rx; __u64 rest[$((n - 2))]; };
		struct {
			__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
			__uint(max_entries, 1);
			__type(key, __u32);
			__type(value, struct lh_stats);
		} lh_stats SEC(".maps");
		SEC("xdp") int lh_swapped(struct xdp_md *ctx)
		{
			__u32 k = 0;
			struct lh_stats *s = bpf_map_lookup_elem(&lh_stats, &k);

			if (s)
				s->rx++;
			return XDP_PASS;
		}
		char LICENSE[] SEC("license") = "GPL";
	EOF
	clang-19 -O2 -g -target bpf -I"/usr/include/$(uname -m)-linux-gnu" \
		-c "$BATS_FILE_TMPDIR/swapped.bpf.c" -o "$BATS_FILE_TMPDIR/swapped.bpf.o"
	bpftool prog load "$BATS_FILE_TMPDIR/swapped.bpf.o" "$d/prog" pinmaps "$d"
	run_t "$LH_BIN/longhaul" --pin-dir "$d" stats
	[ "$status" -eq 4 ]
	[[ "$output" == *"lh_stats.rx is 8 bytes at offset 8 there, 8 bytes at offset 0 in this build"* ]]
	rm -rf "$d"
}

@test "pins left by a stopped agent (--keep-pins) are still read, with a warning; status says it stopped" {
	local pid i
	pid=$(agent_pid "$OBS")
	kill "$pid"
	for i in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	! kill -0 "$pid" 2>/dev/null
	run --separate-stderr timeout 30 "$LH_BIN/longhaul" -j --instance "$OBS" stats
	[ "$status" -eq 0 ]
	jq_assert "$output" '.counters.roce.value == 75'
	[[ "$stderr" == *"no longhauld runs for instance '$OBS': reading the pins it left behind"* ]]
	run --separate-stderr timeout 30 "$LH_BIN/longhaul" -j --instance "$OBS" status
	[ "$status" -eq 3 ]
	jq_assert "$output" '.running == false and .pid == null and .mode == "observe" and (.lock_file | endswith(".lock"))'
	jq_assert "$output" '.interfaces[0].xdp == null and (.maps | has("lh_stats"))'
	[[ "$stderr" == *"the agent stopped"* ]]
	# and status list shows it only with --all
	run_t "$LH_BIN/longhaul" -j status list
	jq_assert "$output" '[.[] | select(.instance == "'"$OBS"'")] | length == 0'
	run_t "$LH_BIN/longhaul" -j status list --all
	jq_assert "$output" '[.[] | select(.instance == "'"$OBS"'" and .running == false)] | length == 1'
}
