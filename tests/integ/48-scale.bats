#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Many QPs between the same two hosts: every data
# direction is paired with its requester's QPN in BPF, at any number of QPs,
# with no agent and no events; QPs with the same start PSN are told apart by
# the PSNs each forwarded, or stay unpaired and pass. Each transfer is
# verified byte for byte and run beside the same transfer with nothing of
# longhaul on the path. The senders are paced (lhperf --rate, small messages,
# one outstanding per QP) so that plain go-back-N itself is not the limit:
# unpaced, 256 QPs time out on this machine's CPU with or without longhaul.
# Pairing in BPF is what makes the scale: programs that paired 8 QPs per pair
# of hosts and left the rest to the agent, on events rate-limited to one per
# 100 us, run 1024 QPs lossless at 0.195 Gb/s with 8229 NIC timeouts (ACKs
# unpaired 40k, AckReq 47k, pool empty 17.8k), plain 0.281 Gb/s with none.

load helpers
load lr2-helpers

setup_file() {
	lr2_require
}

teardown_file() {
	lr2_agents_down || true
	lh_cleanup
}

setup() {
	lr2_require
}

# scale_pair LOSS LHPERF_OPTIONS...: the transfer without longhaul (PLAIN),
# then with it (LR2_C, LR2_A, LR2_B), over two-dc at 2 ms with LOSS both ways.
# The endpoints (the NICs, hardware that does not wait for a CPU) at nice -10:
# at nice 0 the responder of a 1024-QP run at 1 % fell 60-130 ms behind the
# wire in about a third of the runs and every QP's 67 ms timer fired at once
# (plain had such runs too: 9843 timeouts in a lossless 4096-QP run of the
# bench; tests/bench/scale-safety.bench.sh).
scale_pair() {
	local loss=() LR2_NICE=-10
	[ "$1" = none ] || loss=(--loss-a2b "$1" --loss-b2a "$1")
	shift
	lh_topo_up two-dc --rtt 2ms --match roce --seed 48 "${loss[@]}"
	lr2_agents_down
	lr2_xfer "$@"
	PLAIN=$LR2_C # the comparison: plain go-back-N's own result is no requirement
	lr2_agents_up --max-qps 4096 --pool-slots 16384
	# past the agent's start-up window (4 round trips + 100 ms), where QPs
	# learned count as mid-flight (wide ranges: 1024 of them would overlap)
	sleep 0.5
	lr2_xfer "$@"
	lr2_show
	lr2_ok
	echo "without longhaul: $(jq -c '{goodput_gbps, timeouts, retransmitted_packets}' <<<"$PLAIN")"
	echo "with longhaul:    $(jq -c '{goodput_gbps, timeouts, retransmitted_packets}' <<<"$LR2_C")"
}

# all_paired N: both gateways paired N QPs in BPF, none could not be listed; a
# Sentry pairs from an ACK, or from its Depot's report (which names both QPNs),
# whichever comes first
all_paired() {
	[ "$(($(lr2_ctr a paired) + $(lr2_ctr a pair_report)))" -eq "$1" ]
	[ "$(lr2_ctr b paired)" -eq "$1" ]
	[ "$(lr2_ctr a pair_unlisted)" -eq 0 ]
	[ "$(lr2_ctr b pair_unlisted)" -eq 0 ]
	[ "$(lr2_ctr a sentry_new_qp)" -eq "$1" ]
	[ "$(lr2_ctr b depot_new_qp)" -eq "$1" ]
}

# goodput_near FRACTION: longhaul's goodput at least FRACTION of plain's (this
# machine's noise: a 2-core VM running both ends, the WAN and two gateways)
goodput_near() {
	jq -en --argjson l "$LR2_C" --argjson p "$PLAIN" --argjson f "$1" \
		'$l.goodput_gbps >= $f * $p.goodput_gbps' >/dev/null
}

@test "256 QPs between two hosts, lossless: all paired in BPF on both gateways, as fast as without longhaul" {
	scale_pair none -q 256 --rate 0.3 -S 4096 -T 1 -D 3
	all_paired 256
	goodput_near 0.8
}

# one run of each: a single 3 s run on this 2-core host is not a measurement
# (of 4 runs of this test, 3 come at or above plain and one at 0.76 x); the
# bench's scale-safety table compares medians
@test "256 QPs between two hosts, 1 % WAN loss both ways: all paired, verified, goodput near plain go-back-N (one run; the bench compares medians)" {
	scale_pair 'random 1%' -q 256 --rate 0.3 -S 4096 -T 1 -D 3
	all_paired 256
	goodput_near 0.7
}

# Paced at 0.2 Gb/s, below what this 2-core host carries with both gateways on
# it: the endpoints, the WAN and the gateways share the cores, and at 0.3 the
# gateways' programs (about 2 us a packet each at 1024 to 4096 QPs, 14 % of
# the host in a 4096-QP run) can tip the endpoints' 67 ms timers on a loaded
# CI host (34586 NIC timeouts, 0.33 x plain, plain itself 8917): a CPU
# collapse, not a recovery fault (nothing dropped but 713 resends of
# acknowledged PSNs). The 1 % run below stays at 0.3.
@test "1024 QPs between two hosts, lossless: all paired in BPF, no livelock, verified" {
	scale_pair none -q 1024 --rate 0.2 -S 2048 -T 1 -D 3
	all_paired 1024
	goodput_near 0.7
}

