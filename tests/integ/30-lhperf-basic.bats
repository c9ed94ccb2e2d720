#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# lhperf without loss: its command line and failure modes, then lossless runs
# between two namespaces over one veth, every byte verified by the server and
# not one packet retransmitted: WRITE and SEND, IPv4 and IPv6, every MTU,
# sizes that need pad bytes, many QPs, PSN wrap, duration and rate limit,
# frames a receiver must drop (bad ICRC, P_Key, addresses).

load helpers
load lhperf-helpers

setup() {
	lhp_require
	lhp_pair
}

teardown() {
	lh_cleanup
}

# the lossless outcome every run below must have
assert_lossless() {
	local c=$1 msgs=$2 size=$3
	jq_eq "$c" .status '"ok"'
	jq_eq "$c" .verified true
	jq_eq "$c" .messages "$msgs"
	jq_eq "$c" .bytes "$((msgs * size))"
	jq_eq "$c" .responder.messages "$msgs"
	jq_eq "$c" .responder.bytes "$((msgs * size))"
	jq_eq "$c" .retransmitted_packets 0
	jq_eq "$c" .naks_sent 0
	jq_eq "$c" .naks_received 0
	jq_eq "$c" .timeouts 0
	jq_eq "$c" .out_of_sequence_drops 0
	jq_eq "$c" .duplicate_packets 0
	jq_eq "$c" .icrc_errors "${4:-0}"
	jq_eq "$c" .responder.verify_errors 0
	jq_eq "$c" .responder.protocol_errors 0
	jq_eq "$c" .responder.packets_received .packets_sent
}

@test "--help documents every option" {
	run "$LH_BIN/lhperf" --help
	[ "$status" -eq 0 ]
	local opt
	for opt in --server --port --dev --json --pretty --batch --qdisc-bypass --verbose --help \
		--bind --listen-timeout --op --qps --size --mtu --iters --duration --rate \
		--recovery --window --timeout --retry --tx-depth --ackreq --psn --stall-time \
		--connect-timeout --tos --bad-frames; do
		[[ "$output" == *"$opt "* ]] || { echo "missing $opt"; return 1; }
	done
	# and every option the help names is one the parser knows
	for opt in $(printf '%s\n' "$output" | grep -oE -- '--[a-z]+(-[a-z]+)*' | sort -u); do
		# a trailing unknown flag ends every run at once (exit 2, or 0 for --help)
		run_t 5 "$LH_BIN/lhperf" "$opt" --not-an-option-x
		[ "$status" -eq 0 ] || [ "$status" -eq 2 ] || { echo "$opt: $status"; return 1; }
		[[ "$output" != *"unrecognized option '$opt'"* ]] || { echo "$opt: $output"; return 1; }
	done
}

@test "bad flags: a clear message and exit status 2" {
	local args
	for args in "" "--mtu 1000 10.30.0.2" "--op read 10.30.0.2" "--qps 0 10.30.0.2" \
		"--qps 5000 10.30.0.2" "--psn 0x1000000 10.30.0.2" "--retry 8 10.30.0.2" \
		"--timeout 32 10.30.0.2" "-n 5 -D 2 10.30.0.2" "10.30.0.2 10.30.0.3" \
		"--server 10.30.0.2" "--server --qps 4" "--bind ::1 10.30.0.2" "--size 0 10.30.0.2" \
		"--recovery gb1 10.30.0.2" "--no-such-flag 10.30.0.2"; do
		# shellcheck disable=SC2086
		run_t 10 "$LH_BIN/lhperf" $args
		echo "lhperf $args -> $status: $output"
		[ "$status" -eq 2 ]
		[ -n "$output" ]
	done
}

@test "unreachable or absent peer: a clear message and exit status 1, no hang" {
	lhp_client 10.99.0.1
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"unreachable"* ]]
	# --json still gives one object to scripts
	jq_eq "$LHP_C" .status '"error"'
	jq_eq "$LHP_C" .exit_code 1
	# nobody listens: refused connections are retried for --connect-timeout, then 1
	lhp_client --connect-timeout 1 10.30.0.2
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no lhperf server"* ]]
	lhp_client --dev nosuchdev 10.30.0.2
	[ "$status" -eq 1 ]
	[[ "$output" == *"no interface nosuchdev"* ]]
	# a server nobody comes to
	run_t 10 nsenter --net=/var/run/netns/"$LHP_DST" "$LH_BIN/lhperf" --server --json --listen-timeout 0.5
	[ "$status" -eq 1 ]
	[[ "$output" == *'"status":"error"'* ]]
}

