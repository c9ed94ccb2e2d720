#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# longhaul's gateway-to-gateway messages (docs/protocol.md) through tshark and
# the dissector user/wireshark/longhaul.lua.
#  - Frames with known values (tests/fixtures/mk-protocol-pcap.sh: scapy and
#    lhpkt build them, not the dissector): every field of a Depot report
#    across the PSN wrap, Depot-NACKs over IPv4 and IPv6 with their ranges and
#    ICRCs (the mark leaves the ICRC as it was), a plain NAK and a marked ACK
#    that are not Depot-NACKs, malformed reports that decode as malformed.
#  - Real captures in the two-dc topology under 2 % WAN loss, lhperf across
#    the 2^24 PSN wrap: the Depot-NACKs and reports gwb sends, as they cross
#    the WAN, decode with valid ICRCs and ePSN <= ePSN_D; the sending NIC gets
#    them as plain NAKs with the same ICRC. Without a Sentry on the path the
#    Depot-NACKs act as the receiver's NAKs and the reports draw ICMP port
#    unreachable from the sending host.
# Captures stay in the BATS temporary directory.

load helpers

LUA=$LH_ROOT/user/wireshark/longhaul.lua
PSN0=16776192 # 0xfffc00: lhperf's start PSN, 1024 PSNs before the wrap
NPSN=6400     # 100 messages of 64 KiB at MTU 1024

# Every field a test reads: each capture is decoded once (tshark is slow to start)
FIELDS=(frame.number _ws.col.Protocol _ws.col.Info vlan.id ip.src ip.dst ipv6.src udp.dstport
	udp.checksum.status icmp.type icmp.code infiniband.bth infiniband.bth.opcode
	infiniband.bth.destqp infiniband.bth.psn infiniband.aeth.syndrome infiniband.aeth.msn
	infiniband.invariant.crc longhaul longhaul.report.magic longhaul.report.version
	longhaul.report.type longhaul.report.dqpn longhaul.report.peer_qpn longhaul.report.epsn
	longhaul.report.epsn_d longhaul.report.nbits longhaul.report.flags longhaul.report.seq
	longhaul.report.span longhaul.report.held_count longhaul.report.missing_count
	longhaul.report.missing_psns longhaul.report.held_psns longhaul.report.missing_psn
	longhaul.report.held_psn longhaul.report.inconsistent longhaul.report.flags_unknown
	longhaul.report.bits_beyond longhaul.report.trailing longhaul.malformed longhaul_mark
	longhaul.dnack longhaul.dnack.byte4 longhaul.dnack.fecn longhaul.dnack.becn
	longhaul.dnack.mark longhaul.dnack.len_minus1 longhaul.dnack.len longhaul.dnack.first
	longhaul.dnack.last longhaul.icrc.computed longhaul.icrc.good longhaul.icrc.bad
	longhaul.mark.stray _ws.malformed _ws.lua.error _ws.expert.message)

# tshark_lua ARGS...: tshark with the dissector; a Lua error on stderr fails the call
tshark_lua() {
	local err=${BATS_TEST_TMPDIR:-$BATS_FILE_TMPDIR}/tshark.err
	timeout 60 tshark -o udp.check_checksum:TRUE -X lua_script:"$LUA" "$@" 2>"$err" ||
		{ cat "$err" >&2; return 1; }
	if grep -i "lua" "$err" >&2; then
		return 1
	fi
}

# decode PCAP OUT: every frame of PCAP as one JSON object a line in OUT,
# {field: [values]} for the fields of FIELDS that it has
decode() {
	local f args=()
	for f in "${FIELDS[@]}"; do
		args+=(-e "$f")
	done
	tshark_lua -r "$1" -T json "${args[@]}" >"$1.json" || return 1
	jq -c '.[]._source.layers' "$1.json" >"$2"
}

