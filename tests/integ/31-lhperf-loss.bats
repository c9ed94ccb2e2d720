#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# lhperf under loss injected with nftables on the veth (at the receiving
# end's ingress: loss on the wire): rxe's go-back-N rules checked counter by
# counter (one NAK per gap, rewind to the NAK PSN, out-of-sequence packets
# dropped silently), random loss both ways, lost ACKs, go-back-0's livelock
# under a deterministic 1/256 drop while go-back-N completes, and
# the runs that must end by themselves: retries exhausted, a silent peer, a
# peer that vanishes.

load helpers
load lhperf-helpers

setup() {
	lhp_require
	lhp_pair
}

teardown() {
	lh_cleanup
}

# the events of a JSON as a sorted list of PSNs: psns JSON PATH [CAUSE]
psns() {
	printf '%s' "$1" | jq -c "[$2[] | select(.cause == \"${3:-nak}\") | .psn] | sort"
}

@test "gbn, a fixed list of lost PSNs: one NAK per gap, rewind to the NAK PSN" {
	# PSNs more than a window (128) apart: each loss is its own gap
	lhp_drop_psns "$LHP_DST" "$LHP_DIF" 100 300 1000
	lhp_run --psn 0 --size 65536 --iters 20 10.30.0.2
	lhp_show
	[ "$status" -eq 0 ]
	jq_eq "$LHP_C" .status '"ok"'
	jq_eq "$LHP_C" .verified true
	jq_eq "$LHP_C" .messages 20
	[ "$(lhp_nft_dropped "$LHP_DST" lhp_psn)" -eq 3 ]
	# the responder: exactly one NAK per gap, with PSN = ePSN = the lost PSN
	jq_eq "$LHP_C" .naks_sent 3
	[ "$(psns "$LHP_C" .responder.nak_events)" = "[100,300,1000]" ]
	# and the PSN that came instead: the one after each lost one
	jq_eq "$LHP_C" '[.responder.nak_events[] | .got - .psn] | unique' '[1]'
	# the requester: every NAK honoured, each a rewind to the NAK PSN, no timeout
	jq_eq "$LHP_C" .naks_received 3
	jq_eq "$LHP_C" .naks_ignored 0
	jq_eq "$LHP_C" .timeouts 0
	[ "$(psns "$LHP_C" .requester.rewind_events)" = "[100,300,1000]" ]
	# what was retransmitted is the lost packet and what followed it in flight,
	# which the responder dropped silently as out of sequence; at most a window
	jq_eq "$LHP_C" .retransmitted_packets '.out_of_sequence_drops + 3'
	jq_assert "$LHP_C" '.retransmitted_packets <= 3 * 128'
	jq_eq "$LHP_C" .duplicate_packets 0
	jq_eq "$LHP_C" .packets_sent '20 * 64 + .retransmitted_packets'
}

@test "gbn, two losses inside one window make one gap and one NAK" {
	# 500 and 501 leave in the same 16-packet burst, before any NAK can return
	lhp_drop_psns "$LHP_DST" "$LHP_DIF" 500 501
	lhp_run --psn 0 --size 65536 --iters 10 10.30.0.2
	lhp_show
	[ "$status" -eq 0 ]
	jq_eq "$LHP_C" .verified true
	[ "$(lhp_nft_dropped "$LHP_DST" lhp_psn)" -eq 2 ]
	jq_eq "$LHP_C" .naks_sent 1
	[ "$(psns "$LHP_C" .requester.rewind_events)" = "[500]" ]
	# both lost packets are in the one rewind; the others after 500 were dropped
	# as out of sequence (the lost 501 never arrived to be counted)
	jq_eq "$LHP_C" .retransmitted_packets '.out_of_sequence_drops + 2'
}

