# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Shared machinery of longhaul's netns topologies (two-dc.sh, dual-path.sh):
# command-line parsing, checks made before anything is built, namespaces,
# veths with fixed MACs, addresses, routes and permanent neighbours, the WAN
# impairment (lhwan or netem) in the bump-in-the-wire namespaces, loss on the
# host links (lhwan dcloss, in src and dst only), the state kept under
# /run/longhaul/topo/PREFIX, status (text or JSON) and teardown.
#
# A topology script sources this file after describing itself:
#   TOPO            its name ("two-dc")
#   NODES           every namespace, without prefix
#   ROUTERS         namespaces that forward IP (the gateways, routers)
#   HOSTS           src and dst: where host-link loss is attached
#   LINKS           "nodeA:ifA/mac nodeB:ifB/mac" veth pairs
#   ADDRS           "node:if ipv4/len ipv6/len"
#   ROUTES          "node prefix4 via4 prefix6 via6 [metric]"
#   SEGMENTS        "node:if node:if ...": L3 neighbours on one L2 segment
#                   (through a bump), each pair gets permanent entries
#   BUMPS           "ns portA portB": the WAN emulators; portA faces the a side
# and then calls topo_main "$@".
#
# Nothing here touches the gateways beyond addresses, routes, neighbours and
# forwarding: no qdisc, no nftables, no BPF (longhaul attaches there later).

set -eEuo pipefail

TOPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE_BASE=${LH_TOPO_STATE:-/run/longhaul/topo}
LHWAN=${LHWAN:-}
if [ -z "$LHWAN" ]; then
	o=${O:-$TOPO_ROOT/build}
	case "$o" in /*) ;; *) o=$TOPO_ROOT/$o ;; esac
	LHWAN=$o/bin/lhwan
fi

die() {
	printf '%s: error: %s\n' "$TOPO" "$*" >&2
	exit 1
}
# usage errors exit 2, like the other longhaul tools
usage_die() {
	printf '%s: error: %s (see --help)\n' "$TOPO" "$*" >&2
	exit 2
}
info() { [ "${QUIET:-0}" = 1 ] || printf '%s: %s\n' "$TOPO" "$*" >&2; }

ns_of() { printf '%s-%s' "$PREFIX" "$1"; }
nsx() {
	local n=$1
	shift
	nsenter --net="/var/run/netns/$(ns_of "$n")" -- "$@"
}
ns_exists() { [ -e "/var/run/netns/$(ns_of "$1")" ]; }

# Every node name any topology uses: a clash check and `down` cover them all
ALL_NODE_NAMES=(src gwa wan gwb dst wan1 wan2 rt1 rt2)
# The host side of each DC link
HOST_IF=dc

# ---------------------------------------------------------------- options

# Impairment settings per bump: IMP[bump.key]. Loss lists are newline-separated.
declare -A IMP=()
PREFIX=lh
IMPAIR=auto
MATCH=all
SEED=
MTU=1500
JSON=0
DCA_A2B=none DCA_B2A=none DCB_A2B=none DCB_B2A=none

bump_names() {
	local b
	for b in "${BUMPS[@]}"; do printf '%s\n' "${b%% *}"; done
}

time_ok() { [[ "$1" =~ ^([0-9]+(\.[0-9]+)?(ns|us|ms|s)|0)$ ]]; }
rate_ok() { [[ "${1,,}" =~ ^([0-9]+(\.[0-9]+)?(bit|kbit|mbit|gbit|tbit|bps|kbps|mbps|gbps)|0)$ ]]; }

# half of a time, keeping its unit
half_time() {
	local v=${1%%[a-z]*} u=${1##*[0-9.]}
	[ "$1" = 0 ] && { echo 0; return; }
	printf '%s%s' "$(awk -v v="$v" 'BEGIN { printf "%.6g", v / 2 }')" "$u"
}

# set_imp TARGET KEY VALUE: TARGET "" means every bump
set_imp() {
	local target=$1 key=$2 val=$3 b
	for b in $(bump_names); do
		[ -z "$target" ] || [ "$target" = "$b" ] || continue
		IMP[$b.$key]=$val
	done
}
add_loss() {
	local target=$1 dir=$2 val=$3 b
	for b in $(bump_names); do
		[ -z "$target" ] || [ "$target" = "$b" ] || continue
		IMP[$b.loss_$dir]+="$val"$'\n'
	done
}

add_extra() {
	local target=$1 val=$2 b
	for b in $(bump_names); do
		[ -z "$target" ] || [ "$target" = "$b" ] || continue
		IMP[$b.extra]+="$val"$'\n'
	done
}

# path_target OPTION: for dual-path's --pathN-X options, the bump name; sets OPT_NAME
path_target() {
	local opt=$1
	TARGET=
	OPT_NAME=$opt
	if [[ "$opt" =~ ^--path([0-9])-(.*)$ ]]; then
		local i=${BASH_REMATCH[1]} b n=0
		for b in $(bump_names); do
			n=$((n + 1))
			[ "$n" = "$i" ] && TARGET=$b
		done
		[ -n "$TARGET" ] || usage_die "no path $i in $TOPO"
		OPT_NAME=--${BASH_REMATCH[2]}
	fi
}

parse_up_options() {
	local opt val
	while [ $# -gt 0 ]; do
		opt=$1
		path_target "$opt"
		case "$OPT_NAME" in
		--rtt | --delay-a2b | --delay-b2a | --jitter | --rate | --rate-a2b | --rate-b2a | \
			--queue | --loss | --loss-a2b | --loss-b2a | --duplicate | --reorder | --lhwan-arg)
			[ $# -ge 2 ] || usage_die "$opt needs a value"
			val=$2
			shift 2
			case "$OPT_NAME" in
			--rtt)
				time_ok "$val" || usage_die "$opt: '$val' is not a time (e.g. 20ms)"
				set_imp "$TARGET" delay_a2b "$(half_time "$val")"
				set_imp "$TARGET" delay_b2a "$(half_time "$val")"
				set_imp "$TARGET" rtt "$val"
				;;
			--delay-a2b | --delay-b2a)
				time_ok "$val" || usage_die "$opt: '$val' is not a time"
				set_imp "$TARGET" "delay_${OPT_NAME#--delay-}" "$val"
				;;
			--jitter)
				time_ok "$val" || usage_die "$opt: '$val' is not a time"
				set_imp "$TARGET" jitter "$val"
				;;
			--rate)
				rate_ok "$val" || usage_die "$opt: '$val' is not a rate (e.g. 1gbit)"
				set_imp "$TARGET" rate_a2b "$val"
				set_imp "$TARGET" rate_b2a "$val"
				;;
			--rate-a2b | --rate-b2a)
				rate_ok "$val" || usage_die "$opt: '$val' is not a rate (e.g. 1gbit)"
				set_imp "$TARGET" "rate_${OPT_NAME#--rate-}" "$val"
				;;
			--queue) set_imp "$TARGET" queue "$val" ;;
			--loss)
				add_loss "$TARGET" a2b "$val"
				add_loss "$TARGET" b2a "$val"
				;;
			--loss-a2b | --loss-b2a) add_loss "$TARGET" "${OPT_NAME#--loss-}" "$val" ;;
			--duplicate) set_imp "$TARGET" duplicate "$val" ;;
			--reorder) set_imp "$TARGET" reorder "$val" ;;
			--lhwan-arg) add_extra "$TARGET" "$val" ;;
			esac
			continue
			;;
		esac
		[ -z "$TARGET" ] || usage_die "unknown option $opt"
		case "$opt" in
		--prefix | --impair | --match | --seed | --mtu | --dca-loss | --dca-loss-a2b | \
			--dca-loss-b2a | --dcb-loss | --dcb-loss-a2b | --dcb-loss-b2a)
			[ $# -ge 2 ] || usage_die "$opt needs a value"
			val=$2
			shift 2
			case "$opt" in
			--prefix) PREFIX=$val ;;
			--impair) IMPAIR=$val ;;
			--match) MATCH=$val ;;
			--seed) SEED=$val ;;
			--mtu) MTU=$val ;;
			--dca-loss) DCA_A2B=$val DCA_B2A=$val ;;
			--dca-loss-a2b) DCA_A2B=$val ;;
			--dca-loss-b2a) DCA_B2A=$val ;;
			--dcb-loss) DCB_A2B=$val DCB_B2A=$val ;;
			--dcb-loss-a2b) DCB_A2B=$val ;;
			--dcb-loss-b2a) DCB_B2A=$val ;;
			esac
			;;
		-j | --json)
			JSON=1
			shift
			;;
		-q | --quiet)
			QUIET=1
			shift
			;;
		-h | --help)
			usage
			exit 0
			;;
		*) usage_die "unknown option $opt" ;;
		esac
	done
	[[ "$PREFIX" =~ ^[a-zA-Z0-9][a-zA-Z0-9_]{0,11}$ ]] ||
		usage_die "--prefix '$PREFIX': 1 to 12 letters, digits or _"
	case "$IMPAIR" in auto | lhwan | netem) ;; *) usage_die "--impair must be auto, lhwan or netem" ;; esac
	case "$MATCH" in all | roce) ;; *) usage_die "--match must be all or roce" ;; esac
	[[ "$MTU" =~ ^[0-9]+$ ]] && [ "$MTU" -ge 1280 ] && [ "$MTU" -le 9000 ] ||
		usage_die "--mtu must be 1280..9000"
	[ -z "$SEED" ] || [[ "$SEED" =~ ^[0-9]+$ ]] || usage_die "--seed must be a number"
	return 0
}

# ---------------------------------------------------------------- checks

need_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || die "missing tool '$c' (make deps installs it)"
	done
}

# Whether this kernel has sch_netem: try it in a throwaway namespace
netem_available() {
	local ns r=1
	ns="$PREFIX-netemprobe$$"
	ip netns add "$ns" 2>/dev/null || return 1
	ip -n "$ns" link set lo up
	if ip netns exec "$ns" tc qdisc add dev lo root netem delay 1ms 2>/dev/null; then
		r=0
	fi
	ip netns del "$ns"
	return $r
}

# Specs that need lhwan: every, psn, several rules, --match roce
netem_expressible() {
	local b d list n
	[ "$MATCH" = all ] || return 1
	for b in $(bump_names); do
		[ -z "${IMP[$b.extra]:-}" ] || return 1
		for d in a2b b2a; do
			list=${IMP[$b.loss_$d]:-}
			n=$(printf '%s' "$list" | grep -c . || true)
			[ "$n" -le 1 ] || return 1
			case "$list" in every* | psn* | none*) return 1 ;; esac
		done
	done
	return 0
}

# lhwan argv for one bump (without the stats file and the ports), one per line
lhwan_args() {
	local b=$1 d spec
	printf '%s\n' --delay "a2b:${IMP[$b.delay_a2b]:-0}" --delay "b2a:${IMP[$b.delay_b2a]:-0}"
	[ -z "${IMP[$b.jitter]:-}" ] || printf '%s\n' --jitter "${IMP[$b.jitter]}"
	[ -z "${IMP[$b.rate_a2b]:-}" ] || printf '%s\n' --rate "a2b:${IMP[$b.rate_a2b]}"
	[ -z "${IMP[$b.rate_b2a]:-}" ] || printf '%s\n' --rate "b2a:${IMP[$b.rate_b2a]}"
	[ -z "${IMP[$b.queue]:-}" ] || printf '%s\n' --queue "${IMP[$b.queue]}"
	[ -z "${IMP[$b.duplicate]:-}" ] || printf '%s\n' --duplicate "${IMP[$b.duplicate]}"
	[ -z "${IMP[$b.reorder]:-}" ] || printf '%s\n' --reorder "${IMP[$b.reorder]}"
	for d in a2b b2a; do
		while IFS= read -r spec; do
			[ -n "$spec" ] && printf '%s\n' --loss "$d:$spec"
		done <<<"${IMP[$b.loss_$d]:-}"
	done
	printf '%s\n' --match "$MATCH" --seed "$SEED"
	while IFS= read -r spec; do
		[ -n "$spec" ] && printf '%s\n' "$spec"
	done <<<"${IMP[$b.extra]:-}"
	return 0
}

# netem argument string of one direction of one bump
netem_args() {
	local b=$1 d=$2 a
	a="limit 1000000 delay ${IMP[$b.delay_$d]:-0}"
	[ -z "${IMP[$b.jitter]:-}" ] || a+=" ${IMP[$b.jitter]}"
	[ -z "${IMP[$b.rate_$d]:-}" ] || a+=" rate ${IMP[$b.rate_$d]}"
	local l
	l=$(printf '%s' "${IMP[$b.loss_$d]:-}" | head -n1)
	[ -z "$l" ] || a+=" loss $l"
	[ -z "${IMP[$b.duplicate]:-}" ] || a+=" duplicate ${IMP[$b.duplicate]//,/ }"
	[ -z "${IMP[$b.reorder]:-}" ] || a+=" reorder ${IMP[$b.reorder]//,/ }"
	printf '%s' "$a"
}

# Everything that can be checked without building anything
preflight() {
	local b n mode line out
	need_cmd ip nsenter jq setsid awk
	[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
	[ -z "$SEED" ] && SEED=$(((RANDOM << 16 | RANDOM) + 1))

	# pick the impairment mechanism
	case "$IMPAIR" in
	netem)
		need_cmd tc
		netem_available ||
			die "--impair netem: this kernel has no sch_netem (CONFIG_NET_SCH_NETEM); use --impair lhwan or auto"
		netem_expressible ||
			die "--impair netem: every, psn, several loss rules, --match roce and --lhwan-arg need lhwan"
		MECH=netem
		;;
	lhwan) MECH=lhwan ;;
	auto)
		MECH=lhwan
		if command -v tc >/dev/null && netem_expressible && netem_available; then
			MECH=netem
		fi
		;;
	esac
	# lhwan validates its own options and the DC loss specs: same parser, no surprise later
	[ -x "$LHWAN" ] || die "lhwan not built: $LHWAN (run make)"
	if [ "$MECH" = lhwan ]; then
		for b in $(bump_names); do
			mapfile -t line < <(lhwan_args "$b")
			if ! out=$("$LHWAN" --check "${line[@]}" a b 2>&1); then
				printf '%s\n' "$out" >&2
				die "bad impairment options for $b"
			fi
		done
	fi
	"$LHWAN" dcloss check --ingress "$DCA_B2A" --egress "$DCA_A2B" || die "bad --dca-loss"
	"$LHWAN" dcloss check --ingress "$DCB_A2B" --egress "$DCB_B2A" || die "bad --dcb-loss"

	# name clash: our namespaces must be absent, or ours from an earlier up of this topology
	STATE=$STATE_BASE/$PREFIX
	if [ -f "$STATE/kind" ]; then
		mode=$(cat "$STATE/kind")
		[ "$mode" = "$TOPO" ] ||
			die "prefix '$PREFIX' is taken by a $mode topology (down it first, or use another --prefix)"
	else
		for n in "${NODES[@]}" "${ALL_NODE_NAMES[@]}"; do
			if ns_exists "$n"; then
				die "namespace $(ns_of "$n") exists and is not ours (name clash: use another --prefix)"
			fi
		done
	fi
	return 0
}

# ---------------------------------------------------------------- build

sysctl_ns() { nsx "$1" sysctl -qw "$2=$3" >/dev/null; }

make_namespaces() {
	local n
	for n in "${NODES[@]}"; do
		ns_exists "$n" && continue
		ip netns add "$(ns_of "$n")"
		ip -n "$(ns_of "$n")" link set lo up
	done
	for n in "${BUMP_NS[@]}"; do
		# a bump is invisible: no IPv6 (no link-local, no RS, no DAD), no forwarding
		sysctl_ns "$n" net.ipv6.conf.all.disable_ipv6 1
		sysctl_ns "$n" net.ipv6.conf.default.disable_ipv6 1
		sysctl_ns "$n" net.ipv4.ip_forward 0
	done
	for n in "${NODES[@]}"; do
		is_bump "$n" && continue
		# addresses usable at once, no router solicitations through the WAN
		sysctl_ns "$n" net.ipv6.conf.default.accept_dad 0
		sysctl_ns "$n" net.ipv6.conf.all.accept_dad 0
		sysctl_ns "$n" net.ipv6.conf.default.router_solicitations 0
		sysctl_ns "$n" net.ipv6.conf.all.accept_ra 0
	done
	for n in "${ROUTERS[@]}"; do
		sysctl_ns "$n" net.ipv4.ip_forward 1
		sysctl_ns "$n" net.ipv6.conf.all.forwarding 1
		sysctl_ns "$n" net.ipv4.conf.all.rp_filter 0
		sysctl_ns "$n" net.ipv4.conf.default.rp_filter 0
	done
}

is_bump() {
	local b
	for b in "${BUMP_NS[@]}"; do [ "$b" = "$1" ] && return 0; done
	return 1
}

make_links() {
	local l a b na ia ma nb ib mb
	for l in "${LINKS[@]}"; do
		read -r a b <<<"$l"
		ma=${a#*/} a=${a%/*} mb=${b#*/} b=${b%/*}
		na=${a%%:*} ia=${a#*:} nb=${b%%:*} ib=${b#*:}
		if ! nsx "$na" ip link show "$ia" >/dev/null 2>&1; then
			ip link add "$ia" netns "$(ns_of "$na")" address "$ma" mtu "$MTU" type veth \
				peer name "$ib" netns "$(ns_of "$nb")" address "$mb" mtu "$MTU"
		fi
		ip -n "$(ns_of "$na")" link set "$ia" mtu "$MTU" up
		ip -n "$(ns_of "$nb")" link set "$ib" mtu "$MTU" up
	done
}

make_addresses() {
	local x ni v4 v6 n i
	for x in "${ADDRS[@]}"; do
		read -r ni v4 v6 <<<"$x"
		n=${ni%%:*} i=${ni#*:}
		ip -n "$(ns_of "$n")" addr replace "$v4" dev "$i"
		ip -n "$(ns_of "$n")" -6 addr replace "$v6" dev "$i" nodad
	done
	for x in "${ROUTES[@]}"; do
		local node p4 via4 p6 via6 metric
		read -r node p4 via4 p6 via6 metric <<<"$x"
		ip -n "$(ns_of "$node")" route replace "$p4" via "$via4" ${metric:+metric "$metric"}
		ip -n "$(ns_of "$node")" -6 route replace "$p6" via "$via6" ${metric:+metric "$metric"}
	done
}

# address (without length) of node:if, family 4 or 6
addr_of() {
	local x ni v4 v6
	for x in "${ADDRS[@]}"; do
		read -r ni v4 v6 <<<"$x"
		[ "$ni" = "$1" ] || continue
		if [ "$2" = 4 ]; then printf '%s' "${v4%/*}"; else printf '%s' "${v6%/*}"; fi
		return 0
	done
	return 1
}

mac_of() {
	local l a b
	for l in "${LINKS[@]}"; do
		read -r a b <<<"$l"
		[ "${a%/*}" = "$1" ] && { printf '%s' "${a#*/}"; return 0; }
		[ "${b%/*}" = "$1" ] && { printf '%s' "${b#*/}"; return 0; }
	done
	return 1
}

