#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# `make bench`: runs every tests/bench/*.bench.sh, collects their JSON into
# $O/bench/results.json and renders docs/PERFORMANCE.md. With a FILTER only the
# matching benches run; the others keep their last result (each says when).
#
# A bench script prints one JSON object on stdout:
#   {"name": "...", "title": "...", "notes": "...",
#    "rows": [{"case": "...", "metric": "...", "unit": "...", "value": N,
#              "baseline": "case name of the baseline row or null",
#              "ratio": N or null, "runs": N, "spread": N or null}]}
# Values are medians of repeated runs; ratios compare against a baseline
# measured in the same run, so they hold across machines better than times.
set -u
cd "$(dirname "$0")/../.."
O=${O:-build}
export O LH_ROOT=$PWD LH_BIN=$O/bin
filter=${1:-}
out=$O/bench
mkdir -p "$out"
results=()
status=0
for b in tests/bench/*.bench.sh; do
	[ -f "$b" ] || continue
	[ -z "$filter" ] || [[ "$b" == *"$filter"* ]] || continue
	name=$(basename "$b" .bench.sh)
	echo "== bench $name" >&2
	if timeout --kill-after=10 "${LH_BENCH_TIMEOUT:-1800}" bash "$b" >"$out/$name.json.new" 2>"$out/$name.log" &&
	   jq -e --arg d "$(date -u +%Y-%m-%dT%H:%M:%SZ)" '. + {measured: $d}' "$out/$name.json.new" >"$out/$name.json"; then
		rm -f "$out/$name.json.new"
	else
		echo "bench $name failed: see $out/$name.log" >&2
		tail -n 20 "$out/$name.log" >&2
		status=1
	fi
done
# Every bench's latest result: a filtered run refreshes some and keeps the others,
# from $O/bench or, on a machine that never ran them, from docs/PERFORMANCE.md
sed -n 's/^<!-- bench-json \([a-z0-9-]*\): \(.*\) -->$/\1 \2/p' docs/PERFORMANCE.md 2>/dev/null |
	while read -r name json; do
		[ -e "$out/$name.json" ] || [ ! -f "tests/bench/$name.bench.sh" ] ||
			printf '%s\n' "$json" | jq -c . >"$out/$name.json"
	done
for f in "$out"/*.json; do
	[ "$(basename "$f")" = results.json ] || results+=("$f")
done
[ "${#results[@]}" -gt 0 ] || { echo "no bench results" >&2; exit 1; }
jq -s --arg kernel "$(uname -r)" --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	--arg cpus "$(nproc)" --arg commit "$(git rev-parse --short HEAD 2>/dev/null || echo none)" \
	'{kernel: $kernel, date: $date, cpus: ($cpus | tonumber), commit: $commit, benches: .}' \
	"${results[@]}" >"$out/results.json"
bash tests/bench/render.sh "$out/results.json" >docs/PERFORMANCE.md
echo "wrote $out/results.json and docs/PERFORMANCE.md" >&2
jq -r '.benches[] | .name as $n | .rows[] |
	[$n, .case, .metric, (.value | tostring), .unit, ((.ratio // "") | tostring)] | @tsv' \
	"$out/results.json" | column -t -s $'\t' >&2
exit $status
