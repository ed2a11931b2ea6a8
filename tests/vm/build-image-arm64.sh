#!/usr/bin/env bash
# Build (or reuse) the Debian 12 arm64 PREEMPT_RT guest image for IRQRES_VM_ARCH=arm64.
#
# The arm64 twin of build-image.sh, in a cache of its own ($IRQRES_VM_CACHE-arm64, default
# /var/cache/irqres-vm-arm64, /<hash>/ covering this script and tests/vm/image/), so that
# neither image's inputs change the other's, and neither script's clean-up removes the
# other's images. The userland is debootstrapped for
# arm64 on this machine: debootstrap runs the arm64 maintainer scripts through
# qemu-user-static's binfmt handler (scripts/install-deps.sh vm-arm64 installs and
# registers it). Downloaded packages share $cache_root/debs with the amd64 image (their
# names carry the architecture).
#
# Kernels: Debian 12's linux-image-rt-arm64 (6.1) and bookworm-backports' (6.12), booted
# by qemu-system-aarch64 -M virt with -kernel/-initrd (no firmware).
#
# The image also keeps, as builder/, its root file system with the checkout's
# Build-Depends installed: the VM harness builds the arm64 irqres package there
# (dpkg-buildpackage under qemu-user), since the host's package is amd64.
#
# Output (last line of stdout): the cache directory, holding disk.img, builder/,
# kernels ("<label> <release>" per kernel, oldest first), vmlinuz-<release> and
# initrd.img-<release> of each.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${IRQRES_VM_CACHE:-/var/cache/irqres-vm}
arch=arm64
images=$cache_root-$arch
suite=bookworm
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}

packages=(
	systemd systemd-sysv udev dbus iproute2 kmod procps util-linux
	python3 python3-numpy python3-click python3-yaml
	trace-cmd rt-tests ethtool libyaml-0-2 libsystemd0 libtracecmd1 libtracefs1 libtraceevent1
)
initramfs_packages=(initramfs-tools zstd)
kernel_packages=(linux-image-rt-arm64)
backports=bookworm-backports
backports_packages=(linux-image-rt-arm64)
# debian/control's Build-Depends, for the package built in builder/
build_packages=(build-essential debhelper dh-python libsystemd-dev libtracecmd-dev
	libtraceevent-dev libtracefs-dev libyaml-dev pkg-config python3-dev python3-click
	python3-numpy python3-setuptools python3-yaml)
disk_size=3G

log() { printf 'build-image-arm64: %s\n' "$*" >&2; }

key=$( { cat "$0"; find "$here/image" -type f -print0 | sort -z | xargs -0 cat; \
	echo "$arch $suite $mirror ${packages[*]} ${initramfs_packages[*]} ${kernel_packages[*]} $disk_size"; \
	echo "$backports ${backports_packages[*]}"; echo "${build_packages[*]}"; } |
	sha256sum | cut -c1-16)
dest=$images/$key

if [[ -f $dest/complete ]]; then
	log "cached image $dest"
	echo "$dest"
	exit 0
fi

[[ $(id -u) -eq 0 ]] || { log "building the image needs root (debootstrap, chroot)"; exit 1; }
for tool in debootstrap mke2fs chroot; do
	command -v "$tool" >/dev/null || { log "missing $tool: run scripts/install-deps.sh vm-arm64"; exit 1; }
done
[[ $(cat /proc/sys/fs/binfmt_misc/qemu-aarch64 2>/dev/null | head -n 1) == enabled ]] ||
	{ log "arm64 binaries cannot run here (no qemu-aarch64 binfmt handler): run scripts/install-deps.sh vm-arm64"; exit 1; }

mkdir -p "$images"
exec 9>"$images/.lock"
log "waiting for the cache lock $images/.lock"
flock 9
if [[ -f $dest/complete ]]; then
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
	[[ -d $work ]] && rm -rf --one-file-system "$work"
}
trap cleanup EXIT

step() { log "[$(( $(date +%s) - start ))s] $*"; }
# INITRD=No: the kernel packages make no initramfs (see below)
in_root() { chroot "$rootfs" /usr/bin/env DEBIAN_FRONTEND=noninteractive INITRD=No "$@"; }

debs=$cache_root/debs
mkdir -p "$debs/partial"
step "debootstrap $suite $arch minbase from $mirror (second stage under qemu-user)"
debootstrap --arch="$arch" --variant=minbase --cache-dir="$debs" \
	--include="$(IFS=,; echo "${packages[*]}")" \
	"$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
	{ tail -n 30 "$work/debootstrap.log" >&2; exit 1; }

