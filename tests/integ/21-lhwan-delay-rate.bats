#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# lhwan's delay and rate, measured end to end in the two-dc topology by
# tools that are not lhwan's emulator: ping for the RTT, the probe's one-way
# delay (one host clock, kernel receive time stamps) and its receive rate.
# Tolerances: delay within 5 % or 0.2 ms (whichever is larger) of what was
# configured, over the path's own latency measured with no delay; rate
# within 5 %.

load helpers

setup_file() {
	lh_require_root
	[ -x "$LH_BIN/lhwan" ] || skip "build lhwan first (make)"
	lh_topo_up two-dc --rtt 0 --match roce --seed 1
}

teardown_file() {
	lh_topo_down
	lh_cleanup
}

teardown() {
	lh_cleanup
}

# least RTT in ms of N pings from src to dst (IPv4 or IPv6 address): what the
# path itself takes, since a busy machine only ever adds to it (on a loaded CI
# host the median runs up to about 0.23 ms over at 2 ms, against 1.98 to 2.11 idle)
ping_min() {
	nsenter --net="$(lh_netns src)" -- timeout 30 ping -c "${2:-50}" -i 0.01 -W 2 "$1" |
		sed -n 's|.*time=\([0-9.]*\) ms|\1|p' | sort -g | head -n 1
}

# max(5 % of x, 0.2 ms), x in ms
tolerance_ms() {
	lh_calc "($1 * 0.05 > 0.2) ? $1 * 0.05 : 0.2"
}

@test "RTT: ping sees the configured RTT over the bare path, IPv4 and IPv6" {
	lh_topo_up two-dc --rtt 0 --match roce --seed 1
	base4=$(ping_min 10.2.0.10)
	base6=$(ping_min fd00:2::10)
	for rtt in 2 20; do
		lh_topo_up two-dc --rtt "${rtt}ms" --match roce --seed 1
		got4=$(ping_min 10.2.0.10)
		got6=$(ping_min fd00:2::10)
		tol=$(tolerance_ms "$rtt")
		# lhwan sends a frame when its time is due, or late by what its
		# timer and a busy host make it (it says how late, on average,
		# per direction): never early, and late by no more than that plus
		# the tolerance (on a loaded CI host: up to about 2.23 ms for 2,
		# lhwan about 65 us late each way)
		late=$(lh_wan_stats | jq '(.a2b.late_avg_ns + .b2a.late_avg_ns) / 1e6')
		echo "rtt $rtt ms: base $base4 / $base6, measured $got4 / $got6, tolerance $tol, lhwan late $late ms" >&3
		for got in "$(lh_calc "$got4 - $base4")" "$(lh_calc "$got6 - $base6")"; do
			lh_near "$got" "$(lh_calc "$rtt + $late / 2")" "$(lh_calc "$tol + $late / 2")" \
				"RTT over the bare path (ms; IPv4, then IPv6)"
		done
	done
}

@test "one-way delays are per direction (a2b 3 ms, b2a 12 ms)" {
	local base a2b b2a da db la lb
	lh_topo_up two-dc --rtt 0 --match roce --seed 1
	# the least delay of each run: the path's own cost without what a busy
	# moment adds (a busy moment inflates the medians: about 2.8 ms for 3 on
	# a loaded CI host, the bare path's median with it)
	base=$(lh_probe src dst 10.2.0.10 --count 2000 --pps 2000 --size 256 | jq '.delay_us.min')
	lh_topo_up two-dc --delay-a2b 3ms --delay-b2a 12ms --match roce --seed 1
	a2b=$(lh_probe src dst 10.2.0.10 --count 2000 --pps 2000 --size 256)
	b2a=$(lh_probe dst src fd00:1::10 --count 2000 --pps 2000 --size 256)
	jq_assert "$a2b" '.received == 2000 and .reordered == 0'
	jq_assert "$b2a" '.received == 2000 and .reordered == 0'
	da=$(lh_calc "($(jq '.delay_us.min' <<<"$a2b") - $base) / 1000")
	db=$(lh_calc "($(jq '.delay_us.min' <<<"$b2a") - $base) / 1000")
	# lhwan is never early, and late by what it says (as in the RTT test)
	read -r la lb < <(lh_wan_stats | jq -r '"\(.a2b.late_avg_ns / 1e6) \(.b2a.late_avg_ns / 1e6)"')
	echo "one-way over base ($base us): a2b $da ms, b2a $db ms; lhwan late $la / $lb ms" >&3
	lh_near "$da" "$(lh_calc "3 + $la / 2")" "$(lh_calc "$(tolerance_ms 3) + $la / 2")" \
		"a2b one-way delay (ms)"
	lh_near "$db" "$(lh_calc "12 + $lb / 2")" "$(lh_calc "$(tolerance_ms 12) + $lb / 2")" \
		"b2a one-way delay (ms)"
}