@test "WRITE over IPv4: every byte verified, no retransmission, perftest-like fields" {
	lhp_run --op write --size 65536 --iters 200 10.30.0.2
	lhp_show
	[ "$status" -eq 0 ]
	[ "$LHP_SRC_STATUS" -eq 0 ]
	assert_lossless "$LHP_C" 200 65536
	jq_eq "$LHP_C" .packets_sent $((200 * 64))
	jq_eq "$LHP_C" .op '"write"'
	jq_eq "$LHP_C" .family '"ipv4"'
	jq_assert "$LHP_C" '.goodput_gbps > 0 and .fct_us.p50 > 0 and .fct_us.max >= .fct_us.p99'
	jq_assert "$LHP_C" '.fct_us.p99 >= .fct_us.p50 and .fct_us.count == 200'
	# one ACK per ACK request: 200 message ends, plus every 64th packet (none left over)
	jq_eq "$LHP_C" .responder.acks_sent 200
	jq_eq "$LHP_S" .status '"ok"'
	jq_eq "$LHP_S" .verified true
	jq_eq "$LHP_S" .responder.packets_received $((200 * 64))
}

@test "SEND over IPv6: every byte verified, no retransmission" {
	lhp_run --op send --size 100000 --iters 50 fd30::2
	lhp_show
	[ "$status" -eq 0 ]
	assert_lossless "$LHP_C" 50 100000
	jq_eq "$LHP_C" .family '"ipv6"'
	jq_eq "$LHP_C" .op '"send"'
	# 98 packets a message: ACK requests on the 64th packet and the last
	jq_eq "$LHP_C" .responder.acks_sent 100
}

@test "a link MTU too small for the RoCE MTU is refused clearly" {
	lhp_server
	lhp_client --mtu 4096 10.30.0.2
	lhp_server_wait
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "$output" == *"has MTU 1500: a RoCE MTU of 4096 needs at least"* ]]
	[ "$LHP_SRC_STATUS" -eq 1 ]
}

@test "every path MTU, sizes that need pad bytes, one-packet messages" {
	local mtu size
	# an MTU of 4096 needs jumbo frames on the link, as rxe's active_mtu does
	ip -n "$LHP_SRC" link set "$LHP_SIF" mtu 9000
	ip -n "$LHP_DST" link set "$LHP_DIF" mtu 9000
	for mtu in 256 512 2048 4096; do
		for size in 1 $((mtu - 1)) $((3 * mtu + 5)); do
			lhp_run --mtu "$mtu" --size "$size" --iters 20 --op send 10.30.0.2
			lhp_show
			[ "$status" -eq 0 ]
			assert_lossless "$LHP_C" 20 "$size"
			jq_eq "$LHP_C" .packets_sent "$((20 * ((size + mtu - 1) / mtu)))"
		done
	done
}

@test "many QPs at once, WRITE and SEND" {
	lhp_run --qps 32 --size 20000 --iters 50 10.30.0.2
	lhp_show
	[ "$status" -eq 0 ]
	assert_lossless "$LHP_C" $((32 * 50)) 20000
	jq_eq "$LHP_C" '.qp_list | length' 32
	jq_eq "$LHP_C" '[.qp_list[].local_qpn] | unique | length' 32
	lhp_run --qps 16 --op send --size 3000 --iters 100 fd30::2
	lhp_show
	[ "$status" -eq 0 ]
	assert_lossless "$LHP_C" $((16 * 100)) 3000
}

@test "PSN wrap: start just below 2^24" {
	# 0xffffc0 + 64 packets a message crosses 2^24 in the first message
	lhp_run --qps 4 --psn 0xffffc0 --size 65536 --iters 20 10.30.0.2
	lhp_show
	[ "$status" -eq 0 ]
	assert_lossless "$LHP_C" 80 65536
	jq_eq "$LHP_C" '[.qp_list[].data_start_psn] | unique' '[16777152]'
}

