#!/usr/bin/env bash
# Install what irqres needs to build, test and run its demo on Debian 12.
# Idempotent and quick when everything is already there.
set -euo pipefail

APT_PACKAGES=(
	build-essential pkg-config
	libyaml-dev libsystemd-dev libcmocka-dev
	libtracecmd-dev libtracefs-dev libtraceevent-dev trace-cmd
	qemu-system-x86 qemu-utils debootstrap e2fsprogs zstd cpio
	iproute2 procps util-linux rt-tests valgrind
	clang libclang-rt-14-dev
)
PIP_PACKAGES=(numpy scipy click pyyaml matplotlib pytest hypothesis wheel ruff prometheus-client)

PYTHON=${PYTHON:-python3}

missing=()
for p in "${APT_PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "install-deps: apt packages: ${missing[*]}" >&2
	SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! "$PYTHON" - <<'PY' 2>/dev/null
import click, numpy, scipy, yaml, matplotlib, pytest, hypothesis, wheel, ruff, prometheus_client
PY
then
	echo "install-deps: pip packages: ${PIP_PACKAGES[*]}" >&2
	"$PYTHON" -m pip install -q --disable-pip-version-check --root-user-action=ignore "${PIP_PACKAGES[@]}"
fi

# The seeds' testbed (bench/seeds/, tests/vm/test_seeds.py): QEMU 10 from
# bookworm-backports unpacked under /opt/irqres-qemu (7.2 hangs an SMP guest under
# -icount). It installs nothing system-wide.
if [ "$(id -u)" -eq 0 ]; then
	bash "$(dirname "$0")/install-qemu-bpo.sh" >/dev/null
fi
