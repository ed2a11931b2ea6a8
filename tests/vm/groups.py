"""Run the VM suite as several pytest processes at once (`make test-vm` runs it so).

    python3 tests/vm/groups.py                      # $IRQRES_VM_GROUPS groups (default 2)
    python3 tests/vm/groups.py --groups 1 tests/vm/test_boot.py
    python3 tests/vm/groups.py --record-durations   # rebalance from the last run's times

A guest under TCG keeps one or two host cores busy, and much of a scenario is guest time
spent waiting (boot, sleeps, load windows); on a 2-core machine two guests at once finish
the suite in less time than one after the other (docs/vm.md, "Two guests at once"). The
tests are collected once (`pytest --collect-only`), dealt to the groups so that each
group's expected time (tests/vm/durations.json, seconds per test from an earlier run; the
median for a test it does not know) is about the same, and each group runs its tests in
one pytest process with its own work directory ($IRQRES_VM_WORKDIR-gN). Every line a
group prints is shown as it comes, prefixed with the group; each writes
build/vm-groups/gN.xml (junit) and gN.log. The exit status is 0 when every group
passed; the failed tests are listed at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DURATIONS = Path(__file__).resolve().parent / "durations.json"
OUT = ROOT / "build" / "vm-groups"


def default_groups() -> int:
    """$IRQRES_VM_GROUPS, else 2 on a machine with at least 2 CPUs, else 1."""
    env = os.environ.get("IRQRES_VM_GROUPS", "").strip()
    if env:
        try:
            n = int(env)
        except ValueError:
            raise SystemExit(f"groups: IRQRES_VM_GROUPS={env!r} is not a whole number"
                             ) from None
        if n < 1:
            raise SystemExit(f"groups: IRQRES_VM_GROUPS={n}: at least 1 group")
        return n
    return 2 if (os.cpu_count() or 1) >= 2 else 1


def collect(python: str, paths: list[str]) -> list[str]:
    """The node ids pytest would run for ``paths`` (with this environment's
    IRQRES_VM_ARCH and IRQRES_VM_KERNELS)."""
    out = subprocess.run([python, "-m", "pytest", "--collect-only", "-q", "-p",
                          "no:cacheprovider", *paths],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    ids = [line.strip() for line in out.stdout.splitlines() if "::" in line]
    if out.returncode not in (0, 5) or not ids:
        raise SystemExit(f"groups: pytest collected no test from {' '.join(paths)} "
                         f"(status {out.returncode}):\n{out.stdout}{out.stderr}")
    return ids


def junit_cases(path: Path) -> list[tuple[str, float, str]]:
    """(node id, seconds, outcome) of each test case in a junit XML of pytest's."""
    cases = []
    for case in ET.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "").replace(".", "/")
        node = f"{module}.py::{case.get('name')}"
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
            elif child.tag == "skipped":
                outcome = ("xfailed" if child.get("type") == "pytest.xfail"
                           else "skipped")
        cases.append((node, float(case.get("time", "0")), outcome))
    return cases


def load_durations(path: Path = DURATIONS) -> dict[str, float]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise SystemExit(f"groups: {path}: not JSON ({err})") from None
    if not isinstance(data, dict) or not all(
            isinstance(v, (int, float)) and v >= 0 for v in data.values()):
        raise SystemExit(f"groups: {path}: expected an object of test id -> seconds ≥ 0")
    return {str(k): float(v) for k, v in data.items()}


def arch_of(node: str) -> str:
    """The guest architecture a test id boots: "arm64" for test_x[arm64-6.1], else amd64
    (the host checks among them too)."""
    return "arm64" if "[arm64-" in node else "amd64"


def bundle(node: str) -> str:
    """Tests that share a costly first step go to one group: every arm64 scenario (the
    arm64 image and package, built by whichever runs first, take minutes under qemu-user
    and a second group would only wait for them)."""
    return "arm64" if arch_of(node) == "arm64" else node


