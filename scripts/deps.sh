#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Install everything longhaul needs on a Debian 12 (bookworm) machine.
# Idempotent and non-interactive: a second run installs nothing and changes no
# file. libbpf >= 1.3 (tcx) and a matching bpftool come from bookworm-backports;
# that apt source is added only when the installed/candidate libbpf is older.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
APT_OPTS=(-y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
BPO_LIST=/etc/apt/sources.list.d/longhaul-bookworm-backports.list
MIN_LIBBPF=1.3
MIN_UAPI=6.6

log() { printf 'deps: %s\n' "$*"; }
die() { printf 'deps: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (sudo make deps)"
command -v apt-get >/dev/null || die "apt-get not found: longhaul's deps script supports Debian 12"

# Packages from bookworm main. python3-scapy is a test oracle only; qemu, seabios,
# cpio, xz-utils and binutils (readelf) build and boot the rxe guests of tests/interop.
MAIN_PKGS=(
	make gcc clang-19 llvm-19 lld-19 pkg-config
	libelf-dev zlib1g-dev libzstd-dev libcap-dev libjson-c-dev
	iproute2 nftables ethtool iputils-ping kmod procps psmisc util-linux
	bats jq tshark tcpdump python3 python3-scapy
	clang-format clang-tidy cppcheck
	ca-certificates
	qemu-system-x86 seabios cpio xz-utils binutils
)
# Packages that must come from bookworm-backports (libbpf >= 1.3 for tcx).
BPO_PKGS=(libbpf-dev libbpf1 bpftool linux-libc-dev)

dpkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

ver_ge() { dpkg --compare-versions "$1" ge "$2"; }

# Upstream version of an installed package, or empty
pkg_version() {
	{ dpkg-query -W -f='${Version}' "$1" 2>/dev/null || true; } | sed -E 's/^[0-9]+://; s/[-+~].*//'
}

missing=()
for p in "${MAIN_PKGS[@]}"; do dpkg_installed "$p" || missing+=("$p"); done

need_bpo=0
cur=$(pkg_version libbpf-dev)
uapi=$(pkg_version linux-libc-dev)
# tcx needs libbpf >= 1.3 and uapi headers >= 6.6 (BPF_TCX_INGRESS)
if [ -z "$cur" ] || ! ver_ge "$cur" "$MIN_LIBBPF" || ! dpkg_installed bpftool ||
   [ -z "$uapi" ] || ! ver_ge "$uapi" "$MIN_UAPI"; then
	need_bpo=1
fi

if [ "${#missing[@]}" -eq 0 ] && [ "$need_bpo" -eq 0 ]; then
	log "everything installed (libbpf $cur, $(bpftool version 2>/dev/null | head -n1))"
	exit 0
fi

updated=0
apt_update() { [ "$updated" -eq 1 ] || { apt-get update -q; updated=1; }; }

if [ "$need_bpo" -eq 1 ] && [ ! -f "$BPO_LIST" ] && \
   ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	log "adding bookworm-backports apt source ($BPO_LIST)"
	echo 'deb http://deb.debian.org/debian bookworm-backports main' > "$BPO_LIST"
fi

apt_update
if [ "${#missing[@]}" -gt 0 ]; then
	log "installing: ${missing[*]}"
	apt-get install "${APT_OPTS[@]}" --no-install-recommends "${missing[@]}"
fi
if [ "$need_bpo" -eq 1 ]; then
	log "installing from bookworm-backports: ${BPO_PKGS[*]}"
	apt-get install "${APT_OPTS[@]}" --no-install-recommends -t bookworm-backports "${BPO_PKGS[@]}"
fi

cur=$(pkg_version libbpf-dev)
ver_ge "$cur" "$MIN_LIBBPF" || die "libbpf-dev $cur is older than $MIN_LIBBPF after install"
command -v bpftool >/dev/null || die "bpftool missing after install"
log "done (libbpf $cur, $(bpftool version | head -n1))"
