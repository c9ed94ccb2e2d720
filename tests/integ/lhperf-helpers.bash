# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# BATS helpers of lhperf's integration tests (tests/integ/3*-*.bats), on top of
# helpers.bash. Load both:
#   load helpers
#   load lhperf-helpers
#
# The world: namespaces $LHP_SRC (client, 10.30.0.1, fd30::1, interface
# $LHP_SIF) and $LHP_DST (server, 10.30.0.2, fd30::2, interface $LHP_DIF)
# joined by one veth. Loss is injected with nftables at the ingress of the
# receiving end, i.e. on the wire as far as lhperf is concerned: lhperf's
# packet socket receives after the netdev ingress hook, and the sender's
# kernel knows nothing of the drop.

LHP_TIMEOUT=${LHP_TIMEOUT:-120}

# skip unless we can build the world
lhp_require() {
	lh_require_root
	lh_require_cmd ip nsenter nft jq timeout
	[ -x "$LH_BIN/lhperf" ] || skip "build/bin/lhperf missing: run make"
}

# lhp_pair: the two namespaces and their veth, IPv4 and IPv6 addresses
lhp_pair() {
	LHP_SRC=$(lh_ns src)
	LHP_DST=$(lh_ns dst)
	LHP_SIF=$LH_PREFIX-s
	LHP_DIF=$LH_PREFIX-d
	lh_veth "$LHP_SRC" "$LHP_SIF" "$LHP_DST" "$LHP_DIF"
	ip -n "$LHP_SRC" addr add 10.30.0.1/24 dev "$LHP_SIF"
	ip -n "$LHP_DST" addr add 10.30.0.2/24 dev "$LHP_DIF"
	ip -n "$LHP_SRC" addr add fd30::1/64 dev "$LHP_SIF" nodad
	ip -n "$LHP_DST" addr add fd30::2/64 dev "$LHP_DIF" nodad
	LHP_SJSON=$BATS_TEST_TMPDIR/server.json
	LHP_SERR=$BATS_TEST_TMPDIR/server.err
	LHP_SRC_FILE=$BATS_TEST_TMPDIR/server.rc
	LHP_CJSON=$BATS_TEST_TMPDIR/client.json
	export LHP_SRC LHP_DST LHP_SIF LHP_DIF LHP_SJSON LHP_SERR LHP_SRC_FILE LHP_CJSON
}

# lhp_server [ARGS...]: start the server in $LHP_DST; JSON to $LHP_SJSON,
# stderr to $LHP_SERR, exit status to $LHP_SRC_FILE when it ends
lhp_server() {
	rm -f "$LHP_SJSON" "$LHP_SERR" "$LHP_SRC_FILE"
	LHP_SPID=$(lh_bg "$LHP_DST" /dev/null bash -c \
		'"$@" >"$LHP_SJSON" 2>"$LHP_SERR"; echo $? >"$LHP_SRC_FILE"' _ \
		"$LH_BIN/lhperf" --server --json --listen-timeout 60 "$@")
}

# lhp_client ARGS...: run the client in $LHP_SRC (JSON to $LHP_CJSON); sets
# $status to its exit status and $output to its stderr
lhp_client() {
	run_t "$LHP_TIMEOUT" nsenter --net=/var/run/netns/"$LHP_SRC" -- bash -c \
		'"$@" 2>&1 >"$LHP_CJSON"' _ "$LH_BIN/lhperf" --json "$@"
	LHP_C=$(cat "$LHP_CJSON" 2>/dev/null || true)
}

# lhp_server_wait: wait (bounded) for the server to end; sets LHP_S (its JSON)
# and LHP_SRC_STATUS (its exit status)
lhp_server_wait() {
	local i
	for i in $(seq 1 300); do
		[ -s "$LHP_SRC_FILE" ] && break
		sleep 0.1
	done
	LHP_SRC_STATUS=$(cat "$LHP_SRC_FILE" 2>/dev/null || echo none)
	LHP_S=$(cat "$LHP_SJSON" 2>/dev/null || true)
}

