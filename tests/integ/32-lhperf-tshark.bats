#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# lhperf's frames through oracles nobody here wrote: tshark decodes a captured
# run as RoCE (InfiniBand over UDP 4791) with the expected opcodes, PSNs,
# QPNs, ACK-request bits, RETH lengths, AETH syndromes and MSNs, and shows
# the go-back-N rewind on the wire; lhpkt recomputes every ICRC and tshark
# checks the IPv6 UDP checksums. Captures stay in the BATS temporary directory.

load helpers
load lhperf-helpers

setup() {
	lhp_require
	lh_require_cmd tcpdump tshark
	[ -x "$LH_BIN/lhpkt" ] || skip "build/bin/lhpkt missing: run make"
	lhp_pair
	PCAP=$BATS_TEST_TMPDIR/run.pcap
}

teardown() {
	lh_cleanup
}

# capture_start: tcpdump on the client's end of the veth, full frames, each
# written at once (without --immediate-mode the last ring block is lost on exit)
capture_start() {
	local log=$BATS_TEST_TMPDIR/tcpdump.log i
	TD_PID=$(lh_bg "$LHP_SRC" "$log" tcpdump -i "$LHP_SIF" -s 0 \
		--immediate-mode -B 65536 -U -n -w "$PCAP" udp port 4791)
	for i in $(seq 1 100); do
		grep -q "listening on" "$log" && return 0
		sleep 0.1
	done
	cat "$log"
	return 1
}

capture_stop() {
	local i
	sleep 0.3
	kill -INT "$TD_PID"
	for i in $(seq 1 50); do
		kill -0 "$TD_PID" 2>/dev/null || return 0
		sleep 0.1
	done
}

# fields FILTER FIELD...: one line per frame matching the display filter
fields() {
	local filter=$1 f args=()
	shift
	for f in "$@"; do
		args+=(-e "$f")
	done
	tshark -r "$PCAP" -Y "$filter" -T fields -E separator=, "${args[@]}" 2>/dev/null
}

@test "tshark decodes a WRITE run with two losses: opcodes, PSNs, QPNs, AETH, rewind" {
	lhp_drop_psns "$LHP_DST" "$LHP_DIF" 100 300
	capture_start
	# 16 packets a message, 40 messages: PSNs 0..639
	lhp_run --psn 0 --size 16384 --iters 40 10.30.0.2
	capture_stop
	lhp_show
	[ "$status" -eq 0 ]
	jq_eq "$LHP_C" .verified true
	local total roce sqpn dqpn
	total=$(tshark -r "$PCAP" 2>/dev/null | wc -l)
	roce=$(fields infiniband frame.number | wc -l)
	echo "frames $total, decoded as InfiniBand $roce"
	cat "$BATS_TEST_TMPDIR/tcpdump.log"
	grep -q "^0 packets dropped by kernel" "$BATS_TEST_TMPDIR/tcpdump.log"
	[ "$total" -gt 640 ]
	[ "$roce" -eq "$total" ]
	sqpn=$(jq_get "$LHP_C" '.qp_list[0].local_qpn')
	dqpn=$(jq_get "$LHP_C" '.qp_list[0].remote_qpn')

	# requester -> responder: RDMA WRITE FIRST/MIDDLE/LAST to the server's QP
	[ "$(fields 'ip.src == 10.30.0.1' infiniband.bth.opcode | sort -un | tr '\n' ' ')" = "6 7 8 " ]
	[ "$(fields 'ip.src == 10.30.0.1' infiniband.bth.destqp | sort -u)" = "$(printf '0x%06x' "$dqpn")" ]
	[ "$(fields 'ip.src == 10.30.0.1' frame.number | wc -l)" -eq "$(jq_get "$LHP_C" .packets_sent)" ]
	# every PSN 0..639 on the wire, and nothing else
	[ "$(fields 'ip.src == 10.30.0.1' infiniband.bth.psn | sort -un | tr '\n' ' ')" = "$(seq -s ' ' 0 639) " ]
	# a RETH with the message length on each FIRST; the ACK request on each LAST only
	[ "$(fields 'infiniband.bth.opcode == 6' infiniband.reth.dmalen | sort -u)" = "16384" ]
	[ "$(fields 'infiniband.bth.opcode == 8' infiniband.bth.a | sort -u)" = "1" ]
	[ "$(fields 'infiniband.bth.opcode == 6 || infiniband.bth.opcode == 7' infiniband.bth.a | sort -u)" = "0" ]

	# responder -> requester: ACKNOWLEDGE only, to the client's QP
	[ "$(fields 'ip.src == 10.30.0.2' infiniband.bth.opcode | sort -u)" = "17" ]
	[ "$(fields 'ip.src == 10.30.0.2' infiniband.bth.destqp | sort -u)" = "$(printf '0x%06x' "$sqpn")" ]
	# syndromes: ACK with unlimited credits (0x1f) and NAK PSN sequence error (0x60)
	[ "$(fields 'infiniband.bth.opcode == 17' infiniband.aeth.syndrome | sort -un | tr '\n' ' ')" = "31 96 " ]
	[ "$(fields 'infiniband.aeth.syndrome == 96' infiniband.bth.psn | tr '\n' ' ')" = "100 300 " ]
	[ "$(fields 'infiniband.aeth.syndrome == 31' frame.number | wc -l)" -eq "$(jq_get "$LHP_C" .responder.acks_sent)" ]
	# the MSN of the ACK of a message's last packet counts that message
	fields 'infiniband.aeth.syndrome == 31' infiniband.bth.psn infiniband.aeth.msn |
		awk -F, '($1 + 1) % 16 == 0 && $2 != ($1 + 1) / 16 { print "bad MSN: " $0; bad = 1 } END { exit bad }'

	# go-back-N on the wire: the first PSN sent below one already sent is the NAK's
	fields 'ip.src == 10.30.0.1' infiniband.bth.psn |
		awk '$1 < max { print $1; exit } $1 > max { max = $1 }' | grep -qx 100

	# the independent ICRC check of every frame
	run "$LH_BIN/lhpkt" check "$PCAP"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"0 ICRC wrong"* ]]
}

@test "tshark decodes a SEND run over IPv6 across the PSN wrap, UDP checksums good" {
	capture_start
	lhp_run --op send --psn 0xfffff8 --size 2500 --iters 8 fd30::2
	capture_stop
	lhp_show
	[ "$status" -eq 0 ]
	jq_eq "$LHP_C" .verified true
	# 3 packets a message: SEND FIRST, MIDDLE, LAST; 24 PSNs from 0xfffff8 wrap to 0x0f
	[ "$(fields 'ipv6.src == fd30::1' infiniband.bth.opcode | sort -un | tr '\n' ' ')" = "0 1 2 " ]
	[ "$(fields 'ipv6.src == fd30::1' infiniband.bth.psn | sort -un | tr '\n' ' ')" = \
		"$(echo $(seq 0 15) $(seq 16777208 16777215)) " ]
	# rxe leaves UDP checksums 0 over IPv4; over IPv6 they must be right (RFC 8200):
	# tshark's checksum status 1 is "Good" (0 bad, 2 unverified)
	[ "$(tshark -r "$PCAP" -o udp.check_checksum:TRUE -T fields -e udp.checksum.status \
		2>/dev/null | sort -u)" = "1" ]
	run "$LH_BIN/lhpkt" check "$PCAP"
	[ "$status" -eq 0 ]
}