# Permanent neighbour entries between every pair of L3 endpoints of a segment:
# no ARP or ND through a lossy, delayed WAN, and nothing to resolve for packets
# longhaul builds itself.
make_neighbours() {
	local s x y
	for s in "${SEGMENTS[@]}"; do
		for x in $s; do
			for y in $s; do
				[ "$x" = "$y" ] && continue
				ip -n "$(ns_of "${x%%:*}")" neigh replace "$(addr_of "$y" 4)" \
					lladdr "$(mac_of "$y")" dev "${x#*:}" nud permanent
				ip -n "$(ns_of "${x%%:*}")" -6 neigh replace "$(addr_of "$y" 6)" \
					lladdr "$(mac_of "$y")" dev "${x#*:}" nud permanent
			done
		done
	done
}

# ---------------------------------------------------------------- impairment

lhwan_pid_alive() {
	local pidf=$STATE/$1.pid pid
	[ -f "$pidf" ] || return 1
	pid=$(cat "$pidf")
	[ -n "$pid" ] && [ -d "/proc/$pid" ] && grep -q lhwan "/proc/$pid/cmdline" 2>/dev/null
}

stop_lhwan() {
	local b=$1 pid i
	lhwan_pid_alive "$b" || { rm -f "$STATE/$b.pid"; return 0; }
	pid=$(cat "$STATE/$b.pid")
	kill -TERM "$pid" 2>/dev/null || true
	for i in $(seq 50); do
		[ -d "/proc/$pid" ] || break
		sleep 0.05
	done
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$STATE/$b.pid"
}

