#!/bin/bash
# QEMU 10 from bookworm-backports, unpacked under /opt/irqres-qemu for the seeds'
# experiments and their VM test (bench/seeds/testbed.py, tests/vm/test_seeds.py). Debian 12's QEMU 7.2
# hangs an SMP guest under -icount; 10.0 boots it. The system's QEMU, its apt sources
# and every other user of the machine are left alone: the package lists live in a
# private directory and the .debs are unpacked, not installed.
set -euo pipefail
dest=${1:-/opt/irqres-qemu}
[ -x "$dest/bin/qemu-system-x86_64" ] && { "$dest/bin/qemu-system-x86_64" --version | head -1; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{lists/partial,cache/archives/partial}
echo "deb http://deb.debian.org/debian bookworm-backports main" >"$tmp/sources.list"
apt_opts=(-o Dir::Etc::sourcelist="$tmp/sources.list" -o Dir::Etc::sourceparts=/nonexistent
	-o Dir::State::Lists="$tmp/lists" -o Dir::Cache="$tmp/cache" -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" -qq update
(cd "$tmp" && apt-get "${apt_opts[@]}" -qq download qemu-system-x86 qemu-system-common \
	qemu-system-data)
# its firmware comes from the system's seabios and ipxe-qemu (installed with qemu-system-x86)
for f in /usr/share/seabios/bios-256k.bin /usr/lib/ipxe/qemu/efi-e1000.rom; do
	[ -e "$f" ] || { echo "install-qemu-bpo.sh: $f missing (install qemu-system-x86)" >&2; exit 1; }
done
rm -rf "$dest.tmp" && mkdir -p "$dest.tmp/root"
for d in "$tmp"/*.deb; do dpkg -x "$d" "$dest.tmp/root"; done
fw="$dest.tmp/root/usr/share/qemu-fw"
mkdir -p "$fw"
for f in "$dest.tmp"/root/usr/share/qemu/* /usr/share/seabios/* /usr/lib/ipxe/qemu/*; do
	ln -sf "${f/#$dest.tmp/$dest}" "$fw/"
done
mkdir -p "$dest.tmp/bin"
ln -s "$dest/root/usr/bin/qemu-system-x86_64" "$dest.tmp/bin/qemu-system-x86_64"
missing=$(ldd "$dest.tmp/root/usr/bin/qemu-system-x86_64" | grep "not found" || true)
[ -z "$missing" ] || { echo "install-qemu-bpo.sh: missing libraries: $missing" >&2; exit 1; }
rm -rf "$dest" && mv "$dest.tmp" "$dest"
"$dest/bin/qemu-system-x86_64" --version | head -1