# fx JSONL FRAME FIELD...: the fields of frame FRAME, separated by '|'
# (repeated values by ','; absent: empty)
fx() {
	local j=$1 n=$2
	shift 2
	jq -r --arg n "$n" 'select(.["frame.number"][0] == $n) |
		[$ARGS.positional[] as $f | (.[$f] // []) | join(",")] | join("|")' "$j" --args "$@"
}

# rows JSONL SELECT FIELD...: the fields of every frame for which jq SELECT holds
rows() {
	local j=$1 sel=$2
	shift 2
	jq -r "select($sel) | "'[$ARGS.positional[] as $f | (.[$f] // []) | join(",")] | join("|")' \
		"$j" --args "$@"
}

# frames PCAP FILTER: the frame numbers a display filter selects, on one line
frames() {
	tshark_lua -r "$1" -Y "$2" -T fields -e frame.number | tr '\n' ' ' | sed 's/ $//'
}

setup_file() {
	# the fixture, once: scapy and lhpkt build it (tests/fixtures/mk-protocol-pcap.sh)
	command -v tshark >/dev/null && command -v jq >/dev/null || return 0
	tshark -v 2>/dev/null | grep -q "with Lua" || return 0
	[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import scapy.contrib.roce' 2>/dev/null || return 0
	[ -x "$LH_BIN/lhpkt" ] || return 0
	FIX=$BATS_FILE_TMPDIR/fixture.pcap
	"$LH_ROOT/tests/fixtures/mk-protocol-pcap.sh" "$FIX" "$LH_BIN/lhpkt"
	decode "$FIX" "$BATS_FILE_TMPDIR/fixture.jsonl"
}

setup() {
	lh_require_cmd tshark timeout jq
	tshark -v 2>/dev/null | grep -q "with Lua" || skip "this tshark is built without Lua"
	FIX=$BATS_FILE_TMPDIR/fixture.pcap
	FJ=$BATS_FILE_TMPDIR/fixture.jsonl
}

# the live tests share one topology and their agents: built by the first, gone at the end
teardown_file() {
	agent_down gwa
	agent_down gwb
	lh_cleanup
}

fixture() {
	[ -s "$FJ" ] || skip "no fixture: needs python3-scapy and build/bin/lhpkt (make deps, make)"
}

# ------------------------------------------------------------------ live helpers

live_require() {
	lh_require_root
	lh_require_cmd ip nsenter jq tcpdump
	local b
	for b in longhauld lhperf lhwan lhpkt; do
		[ -x "$LH_BIN/$b" ] || skip "build/bin/$b missing: run make"
	done
	lh_bpffs
}

# live_topo: the two-dc topology with 2 % random loss from src to dst, once per file
live_topo() {
	[ -s "$LH_STATE/topo" ] || lh_topo_up two-dc --rtt 2ms --loss-a2b 'random 2%'
}

agent_alive() {
	[ -s "$BATS_FILE_TMPDIR/$1.pid" ] && kill -0 "$(cat "$BATS_FILE_TMPDIR/$1.pid")" 2>/dev/null
}

# agents GW...: longhauld runs on exactly these gateways (gwa, gwb): missing
# ones are started, all at once, and waited for until they say they run
agents() {
	local g i log pid started=()
	for g in gwa gwb; do
		if [[ " $* " != *" $g "* ]]; then
			agent_down "$g"
		elif ! agent_alive "$g"; then
			lh_track pin "$LH_BPFFS/longhaul/$LH_PREFIX-$g" # removed once it has stopped
			lh_bg "$LH_PREFIX-$g" "$BATS_FILE_TMPDIR/$g.log" "$LH_BIN/longhauld" --dc dc \
				--wan wan --instance "$LH_PREFIX-$g" --wan-rtt 2ms >"$BATS_FILE_TMPDIR/$g.pid"
			started+=("$g")
		fi
	done
	for g in "${started[@]}"; do
		log=$BATS_FILE_TMPDIR/$g.log
		pid=$(cat "$BATS_FILE_TMPDIR/$g.pid")
		for i in $(seq 200); do
			grep -qF '; running (SIGINT' "$log" && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		grep -qF '; running (SIGINT' "$log" || { cat "$log" >&2; return 1; }
	done
}

# agent_down GW: SIGTERM, and wait until it has detached and unpinned
agent_down() {
	local f=$BATS_FILE_TMPDIR/$1.pid pid i
	[ -s "$f" ] || return 0
	pid=$(cat "$f")
	rm -f "$f"
	kill -TERM "$pid" 2>/dev/null || return 0
	for i in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
}

# capture_start NAME NODE IFACE DIRECTION FILTER: tcpdump into $BATS_TEST_TMPDIR/NAME.pcap
capture_start() {
	local name=$1 node=$2 ifc=$3 dir=$4 filter=$5 log=$BATS_TEST_TMPDIR/$1.tcpdump i
	lh_bg "$LH_PREFIX-$node" "$log" tcpdump -i "$ifc" -Q "$dir" -s 0 -B 65536 --immediate-mode \
		-U -n -Z root -w "$BATS_TEST_TMPDIR/$name.pcap" "$filter" >"$BATS_TEST_TMPDIR/$name.cpid"
	for i in $(seq 100); do
		grep -q "listening on" "$log" && return 0
		sleep 0.05
	done
	cat "$log" >&2
	return 1
}

# capture_stop NAME: stop tcpdump; fail if the kernel dropped frames
capture_stop() {
	local pid i log=$BATS_TEST_TMPDIR/$1.tcpdump
	pid=$(cat "$BATS_TEST_TMPDIR/$1.cpid")
	kill -INT "$pid"
	for i in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "^0 packets dropped by kernel" "$log" || { cat "$log" >&2; return 1; }
}

# transfer: lhperf from src to dst, 100 messages of 64 KiB from PSN 0xfffc00.
# Sets C (the client's JSON); fails unless every byte was verified.
transfer() {
	local out=$BATS_TEST_TMPDIR/client.json
	lh_bg "$LH_PREFIX-dst" "$BATS_TEST_TMPDIR/server.log" \
		"$LH_BIN/lhperf" --server --json --listen-timeout 20 >/dev/null
	timeout --kill-after=5 40 nsenter --net="/var/run/netns/$LH_PREFIX-src" -- \
		"$LH_BIN/lhperf" --json --connect-timeout 10 -S 65536 -n 100 --psn "$PSN0" 10.2.0.10 \
		>"$out" 2>"$BATS_TEST_TMPDIR/client.err" || true
	C=$(cat "$out")
	echo "client: $(printf '%s' "$C" | jq -c 'del(.qp_list, .requester.rewind_events)' 2>/dev/null)"
	jq_assert "$C" '.status == "ok" and .verified == true and .qp_errors == 0'
	jq_assert "$C" '.icrc_errors == 0 and .requester.rx_drops.icrc_errors == 0'
	CQPN=$(printf '0x%06x' "$(jq_get "$C" '.qp_list[0].local_qpn')")
	SQPN=$(printf '0x%06x' "$(jq_get "$C" '.qp_list[0].remote_qpn')")
}

# ------------------------------------------------------------------ fixture tests

@test "a Depot report decodes field by field: held and missing PSNs across the 2^24 wrap" {
	fixture
	run fx "$FJ" 1 _ws.col.Protocol longhaul.report.magic longhaul.report.version \
		longhaul.report.type longhaul.report.dqpn longhaul.report.peer_qpn longhaul.report.epsn \
		longhaul.report.epsn_d longhaul.report.nbits longhaul.report.flags longhaul.report.seq \
		longhaul.report.span longhaul.report.held_count longhaul.report.missing_count _ws.expert.message
	[ "$output" = "longhaul|0x4c48|1|1|0x123456|0xabcdef|16777200|24|40|0x0000|7|40|23|17|" ]
	# held bytes fe 00 ff 0f f0 from ePSN 0xfffff0: bits 0, 8-15 and 28-35 clear
	run fx "$FJ" 1 longhaul.report.missing_psns longhaul.report.held_psns
	[ "$output" = "16777200, 16777208-16777215, 12-19|16777201-16777207, 0-11, 20-23" ]
	run fx "$FJ" 1 longhaul.report.missing_psn
	[ "$output" = "16777200,$(seq -s, 16777208 16777215),$(seq -s, 12 19)" ]
	run fx "$FJ" 1 longhaul.report.held_psn
	[ "$output" = "$(seq -s, 16777201 16777207),$(seq -s, 0 11),$(seq -s, 20 23)" ]
	run fx "$FJ" 1 _ws.col.Info
	[ "$output" = "Depot report seq 7, QP 0x123456 (peer 0xabcdef), ePSN 16777200, ePSN_D 24: 17 missing (16777200, 16777208-16777215, 12-19)" ]
	# the fields filter (11 has the same bitmap, 12 quotes report 1 in an ICMP error)
	run frames "$FIX" "longhaul.report.missing_psn == 0xfffff8 && longhaul.report.held_psn == 0 && longhaul.report.epsn_d == 24"
	[ "$status" -eq 0 ]
	[ "$output" = "1 12" ]
}

@test "Depot-NACKs: range from byte 4, IPv4 and IPv6, ICRC unchanged by the mark; plain NAK and marked ACK are not Depot-NACKs" {
	fixture
	# exactly the marked NAKs (2, 4, 5, 13) are Depot-NACKs
	run frames "$FIX" "longhaul.dnack && longhaul.dnack.len >= 1"
	[ "$output" = "2 4 5 13" ]
	run fx "$FJ" 2 infiniband.bth.opcode infiniband.aeth.syndrome infiniband.aeth.msn \
		infiniband.bth.destqp infiniband.bth.psn longhaul.dnack longhaul.dnack.byte4 \
		longhaul.dnack.fecn longhaul.dnack.becn longhaul.dnack.mark longhaul.dnack.len_minus1 \
		longhaul.dnack.len longhaul.dnack.first longhaul.dnack.last longhaul.icrc.good
	[ "$output" = "17|96|16|0xabcdef|16777214|1|0x24|0|0|1|4|5|16777214|2|1" ]
	run fx "$FJ" 2 _ws.col.Info
	[ "$output" = "RC Acknowledge QP=0xabcdef [PSN Sequence Error]  [longhaul Depot-NACK 16777214-2]" ]
	# IPv6 from lhpkt, byte 4 0xff: FECN, BECN, mark, 32 PSNs; UDP checksum redone
	run fx "$FJ" 4 ipv6.src infiniband.bth.psn longhaul.dnack.byte4 longhaul.dnack.fecn \
		longhaul.dnack.becn longhaul.dnack.mark longhaul.dnack.len_minus1 longhaul.dnack.len \
		longhaul.dnack.first longhaul.dnack.last longhaul.icrc.good udp.checksum.status
	[ "$output" = "fd00:2::10|100|0xff|1|1|1|31|32|100|131|1|1" ]
	# behind a VLAN tag
	run fx "$FJ" 13 vlan.id infiniband.bth.psn longhaul.dnack.len longhaul.dnack.last longhaul.icrc.good
	[ "$output" = "10|1000|2|1001|1" ]
	# scapy computed the ICRCs of the Depot-NACK (2) and of the plain NAK (3) by
	# itself: they are equal, and equal to what the dissector computes
	run fx "$FJ" 3 infiniband.invariant.crc
	[ -n "$output" ]
	[ "$(fx "$FJ" 2 infiniband.invariant.crc)" = "$output" ]
	[ "$(fx "$FJ" 2 longhaul.icrc.computed)" = "$output" ]
	# the wrong ICRC: the dissector and lhpkt check find the same frame
	run rows "$FJ" 'has("longhaul.icrc.bad")' frame.number longhaul.icrc.good
	[ "$output" = "5|0" ]
	run "$LH_BIN/lhpkt" check -j "$FIX"
	[ "$status" -eq 1 ]
	jq_assert "$output" '.roce == 6 and .icrc_ok == 5 and .icrc_bad == 1 and [.bad[].index] == [5]'
	# the plain NAK: nothing of longhaul's; the marked ACK: a warning, no Depot-NACK
	run fx "$FJ" 3 longhaul longhaul_mark longhaul.dnack _ws.expert.message
	[ "$output" = "|||" ]
	run fx "$FJ" 6 infiniband.aeth.syndrome longhaul.dnack longhaul.dnack.byte4 longhaul.mark.stray
	[ "$output" = "31||0x20|1" ]
	run rows "$FJ" 'has("longhaul.mark.stray")' frame.number
	[ "$output" = "6" ]
}

@test "malformed reports (bad magic, short, version 2, nbits > 256) decode as malformed; odd ones with warnings" {
	fixture
	run frames "$FIX" "_ws.malformed"
	[ "$output" = "7 8 9 10" ]
	run rows "$FJ" 'has("longhaul.malformed")' frame.number _ws.expert.message
	[ "${lines[0]}" = "7|Malformed longhaul report: magic 0x1234, not 0x4c48" ]
	[ "${lines[1]}" = "8|Malformed longhaul report: 20 bytes, a report has 60" ]
	[ "${lines[2]}" = "9|Malformed longhaul report: version 2, this dissector knows 1" ]
	[ "${lines[3]}" = "10|Malformed longhaul report: nbits 300 > 256" ]
	[ "${#lines[@]}" -eq 4 ]
	# nothing past a bad header is shown as a report field
	run rows "$FJ" 'has("longhaul.malformed") and has("longhaul.report.epsn")' frame.number
	[ "$output" = "10" ]
	# ePSN_D off, flags set, a bit beyond nbits, 4 trailing bytes: decoded by ePSN
	# and nbits as the Sentry does, with a warning or note for each
	run fx "$FJ" 11 longhaul.report.nbits longhaul.report.span longhaul.report.missing_count \
		longhaul.report.flags longhaul.report.inconsistent longhaul.report.flags_unknown \
		longhaul.report.bits_beyond longhaul.report.trailing _ws.malformed
	[ "$output" = "40|32|17|0x0002|1|1|1|1|" ]
	# a report quoted by an ICMP port unreachable still decodes
	run fx "$FJ" 12 icmp.type icmp.code longhaul.report.magic longhaul.report.epsn
	[ "$output" = "3|3|0x4c48|16777200" ]
	# no Lua error in any frame
	run rows "$FJ" 'has("_ws.lua.error")' frame.number
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
}

# ------------------------------------------------------------------ live tests

@test "live: gwb's Depot-NACKs and reports decode on the WAN; the sending NIC gets them as plain NAKs, same ICRC" {
	live_require
	live_topo
	agents gwa gwb
	# what gwb sends over the WAN, as lhwan receives it (on gwa's WAN interface
	# the Sentry's XDP has already cleared the mark or consumed the message)
	capture_start wire wan gwb in "udp and (port 4792 or (port 4791 and udp[20] != 0x1f))"
	# what the sending NIC gets from gwa
	capture_start nic gwa dc out "udp and src host 10.2.0.10 and udp[20] != 0x1f"
	transfer
	sleep 0.3
	capture_stop wire
	capture_stop nic
	local W=$BATS_TEST_TMPDIR/wire.jsonl N=$BATS_TEST_TMPDIR/nic.jsonl dn rep nic
	decode "$BATS_TEST_TMPDIR/wire.pcap" "$W"
	decode "$BATS_TEST_TMPDIR/nic.pcap" "$N"
	run rows "$W" 'has("_ws.malformed") or has("_ws.lua.error") or has("longhaul.malformed") or
		has("longhaul.icrc.bad") or has("longhaul.mark.stray")' frame.number _ws.expert.message
	[ "$output" = "" ]

	# Depot-NACKs: from the receiver to the sender's QP, 1..32 PSNs within the run, valid ICRC
	dn=$(rows "$W" 'has("longhaul.dnack")' ip.src ip.dst infiniband.bth.destqp \
		infiniband.aeth.syndrome infiniband.bth.psn longhaul.dnack.len longhaul.icrc.good)
	echo "Depot-NACKs: $(echo "$dn" | grep -c .)"
	[ "$(echo "$dn" | grep -c .)" -ge 1 ]
	echo "$dn" | awk -F'|' -v q="$CQPN" -v p0="$PSN0" -v n="$NPSN" '
		$1 != "10.2.0.10" || $2 != "10.1.0.10" || $3 != q || $4 != 96 || $6 < 1 || $6 > 32 ||
		$7 != 1 || ($5 - p0 + 16777216) % 16777216 > n { print "bad Depot-NACK: " $0; bad = 1 }
		END { exit bad }'
	# reports: magic, version, type, QPNs; ePSN <= ePSN_D (mod 2^24, at most 256
	# apart), each PSN described held or missing, sequence numbers increasing
	rep=$(rows "$W" 'has("longhaul.report.magic") and (has("icmp.type") | not)' \
		longhaul.report.magic longhaul.report.version longhaul.report.type longhaul.report.dqpn \
		longhaul.report.peer_qpn longhaul.report.epsn longhaul.report.epsn_d longhaul.report.nbits \
		longhaul.report.span longhaul.report.held_count longhaul.report.missing_count \
		longhaul.report.seq udp.dstport)
	echo "reports: $(echo "$rep" | grep -c .)"
	[ "$(echo "$rep" | grep -c .)" -ge 1 ]
	echo "$rep" | awk -F'|' -v c="$CQPN" -v s="$SQPN" -v p0="$PSN0" -v n="$NPSN" '
		$1 != "0x4c48" || $2 != 1 || $3 != 1 || $4 != s || $5 != c || $8 < 1 || $8 > 256 ||
		$9 != $8 || $10 + $11 != $8 || ($6 - p0 + 16777216) % 16777216 > n || $13 != 4792 ||
		(NR > 1 && $12 <= seq) { print "bad report: " $0; bad = 1 }
		{ seq = $12; if ($11 > 0) gaps++ }
		END { if (!gaps) { print "no report names a missing PSN"; bad = 1 }; exit bad }'
	run "$LH_BIN/lhpkt" check "$BATS_TEST_TMPDIR/wire.pcap" "$BATS_TEST_TMPDIR/nic.pcap"
	echo "$output"
	[ "$status" -eq 0 ]

	# the NIC: plain NAKs only (byte 4 zero), and Depot-NACKs among them with
	# the ICRC they had on the WAN: the mark was cleared outside it
	nic=$(rows "$N" '.["infiniband.aeth.syndrome"][0] == "96"' infiniband.bth.psn \
		infiniband.invariant.crc infiniband.bth longhaul_mark)
	echo "NAKs to the NIC: $(echo "$nic" | grep -c .)"
	[ "$(echo "$nic" | grep -c .)" -ge 1 ]
	echo "$nic" | awk -F'|' 'substr($3, 9, 2) != "00" || $4 != "" { print "not plain: " $0; bad = 1 }
		END { exit bad }'
	run rows "$N" 'has("longhaul_mark") or has("_ws.malformed")' frame.number
	[ "$output" = "" ]
	comm -12 <(rows "$W" 'has("longhaul.dnack")' infiniband.bth.psn infiniband.invariant.crc | sort -u) \
		<(echo "$nic" | cut -d'|' -f1,2 | sort -u) >"$BATS_TEST_TMPDIR/same.txt"
	echo "Depot-NACKs forwarded with the same ICRC: $(wc -l <"$BATS_TEST_TMPDIR/same.txt")"
	[ -s "$BATS_TEST_TMPDIR/same.txt" ]
	jq_assert "$C" '.naks_received >= 1'
}

@test "live: without a Sentry, Depot-NACKs act as the receiver's NAKs and reports draw ICMP port unreachable" {
	live_require
	live_topo
	agents gwb # the Depot only: nothing on gwa
	capture_start host src dc inout "icmp or (udp and src host 10.2.0.10 and (port 4792 or udp[20] != 0x1f))"
	transfer
	sleep 0.3
	capture_stop host
	local H=$BATS_TEST_TMPDIR/host.jsonl dn rew n_rep n_icmp
	decode "$BATS_TEST_TMPDIR/host.pcap" "$H"

	# the marked NAKs reach the NIC unchanged, ICRC valid, and it rewinds on them
	dn=$(rows "$H" 'has("longhaul.dnack")' infiniband.bth.psn longhaul.icrc.good | sort -u)
	echo "Depot-NACK PSNs at the NIC: $(echo "$dn" | grep -c .)"
	[ "$(echo "$dn" | grep -c .)" -ge 1 ]
	[ "$(echo "$dn" | cut -d'|' -f2 | sort -u)" = "1" ]
	jq_assert "$C" '.naks_received >= 1 and .rewinds >= 1'
	# every rewind on a NAK is at the PSN of a NAK on the wire, and at least one
	# at a Depot-NACK's (the receiving NIC's own NAKs would be plain)
	rew=$(jq_get "$C" '.requester.rewind_events[] | select(.cause == "nak") | .psn' | sort -u)
	echo "rewinds on a NAK at: $(tr '\n' ' ' <<<"$rew")"
	[ -n "$rew" ]
	[ -z "$(comm -23 <(echo "$rew") <(rows "$H" '.["infiniband.aeth.syndrome"][0] == "96"' \
		infiniband.bth.psn | sort -u))" ]
	[ -n "$(comm -12 <(echo "$rew") <(echo "$dn" | cut -d'|' -f1 | sort -u))" ]
	run "$LH_BIN/lhpkt" check "$BATS_TEST_TMPDIR/host.pcap"
	[ "$status" -eq 0 ]

	# reports reach the sending host, which has nothing on port 4792: its kernel
	# answers ICMP port unreachable (rate-limited), quoting the report
	n_rep=$(rows "$H" '.["longhaul.report.version"][0] == "1" and (has("icmp.type") | not)' \
		frame.number | grep -c .)
	n_icmp=$(rows "$H" '.["ip.src"] == ["10.1.0.10", "10.2.0.10"] and
		.["icmp.type"][0] == "3" and .["icmp.code"][0] == "3" and
		.["longhaul.report.magic"][0] == "0x4c48"' frame.number | grep -c .)
	echo "reports at the host: $n_rep, ICMP port unreachable quoting one: $n_icmp"
	[ "$n_rep" -ge 1 ]
	[ "$n_icmp" -ge 1 ]
	[ "$n_icmp" -le "$n_rep" ]
}
