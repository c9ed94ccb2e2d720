#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Loss, duplication and reordering, on the WAN (lhwan) and inside the data
# centers (lhwan dcloss in src and dst), counted by the receiving probe:
# random models are checked over >= 10^5 packets against the model's own
# loss rate and mean burst length, within 4.5 standard deviations (the
# burst correlation widens the loss-rate interval: variance x (2b - 1) for
# mean burst b); deterministic ones exactly, packet by packet. Seeds are
# fixed, and --match roce keeps anything but the probe away from the models.

load helpers

N=100000

setup_file() {
	lh_require_root
	[ -x "$LH_BIN/lhwan" ] || skip "build lhwan first (make)"
	lh_topo_up two-dc --rtt 1ms --match roce --seed 11
}

teardown_file() {
	lh_topo_down
	lh_cleanup
}

teardown() {
	lh_cleanup
}

# probe N small packets src -> dst
probe_a2b() {
	lh_probe src dst 10.2.0.10 --count "${COUNT:-$N}" --pps 50000 --size 128 "$@"
}

probe_b2a() {
	lh_probe dst src 10.1.0.10 --count "${COUNT:-$N}" --pps 50000 --size 128 "$@"
}

# check_model RESULT_JSON RATE BURST: loss rate and mean burst within 4.5 sigma
check_model() {
	local r=$1 rate=$2 burst=$3 n lost bursts got_rate got_burst tol_rate tol_burst
	n=$(jq .expected <<<"$r")
	lost=$(jq .lost <<<"$r")
	bursts=$(jq .bursts <<<"$r")
	got_rate=$(jq .loss_rate <<<"$r")
	got_burst=$(jq .mean_burst <<<"$r")
	tol_rate=$(lh_calc "4.5 * sqrt($rate * (1 - $rate) * (2 * $burst - 1) / $n)")
	tol_burst=$(lh_calc "4.5 * sqrt($burst * ($burst - 1) / ($bursts > 0 ? $bursts : 1)) + 0.001")
	echo "loss rate $got_rate (model $rate +- $tol_rate), mean burst $got_burst (model $burst +- $tol_burst), $lost lost in $bursts bursts" >&3
	lh_near "$got_rate" "$rate" "$tol_rate" "loss rate"
	lh_near "$got_burst" "$burst" "$tol_burst" "mean burst length"
}

@test "random 1%: Bernoulli loss rate and burst length; lhwan's count is the receiver's" {
	lh_topo_up two-dc --rtt 1ms --match roce --seed 11 --loss-a2b 'random 1%'
	r=$(probe_a2b)
	check_model "$r" 0.01 "$(lh_calc '1 / 0.99')"
	s=$(lh_wan_stats)
	jq_assert "$s" ".a2b.drop_loss == $(jq .lost <<<"$r") and .a2b.matched == $N"
	jq_assert "$s" '.b2a.drop_loss == 0'
}

@test "gemodel 1% 20%: Gilbert-Elliott bursts (rate p/(p+r), mean burst 1/r)" {
	lh_topo_up two-dc --rtt 1ms --match roce --seed 12 --loss-a2b 'gemodel 1% 20%'
	COUNT=200000 r=$(COUNT=200000 probe_a2b)
	check_model "$r" "$(lh_calc '0.01 / 0.21')" 5
	# lhwan reports the same closed form
	s=$(lh_wan_stats)
	jq_assert "$s" '.config.a2b.loss[0] | .spec == "gemodel 1% 20% 100% 0%" and (.expected_burst - 5 | fabs) < 1e-6'
}

@test "state (4-state GI model): loss rate and mean burst of the chain" {
	spec='state 0.5% 30% 10% 20% 0.2%'
	lh_topo_up two-dc --rtt 1ms --match roce --seed 13 --loss-a2b "$spec"
	s=$(lh_wan_stats)
	rate=$(jq '.config.a2b.loss[0].expected_rate' <<<"$s")
	burst=$(jq '.config.a2b.loss[0].expected_burst' <<<"$s")
	# the closed form, by hand: pi1 = 1 / (1 + p14 + p13/p31 + p13 p32 / (p31 p23))
	pi1=$(lh_calc '1 / (1 + 0.002 + 0.005 / 0.3 + 0.005 * 0.1 / (0.3 * 0.2))')
	lh_near "$rate" "$(lh_calc "$pi1 * (0.005 / 0.3 + 0.002)")" 1e-6 "closed-form rate"
	r=$(COUNT=200000 probe_a2b)
	check_model "$r" "$rate" "$burst"
}

