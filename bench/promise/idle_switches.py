#!/usr/bin/env python3
"""Why the host's closed-loop test keeps the CPUs busy
(tests/integration/test_promise_host.py, with irqres.trace.spinners as `irqres record
--busy-idle`): records the free timer job with and without a SCHED_IDLE spinner on each
CPU, alternating, and prints per recording the
sched_switch events into and out of the idle task on each CPU (irqres.measure.idle) and
how many of the job's activations the analysis kept and dropped as inconsistent.

    python3 bench/promise/idle_switches.py --rounds 3          # root
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from irqres.measure.activations import activations
from irqres.measure.idle import idle_switches
from irqres.trace import read_trace

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "integration"))
from test_promise_host import record_job, unique_comm


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3,
                    help="pairs of recordings, without and with the spinners")
    ap.add_argument("--period-us", type=int, default=5000, help="the job's period")
    ap.add_argument("--work-us", type=int, default=1000, help="the job's CPU time per job")
    ap.add_argument("--count", type=int, default=400, help="jobs per recording")
    args = ap.parse_args()
    if args.rounds < 1 or args.count < 1:
        ap.error("--rounds and --count must be at least 1")
    if not 0 < args.work_us < args.period_us:
        ap.error(f"--work-us {args.work_us} must be above 0 and below --period-us "
                 f"{args.period_us}")
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(args.rounds):
            for busy in (False, True):
                comm = unique_comm("tjob")
                trace, _ = record_job(Path(tmp) / f"r{rnd}{busy}", comm, args.period_us,
                                      args.work_us, args.count, busy=busy)
                tr = read_trace(trace)
                (act,) = activations(tr, None, [comm])
                print(f"round {rnd} {'spinners' if busy else 'idle    '}: jobs kept "
                      f"{act.count} of {args.count} (dropped as inconsistent "
                      f"{act.dropped_inconsistent}); switches into/out of idle per CPU "
                      f"{idle_switches(tr)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
