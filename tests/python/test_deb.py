"""`make deb`: the Debian package, checked by lintian and by looking inside it.

That it installs and runs on Debian 12 with its declared dependencies is the VM suite's
part: the guest installs this package with dpkg (tests/vm/guest/install.sh).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def deb(tmp_path_factory) -> tuple[Path, Path, str]:
    """(the .deb, its unpacked tree, lintian's report), from one `make deb`."""
    proc = subprocess.run(["make", "-s", "-C", str(REPO), "deb"], capture_output=True,
                          text=True, env=dict(os.environ, PYTHON=sys.executable))
    report = REPO / "build" / "deb" / "lintian.txt"
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    debs = sorted((REPO / "build" / "deb").glob("irqres_*.deb"))
    assert len(debs) == 1, debs
    tree = tmp_path_factory.mktemp("deb")
    subprocess.run(["dpkg-deb", "-R", str(debs[0]), str(tree)], check=True)
    return debs[0], tree, report.read_text()


def field(deb: Path, name: str) -> str:
    return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_lintian_reports_no_error_or_warning(deb):
    _, _, report = deb
    tags = [line for line in report.splitlines() if re.match(r"[EW]: ", line)]
    assert tags == [], report


def test_package_layout(deb):
    _, tree, _ = deb
    irqres = tree / "usr/bin/irqres"
    assert irqres.read_text().splitlines()[0] == "#!/usr/bin/python3"
    assert os.access(irqres, os.X_OK) and os.access(tree / "usr/sbin/irqresd", os.X_OK)
    site = tree / "usr/lib/python3/dist-packages"
    assert (site / "irqres/cli/__init__.py").is_file()
    assert list((site / "irqres").glob("_tracereader.cpython-*-linux-gnu.so"))
    for page in ("man1/irqres.1.gz", "man5/irqres-profile.5.gz", "man8/irqresd.8.gz"):
        assert (tree / "usr/share/man" / page).is_file(), page
    assert (tree / "usr/share/bash-completion/completions/irqres").is_file()
    assert (tree / "usr/share/zsh/vendor-completions/_irqres").is_file()
    assert (tree / "usr/share/doc/irqres/examples/profile.yaml").is_file()
    unit = (tree / "lib/systemd/system/irqresd.service").read_text()
    assert "ExecStart=/usr/sbin/irqresd " in unit and "/usr/local" not in unit
    tune = (tree / "lib/systemd/system/irqres-tune.service").read_text()
    assert "ExecStart=/usr/bin/irqres tune" in tune
    # the unit's documentation link is to a file that is there, uncompressed
    for doc in re.findall(r"Documentation=.*?file:(\S+)", tune):
        assert (tree / doc.lstrip("/")).is_file(), doc


def test_dependencies_are_debian_packages_of_the_runtime_set(deb):
    """The package depends on Debian's python3 modules and the libraries it links, and
    `make install`'s runtime set (install-deps.sh) covers every one of them."""
    path, _, _ = deb
    depends = {re.split(r"[\s(:]", d.strip())[0] for d in field(path, "Depends").split(",")}
    assert {"python3-numpy", "python3-click", "python3-yaml",
            "libyaml-0-2", "libsystemd0", "libtracecmd1"} <= depends, depends
    assert "python3-scipy" not in depends   # irqres imports no scipy
    runtime = subprocess.run(["bash", str(REPO / "scripts/install-deps.sh"), "--list",
                              "runtime"], capture_output=True, text=True, check=True).stdout
    missing = depends - set(runtime.split()) - {"libc6"}
    assert not missing, f"the runtime set lacks {missing}"


def test_maintainer_scripts_enable_irqresd_only(deb):
    """irqresd.service is enabled on installation (it starts once a profile exists);
    the controller stays as the administrator left it and is never started."""
    _, tree, _ = deb
    postinst = (tree / "DEBIAN/postinst").read_text()
    assert re.search(r"was-enabled 'irqresd.service'; then\s+#[^\n]*\n\s+#[^\n]*\n"
                     r"\s+deb-systemd-helper enable 'irqresd.service'", postinst), postinst
    assert "deb-systemd-helper debian-installed 'irqres-tune.service'" in postinst
    assert re.search(r"deb-systemd-invoke \$_dh_action 'irqresd.service'", postinst)
    assert "deb-systemd-invoke $_dh_action 'irqres-tune.service'" not in postinst
    assert "py3compile -p irqres" in postinst
