#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Two qemu guests with Linux Soft-RoCE (rdma_rxe) in place of the hosts of a
# topology (two-dc.sh or dual-path.sh, already up), one perftest or pingpong
# between them, one JSON object on stdout: per guest the command's parsed
# result, exit status, output and every rxe hw_counter.
#
#   run-pair.sh --prefix P [OPTIONS] [-- ARGS...]
#
# The client guest stands in for P-src, the server guest for P-dst: in each
# of those namespaces a tap is wired to the host's DC link (interface dc) by
# two tc mirred redirects (u32 catch-all filters), and the guest takes the host's address, MAC and
# gateway (with a permanent neighbour entry for it, as the hosts have). The
# host's own stack sees nothing while the guest runs; the topology's
# gateways, WAN emulator and DC-link loss (lhwan dcloss on dc, XDP and tcx,
# which run before and after the redirect) see exactly the frames lhperf's
# would. Everything is undone on exit.
#
# options:
#   --prefix P       the topology's namespace prefix (P-src, P-dst)
#   --test T         ib_write_bw (default), ib_send_bw, ib_read_bw, ib_write_lat,
#                    ib_send_lat, ib_read_lat, ibv_rc_pingpong
#   ARGS             the test's own options, given to both sides (default for the
#                    bandwidth tests: -s 65536 -D 10); -d, -x/-g and the server
#                    address are added here
#   --name N         names of this run's taps (Ns, Nd); default io<pid>
#   --image DIR      the guest (make interop-image); default $O/interop
#   --timeout S      the whole run (default 120); each guest's command gets S - 20
#   --retry S        how long the client retries connecting (default 40)
#   --mem MB         memory of each guest (default 512)
#   --tap-queue N    frames the tap holds for a guest that is not reading (its
#                    txqueuelen, default 1000, like a NIC's ring); what overflows
#                    is counted in .tap.to_guest.dropped
#   --accel A        auto (default: kvm only with /dev/kvm and VMX/SVM), tcg, kvm
#   --logs DIR       keep the guests' consoles and raw results in DIR
#   --capture LIST   tcpdump (-s 0, UDP port 4791 only) on these interfaces of
#                    the topology while the guests run: NODE:IFACE[,NODE:IFACE...]
#                    (e.g. gwa:dc,gwb:wan; NODE is the namespace P-NODE); one
#                    classic pcap NODE-IFACE.pcap each in --capture-dir, listed
#                    in the JSON's .captures (check them with roce-pcap.py)
#   --capture-dir D  where the pcaps go (default: the --logs directory)
#   --capture-max N  packets per capture at most (default 100000, ~110 MB)
#   --nice N         the guests' niceness (default 10): on a small host two TCG
#                    guests take every core, and what carries their packets
#                    (softirq work deferred to ksoftirqd, lhwan, the agents)
#                    must not wait behind them: at 0 the WAN's round trip
#                    swung from 4 to 60 ms (captures on both gateways)
#   -q               no progress on stderr
#
# Exit status: 0 both commands exited 0; 1 a command failed (JSON printed);
# 2 bad usage; 3 a guest gave no result (JSON printed, with the reason).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
O=${O:-build}
case "$O" in /*) ;; *) O=$ROOT/$O ;; esac

PROG=run-pair
die() {
	printf '%s: error: %s\n' "$PROG" "$*" >&2
	exit 3
}
usage_die() {
	printf '%s: error: %s (see --help)\n' "$PROG" "$*" >&2
	exit 2
}
QUIET=0
info() { [ "$QUIET" = 1 ] || printf '%s: %s\n' "$PROG" "$*" >&2; }

PREFIX= TEST=ib_write_bw NAME=io$$ IMAGE=$O/interop TIMEOUT=120 RETRY=40 MEM=512 TAPQ=1000
ACCEL=auto LOGS= ARGS=() HAVE_ARGS=0 CAPTURE= CAPDIR= CAPMAX=100000 NICE=10
while [ $# -gt 0 ]; do
	case "$1" in
	--prefix | --test | --name | --image | --timeout | --retry | --mem | --tap-queue | --accel | --logs | \
		--capture | --capture-dir | --capture-max | --nice)
		[ $# -ge 2 ] || usage_die "$1 needs a value"
		case "$1" in
		--prefix) PREFIX=$2 ;;
		--test) TEST=$2 ;;
		--name) NAME=$2 ;;
		--image) IMAGE=$2 ;;
		--timeout) TIMEOUT=$2 ;;
		--retry) RETRY=$2 ;;
		--mem) MEM=$2 ;;
		--tap-queue) TAPQ=$2 ;;
		--accel) ACCEL=$2 ;;
		--logs) LOGS=$2 ;;
		--capture) CAPTURE=$2 ;;
		--capture-dir) CAPDIR=$2 ;;
		--capture-max) CAPMAX=$2 ;;
		--nice) NICE=$2 ;;
		esac
		shift 2
		;;
	-q | --quiet)
		QUIET=1
		shift
		;;
	-h | --help)
		sed -n '2,/^set -e/p' "$0" | sed -e 's/^# \{0,1\}//' -e '/^set -e/d' >&2
		exit 0
		;;
	--)
		shift
		ARGS=("$@")
		HAVE_ARGS=1
		break
		;;
	*) usage_die "unknown option '$1'" ;;
	esac
done
[ -n "$PREFIX" ] || usage_die "--prefix is required (the topology to put the guests in)"
case "$TEST" in
ib_write_bw | ib_send_bw | ib_read_bw | ib_write_lat | ib_send_lat | ib_read_lat | ibv_rc_pingpong) ;;
*) usage_die "--test '$TEST': one of ib_write_bw ib_send_bw ib_read_bw ib_write_lat ib_send_lat ib_read_lat ibv_rc_pingpong" ;;
esac
[[ "$NAME" =~ ^[a-zA-Z][a-zA-Z0-9_]{0,12}$ ]] || usage_die "--name '$NAME': 1 to 13 letters, digits or _"
for v in "timeout $TIMEOUT" "retry $RETRY" "mem $MEM" "tap-queue $TAPQ" "capture-max $CAPMAX" "nice $NICE"; do
	[[ "${v#* }" =~ ^[0-9]+$ ]] || usage_die "--${v%% *} '${v#* }' is not a whole number"
done
[ "$TIMEOUT" -ge 30 ] || usage_die "--timeout must be at least 30 (two boots and a test)"
[ "$MEM" -ge 128 ] || usage_die "--mem must be at least 128"
[ "$NICE" -le 19 ] || usage_die "--nice must be 0 to 19"
case "$ACCEL" in auto | tcg | kvm) ;; *) usage_die "--accel must be auto, tcg or kvm" ;; esac
CAPS=()
if [ -n "$CAPTURE" ]; then
	IFS=, read -r -a CAPS <<<"$CAPTURE"
	for c in "${CAPS[@]}"; do
		[[ "$c" =~ ^[a-z0-9]+:[a-zA-Z0-9_.-]+$ ]] || usage_die "--capture '$c': NODE:IFACE"
	done
	[ -n "$CAPDIR" ] || CAPDIR=$LOGS
	[ -n "$CAPDIR" ] || usage_die "--capture needs --capture-dir or --logs"
fi
if [ "$HAVE_ARGS" = 0 ]; then
	case "$TEST" in *_bw) ARGS=(-s 65536 -D 10) ;; esac
fi
for a in "${ARGS[@]}"; do
	case "$a" in *"'"*) usage_die "test arguments must not contain single quotes" ;; esac
done

[ "$(id -u)" -eq 0 ] || die "needs root (namespaces, taps)"
for c in qemu-system-x86_64 cpio ip tc nsenter jq timeout; do
	command -v "$c" >/dev/null 2>&1 || die "missing tool '$c' (make deps installs it)"
done
[ "${#CAPS[@]}" = 0 ] || command -v tcpdump >/dev/null 2>&1 || die "--capture needs tcpdump (make deps installs it)"
[ -f "$IMAGE/image.json" ] && [ -f "$IMAGE/initramfs.cpio.gz" ] ||
	die "no guest image in $IMAGE (make interop-image)"
KERNEL=$(jq -r .kernel "$IMAGE/image.json")
[ -f "$KERNEL" ] || KERNEL=$IMAGE/$(basename "$KERNEL")
[ -f "$KERNEL" ] || die "kernel $KERNEL of $IMAGE/image.json is missing (make interop-image)"

if [ "$ACCEL" = auto ]; then
	ACCEL=tcg
	# /dev/kvm alone is not enough: a KVM without VMX/SVM (KVM-PVM) kills stock kernels
	if [ -w /dev/kvm ] && grep -qw -e vmx -e svm /proc/cpuinfo; then ACCEL=kvm; fi
fi
if [ "$ACCEL" = kvm ]; then
	QEMU_ACCEL=(-accel kvm -cpu host)
else
	QEMU_ACCEL=(-accel tcg,thread=multi -cpu qemu64)
fi

# ------------------------------------------------------------------ wiring

TMP=$(mktemp -d "/tmp/$PROG.$NAME.XXXXXX")
PIDS=()
WIRED=()
CAP_PIDS=()

# captures_stop: SIGINT each tcpdump (it writes out what it buffered) and wait
captures_stop() {
	local pid
	for pid in "${CAP_PIDS[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
	for pid in "${CAP_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
	CAP_PIDS=()
}

cleanup() {
	local pid ns tap
	captures_stop
	for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
	for x in "${WIRED[@]}"; do
		read -r ns tap <<<"$x"
		tc -n "$ns" qdisc del dev dc clsact 2>/dev/null || true
		ip -n "$ns" link del "$tap" 2>/dev/null || true
	done
	if [ -n "$LOGS" ]; then
		mkdir -p "$LOGS"
		cp "$TMP"/*.log "$LOGS"/ 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# host_facts NS: address, prefix length, MAC, MTU, gateway and its MAC of dc
host_facts() {
	local ns=$1 a l r n
	a=$(ip -n "$ns" -j -4 addr show dev dc) || die "$ns has no interface dc (is the topology up?)"
	l=$(ip -n "$ns" -j link show dev dc)
	r=$(ip -n "$ns" -j -4 route show default)
	jq -n --argjson a "$a" --argjson l "$l" --argjson r "$r" '{
		ip: $a[0].addr_info[0].local, plen: $a[0].addr_info[0].prefixlen,
		mac: $l[0].address, mtu: $l[0].mtu, gw: $r[0].gateway}' >"$TMP/$ns.facts"
	n=$(ip -n "$ns" -j neigh show "$(jq -r .gw "$TMP/$ns.facts")" dev dc)
	jq --argjson n "$n" '. + {gw_mac: ($n[0].lladdr // "")}' "$TMP/$ns.facts" >"$TMP/$ns.f2"
	mv "$TMP/$ns.f2" "$TMP/$ns.facts"
	jq -e '.ip and .plen and .mac and .gw' "$TMP/$ns.facts" >/dev/null ||
		die "$ns: dc needs an IPv4 address and a default route ($(jq -c . "$TMP/$ns.facts"))"
}

# wire NS TAP: a tap in NS, joined to dc by a redirect each way
wire() {
	local ns=$1 tap=$2 mtu
	mtu=$(jq -r .mtu "$TMP/$ns.facts")
	if tc -n "$ns" -j qdisc show dev dc | jq -e 'any(.[]; .kind == "clsact")' >/dev/null; then
		die "$ns: dc already has a clsact qdisc (another run in this topology?)"
	fi
	ip -n "$ns" tuntap add dev "$tap" mode tap || die "$ns: cannot create tap $tap"
	WIRED+=("$ns $tap")
	ip -n "$ns" link set "$tap" mtu "$mtu" txqueuelen "$TAPQ" up
	tc -n "$ns" qdisc add dev "$tap" clsact
	tc -n "$ns" qdisc add dev dc clsact
	tc -n "$ns" filter add dev dc ingress protocol all u32 match u32 0 0 action mirred egress redirect dev "$tap"
	tc -n "$ns" filter add dev "$tap" ingress protocol all u32 match u32 0 0 action mirred egress redirect dev dc
}

# sq WORD: WORD in single quotes for the guest's sh
sq() { printf "'%s'" "$1"; }

# job ROLE NS CMD: the second cpio of a guest, /etc/lh-job
job() {
	local role=$1 ns=$2 cmd=$3 d=$TMP/$1.job
	mkdir -p "$d/etc"
	{
		echo "LH_NAME=$(sq "$role")"
		echo "LH_IP=$(sq "$(jq -r .ip "$TMP/$ns.facts")")"
		echo "LH_PLEN=$(sq "$(jq -r .plen "$TMP/$ns.facts")")"
		echo "LH_GW=$(sq "$(jq -r .gw "$TMP/$ns.facts")")"
		echo "LH_GW_MAC=$(sq "$(jq -r .gw_mac "$TMP/$ns.facts")")"
		echo "LH_MTU=$(sq "$(jq -r .mtu "$TMP/$ns.facts")")"
		echo "LH_CMD=$(sq "$cmd")"
		echo "LH_TIMEOUT=$(sq "$((TIMEOUT - 20))")"
		[ "$role" = server ] || echo "LH_RETRY_S=$(sq "$RETRY")"
	} >"$d/etc/lh-job"
	(cd "$d" && find . -mindepth 1 | cpio -o -H newc -R 0:0 --quiet) >"$TMP/$role.cpio"
	# the job first, uncompressed; the kernel unpacks both archives into one rootfs
	cat "$TMP/$role.cpio" "$IMAGE/initramfs.cpio.gz" >"$TMP/$role.initrd"
}

# boot ROLE NS TAP: a guest in NS on TAP, in the background
boot() {
	local role=$1 ns=$2 tap=$3 mac
	mac=$(jq -r .mac "$TMP/$ns.facts")
	# offloads off: the guest computes its checksums and segments, the frames on
	# dc are whole, as a host's on a plain link would be
	nsenter --net="/var/run/netns/$ns" -- nice -n "$NICE" qemu-system-x86_64 "${QEMU_ACCEL[@]}" \
		-m "$MEM" -smp 1 -nodefaults -no-user-config -display none -no-reboot \
		-kernel "$KERNEL" -initrd "$TMP/$role.initrd" \
		-append "console=ttyS0 panic=-1 loglevel=4 mitigations=off" \
		-serial "file:$TMP/$role-console.log" -serial "file:$TMP/$role-result.log" \
		-netdev "tap,id=n0,ifname=$tap,script=no,downscript=no" \
		-device "virtio-net-pci,netdev=n0,mac=$mac,romfile=,csum=off,gso=off,guest_csum=off,guest_tso4=off,guest_tso6=off,guest_ecn=off,guest_ufo=off,host_tso4=off,host_tso6=off,host_ecn=off,host_ufo=off" \
		</dev/null >"$TMP/$role-qemu.log" 2>&1 &
	PIDS+=($!)
	eval "PID_$role=$!"
}

SRC=$PREFIX-src DST=$PREFIX-dst
for ns in "$SRC" "$DST"; do
	[ -e "/var/run/netns/$ns" ] || die "no namespace $ns (bring the topology up with --prefix $PREFIX)"
	host_facts "$ns"
done
wire "$DST" "${NAME}d"
wire "$SRC" "${NAME}s"

case "$TEST" in
ibv_rc_pingpong) gidopt=-g ;;
*) gidopt=-x ;;
esac
targs=""
for a in "${ARGS[@]}"; do targs+=" $(sq "$a")"; done
base="$TEST -d rxe0 $gidopt \$LH_GID$targs"
job server "$DST" "$base"
job client "$SRC" "$base $(jq -r .ip "$TMP/$DST.facts")"

# captures_start: one tcpdump per --capture entry, each until it listens
captures_start() {
	local c node ifc i
	[ "${#CAPS[@]}" -gt 0 ] || return 0
	mkdir -p "$CAPDIR"
	for c in "${CAPS[@]}"; do
		node=${c%%:*} ifc=${c#*:}
		[ -e "/var/run/netns/$PREFIX-$node" ] || die "--capture $c: no namespace $PREFIX-$node"
		rm -f "$CAPDIR/$node-$ifc.pcap"
		# nsenter execs tcpdump: $! is tcpdump itself
		nsenter --net="/var/run/netns/$PREFIX-$node" -- tcpdump -n -s 0 -U -i "$ifc" \
			-c "$CAPMAX" -w "$CAPDIR/$node-$ifc.pcap" udp port 4791 \
			</dev/null >/dev/null 2>"$TMP/cap-$node-$ifc.log" &
		CAP_PIDS+=($!)
	done
	for c in "${CAPS[@]}"; do
		node=${c%%:*} ifc=${c#*:}
		for i in $(seq 100); do
			grep -q "listening on" "$TMP/cap-$node-$ifc.log" && break
			sleep 0.1
		done
		grep -q "listening on" "$TMP/cap-$node-$ifc.log" ||
			die "--capture $c: tcpdump did not start: $(cat "$TMP/cap-$node-$ifc.log")"
	done
}

# captures_json: [{node, iface, file, captured, dropped_by_kernel}] of the captures
captures_json() {
	local c node ifc l
	for c in "${CAPS[@]}"; do
		node=${c%%:*} ifc=${c#*:} l=$TMP/cap-$node-$ifc.log
		jq -cn --arg n "$node" --arg i "$ifc" --arg f "$CAPDIR/$node-$ifc.pcap" \
			--arg c "$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured.*/\1/p' "$l")" \
			--arg d "$(sed -n 's/^\([0-9]*\) packets\{0,1\} dropped by kernel.*/\1/p' "$l")" --argjson max "$CAPMAX" \
			'{node: $n, iface: $i, file: $f, captured: ($c | tonumber? // null),
			  dropped_by_kernel: ($d | tonumber? // null), max: $max}'
	done | jq -s -c .
}

info "$TEST${targs} from $SRC to $DST ($ACCEL, kernel $(jq -r .kernel_version "$IMAGE/image.json"))"
captures_start
t0=$(date +%s.%N)
boot server "$DST" "${NAME}d"
boot client "$SRC" "${NAME}s"

# both guests power off when done; the deadline kills them. The client ends
# first; a server left waiting (the client never connected) gets 20 s more.
deadline=$(($(date +%s) + TIMEOUT))
TIMED_OUT=()
for role in client server; do
	pid_var=PID_$role
	if [ "$role" = server ] && [ $(($(date +%s) + 20)) -lt "$deadline" ]; then
		deadline=$(($(date +%s) + 20))
	fi
	while kill -0 "${!pid_var}" 2>/dev/null; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			kill -KILL "${!pid_var}" 2>/dev/null || true
			TIMED_OUT+=("$role")
			break
		fi
		sleep 0.2
	done
	wait "${!pid_var}" 2>/dev/null || true
done
wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
sleep 0.2 # the last frames through the gateways
captures_stop
CAPTURES=$(captures_json)

# tap_json NS TAP: the guest's side of the DC link; tx is toward the guest
tap_json() {
	ip -n "$1" -j -s link show dev "$2" | jq -c '.[0].stats64 | {
		to_guest: {packets: .tx.packets, dropped: .tx.dropped},
		from_guest: {packets: .rx.packets, dropped: .rx.dropped}}'
}
TAP_server=$(tap_json "$DST" "${NAME}d")
TAP_client=$(tap_json "$SRC" "${NAME}s")

# ------------------------------------------------------------------ results

# parse_output FILE: the test's numbers, from its own output
parse_output() {
	awk -v test="$TEST" '
	function num(s) { gsub(/[^0-9.eE+-]/, "", s); return s + 0 }
	function hex(s,   i, c, n) {
		sub(/^0[xX]/, "", s); n = 0
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", tolower(substr(s, i, 1)))
			if (c == 0) break
			n = n * 16 + c - 1
		}
		return n
	}
	/local address:/ || /remote address:/ {
		side = ($0 ~ /local/) ? "local" : "remote"
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^QPN,?$/ || $i == "QPN") { v = $(i + 1); sub(/,$/, "", v); qpn[side] = hex(v) }
			if ($i ~ /^PSN,?$/ || $i == "PSN") { v = $(i + 1); sub(/,$/, "", v); psn[side] = hex(v) }
		}
	}
	/^ *#bytes/ { hdr = $0; getline; if ($1 ~ /^[0-9]+$/) { row = $0 } }
	/bytes in .* seconds = .*Mbit\/sec/ { pp_bytes = $1; pp_secs = $4; pp_mbps = $(NF - 1) }
	/iters in .* seconds = .*usec\/iter/ { pp_iters = $1; pp_usec = $(NF - 1) }
	/^ *Mtu *:/ { n = split($0, f, ":"); mtu = num(f[n]) }
	END {
		printf "{"
		sep = ""
		if ("local" in qpn) { printf "%s\"local\":{\"qpn\":%d,\"psn\":%d}", sep, qpn["local"], psn["local"]; sep = "," }
		if ("remote" in qpn) { printf "%s\"remote\":{\"qpn\":%d,\"psn\":%d}", sep, qpn["remote"], psn["remote"]; sep = "," }
		if (mtu != "") { printf "%s\"mtu\":%d", sep, mtu; sep = "," }
		if (row != "") {
			split(row, rv)
			printf "%s\"msg_bytes\":%d,\"iterations\":%d", sep, rv[1], rv[2]; sep = ","
			if (hdr ~ /BW average/) {
				# perftest MB/sec is MiB/s; Mb/s is 10^6 bit/s
				printf ",\"bw_peak_MiBps\":%s,\"bw_avg_MiBps\":%s,\"bw_avg_mbps\":%.3f,\"msg_rate_mpps\":%s", \
					rv[3] + 0, rv[4] + 0, rv[4] * 8.388608, rv[5] + 0
			} else if (hdr ~ /t_min/) {
				printf ",\"t_min_us\":%s,\"t_max_us\":%s,\"t_typical_us\":%s,\"t_avg_us\":%s,\"t_stdev_us\":%s", \
					rv[3] + 0, rv[4] + 0, rv[5] + 0, rv[6] + 0, rv[7] + 0
			}
		}
		if (pp_bytes != "") {
			printf "%s\"bytes\":%d,\"seconds\":%s,\"bw_avg_mbps\":%s", sep, pp_bytes, pp_secs + 0, pp_mbps + 0; sep = ","
		}
		if (pp_iters != "") { printf "%s\"iterations\":%d,\"usec_per_iter\":%s", sep, pp_iters, pp_usec + 0; sep = "," }
		printf "}\n"
	}' "$1"
}

