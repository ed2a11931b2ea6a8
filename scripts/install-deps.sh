#!/usr/bin/env bash
# Install what irqres needs on Debian 12, by purpose:
#
#   build    compile irqresd and the trace reader, generate the man pages and completion
#   runtime  run the installed irqresd and irqres (the system python3's Debian packages)
#   test     the C, Python and host integration suites, lint, the man page checks
#   vm       the PREEMPT_RT VM suite and the demo: QEMU, the guest image, the .deb
#   vm-arm64 the arm64 guest (IRQRES_VM_ARCH=arm64): qemu-system-aarch64, and
#            qemu-user-static registered with binfmt_misc for its arm64 userland and
#            package build (make test-vm-arm64, IRQRES_VM_ARCH=amd64,arm64 make
#            test-vm); only when named (not part of "all")
#   deb      build the Debian package (make deb) and check it with lintian
#
# usage: install-deps.sh [--list | --modules] [SET...]     (no SET: all of them)
#   --list     print the Debian packages of the sets, one a line, and install nothing
#   --modules  print the Python modules the sets give, one a line, as "PYTHON module"
#              ($PYTHON's, whichever way they come) or "python3 module" (the system
#              python3's, from the sets' python3-X Debian packages), install nothing
#
# `make` installs build, `make install` runtime (never test or vm: a production box gets
# no compilers' test tools, QEMU or pytest), `make test` and `make demo` everything they
# use. Python modules go to $PYTHON (the interpreter that builds and tests): by pip, or,
# when $PYTHON is Debian's own externally managed python3, as Debian packages. The
# runtime set is always Debian's, for the system python3 the installed `irqres` runs on.
# Idempotent and quick when everything is already there.
set -euo pipefail

declare -A APT=(
	[build]="build-essential pkg-config libyaml-dev libsystemd-dev libtracecmd-dev
		libtracefs-dev libtraceevent-dev python3 python3-dev python3-setuptools"
	[runtime]="libyaml-0-2 libsystemd0 libtracecmd1 libtracefs1 libtraceevent1 trace-cmd
		python3 python3-numpy python3-click python3-yaml python3-matplotlib"
	[test]="libcmocka-dev valgrind iproute2 procps util-linux rt-tests man-db groff-base
		bash-completion zsh clang libclang-rt-14-dev python3-venv"
	[vm]="qemu-system-x86 qemu-utils debootstrap e2fsprogs zstd cpio iproute2"
	[vm-arm64]="qemu-system-arm qemu-user-static binfmt-support debootstrap e2fsprogs
		iproute2"
	[deb]="debhelper dh-python dpkg-dev fakeroot lintian python3-dev python3-setuptools
		python3-numpy python3-click python3-yaml"
)
# Python modules $PYTHON needs per set: module:pip name:Debian package ("-": none in 12)
declare -A PYMOD=(
	[build]="click:click:python3-click numpy:numpy:python3-numpy
		yaml:pyyaml:python3-yaml setuptools:setuptools:python3-setuptools
		wheel:wheel:python3-wheel"
	[runtime]=""
	[test]="matplotlib:matplotlib:python3-matplotlib pytest:pytest:python3-pytest
		hypothesis:hypothesis:python3-hypothesis
		prometheus_client:prometheus-client:python3-prometheus-client
		jsonschema:jsonschema:python3-jsonschema scipy:scipy:python3-scipy
		lizard:lizard==1.24.3:-"
	[vm]="matplotlib:matplotlib:python3-matplotlib"
	[vm-arm64]=""
	[deb]=""
)
ALL_SETS=(build runtime test vm deb)
# The linters of `make lint`, pinned (the test set): a new release of either flags code
# that passed before. They live in the virtualenv LINT_VENV, made from $PYTHON with its
# modules visible (mypy checks the code against $PYTHON's numpy and click), so
# that these versions hold whatever $PYTHON has, and Debian's python3 stays untouched.
LINT_PINS=(ruff==0.17.6 mypy==2.4.1 types-PyYAML==6.0.12.20261113)
LINT_VENV=${LINT_VENV:-$(cd "$(dirname "$0")/.." && pwd)/build/lint-venv}

PYTHON=${PYTHON:-python3}
list=0 modules=0
sets=()
for a in "$@"; do
	case $a in
	--list) list=1 ;;
	--modules) modules=1 ;;
	-h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*)
		[[ -v APT[$a] ]] || { echo "install-deps: unknown set '$a' (sets: ${ALL_SETS[*]})" >&2; exit 2; }
		sets+=("$a") ;;
	esac
done
((${#sets[@]})) || sets=("${ALL_SETS[@]}")

# Is $PYTHON Debian's externally managed interpreter (PEP 668)? Then its modules come
# from apt, like the runtime's.
externally_managed() {
	"$PYTHON" - <<'PY' 2>/dev/null
import os, sys, sysconfig
sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))
         and sys.prefix == sys.base_prefix else 1)
PY
}

apt_pkgs=()
mods=()
for s in "${sets[@]}"; do
	read -r -a words <<<"${APT[$s]//$'\n'/ }"
	apt_pkgs+=("${words[@]}")
	read -r -a more <<<"${PYMOD[$s]//$'\n'/ }"
	mods+=("${more[@]}")
done