@test "duration instead of iterations, and a rate limit" {
	lhp_run --duration 1 --size 8192 --qps 2 10.30.0.2
	lhp_show
	[ "$status" -eq 0 ]
	jq_eq "$LHP_C" .status '"ok"'
	jq_eq "$LHP_C" .verified true
	jq_assert "$LHP_C" '.messages > 0 and .retransmitted_packets == 0'
	jq_eq "$LHP_C" .responder.messages .messages
	# 0.05 Gb/s for a second: about 6 MB of frames, far less than unlimited
	lhp_run --duration 1 --rate 0.05 --size 8192 10.30.0.2
	lhp_show
	[ "$status" -eq 0 ]
	jq_assert "$LHP_C" '.verified and .bytes > 0 and .bytes < 12000000'
}

@test "frames a NIC drops (bad ICRC, wrong P_Key, wrong IPs) are dropped and counted" {
	lhp_run --bad-frames 3 --qps 2 --size 4096 --iters 10 10.30.0.2
	lhp_show
	[ "$status" -eq 0 ]
	assert_lossless "$LHP_C" 20 4096 6
	jq_eq "$LHP_C" .responder.rx_drops.icrc_errors 6
	jq_eq "$LHP_C" .responder.rx_drops.pkey_errors 6
	jq_eq "$LHP_C" .responder.rx_drops.addr_errors 12
	jq_eq "$LHP_C" .icrc_errors 6
}

@test "through a router: the next hop's MAC from the route and neighbour tables" {
	# src --- rtr --- dst, the way a gateway topology routes through gateways
	local rsrc rtr rdst
	rsrc=$(lh_ns rsrc)
	rtr=$(lh_ns rtr)
	rdst=$(lh_ns rdst)
	lh_veth "$rsrc" "$LH_PREFIX-a0" "$rtr" "$LH_PREFIX-a1"
	lh_veth "$rtr" "$LH_PREFIX-b1" "$rdst" "$LH_PREFIX-b0"
	ip -n "$rsrc" addr add 10.32.1.1/24 dev "$LH_PREFIX-a0"
	ip -n "$rtr" addr add 10.32.1.254/24 dev "$LH_PREFIX-a1"
	ip -n "$rtr" addr add 10.32.2.254/24 dev "$LH_PREFIX-b1"
	ip -n "$rdst" addr add 10.32.2.1/24 dev "$LH_PREFIX-b0"
	ip -n "$rsrc" addr add fd32:1::1/64 dev "$LH_PREFIX-a0" nodad
	ip -n "$rtr" addr add fd32:1::fe/64 dev "$LH_PREFIX-a1" nodad
	ip -n "$rtr" addr add fd32:2::fe/64 dev "$LH_PREFIX-b1" nodad
	ip -n "$rdst" addr add fd32:2::1/64 dev "$LH_PREFIX-b0" nodad
	ip -n "$rsrc" route add default via 10.32.1.254
	ip -n "$rdst" route add default via 10.32.2.254
	ip -n "$rsrc" -6 route add default via fd32:1::fe
	ip -n "$rdst" -6 route add default via fd32:2::fe
	ip netns exec "$rtr" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	local dst
	for dst in 10.32.2.1 fd32:2::1; do
		LHP_SRC=$rsrc LHP_DST=$rdst lhp_run --qps 2 --size 30000 --iters 50 "$dst"
		lhp_show
		[ "$status" -eq 0 ]
		# TTL / hop limit went down by one on the way: outside the ICRC, as RoCEv2 wants
		assert_lossless "$LHP_C" 100 30000
		jq_eq "$LHP_C" .device "\"$LH_PREFIX-a0\""
		jq_eq "$LHP_S" .device "\"$LH_PREFIX-b0\""
	done
}

@test "text output: a perftest-like table" {
	lhp_server
	run_t "$LHP_TIMEOUT" nsenter --net=/var/run/netns/"$LHP_SRC" "$LH_BIN/lhperf" -n 20 10.30.0.2
	lhp_server_wait
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"#bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"* ]]
	[[ "$output" == *" 65536      20 "* ]]
	[[ "$output" == *"verified        : yes"* ]]
}
