#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Hostile input from the WAN side: while a transfer runs, gateway messages
# forged with the responder's address (lhpkt) reach the sender-side gateway's
# WAN interface, each naming PSNs far ahead of anything the sending NIC sent:
# an ACK, a NAK, a Depot-NACK and a Depot report. With longhaul they are
# refused and counted and the transfer is unharmed; the same run with nothing
# of longhaul on the path is the comparison. A NIC that gives up after 6
# retries (lhperf -R 6) turns a QP whose retransmissions were dropped as
# acknowledged into a QP error instead of a slow run.

load helpers
load lr2-helpers

# far ahead of every PSN of the run (start 1000, a few 100k packets), within
# half the PSN space, so that it reads as ahead and not behind
FORGED_PSN=4001000
FORGED_EACH=5

setup_file() {
	lr2_require
	lh_require_cmd tshark
	lh_topo_up two-dc --rtt 2ms --match roce --seed 46 --loss-a2b 'random 1%' \
		--loss-b2a 'random 1%'
}

teardown_file() {
	lr2_agents_down || true
	lh_cleanup
}

setup() {
	lr2_require
}

# forge_from_wan OUT: once the transfer runs, the QPNs from its first frames on
# gwa's WAN interface (a window of data comes before the first ACK), then FORGED_EACH of each forged message sent into that
# interface from the WAN side (the emulator's port toward gwa), with gwb's MAC
# and the responder's address as sources. Writes "requester_qpn data_qpn" to OUT.
forge_from_wan() {
	local out=$1 frames rq dq common
	frames=$(timeout 30 nsenter --net="/var/run/netns/$LH_PREFIX-gwa" -- tshark -i wan -c 400 \
		-f 'udp dst port 4791' -T fields -E separator=, -e ip.src -e infiniband.bth.destqp \
		2>/dev/null)
	rq=$(awk -F, '$1 == "10.2.0.10" { print $2; exit }' <<<"$frames")
	dq=$(awk -F, '$1 == "10.1.0.10" { print $2; exit }' <<<"$frames")
	echo "$rq $dq" >"$out"
	[ -n "$rq" ] && [ -n "$dq" ] || return 1
	common=(--src 10.2.0.10 --dst 10.1.0.10 --smac 02:4c:48:00:04:02 --dmac 02:4c:48:00:02:02
		--count "$FORGED_EACH" --same-psn --gap-us 2000)
	lh_exec wan "$LH_BIN/lhpkt" send --dev gwa "${common[@]}" --opcode RC_ACKNOWLEDGE \
		--syndrome 0x1f --qpn "$rq" --psn "$FORGED_PSN" --msn 77 &&
	lh_exec wan "$LH_BIN/lhpkt" send --dev gwa "${common[@]}" --opcode RC_ACKNOWLEDGE \
		--syndrome 0x60 --qpn "$rq" --psn "$FORGED_PSN" --msn 77 &&
	lh_exec wan "$LH_BIN/lhpkt" send --dev gwa "${common[@]}" --opcode RC_ACKNOWLEDGE \
		--syndrome 0x60 --resv 0x27 --qpn "$rq" --psn "$FORGED_PSN" --msn 77 &&
	lh_exec wan "$LH_BIN/lhpkt" send --dev gwa "${common[@]}" \
		--report "$FORGED_PSN:16" --report-seq 12345 --qpn "$dq" --sqpn "$rq"
}

# forged_run: a 6-second transfer of one QP with the forgery in the middle of
# it; LR2_* as lr2_xfer sets them, FORGED_QPNS the QPNs the forgery used
forged_run() {
	local pid st=0 sa
	sa=$(lr2_stats gwa)
	forge_from_wan "$BATS_TEST_TMPDIR/qpns" &
	pid=$!
	lr2_xfer -D 6 -S 65536 -R 6 --psn 1000
	wait "$pid" || st=$?
	# gwa's counters once the forgery is done too: on a slow machine it may end after the run
	LR2_A=$(lr2_delta "$sa" "$(lr2_stats gwa)")
	FORGED_QPNS=$(cat "$BATS_TEST_TMPDIR/qpns")
	echo "forged for QPNs $FORGED_QPNS (status $st)"
	return "$st"
}

