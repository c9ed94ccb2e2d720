# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# BATS helpers of the real-peer tests (tests/integ/6*-interop*.bats): rxe in
# two qemu guests in place of two-dc's src and dst (tests/interop/run-pair.sh),
# their results and counters, and the independent ICRC check of captures
# (tests/interop/roce-pcap.py). Load after helpers:
#   load helpers
#   load interop-helpers
#
# LH_QEMU_LOCK: a lock file each pair run holds while its guests run (several
# people booting guests on one small machine); unset, no lock.

RUN_PAIR=$LH_ROOT/tests/interop/run-pair.sh
ROCE_PCAP=$LH_ROOT/tests/interop/roce-pcap.py
IO_TIMEOUT=${IO_TIMEOUT:-150}

# io_require_file: what setup_file needs for a guest pair, or skip; builds (or
# finds up to date) the guest image
io_require_file() {
	lh_require_root
	[ -x "$LH_BIN/lhwan" ] || skip "build lhwan first (make)"
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 missing: no guest can run (make deps installs it)"
	[ -c /dev/net/tun ] || skip "no /dev/net/tun: a guest's NIC cannot be a tap here"
	# no-op when the image is up to date; downloads the .debs the first time
	O=$O timeout --kill-after=5 600 bash "$LH_ROOT/tests/interop/build-image.sh" 2>&1 | sed 's/^/# /' >&3
	[ "${PIPESTATUS[0]}" -eq 0 ]
}

# pair [RUN-PAIR OPTIONS] [-- TEST ARGS]: one guest pair in this file's topology;
# sets IO (the JSON), IO_STATUS and IO_W (lhwan delta of a2b and b2a)
pair() {
	local wa wb lock=()
	[ -z "${LH_QEMU_LOCK:-}" ] || lock=(flock "$LH_QEMU_LOCK")
	wa=$(lh_wan_stats)
	IO_STATUS=0
	IO=$("${lock[@]}" timeout --kill-after=10 "$IO_TIMEOUT" "$RUN_PAIR" -q --prefix "$LH_PREFIX" \
		--image "$O/interop" --name "${LH_PREFIX}v" --logs "$BATS_TEST_TMPDIR/guests" "$@" 2>"$BATS_TEST_TMPDIR/run-pair.err") ||
		IO_STATUS=$?
	wb=$(lh_wan_stats)
	IO_W=$(jq -cn --argjson a "$wa" --argjson b "$wb" '
		def d(dir): {rx: ($b[dir].rx_packets - $a[dir].rx_packets),
			     lost: ($b[dir].drop_loss - $a[dir].drop_loss),
			     matched: ($b[dir].matched - $a[dir].matched)};
		{a2b: d("a2b"), b2a: d("b2a")}')
}

# starved: a guest fell far behind: its tap dropped over 5 % of the frames
# offered to it (TCG guests on a loaded 2-core host: as many as 3306 of
# 14750, where 0.1-1 % is usual). Such a run measures the host, not the
# network between the guests: the tests run the pair once more.
starved() {
	jq -e '[.client.tap.to_guest, .server.tap.to_guest] |
		any(.dropped * 20 > .packets + .dropped)' <<<"$IO" >/dev/null 2>&1
}

# perftest_quit: both guests ran perftest to its end and it exited non-zero
# with no QP in error: no retry exhausted on either side, no completion error
# in its output, the responder took every packet the requester sent, and
# nothing was lost on the WAN. perftest does so now and then with nothing of
# longhaul on the path (every packet received, no result printed; or
# lossless, both sides exiting 1, no packet missing). Its output (all of it,
# >&3) says which step failed, for the next look.
perftest_quit() {
	jq -e '(.client.exit_status != 0 or .server.exit_status != 0)
		and .client.timed_out == false and .server.timed_out == false
		and .client.counters.retry_exceeded_err == 0 and .server.counters.retry_exceeded_err == 0
		and .server.counters.rcvd_pkts >= .client.counters.sent_pkts
		and ([.client.output[]?, .server.output[]?] | all(test("Completion with error|error CQE|status") | not))' \
		<<<"$IO" >/dev/null 2>&1 || return 1
	jq -e '.a2b.lost == 0 and .b2a.lost == 0' <<<"$IO_W" >/dev/null 2>&1 || return 1
	io_output | sed 's/^/# /' >&3
}

# taps: what the guests' taps dropped, for the terminal
taps() {
	jq -r '"client tap dropped \(.client.tap.to_guest.dropped) of \(.client.tap.to_guest.packets +
		.client.tap.to_guest.dropped), server \(.server.tap.to_guest.dropped) of \(
		.server.tap.to_guest.packets + .server.tap.to_guest.dropped)"' <<<"$IO" 2>/dev/null
}

