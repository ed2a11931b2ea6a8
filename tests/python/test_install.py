"""`make install`: the runtime only, on the system's python3 (scripts/install-deps.sh sets).

The installed ``irqres`` must run on the interpreter of the box it is installed on, not
on the build machine's virtualenv or pyenv python; and installing it must not pull in
QEMU, pytest or valgrind.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3"
DEPS = REPO / "scripts" / "install-deps.sh"


def dep_sets(*make_args: str) -> list[str]:
    """The install-deps.sh sets ``make`` would install for these targets (stamps stale)."""
    out = subprocess.run(["make", "-n", "-C", str(REPO), "-W", "scripts/install-deps.sh",
                          "INSTALL_DEPS=echo INSTALL-DEPS", *make_args],
                         capture_output=True, text=True, check=True).stdout
    return [line.split()[2] for line in out.splitlines() if line.startswith("echo INSTALL-DEPS")]


def listed(*sets: str) -> set[str]:
    out = subprocess.run(["bash", str(DEPS), "--list", *sets], capture_output=True, text=True,
                         check=True, env=dict(os.environ, PYTHON=sys.executable)).stdout
    return set(out.split())


def test_make_install_installs_runtime_never_test_or_vm():
    assert sorted(dep_sets("install")) == ["build", "runtime"]
    # staging or packaging (DESTDIR): files only, the package manager brings the rest
    assert dep_sets("install", "DESTDIR=/tmp/x") == ["build"]
    assert {"build", "test", "vm", "runtime", "deb"} <= set(dep_sets("test"))
    assert {"build", "vm", "deb"} <= set(dep_sets("demo"))  # the guest installs the .deb


def test_dependency_sets_are_split_by_purpose():
    runtime = listed("runtime")
    assert {"python3-numpy", "python3-click", "python3-yaml",
            "libyaml-0-2", "libsystemd0", "libtracecmd1"} <= runtime
    assert "python3-scipy" not in runtime   # irqres imports no scipy
    for tool in ("qemu-system-x86", "debootstrap", "valgrind", "libcmocka-dev",
                 "build-essential", "python3-pytest", "lintian"):
        assert tool not in runtime, tool
    assert {"qemu-system-x86", "debootstrap"} <= listed("vm")
    assert {"libcmocka-dev", "valgrind"} <= listed("test")
    assert {"libyaml-dev", "libtracecmd-dev", "python3-dev"} <= listed("build")
    bad = subprocess.run(["bash", str(DEPS), "--list", "tests"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown set 'tests'" in bad.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("install")
    proc = subprocess.run(["make", "-s", "-C", str(REPO), "install", f"DESTDIR={dest}",
                           "PREFIX=/usr/local"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return dest


def test_installed_script_runs_on_the_system_python(installed):
    script = installed / "usr/local/bin/irqres"
    shebang = script.read_text().splitlines()[0]
    assert shebang == f"#!{SYSTEM_PYTHON}", shebang
    assert not re.search(r"pyenv|venv|/work/|/home/", shebang), shebang
    site = installed / "usr/local/lib/python3.11/dist-packages"
    assert (site / "irqres" / "__init__.py").is_file()
    assert list((site / "irqres").glob("_tracereader.cpython-*.so"))
    # Executed through its #! line, outside the checkout and the virtualenv: the system
    # python3 with Debian's numpy/click/yaml (install-deps.sh runtime).
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PYTHONPATH": str(site),
           "LC_ALL": "C.UTF-8"}
    ver = subprocess.run([str(script), "--version"], cwd="/", env=env,
                         capture_output=True, text=True)
    assert ver.returncode == 0 and "irqres, version" in ver.stdout, ver.stderr
    trace = REPO / "tests" / "data" / "vm-e1000-udp.dat"
    res = subprocess.run([str(script), "analyze", str(trace), "--thread", "irq/11-eth0",
                          "--period", "10ms", "--json"],
                         cwd="/", env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert '"irq/11-eth0"' in res.stdout
    where = subprocess.run([SYSTEM_PYTHON, "-c", "import irqres._tracereader as t; "
                            "print(t.__file__)"], cwd="/", env=env, capture_output=True,
                           text=True)
    assert where.stdout.startswith(str(site)), where.stdout + where.stderr


def test_install_puts_pages_completion_and_example_where_tools_look(installed):
    share = installed / "usr/local/share"
    for page in ("man1/irqres.1", "man5/irqres-profile.5", "man8/irqresd.8"):
        assert (share / "man" / page).is_file(), page
    # bash-completion searches $XDG_DATA_DIRS (/usr/local/share first), zsh's fpath has
    # /usr/local/share/zsh/site-functions on Debian
    assert "_irqres_completion" in (share / "bash-completion/completions/irqres").read_text()
    assert (share / "zsh/site-functions/_irqres").read_text().startswith("#compdef irqres")
    example = share / "doc/irqres/examples/profile.yaml"
    # irqresd's own parser accepts it: 0 or 1 (nothing to match on this host), never 2
    r = subprocess.run([str(installed / "usr/local/sbin/irqresd"), "--dry-run", "-p",
                        str(example)], capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    assert "profile.yaml:" not in r.stderr or "matches no thread" in r.stderr, r.stderr
    for unit in ("irqresd.service", "irqres-tune.service"):
        body = (installed / "lib/systemd/system" / unit).read_text()
        assert "Documentation=man:" in body, unit