start_lhwan() {
	local b=$1 pa=$2 pb=$3 args pid i rc
	mapfile -t args < <(lhwan_args "$b")
	rm -f "$STATE/$b.stats.json"
	# setsid: its own session, so a test runner's process group kill does not reach it;
	# every descriptor closed or redirected, so BATS does not wait for it
	nsx "$b" setsid "$LHWAN" "${args[@]}" --stats-file "$STATE/$b.stats.json" "$pa" "$pb" \
		</dev/null >"$STATE/$b.log" 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
	pid=$!
	# up to 20 s: a host busy with the previous test's teardown can be slow
	for i in $(seq 400); do
		# lhwan writes the stats file once its ports are open; its pid is in it
		if [ -f "$STATE/$b.stats.json" ]; then
			jq -r .pid "$STATE/$b.stats.json" >"$STATE/$b.pid"
			return 0
		fi
		[ -d "/proc/$pid" ] || break
		sleep 0.05
	done
	cat "$STATE/$b.log" >&2 || true
	if [ -d "/proc/$pid" ]; then
		echo "lhwan (pid $pid) still running after 20 s without its stats file: stopped" >&2
		kill -KILL "$pid" 2>/dev/null || true
	else
		rc=0
		wait "$pid" || rc=$?
		echo "lhwan (pid $pid) exited with status $rc before its stats file" >&2
	fi
	die "lhwan in $(ns_of "$b") did not start (log: $STATE/$b.log)"
}

