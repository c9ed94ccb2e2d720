# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# BATS helpers of the LR2 end-to-end tests (tests/integ/4*-lr2-*.bats), on
# top of helpers.bash: the two-dc topology (src - gwa - WAN - gwb - dst),
# longhauld on both gateways, lhperf from src to dst, and the counters that
# say which mechanism acted. Load both:
#   load helpers
#   load lr2-helpers

LR2_TIMEOUT=${LR2_TIMEOUT:-120}
LR2_DST4=10.2.0.10
LR2_DST6=fd00:2::10

lr2_require() {
	lh_require_root
	lh_require_cmd ip nsenter jq timeout bpftool
	local b
	for b in longhauld longhaul lhperf lhwan; do
		[ -x "$LH_BIN/$b" ] || skip "build/bin/$b missing: run make"
	done
}

# lr2_agents_up [LONGHAULD OPTIONS]: longhauld on gwa and gwb (instances
# $LH_PREFIX-gwa and -gwb), each until it says it runs
lr2_agents_up() {
	local g i
	for g in gwa gwb; do
		lh_bg "$LH_PREFIX-$g" "$BATS_FILE_TMPDIR/$g.log" "$LH_BIN/longhauld" --dc dc --wan wan \
			--instance "$LH_PREFIX-$g" --wan-rtt "${LR2_RTT:-2ms}" "$@" >"$BATS_FILE_TMPDIR/$g.pid"
	done
	for g in gwa gwb; do
		for i in $(seq 100); do
			grep -qF '; running (SIGINT' "$BATS_FILE_TMPDIR/$g.log" && break
			if ! kill -0 "$(cat "$BATS_FILE_TMPDIR/$g.pid")" 2>/dev/null; then
				cat "$BATS_FILE_TMPDIR/$g.log" >&2
				return 1
			fi
			sleep 0.1
		done
		grep -qF '; running (SIGINT' "$BATS_FILE_TMPDIR/$g.log" || { cat "$BATS_FILE_TMPDIR/$g.log" >&2; return 1; }
	done
}

# lr2_agents_down: SIGTERM both agents; each must exit 0 within 5 s
lr2_agents_down() {
	local g pid i rc=0
	for g in gwa gwb; do
		[ -s "$BATS_FILE_TMPDIR/$g.pid" ] || continue
		pid=$(cat "$BATS_FILE_TMPDIR/$g.pid")
		kill -TERM "$pid" 2>/dev/null || continue
		for i in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "longhauld on $g did not stop" >&2
			rc=1
		fi
		grep -q "stopping" "$BATS_FILE_TMPDIR/$g.log" || rc=1
		rm -f "$BATS_FILE_TMPDIR/$g.pid"
	done
	return $rc
}

# lr2_stats GW [DIR]: every counter of gateway GW (gwa, gwb; the agent
# $LH_PREFIX-GW, its pid in DIR/GW.pid, default $BATS_FILE_TMPDIR) as
# {name: value}; {} when no agent runs there (a run without longhaul)
lr2_stats() {
	local out
	if [ -s "${2:-$BATS_FILE_TMPDIR}/$1.pid" ] &&
	   out=$(timeout 30 "$LH_BIN/longhaul" -j --instance "$LH_PREFIX-$1" stats); then
		jq -c '.counters | map_values(.value)' <<<"$out"
	else
		echo '{}'
	fi
}

# lr2_delta BEFORE AFTER: AFTER - BEFORE, counter by counter (missing = 0)
lr2_delta() {
	jq -cn --argjson a "$1" --argjson b "$2" \
		'$b | with_entries(.value -= ($a[.key] // 0)) | with_entries(select(.value != 0))'
}

