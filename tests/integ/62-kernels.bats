#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Which kernels accept longhaul's BPF: a qemu guest boots Debian's 6.1 kernel
# (bookworm's linux-image-amd64) and, inside it, tests/interop/kernel-check.sh
# loads every $O/bpf/*.bpf.o, runs the BPF unit tests and longhauld. One
# guest run for the file (about 35 s under TCG), in setup_file; the tests
# assert on its JSON. A program the 6.1 verifier refuses is a finding
# (printed with the verifier's reason, docs/operations.md "Kernel support");
# a program that loads there today and stops loading is a failure. Today all
# do, and longhauld runs in lr2 mode there.
# LH_KERNEL_CHECK_BPO=1 also boots bookworm-backports' 6.12 (about 45 s more).

load helpers

KCHECK=$LH_ROOT/tests/interop/kernel-check.sh

# Programs the 6.1 verifier accepts today (object:program). Add to the list
# when a fix makes another load; never remove one to make the test pass.
LOADS_ON_61=(
	baseline:lh_bare_pass baseline:lh_bare_tx baseline:lh_bare_tc
	observe:lh_observe
	wan_tc:lh_wan_in
	credit_tc:lh_cr_out
	dc_tc:lh_dc_in dc_tc:lh_dc_out dc_tc:lh_dc_kick dc_tc:lh_dc_cmd dc_xdp:lh_dc_xdp
	wan_xdp:lh_wan_xdp
)
# ... and bookworm-backports' 6.12
LOADS_ON_612=("${LOADS_ON_61[@]}")

setup_file() {
	lh_require_root
	command -v qemu-system-x86_64 >/dev/null ||
		skip "qemu-system-x86_64 missing: no guest can run (make deps installs it)"
	qemu-system-x86_64 -accel help 2>/dev/null | grep -qw tcg ||
		skip "this qemu has no TCG accelerator: no guest can run"
	compgen -G "$O/bpf/*.bpf.o" >/dev/null || skip "no BPF objects in $O/bpf (make first)"
	KC_STATUS=0
	O=$O timeout --kill-after=10 420 "$KCHECK" -q --logs "$BATS_FILE_TMPDIR/k61" \
		>"$BATS_FILE_TMPDIR/k61.json" 2>"$BATS_FILE_TMPDIR/k61.err" || KC_STATUS=$?
	echo "$KC_STATUS" >"$BATS_FILE_TMPDIR/k61.status"
	if [ "${LH_KERNEL_CHECK_BPO:-0}" = 1 ]; then
		KC_STATUS=0
		O=$O timeout --kill-after=10 420 "$KCHECK" -q --backports --logs "$BATS_FILE_TMPDIR/k612" \
			>"$BATS_FILE_TMPDIR/k612.json" 2>"$BATS_FILE_TMPDIR/k612.err" || KC_STATUS=$?
		echo "$KC_STATUS" >"$BATS_FILE_TMPDIR/k612.status"
	fi
}

# k61: the 6.1 run's JSON; what a failing test prints about it
k61() {
	K=$(cat "$BATS_FILE_TMPDIR/k61.json")
	KS=$(cat "$BATS_FILE_TMPDIR/k61.status")
	echo "kernel-check exit $KS: $(cat "$BATS_FILE_TMPDIR/k61.err")"
	printf '%s' "$K" | jq -c 'del(.objects)' 2>/dev/null || printf '%s\n' "$K"
}

