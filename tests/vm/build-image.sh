#!/usr/bin/env bash
# Build (or reuse) the Debian 12 PREEMPT_RT guest image for the VM suite.
#
# The image lives outside the repository, in $IRQRES_VM_CACHE (default
# /var/cache/irqres-vm)/<hash>/ where <hash> covers this script and tests/vm/image/, so it
# is rebuilt only when its inputs change. A build happens in a temporary directory that is
# renamed into place only when complete: a half-built cache is never used. The three
# newest complete images are kept (checkouts of other commits share the cache).
#
# Two PREEMPT_RT kernels go into the one image, so that every scenario runs on both
# without a second root disk: Debian 12's linux-image-rt-amd64 (6.1) and the
# mainline-PREEMPT_RT 6.12 of bookworm-backports (its linux-image-rt-amd64). The guest's
# root file system holds both module trees; QEMU picks the kernel with -kernel/-initrd.
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
	python3 python3-numpy python3-scipy python3-click python3-yaml
	trace-cmd rt-tests ethtool libyaml-0-2 libsystemd0 libtracecmd1 libtracefs1 libtraceevent1
)
kernel_packages=(initramfs-tools zstd linux-image-rt-amd64)
# The 6.12 RT kernel comes from bookworm-backports (with the linux-base it pre-depends on).
backports=bookworm-backports
backports_packages=(linux-image-rt-amd64)
disk_size=3G

log() { printf 'build-image: %s\n' "$*" >&2; }

key=$( { cat "$0"; find "$here/image" -type f -print0 | sort -z | xargs -0 cat; \
	echo "$suite $mirror ${packages[*]} ${kernel_packages[*]} $disk_size"; \
	echo "$backports ${backports_packages[*]}"; } |
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
	for m in "$rootfs/sys" "$rootfs/proc" "$rootfs/dev/pts"; do
		mountpoint -q "$m" 2>/dev/null && umount -l "$m"
	done
	# --one-file-system: never descend into anything still mounted
	[[ -d $work ]] && rm -rf --one-file-system "$work"
}
trap cleanup EXIT

step() { log "[$(( $(date +%s) - start ))s] $*"; }

step "debootstrap $suite minbase from $mirror"
debootstrap --variant=minbase --include="$(IFS=,; echo "${packages[*]}")" \
	"$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
	{ tail -n 30 "$work/debootstrap.log" >&2; exit 1; }

step "kernel: ${kernel_packages[*]}"
mount -t proc proc "$rootfs/proc"
mount -t sysfs sysfs "$rootfs/sys"
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
chroot "$rootfs" apt-get clean
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
rm -rf "$rootfs/var/lib/apt/lists/"* "$rootfs/var/cache/apt/"*.bin
# One line per kernel, "<major.minor> <release>", oldest first; the first is also the
# image's default (vmlinuz, initrd.img, kernel-release: make demo, bench/).
mapfile -t releases < <(ls "$rootfs/lib/modules" | grep -- '-rt-' | sort -V)
[[ ${#releases[@]} -ge 2 ]] ||
	{ log "expected two PREEMPT_RT kernels in the image, found: ${releases[*]:-none}"; exit 1; }
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
	build.*) [[ -n $(find "$old" -maxdepth 0 -mmin +120) ]] && rm -rf --one-file-system "$old" ;;
	*) grep -qxF "$old" <<<"$keep" || rm -rf --one-file-system "$old" ;;
	esac
done
echo "$dest"
