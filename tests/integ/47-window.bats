#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# A NIC's window larger than what the Depot holds: one QP
# with 4096 PSNs in flight over a 30 ms WAN, 1 MB messages (rxe ACKs once per
# message: the backups of a whole message wait for it), against the Depot's
# ring of 256 PSNs. What the ring cannot hold passes unchanged, counted
# (depot_window), and the Depot keeps in step with the flow; the QP does as
# well as with nothing of longhaul on the path, run beside it. A NIC that
# gives up after 6 retries (lhperf -R 6) shows a harmed QP as a QP error.
# A Depot that stopped delivering at the first in-order packet whose ring
# position still holds an unacknowledged backup would hold the next as a gap
# and NACK a PSN the receiving NIC has: these runs would end in a QP error,
# lossless and at 1 %.

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

# window_pair [LOSS]: the same 4-second transfer without longhaul (PLAIN) and
# with it (LR2_C, LR2_A, LR2_B), over two-dc at 30 ms with LOSS both ways
window_pair() {
	local loss=()
	[ -z "${1:-}" ] || loss=(--loss-a2b "$1" --loss-b2a "$1")
	lh_topo_up two-dc --rtt 30ms --match roce --seed 47 "${loss[@]}"
	lr2_agents_down
	lr2_xfer -w 4096 -S 1048576 -D 4 -R 6 --psn 1000
	# plain go-back-N itself may give up at 1 % (6 retries, 30 ms): the
	# comparison, not a requirement (a loaded CI host sees it)
	PLAIN=$LR2_C
	lr2_agents_up --pool-slots 16384 --wan-rtt 30ms
	lr2_xfer -w 4096 -S 1048576 -D 4 -R 6 --psn 1000
	lr2_show
	lr2_ok
	echo "without longhaul: $(jq -c '{goodput_gbps, timeouts, qp_errors}' <<<"$PLAIN")"
	echo "with longhaul:    $(jq -c '{goodput_gbps, timeouts, qp_errors}' <<<"$LR2_C")"
	# more in flight than the ring: passed on, counted
	[ "$(lr2_ctr b depot_window)" -gt 0 ]
	# the QP never failed, and its NIC timed out no more often than without longhaul
	jq_assert "$LR2_C" '.qp_errors == 0'
	# a plain run that gave up stopped early: its timeouts are no measure
	jq -e '.status != "ok"' <<<"$PLAIN" >/dev/null ||
		[ "$(jq .timeouts <<<"$LR2_C")" -le "$(jq .timeouts <<<"$PLAIN")" ]
}

@test "one QP with 4096 PSNs in flight at 30 ms, lossless: passes beyond the Depot's ring, nothing re-sent" {
	window_pair
	jq_assert "$LR2_C" '.timeouts == 0 and .naks_received == 0 and .retransmitted_packets == 0'
	[ "$(lr2_ctr b qp_stale)" -eq 0 ] # a QP whose packets pass as window is alive
	[ "$(lr2_ctr b depot_ring_busy)" -eq 0 ]
}

@test "one QP with 4096 PSNs in flight at 30 ms, 1 % WAN loss both ways: at least as well as without longhaul" {
	window_pair 'random 1%'
}
