#!/usr/bin/env bash
# Build (or reuse) a PREEMPT_RT guest image of the VM suite, in the Debian userland its
# kernels ship with:
#
#   build-image.sh [bookworm]   Debian 12 with its own linux-image-rt-amd64 (6.1) and
#                               bookworm-backports' (6.12)
#   build-image.sh trixie       Debian 13 with the newest 6.12 it ships (trixie and
#                               trixie-security) and trixie-backports' 7.x
#
# An image lives outside the repository, in $IRQRES_VM_CACHE (default /var/cache/irqres-vm;
# for trixie the same with -trixie)/<hash>/ where <hash> covers this script, the suite and
# tests/vm/image/, so it is rebuilt only when its inputs change. A build happens in a
# temporary directory that is renamed into place only when complete: a half-built cache is
# never used. The three newest complete images of a suite are kept (checkouts of other
# commits share the cache).
#
# The guest's root file system holds every kernel's module tree; QEMU picks the kernel
# with -kernel/-initrd. The host's irqres package is built on Debian 12 (its compiled
# Python module for bookworm's Python), so a trixie image also keeps, as builder/, its
# root with debian/control's Build-Depends: the VM harness builds the trixie package
# there (tests/vm/debbuild.py), natively, against the libraries the guest has.
#
# Downloaded packages are kept in $cache_root/debs, shared by every image (debootstrap's
# and apt's cache, checked by their hash), so that a rebuild after a change of the inputs
# downloads nothing that it already has.
#
# Output (last line of stdout): the cache directory, holding disk.img (raw ext4 root),
# kernels (one "<label> <release>" line per kernel, oldest first), vmlinuz-<release> and
# initrd.img-<release> of each, and vmlinuz/initrd.img/kernel-release of the first.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${IRQRES_VM_CACHE:-/var/cache/irqres-vm}
suite=${1:-bookworm}
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}
security_mirror=${mirror%/debian}/debian-security

# Guest packages: the system, the tools the scenarios use and the runtime libraries of
# the project's binaries (irqresd: libyaml, libsystemd; the trace reader: libtracecmd).
packages=(
	systemd systemd-sysv udev dbus iproute2 kmod procps util-linux
	python3 python3-numpy python3-click python3-yaml
	trace-cmd rt-tests ethtool libyaml-0-2 libsystemd0 libtracecmd1 libtracefs1 libtraceevent1
)
kernel_packages=(initramfs-tools zstd linux-image-rt-amd64)
case $suite in
bookworm)
	images=$cache_root
	# Debian 12's own RT kernel, at the point release the suite's figures were measured on,
	# and bookworm-backports' 6.12 (mainline PREEMPT_RT).
	kernel_suites=()
	backports=(bookworm-backports)
	build_packages=()
	;;
trixie)
	images=$cache_root-trixie
	# The newest 6.12 Debian ships: trixie's, updated by trixie-security.
	kernel_suites=("$security_mirror trixie-security")
	# 7.x: two deadline servers per CPU, sched_ext built in.
	backports=(trixie-backports)
	# debian/control's Build-Depends, for the package built in builder/
	build_packages=(build-essential debhelper dh-python libsystemd-dev libtracecmd-dev
		libtraceevent-dev libtracefs-dev libyaml-dev pkg-config python3-dev python3-click
		python3-numpy python3-setuptools python3-yaml)
	;;
*)
	printf 'build-image: unknown suite %s (bookworm or trixie)\n' "$suite" >&2
	exit 2
	;;
