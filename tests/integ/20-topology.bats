#!/usr/bin/env bats
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# The test world itself: two-dc.sh and dual-path.sh build what they promise
# (namespaces, addresses, routes, permanent neighbours, IPv4 and IPv6 end to
# end), leave the gateways bare for longhaul, converge on a second `up`,
# refuse bad options, missing tools and name clashes before building
# anything, pick the WAN emulator as the kernel allows, and `down` leaves
# no namespace, link, process or state behind.

load helpers

TWO_DC=$LH_TOPO_DIR/two-dc.sh
DUAL=$LH_TOPO_DIR/dual-path.sh

setup_file() {
	lh_require_root
	[ -x "$LH_BIN/lhwan" ] || skip "build lhwan first (make)"
	lh_topo_up two-dc --rtt 4ms --rate 500mbit --loss-a2b 'random 0.5%' \
		--loss-b2a 'gemodel 1% 30%' --dca-loss-a2b 'random 1%' --dcb-loss-b2a 'every 1000' \
		--seed 42
}

teardown_file() {
	lh_topo_down
	lh_cleanup
}

# namespaces (of any prefix) named like ours
our_namespaces() {
	ip netns list | awk '{print $1}' | grep -E "^$1-" || true
}

@test "two-dc up: five namespaces, IPv4 and IPv6 from src to dst both ways" {
	for n in src gwa wan gwb dst; do
		[ -e "/var/run/netns/$LH_PREFIX-$n" ]
	done
	run_t 10 nsenter --net="$(lh_netns src)" -- ping -c 3 -i 0.05 -W 2 10.2.0.10
	[ "$status" -eq 0 ]
	run_t 10 nsenter --net="$(lh_netns dst)" -- ping -c 3 -i 0.05 -W 2 10.1.0.10
	[ "$status" -eq 0 ]
	run_t 10 nsenter --net="$(lh_netns src)" -- ping -6 -c 3 -i 0.05 -W 2 fd00:2::10
	[ "$status" -eq 0 ]
	run_t 10 nsenter --net="$(lh_netns dst)" -- ping -6 -c 3 -i 0.05 -W 2 fd00:1::10
	[ "$status" -eq 0 ]
}

@test "status -j lists every option, the addressing plan and the live emulator" {
	run lh_topo_status
	[ "$status" -eq 0 ]
	s=$output
	jq_assert "$s" '.topology == "two-dc" and .state == "up" and .prefix == "'"$LH_PREFIX"'"'
	jq_assert "$s" '.mechanism == "lhwan" and .impair == "auto" and .seed == 42 and .mtu == 1500 and .match == "all"'
	jq_assert "$s" '.paths[0] | .name == "wan" and .rtt == "4ms" and .delay.a2b == "2ms" and .delay.b2a == "2ms"'
	jq_assert "$s" '.paths[0] | .rate.a2b == "500mbit" and .rate.b2a == "500mbit"'
	jq_assert "$s" '.paths[0].loss == {"a2b": ["random 0.5%"], "b2a": ["gemodel 1% 30%"]}'
	jq_assert "$s" '.dc_loss == {"dca": {"a2b": "random 1%", "b2a": "none"}, "dcb": {"a2b": "none", "b2a": "every 1000"}}'
	jq_assert "$s" '.nodes.gwa.interfaces | map({(.name): [.role, .ipv4, .ipv6]}) | add ==
		{"dc": ["dc-side", "10.1.0.1", "fd00:1::1"], "wan": ["wan-side", "10.0.0.1", "fd00::1"]}'
	jq_assert "$s" '.nodes.gwb.interfaces | map({(.name): [.role, .ipv4]}) | add ==
		{"wan": ["wan-side", "10.0.0.2"], "dc": ["dc-side", "10.2.0.1"]}'
	jq_assert "$s" '.nodes.src.interfaces[0] | .name == "dc" and .ipv4 == "10.1.0.10" and .up'
	jq_assert "$s" '.wan.wan | .running and .mechanism == "lhwan" and .port_a == "gwa" and .port_b == "gwb"'
	jq_assert "$s" '.wan.wan.stats.config.a2b | .delay_ns == 2000000 and .rate_bps == 500000000'
	jq_assert "$s" '.wan.wan.stats.config.a2b.loss[0].spec == "random 0.5%"'
	jq_assert "$s" '.dc_loss_counters.src.egress | .mechanism == "tcx-egress" and .spec == "random 1%"'
	jq_assert "$s" '.dc_loss_counters.dst.egress.spec == "every 1000 0"'
	jq_assert "$s" '.dc_loss_counters.dst.ingress | .mechanism == "xdp" and .spec == "none"'
}

