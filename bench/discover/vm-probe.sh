#!/usr/bin/env bash
# Runs vm-probe (discover + match, statically linked) inside the PREEMPT_RT guest of the
# VM suite, with eth0 up, against profiles/*.yaml and bench/discover/vm/*.yaml, and
# prints what it saw.  The guest image is the one tests/vm/build-image.sh builds (or
# reuses from its cache); the root disk runs in snapshot mode and is never modified.
#
# usage: bench/discover/vm-probe.sh [IMAGE_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
image=${1:-$(bash tests/vm/build-image.sh | tail -1)}
work=$(mktemp -d /tmp/irqres-vm-probe.XXXXXX)
trap 'rm -rf "$work"' EXIT

make -s -C daemon ../build/daemon/libirqresd.a
mkdir -p "$work/payload"
${CC:-cc} -O2 -std=gnu11 -Wall -Wextra -D_GNU_SOURCE -Idaemon/src -static \
	-o "$work/payload/vm-probe" bench/discover/vm-probe.c build/daemon/libirqresd.a -lyaml
cp profiles/*.yaml bench/discover/vm/*.yaml "$work/payload/"
cat > "$work/payload/run.sh" <<'GUEST'
#!/bin/sh
cd /mnt
{
	uname -r
	ip link set eth0 up	# e1000 requests IRQ 11, and so creates irq/11-eth0, on open
	sleep 2
	./vm-probe probe.yaml e1000.yaml demo.yaml adaptive.yaml video-and-nic.yaml \
		nic-multiqueue.yaml
} > /mnt/out.txt 2>&1
sync
GUEST
chmod +x "$work/payload/run.sh"
mke2fs -q -t ext4 -d "$work/payload" "$work/payload.img" 64M

timeout 600 qemu-system-x86_64 -accel tcg -smp 1 -m 1024 \
	-kernel "$image/vmlinuz" -initrd "$image/initrd.img" \
	-append "root=/dev/vda rw console=ttyS0 net.ifnames=0 systemd.run=\"/bin/sh -c 'mount /dev/vdb /mnt && /mnt/run.sh'\" systemd.run_success_action=poweroff systemd.run_failure_action=poweroff" \
	-drive "file=$image/disk.img,if=virtio,format=raw,snapshot=on" \
	-drive "file=$work/payload.img,if=virtio,format=raw" \
	-netdev user,id=n0 -device e1000,netdev=n0 \
	-nographic -no-reboot > "$work/console.log" 2>&1 ||
	{ tail -20 "$work/console.log" >&2; exit 1; }
debugfs -R "cat /out.txt" "$work/payload.img" 2>/dev/null
