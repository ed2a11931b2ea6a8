"""The README's commands need nothing their own dependency sets do not install
(readme_paths.py: the Makefile's sets, install-deps.sh's modules, the import guard)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import readme_paths as rp


@pytest.fixture(scope="module", autouse=True)
def built():
    if not rp.IRQRESD.is_file():
        pytest.fail(f"{rp.IRQRESD} is missing: run `make` first")


def test_every_readme_command_needs_only_its_own_sets(tmp_path):
    """The guard itself ($IRQRES_GUARD_INSTALL_DEPS: another install-deps.sh's sets)."""
    deps = Path(os.environ.get("IRQRES_GUARD_INSTALL_DEPS", rp.INSTALL_DEPS))
    runs = rp.check(deps, tmp_path)
    assert [r.what.split(" [")[0] for r in runs] == [
        "make demo: demo.analyze (irqres analyze --plot, --json)",
        "make install: irqres analyze trace.dat --buffer 256 --plot plots/ --profile-out "
        "nic.yaml",
        "make install: irqres apply nic.yaml --dry-run",
        "make install: irqres status",
        "make test: the modules its Python sources import"]
    assert not any(r.returncode or r.refused for r in runs), rp.report(runs)


def _without_matplotlib(tmp_path: Path) -> Path:
    """install-deps.sh with matplotlib in the test set only (as it once was)."""
    text = rp.INSTALL_DEPS.read_text()
    old = text.replace('[vm]="matplotlib:matplotlib:python3-matplotlib"', '[vm]=""')
    old = old.replace(" python3-matplotlib\"", "\"", 1)
    assert old.count("matplotlib") == text.count("matplotlib") - 4, "install-deps.sh moved"
    p = tmp_path / "install-deps.sh"
    p.write_text(old)
    return p


def test_the_guard_fails_a_command_its_sets_do_not_serve(tmp_path):
    runs = rp.check(_without_matplotlib(tmp_path), tmp_path, ["make demo", "make install"])
    demo, analyze = runs[0], runs[1]
    for r in (demo, analyze):
        assert r.returncode != 0 and r.refused == ["irqres.plots matplotlib"], rp.report(runs)
        assert "plots need matplotlib" in r.output
    assert "FAIL make demo" in rp.report(runs)


def test_the_sets_come_from_the_makefile(tmp_path):
    db = rp.make_database()
    assert rp.dep_sets("demo", db) == ["build", "deb", "vm"]
    assert rp.dep_sets("install", db) == ["build", "runtime"]
    assert set(rp.dep_sets("test", db)) == {"build", "deb", "runtime", "test", "vm"}
    # a Makefile whose demo lost deps-vm: the guard sees it
    (tmp_path / "Makefile").write_text(
        "all: daemon\ndaemon: deps-build\ndeps-build deps-vm:\n\t@:\n"
        "demo: all\ninstall: daemon\n")
    db = rp.make_database(tmp_path)
    assert rp.dep_sets("demo", db) == ["build"]


def test_install_deps_lists_the_modules_of_its_sets():
    mods = rp.set_modules(["vm"])
    assert mods == {"PYTHON": {"matplotlib"}, "python3": set()}
    mods = rp.set_modules(["runtime"])
    assert mods["PYTHON"] == set()
    assert {"numpy", "click", "yaml", "matplotlib"} <= mods["python3"]
    assert "scipy" not in mods["python3"]   # irqres imports no scipy
    p = subprocess.run(["bash", str(rp.INSTALL_DEPS), "--modules", "nonesuch"],
                       capture_output=True, text=True, check=False)
    assert p.returncode == 2 and "unknown set 'nonesuch'" in p.stderr


def test_the_guard_allows_what_allowed_modules_import(tmp_path):
    """First-party code importing a module outside the sets is refused, even one already
    loaded; a module the sets give may import anything it needs (matplotlib, allowed,
    imports pyparsing, which is not)."""
    code = ("import sys, email, click, irqres.units, matplotlib.pyplot; "
            "assert 'pyparsing' in sys.modules")
    r = rp.guarded("probe", [rp.sys.executable, "-c", code], {"click", "matplotlib"},
                   tmp_path)
    assert r.returncode == 0 and r.refused == [], r.output
    r = rp.guarded("probe", [rp.sys.executable, "-c", code + "; import yaml"],
                   {"click", "matplotlib"}, tmp_path)
    assert r.returncode == 1 and r.refused == ["__main__ yaml"]
    assert "import guard: __main__ imports it" in r.output
    code = "import importlib; importlib.import_module('yaml')"
    r = rp.guarded("probe", [rp.sys.executable, "-c", code], {"click"}, tmp_path)
    assert r.returncode == 1 and r.refused == ["__main__ yaml"]