esac
kernel_count=$(( 1 + ${#backports[@]} ))
disk_size=3G

log() { printf 'build-image: %s\n' "$*" >&2; }

key=$( { cat "$0"; find "$here/image" -type f -print0 | sort -z | xargs -0 cat; \
	echo "$suite $mirror ${packages[*]} ${kernel_packages[*]} $disk_size"; \
	echo "${kernel_suites[*]} ${backports[*]} ${build_packages[*]}"; } |
	sha256sum | cut -c1-16)
dest=$images/$key

if [[ -f $dest/complete ]]; then
	log "cached image $dest"
	echo "$dest"
	exit 0
fi

[[ $(id -u) -eq 0 ]] || { log "building the image needs root (debootstrap, chroot)"; exit 1; }
for tool in debootstrap mke2fs chroot; do
	command -v "$tool" >/dev/null || { log "missing $tool: run scripts/install-deps.sh"; exit 1; }
done

mkdir -p "$images"
exec 9>"$images/.lock"
log "waiting for the cache lock $images/.lock"
flock 9
if [[ -f $dest/complete ]]; then   # built by someone else while we waited
	echo "$dest"
	exit 0
fi

start=$(date +%s)
work=$(mktemp -d "$images/build.$key.XXXXXX")
rootfs=$work/rootfs

cleanup() {
	local m
	for m in "$rootfs/var/cache/apt/archives" "$rootfs/sys" "$rootfs/proc" "$rootfs/dev/pts"; do
		mountpoint -q "$m" 2>/dev/null && umount -l "$m"
	done
	# --one-file-system: never descend into anything still mounted
	[[ -d $work ]] && rm -rf --one-file-system "$work"
}
trap cleanup EXIT

step() { log "[$(( $(date +%s) - start ))s] $*"; }

debs=$cache_root/debs
mkdir -p "$debs/partial"
step "debootstrap $suite minbase from $mirror"
debootstrap --variant=minbase --cache-dir="$debs" --include="$(IFS=,; echo "${packages[*]}")" \
	"$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
	{ tail -n 30 "$work/debootstrap.log" >&2; exit 1; }

in_root() { chroot "$rootfs" /usr/bin/env DEBIAN_FRONTEND=noninteractive "$@"; }
step "kernel: ${kernel_packages[*]} ${kernel_suites[*]:+(with ${kernel_suites[*]})}"
mount -t proc proc "$rootfs/proc"
mount -t sysfs sysfs "$rootfs/sys"
mount --bind "$debs" "$rootfs/var/cache/apt/archives"
mkdir -p "$rootfs/etc/initramfs-tools/conf.d"
echo MODULES=most >"$rootfs/etc/initramfs-tools/conf.d/irqres"
printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
for source in "${kernel_suites[@]}"; do
	echo "deb $source main" >>"$rootfs/etc/apt/sources.list.d/irqres-kernel.list"
done
{ if [[ ${#kernel_suites[@]} -gt 0 ]]; then in_root apt-get update -q; fi &&
  in_root apt-get install -y -q --no-install-recommends "${kernel_packages[@]}"
} >"$work/kernel.log" 2>&1 || { tail -n 30 "$work/kernel.log" >&2; exit 1; }
for bpo in "${backports[@]}"; do
	step "kernel from $bpo: linux-image-rt-amd64"
	echo "deb $mirror $bpo main" >>"$rootfs/etc/apt/sources.list.d/irqres-kernel.list"
	{ in_root apt-get update -q &&
	  in_root apt-get install -y -q --no-install-recommends -t "$bpo" linux-image-rt-amd64
	} >>"$work/kernel.log" 2>&1 || { tail -n 30 "$work/kernel.log" >&2; exit 1; }
done
rm -f "$rootfs/etc/apt/sources.list.d/irqres-kernel.list"
umount "$rootfs/var/cache/apt/archives"
rm -f "$rootfs/usr/sbin/policy-rc.d"
umount "$rootfs/sys" "$rootfs/proc"

step "configure the guest"
cp -a "$here/image/." "$rootfs/"
echo irqres-vm >"$rootfs/etc/hostname"
echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' >"$rootfs/etc/fstab"
chroot "$rootfs" passwd -d root >/dev/null
chroot "$rootfs" systemctl enable systemd-networkd.service >/dev/null 2>&1
# shellcheck disable=SC2046 # one unit per word
chroot "$rootfs" systemctl mask $(grep -v '^#' "$rootfs/etc/irqres-vm/masked-units") \
	>/dev/null
rm -rf "$rootfs/var/lib/apt/lists/"* "$rootfs/var/cache/apt/"*.bin \
	"$rootfs/var/cache/apt/archives/"*.deb
# One line per kernel, "<major.minor> <release>", oldest first; the first is also the
# image's default (vmlinuz, initrd.img, kernel-release: make demo, bench/).
mapfile -t releases < <(ls "$rootfs/lib/modules" | grep -- '-rt-' | sort -V)
[[ ${#releases[@]} -eq $kernel_count ]] ||
	{ log "expected $kernel_count PREEMPT_RT kernels in the image, found: ${releases[*]:-none}"; exit 1; }
: >"$work/kernels"
for release in "${releases[@]}"; do
	cp "$rootfs/boot/vmlinuz-$release" "$work/vmlinuz-$release"
	cp "$rootfs/boot/initrd.img-$release" "$work/initrd.img-$release"
	echo "$(cut -d. -f1,2 <<<"$release") $release" >>"$work/kernels"
done
release=${releases[0]}
cp "$work/vmlinuz-$release" "$work/vmlinuz"
cp "$work/initrd.img-$release" "$work/initrd.img"
echo "$release" >"$work/kernel-release"

step "mke2fs -d into a $disk_size raw disk"
mke2fs -q -t ext4 -L irqres-root -d "$rootfs" "$work/disk.img" "$disk_size" >&2
if [[ ${#build_packages[@]} -gt 0 ]]; then
	step "builder: the guest's root with the package's Build-Depends"
	mount -t proc proc "$rootfs/proc"
	mount --bind "$debs" "$rootfs/var/cache/apt/archives"
	{ in_root apt-get update -q &&
	  in_root apt-get install -y -q --no-install-recommends "${build_packages[@]}"
	} >"$work/builder.log" 2>&1 || { tail -n 30 "$work/builder.log" >&2; exit 1; }
	umount "$rootfs/var/cache/apt/archives" "$rootfs/proc"
	rm -rf "$rootfs/var/lib/apt/lists/"* "$rootfs/var/cache/apt/"*.bin
	mv "$rootfs" "$work/builder"
	rootfs=$work/builder
else
	rm -rf --one-file-system "$rootfs"
fi

elapsed=$(( $(date +%s) - start ))
echo "$elapsed" >"$work/build-seconds"
touch "$work/complete"
rm -rf --one-file-system "$dest"
mv "$work" "$dest"
trap - EXIT
step "image ready in ${elapsed}s (kernels ${releases[*]}): $dest"

# Keep the disk in check: the three newest complete images stay (checkouts of different
# commits, or image variants, share the cache), stale half-builds go.
keep=$(ls -1dt "$images"/*/complete 2>/dev/null | head -n 3 | xargs -r -n1 dirname)
for old in "$images"/*/; do
	old=${old%/}
	[[ $old == "$dest" ]] && continue
	case $(basename "$old") in
	debs) ;;
	build.*) [[ -n $(find "$old" -maxdepth 0 -mmin +120) ]] && rm -rf --one-file-system "$old" ;;
	*) grep -qxF "$old" <<<"$keep" || rm -rf --one-file-system "$old" ;;
	esac
done
echo "$dest"