@test "jitter spreads the delay but keeps order unless asked" {
	lh_topo_up two-dc --rtt 10ms --jitter 2ms --match roce --seed 1
	r=$(lh_probe src dst 10.2.0.10 --count 5000 --pps 5000 --size 256)
	echo "$(jq -c .delay_us <<<"$r")" >&3
	jq_assert "$r" '.received == 5000 and .reordered == 0'
	# 5 ms +- 2 ms, pushed up (never down) by keeping order; the median, not the
	# tail, is checked against the upper bound: a busy machine wakes lhwan late
	jq_assert "$r" '.delay_us.min >= 2900 and .delay_us.p50 <= 7300 and .delay_us.p50 >= 5000'
	jq_assert "$r" '.delay_us.p99 - .delay_us.min >= 2000'
	lh_topo_up two-dc --rtt 10ms --jitter 2ms --lhwan-arg --jitter-reorder --match roce --seed 1
	r=$(lh_probe src dst 10.2.0.10 --count 5000 --pps 5000 --size 256)
	jq_assert "$r" '.received == 5000 and .reordered > 100'
	# without the order kept, the delays spread evenly: median near 5 ms, the least
	# 3 ms. lhwan takes a frame's arrival time after reading it: taken before, a
	# preemption in between would make frames leave early, under 3 ms. It does
	# not use the kernel's receive time stamp, with which frames are reordered
	# on lossless paths (40-lr2, 41-tcsack, 22-lhwan), for reasons not yet
	# understood. The median can only be pushed up, by what lhwan cannot help:
	# this VM's vCPUs are descheduled by their host for up to 6 ms at a time
	# (lhwan late by 3-6 ms at most, 33-45 us on average, with the machine
	# idle), and a loaded CI host pushes it to about 5.7 ms: the bound is 5.6 ms
	# plus the average lateness lhwan measured itself for these frames.
	jq_assert "$r" '.delay_us.min >= 2400'
	late_us=$(lh_wan_stats | jq '.a2b.late_avg_ns / 1000')
	echo "# lhwan late on average: $late_us us" >&3
	jq_assert "$r" ".delay_us.p50 > 4500 and .delay_us.p50 < 5600 + $late_us"
}

@test "stall: the frame a rule picks waits 20 ms more, the frames behind it keep their order" {
	lh_topo_up two-dc --rtt 10ms --match roce --seed 1 --lhwan-arg --stall='a2b:psn 0x12:100 for 20ms'
	# 1000 PSNs 0.2 ms apart: PSN 100 leaves 25 ms after it came, the ~100
	# behind it wait for it, the rest see the 5 ms of the path
	r=$(lh_probe src dst 10.2.0.10 --qpn 0x12 --psn-start 0 --count 1000 --pps 5000 --size 256)
	echo "$(jq -c .delay_us <<<"$r")" >&3
	jq_assert "$r" '.received == 1000 and .reordered == 0'
	jq_assert "$r" '.delay_us.max >= 24500 and .delay_us.p50 < 7000'
	w=$(lh_wan_stats)
	jq_assert "$w" '.a2b.stalled == 1 and .b2a.stalled == 0'
	jq_assert "$w" '.config.a2b.stall == [{"spec": "psn 0x12:100 times 1", "for_ns": 20000000}]'
	# with --jitter-reorder the stalled frame alone is late: the others pass it
	lh_topo_up two-dc --rtt 10ms --match roce --seed 1 --lhwan-arg --jitter-reorder \
		--lhwan-arg --stall='a2b:psn 0x12:100 for 20ms'
	r=$(lh_probe src dst 10.2.0.10 --qpn 0x12 --psn-start 0 --count 1000 --pps 5000 --size 256)
	jq_assert "$r" '.received == 1000 and .reordered >= 1 and .delay_us.max >= 24500'
	jq_assert "$r" '.delay_us.p99 < 12000'
	# a stall rule with no time is refused
	run "$LHWAN" run --check --stall 'psn 100' a b
	[ "$status" -eq 2 ]
	[[ "$output" == *"want 'SPEC for TIME'"* ]]
}

