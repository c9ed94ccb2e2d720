#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Build the disk-less guest that runs Linux Soft-RoCE (rdma_rxe) peers for the
# interop tests, from Debian packages only (`make interop-image`):
#
#   $OUT/vmlinux          the stock kernel as an ELF (booted through its PVH
#                         note: no XZ unpacking under TCG), or the bzImage
#   $OUT/initramfs.cpio.gz  busybox-static, the modules rdma_rxe and virtio-net
#                         need (in insmod order), perftest, ibverbs-utils,
#                         iproute2's rdma, their shared libraries, /init
#   $OUT/image.json       what went in: packages and versions, kernel, modules
#   $OUT/stamp            package versions + hashes of this script and the init:
#                         the image is rebuilt only when it changes
#
#   build-image.sh [-f] [OUT]     OUT defaults to $O/interop ($O: build)
#
# The .debs come from `apt-get download` (kept in $OUT/debs), are unpacked with
# dpkg-deb -x; shared libraries are resolved from the unpacked packages
# (readelf NEEDED), never from the host. LH_INTEROP_KERNEL names another kernel
# package (default: what linux-image-amd64 depends on).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

die() {
	printf 'interop-image: error: %s\n' "$*" >&2
	exit 1
}
info() { printf 'interop-image: %s\n' "$*" >&2; }

FORCE=0
if [ "${1:-}" = -f ]; then
	FORCE=1
	shift
fi
case "${1:-}" in -h | --help)
	sed -n '2,/^set -e/p' "$0" | sed -e 's/^# \{0,1\}//' -e '/^set -e/d' >&2
	exit 0
	;;
