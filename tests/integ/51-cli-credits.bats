#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `longhaul credits` against pinned credit maps (include/lh_credit.h) that
# hold known entries. The maps are the real credit program's, pinned by an
# idle longhauld --mode credit (BTF and all). Entries are written byte by byte from the struct layouts, so a
# field the CLI reads at a wrong offset shows as a wrong value. Failure
# classes: 3 no pins, 4 a map of the wrong value size.

load helpers
bats_require_minimum_version 1.5.0

# lh ARGS...: run longhaul under a timeout; stdout in $output, stderr in $stderr
lh() {
	run --separate-stderr timeout --kill-after=5 30 "$LH_BIN/longhaul" "$@"
}

# le VALUE BYTES: VALUE as BYTES little-endian hex bytes
le() {
	local v=$1 n=$2 i
	for ((i = 0; i < n; i++)); do
		printf '%02x ' $(((v >> (8 * i)) & 255))
	done
}

# v4 A.B.C.D: an IPv4-mapped address, 16 hex bytes
v4() {
	local IFS=.
	# shellcheck disable=SC2086
	set -- $1
	printf '00 00 00 00 00 00 00 00 00 00 ff ff %02x %02x %02x %02x ' "$1" "$2" "$3" "$4"
}

# key SRC DST QPN: struct lh_qp_key (36 bytes)
key() {
	echo "$(v4 "$1")$(v4 "$2")$(le "$3" 4)"
}

# flow_value FWD_BYTES FWD_PKTS SENT0 SENT1 SENT2 SENT3 HELD_BYTES HELD_PKTS HOLD_FAIL
#            REDIRECTED FIRST_NS LAST_NS FLAGS: struct lh_cr_flow (104 bytes)
flow_value() {
	local v out=
	for v in "${@:1:12}"; do
		out+=$(le "$v" 8)
	done
	echo "$out$(le "${13}" 4)$(le 0 4)"
}

# grant_value STATE ACTIVE NPATHS HOLD_CAP "LIMIT0..3" REL_BYTES REL_PKTS "IFINDEX0..3"
#             "NEXTHOP0..3" "ALIVE0..3": struct lh_cr_grant (152 bytes)
grant_value() {
	local v out
	out="$(le "$1" 4)$(le "$2" 4)$(le "$3" 4)$(le "$4" 4)"
	for v in $5; do out+=$(le "$v" 8); done
	out+="$(le "$6" 8)$(le "$7" 8)"
	for v in $8; do out+=$(le "$v" 4); done
	for v in $9; do out+=$(v4 "$v"); done
	for v in ${10}; do out+=$(le "$v" 1); done
	echo "$out$(le 0 4)"
}

update() {
	# shellcheck disable=SC2086
	bpftool map update pinned "$PIN/$1" key hex $2 value hex $3
}

mono_ns() {
	python3 -c 'import time; print(time.monotonic_ns())'
}

# The credit maps in $1, pinned by a real agent: longhauld --mode credit in a
# namespace of this file with one veth pair, no traffic (it never touches
# entries of flows it does not know)
make_maps() {
	local d=$1 ns i
	ns=$(lh_ns cli)
	ip -n "$ns" link add d0 type veth peer name d1
	ip -n "$ns" addr add 10.9.0.1/24 dev d0
	ip -n "$ns" link set d0 up
	ip -n "$ns" link set d1 up
	lh_bg "$ns" "$BATS_TEST_TMPDIR/agent.log" "$LH_BIN/longhauld" --mode credit --pin-dir "$d" \
		--credit-route 10.9.9.0/24,10.9.0.2,d0 >/dev/null
	for i in $(seq 100); do
		grep -qF '; running (SIGINT' "$BATS_TEST_TMPDIR/agent.log" && return 0
		sleep 0.1
	done
	cat "$BATS_TEST_TMPDIR/agent.log" >&2
	return 1
}

setup() {
	lh_require_root
	lh_require_cmd bpftool jq python3
	[ -x "$LH_BIN/longhaul" ] && [ -x "$LH_BIN/longhauld" ] || skip "no $LH_BIN/longhaul (make)"
	lh_bpffs
	PIN=$(lh_pin_dir)
	make_maps "$PIN"
	NOW=$(mono_ns)
	# 10.0.0.1 -> 10.0.0.2 QPN 0x12: first hop, active on path 0, which it overran
	update lh_cr_flow "$(key 10.0.0.1 10.0.0.2 0x12)" \
		"$(flow_value 100000 100 70000 5000 0 0 9000 9 2 3 $((NOW - 5000000000)) $((NOW - 2000000000)) 1)"
	update lh_cr_grant "$(key 10.0.0.1 10.0.0.2 0x12)" \
		"$(grant_value 1 0 2 65536 "65536 20000 0 0" 4000 4 "1 999999 0 0" \
			"10.1.0.2 10.2.0.2 0.0.0.0 0.0.0.0" "1 0 0 0")"
	# 10.0.0.3 -> 10.0.0.4 QPN 0x34: counted, no grant yet
	update lh_cr_flow "$(key 10.0.0.3 10.0.0.4 0x34)" \
		"$(flow_value 1500 1 1500 0 0 0 0 0 0 0 $NOW $NOW 0)"
	# 10.0.0.5 -> 10.0.0.6 QPN 0x56: last hop
	update lh_cr_flow "$(key 10.0.0.5 10.0.0.6 0x56)" \
		"$(flow_value 3000 2 0 0 0 0 0 0 0 0 $NOW $NOW 0)"
	update lh_cr_grant "$(key 10.0.0.5 10.0.0.6 0x56)" \
		"$(grant_value 2 0 0 0 "0 0 0 0" 0 0 "0 0 0 0" \
			"0.0.0.0 0.0.0.0 0.0.0.0 0.0.0.0" "0 0 0 0")"
}