@test "gateways are bare routers: forwarding on, no qdisc, nftables rule or BPF program" {
	for g in gwa gwb; do
		[ "$(lh_exec "$g" sysctl -n net.ipv4.ip_forward)" = 1 ]
		[ "$(lh_exec "$g" sysctl -n net.ipv6.conf.all.forwarding)" = 1 ]
		# only the default noqueue root of a veth
		run lh_exec "$g" tc -j qdisc show
		jq_assert "$output" 'all(.[]; .kind == "noqueue")'
		run lh_exec "$g" nft list ruleset
		[ -z "$output" ]
		run lh_exec "$g" ip -j link show
		jq_assert "$output" 'all(.[]; has("xdp") | not)'
		for i in dc wan; do
			run lh_exec "$g" bpftool net show dev "$i"
			[[ "$output" != *"id "* ]] || { echo "$output"; false; }
		done
	done
	# and the wan namespace only forwards frames, its kernel neither routes nor answers
	[ "$(lh_exec wan sysctl -n net.ipv4.ip_forward)" = 0 ]
	run lh_exec wan ip -j addr show
	jq_assert "$output" 'all(.[]; (.addr_info | length) == 0 or .ifname == "lo")'
}

@test "permanent neighbour entries on every link, both families" {
	run lh_exec gwa ip -j neigh show dev wan
	jq_assert "$output" 'map(select(.dst == "10.0.0.2" and (.state | index("PERMANENT")) and .lladdr == "02:4c:48:00:04:02")) | length == 1'
	run lh_exec gwa ip -j -6 neigh show dev wan
	jq_assert "$output" 'map(select(.dst == "fd00::2" and (.state | index("PERMANENT")))) | length == 1'
	run lh_exec src ip -j neigh show dev dc
	jq_assert "$output" 'map(select(.dst == "10.1.0.1" and (.state | index("PERMANENT")))) | length == 1'
	run lh_exec dst ip -j -6 neigh show dev dc
	jq_assert "$output" 'map(select(.dst == "fd00:2::1" and (.state | index("PERMANENT")))) | length == 1'
}

@test "up again is idempotent; other options converge without rebuilding" {
	pid=$(cat "/run/longhaul/topo/$LH_PREFIX/wan.pid")
	gwa_ns_inode=$(stat -L -c %i "/var/run/netns/$LH_PREFIX-gwa")
	lh_topo_up two-dc --rtt 4ms --rate 500mbit --loss-a2b 'random 0.5%' \
		--loss-b2a 'gemodel 1% 30%' --dca-loss-a2b 'random 1%' --dcb-loss-b2a 'every 1000' \
		--seed 42
	[ "$(cat "/run/longhaul/topo/$LH_PREFIX/wan.pid")" = "$pid" ]
	lh_topo_up two-dc --rtt 6ms --seed 42
	[ "$(cat "/run/longhaul/topo/$LH_PREFIX/wan.pid")" != "$pid" ]
	[ "$(stat -L -c %i "/var/run/netns/$LH_PREFIX-gwa")" = "$gwa_ns_inode" ]
	run lh_topo_status
	jq_assert "$output" '.paths[0].rtt == "6ms" and .paths[0].loss.a2b == [] and .dc_loss.dca.a2b == "none"'
	jq_assert "$output" '.wan.wan.stats.config.b2a.delay_ns == 3000000'
	run_t 10 nsenter --net="$(lh_netns src)" -- ping -c 2 -i 0.05 -W 2 10.2.0.10
	[ "$status" -eq 0 ]
}

