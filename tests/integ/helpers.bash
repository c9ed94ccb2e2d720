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

# ---------------------------------------------------------------- topologies
# A test file builds one topology in setup_file with lh_topo_up and removes it
# in teardown_file with lh_topo_down (lh_cleanup does it too). lh_topo_up
# again with other options converges the same topology (only what changed is
# redone: lhwan restarts if its options differ).

LH_TOPO_DIR=$LH_ROOT/topologies
export LHWAN=${LHWAN:-$LH_BIN/lhwan}

# lh_topo_up KIND [OPTIONS...]: topologies/KIND.sh up with this file's prefix
lh_topo_up() {
	local kind=$1 out
	shift
	mkdir -p "$LH_STATE"
	if ! out=$(timeout --kill-after=5 120 "$LH_TOPO_DIR/$kind.sh" up --prefix "$LH_PREFIX" -q "$@" 2>&1); then
		echo "lh_topo_up $kind $*: failed" >&2
		echo "$out" >&2
		return 1
	fi
	echo "$kind" >"$LH_STATE/topo"
	grep -qs "^cmd $LH_TOPO_DIR/$kind.sh down" "$LH_STATE/track" ||
		lh_track cmd "$LH_TOPO_DIR/$kind.sh down --prefix $LH_PREFIX -q"
}

# lh_topo_down: remove the topology this file built
lh_topo_down() {
	local kind
	kind=$(cat "$LH_STATE/topo" 2>/dev/null) || return 0
	timeout --kill-after=5 60 "$LH_TOPO_DIR/$kind.sh" down --prefix "$LH_PREFIX" -q
	rm -f "$LH_STATE/topo"
}

# lh_topo_status: the topology's status as JSON
lh_topo_status() {
	local kind
	kind=$(cat "$LH_STATE/topo")
	timeout --kill-after=5 60 "$LH_TOPO_DIR/$kind.sh" status --prefix "$LH_PREFIX" -j
}

# lh_exec NODE CMD...: run CMD in this file's namespace NODE (bpffs stays visible)
lh_exec() {
	local node=$1
	shift
	nsenter --net="/var/run/netns/$LH_PREFIX-$node" -- "$@"
}

# lh_wan_stats [BUMP]: fresh lhwan stats of an emulator namespace (default
# wan): SIGUSR1 makes lhwan rewrite its stats file; wait for the new one
lh_wan_stats() {
	local d=/run/longhaul/topo/$LH_PREFIX b=${1:-wan} pid old
	pid=$(cat "$d/$b.pid")
	old=$(jq .uptime_s "$d/$b.stats.json")
	kill -USR1 "$pid"
	for _ in $(seq 100); do
		sleep 0.02
		[ "$(jq .uptime_s "$d/$b.stats.json" 2>/dev/null)" != "$old" ] && break
	done
	cat "$d/$b.stats.json"
}

# lh_wan_loss on|off [BUMP]: the emulator's loss rules applied or paused
# (SIGUSR2 toggles them; its stats say which holds)
lh_wan_loss() {
	local d=/run/longhaul/topo/$LH_PREFIX b=${2:-wan} want=false
	[ "$1" = off ] && want=true
	[ "$(lh_wan_stats "$b" | jq .loss_paused)" = "$want" ] && return 0
	kill -USR2 "$(cat "$d/$b.pid")"
	[ "$(lh_wan_stats "$b" | jq .loss_paused)" = "$want" ] ||
		{ echo "lhwan in $b: loss still not $1" >&2; return 1; }
}

# lh_probe FROM TO DST_ADDR [SEND OPTIONS...]: numbered packets from node FROM
# to node TO; prints the receiver's JSON. LH_PROBE_RECV holds extra receiver
# options (e.g. "--raw --dev dc --list-lost").
lh_probe() {
	local from=$1 to=$2 dst=$3 rdy out pid
	shift 3
	rdy=$(mktemp -u "${BATS_FILE_TMPDIR:-/tmp}/probe-ready.XXXXXX")
	out=$(mktemp "${BATS_FILE_TMPDIR:-/tmp}/probe-out.XXXXXX")
	# shellcheck disable=SC2086
	timeout --kill-after=5 120 nsenter --net="/var/run/netns/$LH_PREFIX-$to" -- \
		"$LHWAN" probe recv --idle 700ms --ready-file "$rdy" ${LH_PROBE_RECV:-} \
		>"$out" 2>&1 3>&- </dev/null &
	pid=$!
	for _ in $(seq 100); do
		[ -e "$rdy" ] && break
		sleep 0.02
	done
	if ! timeout --kill-after=5 120 nsenter --net="/var/run/netns/$LH_PREFIX-$from" -- \
		"$LHWAN" probe send --dst "$dst" "$@" >/dev/null; then
		kill "$pid" 2>/dev/null
		echo "probe send failed" >&2
		return 1
	fi
	wait "$pid" || { cat "$out" >&2; return 1; }
	rm -f "$rdy"
	cat "$out"
	rm -f "$out"
}

# lh_near VALUE EXPECTED TOLERANCE [WHAT]: |VALUE - EXPECTED| <= TOLERANCE
lh_near() {
	if ! awk -v v="$1" -v e="$2" -v t="$3" 'BEGIN { d = v - e; if (d < 0) d = -d; exit !(d <= t) }'; then
		echo "${4:-value} $1 is not within $3 of $2" >&2
		return 1
	fi
}

# lh_calc EXPR: awk arithmetic (sqrt, etc.), printed with 6 significant digits
lh_calc() {
	awk "BEGIN { printf \"%.6g\\n\", $1 }"
}

# lh_netns NODE: the namespace file of this file's NODE (for nsenter --net= under run_t)
lh_netns() {
	printf '/var/run/netns/%s-%s' "$LH_PREFIX" "$1"
}
