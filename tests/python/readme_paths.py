"""The guard of the README's commands: each must need nothing that its own dependency
sets do not install.

For each command (``make demo``, ``make install`` then the RT box's ``irqres``
commands, ``make test``) the sets come from the Makefile itself (``make -p``: the
``deps-<set>`` targets the command's target depends on, directly or not), their Python
modules from ``scripts/install-deps.sh --modules`` (for the demo and the tests, what
$PYTHON gets; for the RT box, what the system python3 gets from the sets' python3-X
Debian packages). Then the command's host-side Python work runs under the import guard
(import_guard/sitecustomize.py): first-party code (irqres, the demo's scripts) may import
only the standard library, the project and those modules.

- ``make demo``: tests/vm/demo.py's own ``analyze()`` (``irqres analyze --plot``) on the
  committed sample of the demo's trace, tests/data/vm-e1000-udp.dat;
- ``make install``: the README's RT-box commands that need no daemon (``irqres analyze``
  with its --plot and --profile-out, ``irqres apply ... --dry-run``, ``irqres status``),
  on the same trace, with the demo's analysis options for it;
- ``make test``: every module the test suites and the package import (their source).

usage: readme_paths.py [--install-deps SCRIPT]   (exit 1 when a command needs more)
$IRQRES_GUARD_INSTALL_DEPS names another install-deps.sh for the pytest test too.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GUARD_DIR = Path(__file__).resolve().parent / "import_guard"
SAMPLE_TRACE = REPO / "tests" / "data" / "vm-e1000-udp.dat"
INSTALL_DEPS = REPO / "scripts" / "install-deps.sh"
IRQRESD = REPO / "build" / "daemon" / "irqresd"
FIRST_PARTY = ("irqres", "demo", "vmrunner", "bootsnap", "qemu_state", "__main__")
# the RT box's irqres commands that need no running irqresd (the others do, or root)
DAEMONLESS = {"analyze": "", "apply": "--dry-run", "status": ""}
# what the test path's source scan reads: what `make test` runs with $PYTHON
TEST_SOURCES = ("analysis", "tests", "scripts")


class GuardError(Exception):
    """The Makefile, install-deps.sh or the README do not say what the guard needs."""


# -- the Makefile: which sets each command installs ------------------------------------
_RULE = re.compile(r"^([^#\s:=][^:=]*?)\s*::?\s*(?![=])(.*)$")


def make_database(repo: Path = REPO) -> dict[str, list[str]]:
    """Every explicit target of the Makefile and its prerequisites (``make -p``, which
    runs nothing: -q asks for the empty target ':')."""
    # as a person types it: no flags or variables of a make that runs this test
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "DESTDIR")}
    proc = subprocess.run(["make", "-C", str(repo), "--no-print-directory", "-pRrq", ":"],
                          capture_output=True, text=True, check=False, env=env)
    db: dict[str, list[str]] = {}
    for line in proc.stdout.splitlines():
        m = _RULE.match(line)
        if not m or "%" in m.group(1) or line.startswith(("\t", " ")):
            continue
        prereqs = m.group(2).split("|")[0].split()
        for target in m.group(1).split():
            db.setdefault(target, []).extend(prereqs)
    if "demo" not in db or "install" not in db:
        raise GuardError(f"make -p in {repo}: no demo or install target in its database")
    return db


def dep_sets(goal: str, db: dict[str, list[str]]) -> list[str]:
    """The install-deps sets ``make GOAL`` installs: the deps-SET targets it reaches."""
    seen: set[str] = set()
    frontier = [goal]
    while frontier:
        t = frontier.pop()
        if t not in seen:
            seen.add(t)
            frontier.extend(db.get(t, []))
    return sorted(t.removeprefix("deps-") for t in seen
                  if t.startswith("deps-") and t.removeprefix("deps-").isalpha())


def set_modules(sets: Iterable[str], install_deps: Path = INSTALL_DEPS
                ) -> dict[str, set[str]]:
    """{"PYTHON": modules $PYTHON gets, "python3": the system python3's} for the sets."""
    proc = subprocess.run(["bash", str(install_deps), "--modules", *sets],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise GuardError(f"{install_deps} --modules {' '.join(sets)}: "
                         f"{proc.stderr.strip() or proc.returncode}")
    out: dict[str, set[str]] = {"PYTHON": set(), "python3": set()}
    for line in proc.stdout.splitlines():
        who, _, mod = line.partition(" ")
        if who not in out or not mod:
            raise GuardError(f"{install_deps} --modules: unexpected line {line!r}")
        out[who].add(mod)
    return out


# -- running under the guard -----------------------------------------------------------
@dataclass
class Run:
    """One command run under the guard: what it was, its exit status and output, and the
    imports the guard refused ("importer module")."""

    what: str
    returncode: int
    output: str
    refused: list[str] = field(default_factory=list)


def guarded(what: str, argv: list[str], allow: set[str], tmp: Path,
            env: dict[str, str] | None = None) -> Run:
    log = tmp / "refused.log"
    log.write_text("")
    full = dict(os.environ, **(env or {}))
    for k in [k for k, v in full.items() if v is None]:
        del full[k]
    full.update({
        "PYTHONPATH": os.pathsep.join([str(GUARD_DIR), str(REPO / "analysis")]),
        "IRQRES_GUARD_ALLOW": " ".join(sorted(allow)),
        "IRQRES_GUARD_FIRST_PARTY": " ".join(FIRST_PARTY),
        "IRQRES_GUARD_LOG": str(log),
        "MPLBACKEND": "Agg",
    })
    proc = subprocess.run(argv, cwd=tmp, env=full, capture_output=True, text=True,
                          check=False, timeout=600)
    refused = sorted(set(log.read_text().split("\n")) - {""})
    return Run(what, proc.returncode, proc.stdout + proc.stderr, refused)


def run_demo(allow: set[str], tmp: Path) -> list[Run]:
    """The demo's step 4 as demo.py does it: its analyze(), on the sample trace."""
    code = ("import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
            "import demo; demo.analyze(Path(sys.argv[2]), Path(sys.argv[3]))")
    r = guarded("make demo: demo.analyze (irqres analyze --plot, --json)",
                [sys.executable, "-c", code, str(REPO / "tests" / "vm"), str(SAMPLE_TRACE),
                 str(tmp)], allow, tmp)
    if r.returncode == 0 and not list((tmp / "plots").glob("*.png")):
        r.returncode, r.output = 1, r.output + f"\nno plot in {tmp / 'plots'}"
    return [r]


def readme_rt_box_commands(readme: Path = REPO / "README.md") -> list[list[str]]:
    """The README's `irqres` commands for an RT box that need no daemon, as words."""
    text = readme.read_text()
    m = re.search(r"^## Using it on an RT box\n(.*?)^## ", text, re.S | re.M)
    if not m:
        raise GuardError(f"{readme}: no section '## Using it on an RT box'")
    cmds = []
    for line in m.group(1).splitlines():
        if not line.startswith("    irqres "):
            continue
        words = shlex.split(line.split("#")[0])
        sub = words[1] if len(words) > 1 else ""
        if sub in DAEMONLESS and DAEMONLESS[sub] in ("", *words):
            cmds.append(words)
    if {w[1] for w in cmds} != set(DAEMONLESS):
        raise GuardError(f"{readme}: the RT-box section lacks one of the commands "
                         f"{sorted(DAEMONLESS)} that the guard runs")
    return cmds


def run_rt_box(allow: set[str], tmp: Path) -> list[Run]:
    """The README's daemonless RT-box commands, in order, as the system python3 would run
    them (`irqres` is `python3 -m irqres` there); the trace is the demo's sample."""
    sys.path.insert(0, str(REPO / "tests" / "vm"))
    try:
        from demo import ANALYZE_ARGS  # the sample trace's thread and bound
    finally:
        sys.path.pop(0)
    env = {"IRQRESD": str(IRQRESD), "IRQRES_RUN_DIR": str(tmp / "run"),
           "IRQRES_SOCKET": None}
    runs = []
    for words in readme_rt_box_commands():
        args = [str(SAMPLE_TRACE) if w == "trace.dat" else w for w in words[1:]]
        if args[0] == "analyze":
            args += ANALYZE_ARGS
        r = guarded(f"make install: {' '.join(words)}",
                    [sys.executable, "-m", "irqres", *args], allow, tmp, env)
        # apply --dry-run: 1 is the host's answer (the guest's NIC thread is not here)
        ok = (0, 1) if args[0] == "apply" else (0,)
        if r.returncode not in ok or "Traceback" in r.output:
            r.returncode = r.returncode or 1
        else:
            r.returncode = 0
        runs.append(r)
    return runs


# -- make test: the sources' imports ----------------------------------------------------
def local_modules(repo: Path = REPO) -> set[str]:
    """The project's own module names (the tests put bench/ directories on sys.path)."""
    names = {"irqres"}
    for top in (*TEST_SOURCES, "bench"):
        for p in (repo / top).rglob("*.py"):
            names.add(p.stem)
            names.update(d.name for d in p.relative_to(repo).parents if d.name)
    return names


def source_imports(repo: Path = REPO) -> dict[str, set[str]]:
    """Top-level modules imported by the sources make test runs: {module: files}."""
    found: dict[str, set[str]] = {}
    for top in TEST_SOURCES:
        for p in sorted((repo / top).rglob("*.py")):
            tree = ast.parse(p.read_text(), str(p))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for n in names:
                    found.setdefault(n.partition(".")[0], set()).add(
                        str(p.relative_to(repo)))
    return found


def check_test_sources(allow: set[str]) -> list[Run]:
    local = local_modules() | set(sys.stdlib_module_names)
    missing = {m: files for m, files in source_imports().items()
               if m not in local and m not in allow}
    out = "\n".join(f"{m}: imported by {', '.join(sorted(f))}" for m, f in
                    sorted(missing.items()))
    return [Run("make test: the modules its Python sources import", int(bool(missing)),
                out, [f"(source) {m}" for m in sorted(missing)])]


# -- all of it -----------------------------------------------------------------------
PATHS = {
    # README command: (make goal, interpreter whose modules count, what runs)
    "make demo": ("demo", "PYTHON", run_demo),
    "make install": ("install", "python3", run_rt_box),
    "make test": ("test", "PYTHON", lambda allow, tmp: check_test_sources(allow)),
}


def check(install_deps: Path = INSTALL_DEPS, tmp: Path | None = None,
          paths: Iterable[str] = tuple(PATHS)) -> list[Run]:
    """Run the guard of the README commands ``paths`` (all by default)."""
    db = make_database()
    runs = []
    for name in paths:
        goal, interp, run = PATHS[name]
        sets = dep_sets(goal, db)
        allow = set_modules(sets, install_deps)[interp]
        with tempfile.TemporaryDirectory(prefix="irqres-guard-", dir=tmp) as d:
            for r in run(allow, Path(d)):
                r.what += f" [sets {' '.join(sets)}: {interp} has {' '.join(sorted(allow))}]"
                runs.append(r)
    return runs


def report(runs: list[Run]) -> str:
    lines = []
    for r in runs:
        bad = r.returncode != 0 or r.refused
        lines.append(f"{'FAIL' if bad else 'ok  '} {r.what}")
        if r.refused:
            lines.append("     refused imports (importer module): " + "; ".join(r.refused))
        if bad:
            lines += [f"     | {ln}" for ln in r.output.strip().splitlines()[-15:]]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--install-deps", type=Path,
                    default=Path(os.environ.get("IRQRES_GUARD_INSTALL_DEPS", INSTALL_DEPS)),
                    help="the install-deps.sh whose sets count [%(default)s]")
    args = ap.parse_args()
    try:
        runs = check(args.install_deps)
    except GuardError as exc:
        print(f"readme_paths: {exc}", file=sys.stderr)
        return 2
    print(report(runs))
    return 1 if any(r.returncode or r.refused for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
