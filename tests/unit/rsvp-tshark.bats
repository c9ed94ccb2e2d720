#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# RSVP credit-based flow control messages (user/lib/rsvp.h, docs/rsvp.md)
# through tshark. `test_rsvp --pcap` encodes one message of each type over
# IPv4 and IPv6, messages with unknown objects, five the decoder refuses and
# two signed with RFC 2747's INTEGRITY object, and prints its decoder's
# verdict per frame. Two readers check them (and Python's hmac module the
# signed frames' digests):
#  - Wireshark's own RSVP dissector (an oracle nobody here wrote): version,
#    type, length, checksum, and every RFC 2205 / RFC 2961 object it knows;
#  - user/wireshark/longhaul-rsvp.lua: the draft's types by name, the Credit
#    and RDMA_QP objects, and the same reason as the C decoder for each
#    refused message.

setup_file() {
	LH_ROOT=${LH_ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
	O=${O:-$LH_ROOT/build}
	case "$O" in /*) ;; *) O=$LH_ROOT/$O ;; esac
	export LH_ROOT O
	command -v tshark >/dev/null || return 0
	[ -x "$O/tests/unit/test_rsvp" ] || return 0
	"$O/tests/unit/test_rsvp" --pcap "$BATS_FILE_TMPDIR/rsvp.pcap" >"$BATS_FILE_TMPDIR/verdicts"
}

setup() {
	command -v tshark >/dev/null || skip "tshark not installed (make deps)"
	tshark -v 2>/dev/null | grep -q "with Lua" || skip "this tshark is built without Lua"
	[ -s "$BATS_FILE_TMPDIR/verdicts" ] || skip "build/tests/unit/test_rsvp missing: run make"
	CAP=$BATS_FILE_TMPDIR/rsvp.pcap
	TSV=$BATS_FILE_TMPDIR/rsvp.tsv
	LUA=$LH_ROOT/user/wireshark/longhaul-rsvp.lua
	[ -s "$TSV" ] || decode
}

# Every field a test reads: the capture is decoded once (tshark is slow to start)
FIELDS=(frame.number ip.proto ipv6.nxt ip.ttl rsvp.version rsvp.msg rsvp.message_length
	rsvp.sending_ttl rsvp.session.ip rsvp.session.proto rsvp.session.port
	rsvp.session.destination_address rsvp.session.destination_port rsvp.sender.ip
	rsvp.sender.port rsvp.template_filter.source_address_ipv6 rsvp.hop.neighbor_address_ipv4
	rsvp.neighbor_address_ipv6 rsvp.hop.logical_interface rsvp.refresh_interval
	rsvp.message_id.epoch rsvp.message_id.message_id rsvp.message_id.flags
	rsvp.message_id_ack.epoch rsvp.message_id_ack.message_id rsvp.error.error_code
	rsvp.error.error_node_ipv4 rsvp.object rsvp.obj_private.enterprise
	longhaul_rsvp longhaul.rsvp.msg_type longhaul.rsvp.checksum.good longhaul.rsvp.flow.src
	longhaul.rsvp.flow.dst longhaul.rsvp.flow.dqpn longhaul.rsvp.hop longhaul.rsvp.lih
	longhaul.rsvp.credit.enterprise longhaul.rsvp.credit.unit longhaul.rsvp.credit.flags
	longhaul.rsvp.credit.init longhaul.rsvp.credit.heartbeat longhaul.rsvp.credit.probe
	longhaul.rsvp.credit.accepted longhaul.rsvp.credit.value longhaul.rsvp.credit.limit longhaul.rsvp.credit.bytes longhaul.rsvp.qp.dqpn
	longhaul.rsvp.ignored longhaul.rsvp.forwarded longhaul.rsvp.malformed rsvp.integrity.flags
	rsvp.integrity.key_identifier rsvp.integrity.sequence_number rsvp.integrity.hash
	longhaul.rsvp.integrity.key_id longhaul.rsvp.integrity.seq _ws.col.Info
	_ws.expert.message _ws.malformed _ws.lua.error)

# tshark_lua ARGS...: tshark with the dissector; a Lua error on stderr fails the call
tshark_lua() {
	local err=$BATS_TEST_TMPDIR/tshark.err
	timeout 60 tshark -X lua_script:"$LUA" "$@" 2>"$err" || { cat "$err" >&2; return 1; }
	if grep -i "lua" "$err" >&2; then
		return 1
	fi
}

decode() {
	local f args=()
	for f in "${FIELDS[@]}"; do
		args+=(-e "$f")
	done
	tshark_lua -r "$CAP" -T fields -E separator='|' -E occurrence=a -E aggregator=, \
		"${args[@]}" >"$TSV.tmp" && mv "$TSV.tmp" "$TSV"
}

# fx FRAME FIELD...: the fields' values in frame FRAME, joined by '|' (repeats by ',')
fx() {
	local n=$1 f i cols=()
	shift
	for f in "$@"; do
		for i in "${!FIELDS[@]}"; do
			[ "${FIELDS[$i]}" = "$f" ] && cols+=($((i + 1)))
		done
	done
	[ "${#cols[@]}" -eq "$#" ] || { echo "fx: a field is not in FIELDS: $*" >&2; return 1; }
	awk -F'|' -v n="$n" -v c="${cols[*]}" '$1 == n {
		k = split(c, col, " "); s = ""
		for (j = 1; j <= k; j++) s = s (j > 1 ? "|" : "") $col[j]
		print s }' "$TSV"
}

# reason FRAME: the reason in longhaul-rsvp.lua's malformed expert, or "ok"
reason() {
	local m
	m=$(fx "$1" _ws.expert.message | grep -o 'Malformed RSVP message ([a-z_]*)' | head -1)
	if [ -z "$m" ]; then
		echo ok
	else
		m=${m#*(}
		echo "${m%)}"
	fi
}

@test "the decoder's own verdicts on the capture: 17 valid messages, 5 refused for their reason" {
	run cat "$BATS_FILE_TMPDIR/verdicts"
	[ "${#lines[@]}" -eq 22 ]
	[ "$(awk '$3 == "ok"' <<<"$output" | wc -l)" -eq 17 ]
	[ "$(awk '$1 >= 14 && $1 <= 18 { printf "%s ", $3 }' <<<"$output")" = \
		"checksum unknown_class missing not_allowed obj_value " ]
}

@test "Wireshark's RSVP dissector: version 1, types 28-31, lengths, TTLs, IP protocol 46" {
	local n want type
	# frames 1-10: Path init, Reserve (initial), Reserve (credit return), End, End ACK, twice
	want=(28 29 29 30 31 28 29 29 30 31)
	for n in $(seq 1 10); do
		type=${want[$((n - 1))]}
		run fx "$n" rsvp.version rsvp.msg rsvp.sending_ttl
		[ "$output" = "1|$type|255" ] || { echo "frame $n: $output"; return 1; }
	done
	[ "$(fx 1 ip.proto ip.ttl rsvp.message_length)" = "46|255|76" ]
	[ "$(fx 6 ipv6.nxt rsvp.message_length)" = "46|112" ]
	[ "$(fx 3 rsvp.message_length)" = "92" ]
	[ "$(fx 11 rsvp.msg rsvp.error.error_code rsvp.error.error_node_ipv4)" = "3|13|192.168.7.1" ]
}

@test "Wireshark's RSVP dissector finds every checksum correct but the one spoiled on purpose" {
	run bash -c "timeout 60 tshark -V -r '$CAP' 2>/dev/null | grep 'Message Checksum:'"
	[ "${#lines[@]}" -eq 22 ]
	[ "$(grep -c '\[correct\]' <<<"$output")" -eq 21 ]
	[ "$(grep -n 'incorrect' <<<"$output" | cut -d: -f1)" = 14 ]
}

@test "Wireshark's RSVP dissector reads the standard objects of an IPv4 Path init and End ACK" {
	run fx 1 rsvp.session.ip rsvp.session.proto rsvp.session.port rsvp.sender.ip rsvp.sender.port \
		rsvp.hop.neighbor_address_ipv4 rsvp.hop.logical_interface rsvp.refresh_interval \
		rsvp.message_id.epoch rsvp.message_id.message_id rsvp.obj_private.enterprise
	[ "$output" = "10.0.1.2|17|4791|10.0.0.1|0|192.168.7.1|2|30|11259375|1028|32473" ]
	# object order as encoded: MESSAGE_ID, SESSION, RDMA_QP, RSVP_HOP, TIME_VALUES, SENDER_TEMPLATE
	[ "$(fx 1 rsvp.object)" = "23,1,125,3,5,11" ]
	run fx 5 rsvp.message_id_ack.epoch rsvp.message_id_ack.message_id rsvp.object
	[ "$output" = "1193046|1030|24,1,125,3,10" ]
	# End: MESSAGE_ID with ACK_Desired
	[ "$(fx 4 rsvp.message_id.flags rsvp.message_id.message_id)" = "1|1030" ]
}

@test "Wireshark's RSVP dissector reads the IPv6 forms of SESSION, RSVP_HOP, SENDER_TEMPLATE" {
	run fx 6 rsvp.session.destination_address rsvp.session.destination_port \
		rsvp.neighbor_address_ipv6 rsvp.template_filter.source_address_ipv6
	[ "$output" = "fd00:1::2|4791|fd07::1|fd00::1" ]
}

@test "longhaul-rsvp.lua names the draft's message types and the flow of every frame" {
	local n want=(28 29 29 30 31 28 29 29 30 31 3)
	for n in $(seq 1 11); do
		run fx "$n" longhaul.rsvp.msg_type longhaul.rsvp.checksum.good longhaul.rsvp.flow.dqpn
		[ "$output" = "${want[$((n - 1))]}|1|0x001234" ] || { echo "frame $n: $output"; return 1; }
	done
	[ "$(fx 1 longhaul.rsvp.flow.src longhaul.rsvp.flow.dst longhaul.rsvp.hop longhaul.rsvp.lih)" = \
		"10.0.0.1|10.0.1.2|192.168.7.1|2" ]
	[ "$(fx 10 longhaul.rsvp.flow.src longhaul.rsvp.flow.dst longhaul.rsvp.hop)" = \
		"fd00::1|fd00:1::2|fd07::1" ]
	[[ "$(fx 1 _ws.col.Info)" == "CB Path init: 10.0.0.1 -> 10.0.1.2 QP 0x001234"* ]]
	[[ "$(fx 4 _ws.col.Info)" == "CB End: "* ]]
	[[ "$(fx 5 _ws.col.Info)" == "CB End ACK: "* ]]
	[ "$(fx 1 longhaul.rsvp.qp.dqpn)" = "0x001234" ]
}

@test "longhaul-rsvp.lua decodes the Credit object: initial 4 MB, then a 64 KiB credit return" {
	run fx 2 longhaul.rsvp.credit.enterprise longhaul.rsvp.credit.unit longhaul.rsvp.credit.flags \
		longhaul.rsvp.credit.init longhaul.rsvp.credit.heartbeat longhaul.rsvp.credit.value \
		longhaul.rsvp.credit.limit longhaul.rsvp.credit.bytes
	[ "$output" = "32473|20|0x01|1|0|4|4|4194304" ]
	run fx 3 longhaul.rsvp.credit.unit longhaul.rsvp.credit.flags longhaul.rsvp.credit.value \
		longhaul.rsvp.credit.limit longhaul.rsvp.credit.bytes
	[ "$output" = "0|0x00|65536|4295032832|65536" ]
	[ "$(fx 8 longhaul.rsvp.credit.value longhaul.rsvp.credit.limit)" = "65536|4295032832" ]
	[[ "$(fx 2 _ws.col.Info)" == *"credit 4 x 2^20 B (initial)" ]]
}

@test "longhaul-rsvp.lua decodes a Path probe and its answer, the Credit object with Accepted" {
	run fx 19 rsvp.msg longhaul.rsvp.msg_type longhaul.rsvp.credit.probe longhaul.rsvp.credit.limit \
		longhaul.rsvp.credit.accepted rsvp.object
	[ "$output" = "28|28|1|5000000||23,1,125,3,5,11,124" ]
	run fx 20 rsvp.msg rsvp.message_length longhaul.rsvp.credit.probe longhaul.rsvp.credit.value \
		longhaul.rsvp.credit.accepted rsvp.message_id_ack.message_id
	[ "$output" = "29|112|0|65536|4294971392|1040" ]
	[[ "$(fx 19 _ws.col.Info)" == *"(probe)"* ]]
	[[ "$(fx 20 _ws.col.Info)" == *"accepted 4294971392"* ]]
	[ "$(reason 19)|$(reason 20)" = "ok|ok" ]
}

@test "unknown classes: 11bbbbbb counted to forward, 10bbbbbb counted as ignored, both valid" {
	[ "$(fx 12 longhaul.rsvp.forwarded longhaul.rsvp.ignored rsvp.object)" = "1||23,1,125,3,10,124,200" ]
	[ "$(fx 13 longhaul.rsvp.forwarded longhaul.rsvp.ignored rsvp.object)" = "|1|23,1,125,3,10,124,150" ]
	[ "$(reason 12)" = ok ]
	[ "$(reason 13)" = ok ]
}

@test "longhaul-rsvp.lua refuses each malformed message for the reason the C decoder gives" {
	local n c_reason
	for n in $(seq 1 22); do
		c_reason=$(awk -v n="$n" '$1 == n { print $3 }' "$BATS_FILE_TMPDIR/verdicts")
		[ "$(reason "$n")" = "$c_reason" ] ||
			{ echo "frame $n: lua '$(reason "$n")', C '$c_reason'"; return 1; }
	done
	[[ "$(fx 14 _ws.col.Info)" == "CB Reserve [Malformed: checksum"* ]]
	[[ "$(fx 15 _ws.col.Info)" == *"class 100 C-Type 1"* ]]
}

@test "no Lua error; malformed (expert group) exactly on the refused frames; with longhaul.lua too" {
	local n
	for n in $(seq 1 22); do
		[ -z "$(fx "$n" _ws.lua.error)" ] || { echo "frame $n: Lua error"; return 1; }
		if [ "$n" -le 13 ] || [ "$n" -ge 19 ]; then
			[ -z "$(fx "$n" _ws.malformed)" ] || { echo "frame $n malformed"; return 1; }
		else
			[ -n "$(fx "$n" _ws.malformed)" ] || { echo "frame $n not malformed"; return 1; }
		fi
	done
	run tshark_lua -X lua_script:"$LH_ROOT/user/wireshark/longhaul.lua" -r "$CAP" -Y longhaul_rsvp \
		-T fields -e frame.number
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 22 ]
}

@test "Wireshark's RSVP dissector reads the INTEGRITY object (RFC 2747) first in the signed frames" {
	# key id 0x123456789abc, sequence numbers 0x0123456789abcdef and the next, no Handshake flag
	run fx 21 rsvp.integrity.flags rsvp.integrity.key_identifier rsvp.integrity.sequence_number
	[ "$output" = "0x00|123456789abc|81985529216486895" ]
	run fx 22 rsvp.integrity.key_identifier rsvp.integrity.sequence_number rsvp.message_length
	[ "$output" = "123456789abc|81985529216486896|128" ]
	# class 4 right after the common header, the message's objects after it as unsigned
	[ "$(fx 21 rsvp.object)" = "4,23,1,125,3,5,11" ]
	[ "$(fx 22 rsvp.object)" = "4,23,1,125,3,10,124" ]
	run fx 22 longhaul.rsvp.integrity.key_id longhaul.rsvp.integrity.seq longhaul.rsvp.credit.value
	[ "$output" = "0x0000123456789abc|81985529216486896|65536" ]
	[ "$(reason 21)|$(reason 22)" = "ok|ok" ]
	# frames without INTEGRITY have none
	[ -z "$(fx 1 rsvp.integrity.key_identifier)" ]
}

@test "Python's hmac module computes each signed frame's digest as Wireshark shows it" {
	local n want got
	for n in 21 22; do
		want=$(fx "$n" rsvp.integrity.hash)
		# HMAC-MD5 (key 00 11 .. ff) over the RSVP message with checksum and digest zero
		got=$(python3 - "$CAP" "$n" <<'PY'
import hmac, struct, sys
data = open(sys.argv[1], "rb").read()
off, frame = 24, 0
while off < len(data):
    incl = struct.unpack_from("<I", data, off + 8)[0]
    pkt = data[off + 16:off + 16 + incl]
    off += 16 + incl
    frame += 1
    if frame == int(sys.argv[2]):
        break
msg = bytearray(pkt[(pkt[0] & 0x0f) * 4:])
msg[2:4] = b"\0\0"
msg[28:44] = bytes(16)  # INTEGRITY at 8: header 4, flags, reserved, key id 6, sequence 8
key = bytes.fromhex("00112233445566778899aabbccddeeff")
print(hmac.new(key, bytes(msg), "md5").hexdigest())
PY
)
		echo "frame $n: wireshark $want, python $got"
		[ -n "$want" ]
		[ "$got" = "$want" ]
	done
}
