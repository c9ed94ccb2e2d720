#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# /init of the kernel-check guest (busybox sh; tests/interop/kernel-check.sh
# builds the initramfs): mount bpffs, load the modules the image recorded,
# then on the kernel under test
#   1. kernel-load on every $O/bpf/*.bpf.o (which programs the verifier takes),
#   2. each BPF unit test ($O/tests/unit/test_*, at the path the build
#      compiled in), its TAP output kept,
#   3. longhauld on two veth pairs when the image has it, in lr2 and observe
#      mode: does it load and attach (tcx, or the clsact fallback on kernels
#      without tcx), and detach; then an lr2 and a credit longhauld on the
#      same interfaces (mode labels coexist, coexist-lr2),
# print the results on the second serial port (ttyS1) and power off.
#
# /etc/lh-check sets: LH_OBJS LH_TESTS LH_TEST_TIMEOUT [LH_LONGHAULD]
#
# Result lines on ttyS1, parsed by kernel-check.sh:
#   LH-BEGIN | LH-KERNEL REL | LH-BTF 0|1 | LH-BOOT-S S | LH-LOAD-S S
#   LH-LOAD JSON | LH-LOAD-RC N | LH-TAP NAME LINE | LH-TAP-RC NAME RC
#   LH-TAP-S NAME S | LH-LHD-ALIVE MODE 0|1 | LH-LHD-RC MODE RC
#   LH-LHD MODE LINE | LH-LHD-TC MODE LINE | LH-LHD-AFTER MODE LINE
#   LH-ERROR MSG | LH-END

# iproute2 (ip, tc) ahead of busybox: the tests make veths with `ip link add`.
# /bin/sh is dash, which looks commands up in PATH (busybox's sh would run
# its own ip applet, which cannot make a veth)
export PATH=/usr/sbin:/usr/bin:/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
# no tmpfs on /tmp: the initramfs (a writable rootfs already) holds the
# objects and tests at the host's paths, which may lie under /tmp (a clone there)
mkdir -p /run && mount -t tmpfs run /run
mount -t bpf bpf /sys/fs/bpf

RES=/dev/ttyS1
[ -c $RES ] || RES=/dev/console
OUT=/tmp/result
log() { echo "lh-init: $*"; }
up_s() { cut -d' ' -f1 /proc/uptime; }
emit() { echo "$*" >>$OUT; }
# libbpf's copy of a verifier log (kernel-load reports the error): left out
strip_log() {
	awk '/-- BEGIN PROG LOAD LOG --/ { s = 1; print "(verifier log left out)" }
	     !s { print } /-- END PROG LOAD LOG --/ { s = 0 }'
}

finish() {
	emit "LH-END"
	# one open of the port: its close waits until the UART has sent everything
	cat $OUT >$RES 2>&1
	sync
	poweroff -f
	sleep 5
}

emit "LH-BEGIN"
emit "LH-KERNEL $(uname -r)"
if [ -f /sys/kernel/btf/vmlinux ]; then emit "LH-BTF 1"; else emit "LH-BTF 0"; fi
if [ ! -f /etc/lh-check ]; then
	emit "LH-ERROR no /etc/lh-check in the image"
	finish
fi
. /etc/lh-check
for m in $(cat /lib/modules/order 2>/dev/null); do
	insmod /lib/modules/$m || emit "LH-ERROR insmod $m failed"
done
ip link set lo up
emit "LH-BOOT-S $(up_s)"
log "booted at $(up_s)s: loading $LH_OBJS"

# 1. the verifier's verdict on every program; the tcx programs that load are
# attached to a veth as the agent attaches them (tcx, or clsact without it)
ip link add kc0 type veth peer name kc1 && ip link set kc0 up && ip link set kc1 up ||
	emit "LH-ERROR no veth pair for the attach check"
t0=$(up_s)
/bin/kernel-load -a kc0 $LH_OBJS >/tmp/load.json 2>/tmp/load.err
emit "LH-LOAD-RC $?"
emit "LH-LOAD-S $(awk -v a="$t0" -v b="$(up_s)" 'BEGIN { printf "%.2f", b - a }')"
emit "LH-LOAD $(cat /tmp/load.json)"
sed 's/^/lh-load: /' /tmp/load.err | tail -n 20

