#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Real RoCEv2 peers: Linux Soft-RoCE (rdma_rxe) in two qemu guests stand in
# for two-dc's src and dst hosts (tests/interop/run-pair.sh) and run perftest
# across gwa, the WAN (lhwan) and gwb. Here without longhaul: the baseline
# the gateway tests compare against. Each test is one pair run (~20 s under
# TCG). The guest image is built (or found up to date) in setup_file.

load helpers

RUN_PAIR=$LH_ROOT/tests/interop/run-pair.sh
IO_TIMEOUT=150

setup_file() {
	lh_require_root
	[ -x "$LH_BIN/lhwan" ] || skip "build lhwan first (make)"
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 missing: no guest can run (make deps installs it)"
	[ -c /dev/net/tun ] || skip "no /dev/net/tun: a guest's NIC cannot be a tap here"
	# no-op when the image is up to date; downloads the .debs the first time
	O=$O timeout --kill-after=5 600 bash "$LH_ROOT/tests/interop/build-image.sh" 2>&1 | sed 's/^/# /' >&3
	[ "${PIPESTATUS[0]}" -eq 0 ]
}

teardown_file() {
	lh_topo_down
	lh_cleanup
}

# pair [RUN-PAIR OPTIONS] [-- TEST ARGS]: one guest pair in this file's topology;
# sets IO (the JSON), IO_STATUS and IO_W (lhwan delta of a2b and b2a)
pair() {
	local wa wb
	wa=$(lh_wan_stats)
	IO_STATUS=0
	IO=$(timeout --kill-after=10 "$IO_TIMEOUT" "$RUN_PAIR" -q --prefix "$LH_PREFIX" \
		--image "$O/interop" --name "${LH_PREFIX}v" --logs "$BATS_TEST_TMPDIR/guests" "$@" 2>"$BATS_TEST_TMPDIR/run-pair.err") ||
		IO_STATUS=$?
	wb=$(lh_wan_stats)
	IO_W=$(jq -cn --argjson a "$wa" --argjson b "$wb" '
		def d(dir): {rx: ($b[dir].rx_packets - $a[dir].rx_packets),
			     lost: ($b[dir].drop_loss - $a[dir].drop_loss),
			     matched: ($b[dir].matched - $a[dir].matched)};
		{a2b: d("a2b"), b2a: d("b2a")}')
}

# what a failing test prints
show() {
	echo "run-pair exit $IO_STATUS: $(cat "$BATS_TEST_TMPDIR/run-pair.err" 2>/dev/null)"
	printf '%s' "$IO" | jq -c 'del(.client.output, .server.output)' 2>/dev/null || printf '%s\n' "$IO"
	printf '%s' "$IO" | jq -r '.client.output[]?' 2>/dev/null | tail -n 8
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

@test "run-pair refuses bad input before it builds anything" {
	run_t 20 "$RUN_PAIR" --test ib_nosuch_bw --prefix "$LH_PREFIX"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--test"* ]]
	run_t 20 "$RUN_PAIR" --prefix "$LH_PREFIX" --timeout soon
	[ "$status" -eq 2 ]
	run_t 20 "$RUN_PAIR"
	[ "$status" -eq 2 ]
	[[ "$output" == *"--prefix is required"* ]]
	run_t 20 "$RUN_PAIR" --prefix "${LH_PREFIX}none"
	[ "$status" -eq 3 ]
	[[ "$output" == *"no namespace ${LH_PREFIX}none-src"* ]]
	run_t 20 "$RUN_PAIR" --prefix "$LH_PREFIX" --image "$BATS_TEST_TMPDIR"
	[ "$status" -eq 3 ]
	[[ "$output" == *"make interop-image"* ]]
}

@test "lossless WAN, no longhaul: rxe ib_write_bw crosses gwa, lhwan and gwb, every packet taken" {
	lh_topo_up two-dc --rtt 2ms --match roce --seed 60
	pair --test ib_write_bw -- -s 65536 -D 10
	show
	completed
	echo "lossless: $(jq_get "$IO" .client.result.bw_avg_mbps) Mb/s, boot $(jq_get "$IO" .client.boot_s) s, wall $(jq_get "$IO" .wall_s) s, dst tap dropped $(jq_get "$IO" .server.tap.to_guest.dropped)" >&3
	# every RoCEv2 frame each rxe sent crossed the WAN, nothing lost there, and the
	# other rxe took each one (it counts rcvd_pkts after its header and ICRC
	# checks) but those its tap dropped: a guest that falls behind under TCG
	# overflows its tap's queue, as a host overflows its NIC's ring
	jq_assert "$IO_W" '.a2b.lost == 0 and .b2a.lost == 0'
	[ "$(jq_get "$IO_W" .a2b.matched)" -eq "$(ctr client sent_pkts)" ]
	[ "$(jq_get "$IO_W" .b2a.matched)" -eq "$(ctr server sent_pkts)" ]
	jq_assert "$IO" '.server.counters.rcvd_pkts <= .client.counters.sent_pkts and
		.server.counters.rcvd_pkts + .server.tap.to_guest.dropped >= .client.counters.sent_pkts'
	jq_assert "$IO" '.client.counters.rcvd_pkts <= .server.counters.sent_pkts and
		.client.counters.rcvd_pkts + .client.tap.to_guest.dropped >= .server.counters.sent_pkts'
	# no WAN loss, so out of sequence only what the tap dropped, or the go-back
	# of the requester's timer, which under TCG fires now and then though nothing
	# was lost (completer_retry_err; 2 out of sequence in 179853 packets in a run
	# here, where 1 % WAN loss made 376 in 74343)
	jq_assert "$IO" '.server.counters.out_of_seq_request <=
		.client.counters.completer_retry_err + .server.tap.to_guest.dropped'
	# the guests stood at the hosts' addresses, GID index of their IPv4 address
	jq_assert "$IO" '.client.ip == "10.1.0.10" and .server.ip == "10.2.0.10" and .client.gid_index >= 0'
	jq_assert "$IO" '.client.result.local.qpn == .server.result.remote.qpn'
}

@test "1 % random WAN loss, no longhaul: ib_write_bw completes on go-back-N; the gaps reach the responder" {
	lh_topo_up two-dc --rtt 2ms --match roce --seed 61 --loss 'random 1%'
	pair --test ib_write_bw -- -s 65536 -D 10
	show
	completed
	echo "1 % loss: $(jq_get "$IO" .client.result.bw_avg_mbps) Mb/s, a2b lost $(jq_get "$IO_W" .a2b.lost) of $(jq_get "$IO_W" .a2b.matched)" >&3
	[ "$(jq_get "$IO_W" .a2b.lost)" -gt 0 ]
	# the responder saw the WAN's gaps and NAKed them, the requester received the NAKs
	[ "$(ctr server out_of_seq_request)" -gt 0 ]
	[ "$(ctr client rcvd_seq_err)" -gt 0 ]
}