@test "forged ACK, NAK, Depot-NACK and report from the WAN side, PSNs never sent: refused and counted, the transfer unharmed, as without longhaul" {
	local plain
	lr2_agents_down
	forged_run
	lr2_ok
	plain=$LR2_C
	echo "without longhaul: $(jq -c '{status, verified, timeouts, qp_errors}' <<<"$plain")"

	lr2_agents_up
	forged_run
	lr2_show
	lr2_ok
	echo "with longhaul: $(jq -c '{status, verified, timeouts, qp_errors}' <<<"$LR2_C")"
	# every forged ACK, NAK and Depot-NACK found the QP and was refused, passed on unchanged;
	# every forged report was dropped
	[ "$(lr2_ctr a sentry_ack_unsent)" -eq $((3 * FORGED_EACH)) ]
	[ "$(lr2_ctr a sentry_report_unsent)" -eq "$FORGED_EACH" ]
	# the Sentry's QP still follows the NIC: it recovered the WAN losses after the forgery
	# the LR2 way (the NIC's replays filtered)
	[ "$(lr2_ctr a sentry_sr_drop)" -gt 0 ]
}

# flood_gwb N [SRC]: N RDMA WRITE packets into gwb's WAN interface from the WAN
# side, from SRC (default 10.9.0.1: no peer, behind no gateway) to the
# responder, each a new QPN
flood_gwb() {
	lh_exec wan "$LH_BIN/lhpkt" send --dev gwb --src "${2:-10.9.0.1}" --dst 10.2.0.10 \
		--smac 02:4c:48:00:02:02 --dmac 02:4c:48:00:04:02 --opcode RC_RDMA_WRITE_MIDDLE \
		--payload 1024 --qpn 0x500000 --qpn-step 1 --psn 5000 --count "$1" --gap-us 200
}

@test "with --peer, a flood from a source that is no peer (3000 packets, each a new QPN) during a transfer: nothing learned, each counted, the transfer unharmed" {
	local pid st=0 sb
	lr2_agents_down
	lr2_agents_up --peer 10.1.0.0/24 --peer fd00:1::/64 --peer 10.2.0.0/24 --peer fd00:2::/64
	sb=$(lr2_stats gwb)
	(sleep 1 && flood_gwb 3000) &
	pid=$!
	lr2_xfer -D 4 -S 65536 -R 6 --psn 1000
	wait "$pid" || st=$?
	LR2_B=$(lr2_delta "$sb" "$(lr2_stats gwb)")
	lr2_show
	[ "$st" -eq 0 ]
	lr2_ok
	# the flood's 3000 QPs: none learned on gwb (no entry, ring or pool slot), each counted
	[ "$(lr2_ctr b not_peer)" -ge 3000 ]
	[ "$(lr2_ctr b depot_new_qp)" -eq 1 ]
	[ "$(lr2_ctr a sentry_new_qp)" -eq 1 ]
	[ "$(lr2_ctr b qp_table_full)" -eq 0 ]
	# the real QP was protected: it is a peer's
	[ "$(lr2_ctr b depot_in_order)" -gt 0 ]
	lr2_agents_down
}

@test "with --host-qps 64, a flood from a source inside a peer prefix (spoofed, 3000 packets, each a new QPN): 64 of its QPs learned, the rest passed and counted, the transfer unharmed" {
	local pid st=0 sb
	lr2_agents_down
	lr2_agents_up --peer 10.1.0.0/24 --peer fd00:1::/64 --peer 10.2.0.0/24 --peer fd00:2::/64 \
		--host-qps 64
	sb=$(lr2_stats gwb)
	(sleep 1 && flood_gwb 3000 10.1.0.99) &
	pid=$!
	lr2_xfer -D 4 -S 65536 -R 6 --psn 1000
	wait "$pid" || st=$?
	LR2_B=$(lr2_delta "$sb" "$(lr2_stats gwb)")
	lr2_show
	[ "$st" -eq 0 ]
	lr2_ok
	# 64 of the flood's QPs and the real one learned; the rest counted, nothing else refused
	[ "$(lr2_ctr b depot_new_qp)" -eq 65 ]
	[ "$(lr2_ctr b qp_host_limit)" -ge $((3000 - 64)) ]
	[ "$(lr2_ctr b qp_table_full)" -eq 0 ]
	[ "$(lr2_ctr b depot_in_order)" -gt 0 ]
	lr2_agents_down
}

