#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Wireshark as an oracle: packets built by user/lib (through lhpkt) are
# written to a capture and tshark must decode every field as intended.

setup_file() {
	command -v tshark >/dev/null || skip "tshark not installed (make deps)"
}

setup() {
	LH_ROOT=${LH_ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
	O=${O:-$LH_ROOT/build}
	case "$O" in /*) ;; *) O=$LH_ROOT/$O ;; esac
	LHPKT=$O/bin/lhpkt
	CAP=$BATS_TEST_TMPDIR/cap.pcap
}

# fields FIELD...: tshark's values of these fields, comma-separated, one line per packet
fields() {
	local args=() f
	for f in "$@"; do args+=(-e "$f"); done
	tshark -r "$CAP" -T fields -E separator=, "${args[@]}" 2>/dev/null
}

@test "RC SEND ONLY with immediate: opcode, SE, pad count, P_Key, QP, AckReq, PSN, ImmDt" {
	"$LHPKT" build --opcode RC_SEND_ONLY_WITH_IMMEDIATE --imm 0xdeadbeef --payload 5 \
		--qpn 0x1234 --psn 7 --ackreq --se --pkey 0x8001 -w "$CAP"
	run fields infiniband.bth.opcode infiniband.bth.se infiniband.bth.padcnt \
		infiniband.bth.p_key infiniband.bth.destqp infiniband.bth.a infiniband.bth.psn infiniband.immdt
	[ "$status" -eq 0 ]
	[[ "$output" == "5,1,3,32769,0x001234,1,7,deadbeef"* ]]
}

@test "RDMA WRITE FIRST: RETH virtual address, R_Key and DMA length" {
	"$LHPKT" build --opcode RC_RDMA_WRITE_FIRST --va 0x123456789a --rkey 0xabc \
		--dmalen 65536 --payload 64 --qpn 0xfffffe -w "$CAP"
	run fields infiniband.bth.opcode infiniband.bth.destqp infiniband.reth.va \
		infiniband.reth.r_key infiniband.reth.dmalen
	[ "$output" = "6,0xfffffe,0x000000123456789a,0x00000abc,65536" ]
}

@test "ACK and NAK: AETH syndrome and MSN (ACK 0x1f, PSN sequence error NAK 0x60)" {
	"$LHPKT" build --opcode RC_ACKNOWLEDGE --syndrome 0x1f --msn 1000 --psn 5 -w "$CAP"
	run fields infiniband.bth.opcode infiniband.aeth.syndrome infiniband.aeth.msn infiniband.aeth.syndrome.opcode
	[ "$output" = "17,31,1000,0" ]
	"$LHPKT" build --opcode RC_ACKNOWLEDGE --syndrome 0x60 --msn 77 --psn 9 -w "$CAP"
	run fields infiniband.aeth.syndrome infiniband.aeth.syndrome.opcode infiniband.aeth.syndrome.error_code infiniband.bth.psn
	[ "$output" = "96,3,0,9" ]
}

@test "UD SEND ONLY: DETH Q_Key and source QP" {
	"$LHPKT" build --opcode UD_SEND_ONLY --qkey 0x11111111 --sqpn 0x22 --payload 8 -w "$CAP"
	run fields infiniband.bth.opcode infiniband.deth.q_key infiniband.deth.srcqp
	[ "$output" = "100,0x0000000011111111,0x00000022" ]
}

@test "IPv6 behind an 802.1Q tag: decoded through to the BTH" {
	"$LHPKT" build -6 --vlan 10 --opcode RC_RDMA_WRITE_ONLY --payload 100 --qpn 0x42 --psn 123 -w "$CAP"
	run fields vlan.id ipv6.src udp.dstport infiniband.bth.opcode infiniband.bth.destqp infiniband.bth.psn
	[ "$output" = "10,fd00::1,4791,10,0x000042,123" ]
}

@test "a PSN series across the 2^24 wrap" {
	"$LHPKT" build --opcode RC_RDMA_WRITE_MIDDLE --payload 16 --psn 16777214 --count 4 -w "$CAP"
	run fields infiniband.bth.psn
	[ "$(echo "$output" | tr '\n' ' ')" = "16777214 16777215 0 1 " ]
}

@test "CNP (Wireshark 4.0 has no CNP name): opcode 129, destination QP, BECN in byte 4" {
	"$LHPKT" build --opcode CNP --becn --qpn 0x118 -w "$CAP"
	run fields infiniband.bth.opcode infiniband.bth.destqp
	[ "$output" = "129,0x000118" ]
}

@test "every opcode longhaul builds is decoded with its number" {
	local op n=0
	for op in 0x00 0x01 0x02 0x03 0x04 0x05 0x06 0x07 0x08 0x09 0x0a 0x0b 0x0c 0x0d 0x0e \
		0x0f 0x10 0x11 0x12 0x13 0x14 0x16 0x17 0x20 0x24 0x26 0x2a 0x64 0x65; do
		"$LHPKT" build --opcode "$op" -w "$CAP"
		run fields infiniband.bth.opcode
		[ "$output" = "$((op))" ] || { echo "opcode $op decoded as '$output'"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -eq 29 ]
}

@test "lhpkt check agrees the built packets are valid, and flags a bad ICRC" {
	"$LHPKT" build --opcode RC_RDMA_WRITE_ONLY --payload 1000 --count 10 -w "$CAP"
	run "$LHPKT" check -j "$CAP"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq '.roce == 10 and .icrc_ok == 10 and .icrc_bad == 0')" = true ]
	"$LHPKT" build --opcode RC_RDMA_WRITE_ONLY --payload 1000 --bad-icrc -w "$CAP"
	run "$LHPKT" check -j "$CAP"
	[ "$status" -eq 1 ]
	[ "$(echo "$output" | jq '.icrc_bad == 1 and (.bad | length) == 1')" = true ]
}

@test "lhpkt rejects bad input with a clear message and exit status 2" {
	run "$LHPKT" build --qpn 0x1000000 -w "$CAP"
	[ "$status" -eq 2 ]
	[[ "$output" == *"bad QPN"* ]]
	run "$LHPKT" build --opcode RC_ACKNOWLEDGE --payload 4 -w "$CAP"
	[ "$status" -eq 2 ]
	run "$LHPKT" build --src 10.0.0.1 --dst fd00::2 -w "$CAP"
	[ "$status" -eq 2 ]
	run "$LHPKT" frobnicate
	[ "$status" -eq 2 ]
	run "$LHPKT" check /nonexistent.pcap
	[ "$status" -eq 3 ]
}

# forged gateway messages for the hostile-input tests (tests/integ/46-forged.bats):
# longhaul's own dissector (user/wireshark/longhaul.lua) reads them as the real ones
@test "lhpkt forges a Depot report (--report, --report-seq) and a Depot-NACK (--resv) that longhaul.lua decodes" {
	local lua=$LH_ROOT/user/wireshark/longhaul.lua
	"$LHPKT" build --report 100:5 --report-seq 7 --qpn 0x12 --sqpn 0x34 -w "$CAP"
	output=$(tshark -r "$CAP" -X "lua_script:$lua" -T fields -E separator=, \
		-e longhaul.report.dqpn -e longhaul.report.peer_qpn -e longhaul.report.epsn \
		-e longhaul.report.epsn_d -e longhaul.report.seq -e longhaul.report.missing_count 2>/dev/null)
	echo "report: $output"
	[ "$output" = "0x000012,0x000034,100,105,7,5" ]
	"$LHPKT" build --opcode RC_ACKNOWLEDGE --syndrome 0x60 --resv 0x23 --psn 50 -w "$CAP"
	output=$(tshark -r "$CAP" -X "lua_script:$lua" -T fields -E separator=, -e longhaul.dnack \
		-e infiniband.bth.psn 2>/dev/null)
	echo "Depot-NACK: $output"
	[[ "$output" == True,50* || "$output" == 1,50* ]]
	run "$LHPKT" build --report 1:257 -w "$CAP"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--report wants EPSN:NBITS"* ]]
}