@test "gbn across the PSN wrap, on every QP" {
	# start 0xfffe00: seq 256 is 0xffff00, seq 528 is 0x000010, seq 768 0x000100
	lhp_drop_psns "$LHP_DST" "$LHP_DIF" 0xffff00 0x10 0x100
	lhp_run --qps 4 --psn 0xfffe00 --size 65536 --iters 16 10.30.0.2
	lhp_show
	[ "$status" -eq 0 ]
	jq_eq "$LHP_C" .verified true
	jq_eq "$LHP_C" .messages 64
	[ "$(lhp_nft_dropped "$LHP_DST" lhp_psn)" -eq 12 ]
	jq_eq "$LHP_C" .naks_sent 12
	jq_eq "$LHP_C" .timeouts 0
	local qp
	for qp in 0 1 2 3; do
		jq_eq "$LHP_C" "[.responder.nak_events[] | select(.qp == $qp) | .psn] | sort" '[16, 256, 16776960]'
		jq_eq "$LHP_C" "[.requester.rewind_events[] | select(.qp == $qp) | .psn] | sort" '[16, 256, 16776960]'
	done
	jq_eq "$LHP_C" .retransmitted_packets '.out_of_sequence_drops + 12'
}

@test "gbn, random 1 % loss of data and of ACKs/NAKs: completes, verified" {
	lhp_drop_random "$LHP_DST" "$LHP_DIF" 1
	lhp_drop_random "$LHP_SRC" "$LHP_SIF" 1
	lhp_run --qps 4 --size 65536 --iters 100 --timeout 10 10.30.0.2
	lhp_show
	[ "$status" -eq 0 ]
	jq_eq "$LHP_C" .status '"ok"'
	jq_eq "$LHP_C" .verified true
	jq_eq "$LHP_C" .messages 400
	jq_eq "$LHP_C" .responder.verify_errors 0
	[ "$(lhp_nft_dropped "$LHP_DST" lhp_rand)" -gt 0 ]
	jq_assert "$LHP_C" '.naks_sent > 0 and .retransmitted_packets > 0 and .naks_received <= .naks_sent'
	# every NAK-driven rewind went to a PSN the responder NAKed
	jq_assert "$LHP_C" '([.requester.rewind_events[] | select(.cause == "nak") | [.qp, .psn]] -
		[.responder.nak_events[] | [.qp, .psn]]) == [] or .responder.nak_events_not_listed > 0'
	jq_eq "$LHP_S" .status '"ok"'
	[ "$LHP_SRC_STATUS" -eq 0 ]
}

@test "lost ACKs only: cumulative ACKs and the timer recover, no NAK" {
	lhp_drop_random "$LHP_SRC" "$LHP_SIF" 20
	lhp_run --size 65536 --iters 100 --timeout 10 10.30.0.2
	lhp_show
	[ "$status" -eq 0 ]
	jq_eq "$LHP_C" .verified true
	jq_eq "$LHP_C" .messages 100
	[ "$(lhp_nft_dropped "$LHP_SRC" lhp_rand)" -gt 0 ]
	jq_eq "$LHP_C" .naks_sent 0
	jq_eq "$LHP_C" .out_of_sequence_drops 0
	# a retransmission after a timeout is a duplicate: re-ACKed, never executed;
	# those of the last retry may still be on their way when the server counts
	# (on a loaded CI host: 448 retransmitted, 424 duplicates, none dropped at
	# either socket), at most a window (128)
	jq_assert "$LHP_C" '.duplicate_packets <= .retransmitted_packets and
		.retransmitted_packets - .duplicate_packets <= 128'
}

@test "gb0, one loss: the partial message is discarded and restarts from its first PSN" {
	# 64 packets a message: PSN 100 lies in message 1 (PSNs 64..127)
	lhp_drop_psns "$LHP_DST" "$LHP_DIF" 100
	lhp_run --recovery gb0 --psn 0 --size 65536 --iters 10 10.30.0.2
	lhp_show
	[ "$status" -eq 0 ]
	jq_eq "$LHP_C" .verified true
	jq_eq "$LHP_C" .recovery '"gb0"'
	jq_eq "$LHP_C" .naks_sent 1
	[ "$(psns "$LHP_C" .responder.nak_events)" = "[64]" ]
	[ "$(psns "$LHP_C" .requester.rewind_events)" = "[64]" ]
	jq_eq "$LHP_C" .responder.discarded_messages 1
	jq_eq "$LHP_C" .responder.discarded_packets 36
}