# 1024 QPs at 1 %. The agents read 256 QPs a tick (agent_state.h
# SCAN_PER_TICK), not every QP every tick (1 ms): that would take a quarter of
# a core each at 1024 QPs from the endpoints on this 2-core host and tip their
# 67 ms timers (0.046 Gb/s, 41351 NIC timeouts; plain 0.268, 1173). At 256 a
# tick, 4 runs back to back in one agent (4096 QPs in its table by the last)
# take 0.43-0.49 s of its CPU each (0.4-2.1 s reading all), 0.26-0.27 Gb/s,
# 1082-1718 timeouts (plain 1290). Paced at 0.2 as the lossless run above: at
# 0.3, on a host whose vCPUs are descheduled for milliseconds at a time (as
# 22-lhwan's reordering and delays show), plain and longhaul both collapse
# (plain 5285 NIC timeouts, longhaul 4736, 0.64 x plain's goodput).
@test "1024 QPs between two hosts, 1 % WAN loss both ways: all paired, verified, as without longhaul" {
	scale_pair 'random 1%' -q 1024 --rate 0.2 -S 2048 -T 1 -D 3
	all_paired 1024
	goodput_near 0.7
}

@test "2 QPs with the same start PSN, 1 %: told apart by the PSNs each forwarded, never paired wrong" {
	scale_pair 'random 1%' -q 2 --psn 1000 -D 3
	all_paired 2
	# paired with the right requester: the Depot's NACKs reach a NIC that acts on
	# them, so longhaul recovers what plain go-back-N pays a round of timeouts for
	[ "$(lr2_ctr b depot_nack)" -gt 0 ]
	goodput_near 1.0
}

@test "go-back-0, 8 QPs of 4 MB messages, every 256th frame lost, no WAN rate limit, default agents: completes, verified" {
	# Plain go-back-0 livelocks: every restart of a 4 MB message meets a loss.
	# With longhaul each NIC still restarts the message at each NAK, and the
	# Sentry drops the replay of what the Depot holds; a replay slower than the
	# NIC's 67 ms timer on this CPU would restart at each timeout, a livelock
	# too (4 runs of 4). Goodput is not compared here: the replays cost this
	# machine's CPU (0.24-0.26 Gb/s against 0.81 lossless; docs/PERFORMANCE.md
	# has the ratios).
	lh_topo_up two-dc --rtt 2ms --match roce --loss-a2b 'every 256'
	lr2_agents_down
	lr2_xfer -r gb0 -q 8 -S 4M -n 2 --stall-time 3000
	PLAIN=$LR2_C
	lr2_agents_up
	lr2_xfer -r gb0 -q 8 -S 4M -n 2
	lr2_show
	echo "without longhaul: $(jq -c '{status, goodput_gbps, timeouts}' <<<"$PLAIN")"
	lr2_ok
	[ "$(lr2_ctr a sentry_ack_echo)" -gt 0 ]
}

@test "go-back-0, 16 QPs of 4 MB messages, every 256th frame lost, WAN 200 Mbit/s at 4 ms, default agents: completes, verified" {
	lh_topo_up two-dc --rtt 4ms --match roce --rate 200mbit --queue 4505600 --loss-a2b 'every 256'
	lr2_agents_down
	LR2_RTT=4ms lr2_agents_up
	lr2_xfer -r gb0 -q 16 -S 4M -n 1
	lr2_show
	lr2_ok
	[ "$(lr2_ctr b depot_held)" -gt 0 ]
}

@test "QPs one transfer after another past --max-qps: a half-full table forgets quiet QPs early, each transfer learned and paired" {
	# --max-qps 128: the third transfer's 64 QPs would meet the first two's
	# (lingering for --qp-idle, 30 s) in a full table: not learned, and all
	# pairing blocked while it is full. Past half full, QPs quiet for 2 s go.
	# Paced (one outstanding 16 KB message per QP) as the tests above:
	# unpaced, 64 QPs keep this host's CPUs at their limit, and a run that
	# tips into NIC timeouts (with or without longhaul, test 10 of 40-lr2)
	# proves nothing here.
	lh_topo_up two-dc --rtt 2ms --match roce
	lr2_agents_down
	lr2_agents_up --max-qps 128 --pool-slots 16384
	sleep 0.5
	local i
	for i in 1 2 3; do
		lr2_xfer --rate 0.3 -q 64 -S 16384 -T 1 -D 2
		lr2_show
		lr2_ok
		[ "$(lr2_ctr a qp_table_full)" -eq 0 ]
		[ "$(lr2_ctr b qp_table_full)" -eq 0 ]
		[ "$(lr2_ctr a paired)" -eq 64 ]
		[ "$(lr2_ctr b paired)" -eq 64 ]
		sleep 3
	done
}
