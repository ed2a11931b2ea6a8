#!/usr/bin/env bash
# Build (or reuse) the Debian 12 PREEMPT_RT guest image for the VM suite.
#
# The image lives outside the repository, in $IRQRES_VM_CACHE (default
# /var/cache/irqres-vm)/<hash>/ where <hash> covers this script and tests/vm/image/, so it
# is rebuilt only when its inputs change. A build happens in a temporary directory that is
# renamed into place only when complete: a half-built cache is never used. The three
# newest complete images are kept (checkouts of other commits share the cache).
#
# Three PREEMPT_RT kernels go into the one image, so that every scenario runs on each
# without a second root disk: Debian 12's linux-image-rt-amd64 (6.1), the
# mainline-PREEMPT_RT 6.12 of bookworm-backports and the 7.x of trixie-backports (their
# linux-image-rt-amd64). The 7.x packages pre-depend on a linux-base newer than
# bookworm's, so they are not installed: their files (vmlinuz, modules, config) are
# unpacked into the bookworm root and its initramfs is made there, the userland staying
# Debian 12's for all three. The guest's root file system holds the three module trees;
# QEMU picks the kernel with -kernel/-initrd.
#
# Downloaded packages are kept in $cache_root/debs (debootstrap's and apt's cache,
# checked by their hash), so that a rebuild after a change of the inputs downloads
# nothing that it already has.
#
# Output (last line of stdout): the cache directory, holding disk.img (raw ext4 root),
# kernels (one "<label> <release>" line per kernel, oldest first), vmlinuz-<release> and
# initrd.img-<release> of each, and vmlinuz/initrd.img/kernel-release of the first.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${IRQRES_VM_CACHE:-/var/cache/irqres-vm}
suite=bookworm
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}

# Guest packages: the system, the tools the scenarios use and the runtime libraries of
# the project's binaries (irqresd: libyaml, libsystemd; the trace reader: libtracecmd).
packages=(
	systemd systemd-sysv udev dbus iproute2 kmod procps util-linux
	python3 python3-numpy python3-click python3-yaml
	trace-cmd rt-tests ethtool libyaml-0-2 libsystemd0 libtracecmd1 libtracefs1 libtraceevent1
)
kernel_packages=(initramfs-tools zstd linux-image-rt-amd64)
# The 6.12 RT kernel comes from bookworm-backports (with the linux-base it pre-depends on).
backports=bookworm-backports
backports_packages=(linux-image-rt-amd64)
# The 7.x RT kernel: trixie-backports' linux-image-rt-amd64, unpacked (see above).
unpacked_suite=trixie-backports
unpacked_meta=linux-image-rt-amd64
disk_size=3G

log() { printf 'build-image: %s\n' "$*" >&2; }

key=$( { cat "$0"; find "$here/image" -type f -print0 | sort -z | xargs -0 cat; \
	echo "$suite $mirror ${packages[*]} ${kernel_packages[*]} $disk_size"; \
	echo "$backports ${backports_packages[*]}"; echo "$unpacked_suite $unpacked_meta"; } |
	sha256sum | cut -c1-16)
dest=$cache_root/$key

if [[ -f $dest/complete ]]; then
	log "cached image $dest"
	echo "$dest"
	exit 0
fi

[[ $(id -u) -eq 0 ]] || { log "building the image needs root (debootstrap, chroot)"; exit 1; }
for tool in debootstrap mke2fs chroot; do
	command -v "$tool" >/dev/null || { log "missing $tool: run scripts/install-deps.sh"; exit 1; }
done

mkdir -p "$cache_root"
exec 9>"$cache_root/.lock"
log "waiting for the cache lock $cache_root/.lock"
flock 9
if [[ -f $dest/complete ]]; then   # built by someone else while we waited
	echo "$dest"
	exit 0
fi

start=$(date +%s)
work=$(mktemp -d "$cache_root/build.$key.XXXXXX")
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

step "kernel: ${kernel_packages[*]}"
mount -t proc proc "$rootfs/proc"
mount -t sysfs sysfs "$rootfs/sys"
mount --bind "$debs" "$rootfs/var/cache/apt/archives"
mkdir -p "$rootfs/etc/initramfs-tools/conf.d"
echo MODULES=most >"$rootfs/etc/initramfs-tools/conf.d/irqres"
printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
chroot "$rootfs" /usr/bin/env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -q --no-install-recommends "${kernel_packages[@]}" \
	>"$work/kernel.log" 2>&1 || { tail -n 30 "$work/kernel.log" >&2; exit 1; }
