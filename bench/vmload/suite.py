"""Run the whole VM suite (what `make test-vm` runs) as several pytest processes at once.

    python3 bench/vmload/hold_load.py --target 8 --log OUT/load.jsonl -- \\
        python3 bench/vmload/suite.py --groups 3 --out OUT

The tests are collected once (`pytest --collect-only`), dealt to ``--groups`` groups so
that each group's expected time is about the same (from ``--durations`` — a junit XML
of an earlier run — or one unit a test), and each group runs its tests in one pytest
process with its own work directory; the guests of the groups share the machine's
CPUs. Each group writes OUT/gN.xml (junit) and OUT/gN.log. The exit status is 0 when
every group passed.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def collect(python: str, paths: list[str]) -> list[str]:
    """The node ids pytest would run for ``paths``."""
    out = subprocess.run([python, "-m", "pytest", "--collect-only", "-q", *paths],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    ids = [line.strip() for line in out.stdout.splitlines() if "::" in line]
    if not ids:
        raise SystemExit(f"suite: pytest collected no test from {paths}:\n{out.stdout}"
                         f"{out.stderr}")
    return ids


def junit_times(path: Path) -> dict[str, float]:
    """Seconds per test from a junit XML, keyed by the test's name with its parameters."""
    times = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        times[case.get("name")] = float(case.get("time", "0"))
    return times


def deal(ids: list[str], groups: int, times: dict[str, float]) -> list[list[str]]:
    """Longest first onto the group with the least so far; each group keeps file order."""
    known = sorted(times.values())
    default = known[len(known) // 2] if known else 1.0
    cost = {i: times.get(i.split("::")[-1], default) for i in ids}
    load = [0.0] * groups
    dealt: list[list[str]] = [[] for _ in range(groups)]
    for i in sorted(ids, key=lambda i: -cost[i]):
        g = load.index(min(load))
        dealt[g].append(i)
        load[g] += cost[i]
    return [sorted(d, key=ids.index) for d in dealt if d]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--groups", type=int, default=3, help="pytest processes at once (3)")
    ap.add_argument("--out", type=Path, required=True, help="directory for logs and XML")
    ap.add_argument("--durations", type=Path,
                    help="junit XML of an earlier run, to balance the groups")
    ap.add_argument("--workdir", default="/var/tmp/irqres-vm-load",
                    help="prefix of each group's IRQRES_VM_WORKDIR")
    ap.add_argument("paths", nargs="*", default=["tests/vm"],
                    help="what to run (default tests/vm)")
    args = ap.parse_args(argv)
    if args.groups < 1:
        ap.error(f"--groups: must be at least 1, not {args.groups}")
    if args.durations and not args.durations.is_file():
        ap.error(f"--durations: {args.durations}: no such file")
    python = sys.executable
    ids = collect(python, args.paths)
    times = junit_times(args.durations) if args.durations else {}
    args.out.mkdir(parents=True, exist_ok=True)
    procs = []
    for n, group in enumerate(deal(ids, args.groups, times), 1):
        env = dict(os.environ, IRQRES_VM_WORKDIR=f"{args.workdir}-g{n}")
        (args.out / f"g{n}.ids").write_text("\n".join(group) + "\n")
        log = (args.out / f"g{n}.log").open("w")
        procs.append((n, log, subprocess.Popen(
            [python, "-m", "pytest", "-q", "-rA", f"--junitxml={args.out}/g{n}.xml",
             *group], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)))
        print(f"suite: group {n}: {len(group)} tests", file=sys.stderr)
    failed = []
    for n, log, proc in procs:
        if proc.wait() != 0:
            failed.append(n)
        log.close()
    print(f"suite: groups failed: {failed or 'none'}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