# lr2_xfer [LHPERF CLIENT OPTIONS]: a transfer from src to dst (default
# address $LR2_DST4 unless the options end with one). Sets LR2_C (client
# JSON, which carries the responder's counters too), LR2_CS (its exit
# status), LR2_A and LR2_B (counter deltas of gwa and gwb), LR2_W (lhwan
# stats delta of a2b and b2a: rx_packets, drop_loss, matched). Both lhperf
# ends run at nice LR2_NICE (default 0).
lr2_xfer() {
	local addr=$LR2_DST4 sa sb wa wb out=$BATS_TEST_TMPDIR/client.json
	if [[ "${*: -1}" == *[.:]* ]]; then
		addr=${*: -1}
		set -- "${@:1:$(($# - 1))}"
	fi
	sa=$(lr2_stats gwa)
	sb=$(lr2_stats gwb)
	wa=$(lh_wan_stats)
	lh_bg "$LH_PREFIX-dst" "$BATS_TEST_TMPDIR/server.log" \
		nice -n "${LR2_NICE:-0}" "$LH_BIN/lhperf" --server --json --listen-timeout 30 >/dev/null
	LR2_CS=0
	timeout --kill-after=5 "$LR2_TIMEOUT" nsenter --net="/var/run/netns/$LH_PREFIX-src" -- \
		nice -n "${LR2_NICE:-0}" "$LH_BIN/lhperf" --json --connect-timeout 10 ${LR2_LHPERF_EXTRA:-} "$@" "$addr" \
		>"$out" 2>"$BATS_TEST_TMPDIR/client.err" || LR2_CS=$?
	# without the per-QP list and event list: 1024 QPs make them longer than an environment
	# variable may be (the whole JSON stays in $BATS_TEST_TMPDIR/client.json)
	LR2_C=$(jq -c 'del(.qp_list, .requester.rewind_events)' "$out" 2>/dev/null) || LR2_C=$(cat "$out")
	sleep 0.3 # the last ACKs and frees
	LR2_A=$(lr2_delta "$sa" "$(lr2_stats gwa)")
	LR2_B=$(lr2_delta "$sb" "$(lr2_stats gwb)")
	wb=$(lh_wan_stats)
	LR2_W=$(jq -cn --argjson a "$wa" --argjson b "$wb" '
		def other(s): [s | .drop_queue, .drop_pool, .drop_tx, .drop_oversize, .drop_rx_socket |
				   values] | add // 0;
		def d(dir): {rx: ($b[dir].rx_packets - $a[dir].rx_packets),
			     lost: ($b[dir].drop_loss - $a[dir].drop_loss),
			     matched: ($b[dir].matched - $a[dir].matched),
			     dropped_else: (other($b[dir]) - other($a[dir]))};
		{a2b: d("a2b"), b2a: d("b2a")}')
	export LR2_C LR2_CS LR2_A LR2_B LR2_W
}

# lr2_show: what a failing test prints (BATS shows it only on failure)
lr2_show() {
	echo "client exit $LR2_CS: $(printf '%s' "$LR2_C" | jq -c 'del(.qp_list, .requester, .responder, .qps)' 2>/dev/null | head -c 1500)"
	cat "$BATS_TEST_TMPDIR/client.err" 2>/dev/null | tail -5
	echo "gwa: $LR2_A"
	echo "gwb: $LR2_B"
	echo "wan: $LR2_W"
	echo "host link drops since the topology came up: $(lr2_link_drops)"
}

# lr2_link_drops: the interfaces of the topology's namespaces that dropped
# frames (rx or tx, as `ip -s link` counts them: a veth whose peer's ring was
# full, say, on a host that descheduled the reader), as a JSON array
lr2_link_drops() {
	local ns
	for ns in $(ip netns list | awk -v p="$LH_PREFIX-" 'index($1, p) == 1 {print $1}'); do
		ip -n "$ns" -s -j link show 2>/dev/null | jq -c --arg ns "${ns#"$LH_PREFIX-"}" \
			'.[] | select(.stats64.rx.dropped > 0 or .stats64.tx.dropped > 0) |
			{ns: $ns, dev: .ifname, rx: .stats64.rx.dropped, tx: .stats64.tx.dropped}'
	done | jq -sc .
}

# lr2_ok: the transfer completed, every byte verified, no QP error
lr2_ok() {
	[ "$LR2_CS" -eq 0 ] || { echo "lhperf exit status $LR2_CS" >&2; return 1; }
	jq_assert "$LR2_C" '.status == "ok" and .verified == true and .qp_errors == 0'
}

# lr2_ctr SIDE NAME: a counter's delta (SIDE a or b)
lr2_ctr() {
	local v
	if [ "$1" = a ]; then v=$LR2_A; else v=$LR2_B; fi
	printf '%s' "$v" | jq -r --arg n "$2" '.[$n] // 0'
}

# The responder's NIC saw no WAN gap: every NAK it sent (a frame lost between
# gwb and dst: a release burst into a full socket buffer, say) was answered
# from the Depot's backup pool, none crossed the WAN, except one sent before
# the QP was paired (the QP's very first packet lost: the Depot learns it from
# its second; a loaded host can show one), which passes as with no gateway
receiver_saw_no_gap() {
	jq_assert "$LR2_C" '.naks_sent == 0 and .out_of_sequence_drops == 0' && return 0
	echo "the responder NAKed $(jq_get "$LR2_C" .naks_sent) times; the Depot answered $(lr2_ctr b depot_nak_local), $(lr2_ctr b depot_nak_unpaired) came before pairing"
	[ "$(jq_get "$LR2_C" .naks_sent)" -le \
		"$(($(lr2_ctr b depot_nak_local) + $(lr2_ctr b depot_nak_unpaired)))" ]
	[ "$(lr2_ctr b depot_nak_forwarded)" -eq 0 ]
}
