"""Tabulate a run of bench/vmload/suite.py under hold_load.py: each test's outcome, its
time and the host's 1-minute load while it ran.

    python3 bench/vmload/report.py bench/vmload/data/RUN

Reads RUN/g*.xml (junit, one per pytest process) and RUN/load.jsonl (hold_load's
samples). A test's window starts at its group's start plus the times of the tests before
it in that group (pytest's junit time covers set-up, call and tear-down); the load column
is the range of the samples taken inside it.
"""
from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import hold_load

NS = 1_000_000_000
DASH = "\N{EN DASH}"


def outcome(case: ET.Element) -> str:
    for child in case:
        if child.tag in ("failure", "error"):
            return "failed" if child.tag == "failure" else "error"
        if child.tag == "skipped":
            return "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
    return "passed"


def cases(xml: Path) -> list[dict]:
    """The tests of one group in the order they ran, with their windows in unix ns."""
    rows = []
    for suite in ET.parse(xml).getroot().iter("testsuite"):
        stamp = datetime.fromisoformat(suite.get("timestamp"))
        if stamp.tzinfo is None:
            stamp = stamp.replace(tzinfo=UTC)
        t = int(stamp.timestamp() * NS)
        for case in suite.iter("testcase"):
            dur = int(float(case.get("time", "0")) * NS)
            rows.append({"group": xml.stem, "module": case.get("classname").split(".")[-1],
                         "name": case.get("name"), "outcome": outcome(case),
                         "start_ns": t, "end_ns": t + dur})
            t += dur
    return rows


def load_range(samples: list[dict], start_ns: int, end_ns: int) -> str:
    inside = [s["load1"] for s in samples if start_ns <= s["unix_ns"] <= end_ns]
    if not inside:
        return DASH
    return f"{min(inside):.1f}{DASH}{max(inside):.1f}"


def table(run: Path) -> str:
    samples = [json.loads(line) for line in (run / "load.jsonl").read_text().splitlines()]
    rows = [r for xml in sorted(run.glob("g*.xml")) for r in cases(xml)]
    if not rows:
        raise SystemExit(f"report: {run}: no g*.xml with test cases")
    load = hold_load.summary(samples)
    counts = {o: sum(1 for r in rows if r["outcome"] == o)
              for o in ("passed", "xfailed", "skipped", "failed", "error")}
    first = min(r["start_ns"] for r in rows)
    last = max(r["end_ns"] for r in rows)
    lines = [
        f"{len(rows)} tests in {len(list(run.glob('g*.xml')))} groups, "
        + ", ".join(f"{n} {o}" for o, n in counts.items() if n)
        + f"; {(last - first) / NS / 60:.0f} min of wall time; host 1-minute load after the "
        f"first minute: median {load['load1_median']:.1f}, "
        f"{load['load1_min']:.1f}{DASH}{load['load1_max']:.1f}, busy loops up to "
        f"{load['loops_max']}.",
        "",
        "| test | group | result | wall s | host load while it ran |",
        "|---|---|---|---:|---|",
    ]
    for r in sorted(rows, key=lambda r: (r["module"], r["name"])):
        lines.append(f"| `{r['module']}::{r['name']}` | {r['group']} | {r['outcome']} | "
                     f"{(r['end_ns'] - r['start_ns']) / NS:.0f} | "
                     f"{load_range(samples, r['start_ns'], r['end_ns'])} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="the --out directory of suite.py")
    args = ap.parse_args(argv)
    if not (args.run / "load.jsonl").is_file():
        ap.error(f"run: {args.run}: no load.jsonl (was it run under hold_load.py?)")
    sys.stdout.write(table(args.run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
