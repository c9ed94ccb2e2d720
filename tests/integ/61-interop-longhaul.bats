#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Real RoCEv2 peers through longhaul: Linux Soft-RoCE (rdma_rxe) in two qemu
# guests in place of two-dc's src and dst (tests/interop/run-pair.sh), perftest
# across gwa, the WAN (lhwan: loss and a 4 ms round trip) and gwb, with
# longhauld (Depot and Sentry) on both gateways; for each loss model the same
# run once more without longhaul, for comparison (60-interop.bats is the
# plain baseline). With longhaul no QP gives up, the receiving rxe sees no WAN
# gap, the sending rxe takes the Sentry's NAKs, and every packet captured on
# both sides of both gateways carries a valid ICRC by an independent check
# (tests/interop/roce-pcap.py). Each pair run is ~15 s under TCG.

load helpers
load lr2-helpers
load interop-helpers

LR2_RTT=4ms
LR2_POOL=(--pool-slots 16384)
# 6 s of traffic each: enough losses (hundreds at 1 %) in a short file
IO_ARGS=(-s 65536 -D 6)
# both sides of both gateways; at most this many frames each (~1.1 KB a frame)
IO_CAPS=gwa:dc,gwa:wan,gwb:wan,gwb:dc
IO_CAP_MAX=40000

setup_file() {
	io_require_file
	lr2_require
	command -v tcpdump >/dev/null || skip "tcpdump missing: the captures cannot be taken (make deps installs it)"
	command -v python3 >/dev/null || skip "python3 missing: roce-pcap.py cannot check the captures"
}

teardown_file() {
	lr2_agents_down || true
	lh_topo_down
	lh_cleanup
}

teardown() {
	lr2_agents_down || true
}

# longhaul_pair TEST [RUN-PAIR OPTIONS]: agents up, one pair with captures,
# agents down; sets IO, IO_W, LH_A and LH_B (the counter deltas of gwa and
# gwb), SILENCE and EVENTS (silence NAKs and ring-buffer events of gwa's
# agent, from its last log line), then the ICRC check (ICRC)
longhaul_pair() {
	local test=$1 sa sb try
	shift
	for try in 1 2; do
		lr2_agents_up "${LR2_POOL[@]}"
		sa=$(lr2_stats gwa)
		sb=$(lr2_stats gwb)
		pair --test "$test" --capture "$IO_CAPS" --capture-max "$IO_CAP_MAX" "$@" -- "${IO_ARGS[@]}"
		sleep 0.3 # the last ACKs and frees
		LH_A=$(lr2_delta "$sa" "$(lr2_stats gwa)")
		LH_B=$(lr2_delta "$sb" "$(lr2_stats gwb)")
		lr2_agents_down
		[ "$try" -eq 1 ] || break
		if starved; then
			echo "# a guest was starved ($(taps)): the pair runs again" >&3
		elif perftest_quit; then
			echo "# perftest exited $(jq -c '[.client.exit_status, .server.exit_status]' <<<"$IO") with no QP" \
				"in error and nothing lost (its output above): the pair runs again" >&3
		else
			break
		fi
	done
	SILENCE=$(sed -n 's/.* \([0-9]*\) silence NAKs.*/\1/p' "$BATS_FILE_TMPDIR/gwa.log" | tail -n 1)
	SILENCE=${SILENCE:-0}
	EVENTS=$(sed -n 's/.*agent: \([0-9]*\) events.*/\1/p' "$BATS_FILE_TMPDIR/gwa.log" | tail -n 1)
	EVENTS=${EVENTS:-0}
	show
	echo "gwa: $LH_A"
	echo "gwb: $LH_B"
	completed
	icrc_check
}

# plain_pair TEST: the same without longhaul (no agent runs); sets IO, IO_W
plain_pair() {
	pair_fed --test "$1" -- "${IO_ARGS[@]}"
	show
	completed
}