setup_netem() {
	local b=$1 pa=$2 pb=$3
	stop_lhwan "$b"
	if ! nsx "$b" ip link show br0 >/dev/null 2>&1; then
		nsx "$b" ip link add br0 type bridge stp_state 0 forward_delay 0
	fi
	nsx "$b" ip link set "$pa" master br0
	nsx "$b" ip link set "$pb" master br0
	nsx "$b" ip link set br0 up
	# a2b leaves through port B, b2a through port A
	# shellcheck disable=SC2046
	nsx "$b" tc qdisc replace dev "$pb" root netem $(netem_args "$b" a2b)
	# shellcheck disable=SC2046
	nsx "$b" tc qdisc replace dev "$pa" root netem $(netem_args "$b" b2a)
}

apply_impairment() {
	local x b pa pb want have
	for x in "${BUMPS[@]}"; do
		read -r b pa pb <<<"$x"
		if [ "$MECH" = netem ]; then
			setup_netem "$b" "$pa" "$pb"
			continue
		fi
		# idempotent: an lhwan already running with the same arguments stays (and keeps its counters)
		want=$(lhwan_args "$b" | tr '\n' ' ')
		have=$(cat "$STATE/$b.args" 2>/dev/null || true)
		if [ "$want" = "$have" ] && lhwan_pid_alive "$b"; then
			continue
		fi
		stop_lhwan "$b"
		start_lhwan "$b" "$pa" "$pb"
		printf '%s' "$want" >"$STATE/$b.args"
	done
}

