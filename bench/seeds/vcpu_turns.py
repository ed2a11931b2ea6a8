#!/usr/bin/env python3
"""Do the testbed's vCPUs take turns? A busy task reading the guest's clock in a loop is
pinned to CPU 1 alone, then one to each CPU at once (tests/vm/guest/seeds.py
`scenario_vcpu_turns`); every stretch of more than --gap-us between two of its reads is a
pause: guest time that passed while the task, or its whole vCPU, did not run. Under
`-icount` QEMU runs every vCPU on one host thread, one after the other, and guest time
follows the instructions executed: while one vCPU runs, the other's clock moves on
without it. Under plain TCG each vCPU has its own host thread (the control). irqresd is not
started: its partition would keep the busy tasks off the NIC's CPU.

    python3 bench/seeds/vcpu_turns.py --testbed icount --runs 3 --kernel 6.1
    python3 bench/seeds/vcpu_turns.py --testbed tcg --runs 3 --kernel 6.1

Each prints, per case and CPU, the share of guest time in pauses and the pauses' count
and p50 / p99 / max (µs); the record goes to bench/seeds/data/ as the other experiments'.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import testbed


def pauses(bursts: list[list[int]]) -> tuple[np.ndarray, int]:
    """The pauses (ns) between a busy task's bursts, and the span it ran over."""
    b = np.asarray(bursts, dtype=np.int64).reshape(-1, 2)
    return b[1:, 0] - b[:-1, 1], int(b[-1, 1] - b[0, 0])


def summary(case: dict) -> dict:
    gaps, span = pauses(case["bursts"])
    us = gaps / 1_000
    pct = (np.percentile(us, [50, 99]).round(1).tolist() if us.size else [0.0, 0.0])
    return {"run": case["run"], "busy": case["busy"], "cpu": case["cpu"],
            "span_ms": round(span / 1e6, 1), "paused_share": round(int(gaps.sum()) / span, 4),
            "pauses": int(gaps.size), "p50_us": pct[0], "p99_us": pct[1],
            "max_us": round(float(us.max()), 1) if us.size else 0.0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    testbed.add_options(ap)
    ap.add_argument("--seconds", type=float, default=3.0, help="each busy task's run")
    ap.add_argument("--gap-us", type=int, default=50, help="a longer stretch is a pause")
    ap.add_argument("--heartbeat-us", type=int, default=0,
                    help="a task on CPU 0 woken every that many µs meanwhile (SCHED_FIFO "
                         "99): does a near timer end the turns? (default 0: none)")
    args = ap.parse_args()
    if args.runs < 3:
        ap.error("--runs must be at least 3")
    if args.heartbeat_us < 0:
        ap.error(f"--heartbeat-us: at least 0, not {args.heartbeat_us}")
    tag = f"vcpu-turns-hb{args.heartbeat_us}" if args.heartbeat_us else "vcpu-turns"
    rec = testbed.run_guest(args, "vcpu_turns", tag,
                            {"seconds": args.seconds, "gap_ns": args.gap_us * 1_000,
                             "runs": args.runs, "heartbeat_ns": args.heartbeat_us * 1_000},
                            timeout_s=3600, irqresd=False)
    print(f"{rec['testbed']}, {rec['kernel']}, commit {rec['commit']}, {rec['date']}")
    print("run | busy CPUs | CPU | guest ms | paused | pauses | p50 / p99 / max µs")
    for case in rec["result"]["cases"]:
        s = summary(case)
        print(f"{s['run']} | {','.join(map(str, s['busy']))} | {s['cpu']} | {s['span_ms']} | "
              f"{s['paused_share']:.1%} | {s['pauses']} | {s['p50_us']} / {s['p99_us']} / "
              f"{s['max_us']}" + (f" | heartbeat: {case['heartbeat']}"
                                    if case.get("heartbeat") else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