@test "bad options, a missing tool and a name clash fail before anything is built" {
	p=${LH_PREFIX}x
	for bad in "--rtt 20" "--rate fast" "--loss 'random 1'" "--loss 'bogus 1%'" \
		"--dca-loss 'state 1%'" "--impair magic" "--prefix bad-name" "--mtu 100" "--nope"; do
		run_t 30 bash -c "$TWO_DC up --prefix $p $bad"
		[ "$status" -ne 0 ] || { echo "accepted: $bad"; false; }
		[ -n "$output" ]
		[ -z "$(our_namespaces "$p")" ]
	done
	run_t 30 "$TWO_DC" up --prefix "$p" --rate fast
	[ "$status" -eq 2 ]
	[[ "$output" == *"--rate"* ]]
	# missing tool: lhwan not built
	LHWAN=/nonexistent/lhwan run_t 30 "$TWO_DC" up --prefix "$p"
	[ "$status" -eq 1 ]
	[[ "$output" == *"lhwan not built"* ]]
	[ -z "$(our_namespaces "$p")" ]
	# a foreign namespace with one of our names
	ip netns add "$p-gwb"
	run_t 30 "$TWO_DC" up --prefix "$p"
	ip netns del "$p-gwb"
	[ "$status" -eq 1 ]
	[[ "$output" == *"name clash"* ]]
	[ -z "$(our_namespaces "$p")" ]
	# a topology of the other kind under the same prefix
	run_t 30 "$DUAL" up --prefix "$LH_PREFIX"
	[ "$status" -eq 1 ]
	[[ "$output" == *"taken by a two-dc"* ]]
}

@test "--impair: auto picks lhwan without sch_netem, netem fails clearly; with netem, auto picks it" {
	p=${LH_PREFIX}n
	if lh_exec src tc qdisc add dev lo root netem delay 1ms 2>/dev/null; then
		lh_exec src tc qdisc del dev lo root
		run_t 60 "$TWO_DC" up --prefix "$p" --impair auto --rtt 2ms -j
		"$TWO_DC" down --prefix "$p" -q
		[ "$status" -eq 0 ]
		jq_assert "$output" '.mechanism == "netem"'
		skip "this kernel has sch_netem: the no-netem error path cannot be checked here"
	fi
	run_t 60 "$TWO_DC" up --prefix "$p" --impair netem --rtt 2ms
	[ "$status" -eq 1 ]
	[[ "$output" == *"no sch_netem"* ]]
	[ -z "$(our_namespaces "$p")" ]
	run_t 60 "$TWO_DC" up --prefix "$p" --impair auto --rtt 2ms -q
	[ "$status" -eq 0 ]
	run_t 30 "$TWO_DC" status --prefix "$p" -j
	"$TWO_DC" down --prefix "$p" -q
	jq_assert "$output" '.mechanism == "lhwan" and .impair == "auto" and .wan.wan.running'
}

@test "two topologies side by side, then down leaves nothing of the second" {
	p=${LH_PREFIX}b
	run_t 60 "$TWO_DC" up --prefix "$p" --rtt 2ms -q
	[ "$status" -eq 0 ]
	pid=$(cat "/run/longhaul/topo/$p/wan.pid")
	[ -d "/proc/$pid" ]
	# both work at once
	run_t 10 nsenter --net="/var/run/netns/$p-src" -- ping -c 2 -i 0.05 -W 2 10.2.0.10
	[ "$status" -eq 0 ]
	run_t 10 nsenter --net="$(lh_netns src)" -- ping -c 2 -i 0.05 -W 2 10.2.0.10
	[ "$status" -eq 0 ]
	run_t 60 "$TWO_DC" down --prefix "$p"
	[ "$status" -eq 0 ]
	[ -z "$(our_namespaces "$p")" ]
	[ ! -d "/proc/$pid" ]
	[ ! -e "/run/longhaul/topo/$p" ]
	# no link or process left in the root namespace either
	run ip -j link show
	jq_assert "$output" "all(.[]; .ifname | startswith(\"$p\") | not)"
	run pgrep -f "stats-file /run/longhaul/topo/$p/"
	[ "$status" -ne 0 ]
	# and ours is untouched
	run_t 10 nsenter --net="$(lh_netns src)" -- ping -c 2 -i 0.05 -W 2 10.2.0.10
	[ "$status" -eq 0 ]
}