teardown() {
	lh_cleanup
}

@test "credits: the first hop's flow, every field" {
	lh -j --pin-dir "$PIN" credits
	[ "$status" -eq 0 ]
	j=$(jq '.[] | select(.dqpn == 18)' <<<"$output")
	jq_assert "$j" '.saddr == "10.0.0.1" and .daddr == "10.0.0.2"'
	jq_assert "$j" '.state == "active" and .granted == true and .role == "first"'
	jq_assert "$j" '.active_path == 0'
	jq_assert "$j" '.fwd_bytes == 100000 and .fwd_pkts == 100'
	jq_assert "$j" '.held_bytes == 5000 and .held_pkts == 5' "held now = held - released"
	jq_assert "$j" '.held_total_bytes == 9000 and .held_total_pkts == 9 and .hold_cap == 65536'
	jq_assert "$j" '.hold_fail == 2 and .redirected == 3'
	jq_assert "$j" '.last_age_us >= 2000000 and .last_age_us < 62000000'
	jq_assert "$j" '.first_age_us >= 5000000 and .first_age_us < 65000000'
	jq_assert "$j" '.paths | length == 2'
	jq_assert "$j" '.paths[0] == {index: 0, ifindex: 1, ifname: "lo", nexthop: "10.1.0.2",
		alive: true, active: true, limit: 65536, sent: 70000, credit: -4464}'
	jq_assert "$j" '.paths[1] == {index: 1, ifindex: 999999, ifname: null, nexthop: "10.2.0.2",
		alive: false, active: false, limit: 20000, sent: 5000, credit: 15000}'
}

@test "credits: a flow without a grant is pending; a last hop has no paths" {
	lh -j --pin-dir "$PIN" credits
	[ "$status" -eq 0 ]
	jq_assert "$output" 'length == 3 and ([.[].dqpn] == [18, 52, 86])' "sorted by key"
	p=$(jq '.[] | select(.dqpn == 52)' <<<"$output")
	jq_assert "$p" '.state == "pending" and .granted == false and .role == "transit"'
	jq_assert "$p" '.active_path == null and .hold_cap == null and .held_bytes == 0'
	jq_assert "$p" '.paths == [{index: 0, ifindex: null, ifname: null, nexthop: null,
		alive: null, active: null, limit: null, sent: 1500, credit: null}]'
	l=$(jq '.[] | select(.dqpn == 86)' <<<"$output")
	jq_assert "$l" '.state == "last" and .role == "last" and .paths == [] and .fwd_bytes == 3000'
}

@test "credits show --key: one flow; text output names state and path" {
	lh -j --pin-dir "$PIN" credits show --key 10.0.0.1,10.0.0.2,0x12
	[ "$status" -eq 0 ]
	jq_assert "$output" 'length == 1 and .[0].paths[0].credit == -4464'
	lh --pin-dir "$PIN" credits show --key 10.0.0.9,10.0.0.2,0x12
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"no flow 10.0.0.9,10.0.0.2,0x12 in lh_cr_flow"* ]]
	lh --pin-dir "$PIN" credits
	[ "$status" -eq 0 ]
	[[ "$output" == *"flow 0x000012  10.0.0.1 -> 10.0.0.2  active  first"* ]]
	[[ "$output" == *"pending (no grant)"* ]]
	[[ "$output" =~ path\ 0\ +0\ +1\ +lo\ +10\.1\.0\.2 ]]
}

@test "credits stats: lh_cr_stats summed over CPUs, by name" {
	# struct lh_cr_stats: field 6 (forwarded) is 7, the others 0
	bpftool map update pinned "$PIN/lh_cr_stats" key hex 00 00 00 00 \
		value hex $(le 0 48) $(le 7 8) $(le 0 56)
	lh -j --pin-dir "$PIN" credits stats
	[ "$status" -eq 0 ]
	cpus=$(jq_get "$output" .cpus)
	# bpftool writes the value to every CPU
	jq_assert "$output" ".counters.forwarded.value == 7 * $cpus"
	# zero counters are hidden; a frame of the kernel's (an ND or MLD) may have
	# passed the idle agent's program meanwhile: pkts and non_roce may show
	jq_assert "$output" '[.counters[].value] | all(. > 0)' "zero counters hidden"
	jq_assert "$output" '.counters | keys - ["forwarded", "pkts", "non_roce"] == []' \
		"only forwarded and the kernel's own frames"
	# --all shows the zero ones too
	lh -j --pin-dir "$PIN" credits stats --all
	jq_assert "$output" '.counters | length == 14 and .table_full.value == 0 and .redirect_fail.value == 0'
}

@test "credits: no pins is exit 3, a map of the wrong size exit 4" {
	lh -j --pin-dir "$PIN/none" credits
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"lh_cr_flow is not pinned"* ]]
	[ -z "$output" ]
	d=$PIN/bad
	mkdir -p "$d"
	bpftool map create "$d/lh_cr_flow" type hash key 36 value 96 entries 4 name lh_cr_flow
	bpftool map create "$d/lh_cr_grant" type hash key 36 value 152 entries 4 name lh_cr_grant
	lh -j --pin-dir "$d" credits
	[ "$status" -eq 4 ]
	[[ "$stderr" == *"96-byte values, this build expects 36 and 104"* ]]
	[ -z "$output" ]
	lh --pin-dir "$d" credits stats
	[ "$status" -eq 3 ]
}