# lhc SIDE NAME: a gateway counter of the last longhaul_pair (SIDE a or b)
lhc() {
	local v=$LH_A
	[ "$1" = a ] || v=$LH_B
	printf '%s' "$v" | jq -r --arg n "$2" '.[$n] // 0'
}

# The receiving rxe saw no WAN gap: each NAK it sent had a cause between gwb
# and it (a frame its tap dropped: a guest falls behind under TCG; a frame
# the host reordered) and the Depot answered it from its backup pool. A WAN
# gap it cannot answer so (the packet never reached the Depot): that NAK
# would go over the WAN. out_of_seq_request is no count of gaps (rxe counts
# every packet it drops out of sequence: a loaded host can show 3 with 2 tap
# drops and 3 NAKs, all answered locally)
receiver_saw_no_wan_gap() {
	local oos dropped
	oos=$(ctr server out_of_seq_request)
	dropped=$(jq_get "$IO" .server.tap.to_guest.dropped)
	echo "responder: out_of_seq_request $oos, its tap dropped $dropped, Depot answered $(lhc b depot_nak_local) NAKs locally"
	[ "$(lhc b depot_nak_forwarded)" -eq 0 ]
}

# The sending rxe took the gateway's NAKs. rxe counts rcvd_seq_err for a
# PSN-sequence NAK that moves its completer forward (rxe_comp.c check_ack);
# with no gap at the responder every NAK it gets comes from gwa: a Depot-NACK
# the Sentry turned into the NIC's NAK (sentry_dnack_forward), a Sentry-NACK
# for a DC gap (sentry_nack), a silence NAK of gwa's agent, or a NAK the
# Sentry owed while the NIC was in a retry, which gwa's agent sends on the
# ACK that ends it (LH_EV_NAK_DUE). The last kind has no counter of its own:
# it is one of the agent's ring-buffer events (EVENTS, its log), which bound
# it from above (a full capture on gwa:dc at 1 % counts 422 NAKs to the NIC
# against 412 forwarded and 11 events). So rcvd_seq_err <= all of those.
# It can be lower than the counted ones: a NAK whose PSN the completer already
# passed (an ACK or the NAK before covered it) or one the requester's tap
# dropped is not counted; measured here 95 to 98 %, hence at least 3/4.
# completer_retry_err counts the go-backs: one per counted NAK plus those of
# the NIC's own retransmit timer, which under TCG fires now and then with
# nothing lost (60-interop.bats), so only >= is sound.
sender_took_the_naks() {
	local got sent retries
	got=$(ctr client rcvd_seq_err)
	retries=$(ctr client completer_retry_err)
	sent=$(($(lhc a sentry_dnack_forward) + $(lhc a sentry_nack)))
	echo "requester: rcvd_seq_err $got, completer_retry_err $retries; gwa NAKs $sent counted" \
		"(dnack_forward $(lhc a sentry_dnack_forward), sentry_nack $(lhc a sentry_nack))," \
		"+ silence $SILENCE, + at most $EVENTS owed (agent events);" \
		"sentry_watchdog $(lhc a sentry_watchdog); responder duplicate_request $(ctr server duplicate_request)" >&3
	[ "$sent" -gt 0 ]
	[ "$got" -le $((sent + SILENCE + EVENTS)) ]
	[ $((4 * got)) -ge $((3 * sent)) ]
	[ "$retries" -ge "$got" ]
}

# what each run is worth, on the terminal
report() {
	echo "$1: $(jq_get "$IO" .client.result.bw_avg_mbps) Mb/s; a2b lost $(jq_get "$IO_W" .a2b.lost)," \
		"b2a lost $(jq_get "$IO_W" .b2a.lost); responder out_of_seq $(ctr server out_of_seq_request);" \
		"requester rcvd_seq_err $(ctr client rcvd_seq_err), completer_retry_err $(ctr client completer_retry_err);" \
		"$(taps)" >&3
}