# Loss on the host links: a2b is src->dst. src sends a2b on dca (egress) and
# receives b2a (ingress); dst receives a2b on dcb (ingress) and sends b2a (egress).
# Frames lost at egress go into a black hole, a veth pair left down: a real
# link loses frames silently, where dropping would fail the sender's send.
apply_dc_loss() {
	local h
	for h in "${HOSTS[@]}"; do
		nsx "$h" ip link show dcnull >/dev/null 2>&1 ||
			nsx "$h" ip link add dcnull type veth peer name dcnull1
	done
	nsx src "$LHWAN" dcloss attach --dev "$HOST_IF" --blackhole dcnull \
		--ingress "$DCA_B2A" --egress "$DCA_A2B"
	nsx dst "$LHWAN" dcloss attach --dev "$HOST_IF" --blackhole dcnull \
		--ingress "$DCB_A2B" --egress "$DCB_B2A"
}

save_options() {
	local b
	{
		jq -n --arg topo "$TOPO" --arg prefix "$PREFIX" --arg impair "$IMPAIR" \
			--arg mech "$MECH" --arg match "$MATCH" --arg seed "$SEED" --arg mtu "$MTU" \
			--arg dca_a2b "$DCA_A2B" --arg dca_b2a "$DCA_B2A" \
			--arg dcb_a2b "$DCB_A2B" --arg dcb_b2a "$DCB_B2A" \
			'{topology: $topo, prefix: $prefix, impair: $impair, mechanism: $mech,
			  match: $match, seed: ($seed | tonumber), mtu: ($mtu | tonumber),
			  dc_loss: {dca: {a2b: $dca_a2b, b2a: $dca_b2a},
				    dcb: {a2b: $dcb_a2b, b2a: $dcb_b2a}}}'
		for b in $(bump_names); do
			jq -n --arg name "$b" --arg rtt "${IMP[$b.rtt]:-}" \
				--arg da "${IMP[$b.delay_a2b]:-0}" --arg db "${IMP[$b.delay_b2a]:-0}" \
				--arg jitter "${IMP[$b.jitter]:-0}" \
				--arg ra "${IMP[$b.rate_a2b]:-0}" --arg rb "${IMP[$b.rate_b2a]:-0}" \
				--arg queue "${IMP[$b.queue]:-}" --arg dup "${IMP[$b.duplicate]:-}" \
				--arg reorder "${IMP[$b.reorder]:-}" \
				--arg la "${IMP[$b.loss_a2b]:-}" --arg lb "${IMP[$b.loss_b2a]:-}" \
				--arg extra "${IMP[$b.extra]:-}" \
				'{name: $name, rtt: (if $rtt == "" then null else $rtt end),
				  delay: {a2b: $da, b2a: $db}, jitter: $jitter,
				  rate: {a2b: $ra, b2a: $rb}, queue: (if $queue == "" then null else $queue end),
				  loss: {a2b: ($la | split("\n") | map(select(. != ""))),
					 b2a: ($lb | split("\n") | map(select(. != "")))},
				  duplicate: (if $dup == "" then null else $dup end),
				  reorder: (if $reorder == "" then null else $reorder end),
				  lhwan_args: ($extra | split("\n") | map(select(. != "")))}'
		done
	} | jq -s '.[0] + {paths: .[1:]}' >"$STATE/options.json"
}

# ---------------------------------------------------------------- commands

cmd_up() {
	local fresh=0
	preflight
	[ -f "$STATE/kind" ] || fresh=1
	mkdir -p "$STATE"
	echo "$TOPO" >"$STATE/kind"
	# a failure half way removes what this call built
	if [ $fresh = 1 ]; then
		trap 'echo "$TOPO: setup failed, removing what was built" >&2; QUIET=1 cmd_down_state; exit 1' ERR
	fi
	make_namespaces
	make_links
	make_addresses
	make_neighbours
	apply_impairment
	apply_dc_loss
	save_options
	trap - ERR
	info "up: prefix $PREFIX, WAN by $MECH, seed $SEED"
	[ "$JSON" = 1 ] && cmd_status
	return 0
}