# pair_fed [PAIR ARGS]: a pair without longhaul on the path, once more if a guest
# was starved or perftest failed: nothing of ours is between the guests then,
# and perftest itself now and then exits 1 after a complete transfer without a
# word (every packet received, neither side printing its result)
pair_fed() {
	pair "$@"
	if starved; then
		echo "# a guest was starved ($(taps)): the pair runs again" >&3
		pair "$@"
	elif ! jq -e '.client.exit_status == 0 and .server.exit_status == 0' <<<"$IO" >/dev/null 2>&1; then
		echo "# perftest failed without longhaul (run-pair $IO_STATUS, exit statuses" \
			"$(jq -c '[.client.exit_status, .server.exit_status]' <<<"$IO" 2>/dev/null)): the pair runs again" >&3
		pair "$@"
	fi
}

# io_output: every line both guests' command printed, each side named
io_output() {
	printf '%s' "$IO" | jq -r '(.client.output[]? | "client: " + .), (.server.output[]? | "server: " + .)' 2>/dev/null
}

# what a failing test prints
show() {
	echo "run-pair exit $IO_STATUS: $(cat "$BATS_TEST_TMPDIR/run-pair.err" 2>/dev/null)"
	printf '%s' "$IO" | jq -c 'del(.client.output, .server.output)' 2>/dev/null || printf '%s\n' "$IO"
	# all of both sides' output: perftest's stderr (unbuffered) lands before
	# its buffered stdout, so an error line sits above the table's header
	io_output | grep -v -e '^[a-z]*: *-*$' | head -n 80
	echo "wan: $IO_W"
	tail -n 5 "$BATS_TEST_TMPDIR"/guests/*-console.log 2>/dev/null || true
}

# ctr ROLE NAME: an rxe hw_counter of the client or the server
ctr() {
	jq_get "$IO" ".$1.counters.$2"
}

# both commands completed and no QP gave up
completed() {
	[ "$IO_STATUS" -eq 0 ]
	jq_assert "$IO" '.client.exit_status == 0 and .server.exit_status == 0'
	jq_assert "$IO" '.client.counters.retry_exceeded_err == 0 and .server.counters.retry_exceeded_err == 0'
	jq_assert "$IO" '.client.result.msg_bytes == 65536 and .client.result.iterations > 0 and .client.result.bw_avg_mbps > 0'
	# every 64 KiB message is 64 packets at rxe's 1024-byte MTU; the responder received each
	jq_assert "$IO" '.client.result.mtu == 1024'
	jq_assert "$IO" '.server.counters.rcvd_pkts >= .client.result.iterations * 64'
	jq_assert "$IO" '.client.counters.sent_pkts >= .server.counters.rcvd_pkts - .server.counters.duplicate_request'
	# the runner undid its wiring: the hosts' dc links are bare again
	for n in src dst; do
		run lh_exec "$n" tc -j qdisc show dev dc
		jq_assert "$output" 'all(.[]; .kind != "clsact")'
		run lh_exec "$n" ip -j link show
		jq_assert "$output" "all(.[]; .ifname | startswith(\"${LH_PREFIX}v\") | not)"
	done
}

# icrc_check: roce-pcap.py over the pcaps of the last pair (--capture); sets
# ICRC (its JSON); fails unless every capture has RoCEv2 packets, all whole,
# every ICRC right, and tcpdump lost none
icrc_check() {
	local files
	files=$(jq_get "$IO" '.captures[].file')
	[ -n "$files" ]
	jq_assert "$IO" 'all(.captures[]; .captured > 0 and .dropped_by_kernel == 0)'
	ICRC=$(timeout 300 python3 "$ROCE_PCAP" $files) || {
		echo "roce-pcap: $(printf '%s' "$ICRC" | jq -c '.total.bad' 2>/dev/null)"
		return 1
	}
	echo "icrc: $(jq -c '.files | map_values(del(.bad, .frames))' <<<"$ICRC")"
	jq_assert "$ICRC" 'all(.files[]; .packets > 0 and .truncated == 0) and .total.icrc_bad == 0
		and .total.icrc_ok == .total.packets'
}

# icrc_of NODE-IFACE FILTER: FILTER on roce-pcap's report of one capture
icrc_of() {
	printf '%s' "$ICRC" | jq -r --arg f "$BATS_TEST_TMPDIR/guests/$1.pcap" ".files[\$f] | $2"
}
