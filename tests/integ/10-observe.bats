#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Observe mode's pass-through attached by longhauld to a veth in a namespace:
# RoCEv2 packets built by user/lib (lhpkt send) are counted by reason and by
# opcode in the pinned per-CPU maps, which bpftool pretty-prints by field
# name; clean detach; clear errors for a busy interface or a bad flag.

load helpers

# sum of one field of a pinned per-CPU counter map over all CPUs
counter() {
	bpftool map dump pinned "$PIN/$1" | jq "[.[0].values[].value.$2] | add"
}

start_agent() {
	lh_bg "$GW" "$BATS_FILE_TMPDIR/longhauld.log" \
		"$LH_BIN/longhauld" --mode observe --dc dc0 --instance "$LH_PREFIX" "$@" >"$BATS_FILE_TMPDIR/agent.pid"
	local i
	# pins appear at load, before attach: wait for the agent to say it runs
	for i in $(seq 50); do
		grep -qF '; running (SIGINT' "$BATS_FILE_TMPDIR/longhauld.log" && return 0
		sleep 0.1
	done
	cat "$BATS_FILE_TMPDIR/longhauld.log" >&2
	return 1
}

stop_agent() {
	local pid
	pid=$(cat "$BATS_FILE_TMPDIR/agent.pid")
	kill "$pid" 2>/dev/null || true
	for i in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

setup_file() {
	[ "$(id -u)" -eq 0 ] || skip "needs root"
	lh_bpffs
	HOST=$(lh_ns host)
	GW=$(lh_ns gw)
	lh_veth "$HOST" eth0 "$GW" dc0
	export HOST GW PIN=/sys/fs/bpf/longhaul/$LH_PREFIX
	start_agent
}

teardown_file() {
	lh_cleanup
	rm -rf "/sys/fs/bpf/longhaul/$LH_PREFIX"
}

# lhpkt send from the host namespace, under a timeout
send() {
	timeout 30 nsenter --net=/var/run/netns/"$HOST" "$LH_BIN/lhpkt" send --dev eth0 "$@"
}

@test "the gateway XDP program is attached to the DC interface" {
	run_t ip -n "$GW" -j link show dev dc0
	[ "$status" -eq 0 ]
	jq_assert "$output" '.[0].xdp.prog.id > 0'
}

@test "RoCEv2 packets are counted per opcode and passed on" {
	local roce0 pass0
	roce0=$(counter lh_stats roce)
	pass0=$(counter lh_stats pass)
	run send --opcode RC_RDMA_WRITE_FIRST --payload 1024 --count 40 --qpn 0x11 --psn 16777200
	[ "$status" -eq 0 ]
	run send --opcode RC_ACKNOWLEDGE --syndrome 0x1f --count 25
	[ "$status" -eq 0 ]
	run send -6 --opcode RC_SEND_ONLY --payload 17 --count 10
	[ "$status" -eq 0 ]
	sleep 0.2
	[ "$(counter lh_stats roce)" -eq $((roce0 + 75)) ]
	[ "$(counter lh_opcodes rc_rdma_write_first)" -eq 40 ]
	[ "$(counter lh_opcodes rc_acknowledge)" -eq 25 ]
	[ "$(counter lh_opcodes rc_send_only)" -eq 10 ]
	[ "$(counter lh_stats pass)" -ge $((pass0 + 75)) ]
}

@test "non-RoCE traffic is counted by reason and passed" {
	local n0
	n0=$(counter lh_stats parse_non_roce)
	run send --dport 53 --count 7
	[ "$status" -eq 0 ]
	sleep 0.2
	[ "$(counter lh_stats parse_non_roce)" -eq $((n0 + 7)) ]
}

@test "bpftool pretty-prints the pinned counters by name" {
	run_t bpftool map dump pinned "$PIN/lh_stats"
	[ "$status" -eq 0 ]
	[[ "$output" == *'"roce":'* ]]
	[[ "$output" == *'"parse_trunc_ip":'* ]]
	run_t bpftool map dump pinned "$PIN/lh_opcodes"
	[[ "$output" == *'"rc_rdma_write_first":'* ]]
}

@test "a second agent on the same interface fails clearly (exit 4), the first keeps running" {
	run_t 10 nsenter --net=/var/run/netns/"$GW" "$LH_BIN/longhauld" --mode observe --dc dc0 --instance "${LH_PREFIX}b"
	[ "$status" -eq 4 ]
	[[ "$output" == *"already attached"* ]]
	[ ! -e "/sys/fs/bpf/longhaul/${LH_PREFIX}b" ]
	run_t 10 nsenter --net=/var/run/netns/"$GW" "$LH_BIN/longhauld" --mode observe --dc dc0 --instance "$LH_PREFIX"
	[ "$status" -eq 4 ]
	[[ "$output" == *"another longhauld"* ]]
	kill -0 "$(cat "$BATS_FILE_TMPDIR/agent.pid")"
}

@test "bad flags and missing interfaces: clear errors, distinct exit statuses" {
	run_t 10 "$LH_BIN/longhauld" --frobnicate
	[ "$status" -eq 2 ]
	run_t 10 "$LH_BIN/longhauld"
	[ "$status" -eq 2 ]
	[[ "$output" == *"no interface"* ]]
	run_t 10 "$LH_BIN/longhauld" --mode observe --dc nosuchif0 --instance "${LH_PREFIX}c"
	[ "$status" -eq 3 ]
	[[ "$output" == *"no such interface"* ]]
	run_t 10 "$LH_BIN/longhauld" --dc lo --xdp-mode turbo
	[ "$status" -eq 2 ]
	run_t 10 "$LH_BIN/longhauld" --dc lo --nic-timeout 0
	[ "$status" -eq 2 ]
	[[ "$output" == *"--nic-timeout: '0' is not valid"* ]]
	run_t 10 "$LH_BIN/longhauld" --dc lo --load-nice 20
	[ "$status" -eq 2 ]
	[[ "$output" == *"--load-nice: '20' is not valid"* ]]
}

@test "stopping the agent detaches XDP and removes its pins" {
	stop_agent
	run_t ip -n "$GW" -j link show dev dc0
	jq_assert "$output" '.[0].xdp == null'
	[ ! -e "$PIN" ]
}

@test "--load-nice: the programs load in a thread of their own at that nice value, the agent's own threads at theirs" {
	start_agent -v --load-nice 19
	local pid tid
	pid=$(cat "$BATS_FILE_TMPDIR/agent.pid")
	run grep -o "loading the programs in thread [0-9]* at nice 19" "$BATS_FILE_TMPDIR/longhauld.log"
	[ "$status" -eq 0 ]
	tid=$(awk '{print $6}' <<<"$output")
	[ "$tid" != "$pid" ]
	# field 19 of stat: the main thread's nice, untouched
	[ "$(awk '{print $19}' "/proc/$pid/stat")" = "$(awk '{print $19}' /proc/self/stat)" ]
	stop_agent
}

@test "with --verify-icrc a bad ICRC is counted and the packet still passed" {
	start_agent --verify-icrc
	run send --opcode RC_RDMA_WRITE_ONLY --payload 512 --count 5
	run send --opcode RC_RDMA_WRITE_ONLY --payload 512 --count 3 --bad-icrc
	sleep 0.2
	[ "$(counter lh_stats icrc_ok)" -eq 5 ]
	[ "$(counter lh_stats icrc_bad)" -eq 3 ]
	[ "$(counter lh_stats pass)" -ge 8 ]
	stop_agent
}

@test "a config file: its options apply (even through an abbreviated --conf); errors name the file and line" {
	local cf=$BATS_TEST_TMPDIR/gw.conf
	cat >"$cf" <<-CONF
		# an observe gateway
		mode = observe
		dc = dc0          # toward the DC
		instance = $LH_PREFIX
		verify-icrc = yes
	CONF
	lh_bg "$GW" "$BATS_FILE_TMPDIR/longhauld.log" "$LH_BIN/longhauld" --conf "$cf" \
		>"$BATS_FILE_TMPDIR/agent.pid"
	for i in $(seq 50); do
		grep -qF '; running (SIGINT' "$BATS_FILE_TMPDIR/longhauld.log" && break
		sleep 0.1
	done
	grep -qF '; running (SIGINT' "$BATS_FILE_TMPDIR/longhauld.log"
	run send --opcode RC_RDMA_WRITE_ONLY --payload 256 --count 2 --bad-icrc
	sleep 0.2
	# verify-icrc came from the file: the bad ICRCs are counted
	[ "$(counter lh_stats icrc_bad)" -eq 2 ]
	stop_agent

	printf 'dc = dc0\nfrobnicate = 1\n' >"$cf"
	run_t 10 "$LH_BIN/longhauld" --config "$cf"
	[ "$status" -eq 2 ]
	[[ "$output" == *"$cf:2: unknown key 'frobnicate'"* ]]
	printf 'dc = dc0\nwan = dc1\nmax-qps = 0\n' >"$cf"
	run_t 10 "$LH_BIN/longhauld" --config="$cf"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--max-qps: '0' is not valid"* ]]
	[[ "$output" == *"$cf:3"* ]]
	run_t 10 "$LH_BIN/longhauld" --config "$cf.missing"
	[ "$status" -eq 2 ]
	[[ "$output" == *"$cf.missing"* ]]
}

@test "several --wan: each attached; the same one twice, the DC one, a fifth, are refused (exit 2)" {
	local cf=$BATS_TEST_TMPDIR/gw.conf i
	for i in 1 2; do
		ip link add "w$i" netns "$GW" type veth peer name "w${i}p" netns "$GW"
		ip -n "$GW" link set "w$i" up
		ip -n "$GW" link set "w${i}p" up
	done
	# the file's wan list, and the command line's --wan replacing it
	printf 'mode = observe\nwan = w1\nwan = dc0x\n' >"$cf"
	lh_bg "$GW" "$BATS_FILE_TMPDIR/longhauld.log" "$LH_BIN/longhauld" --config "$cf" \
		--wan w1 --wan w2 --instance "$LH_PREFIX" >"$BATS_FILE_TMPDIR/agent.pid"
	for i in $(seq 50); do
		grep -qF '; running (SIGINT' "$BATS_FILE_TMPDIR/longhauld.log" && break
		sleep 0.1
	done
	grep -qF '; running (SIGINT' "$BATS_FILE_TMPDIR/longhauld.log" || { cat "$BATS_FILE_TMPDIR/longhauld.log"; false; }
	for i in w1 w2; do
		run_t ip -n "$GW" -j link show dev "$i"
		jq_assert "$output" '.[0].xdp.prog.name == "lh_observe"'
	done
	run_t "$LH_BIN/longhaul" -j --instance "$LH_PREFIX" status
	jq_assert "$output" '[.interfaces[] | select(.role == "wan") | .name] == ["w1", "w2"]'
	run_t "$LH_BIN/longhaul" -j status list
	jq_assert "$output" '[.[] | select(.instance == "'"$LH_PREFIX"'") | {wan, wans}] == [{"wan": "w1", "wans": ["w1", "w2"]}]'
	stop_agent
	for i in w1 w2; do
		run_t ip -n "$GW" -j link show dev "$i"
		jq_assert "$output" '.[0].xdp == null'
	done

	run_t 10 "$LH_BIN/longhauld" --dc dc0 --wan w1 --wan w1
	[ "$status" -eq 2 ]
	[[ "$output" == *"--wan w1: given twice"* ]]
	run_t 10 "$LH_BIN/longhauld" --dc dc0 --wan w1 --wan dc0
	[ "$status" -eq 2 ]
	[[ "$output" == *"--dc and --wan are the same interface (dc0)"* ]]
	run_t 10 "$LH_BIN/longhauld" --dc dc0 --wan a --wan b --wan c --wan d --wan e
	[ "$status" -eq 2 ]
	[[ "$output" == *"--wan e: at most 4 WAN interfaces"* ]]
	printf 'dc = dc0\nwan = w1\nwan = w1\n' >"$cf"
	run_t 10 "$LH_BIN/longhauld" --config "$cf"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--wan w1: given twice"* && "$output" == *"$cf:3"* ]]
	# an altname is the same interface under another name
	ip -n "$GW" link property add dev w1 altname w1alias
	run_t 10 nsenter --net=/var/run/netns/"$GW" "$LH_BIN/longhauld" --dc dc0 --wan w1 --wan w1alias \
		--instance "${LH_PREFIX}d"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--wan w1alias: the same interface as --wan w1"* ]]
}