def deal(ids: list[str], groups: int, times: dict[str, float]) -> list[list[str]]:
    """Bundles (:func:`bundle`), longest first, onto the group with the least so far;
    each group keeps file order."""
    known = sorted(times.values())
    default = known[len(known) // 2] if known else 1.0
    bundles: dict[str, list[str]] = {}
    for i in ids:
        bundles.setdefault(bundle(i), []).append(i)
    cost = {k: sum(times.get(i, default) for i in v) for k, v in bundles.items()}
    load = [0.0] * groups
    dealt: list[list[str]] = [[] for _ in range(groups)]
    for k in sorted(bundles, key=lambda k: -cost[k]):
        g = load.index(min(load))
        dealt[g] += bundles[k]
        load[g] += cost[k]
    return [sorted(d, key=ids.index) for d in dealt if d]


def by_arch(ids: list[str]) -> list[list[str]]:
    """One group per architecture, in file order, amd64 first: with
    IRQRES_VM_ARCH=amd64,arm64, `make test-vm` runs the amd64 suite one guest at a time
    and the arm64 guest beside it (its image and package are built under
    qemu-user while the amd64 guests run)."""
    arches = sorted({arch_of(i) for i in ids}, key=lambda a: (a != "amd64", a))
    return [[i for i in ids if arch_of(i) == a] for a in arches]


def _relay(n: int, proc: subprocess.Popen, log: Path, lock: threading.Lock,
           ends: dict[int, float]) -> None:
    with log.open("w") as f:
        for line in proc.stdout:
            f.write(line)
            with lock:
                sys.stdout.write(f"[g{n}] {line}")
                sys.stdout.flush()
    proc.wait()
    ends[n] = time.monotonic()


def run(groups: list[list[str]], python: str, workdir: str,
        out: Path) -> list[tuple[int, int, float]]:
    """Run each group in its own pytest process; (group, status, wall s) of each."""
    out.mkdir(parents=True, exist_ok=True)
    lock = threading.Lock()
    ends: dict[int, float] = {}
    procs = []
    for n, group in enumerate(groups, 1):
        env = dict(os.environ, IRQRES_VM_WORKDIR=f"{workdir}-g{n}", PYTHONUNBUFFERED="1")
        (out / f"g{n}.ids").write_text("\n".join(group) + "\n")
        xml = out / f"g{n}.xml"
        xml.unlink(missing_ok=True)
        proc = subprocess.Popen([python, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                                 f"--junitxml={xml}", *group], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                bufsize=1)
        t = threading.Thread(target=_relay, args=(n, proc, out / f"g{n}.log", lock, ends))
        t.start()
        procs.append((n, proc, t, time.monotonic()))
        print(f"groups: group {n}: {len(group)} tests, log {out / f'g{n}.log'}", flush=True)
    results = []
    for n, proc, t, t0 in procs:
        t.join()
        results.append((n, proc.returncode, ends[n] - t0))
    return results


def summary(results: list[tuple[int, int, float]], out: Path) -> list[str]:
    """Print each group's counts and wall time; the failed tests' ids."""
    failed = []
    for n, status, wall in results:
        xml = out / f"g{n}.xml"
        cases = junit_cases(xml) if xml.is_file() else []
        counts: dict[str, int] = {}
        for node, _, outcome in cases:
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome == "failed":
                failed.append(node)
        said = ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "no report"
        print(f"groups: group {n}: status {status}, {said}, {wall:.0f} s", flush=True)
        if status != 0 and not any(o == "failed" for _, _, o in cases):
            failed.append(f"group {n} (status {status}: see {out / f'g{n}.log'})")
    return failed


def record(out: Path, path: Path = DURATIONS) -> int:
    """Merge the last run's seconds per test into ``path``."""
    times = load_durations(path)
    got = 0
    for xml in sorted(out.glob("g*.xml")):
        for node, secs, outcome in junit_cases(xml):
            if outcome in ("passed", "xfailed"):  # a failure's time may be a timeout
                times[node] = round(secs, 1)
                got += 1
    if not got:
        raise SystemExit(f"groups: no test times in {out}/g*.xml: run the suite first")
    path.write_text(json.dumps(dict(sorted(times.items())), indent=1) + "\n")
    print(f"groups: {got} test times merged into {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--groups", type=int, default=None,
                    help="pytest processes at once (default $IRQRES_VM_GROUPS, else 2 on "
                         "a machine with 2 or more CPUs)")
    ap.add_argument("--by-arch", action="store_true",
                    help="one group per guest architecture instead of --groups balanced "
                         "ones (what IRQRES_VM_ARCH=amd64,arm64 make test-vm runs)")
    ap.add_argument("--out", type=Path, default=OUT,
                    help=f"directory for the logs and junit XML (default {OUT})")
    ap.add_argument("--durations", type=Path, default=DURATIONS,
                    help="seconds per test id, JSON, to balance the groups")
    ap.add_argument("--workdir", default=os.environ.get("IRQRES_VM_WORKDIR",
                                                        "/var/tmp/irqres-vm"),
                    help="prefix of each group's IRQRES_VM_WORKDIR")
    ap.add_argument("--record-durations", action="store_true",
                    help="merge the last run's times (--out) into --durations and exit")
    ap.add_argument("paths", nargs="*", default=["tests/vm"],
                    help="what to run (default tests/vm)")
    args = ap.parse_args(argv)
    if args.record_durations:
        return record(args.out, args.durations)
    if args.by_arch and args.groups is not None:
        ap.error("--by-arch and --groups: choose one")
    groups = args.groups if args.groups is not None else default_groups()
    if groups < 1:
        ap.error(f"--groups: at least 1, not {groups}")
    python = sys.executable
    ids = collect(python, args.paths)
    dealt = by_arch(ids) if args.by_arch else deal(ids, groups, load_durations(args.durations))
    t0 = time.monotonic()
    results = run(dealt, python, args.workdir, args.out)
    failed = summary(results, args.out)
    print(f"groups: {len(ids)} tests in {len(dealt)} groups, {time.monotonic() - t0:.0f} s",
          flush=True)
    for f in failed:
        print(f"groups: FAILED {f}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