# loss_case TEST SEED LOSS-OPTIONS...: longhaul then plain under the same WAN
loss_case() {
	local test=$1 seed=$2 lh_oos
	shift 2
	lh_topo_up two-dc --rtt "$LR2_RTT" --match roce --seed "$seed" "$@"
	longhaul_pair "$test"
	report "longhaul"
	[ "$(jq_get "$IO_W" '.a2b.lost')" -gt 0 ]
	receiver_saw_no_wan_gap
	sender_took_the_naks
	# the Depot held what followed each gap and NACKed it and released what it
	# held, but what followed a gap still open when perftest's time ran out
	# (the guests power off, nobody re-sends): at most a window of rxe's, 128 PSNs
	[ "$(lhc b depot_nack)" -gt 0 ]
	[ "$(lhc b depot_released)" -le "$(lhc b depot_held)" ]
	[ "$(lhc b depot_released)" -ge $(($(lhc b depot_held) - 128)) ]
	# the NACKs left gwb marked as Depot-NACKs and reached the NIC as plain NAKs
	[ "$(icrc_of gwb-wan .depot_nack_marks)" -gt 0 ]
	[ "$(icrc_of gwa-dc .depot_nack_marks)" -eq 0 ]
	[ "$(icrc_of gwb-dc .naks)" -le "$(jq_get "$IO" .server.tap.to_guest.dropped)" ]
	lh_oos=$(ctr server out_of_seq_request)

	# the same WAN without longhaul: its losses reach the responder, which NAKs them
	plain_pair "$test"
	report "plain"
	[ "$(jq_get "$IO_W" '.a2b.lost')" -gt 0 ]
	[ "$(ctr server out_of_seq_request)" -gt "$lh_oos" ]
	[ "$(ctr client rcvd_seq_err)" -gt 0 ]
}

@test "lossless WAN, longhaul on both gateways: rxe ib_write_bw passes untouched, every ICRC valid" {
	lh_topo_up two-dc --rtt "$LR2_RTT" --match roce --seed 70
	longhaul_pair ib_write_bw
	report "longhaul, lossless"
	jq_assert "$IO_W" '.a2b.lost == 0 and .b2a.lost == 0'
	receiver_saw_no_wan_gap
	# the Sentry and Depot saw the QP
	[ "$(lhc b depot_in_order)" -gt 0 ]
	[ "$(lhc a sentry_in_order)" -gt 0 ]
	# The emulator lost nothing, but a loaded 2-core host can still drop or reorder a
	# frame between the gateways (7 held and 1 Depot-NACK with emulator loss 0, say).
	# Whatever gap the Depot saw it held and released, and NACKed as a mark (at most one
	# NACK per gap, each gap at least one held packet); every NAK the requester took
	# came from gwa's Sentry
	[ "$(lhc b depot_released)" -eq "$(lhc b depot_held)" ]
	[ "$(lhc b depot_nack)" -le "$(lhc b depot_held)" ]
	[ "$(ctr client rcvd_seq_err)" -le $(($(lhc a sentry_dnack_forward) + $(lhc a sentry_nack))) ]
}

@test "1 % random WAN loss both ways, ib_write_bw: with longhaul no gap reaches rxe; without, go-back-N" {
	loss_case ib_write_bw 71 --loss-a2b 'random 1%' --loss-b2a 'random 1%'
}

@test "1 % random WAN loss both ways, ib_send_bw" {
	loss_case ib_send_bw 72 --loss-a2b 'random 1%' --loss-b2a 'random 1%'
}

@test "every 256th WAN frame lost (src to dst), ib_write_bw" {
	loss_case ib_write_bw 73 --loss-a2b 'every 256'
}

@test "Gilbert-Elliott WAN bursts (1 % into bad, 20 % out: mean burst 5), ib_send_bw" {
	loss_case ib_send_bw 74 --loss-a2b 'gemodel 1% 20%'
}