@test "every 100: exactly packets 100, 200, ... are lost, nothing else" {
	lh_topo_up two-dc --rtt 1ms --match roce --seed 14 --loss-a2b 'every 100'
	r=$(LH_PROBE_RECV=--list-lost probe_a2b)
	jq_assert "$r" ".lost == $((N / 100)) and .max_burst == 1"
	jq_assert "$r" "[.lost_seqs[] | . + 1] == [range(100; $N + 1; 100)]"
	# with an offset: i % 7 == 3
	lh_topo_up two-dc --rtt 1ms --match roce --seed 15 --loss-a2b 'every 7 3'
	r=$(COUNT=7000 LH_PROBE_RECV=--list-lost probe_a2b)
	jq_assert "$r" '[.lost_seqs[] | . + 1] == [range(3; 7001; 7)]'
}

@test "SIGUSR2 pauses the loss rules and the next one resumes them (49-restart's kill tests)" {
	lh_topo_up two-dc --rtt 1ms --match roce --seed 16 --loss-a2b 'every 10'
	lh_wan_loss off
	r=$(COUNT=10000 probe_a2b)
	jq_assert "$r" '.lost == 0'
	jq_assert "$(lh_wan_stats)" '.loss_paused and .a2b.drop_loss == 0'
	lh_wan_loss on
	r=$(COUNT=10000 probe_a2b)
	jq_assert "$r" '.lost == 1000'
	jq_assert "$(lh_wan_stats)" '(.loss_paused | not) and .a2b.drop_loss == 1000'
}

@test "psn list: only the first transmission of a listed (QPN, PSN) is lost; retransmissions pass" {
	lh_topo_up two-dc --rtt 1ms --match roce --seed 16 --loss-a2b 'psn 0x12:100,105,200-202'
	# PSNs 0..999, then a go-back-N style retransmission of 100..109 and 200..202
	r=$(COUNT=1 LH_PROBE_RECV=--list-lost probe_a2b --qpn 0x12 --psns 0-999,100-109,200-202)
	jq_assert "$r" '.expected == 1013 and .lost_seqs == [100, 105, 200, 201, 202]'
	jq_assert "$r" '[.received_psns[] | select(. == 100 or . == 105 or . == 201)] == [100, 105, 201]'
	# another QP is not listed
	r=$(COUNT=1 LH_PROBE_RECV=--list-lost probe_a2b --qpn 0x13 --psns 0-999)
	jq_assert "$r" '.lost == 0'
	# times 2: the first two transmissions are lost, the third passes
	lh_topo_up two-dc --rtt 1ms --match roce --seed 17 --loss-a2b 'psn *:50 times 2'
	r=$(COUNT=1 LH_PROBE_RECV=--list-lost probe_a2b --qpn 7 --psns 0-99,50,50)
	jq_assert "$r" '.lost_seqs == [50, 100] and .received == 100'
}

@test "both directions are independent: a2b random 2% and b2a every 50, at the same time" {
	lh_topo_up two-dc --rtt 1ms --match roce --seed 18 --loss-a2b 'random 2%' --loss-b2a 'every 50'
	out=$BATS_FILE_TMPDIR/b2a.json
	LH_PROBE_RECV="--list-lost --stream 2" probe_b2a --stream 2 >"$out" &
	a=$(LH_PROBE_RECV="--stream 1" probe_a2b --stream 1)
	wait
	b=$(cat "$out")
	check_model "$a" 0.02 "$(lh_calc '1 / 0.98')"
	jq_assert "$b" "[.lost_seqs[] | . + 1] == [range(50; $N + 1; 50)]"
}

@test "a seed reproduces the loss pattern; another seed gives another" {
	pattern() {
		lh_topo_up two-dc --rtt 1ms --match roce --seed "$1" --loss-a2b 'gemodel 2% 30%'
		COUNT=20000 LH_PROBE_RECV=--list-lost probe_a2b | jq -c .lost_seqs
	}
	p1=$(pattern 1234)
	p2=$(pattern 99)
	p3=$(pattern 1234)
	[ "$p1" = "$p3" ]
	[ "$p1" != "$p2" ]
	[ "$(jq length <<<"$p1")" -gt 100 ]
}

