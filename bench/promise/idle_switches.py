#!/usr/bin/env python3
"""Why the host's closed-loop test keeps the CPUs busy
(tests/integration/test_promise_host.py, `busy_cpus`): records the free timer job with
and without a SCHED_IDLE spinner on each CPU, alternating, and prints per recording the
sched_switch events into and out of the idle task on each CPU (`trace-cmd report`; its
`-F` filter crashed on these files) and how many of the job's activations `irqres
analyze` kept.

    python3 bench/promise/idle_switches.py --rounds 3          # root
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "integration"))
from test_promise_host import record_job, unique_comm

SWITCH = re.compile(r"\[(\d+)\].*sched_switch:\s+(\S+) \[\d+\] \S+ ==> (\S+) \[")


def idle_switches(trace: Path) -> dict[str, list[int]]:
    """Per CPU: [switches into idle, switches out of idle]."""
    text = subprocess.run(["trace-cmd", "report", str(trace)],
                          capture_output=True, text=True, check=True).stdout
    into, out = Counter(), Counter()
    for m in SWITCH.finditer(text):
        cpu, prev, nxt = m.groups()
        into[cpu] += nxt.endswith(":0")
        out[cpu] += prev.endswith(":0")
    return {f"cpu{int(c)}": [into[c], out[c]] for c in sorted(into | out)}


def jobs_kept(trace: Path, comm: str, period_us: int) -> tuple[int, int]:
    res = subprocess.run([sys.executable, "-m", "irqres", "analyze", str(trace), "--task",
                          comm, "--deadline", f"{period_us}us", "--json"],
                         capture_output=True, text=True, check=True)
    (th,) = json.loads(res.stdout)["threads"]
    st = th["stats"]
    return st["activations"], st.get("dropped_inconsistent", 0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--period-us", type=int, default=5000)
    ap.add_argument("--work-us", type=int, default=1000)
    ap.add_argument("--count", type=int, default=400)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(args.rounds):
            for busy in (False, True):
                comm = unique_comm("tjob")
                trace, _ = record_job(Path(tmp) / f"r{rnd}{busy}", comm, args.period_us,
                                      args.work_us, args.count, busy=busy)
                kept, dropped = jobs_kept(trace, comm, args.period_us)
                print(f"round {rnd} {'spinners' if busy else 'idle    '}: jobs kept {kept} "
                      f"of {args.count} (dropped as inconsistent {dropped}); switches into/"
                      f"out of idle per CPU {idle_switches(trace)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