step "kernel: ${initramfs_packages[*]} ${kernel_packages[*]}"
mount -t proc proc "$rootfs/proc"
mount -t sysfs sysfs "$rootfs/sys"
mount --bind "$debs" "$rootfs/var/cache/apt/archives"
# Under qemu-user one initramfs of MODULES=most takes about 9 minutes, and the kernel's
# postinst and initramfs-tools' trigger each make one: the packages make none here
# (update_initramfs=no), and each kernel gets one below with what the virt board's
# root disk needs (virtio on PCI, ext4), about a minute.
mkdir -p "$rootfs/etc/initramfs-tools/conf.d"
echo MODULES=list >"$rootfs/etc/initramfs-tools/conf.d/irqres"
printf '%s\n' virtio_pci virtio_blk ext4 crc32c_generic >>"$rootfs/etc/initramfs-tools/modules"
printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
{ in_root apt-get install -y -q --no-install-recommends "${initramfs_packages[@]}" &&
  sed -i 's/^update_initramfs=.*/update_initramfs=no/' \
	"$rootfs/etc/initramfs-tools/update-initramfs.conf" &&
  in_root apt-get install -y -q --no-install-recommends "${kernel_packages[@]}"
} >"$work/kernel.log" 2>&1 || { tail -n 30 "$work/kernel.log" >&2; exit 1; }
step "kernel from $backports: ${backports_packages[*]}"
echo "deb $mirror $backports main" >"$rootfs/etc/apt/sources.list.d/$backports.list"
{ in_root apt-get update -q &&
  in_root apt-get install -y -q --no-install-recommends -t "$backports" "${backports_packages[@]}"
} >>"$work/kernel.log" 2>&1 || { tail -n 30 "$work/kernel.log" >&2; exit 1; }
rm -f "$rootfs/etc/apt/sources.list.d/$backports.list"
in_root apt-get update -q >>"$work/kernel.log" 2>&1
mapfile -t releases < <(ls "$rootfs/lib/modules" | grep -- '-rt-' | sort -V)
for release in "${releases[@]}"; do
	step "initramfs of $release"
	in_root mkinitramfs -o "/boot/initrd.img-$release" "$release" >>"$work/kernel.log" 2>&1 ||
		{ tail -n 30 "$work/kernel.log" >&2; exit 1; }
done
sed -i 's/^update_initramfs=.*/update_initramfs=yes/' "$rootfs/etc/initramfs-tools/update-initramfs.conf"

step "configure the guest"
cp -a "$here/image/." "$rootfs/"
# the virt machine's console is its PL011 UART
mv "$rootfs/etc/systemd/system/serial-getty@ttyS0.service.d" \
	"$rootfs/etc/systemd/system/serial-getty@ttyAMA0.service.d"
echo irqres-vm >"$rootfs/etc/hostname"
echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' >"$rootfs/etc/fstab"
chroot "$rootfs" passwd -d root >/dev/null
chroot "$rootfs" systemctl enable systemd-networkd.service >/dev/null 2>&1
# shellcheck disable=SC2046 # one unit per word
chroot "$rootfs" systemctl mask $(grep -v '^#' "$rootfs/etc/irqres-vm/masked-units") \
	>/dev/null
[[ ${#releases[@]} -ge 2 ]] ||
	{ log "expected two PREEMPT_RT kernels in the image, found: ${releases[*]:-none}"; exit 1; }
: >"$work/kernels"
for release in "${releases[@]}"; do
	cp "$rootfs/boot/vmlinuz-$release" "$work/vmlinuz-$release"
	cp "$rootfs/boot/initrd.img-$release" "$work/initrd.img-$release"
	echo "$(cut -d. -f1,2 <<<"$release") $release" >>"$work/kernels"
done

step "mke2fs -d into a $disk_size raw disk"
umount "$rootfs/var/cache/apt/archives"
rm -f "$rootfs/usr/sbin/policy-rc.d"
umount "$rootfs/sys" "$rootfs/proc"
mke2fs -q -t ext4 -L irqres-root -d "$rootfs" "$work/disk.img" "$disk_size" >&2

step "builder: the guest's root with the package's Build-Depends"
mount -t proc proc "$rootfs/proc"
mount --bind "$debs" "$rootfs/var/cache/apt/archives"
in_root apt-get install -y -q --no-install-recommends "${build_packages[@]}" \
	>"$work/builder.log" 2>&1 || { tail -n 30 "$work/builder.log" >&2; exit 1; }
umount "$rootfs/var/cache/apt/archives" "$rootfs/proc"
rm -rf "$rootfs/var/lib/apt/lists/"* "$rootfs/var/cache/apt/"*.bin
mv "$rootfs" "$work/builder"
rootfs=$work/builder

elapsed=$(( $(date +%s) - start ))
echo "$elapsed" >"$work/build-seconds"
touch "$work/complete"
rm -rf --one-file-system "$dest"
mv "$work" "$dest"
trap - EXIT
step "image ready in ${elapsed}s (kernels ${releases[*]}): $dest"

# The two newest complete images stay, stale half-builds go.
keep=$(ls -1dt "$images"/*/complete 2>/dev/null | head -n 2 | xargs -r -n1 dirname)
for old in "$images"/*/; do
	old=${old%/}
	[[ $old == "$dest" ]] && continue
	case $(basename "$old") in
	build.*) [[ -n $(find "$old" -maxdepth 0 -mmin +120) ]] && rm -rf --one-file-system "$old" ;;
	*) grep -qxF "$old" <<<"$keep" || rm -rf --one-file-system "$old" ;;
	esac
done
echo "$dest"