# remove everything named by our prefix: processes, namespaces, state
cmd_down_state() {
	local n b pids
	STATE=$STATE_BASE/$PREFIX
	for b in $(bump_names); do stop_lhwan "$b"; done
	for n in "${NODES[@]}" "${ALL_NODE_NAMES[@]}"; do
		ns_exists "$n" || continue
		pids=$(ip netns pids "$(ns_of "$n")" 2>/dev/null || true)
		[ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
		ip netns del "$(ns_of "$n")" 2>/dev/null || true
	done
	rm -rf "$STATE"
}

cmd_down() {
	need_cmd ip nsenter
	[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
	STATE=$STATE_BASE/$PREFIX
	if [ -f "$STATE/kind" ] && [ "$(cat "$STATE/kind")" != "$TOPO" ]; then
		die "prefix '$PREFIX' holds a $(cat "$STATE/kind") topology; use its own script to take it down"
	fi
	cmd_down_state
	info "down: prefix $PREFIX"
}

# fresh lhwan stats: ask for them (SIGUSR1) and wait for the file to change
lhwan_stats() {
	local b=$1 f=$STATE/$1.stats.json before i pid
	[ -f "$f" ] || { echo null; return; }
	if lhwan_pid_alive "$b"; then
		pid=$(cat "$STATE/$b.pid")
		before=$(stat -c %Y.%s "$f" 2>/dev/null; jq -r .uptime_s "$f" 2>/dev/null)
		kill -USR1 "$pid" 2>/dev/null || true
		for i in $(seq 40); do
			sleep 0.025
			[ "$(stat -c %Y.%s "$f" 2>/dev/null; jq -r .uptime_s "$f" 2>/dev/null)" != "$before" ] && break
		done
	fi
	jq . "$f" 2>/dev/null || echo null
}

status_json() {
	local n x ni v4 v6 b pa pb node ifs
	STATE=$STATE_BASE/$PREFIX
	{
		if [ -f "$STATE/options.json" ]; then cat "$STATE/options.json"; else echo '{}'; fi
		# nodes and their interfaces
		for n in "${NODES[@]}"; do
			ifs=$(for x in "${LINKS[@]}"; do
				for ni in $x; do
					node=${ni%%:*}
					[ "$node" = "$n" ] || continue
					local ifn=${ni%/*}
					ifn=${ifn#*:}
					jq -n --arg name "$ifn" --arg mac "${ni#*/}" \
						--arg v4 "$(addr_of "$n:$ifn" 4 || true)" \
						--arg v6 "$(addr_of "$n:$ifn" 6 || true)" \
						--arg role "$(iface_role "$n" "$ifn")" \
						--argjson up "$(ns_exists "$n" && nsx "$n" ip link show "$ifn" up 2>/dev/null | grep -q UP && echo true || echo false)" \
						'{name: $name, mac: $mac, ipv4: (if $v4 == "" then null else $v4 end),
						  ipv6: (if $v6 == "" then null else $v6 end), role: $role, up: $up}'
				done
			done | jq -s .)
			jq -n --arg n "$n" --arg ns "$(ns_of "$n")" --argjson exists "$(ns_exists "$n" && echo true || echo false)" \
				--argjson ifs "$ifs" '{($n): {netns: $ns, exists: $exists, interfaces: $ifs}}'
		done | jq -s 'add | {nodes: .}'
		# WAN emulators
		for x in "${BUMPS[@]}"; do
			read -r b pa pb <<<"$x"
			jq -n --arg b "$b" --arg ns "$(ns_of "$b")" --arg pa "$pa" --arg pb "$pb" \
				--arg pid "$(cat "$STATE/$b.pid" 2>/dev/null || true)" \
				--argjson running "$(lhwan_pid_alive "$b" && echo true || echo false)" \
				--arg mech "$(jq -r '.mechanism // ""' "$STATE/options.json" 2>/dev/null)" \
				--argjson stats "$(lhwan_stats "$b")" \
				--arg qa "$( [ "$(jq -r '.mechanism // ""' "$STATE/options.json" 2>/dev/null)" = netem ] && nsx "$b" tc qdisc show dev "$pb" 2>/dev/null || true)" \
				--arg qb "$( [ "$(jq -r '.mechanism // ""' "$STATE/options.json" 2>/dev/null)" = netem ] && nsx "$b" tc qdisc show dev "$pa" 2>/dev/null || true)" \
				'{($b): {netns: $ns, mechanism: $mech, port_a: $pa, port_b: $pb,
				  pid: (if $pid == "" then null else ($pid | tonumber) end), running: $running,
				  stats_file: null, stats: $stats,
				  netem: (if $mech == "netem" then {a2b: $qa, b2a: $qb} else null end)}}'
		done | jq -s --arg sd "$STATE" 'add | with_entries(.value.stats_file = "\($sd)/\(.key).stats.json") | {wan: .}'
		# host-link loss counters
		for n in "${HOSTS[@]}"; do
			if ns_exists "$n"; then
				nsx "$n" "$LHWAN" dcloss stats --dev "$HOST_IF" 2>/dev/null |
					jq --arg n "$n" '{($n): .}' || jq -n --arg n "$n" '{($n): null}'
			else
				jq -n --arg n "$n" '{($n): null}'
			fi
		done | jq -s 'add | {dc_loss_counters: .}'
		jq -n --arg sd "$STATE" --argjson up "$(all_up && echo true || echo false)" \
			'{state: (if $up then "up" else "down" end), state_dir: $sd}'
	} | jq -s 'add'
}

