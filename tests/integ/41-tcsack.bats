#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# T/C-SACK on the long haul (off by default, --sack-time turns it on): the
# Depot reports each QP receiving data every T and every N packets (flag
# LH_REPORT_F_SACK); the Sentry's agent NAKs the sending NIC when data is
# outstanding and no report came for 2T. A tail loss (the last packets of a
# transfer, which no later packet reveals to the Depot) is then recovered in
# about RTT + 2T instead of the NIC's retransmit timeout (rxe default 14:
# 67 ms).

load helpers
load lr2-helpers

setup_file() {
	lr2_require
	lh_topo_up two-dc --rtt 2ms --match roce
	lr2_agents_up --pool-slots 4096 --sack-time 1ms
}

teardown_file() {
	lr2_agents_down || true
	lh_cleanup
}

setup() {
	lr2_require
}

# tail LOSS MESSAGES: the transfer of MESSAGES 64 KB messages from PSN 1000
# (64 packets each) with the WAN losing the first transmission of LOSS
tail_xfer() {
	lh_topo_up two-dc --rtt 2ms --match roce --loss-a2b "psn $1"
	lr2_xfer --psn 1000 -S 65536 -n "$2"
	lr2_show
	lr2_ok
	receiver_saw_no_gap
}

# no NIC timeout, and the message with the tail done before the NIC's timer
# (67 ms) could have fired: RTT + 2T is about 4 ms, a slow or loaded host
# adds tens of ms (a loaded CI host: about 36 ms)
tail_recovered() {
	jq_assert "$LR2_C" '.timeouts == 0 and .fct_us.max < 67000'
	[ "$(lr2_ctr b depot_nack)" -eq 0 ] # nothing showed the Depot a gap
}

@test "tail loss: the last packet of a single message, recovered without a NIC timeout" {
	tail_xfer 1063 1
	tail_recovered
}

@test "tail loss: the last 2 packets of a single message" {
	tail_xfer 1062-1063 1
	tail_recovered
}

@test "tail loss: the last 8 packets of a single message" {
	tail_xfer 1056-1063 1
	tail_recovered
}

@test "tail loss: the last packet of the last of 5 messages" {
	tail_xfer 1319 5
	tail_recovered
}

@test "the Depot's periodic reports reach the Sentry while data flows, and cost little" {
	lh_topo_up two-dc --rtt 2ms --match roce
	lr2_xfer --psn 1000 -S 65536 -n 50
	lr2_show
	lr2_ok
	# 3200 packets: the count trigger alone (N = 64) gives about 50 reports
	[ "$(lr2_ctr a sentry_report)" -ge 40 ]
	jq_assert "$LR2_C" '.naks_received == 0 and .timeouts == 0'
}

@test "the Sentry's agent says on exit how many silence NAKs it sent (one per tail above)" {
	lr2_agents_down
	grep -E "agent: .* [4-9] silence NAKs" "$BATS_FILE_TMPDIR/gwa.log"
	lr2_agents_up --pool-slots 4096 --sack-time 1ms
}

@test "with T/C-SACK off (the default for now) the same tail loss waits for the NIC's timer" {
	lr2_agents_down
	lr2_agents_up --pool-slots 4096
	tail_xfer 1063 1
	jq_assert "$LR2_C" '.timeouts == 1'
	[ "$(lr2_ctr a sentry_report)" -eq 0 ]
	lr2_agents_down
	grep -q " 0 silence NAKs" "$BATS_FILE_TMPDIR/gwa.log"
	lr2_agents_up --pool-slots 4096 --sack-time 1ms
}