# Sorts the modules $PYTHON lacks into py_apt (Debian's python3: its packages), pip_pkgs
# (any other interpreter) and pip_system (Debian's python3, a module Debian 12 lacks).
# One interpreter start for all of them; no interpreter yet means every one is missing.
py_apt=() pip_pkgs=() pip_system=()
plan_python() {
	((${#mods[@]})) || return 0
	local debian_python=0 absent m mod pipname deb
	externally_managed && debian_python=1
	absent=" $("$PYTHON" - "${mods[@]}" <<'PY' 2>/dev/null || printf '%s ' "${mods[@]%%:*}"
import importlib.util, sys
print(" ".join(m for m in (a.split(":")[0] for a in sys.argv[1:])
               if importlib.util.find_spec(m) is None))
PY
) "
	for m in "${mods[@]}"; do
		IFS=: read -r mod pipname deb <<<"$m"
		[[ $absent == *" $mod "* ]] || continue
		if ((debian_python)) && [[ $deb != - ]]; then
			py_apt+=("$deb")
		elif ((debian_python)); then
			pip_system+=("$pipname")
		else
			pip_pkgs+=("$pipname")
		fi
	done
	((${#pip_system[@]})) && py_apt+=(python3-pip)
	return 0
}

SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
updated=0
apt_install() {
	local p missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	((${#missing[@]})) || return 0
	echo "install-deps (${sets[*]}): apt packages: ${missing[*]}" >&2
	((updated)) || $SUDO apt-get update -qq
	updated=1
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null
}

if ((modules)); then
	{
		for m in "${mods[@]}"; do echo "PYTHON ${m%%:*}"; done
		# python3-X (not -dev) is module X of the system python3 (python3-yaml: yaml)
		for p in "${apt_pkgs[@]}"; do
			if [[ $p == python3-* && $p != *-dev ]]; then echo "python3 ${p#python3-}" | tr - _; fi
		done
	} | awk '!seen[$0]++'
	exit 0
fi

if ((list)); then
	plan_python
	printf '%s\n' "${apt_pkgs[@]}" "${py_apt[@]}" | awk 'NF && !seen[$0]++'
	exit 0
fi

apt_install "${apt_pkgs[@]}"    # first: it may bring python3 itself
plan_python
apt_install "${py_apt[@]}"
if ((${#pip_pkgs[@]})); then
	echo "install-deps (${sets[*]}): pip packages for $PYTHON: ${pip_pkgs[*]}" >&2
	"$PYTHON" -m pip install -q --disable-pip-version-check --root-user-action=ignore \
		"${pip_pkgs[@]}"
fi
if ((${#pip_system[@]})); then
	# Only standalone tools (lizard, which adds pathspec beside Debian's pygments):
	# Debian's modules stay intact.
	echo "install-deps (${sets[*]}): pip packages Debian 12 lacks: ${pip_system[*]}" >&2
	$SUDO "$PYTHON" -m pip install -q --disable-pip-version-check --root-user-action=ignore \
		--break-system-packages "${pip_system[@]}"
fi

# The lint virtualenv: (re)made when it is missing, was made from another interpreter,
# or lacks a pinned version.
lint_venv_ok() {
	[ -x "$LINT_VENV/bin/python" ] && [ -f "$LINT_VENV/.made-from" ] &&
		[ "$(cat "$LINT_VENV/.made-from")" = "$("$PYTHON" -c 'import sys; print(sys.executable)')" ] &&
		"$LINT_VENV/bin/python" - "${LINT_PINS[@]}" <<'PY' 2>/dev/null
import sys
from importlib.metadata import PackageNotFoundError, version
for pin in sys.argv[1:]:
    name, want = pin.split("==")
    try:
        ok = version(name) == want
    except PackageNotFoundError:
        ok = False
    if not ok:
        sys.exit(1)
PY
}
if [[ " ${sets[*]} " == *" test "* ]] && ! lint_venv_ok; then
	echo "install-deps (${sets[*]}): lint tools in $LINT_VENV: ${LINT_PINS[*]}" >&2
	rm -rf "$LINT_VENV"
	"$PYTHON" -m venv "$LINT_VENV"
	# $PYTHON's module directories after the virtualenv's own (a .pth file): also those
	# of a $PYTHON that is itself a virtualenv
	"$PYTHON" -c 'import sys; print("\n".join(p for p in sys.path
		if p.endswith(("site-packages", "dist-packages"))))' >"$("$LINT_VENV/bin/python" -c \
		'import sysconfig; print(sysconfig.get_path("purelib"))')/irqres-python.pth"
	"$LINT_VENV/bin/python" -m pip install -q --disable-pip-version-check "${LINT_PINS[@]}"
	"$PYTHON" -c 'import sys; print(sys.executable)' >"$LINT_VENV/.made-from"
fi

# The seeds' testbed (bench/seeds/, tests/vm/test_seeds.py), with the vm set: QEMU 10
# from bookworm-backports unpacked under /opt/irqres-qemu (7.2 hangs an SMP guest under
# -icount), on the firmware of the system's qemu-system-x86 that the vm set installed
# above. It installs nothing system-wide.
if [[ " ${sets[*]} " == *" vm "* ]] && [ "$(id -u)" -eq 0 ]; then
	bash "$(dirname "$0")/install-qemu-bpo.sh" >/dev/null
fi

# The arm64 guest's userland is debootstrapped and its package built on this machine:
# arm64 binaries run through qemu-user-static's binfmt handler. Its package registers
# the handler, but only where binfmt_misc is mounted and binfmt-support's service can
# run (not in a container without systemd): make sure it is in force.
if [[ " ${sets[*]} " == *" vm-arm64 "* ]]; then
	binfmt=/proc/sys/fs/binfmt_misc
	[ -e $binfmt/register ] || $SUDO mount -t binfmt_misc binfmt_misc $binfmt
	if [ "$(head -n 1 $binfmt/qemu-aarch64 2>/dev/null)" != enabled ]; then
		echo "install-deps (${sets[*]}): registering qemu-aarch64 with binfmt_misc" >&2
		$SUDO update-binfmts --enable qemu-aarch64
	fi
fi