# keeps_loading JSON LIST...: each object:program of LIST loads, in every
# rodata variant of its object (gateway: lh_verify_icrc 0 and 1); a program
# that loads and is not listed is news worth a line
keeps_loading() {
	local j=$1 p o n
	shift
	for p in "$@"; do
		o=${p%%:*} n=${p#*:}
		jq_assert "$j" "[.objects[] | select(.object == \"$o.bpf.o\") | .programs[] | select(.name == \"$n\")] |
			length > 0 and all(.loaded)" "$o:$n loads on $(jq_get "$j" .kernel)"
	done
	jq_get "$j" '.objects[] | .object as $o | .programs[] | select(.loaded) | "\($o | rtrimstr(".bpf.o")):\(.name)"' |
		sort -u | while read -r p; do
		[[ " $* " == *" $p "* ]] || echo "# now loads on $(jq_get "$j" .kernel): $p (add it to the list)" >&3
	done
}

# tests_pass_where_loaded JSON: each unit test whose objects all load passed
# in the guest; the others are reported
tests_pass_where_loaded() {
	local j=$1 t objs all_load kern
	kern=$(jq_get "$j" .kernel)
	jq_assert "$j" '(.tests | length) > 0'
	for t in $(jq_get "$j" '.tests | keys[]'); do
		objs=$(objects_of "$t" | jq -R . | jq -sc .)
		all_load=$(jq_get "$j" "[.objects[] | select(.rodata == {}) | select(.object as \$o |
			$objs | index(\$o | rtrimstr(\".bpf.o\")))] | length == ($objs | length) and all(.object_loads)")
		if [ "$all_load" = true ]; then
			jq_assert "$j" ".tests.$t | .status == 0 and .failed == 0 and .passed > 0 and
				.passed + .skipped == .planned" "$t passes on $kern (its objects $objs load)"
			echo "# $t: $(jq_get "$j" ".tests.$t.passed") passed in the $kern guest" >&3
		else
			echo "# $t: not asserted, its objects $objs do not all load on $kern ($(jq_get "$j" ".tests.$t | \"\(.passed) passed, \(.failed) failed\""))" >&3
		fi
	done
}

# every_object_tried JSON: one verdict per program of every object of the
# build; the refusals are printed
every_object_tried() {
	local j=$1 want
	want=$(cd "$O/bpf" && ls -- *.bpf.o | jq -R . | jq -sc 'sort')
	jq_assert "$j" "[.objects[] | select(.rodata == {}) | .object] | sort == $want"
	jq_assert "$j" 'all(.objects[]; .nr_programs > 0 and (.programs | length) == .nr_programs)'
	jq_assert "$j" 'all(.objects[].programs[]; .loaded == true or (.errno > 0 and (.error | length) > 0))'
	jq_assert "$j" '.programs.total == .programs.loaded + .programs.refused'
	echo "# $(jq_get "$j" .kernel): $(jq_get "$j" .programs.loaded)/$(jq_get "$j" .programs.total) programs load" >&3
	jq_get "$j" '.refused[] | "#   refused \(.object) \(.program) (\(.section)): \(.reason)"' >&3
}

# objects_of TEST: the objects a unit test opens (quoted names in its source
# that are objects of this build)
objects_of() {
	local src=$LH_ROOT/tests/unit/$1.c n
	for n in $(grep -o '"[a-z_0-9]*"' "$src" | tr -d '"' | sort -u); do
		[ -f "$O/bpf/$n.bpf.o" ] && echo "$n"
	done
}

@test "kernel-check refuses bad input before it boots anything" {
	run_t 20 "$KCHECK" --timeout soon
	[ "$status" -eq 2 ]
	[[ "$output" == *"--timeout"* ]]
	run_t 20 "$KCHECK" --kernel-pkg linux-image-nosuch
	[ "$status" -eq 2 ]
	run_t 20 "$KCHECK" --kernel-pkg linux-image-6.1.0-1-amd64 --backports
	[ "$status" -eq 2 ]
	run_t 20 env O="$BATS_TEST_TMPDIR" "$KCHECK"
	[ "$status" -eq 3 ]
	[[ "$output" == *"no BPF objects"* ]]
}

@test "Debian 6.1 guest boots under qemu and reports" {
	k61
	# 0: all loaded and passed; 1: something refused or failed; 2/3 = no verdict
	[ "$KS" -le 1 ]
	jq_assert "$K" '.error == null and (.kernel | startswith("6.1.")) and .btf == true'
	jq_assert "$K" '.guest_errors == []'
	echo "# $(jq_get "$K" '"\(.kernel) (\(.boot), \(.accel)): booted in \(.boot_s) s, loads \(.load_s) s, wall \(.wall_s) s"')" >&3
}

@test "6.1: every BPF object of the build was tried, every program has a verdict" {
	k61
	every_object_tried "$K"
}

@test "6.1: the programs that load there today keep loading" {
	k61
	keeps_loading "$K" "${LOADS_ON_61[@]}"
}

@test "6.1: the unit tests pass in the guest wherever their objects load" {
	k61
	tests_pass_where_loaded "$K"
}

@test "6.1 has no tcx: the tcx programs that load attach through longhauld's clsact fallback" {
	k61
	jq_assert "$K" '.tc_attach.programs | length > 0'
	# longhauld falls back when tcx fails with EINVAL or EOPNOTSUPP: 6.1 must say one of them
	jq_assert "$K" 'all(.tc_attach.programs[]; .tcx != "attached" and .fallback == true and .clsact == "attached")'
}

@test "6.1: longhauld runs the LR2 data path (XDP, TC through clsact) and observe mode, and leaves nothing" {
	k61
	[ -x "$O/bin/longhauld" ] || skip "no $O/bin/longhauld (make)"
	jq_assert "$K" '.agent.lr2 != null and .agent.observe != null'
	jq_assert "$K" '.agent.lr2.left_behind == [] and .agent.observe.left_behind == []'
	jq_assert "$K" '.agent.lr2.alive and .agent.lr2.exit_status == 0'
	# both XDP programs; lh_dc_in, lh_dc_out and lh_wan_in as cls_bpf filters (no tcx on 6.1)
	jq_assert "$K" '[.agent.lr2.filters[] | select(test("prog/xdp"))] | length == 2'
	jq_assert "$K" 'any(.agent.lr2.filters[]; test("^lhdc ingress .*lh_dc_in")) and
		any(.agent.lr2.filters[]; test("^lhdc egress .*lh_dc_out")) and
		any(.agent.lr2.filters[]; test("^lhwan ingress .*lh_wan_in"))'
	jq_assert "$K" '.agent.observe.alive and .agent.observe.exit_status == 0'
	jq_assert "$K" '[.agent.observe.filters[] | select(test("prog/xdp"))] | length == 2'
}

@test "6.1: an lr2 and a credit longhauld share the DC egress (clsact priorities 1 and 2), and each leaves only with its own filters" {
	k61
	[ -x "$O/bin/longhauld" ] || skip "no $O/bin/longhauld (make)"
	jq_assert "$K" '.agent.coexist.alive and .agent.coexist.exit_status == 0 and
		.agent["coexist-lr2"].exit_status == 0'
	# while both ran: lh_dc_out (lr2, priority 1) before lh_cr_out (credit, priority 2)
	jq_assert "$K" 'any(.agent.coexist.filters[]; test("^lhdc egress .*pref 1 .*lh_dc_out")) and
		any(.agent.coexist.filters[]; test("^lhdc egress .*pref 2 .*lh_cr_out")) and
		any(.agent.coexist.filters[]; test("^lhwan egress .*pref 2 .*lh_cr_out"))'
	# the credit agent stopped: the lr2 agent's filters stayed, none of its own did
	jq_assert "$K" 'any(.agent.coexist.left_behind[]; test("^lhdc egress .*lh_dc_out")) and
		any(.agent.coexist.left_behind[]; test("^lhdc ingress .*lh_dc_in")) and
		any(.agent.coexist.left_behind[]; test("^lhwan ingress .*lh_wan_in")) and
		all(.agent.coexist.left_behind[]; test("lh_cr_out") | not)'
	jq_assert "$K" '[.agent["coexist-lr2"].left_behind[] | select(test(" bpf "))] == []'
}

@test "6.1: longhauld --takeover --reload (a new build) replaces a running agent on clsact: the kept filters get its programs in place, the old agent exits 0, nothing left after" {
	local f='[.[] | select(test("handle 0x1 lh_[a-z_]+.* id [0-9]+")) | capture("id (?<id>[0-9]+)").id]'
	k61
	[ -x "$O/bin/longhauld" ] || skip "no $O/bin/longhauld (make)"
	printf '%s' "$K" | jq -c '.agent["takeover-old"], .agent.takeover'
	jq_assert "$K" '.agent["takeover-old"].exit_status == 0'
	jq_assert "$K" '.agent.takeover.alive and .agent.takeover.exit_status == 0'
	jq_assert "$K" 'any(.agent.takeover.attached[]; test("adopting it"))'
	jq_assert "$K" '[.agent.takeover.attached[] | select(test("adopted tc .clsact"))] | length == 3'
	# the same three filters (lh_dc_in, lh_dc_out, lh_wan_in) before and after, each with
	# another program
	jq_assert "$K" ".agent[\"takeover-old\"].filters | $f | length == 3"
	jq_assert "$K" ".agent.takeover.filters | $f | length == 3"
	jq_assert "$K" "(.agent[\"takeover-old\"].filters | $f) - (.agent.takeover.filters | $f) | length == 3"
	jq_assert "$K" '[.agent.takeover.left_behind[] | select(test(" bpf "))] == []'
}

@test "bookworm-backports 6.12 (LH_KERNEL_CHECK_BPO=1): boots, what loads keeps loading, tests pass where their objects load, longhauld runs lr2" {
	[ "${LH_KERNEL_CHECK_BPO:-0}" = 1 ] || skip "LH_KERNEL_CHECK_BPO=1 boots the 6.12 kernel too"
	K=$(cat "$BATS_FILE_TMPDIR/k612.json")
	KS=$(cat "$BATS_FILE_TMPDIR/k612.status")
	echo "kernel-check exit $KS: $(cat "$BATS_FILE_TMPDIR/k612.err")"
	printf '%s' "$K" | jq -c 'del(.objects)'
	[ "$KS" -le 1 ]
	jq_assert "$K" '.error == null and (.kernel | startswith("6.12.")) and .btf == true'
	echo "# $(jq_get "$K" '"\(.kernel) (\(.boot), \(.accel)): booted in \(.boot_s) s, loads \(.load_s) s, wall \(.wall_s) s"')" >&3
	every_object_tried "$K"
	keeps_loading "$K" "${LOADS_ON_612[@]}"
	tests_pass_where_loaded "$K"
	# 6.12 has tcx
	jq_assert "$K" '(.tc_attach.programs | length) > 0 and all(.tc_attach.programs[]; .tcx == "attached")'
	# longhauld: the LR2 data path, its TC programs on tcx links
	[ -x "$O/bin/longhauld" ] || return 0
	jq_assert "$K" '.agent.lr2.alive and .agent.lr2.exit_status == 0 and .agent.lr2.left_behind == []'
	jq_assert "$K" '[.agent.lr2.filters[] | select(test("prog/xdp"))] | length == 2'
	jq_assert "$K" '[.agent.lr2.attached[] | select(test("attached tcx (ingress|egress) to"))] | length == 3'
}