esac
O=${O:-build}
case "$O" in /*) ;; *) O=$ROOT/$O ;; esac
OUT=${1:-$O/interop}
case "$OUT" in /*) ;; *) OUT=$PWD/$OUT ;; esac

for c in apt-get apt-cache dpkg-deb depmod modprobe readelf cpio gzip xz sha256sum; do
	command -v "$c" >/dev/null 2>&1 || die "missing tool '$c' (make deps installs it)"
done

# What the guest runs, and the packages whose files it takes. Libraries are
# listed too: the resolver below takes them from these packages only.
BINARIES=(
	/usr/bin/ib_write_bw /usr/bin/ib_send_bw /usr/bin/ib_read_bw
	/usr/bin/ib_write_lat /usr/bin/ib_send_lat /usr/bin/ib_read_lat
	/usr/bin/ibv_rc_pingpong /usr/bin/ibv_devinfo /usr/bin/ibv_devices
	/usr/bin/rdma
)
PROVIDERS=(/usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so)
# crc32_generic first: rxe asks the crypto API for "crc32", crc32-pclmul does
# not load on a qemu64 CPU, and the guest has no modprobe to find another
MODULES=(crc32_generic virtio_pci virtio_net rdma_rxe)
PKGS=(
	busybox-static libibverbs1 ibverbs-providers librdmacm1 ibverbs-utils perftest iproute2
	libc6 libnl-3-200 libnl-route-3-200 libibumad3 libpci3 libudev1 zlib1g
	libmnl0 libbsd0 libmd0 libcap2
)

# The kernel package: the one linux-image-amd64 (bookworm) points at
KPKG=${LH_INTEROP_KERNEL:-}
if [ -z "$KPKG" ]; then
	KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null |
		awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
	[ -n "$KPKG" ] || die "no kernel package behind linux-image-amd64 (run apt-get update)"
fi
[[ "$KPKG" =~ ^linux-image-([0-9][^ ]*-amd64)$ ]] || die "'$KPKG' is not a linux-image-VERSION-amd64 package"
KVER=${BASH_REMATCH[1]}
PKGS+=("$KPKG")

# Candidate version of every package: the stamp and the download
declare -A VER=()
for p in "${PKGS[@]}"; do
	v=$(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ { print $2; exit }')
	[ -n "$v" ] && [ "$v" != "(none)" ] || die "package $p has no candidate version (run apt-get update)"
	VER[$p]=$v
done

stamp_text() {
	local p
	for p in "${PKGS[@]}"; do printf '%s=%s\n' "$p" "${VER[$p]}"; done
	(cd "$HERE" && sha256sum build-image.sh guest-init.sh)
}
mkdir -p "$OUT"
want=$(stamp_text)
if [ "$FORCE" = 0 ] && [ -f "$OUT/stamp" ] && [ "$(cat "$OUT/stamp")" = "$want" ] &&
	[ -f "$OUT/initramfs.cpio.gz" ] && [ -f "$OUT/image.json" ]; then
	info "up to date ($OUT, kernel $KVER)"
	exit 0
fi
rm -f "$OUT/stamp"

# ---- download (only what is missing), drop .debs of other versions
mkdir -p "$OUT/debs"
declare -A DEB=()
get=()
for p in "${PKGS[@]}"; do
	# apt-get download names files NAME_VERSION_ARCH.deb, the epoch's colon as %3a
	f=$(printf '%s_%s_amd64.deb' "$p" "${VER[$p]//:/%3a}")
	[ -f "$OUT/debs/$f" ] || f=$(printf '%s_%s_all.deb' "$p" "${VER[$p]//:/%3a}")
	if [ -f "$OUT/debs/$f" ]; then
		DEB[$p]=$OUT/debs/$f
	else
		get+=("$p=${VER[$p]}")
	fi
done
if [ "${#get[@]}" -gt 0 ]; then
	info "downloading ${#get[@]} packages"
	# apt's sandbox user must be able to write there, or apt warns
	chown _apt "$OUT/debs" 2>/dev/null || true
	(cd "$OUT/debs" && apt-get download -q "${get[@]}") >&2 || die "apt-get download failed"
	for p in "${PKGS[@]}"; do
		[ -n "${DEB[$p]:-}" ] && continue
		f=$(ls "$OUT/debs/${p}_${VER[$p]//:/%3a}_"*.deb 2>/dev/null | head -n1)
		[ -n "$f" ] || die "apt-get download gave no .deb for $p ${VER[$p]}"
		DEB[$p]=$f
	done
fi
for f in "$OUT"/debs/*.deb; do
	keep=0
	for p in "${PKGS[@]}"; do [ "${DEB[$p]}" = "$f" ] && keep=1; done
	[ $keep = 1 ] || rm -f "$f"
done

# ---- unpack
info "unpacking"
PKGROOT=$OUT/pkgroot
rm -rf "$PKGROOT"
mkdir -p "$PKGROOT"
for p in "${PKGS[@]}"; do dpkg-deb -x "${DEB[$p]}" "$PKGROOT"; done

# ---- the staging tree of the initramfs
S=$OUT/initramfs.d
rm -rf "$S"
mkdir -p "$S"/{bin,dev,proc,sys,tmp,etc,lib/modules,lib64,usr/bin}
install -m 0755 "$PKGROOT/bin/busybox" "$S/bin/busybox"
for a in $("$S/bin/busybox" --list); do
	[ "$a" = busybox ] || ln -sf busybox "$S/bin/$a"
done
mknod -m 600 "$S/dev/console" c 5 1
mknod -m 666 "$S/dev/null" c 1 3
install -m 0755 "$HERE/guest-init.sh" "$S/init"

# modules, in the order modprobe would insert them
depmod -b "$PKGROOT" "$KVER"
order=()
for m in "${MODULES[@]}"; do
	deps=$(modprobe -d "$PKGROOT" -S "$KVER" --show-depends "$m") ||
		die "modprobe cannot resolve $m in $KPKG"
	while read -r verb path _; do
		[ "$verb" = insmod ] || continue
		n=$(basename "$path")
		case " ${order[*]} " in *" $n "*) continue ;; esac
		order+=("$n")
		cp "$path" "$S/lib/modules/$n"
	done <<<"$deps"
done
printf '%s\n' "${order[@]}" >"$S/lib/modules/order"

# binaries and the shared libraries they need, from the unpacked packages
LIBDIRS=(/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu)
declare -A HAVE=()
copy_file() { # copy_file PATH (in the package tree): dereferenced, same path
	local rel=$1
	[ -n "${HAVE[$rel]:-}" ] && return 0
	[ -e "$PKGROOT$rel" ] || die "$rel is in none of the packages"
	HAVE[$rel]=1
	mkdir -p "$S$(dirname "$rel")"
	cp -L "$PKGROOT$rel" "$S$rel"
	copy_needed "$rel"
}
copy_needed() {
	local f=$1 lib d found
	for lib in $(readelf -d "$PKGROOT$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		found=
		for d in "${LIBDIRS[@]}"; do
			if [ -e "$PKGROOT$d/$lib" ]; then
				found=$d/$lib
				break
			fi
		done
		[ -n "$found" ] || die "$f needs $lib, which no listed package ships (add it to PKGS)"
		copy_file "$found"
	done
}
for b in "${BINARIES[@]}" "${PROVIDERS[@]}"; do copy_file "$b"; done
copy_file /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
ln -sf /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$S/lib64/ld-linux-x86-64.so.2"
mkdir -p "$S/etc/libibverbs.d"
cp "$PKGROOT/etc/libibverbs.d/rxe.driver" "$S/etc/libibverbs.d/"
printf '%s\n' "${LIBDIRS[@]}" >"$S/etc/ld.so.conf"
printf 'root:x:0:0:root:/:/bin/sh\n' >"$S/etc/passwd"

info "packing initramfs"
(cd "$S" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
	gzip -9 -n >"$OUT/initramfs.cpio.gz.tmp"
mv "$OUT/initramfs.cpio.gz.tmp" "$OUT/initramfs.cpio.gz"

# ---- the kernel: the ELF inside the XZ bzImage boots through its PVH note
BZ=$PKGROOT/boot/vmlinuz-$KVER
[ -f "$BZ" ] || die "$KPKG has no /boot/vmlinuz-$KVER"
cp "$BZ" "$OUT/bzImage"
boot=bzimage
kernel=$OUT/bzImage
rm -f "$OUT/vmlinux"
off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$BZ" | head -n1 | cut -d: -f1 || true)
if [ -n "$off" ]; then
	tail -c +"$((off + 1))" "$BZ" | xz -dc --single-stream >"$OUT/vmlinux.tmp" 2>/dev/null || true
	# XEN_ELFNOTE_PHYS32_ENTRY (18): the PVH entry point qemu's -kernel looks for
	if readelf -h "$OUT/vmlinux.tmp" >/dev/null 2>&1 &&
		readelf -n "$OUT/vmlinux.tmp" 2>/dev/null | grep -q -e 'PHYS32_ENTRY' -e 'Unknown note type: (0x00000012)'; then
		mv "$OUT/vmlinux.tmp" "$OUT/vmlinux"
		boot=pvh-elf
		kernel=$OUT/vmlinux
	fi
	rm -f "$OUT/vmlinux.tmp"
fi

# ---- what went in
{
	for p in "${PKGS[@]}"; do printf '%s\t%s\n' "$p" "${VER[$p]}"; done
} | jq -R -s --arg kver "$KVER" --arg kpkg "$KPKG" --arg kernel "$kernel" --arg boot "$boot" \
	--arg initrd "$OUT/initramfs.cpio.gz" --arg mods "$(cat "$S/lib/modules/order")" \
	--argjson size "$(stat -c %s "$OUT/initramfs.cpio.gz")" '
	{kernel_version: $kver, kernel_package: $kpkg, kernel: $kernel, boot: $boot,
	 initramfs: $initrd, initramfs_bytes: $size,
	 modules: ($mods | split("\n") | map(select(. != ""))),
	 packages: (split("\n") | map(select(. != "") | split("\t") | {(.[0]): .[1]}) | add)}' \
	>"$OUT/image.json"
rm -rf "$S" "$PKGROOT"
printf '%s\n' "$want" >"$OUT/stamp"
info "built $OUT: kernel $KVER ($boot), initramfs $(($(stat -c %s "$OUT/initramfs.cpio.gz") / 1024)) KiB, ${#order[@]} modules"