@test "exec runs in a node with bpffs visible; a wrong node is an error" {
	run_t 10 "$TWO_DC" exec gwa --prefix "$LH_PREFIX" -- ip -br addr show dev wan
	[ "$status" -eq 0 ]
	[[ "$output" == *"10.0.0.1/24"* ]]
	run_t 10 "$TWO_DC" exec gwa --prefix "$LH_PREFIX" -- mountpoint -q /sys/fs/bpf
	[ "$status" -eq 0 ]
	run_t 10 "$TWO_DC" exec nosuch --prefix "$LH_PREFIX" -- true
	[ "$status" -eq 2 ]
}

@test "dual-path: two disjoint paths through rt1 and rt2, primary preferred, down cleans up" {
	p=${LH_PREFIX}d
	run_t 90 "$DUAL" up --prefix "$p" --rtt 4ms --path2-rtt 10ms -q
	[ "$status" -eq 0 ]
	for n in src gwa wan1 rt1 wan2 rt2 gwb dst; do
		[ -e "/var/run/netns/$p-$n" ]
	done
	x() { nsenter --net="/var/run/netns/$p-$1" -- "${@:2}"; }
	run_t 10 nsenter --net="/var/run/netns/$p-src" -- ping -c 3 -i 0.05 -W 2 10.2.0.10
	[ "$status" -eq 0 ]
	run_t 10 nsenter --net="/var/run/netns/$p-src" -- ping -6 -c 3 -i 0.05 -W 2 fd00:2::10
	[ "$status" -eq 0 ]
	# primary (metric 10) via rt1, backup (20) via rt2, both ways
	run x gwa ip -j route show 10.2.0.0/24
	jq_assert "$output" 'map({(.gateway): .metric}) | add == {"10.0.1.2": 10, "10.0.2.2": 20}'
	run x gwb ip -j -6 route show fd00:1::/64
	jq_assert "$output" 'map({(.gateway): .metric}) | add == {"fd00:0:11::1": 10, "fd00:0:12::1": 20}'
	# each router reaches both gateways
	run_t 10 nsenter --net="/var/run/netns/$p-rt2" -- ping -c 1 -W 2 10.0.2.1
	[ "$status" -eq 0 ]
	run_t 10 nsenter --net="/var/run/netns/$p-rt2" -- ping -c 1 -W 2 10.0.12.2
	[ "$status" -eq 0 ]
	run_t 30 "$DUAL" status --prefix "$p" -j
	jq_assert "$output" '.topology == "dual-path" and (.paths | map({(.name): .rtt}) | add) == {"wan1": "4ms", "wan2": "10ms"}'
	jq_assert "$output" '.wan.wan1.running and .wan.wan2.running and .wan.wan1.port_b == "rt1"'
	pids="$(jq -r '.wan[].pid' <<<"$output")"
	# the path-1 RTT is the one seen end to end
	run_t 10 nsenter --net="/var/run/netns/$p-src" -- ping -c 10 -i 0.02 -W 2 10.2.0.10
	avg=$(sed -n 's|.*= [0-9.]*/\([0-9.]*\)/.*|\1|p' <<<"$output")
	lh_near "$avg" 4.3 0.8 "dual-path RTT (ms)"
	run_t 60 "$DUAL" down --prefix "$p"
	[ "$status" -eq 0 ]
	[ -z "$(our_namespaces "$p")" ]
	for pid in $pids; do [ ! -d "/proc/$pid" ]; done
}

@test "down leaves no namespace, link, process or state; a second down is harmless" {
	pid=$(cat "/run/longhaul/topo/$LH_PREFIX/wan.pid")
	run_t 60 "$TWO_DC" down --prefix "$LH_PREFIX"
	[ "$status" -eq 0 ]
	[ -z "$(our_namespaces "$LH_PREFIX")" ]
	[ ! -d "/proc/$pid" ]
	[ ! -e "/run/longhaul/topo/$LH_PREFIX" ]
	run ip -j link show
	jq_assert "$output" "all(.[]; .ifname | startswith(\"$LH_PREFIX\") | not)"
	run_t 60 "$TWO_DC" down --prefix "$LH_PREFIX"
	[ "$status" -eq 0 ]
}