# 2. the unit tests, each under a time limit
for t in $LH_TESTS; do
	n=${t##*/}
	log "running $n"
	t0=$(up_s)
	timeout -s KILL "${LH_TEST_TIMEOUT:-120}" "$t" </dev/null >/tmp/tap 2>&1
	rc=$?
	strip_log </tmp/tap | sed "s/^/LH-TAP $n /" >>$OUT
	emit "LH-TAP-RC $n $rc"
	emit "LH-TAP-S $n $(awk -v a="$t0" -v b="$(up_s)" 'BEGIN { printf "%.2f", b - a }')"
done

# wait_for PID LOG PATTERN: until LOG has PATTERN, or PID is gone, at most 60 s
wait_for() {
	i=0
	while [ $i -lt 300 ] && kill -0 $1 2>/dev/null; do
		grep -q -e "$3" $2 && return 0
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}

# show_filters KEY TAG: the tc filters of both interfaces, both hooks, as KEY TAG lines
show_filters() {
	for d in lhdc lhwan; do
		for h in ingress egress; do
			tc filter show dev $d $h 2>/dev/null | sed "s/^/$1 $2 $d $h /" >>$OUT
		done
	done
}

# 3. the agent on two veth pairs, each mode: attach, hold, detach on SIGTERM
if [ -n "$LH_LONGHAULD" ]; then
	ip link add lhdc type veth peer name lhdc1 &&
		ip link add lhwan type veth peer name lhwan1 &&
		for i in lhdc lhdc1 lhwan lhwan1; do ip link set $i up; done ||
		emit "LH-ERROR veth pairs for longhauld"
	for mode in lr2 observe; do
		log "longhauld --mode $mode"
		"$LH_LONGHAULD" --dc lhdc --wan lhwan --mode $mode --max-qps 64 --pool-slots 256 \
			</dev/null >/tmp/lhd 2>&1 &
		pid=$!
		wait_for $pid /tmp/lhd attached && sleep 2
		show_filters LH-LHD-TC $mode
		for d in lhdc lhwan; do
			ip -d link show dev $d | grep -o 'prog/xdp[a-z]* id [0-9]*' | sed "s/^/LH-LHD-TC $mode $d /" >>$OUT
		done
		alive=0
		kill -0 $pid 2>/dev/null && alive=1
		emit "LH-LHD-ALIVE $mode $alive"
		kill -TERM $pid 2>/dev/null
		wait $pid
		emit "LH-LHD-RC $mode $?"
		strip_log </tmp/lhd | sed "s/^/LH-LHD $mode /" >>$OUT
		for d in lhdc lhwan; do
			tc filter show dev $d ingress 2>/dev/null | sed "s/^/LH-LHD-AFTER $mode $d /" >>$OUT
		done
	done

	# 4. an lr2 and a credit agent on one DC interface (a gateway running both):
	# both attach to lhdc's egress (clsact: priority 1 lr2's, 2 credit's), the
	# credit agent stops first and takes only its own filters (what stays is
	# LH-LHD-AFTER coexist), then lr2 stops and nothing is left (coexist-lr2)
	log "longhauld lr2 and credit on one interface"
	"$LH_LONGHAULD" --dc lhdc --wan lhwan --instance kc-lr2 --max-qps 64 --pool-slots 256 \
		</dev/null >/tmp/lhd-lr2 2>&1 &
	plr2=$!
	wait_for $plr2 /tmp/lhd-lr2 "; running (SIGINT"
	"$LH_LONGHAULD" --mode credit --dc lhdc --credit-route 10.98.0.0/24,10.97.0.2,lhwan \
		--instance kc-cr </dev/null >/tmp/lhd-cr 2>&1 &
	pcr=$!
	wait_for $pcr /tmp/lhd-cr "; running (SIGINT" && sleep 1
	show_filters LH-LHD-TC coexist
	alive=0
	kill -0 $plr2 2>/dev/null && kill -0 $pcr 2>/dev/null && alive=1
	emit "LH-LHD-ALIVE coexist $alive"
	emit "LH-LHD-ALIVE coexist-lr2 $alive"
	# stop_coexist MODE PID LOG: SIGTERM one of the two, its exit status and
	# log, and the filters left on both interfaces
	stop_coexist() {
		kill -TERM $2 2>/dev/null
		wait $2
		emit "LH-LHD-RC $1 $?"
		strip_log <$3 | sed "s/^/LH-LHD $1 /" >>$OUT
		show_filters LH-LHD-AFTER $1
	}
	stop_coexist coexist $pcr /tmp/lhd-cr
	stop_coexist coexist-lr2 $plr2 /tmp/lhd-lr2

	# 5. a takeover on clsact (no links there) by a new build: a second lr2
	# agent started with --takeover --reload (what a new build does: the same
	# build would reuse the running programs) loads beside the first, which
	# stops keeping its data path; the second replaces the kept filters'
	# programs in place (BPF_TC_F_REPLACE) and adopts the XDP links; then it
	# stops and nothing is left (LH-LHD-AFTER takeover)
	log "longhauld --takeover"
	"$LH_LONGHAULD" --dc lhdc --wan lhwan --instance kc-tk --max-qps 64 --pool-slots 256 \
		</dev/null >/tmp/lhd-tk1 2>&1 &
	ptk1=$!
	wait_for $ptk1 /tmp/lhd-tk1 "; running (SIGINT"
	show_filters LH-LHD-TC takeover-old
	"$LH_LONGHAULD" --dc lhdc --wan lhwan --instance kc-tk --max-qps 64 --pool-slots 256 \
		--takeover --reload </dev/null >/tmp/lhd-tk2 2>&1 &
	ptk2=$!
	wait_for $ptk2 /tmp/lhd-tk2 "; running (SIGINT"
	wait $ptk1
	emit "LH-LHD-RC takeover-old $?"
	strip_log </tmp/lhd-tk1 | sed "s/^/LH-LHD takeover-old /" >>$OUT
	show_filters LH-LHD-TC takeover
	alive=0
	kill -0 $ptk2 2>/dev/null && alive=1
	emit "LH-LHD-ALIVE takeover $alive"
	stop_coexist takeover $ptk2 /tmp/lhd-tk2
fi
finish
