#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `make soak` (not in CI; issue 16): a long transfer through both gateways
# while their agents are replaced again and again. two-dc at 2 ms, 1 % random
# loss both ways, 16 QPs of 64 KB messages, NICs of 6 retries (lhperf -R 6)
# for SOAK_MINUTES (default 10). Every SOAK_EVERY seconds (default 60) one
# gateway's agent is replaced, gwa and gwb in turn, by a stop and a start
# (SIGTERM: the data path detaches, the new agent relearns the QPs
# mid-flight), by longhauld --takeover (the data path runs on) and by a stop
# keeping the data path (SIGUSR2) and a start that adopts it, each in turn;
# SOAK_HOW restart, takeover or keep keeps to one. Passes when
# the transfer ends ok, verified, with 0 QP errors, and once it is over the
# pools and tables of both gateways are back to empty (no slot used, no QP
# left after --qp-idle). Prints a line per replacement and a summary.
set -euo pipefail
cd "$(dirname "$0")/../.."
O=${O:-$PWD/build}
case "$O" in /*) ;; *) O=$PWD/$O ;; esac
BIN=$O/bin
P=${SOAK_PREFIX:-lhk}
MINUTES=${SOAK_MINUTES:-10}
EVERY=${SOAK_EVERY:-60}
HOW=${SOAK_HOW:-all} # restart, takeover, keep, or all in turn
TOPO=topologies/two-dc.sh
AGENT_OPTS=(--dc dc --wan wan --wan-rtt 2ms --qp-idle 2s)

# shellcheck source=tests/bench/lib.sh
. tests/bench/lib.sh

declare -A GW_PID
start() {
	agent_start "$1" "${AGENT_OPTS[@]}" --instance "$P-$1" "${@:2}"
	GW_PID[$1]=$!
	agents_wait "$1"
}

# replace GW HOW: the agent of GW replaced by a stop and a start, or a takeover
replace() {
	local g=$1 old=${GW_PID[$1]}
	mv "$TMP/$g.log" "$TMP/$g.$(date +%s).log"
	if [ "$2" = takeover ]; then
		start "$g" --takeover
		wait "$old" 2>/dev/null || true
	elif [ "$2" = keep ]; then
		kill -USR2 "$old"
		wait "$old" 2>/dev/null || true
		start "$g"
	else
		kill -TERM "$old"
		wait "$old" 2>/dev/null || true
		start "$g"
	fi
}

# pools GW: the pool and table use of GW's data path (longhaul pools -j)
pools() {
	ex "$1" "$BIN/longhaul" -j --instance "$P-$1" pools
}

"$TOPO" up --prefix "$P" -q --rtt 2ms --match roce --seed 17 --loss-a2b 'random 1%' \
	--loss-b2a 'random 1%'
start gwa
start gwb
sleep 0.5

ex dst timeout $((MINUTES * 60 + 120)) "$BIN/lhperf" --server --json --listen-timeout 30 \
	>"$TMP/server.json" 2>&1 &
srv=$!
ex src timeout $((MINUTES * 60 + 150)) "$BIN/lhperf" --json --connect-timeout 10 -q 16 -S 65536 \
	-R 6 -D $((MINUTES * 60)) 10.2.0.10 >"$TMP/client.json" 2>"$TMP/client.err" &
cli=$!

n=0
end=$((SECONDS + MINUTES * 60 - EVERY / 2))
while sleep "$EVERY" && [ "$SECONDS" -lt "$end" ] && kill -0 "$cli" 2>/dev/null; do
	g=gwa
	[ $((n % 2)) -eq 0 ] || g=gwb
	how=$HOW
	if [ "$HOW" = all ]; then
		# gwa and gwb each by every way: restart, takeover, keep, in turn
		case $((n / 2 % 3)) in
		0) how=restart ;;
		1) how=takeover ;;
		*) how=keep ;;
		esac
	fi
	replace "$g" "$how"
	n=$((n + 1))
	echo "$(date +%T) replacement $n: $g by $how" >&2
done
st=0
wait "$cli" || st=$?
wait "$srv" || true
sleep 4 # past --qp-idle: every QP of the run forgotten, its slots freed

res=$(jq -c '{status, verified, qp_errors, goodput_gbps, timeouts}' "$TMP/client.json" 2>/dev/null ||
	echo '{"status":"no result"}')
pa=$(pools gwa)
pb=$(pools gwb)
echo "transfer (exit $st): $res" >&2
echo "after: gwa $(jq -c '{used, qps, rings_used}' <<<"$pa"), gwb $(jq -c '{used, qps, rings_used}' <<<"$pb")" >&2
ok=1
jq -e '.status == "ok" and .verified == true and .qp_errors == 0' <<<"$res" >/dev/null || ok=0
for p in "$pa" "$pb"; do
	jq -e '.used == 0 and .qps == 0 and .rings_used == 0' <<<"$p" >/dev/null || ok=0
done
if [ "$ok" = 1 ] && [ "$n" -gt 0 ]; then
	echo "soak passed: $MINUTES min, $n agent replacements, 0 QP errors, pools and tables empty after"
	exit 0
fi
tail -5 "$TMP/client.err" >&2 || true
echo "soak FAILED: $MINUTES min, $n agent replacements" >&2
exit 1
