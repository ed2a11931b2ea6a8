"""Experiment 5: the adaptive budget (`irqres tune`) against a fixed one, under a
fluctuating network load, with a periodic player on the NIC's CPU.

The reference (Jung et al.'s threshold controller for bottom halves) kept the time that
interrupt work takes per 1 ms near its average (a 200..850 µs range became 450..550 µs)
and a 25 fps player's mean inter-frame time fell from 96.2 ms to 43.2 ms. Here the NIC
thread irq/11-eth0 is reserved with a 1 ms period (the reference's 1 ms interval), and
each configuration runs the same load: ``seedload vsend``, phases of random length at
randomly drawn packet rates, the draws fixed by the run's seed. Configurations:

``fifo50``      the kernel's default, no reservation (the reference's "without control")
``fixed:Q``     a fixed budget Q µs every 1 ms
``tune:G``      `irqres tune` moving the budget between the clamps, gain G

The NIC thread's CPU time per 1 ms window comes from a sched_switch trace of its CPU;
the player (40 ms period, fixed CPU work per frame, SCHED_FIFO below the reservation)
logs release, start and end of every frame.

    python3 bench/seeds/adaptive.py [--runs 3] [--seconds 5] [--nice 19]
    python3 bench/seeds/adaptive.py --reanalyze bench/seeds/data/adaptive-....json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import testbed

MS = 1_000_000
US = 1000
TUNE = {"start_ns": 500 * US, "sample_ns": 20 * MS, "window": 100,
        "default_job_ns": 50 * US, "min_ns": 200 * US, "max_ns": 800 * US,
        "hysteresis_ns": 20 * US}


def parse_configs(text: str) -> list[dict]:
    """``fifo50,fixed:800,tune:0.25`` -> the guest's configuration records."""
    out = []
    for item in text.split(","):
        kind, _, arg = item.strip().partition(":")
        try:
            if kind == "fifo50" and not arg:
                out.append({"name": "fifo50", "kind": "fifo50"})
            elif kind == "fixed":
                q = int(arg)
                if not 0 < q < 1000:
                    raise ValueError
                out.append({"name": f"fixed{q}", "kind": "fixed", "q_ns": q * US})
            elif kind == "tune":
                g = float(arg)
                if not 0 < g <= 1:
                    raise ValueError
                out.append({"name": f"tune{arg}", "kind": "tune", "tune": {**TUNE, "gain": g}})
            else:
                raise ValueError
        except ValueError:
            raise SystemExit(f"--configs: {item!r} is not fifo50, fixed:Q (µs, 1..999) "
                             "or tune:G (gain, 0 < G <= 1)") from None
    return out


def guest_params(runs: int, seconds: int, configs: str, *, work_ms: float = 14.0,
                 size: int = 1400, periods_us: str = "500,250,167,125",
                 phase_ms: str = "20,120", hrtick: bool = True,
                 tune_priority: int = 95) -> dict:
    """The guest scenario's parameters (also the VM suite's short run)."""
    try:
        pmin, pmax = (int(x) * MS for x in phase_ms.split(","))
        periods = [int(x) * US for x in periods_us.split(",")]
    except ValueError:
        raise SystemExit(f"--phase-ms {phase_ms!r} / --periods-us {periods_us!r}: "
                         "integers separated by commas (two for --phase-ms)") from None
    return {"runs": runs, "seconds": seconds, "configs": parse_configs(configs),
            "period_ns": 40 * MS, "work_ns": int(work_ms * MS), "priority": 40,
            "nic_period_ns": MS, "size": size, "phase_ns": [pmin, pmax],
            "load_periods_ns": periods, "hrtick": hrtick, "tune_priority": tune_priority}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    testbed.add_options(ap)
    ap.add_argument("--seconds", type=int, default=5, help="guest seconds per measurement")
    ap.add_argument("--configs", default="fifo50,fixed:800,fixed:400,tune:0.25,tune:0.05",
                    help="comma-separated: fifo50, fixed:Q (µs per 1 ms), tune:G (gain)")
    ap.add_argument("--work-ms", type=float, default=14.0, help="player CPU work per frame")
    ap.add_argument("--size", type=int, default=1400, help="datagram size in bytes")
    ap.add_argument("--periods-us", default="500,250,167,125",
                    help="the load's packet periods, one drawn per phase")
    ap.add_argument("--phase-ms", default="20,120", help="phase length range MIN,MAX")
    ap.add_argument("--tick", action="store_true",
                    help="leave SCHED_DEADLINE budgets enforced at the 4 ms tick "
                         "(default: HRTICK_DL on, a timer at the end of each budget)")
    ap.add_argument("--tune-priority", type=int, default=95,
                    help="SCHED_FIFO priority of `irqres tune` and irqresd on the sender's "
                         "vCPU (the sender runs at 90)")
    ap.add_argument("--reanalyze", metavar="JSON",
                    help="no boot: analyse again the guest output a raw data file names")
    args = ap.parse_args()
    if args.reanalyze:
        rec = json.loads(Path(args.reanalyze).read_text())
    else:
        if args.runs < 1:
            ap.error("--runs must be at least 1")
        params = guest_params(args.runs, args.seconds, args.configs, work_ms=args.work_ms,
                              size=args.size, periods_us=args.periods_us,
                              phase_ms=args.phase_ms, hrtick=not args.tick,
                              tune_priority=args.tune_priority)
        rec = testbed.run_guest(args, "seeds_adaptive", "adaptive", params)
    import adaptive_analysis
    adaptive_analysis.analyze(rec)
    Path(rec["path"]).write_text(json.dumps(rec, indent=1, sort_keys=True))
    for r in rec["result"]["rows"]:
        a = r.get("analysis", {})
        print(f"run {r['run']} {r['config']}: {r['player']}; {a.get('summary', a)}")
    print(f"wall {rec['wall_s']} s, testbed {rec['testbed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