# guest_json ROLE NS: one guest's report as JSON
guest_json() {
	local role=$1 ns=$2 timed_out=false err=
	local r=$TMP/$role-result.log out=$TMP/$role.out
	tr -d '\r' <"$r" 2>/dev/null | sed -n 's/^LH-OUT //p' >"$out" || true
	case " ${TIMED_OUT[*]} " in *" $role "*) timed_out=true ;; esac
	if ! grep -q '^LH-END' <(tr -d '\r' <"$r" 2>/dev/null); then
		err="no result from the guest"
		[ "$timed_out" = true ] && err="killed after ${TIMEOUT}s without a result"
	fi
	local tap_var=TAP_$role
	tr -d '\r' <"$r" 2>/dev/null | jq -R -s \
		--arg role "$role" --arg ns "$ns" --argjson facts "$(cat "$TMP/$ns.facts")" \
		--argjson tap "${!tap_var}" \
		--argjson result "$(parse_output "$out")" --argjson timed_out "$timed_out" \
		--arg err "$err" --arg console "$(tail -n 15 "$TMP/$role-console.log" 2>/dev/null | tr -d '\r')" \
		--arg qemu "$(tail -n 5 "$TMP/$role-qemu.log" 2>/dev/null)" '
		split("\n") as $l |
		def one(p): ($l | map(select(startswith(p + " ")) | ltrimstr(p + " ")) | first);
		def num(p): (one(p) | if . == null then null else tonumber end);
		def pairs(p): ($l | map(select(startswith(p + " ")) | ltrimstr(p + " ") | split(" ")
			| {(.[0]): (.[1] | tonumber)}) | add // {});
		{role: $role, netns: $ns, ip: $facts.ip, mac: $facts.mac,
		 exit_status: num("LH-RC"), attempts: num("LH-ATTEMPTS"),
		 boot_s: num("LH-BOOT-S"), gid_index: num("LH-GID"),
		 result: $result, counters: pairs("LH-CTR"), net: pairs("LH-NET"), tap: $tap,
		 output: ($l | map(select(startswith("LH-OUT ")) | ltrimstr("LH-OUT "))),
		 timed_out: $timed_out,
		 error: ([one("LH-ERROR"), (if $err == "" then empty else $err end)] | map(select(. != null)) | first)}
		+ (if $err != "" then {console_tail: $console, qemu_log: $qemu} else {} end)'
}

S=$(guest_json server "$DST")
C=$(guest_json client "$SRC")
jq -n --arg test "$TEST" --argjson args "$(printf '%s\n' "${ARGS[@]}" | jq -R . | jq -s 'map(select(. != ""))')" \
	--arg prefix "$PREFIX" --arg accel "$ACCEL" --argjson image "$(cat "$IMAGE/image.json")" \
	--argjson wall "$wall" --argjson s "$S" --argjson c "$C" --argjson cap "${CAPTURES:-[]}" '
	{test: $test, args: $args, prefix: $prefix, accel: $accel,
	 kernel: $image.kernel_version, wall_s: $wall, client: $c, server: $s}
	+ (if $cap == [] then {} else {captures: $cap} end)'

if jq -e '.error' <<<"$S" >/dev/null || jq -e '.error' <<<"$C" >/dev/null; then
	info "a guest gave no result: server $(jq -r '.error // "ok"' <<<"$S"), client $(jq -r '.error // "ok"' <<<"$C")"
	exit 3
fi
[ "$(jq .exit_status <<<"$S")" = 0 ] && [ "$(jq .exit_status <<<"$C")" = 0 ] || exit 1
exit 0