@test "rate: 100 Mbit/s bottleneck delivers 100 Mbit/s +- 5 % under overload, tail drop counted" {
	lh_topo_up two-dc --rtt 4ms --rate 100mbit --match roce --seed 1
	# 150 Mbit/s of 1 KB frames for 2 s
	r=$(lh_probe src dst 10.2.0.10 --size 1024 --rate 150mbit --count 36000)
	s=$(lh_wan_stats)
	echo "received rate $(jq .rate_bps <<<"$r") b/s; lhwan a2b drop_queue $(jq .a2b.drop_queue <<<"$s")" >&3
	lh_near "$(jq .rate_bps <<<"$r")" 100000000 5000000 "a2b rate (bit/s)"
	jq_assert "$s" '.a2b.drop_queue > 1000 and .a2b.drop_loss == 0'
	# what did not fit the buffer is what the receiver missed, plus any frame
	# that is not the probe's (the queue takes every frame: an IPv6 ND or MLD
	# frame of the kernel's can meet a full buffer too)
	jq_assert "$s" ".a2b.drop_queue >= $(jq .lost <<<"$r") and
		.a2b.drop_queue <= $(jq .lost <<<"$r") + (.a2b.rx_packets - .a2b.matched)"
}

@test "rate per direction, both at once: a2b 30 Mbit/s, b2a 120 Mbit/s" {
	lh_topo_up two-dc --rtt 2ms --rate-a2b 30mbit --rate-b2a 120mbit --match roce --seed 1
	a2b_out=$BATS_FILE_TMPDIR/a2b.json
	LH_PROBE_RECV="--stream 1" lh_probe src dst 10.2.0.10 --size 1024 --rate 45mbit --count 11000 --stream 1 >"$a2b_out" &
	LH_PROBE_RECV="--stream 2" lh_probe dst src 10.1.0.10 --size 1024 --rate 180mbit --count 44000 --stream 2 >"$BATS_FILE_TMPDIR/b2a.json"
	wait
	a=$(jq .rate_bps "$a2b_out")
	b=$(jq .rate_bps "$BATS_FILE_TMPDIR/b2a.json")
	echo "a2b $a b/s, b2a $b b/s" >&3
	lh_near "$a" 30000000 1500000 "a2b rate (bit/s)"
	lh_near "$b" 120000000 6000000 "b2a rate (bit/s)"
}

@test "stats can be read while lhwan runs (SIGUSR1) and after" {
	lh_topo_up two-dc --rtt 2ms --match roce --seed 1
	before=$(lh_wan_stats | jq .a2b.rx_packets)
	LH_PROBE_RECV="--idle 2s" lh_probe src dst 10.2.0.10 --count 6000 --pps 1500 --size 128 >/dev/null &
	sleep 2
	mid=$(lh_wan_stats)
	wait
	after=$(lh_wan_stats | jq .a2b.rx_packets)
	m=$(jq .a2b.rx_packets <<<"$mid")
	echo "rx_packets before $before, mid-run $m, after $after" >&3
	[ "$m" -gt "$before" ]
	[ "$after" -ge $((before + 6000)) ]
	[ "$m" -lt "$after" ]
	jq_assert "$mid" '.state == "running" and .uptime_s > 0'
}

@test "standalone lhwan: --duration and --json print the final counters; SIGTERM stops it" {
	a=$(lh_ns a)
	w=$(lh_ns w)
	b=$(lh_ns b)
	lh_veth "$a" a0 "$w" pa
	lh_veth "$w" pb "$b" b0
	ip -n "$a" addr add 192.168.77.1/24 dev a0
	ip -n "$b" addr add 192.168.77.2/24 dev b0
	ip netns exec "$w" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	out=$BATS_FILE_TMPDIR/standalone.json
	nsenter --net=/var/run/netns/"$w" -- timeout 20 "$LHWAN" --duration 3s --json --delay 1ms pa pb \
		>"$out" 2>&1 3>&- &
	sleep 0.5
	run_t 10 nsenter --net=/var/run/netns/"$a" -- ping -c 5 -i 0.1 -W 2 192.168.77.2
	[ "$status" -eq 0 ]
	wait
	jq_assert "$(cat "$out")" '.state == "stopped" and .a2b.tx_packets >= 5 and .b2a.tx_packets >= 5'
	jq_assert "$(cat "$out")" '.config.a2b.delay_ns == 1000000 and .ports == {"a": "pa", "b": "pb"}'
	# SIGTERM: a clean stop with the stats file written
	nsenter --net=/var/run/netns/"$w" -- "$LHWAN" --stats-file "$BATS_FILE_TMPDIR/st.json" pa pb \
		>/dev/null 2>&1 3>&- &
	pid=$!
	for _ in $(seq 50); do [ -e "$BATS_FILE_TMPDIR/st.json" ] && break; sleep 0.05; done
	kill -TERM "$pid"
	wait "$pid"
	jq_assert "$(cat "$BATS_FILE_TMPDIR/st.json")" '.state == "stopped"'
}