@test "deterministic 1/256 loss on 4 MB messages: gb0 ends in livelock, gbn completes" {
	lhp_drop_ipid "$LHP_DST" "$LHP_DIF"
	lhp_run --recovery gb0 --size 4M --iters 2 10.30.0.2
	lhp_show
	# livelock: a distinct exit status, within the stall bound (no hang)
	[ "$status" -eq 3 ]
	jq_eq "$LHP_C" .status '"livelock"'
	jq_eq "$LHP_C" .messages 0
	jq_eq "$LHP_C" .exit_code 3
	# the link was busy all along: restarts, NAKs, discarded partial messages
	jq_assert "$LHP_C" '.naks_sent > 10 and .responder.discarded_messages > 10'
	jq_assert "$LHP_C" '.packets_sent > 4 * 4096'
	jq_eq "$LHP_C" .responder.verify_errors 0
	jq_eq "$LHP_S" .status '"livelock"'
	[ "$LHP_SRC_STATUS" -eq 3 ]

	lhp_run --recovery gbn --size 4M --iters 2 10.30.0.2
	lhp_show
	[ "$status" -eq 0 ]
	jq_eq "$LHP_C" .status '"ok"'
	jq_eq "$LHP_C" .verified true
	jq_eq "$LHP_C" .messages 2
	jq_assert "$LHP_C" '.naks_sent > 10 and .responder.discarded_messages == 0'
	jq_eq "$LHP_C" .timeouts 0
	[ "$(lhp_nft_dropped "$LHP_DST" lhp_ipid)" -gt 20 ]
}

@test "gb0 without loss completes like gbn" {
	lhp_run --recovery gb0 --size 4M --iters 2 10.30.0.2
	lhp_show
	[ "$status" -eq 0 ]
	jq_eq "$LHP_C" .verified true
	jq_eq "$LHP_C" .retransmitted_packets 0
}

@test "retries run out: QP error, exit status 4, on both ends" {
	lhp_drop_all "$LHP_DST" "$LHP_DIF"
	lhp_run --retry 2 --timeout 8 --size 4096 --iters 10 10.30.0.2
	lhp_show
	[ "$status" -eq 4 ]
	jq_eq "$LHP_C" .status '"qp_error"'
	jq_eq "$LHP_C" .qp_errors 1
	# rxe: retry_cnt 2 gives two retries; the third timeout fails the QP
	jq_eq "$LHP_C" .timeouts 3
	jq_eq "$LHP_C" '[.requester.rewind_events[].cause] | unique' '["timeout"]'
	[ "$LHP_SRC_STATUS" -eq 4 ]
}

@test "a silent peer with infinite retries: status timeout, exit status 5" {
	lhp_drop_all "$LHP_DST" "$LHP_DIF"
	lhp_run --stall-time 1000 --timeout 10 --size 4096 --iters 10 10.30.0.2
	lhp_show
	[ "$status" -eq 5 ]
	jq_eq "$LHP_C" .status '"timeout"'
	jq_assert "$LHP_C" '.timeouts > 1 and .qp_errors == 0'
}

@test "the server vanishes mid-run: the client says so and exits 1" {
	lhp_server
	(
		lhp_wait_running && kill -9 "$(pgrep -P "$LHP_SPID" -x lhperf)"
	) &
	lhp_client --duration 20 10.30.0.2
	wait
	lhp_show
	[ "$status" -eq 1 ]
	jq_eq "$LHP_C" .status '"peer_lost"'
	[[ "$output" == *"the server closed the side channel mid-run"* ]]
}

@test "the client vanishes mid-run: the server says so and exits 1" {
	local cpid
	lhp_server
	nsenter --net=/var/run/netns/"$LHP_SRC" "$LH_BIN/lhperf" --duration 20 10.30.0.2 >/dev/null 2>&1 &
	cpid=$!
	lh_track pid "$cpid"
	lhp_wait_running
	kill -9 "$cpid"
	lhp_server_wait
	lhp_show
	[ "$LHP_SRC_STATUS" -eq 1 ]
	jq_eq "$LHP_S" .status '"peer_lost"'
	grep -q "the client closed the side channel mid-run" "$LHP_SERR"
}
