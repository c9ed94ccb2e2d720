# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Shared BATS helpers for longhaul's integration tests. Load with
#   load helpers
# Every test file gets its own name prefix ($LH_PREFIX), so namespaces, links
# and pins of two files (or two runs) never collide. What a test creates
# through these helpers is removed by lh_cleanup, which a file's teardown /
# teardown_file calls.

LH_ROOT=${LH_ROOT:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
O=${O:-$LH_ROOT/build}
case "$O" in /*) ;; *) O=$LH_ROOT/$O ;; esac
LH_BIN=$O/bin
# Short and unique per test file: names of interfaces are at most 15 bytes
LH_PREFIX=${LH_PREFIX:-lh$(printf '%s' "${BATS_TEST_FILENAME:-x}" | md5sum | cut -c1-4)}
LH_STATE=${BATS_FILE_TMPDIR:-/tmp}/lh-state
LH_BPFFS=/sys/fs/bpf
# Default per-command timeout (seconds) for run_t
LH_CMD_TIMEOUT=${LH_CMD_TIMEOUT:-60}

# skip the test unless we are root
lh_require_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root (namespaces, BPF)"
}

# skip unless a command exists
lh_require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "needs $c (make deps installs it)"
	done
}

# make sure the BPF filesystem is mounted (it is not on every fresh machine)
lh_bpffs() {
	mountpoint -q "$LH_BPFFS" || mount -t bpf bpf "$LH_BPFFS"
}

# run_t [SECONDS] CMD...: BATS `run` under a timeout (default LH_CMD_TIMEOUT)
run_t() {
	local t=$LH_CMD_TIMEOUT
	if [[ "$1" =~ ^[0-9]+$ ]]; then
		t=$1
		shift
	fi
	run timeout --kill-after=5 "$t" "$@"
}

# remember something lh_cleanup must undo: lh_track KIND VALUE
lh_track() {
	mkdir -p "$LH_STATE"
	printf '%s %s\n' "$1" "$2" >>"$LH_STATE/track"
}

# lh_ns NAME: create network namespace $LH_PREFIX-NAME (lo up); prints its name
lh_ns() {
	local ns=$LH_PREFIX-$1
	ip netns del "$ns" 2>/dev/null || true
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	lh_track ns "$ns"
	echo "$ns"
}

# lh_veth NS1 IF1 NS2 IF2: a veth pair between two namespaces, both ends up
lh_veth() {
	ip link add "$2" netns "$1" type veth peer name "$4" netns "$3"
	ip -n "$1" link set "$2" up
	ip -n "$3" link set "$4" up
}

# lh_bg NS LOG CMD...: start CMD in namespace NS in the background, tracked
lh_bg() {
	local ns=$1 log=$2
	shift 2
	nsenter --net=/var/run/netns/"$ns" -- "$@" >"$log" 2>&1 &
	lh_track pid $!
	echo $!
}

# lh_pin_dir: a bpffs directory of this test file's own, tracked
lh_pin_dir() {
	local d=$LH_BPFFS/longhaul-test/$LH_PREFIX
	lh_bpffs
	mkdir -p "$d"
	lh_track pin "$d"
	echo "$d"
}

# undo everything tracked, newest first; safe to call twice
lh_cleanup() {
	local kind val
	[ -f "$LH_STATE/track" ] || return 0
	tac "$LH_STATE/track" | while read -r kind val; do
		case "$kind" in
		pid) kill "$val" 2>/dev/null; sleep 0.1; kill -9 "$val" 2>/dev/null ;;
		ns) ip netns pids "$val" 2>/dev/null | xargs -r kill -9 2>/dev/null
		    ip netns del "$val" 2>/dev/null ;;
		pin) rm -rf "$val" ;;
		cmd) eval "$val" ;;
		esac
	done
	rm -f "$LH_STATE/track"
	true
}

# jq_assert JSON FILTER [MESSAGE]: fail unless `jq -e FILTER` holds on JSON
jq_assert() {
	if ! printf '%s' "$1" | jq -e "$2" >/dev/null; then
		echo "assertion failed: ${3:-$2}" >&2
		echo "on: $(printf '%s' "$1" | head -c 4000)" >&2
		return 1
	fi
}

# jq_get JSON FILTER: print jq -r FILTER of JSON
jq_get() {
	printf '%s' "$1" | jq -r "$2"
}
