#!/usr/bin/env bash
# `make demo`: boot Debian's PREEMPT_RT kernel under QEMU, let irqresd reserve the NIC's IRQ
# thread from profiles/demo.yaml, flood the NIC, record and analyse a trace, print a report.
# Needs root (the guest image is built with debootstrap); takes a few minutes, the first
# time a few more to build the image (cached in /var/cache/irqres-vm).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ $(id -u) -ne 0 ]]; then
	echo "demo: needs root to build the guest image (debootstrap, chroot); run: sudo make demo" >&2
	exit 1
fi
exec "${PYTHON:-python3}" "$here/demo.py" "$@"
