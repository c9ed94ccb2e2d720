# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Shared by the end-to-end bench scripts (tests/bench/*.bench.sh): namespaces of
# a topology under prefix $P, agents started in them and stopped at exit, and
# the rows of the bench JSON (tests/bench/run.sh). Source it after setting P
# and TOPO; it sets TMP (removed at exit) and AGENTS.

TMP=$(mktemp -d)
AGENTS=()
rows=()

ex() { nsenter --net="/var/run/netns/$P-$1" -- "${@:2}"; }

# agents_down: SIGTERM every agent started, wait for each
agents_down() {
	local pid
	for pid in "${AGENTS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	AGENTS=()
}

bench_cleanup() {
	agents_down
	"$TOPO" down --prefix "$P" -q >/dev/null 2>&1 || true
	rm -rf "$TMP"
}
trap bench_cleanup EXIT

# agent_start NODE ARGS...: longhauld ARGS in NODE, log $TMP/NODE.log (nsenter execs
# it: $! is the agent itself)
agent_start() {
	nsenter --net="/var/run/netns/$P-$1" -- "$BIN/longhauld" "${@:2}" >"$TMP/$1.log" 2>&1 &
	AGENTS+=($!)
}

# agents_wait NODE...: until each agent says it runs (10 s each), else its log and 1
agents_wait() {
	local n i
	for n in "$@"; do
		for i in $(seq 100); do
			grep -qF '; running (SIGINT' "$TMP/$n.log" && break
			sleep 0.1
		done
		grep -qF '; running (SIGINT' "$TMP/$n.log" || { cat "$TMP/$n.log" >&2; return 1; }
	done
}

# add CASE METRIC UNIT VALUE BASELINE_CASE RATIO RUNS SPREAD: one row
add() {
	rows+=("$(jq -cn --arg c "$1" --arg m "$2" --arg u "$3" --argjson v "$4" --arg b "$5" \
		--argjson r "$6" --argjson n "$7" --argjson s "$8" \
		'{case: $c, metric: $m, unit: $u, value: $v, baseline: (if $b == "" then null else $b end),
		  ratio: $r, runs: $n, spread: $s}')")
}

# ratio VALUE BASELINE: VALUE / BASELINE (0 when the baseline is 0)
ratio() { awk -v g="$1" -v b="$2" 'BEGIN { print (b > 0 ? g / b : 0) }'; }