# lhp_wait_running: wait (bounded) until the side channel is up and data flows
lhp_wait_running() {
	local i
	for i in $(seq 1 100); do
		if ip netns exec "$LHP_DST" ss -Htn state established '( sport = :18515 )' |
			grep -q . && [ "$(ip -n "$LHP_DST" -j -s link show "$LHP_DIF" |
				jq '.[0].stats64.rx.packets')" -gt 1000 ]; then
			return 0
		fi
		sleep 0.1
	done
	echo "lhperf did not start within 10 s" >&2
	return 1
}

# lhp_run CLIENT_ARGS...: server then client; both JSONs in LHP_C / LHP_S
lhp_run() {
	lhp_server
	lhp_client "$@"
	lhp_server_wait
}

# lhp_show: what a failing test prints (BATS shows it only on failure)
lhp_show() {
	echo "client status $status, stderr: $output"
	echo "client: $LHP_C"
	echo "server ($LHP_SRC_STATUS): $LHP_S"
	cat "$LHP_SERR" 2>/dev/null || true
}

# The 24-bit PSN and destination QP of a RoCEv2 frame, for nftables: bytes
# 9-11 and 5-7 of the BTH, which starts right after the 8-byte UDP header
LHP_NFT_PSN='@th,136,24'
LHP_NFT_QPN='@th,104,24'

# lhp_nft NS RULES: load an nftables script in a namespace
lhp_nft() {
	printf '%s\n' "$2" | ip netns exec "$1" nft -f -
}

# lhp_drop_psns NS IFACE PSN...: drop the first arrival of each listed PSN of
# every QP at the ingress of IFACE; later ones pass (the retransmission gets
# through), remembered per (QP, PSN) in a dynamic set
lhp_drop_psns() {
	local ns=$1 dev=$2 list key="$LHP_NFT_QPN . $LHP_NFT_PSN"
	shift 2
	list=$(IFS=,; echo "$*")
	lhp_nft "$ns" "table netdev lhp_psn {
	set psns { typeof $LHP_NFT_PSN; elements = { $list } }
	set seen { typeof $key; size 65536; flags dynamic; }
	chain in {
		type filter hook ingress device \"$dev\" priority 0; policy accept;
		udp dport 4791 $LHP_NFT_PSN @psns $key != @seen update @seen { $key } counter drop
	}
}"
}

# lhp_drop_random NS IFACE PERCENT: drop PERCENT % of the RoCEv2 frames
# arriving on IFACE (numgen random)
lhp_drop_random() {
	lhp_nft "$1" "table netdev lhp_rand {
	chain in {
		type filter hook ingress device \"$2\" priority 0; policy accept;
		udp dport 4791 numgen random mod 100 < $3 counter drop
	}
}"
}

# lhp_drop_ipid NS IFACE: drop every RoCEv2 frame whose IPv4 ID ends in 0xff,
# the deterministic 1/256 of the go-back-0 notes (senders number IDs in turn)
lhp_drop_ipid() {
	lhp_nft "$1" "table netdev lhp_ipid {
	chain in {
		type filter hook ingress device \"$2\" priority 0; policy accept;
		udp dport 4791 ip id & 0xff == 0xff counter drop
	}
}"
}

# lhp_drop_all NS IFACE: the wire is cut for RoCEv2 (the side channel lives)
lhp_drop_all() {
	lhp_nft "$1" "table netdev lhp_all {
	chain in {
		type filter hook ingress device \"$2\" priority 0; policy accept;
		udp dport 4791 counter drop
	}
}"
}

# lhp_nft_dropped NS TABLE: packets the table's counter dropped
lhp_nft_dropped() {
	ip netns exec "$1" nft -j list table netdev "$2" |
		jq '[.nftables[] | .rule? // empty | .expr[] | .counter? // empty | .packets] | add // 0'
}

# jq_eq JSON FILTER VALUE: jq_assert that FILTER equals VALUE (a JSON literal)
jq_eq() {
	jq_assert "$1" "($2) == ($3)" "$2 == $3 (is $(printf '%s' "$1" | jq -c "$2"))"
}