@test "duplicate 2% and reorder 5%: counted by lhwan, seen by the receiver" {
	lh_topo_up two-dc --rtt 4ms --match roce --seed 19 --duplicate 2%
	r=$(probe_a2b)
	s=$(lh_wan_stats)
	jq_assert "$r" ".duplicates == $(jq .a2b.duplicated <<<"$s") and .lost == 0"
	lh_near "$(jq .duplicates <<<"$r")" 2000 "$(lh_calc '4.5 * sqrt(100000 * 0.02 * 0.98)')" duplicates
	# a reordered frame skips the 2 ms delay and overtakes those in flight
	lh_topo_up two-dc --rtt 4ms --match roce --seed 20 --reorder 5%
	r=$(COUNT=20000 probe_a2b)
	s=$(lh_wan_stats)
	jq_assert "$r" '.lost == 0 and .duplicates == 0 and .reordered > 1000'
	lh_near "$(jq .a2b.reordered <<<"$s")" 1000 "$(lh_calc '4.5 * sqrt(20000 * 0.05 * 0.95)')" "reordered frames"
}

@test "DC loss at src: egress random 2% (UDP and AF_PACKET senders), ingress gemodel" {
	lh_topo_up two-dc --rtt 1ms --match roce --seed 21 --dca-loss-a2b 'random 2%' \
		--dca-loss-b2a 'gemodel 1% 25%'
	r=$(probe_a2b)
	check_model "$r" 0.02 "$(lh_calc '1 / 0.98')"
	# an AF_PACKET sender (as lhperf): the frame is lost silently, not refused
	r=$(probe_a2b --raw --dev dc --src 10.1.0.10 --dst-mac 02:4c:48:00:02:01)
	check_model "$r" 0.02 "$(lh_calc '1 / 0.98')"
	# gwa -> src, to an AF_PACKET receiver: XDP drops before the raw socket sees it
	r=$(LH_PROBE_RECV="--raw --dev dc" probe_b2a)
	check_model "$r" "$(lh_calc '0.01 / 0.26')" 4
	run lh_topo_status
	jq_assert "$output" '.dc_loss_counters.src.ingress.dropped == '"$(jq .lost <<<"$r")"
	jq_assert "$output" '.wan.wan.stats.a2b.drop_loss == 0 and .wan.wan.stats.b2a.drop_loss == 0'
}

@test "DC loss at dst: ingress every 50 exact for an AF_PACKET receiver, egress random 1%" {
	lh_topo_up two-dc --rtt 1ms --match roce --seed 22 --dcb-loss-a2b 'every 50' --dcb-loss-b2a 'random 1%'
	r=$(COUNT=50000 LH_PROBE_RECV="--raw --dev dc --list-lost" probe_a2b)
	echo "a2b: $(jq -c '{lost, received, first: .lost_seqs[0:4], gaps: ([.lost_seqs as $l | range(1; $l | length) | $l[.] - $l[. - 1]] | group_by(.) | map({(.[0] | tostring): length}) | add)}' <<<"$r")"
	# the host-link program counts UDP frames only: a neighbour refresh during
	# the run shifts nothing (the phase may still differ if a UDP frame came first).
	# It counts frames as they arrive: frames reordered before it move a drop
	# by as many places as they were reordered, not the count. A busy host
	# reorders: a vCPU descheduled by this VM's host holds the frames in its
	# backlog while the other goes on (on a loaded CI host: 63 to 301 frames
	# reordered, a p99 delay of 11 ms at 1 ms, gaps of 23-81 but 982 of 999
	# exactly 50). A wrong period or a model that drops at random
	# leaves next to no gap of exactly 50
	jq_assert "$r" '.lost == 1000 and .lost_seqs[0] < 50 and
		([.lost_seqs as $l | range(1; $l | length) | $l[.] - $l[. - 1]] |
			(map(select(. == 50)) | length) >= 900)'
	r=$(probe_b2a)
	check_model "$r" 0.01 "$(lh_calc '1 / 0.99')"
}