# forge_reports OUT KEYFILE: once the transfer runs, its QPNs and the newest
# data PSN from gwa's WAN interface, then FORGED_EACH reports naming the 16
# PSNs before that one missing (inside what the NIC sent: without a key such a
# report would be taken in), unsigned, and FORGED_EACH signed with KEYFILE
forge_reports() {
	local out=$1 frames rq dq psn common
	frames=$(timeout 30 nsenter --net="/var/run/netns/$LH_PREFIX-gwa" -- tshark -i wan -c 400 \
		-f 'udp dst port 4791' -T fields -E separator=, -e ip.src -e infiniband.bth.destqp \
		-e infiniband.bth.psn 2>/dev/null)
	rq=$(awk -F, '$1 == "10.2.0.10" { print $2; exit }' <<<"$frames")
	dq=$(awk -F, '$1 == "10.1.0.10" { print $2; exit }' <<<"$frames")
	psn=$(awk -F, '$1 == "10.1.0.10" { p = $3 } END { print p }' <<<"$frames")
	echo "$rq $dq $psn" >"$out"
	[ -n "$rq" ] && [ -n "$dq" ] && [ -n "$psn" ] || return 1
	common=(--src 10.2.0.10 --dst 10.1.0.10 --smac 02:4c:48:00:04:02 --dmac 02:4c:48:00:02:02
		--count "$FORGED_EACH" --same-psn --gap-us 2000 --qpn "$dq" --sqpn "$rq"
		--report "$((psn - 16)):16")
	lh_exec wan "$LH_BIN/lhpkt" send --dev gwa "${common[@]}" &&
	lh_exec wan "$LH_BIN/lhpkt" send --dev gwa "${common[@]}" --report-key-file "$2"
}

@test "with --report-key-file, the Depot signs its reports and the Sentry takes only those: forged reports inside the window, unsigned or signed with another key, dropped and counted, the transfer unharmed" {
	local pid st=0 sa
	printf '000102030405060708090a0b0c0d0e0f\n' >"$BATS_TEST_TMPDIR/peers.key"
	printf 'f0e0d0c0b0a090807060504030201000\n' >"$BATS_TEST_TMPDIR/other.key"
	chmod 600 "$BATS_TEST_TMPDIR/peers.key"
	lr2_agents_down
	lr2_agents_up --report-key-file "$BATS_TEST_TMPDIR/peers.key"
	sa=$(lr2_stats gwa)
	forge_reports "$BATS_TEST_TMPDIR/qpns" "$BATS_TEST_TMPDIR/other.key" &
	pid=$!
	lr2_xfer -D 6 -S 65536 -R 6 --psn 1000
	wait "$pid" || st=$?
	LR2_A=$(lr2_delta "$sa" "$(lr2_stats gwa)")
	echo "forged for QPNs and PSN $(cat "$BATS_TEST_TMPDIR/qpns") (status $st)"
	lr2_show
	[ "$st" -eq 0 ]
	lr2_ok
	[ "$(lr2_ctr a sentry_report_nomac)" -eq "$FORGED_EACH" ]
	[ "$(lr2_ctr a sentry_report_mac)" -eq "$FORGED_EACH" ]
	# the Depot's own reports (1 % loss: gaps) verified and were taken in
	[ "$(lr2_ctr a sentry_report)" -gt 0 ]
	lr2_agents_down
	# a key file that is no key: a clear error, exit 2, nothing started
	printf 'not a key\n' >"$BATS_TEST_TMPDIR/bad.key"
	run lh_exec gwa "$LH_BIN/longhauld" --dc dc --wan wan --instance "$LH_PREFIX-gwa" \
		--report-key-file "$BATS_TEST_TMPDIR/bad.key"
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad.key: 'n' at byte 1 is no hex digit"* ]]
}
