#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Which kernels accept longhaul's BPF: boot a qemu guest with a stock Debian
# kernel and, inside it, load every $O/bpf/*.bpf.o (kernel-load: per program
# loaded or refused, with the verifier's error), run the BPF unit tests
# ($O/tests/unit/test_* that use BPF_PROG_TEST_RUN) and, when $O/bin/longhauld
# exists, attach the agent to two veth pairs and detach it. One JSON line on
# stdout.
#
#   kernel-check.sh [OPTIONS]
#
# options:
#   --kernel-pkg NAME  a linux-image-VERSION-amd64 package (default: the one
#                      bookworm's linux-image-amd64 depends on, 6.1)
#   --backports        the kernel bookworm-backports' linux-image-amd64 depends
#                      on (6.12)
#   --timeout S        the whole guest run (default 600)
#   --mem MB           guest memory (default 1024)
#   --accel A          auto (default: kvm only with /dev/kvm and VMX/SVM), tcg, kvm
#   --no-tests         only the loads; --no-agent: no longhauld
#   --logs DIR         keep the guest's console and raw results in DIR
#   -q                 no progress on stderr
#
# Everything is cached under $O/kernels/ ($O: build): the .debs (debs/, also
# taken from $O/interop/debs when `make interop-image` has them), the kernel
# and its modules per version, the loader (compiled from kernel-load.c) and
# the initramfs, rebuilt only when what goes in changes. The BPF objects and
# the unit tests sit in the guest at the same absolute paths as here (the
# tests find the objects through the build directory compiled into them);
# their shared libraries are this machine's. test_icrc's scapy packets are
# made here (python3-scapy) before the boot.
#
# The output: kernel, package, boot (pvh-elf or bzimage), accel, boot_s,
# wall_s, objects[] (per object and rodata variant: object_loads, programs[]
# with loaded, insns and verified_insns (what the verifier walked, of its
# 1M), or errno, error, verifier_error and log_tail), programs
# {total, loaded, refused}, refused[] (object, program, reason), tests{} (per
# binary: passed, failed, skipped, planned, status, not_ok[]), tests_total,
# tc_attach (each tcx program on a veth: tcx, or longhauld's clsact
# fallback), agent (longhauld per mode: exit status, what it logged about
# loading and attaching, tc filters, what was left after it exited; coexist:
# a credit agent started beside an lr2 one on the same interfaces, its filters
# while both ran and what stayed once it stopped; coexist-lr2: that lr2 agent,
# what was left after it stopped too), error.
#
# Exit status: 0 every program loaded and every test passed; 1 a program was
# refused or a test failed (JSON printed); 2 bad usage; 3 no result (the
# guest did not boot or report; JSON printed with the reason).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
O=${O:-build}
case "$O" in /*) ;; *) O=$ROOT/$O ;; esac

PROG=kernel-check
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

KPKG= BPO=0 TIMEOUT=600 MEM=1024 ACCEL=auto TESTS=1 AGENT=1 LOGS=
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel-pkg | --timeout | --mem | --accel | --logs)
		[ $# -ge 2 ] || usage_die "$1 needs a value"
		case "$1" in
		--kernel-pkg) KPKG=$2 ;;
		--timeout) TIMEOUT=$2 ;;
		--mem) MEM=$2 ;;
		--accel) ACCEL=$2 ;;
		--logs) LOGS=$2 ;;
		esac
		shift 2
		;;
	--backports) BPO=1 && shift ;;
	--no-tests) TESTS=0 && shift ;;
	--no-agent) AGENT=0 && shift ;;
	-q | --quiet) QUIET=1 && shift ;;
	-h | --help)
		sed -n '2,/^set -e/p' "$0" | sed -e 's/^# \{0,1\}//' -e '/^set -e/d' >&2
		exit 0
		;;
	*) usage_die "unknown option '$1'" ;;
	esac
done
for v in "timeout $TIMEOUT" "mem $MEM"; do
	[[ "${v#* }" =~ ^[0-9]+$ ]] || usage_die "--${v%% *} '${v#* }' is not a whole number"
done
[ "$TIMEOUT" -ge 30 ] || usage_die "--timeout must be at least 30"
[ "$MEM" -ge 256 ] || usage_die "--mem must be at least 256"
case "$ACCEL" in auto | tcg | kvm) ;; *) usage_die "--accel must be auto, tcg or kvm" ;; esac
[ -z "$KPKG" ] || [ "$BPO" = 0 ] || usage_die "--kernel-pkg and --backports exclude each other"
[ -z "$KPKG" ] || [[ "$KPKG" =~ ^linux-image-[0-9][^[:space:]]*-amd64$ ]] ||
	usage_die "--kernel-pkg '$KPKG' is not a linux-image-VERSION-amd64 package"

[ "$(id -u)" -eq 0 ] || die "needs root (mknod in the image, apt's cache)"
for c in qemu-system-x86_64 apt-get apt-cache dpkg-deb depmod modprobe readelf cpio gzip xz \
	sha256sum jq timeout gcc pkg-config ldd; do
	command -v "$c" >/dev/null 2>&1 || die "missing tool '$c' (make deps installs it)"
done
OBJS=()
for f in "$O"/bpf/*.bpf.o; do [ -f "$f" ] && OBJS+=("$f"); done
[ "${#OBJS[@]}" -gt 0 ] || die "no BPF objects in $O/bpf (run make O=$O first)"

KC=$O/kernels
mkdir -p "$KC/debs"

# ---- the kernel package and its version
if [ -z "$KPKG" ]; then
	if [ "$BPO" = 1 ]; then
		KPKG=$(apt-cache depends -t bookworm-backports linux-image-amd64 2>/dev/null |
			awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
		[ -n "$KPKG" ] || die "no kernel behind bookworm-backports' linux-image-amd64 (is bookworm-backports an apt source? run apt-get update)"
	else
		KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null |
			awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
		[ -n "$KPKG" ] || die "no kernel package behind linux-image-amd64 (run apt-get update)"
	fi
fi
[[ "$KPKG" =~ ^linux-image-([0-9][^ ]*-amd64)$ ]] || usage_die "--kernel-pkg '$KPKG' is not a linux-image-VERSION-amd64 package"
KVER=${BASH_REMATCH[1]}

# deb PKG: the path of PKG's candidate .deb in $KC/debs, downloaded if missing
deb() {
	local p=$1 v f
	v=$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ { print $2; exit }')
	if [ -z "$v" ] || [ "$v" = "(none)" ]; then
		# offline with a cache: the newest .deb of the package we have
		f=$(ls -t "$KC/debs/${p}_"*.deb 2>/dev/null | head -n1)
		[ -n "$f" ] || die "package $p has no candidate version and no cached .deb (run apt-get update)"
		echo "$f"
		return
	fi
	f=$(ls "$KC/debs/${p}_${v//:/%3a}_"*.deb 2>/dev/null | head -n1 || true)
	if [ -z "$f" ]; then
		f=$(ls "$O/interop/debs/${p}_${v//:/%3a}_"*.deb 2>/dev/null | head -n1 || true)
		if [ -n "$f" ]; then
			cp "$f" "$KC/debs/"
			f=$KC/debs/$(basename "$f")
		fi
	fi
	if [ -z "$f" ]; then
		info "downloading $p $v"
		chown _apt "$KC/debs" 2>/dev/null || true
		(cd "$KC/debs" && apt-get download -q "$p=$v") >&2 || die "apt-get download $p=$v failed"
		f=$(ls "$KC/debs/${p}_${v//:/%3a}_"*.deb 2>/dev/null | head -n1 || true)
		[ -n "$f" ] || die "apt-get download gave no .deb for $p $v"
		# older versions of the package go
		find "$KC/debs" -name "${p}_*.deb" ! -name "$(basename "$f")" -delete
	fi
	echo "$f"
}
KDEB=$(deb "$KPKG")
BBDEB=$(deb busybox-static)

# ---- the kernel: ELF through its PVH note (no XZ unpacking under TCG) or the
# bzImage; the modules the checks need, in insmod order. Once per .deb.
# veth: test_datapath and the agent's veths; sch_ingress, cls_bpf: the clsact
# fallback of kernels without tcx
MODULES=(veth sch_ingress cls_bpf)
KD=$KC/$KVER
kstamp="v2 $(basename "$KDEB") ${MODULES[*]}"
if [ "$(cat "$KD/stamp" 2>/dev/null)" != "$kstamp" ]; then
	info "unpacking $KPKG"
	rm -rf "$KD"
	mkdir -p "$KD/pkg" "$KD/modules"
	dpkg-deb -x "$KDEB" "$KD/pkg"
	depmod -b "$KD/pkg" "$KVER"
	order=()
	for m in "${MODULES[@]}"; do
		deps=$(modprobe -d "$KD/pkg" -S "$KVER" --show-depends "$m" 2>/dev/null) || {
			info "$KPKG has no module $m (built in?)"
			continue
		}
		while read -r verb path _; do
			[ "$verb" = insmod ] || continue
			n=$(basename "$path")
			# busybox's insmod takes plain ELF: 6.12's modules are .ko.xz
			case "$n" in
			*.ko.xz) n=${n%.xz} && xz -dc "$path" >"$KD/modules/$n" ;;
			*.ko.zst) n=${n%.zst} && zstd -q -dc "$path" >"$KD/modules/$n" ;;
			*) cp "$path" "$KD/modules/$n" ;;
			esac
			case " ${order[*]} " in *" $n "*) continue ;; esac
			order+=("$n")
		done <<<"$deps"
	done
	printf '%s\n' "${order[@]}" >"$KD/modules/order"
	BZ=$KD/pkg/boot/vmlinuz-$KVER
	[ -f "$BZ" ] || die "$KPKG has no /boot/vmlinuz-$KVER"
	cp "$BZ" "$KD/bzImage"
	echo bzimage >"$KD/boot"
	# 6.1's payload is XZ, 6.12's zstd (unpacked only when zstd is installed)
	for magic in xz zstd; do
		[ -f "$KD/vmlinux" ] && break
		case $magic in
		xz) off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$BZ" | head -n1 | cut -d: -f1 || true) ;;
		zstd) off=$(LC_ALL=C grep -obUaP '\x28\xb5\x2f\xfd' "$BZ" | head -n1 | cut -d: -f1 || true) ;;
		esac
		[ -n "$off" ] && command -v $magic >/dev/null || continue
		# the payload is followed by more of the bzImage: the decoder complains, the ELF is whole
		tail -c +"$((off + 1))" "$BZ" | { if [ $magic = xz ]; then xz -dc --single-stream; else zstd -q -dc; fi; } \
			>"$KD/vmlinux.tmp" 2>/dev/null || true
		# XEN_ELFNOTE_PHYS32_ENTRY (18): the PVH entry point qemu's -kernel looks for
		if readelf -h "$KD/vmlinux.tmp" >/dev/null 2>&1 &&
			readelf -n "$KD/vmlinux.tmp" 2>/dev/null | grep -q -e 'PHYS32_ENTRY' -e 'Unknown note type: (0x00000012)'; then
			mv "$KD/vmlinux.tmp" "$KD/vmlinux"
			echo pvh-elf >"$KD/boot"
		fi
		rm -f "$KD/vmlinux.tmp"
	done
	rm -rf "$KD/pkg"
	printf '%s\n' "$kstamp" >"$KD/stamp"
fi
BOOT=$(cat "$KD/boot")
KERNEL=$KD/bzImage
[ "$BOOT" = pvh-elf ] && KERNEL=$KD/vmlinux

# ---- the loader, compiled against this machine's libbpf
LOADER=$KC/kernel-load
if [ ! -x "$LOADER" ] || [ "$HERE/kernel-load.c" -nt "$LOADER" ]; then
	info "compiling kernel-load"
	# shellcheck disable=SC2046
	gcc -O2 -g -Wall -Wextra -Werror -std=gnu11 $(pkg-config --cflags libbpf) \
		-o "$LOADER.tmp" "$HERE/kernel-load.c" $(pkg-config --libs libbpf) -lelf -lz ||
		die "kernel-load.c does not compile"
	mv "$LOADER.tmp" "$LOADER"
fi

# ---- what runs in the guest
UNIT=()
if [ "$TESTS" = 1 ]; then
	for src in "$ROOT"/tests/unit/test_*.c; do
		grep -q 'lh_harness_open' "$src" || continue
		b=$O/tests/unit/$(basename "$src" .c)
		if [ -x "$b" ]; then UNIT+=("$b"); else info "no $b (make O=$O builds it): not run"; fi
	done
fi
PCAP=$O/tests/scapy-icrc.pcap
if [[ " ${UNIT[*]} " == *"/test_icrc "* ]] && [ ! -s "$PCAP" ]; then
	# test_icrc makes its packets with scapy; the guest has no python: here, once
	mkdir -p "$(dirname "$PCAP")"
	/usr/bin/python3 "$ROOT/tests/unit/scapy_icrc_gen.py" "$PCAP" 1000 4791 >/dev/null 2>&1 ||
		rm -f "$PCAP"
fi
LHD=
[ "$AGENT" = 1 ] && [ -x "$O/bin/longhauld" ] && LHD=$O/bin/longhauld
HOST_TOOLS=()
for t in ip tc dash; do
	p=$(command -v "$t") || die "missing tool '$t'"
	HOST_TOOLS+=("$(readlink -f "$p")")
done

# ---- the initramfs: rebuilt when anything that goes in changes
IMG=$KD/initramfs.cpio.gz
inputs=("$0" "$HERE/kernel-init.sh" "$BBDEB" "$LOADER" "$KD/modules"/* "${OBJS[@]}" "${UNIT[@]}" "${HOST_TOOLS[@]}")
[ -s "$PCAP" ] && inputs+=("$PCAP")
[ -n "$LHD" ] && inputs+=("$LHD")
istamp=$(printf '%s\n' "${inputs[@]}" | sha256sum | cut -c1-16)-$(sha256sum "${inputs[@]}" | sha256sum | cut -c1-16)
if [ "$(cat "$KD/initramfs.stamp" 2>/dev/null)" != "$istamp" ] || [ ! -s "$IMG" ]; then
	info "packing the initramfs for $KVER"
	S=$KD/initramfs.d
	rm -rf "$S"
	mkdir -p "$S"/{bin,sbin,dev,proc,sys,tmp,etc,lib/modules,lib64,usr/bin,usr/sbin}
	dpkg-deb --fsys-tarfile "$BBDEB" | tar -x -O ./bin/busybox >"$S/bin/busybox"
	chmod 0755 "$S/bin/busybox"
	for a in $("$S/bin/busybox" --list); do
		[ "$a" = busybox ] || ln -sf busybox "$S/bin/$a"
	done
	mknod -m 600 "$S/dev/console" c 5 1
	mknod -m 666 "$S/dev/null" c 1 3
	install -m 0755 "$HERE/kernel-init.sh" "$S/init"
	cp "$KD/modules"/* "$S/lib/modules/"
	install -m 0755 "$LOADER" "$S/bin/kernel-load"
	elfs=("$S/bin/kernel-load")
	# same paths as here: the tests open $O/bpf/NAME.bpf.o
	for f in "${OBJS[@]}" "${UNIT[@]}" ${LHD:+"$LHD"}; do
		mkdir -p "$S$(dirname "$f")"
		cp "$f" "$S$f"
		[[ "$f" == *.bpf.o ]] || elfs+=("$S$f")
	done
	if [ -s "$PCAP" ]; then
		mkdir -p "$S$(dirname "$PCAP")"
		cp "$PCAP" "$S$PCAP"
		# test_icrc runs `python3 scapy_icrc_gen.py PCAP N PORT`: scapy ran here
		printf '#!/bin/sh\n# the packets were made on the host before the boot\n[ -s "$2" ]\n' >"$S/usr/bin/python3"
		chmod 0755 "$S/usr/bin/python3"
	fi
	# iproute2's ip and tc (veth peers, tc filter show) ahead of busybox's, and
	# dash as /bin/sh: busybox's sh runs its own applets whatever PATH says
	for t in "${HOST_TOOLS[@]}"; do
		d=$S/usr/sbin/$(basename "$t")
		[ "$(basename "$t")" = dash ] && d=$S/bin/sh && rm -f "$d"
		install -m 0755 "$t" "$d"
		elfs+=("$d")
	done
	# their shared libraries, this machine's, at the same paths
	for e in "${elfs[@]}"; do
		ldd "$e" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }'
	done | sort -u | while read -r lib; do
		mkdir -p "$S$(dirname "$lib")"
		cp -L "$lib" "$S$lib"
	done
	{
		printf 'LH_OBJS=%q\n' "${OBJS[*]}"
		printf 'LH_TESTS=%q\n' "${UNIT[*]}"
		printf 'LH_TEST_TIMEOUT=%q\n' "$((TIMEOUT / 2))"
		printf 'LH_LONGHAULD=%q\n' "$LHD"
	} >"$S/etc/lh-check"
	printf 'root:x:0:0:root:/:/bin/sh\n' >"$S/etc/passwd"
	(cd "$S" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
		gzip -6 -n >"$IMG.tmp"
	mv "$IMG.tmp" "$IMG"
	rm -rf "$S"
	printf '%s\n' "$istamp" >"$KD/initramfs.stamp"
fi

# ---- boot
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
TMP=$(mktemp -d "/tmp/$PROG.XXXXXX")
QPID=
cleanup() {
	[ -z "$QPID" ] || kill -KILL "$QPID" 2>/dev/null || true
	[ -z "$QPID" ] || wait "$QPID" 2>/dev/null || true
	if [ -n "$LOGS" ]; then
		mkdir -p "$LOGS"
		cp "$TMP"/*.log "$LOGS"/ 2>/dev/null || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

info "booting $KVER ($BOOT, $ACCEL): ${#OBJS[@]} objects, ${#UNIT[@]} unit tests${LHD:+, longhauld}"
t0=$(date +%s.%N)
# two vCPUs: per-CPU maps and the tests see more than one CPU, as on a gateway
qemu-system-x86_64 "${QEMU_ACCEL[@]}" -m "$MEM" -smp 2 -nodefaults -no-user-config \
	-display none -no-reboot -kernel "$KERNEL" -initrd "$IMG" \
	-append "console=ttyS0 panic=-1 loglevel=4 mitigations=off" \
	-serial "file:$TMP/console.log" -serial "file:$TMP/result.log" \
	</dev/null >"$TMP/qemu.log" 2>&1 &
QPID=$!
timed_out=false
deadline=$(($(date +%s) + TIMEOUT))
while kill -0 "$QPID" 2>/dev/null; do
	if [ "$(date +%s)" -ge "$deadline" ]; then
		kill -KILL "$QPID" 2>/dev/null || true
		timed_out=true
		break
	fi
	sleep 0.5
done
wait "$QPID" 2>/dev/null || true
QPID=
wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')

# ---- results
tr -d '\r' <"$TMP/result.log" >"$TMP/result.txt" 2>/dev/null || : >"$TMP/result.txt"
err=
if ! grep -q '^LH-END' "$TMP/result.txt"; then
	err="no result from the guest"
	[ "$timed_out" = true ] && err="killed after ${TIMEOUT}s without a result"
fi
load=$(sed -n 's/^LH-LOAD //p' "$TMP/result.txt" | head -n1)
jq -e . >/dev/null 2>&1 <<<"$load" || load=null
jq -n -c --rawfile r "$TMP/result.txt" --argjson load "$load" --arg kpkg "$KPKG" \
	--arg kver "$KVER" --arg boot "$BOOT" --arg accel "$ACCEL" --argjson wall "$wall" \
	--arg err "$err" --arg console "$(tail -n 20 "$TMP/console.log" 2>/dev/null | tr -d '\r')" \
	--arg qemu "$(tail -n 5 "$TMP/qemu.log" 2>/dev/null)" --argjson agent_in "$([ -n "$LHD" ] && echo true || echo false)" '
	($r | split("\n")) as $l |
	def vals(p): $l | map(select(startswith(p + " ")) | ltrimstr(p + " "));
	def one(p): vals(p) | first;
	def num(p): one(p) | if . == null then null else tonumber end;
	(vals("LH-TAP") | map(capture("^(?<t>[^ ]+) (?<line>.*)$"))) as $tap |
	(vals("LH-TAP-RC") | map(split(" ") | {(.[0]): (.[1] | tonumber)}) | add // {}) as $rc |
	(vals("LH-TAP-S") | map(split(" ") | {(.[0]): (.[1] | tonumber)}) | add // {}) as $ts |
	($rc | keys) as $names |
	([$names[] as $n | {($n): (
		[$tap[] | select(.t == $n) | .line] as $ls |
		{passed: ($ls | map(select(test("^ok ") and (test("# *[Ss][Kk][Ii][Pp]") | not))) | length),
		 failed: ($ls | map(select(test("^not ok ") and (test("# *TODO") | not))) | length),
		 skipped: ($ls | map(select(test("^ok .*# *[Ss][Kk][Ii][Pp]"))) | length),
		 planned: ($ls | map(select(test("^1\\.\\.[0-9]+"))) | first | if . then (ltrimstr("1..") | split(" ")[0] | tonumber) else null end),
		 status: $rc[$n], seconds: $ts[$n],
		 not_ok: ($ls | map(select(test("^not ok ")))),
		 diag: ($ls | map(select(startswith("#"))) | .[:10])})}] | add // {}) as $tests |
	($load.objects // []) as $objs |
	{kernel: (one("LH-KERNEL") // $kver), kernel_package: $kpkg, boot: $boot, accel: $accel,
	 btf: (num("LH-BTF") == 1), boot_s: num("LH-BOOT-S"), load_s: num("LH-LOAD-S"),
	 wall_s: $wall, libbpf: $load.libbpf,
	 objects: $objs,
	 programs: {
		total: ([$objs[] | select(.rodata == {}) | .programs[]?] | length),
		loaded: ([$objs[] | select(.rodata == {}) | .programs[]? | select(.loaded)] | length),
		refused: ([$objs[] | select(.rodata == {}) | .programs[]? | select(.loaded | not)] | length)},
	 refused: [$objs[] | .object as $o | .rodata as $ro | .programs[]? | select(.loaded | not) |
		{object: $o, rodata: $ro, program: .name, section: .section, errno: .errno,
		 reason: (.verifier_error // .error)}],
	 tests: $tests,
	 tests_total: {passed: ([$tests[].passed] | add // 0), failed: ([$tests[].failed] | add // 0),
		skipped: ([$tests[].skipped] | add // 0)},
	 tc_attach: $load.tc_attach,
	 agent: (if $agent_in | not then null else
		[vals("LH-LHD-RC")[] | split(" ") | .[0] as $m | {($m): {
		 exit_status: (.[1] | tonumber),
		 alive: (vals("LH-LHD-ALIVE") | map(select(. == $m + " 1")) | length > 0),
		 attached: (vals("LH-LHD") | map(select(startswith($m + " ")) | ltrimstr($m + " ") |
			select(test("attached|no tcx|clsact|load|error|refused|adopt"; "i")))),
		 filters: (vals("LH-LHD-TC") | map(select(startswith($m + " ")) | ltrimstr($m + " "))),
		 left_behind: (vals("LH-LHD-AFTER") | map(select(startswith($m + " ")) | ltrimstr($m + " ")))}}] | add end),
	 guest_errors: vals("LH-ERROR"),
	 error: (if $err == "" then null else $err end)}
	+ (if $err != "" then {console_tail: $console, qemu_log: $qemu} else {} end)' >"$TMP/out.json" ||
	die "cannot parse the guest's result ($(head -c 300 "$TMP/result.txt"))"
cat "$TMP/out.json"
out=$(cat "$TMP/out.json")
if [ -n "$err" ]; then
	info "$err"
	exit 3
fi
info "$(jq -r '"\(.kernel): \(.programs.loaded)/\(.programs.total) programs loaded, tests \(.tests_total.passed) passed \(.tests_total.failed) failed \(.tests_total.skipped) skipped, \(.wall_s) s"' <<<"$out")"
jq -e '.refused == [] and .tests_total.failed == 0 and all(.tests[]; .status == 0)' >/dev/null <<<"$out" || exit 1
exit 0