all_up() {
	local n
	[ -f "$STATE/kind" ] || return 1
	for n in "${NODES[@]}"; do ns_exists "$n" || return 1; done
	return 0
}

cmd_status() {
	need_cmd jq
	STATE=$STATE_BASE/$PREFIX
	if [ "$JSON" = 1 ]; then
		status_json
		return 0
	fi
	status_json | jq -r '
		"topology \(.topology // "?") prefix \(.prefix // "?"): \(.state)",
		"  WAN by \(.mechanism // "?") (asked: \(.impair // "?")), match \(.match // "?"), seed \(.seed // "?"), mtu \(.mtu // "?")",
		(.paths // [] | .[] | "  \(.name): rtt \(.rtt // "-") delay a2b \(.delay.a2b) b2a \(.delay.b2a) jitter \(.jitter) rate a2b \(.rate.a2b) b2a \(.rate.b2a) loss a2b \(.loss.a2b) b2a \(.loss.b2a)"),
		"  dc loss: dca a2b \(.dc_loss.dca.a2b // "-") b2a \(.dc_loss.dca.b2a // "-"); dcb a2b \(.dc_loss.dcb.a2b // "-") b2a \(.dc_loss.dcb.b2a // "-")",
		(.nodes | to_entries[] | "  \(.key) (\(.value.netns)\(if .value.exists then "" else ", missing" end)): " +
			([.value.interfaces[] | "\(.name)[\(.role)] \(.ipv4 // "-") \(.ipv6 // "-")"] | join(", "))),
		(.wan | to_entries[] | "  \(.key): \(.value.mechanism) pid \(.value.pid // "-") running \(.value.running)")'
}

cmd_exec() {
	local node=$1
	shift
	[ "${1:-}" = "--" ] && shift
	[ $# -gt 0 ] || usage_die "exec NODE -- CMD..."
	valid_node "$node" || usage_die "no node '$node' (one of: ${NODES[*]})"
	ns_exists "$node" || die "$(ns_of "$node") does not exist (up first)"
	# nsenter, not ip netns exec: that remounts /sys and hides /sys/fs/bpf
	exec nsenter --net="/var/run/netns/$(ns_of "$node")" -- "$@"
}

cmd_shell() {
	local node=$1
	valid_node "$node" || usage_die "no node '$node' (one of: ${NODES[*]})"
	ns_exists "$node" || die "$(ns_of "$node") does not exist (up first)"
	PS1="[$(ns_of "$node")] \\w# " exec nsenter --net="/var/run/netns/$(ns_of "$node")" -- \
		"${SHELL:-/bin/bash}" --norc -i
}

# What an interface is for, so a test or longhauld can find the DC and WAN sides
iface_role() {
	local n=$1 i=$2 h
	for h in "${HOSTS[@]}"; do [ "$h" = "$n" ] && { echo host; return; }; done
	if is_bump "$n"; then
		echo emulator-port
	elif [ "$i" = dc ]; then
		echo dc-side
	else
		echo wan-side
	fi
}

valid_node() {
	local n
	for n in "${NODES[@]}"; do [ "$n" = "$1" ] && return 0; done
	return 1
}

# topo_main ARGS: the command line of a topology script
topo_main() {
	local cmd=${1:-}
	[ $# -gt 0 ] && shift
	BUMP_NS=()
	local x
	for x in "${BUMPS[@]}"; do BUMP_NS+=("${x%% *}"); done
	case "$cmd" in
	up)
		parse_up_options "$@"
		cmd_up
		;;
	down)
		parse_up_options "$@"
		cmd_down
		;;
	status)
		parse_up_options "$@"
		cmd_status
		;;
	exec | shell)
		local node=
		local rest=()
		while [ $# -gt 0 ]; do
			case "$1" in
			--prefix)
				PREFIX=${2:-}
				shift 2
				;;
			--)
				rest+=("$@")
				break
				;;
			*)
				if [ -z "$node" ]; then node=$1; else rest+=("$1"); fi
				shift
				;;
			esac
		done
		[ -n "$node" ] || usage_die "$cmd NODE"
		if [ "$cmd" = exec ]; then cmd_exec "$node" "${rest[@]}"; else cmd_shell "$node"; fi
		;;
	-h | --help | help | "")
		usage
		[ -n "$cmd" ] || exit 2
		;;
	*) usage_die "unknown command '$cmd'" ;;
	esac
}
