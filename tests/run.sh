#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Test runner behind `make test`, `make test-unit` and `make test-integ`.
#
#   tests/run.sh unit|integ|all [FILTER]
#
# Every test speaks TAP: the C unit tests ($O/tests/unit/test_*), the Python
# oracle tests (tests/unit/test_*.py, run with Debian's /usr/bin/python3 so
# that python3-scapy is importable), and BATS files (tests/unit/*.bats,
# tests/integ/*.bats). The runner streams their output, counts ok / not ok /
# skip, treats a crash, a timeout or a missing plan as a failure, and ends
# with one line: "N passed, N failed, N skipped". FILTER keeps files whose
# name contains it. Exit status 0 only when nothing failed.
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
export O LH_ROOT=$PWD LH_BIN=$O/bin
what=${1:-all}
filter=${2:-}
file_timeout=${LH_TEST_FILE_TIMEOUT:-1200}

# The unit tests pin their maps (tests/unit/lib/bpf_harness.c) as the
# integration tests do: a machine that boots without systemd has no BPF
# filesystem mounted (test_datapath: "mkdir /sys/fs/bpf/longhaul-test/unit-N:
# No such file or directory" in a CI run on such a machine)
if [ "$(id -u)" -eq 0 ] && ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf || echo "warning: cannot mount the BPF filesystem" >&2
fi

passed=0 failed=0 skipped=0
failed_files=()

# run_tap NAME CMD...: run one TAP producer and add up its results
run_tap() {
	local name=$1 out status p f s plan
	shift
	printf '\n=== %s\n' "$name"
	out=$(mktemp)
	timeout --kill-after=15 "$file_timeout" "$@" </dev/null 2>&1 | tee "$out"
	status=${PIPESTATUS[0]}
	read -r p f s plan < <(awk '
		/^ok / { if (tolower($0) ~ /# skip/) s++; else p++ }
		/^not ok / { if (tolower($0) ~ /# todo/) s++; else f++ }
		/^1\.\.[0-9]+/ { split($1, a, "\\.\\."); plan = a[2] }
		END { printf "%d %d %d %s\n", p, f, s, (plan == "" ? "-" : plan) }' "$out")
	rm -f "$out"
	if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
		echo "not ok - $name: timed out after ${file_timeout}s"
		f=$((f + 1))
	elif [ "$plan" = "-" ]; then
		echo "not ok - $name: no TAP plan (exit status $status)"
		f=$((f + 1))
	elif [ $((p + f + s)) -ne "$plan" ]; then
		echo "not ok - $name: planned $plan tests, ran $((p + f + s)) (exit status $status)"
		f=$((f + 1))
	elif [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name: exit status $status"
		f=$((f + 1))
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	[ "$f" -eq 0 ] || failed_files+=("$name")
}

want() { [ -z "$filter" ] || [[ "$1" == *"$filter"* ]]; }

run_unit() {
	local t
	for t in "$O"/tests/unit/test_*; do
		[ -x "$t" ] && want "$t" || continue
		run_tap "unit/$(basename "$t")" "$t"
	done
	for t in tests/unit/test_*.py; do
		[ -f "$t" ] && want "$t" || continue
		run_tap "unit/$(basename "$t")" /usr/bin/python3 "$t"
	done
	for t in tests/unit/*.bats; do
		[ -f "$t" ] && want "$t" || continue
		run_tap "unit/$(basename "$t")" bats --tap "$t"
	done
}

run_integ() {
	local t
	for t in tests/integ/*.bats; do
		[ -f "$t" ] && want "$t" || continue
		run_tap "integ/$(basename "$t")" bats --tap "$t"
	done
}

if [ "$(id -u)" -ne 0 ]; then
	echo "warning: not root: tests that load BPF programs or build namespaces will fail or skip" >&2
fi

case "$what" in
unit) run_unit ;;
integ) run_integ ;;
all)
	run_unit
	run_integ
	;;
*)
	echo "usage: $0 unit|integ|all [FILTER]" >&2
	exit 2
	;;
esac

echo
if [ "${#failed_files[@]}" -gt 0 ]; then
	echo "failed: ${failed_files[*]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