step "kernel from $backports: ${backports_packages[*]}"
echo "deb $mirror $backports main" >"$rootfs/etc/apt/sources.list.d/$backports.list"
{ chroot "$rootfs" apt-get update -q &&
  chroot "$rootfs" /usr/bin/env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -q --no-install-recommends -t "$backports" "${backports_packages[@]}"
} >>"$work/kernel.log" 2>&1 || { tail -n 30 "$work/kernel.log" >&2; exit 1; }
rm -f "$rootfs/etc/apt/sources.list.d/$backports.list"

step "kernel from $unpacked_suite: $unpacked_meta, unpacked"
echo "deb $mirror $unpacked_suite main" >"$rootfs/etc/apt/sources.list.d/$unpacked_suite.list"
unpack_kernel() {
	local release pkg deb
	chroot "$rootfs" apt-get update -q || return 1
	# The metapackage names the versioned image package: linux-image-<release>.
	release=$(chroot "$rootfs" apt-cache depends "$unpacked_meta/$unpacked_suite" |
		sed -n 's/^ *Depends: linux-image-\(.*-rt-amd64\)$/\1/p')
	[[ -n $release ]] || { log "$unpacked_suite: $unpacked_meta names no kernel"; return 1; }
	# Its files are in linux-{base,binary,modules}-<release> (7.x packaging).
	chroot "$rootfs" /usr/bin/env -C /var/cache/apt/archives \
		apt-get download -q "linux-base-$release" "linux-binary-$release" \
		"linux-modules-$release" || return 1
	for pkg in base binary modules; do
		deb=$(ls "$debs/linux-$pkg-${release}_"*.deb | tail -n 1)
		dpkg-deb -x "$deb" "$rootfs" || return 1
	done
	cp "$rootfs/lib/modules/$release/vmlinuz" "$rootfs/boot/vmlinuz-$release"
	cp "$rootfs/lib/modules/$release/config" "$rootfs/boot/config-$release"
	chroot "$rootfs" depmod -a "$release" &&
	chroot "$rootfs" mkinitramfs -o "/boot/initrd.img-$release" "$release"
}
unpack_kernel >>"$work/kernel.log" 2>&1 || { tail -n 30 "$work/kernel.log" >&2; exit 1; }
rm -f "$rootfs/etc/apt/sources.list.d/$unpacked_suite.list"
umount "$rootfs/var/cache/apt/archives"
rm -f "$rootfs/usr/sbin/policy-rc.d"
umount "$rootfs/sys" "$rootfs/proc"

step "configure the guest"
cp -a "$here/image/." "$rootfs/"
echo irqres-vm >"$rootfs/etc/hostname"
echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' >"$rootfs/etc/fstab"
chroot "$rootfs" passwd -d root >/dev/null
chroot "$rootfs" systemctl enable systemd-networkd.service >/dev/null 2>&1
chroot "$rootfs" systemctl mask systemd-networkd-wait-online.service \
	apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer \
	>/dev/null 2>&1 || true
rm -rf "$rootfs/var/lib/apt/lists/"* "$rootfs/var/cache/apt/"*.bin \
	"$rootfs/var/cache/apt/archives/"*.deb
# One line per kernel, "<major.minor> <release>", oldest first; the first is also the
# image's default (vmlinuz, initrd.img, kernel-release: make demo, bench/).
mapfile -t releases < <(ls "$rootfs/lib/modules" | grep -- '-rt-' | sort -V)
[[ ${#releases[@]} -ge 3 ]] ||
	{ log "expected three PREEMPT_RT kernels in the image, found: ${releases[*]:-none}"; exit 1; }
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
rm -rf --one-file-system "$rootfs"

elapsed=$(( $(date +%s) - start ))
echo "$elapsed" >"$work/build-seconds"
touch "$work/complete"
rm -rf --one-file-system "$dest"
mv "$work" "$dest"
trap - EXIT
step "image ready in ${elapsed}s (kernels ${releases[*]}): $dest"

# Keep the disk in check: the three newest complete images stay (checkouts of different
# commits, or image variants, share the cache), stale half-builds go.
keep=$(ls -1dt "$cache_root"/*/complete 2>/dev/null | head -n 3 | xargs -r -n1 dirname)
for old in "$cache_root"/*/; do
	old=${old%/}
	[[ $old == "$dest" ]] && continue
	case $(basename "$old") in
	debs) ;;
	build.*) [[ -n $(find "$old" -maxdepth 0 -mmin +120) ]] && rm -rf --one-file-system "$old" ;;
	*) grep -qxF "$old" <<<"$keep" || rm -rf --one-file-system "$old" ;;
	esac
done
echo "$dest"
