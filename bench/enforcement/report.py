#!/usr/bin/env python3
"""Tabulates the overrun experiment's records (bench/enforcement/data/overrun-*.json,
written by tests/vm/experiment_overrun.py): per boot and run, how long the reserved busy
task ran in one go (its bursts) with the budget enforced at the tick and by HRTICK_DL.

    python3 bench/enforcement/report.py [RECORD.json ...]   # default: every record
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "seeds"))
from shapes import burst_pct, share_over

DATA = Path(__file__).resolve().parent / "data"
MS = 1e6
TESTBEDS = {"tcg": "plain TCG, QEMU 7.2 (Debian 12)",
            "tcg-qemu10": "plain TCG, QEMU 10 (the seeds' QEMU)",
            "icount": "QEMU 10 `-icount shift=3,sleep=off` (the seeds' testbed)"}


def table(rec: dict) -> str:
    q = rec["params"]["runtime_ns"]
    rows = [f"{rec['kernel']}, {TESTBEDS.get(rec['testbed'], rec['testbed'])}, 2 vCPUs; "
            f"commit `{rec['commit']}`, {rec['date']}, host 1-minute load "
            f"{rec['host_load']:.1f} at the end; Q = {q / MS:g} ms, T = "
            f"{rec['params']['period_ns'] / MS:g} ms, {rec['params']['seconds']} s per run.",
            "",
            "| enforcement | run | bursts | mean (ms) | p50 | p90 | p99 | max "
            "| longer than Q + 1 ms |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for enf, name in (("keep", "at the tick"), ("hrtick", "HRTICK_DL")):
        for k, b in enumerate(rec["runs"][enf]):
            long = share_over(b, q + MS)
            rows.append(f"| {name} | {k + 1} | {len(b)} | {sum(b) / len(b) / MS:.2f} | "
                        f"{burst_pct(b, .5) / MS:.2f} | {burst_pct(b, .9) / MS:.2f} | "
                        f"{burst_pct(b, .99) / MS:.2f} | {max(b) / MS:.2f} | "
                        f"{round(long * len(b))} ({100 * long:.1f} %) |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="*", type=Path, help="records (default: all in data/)")
    args = ap.parse_args(argv)
    paths = args.records or sorted(DATA.glob("overrun-*.json"))
    if not paths:
        ap.error(f"no records given and none in {DATA}")
    for p in paths:
        try:
            rec = json.loads(p.read_text())
            text = table(rec)
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"report: {p}: not an overrun record ({type(e).__name__}: {e})",
                  file=sys.stderr)
            return 2
        print(f"{p.name}:\n\n{text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
