"""Experiment 6 with the budget enforced by HRTICK_DL: does the reservation bound the
real-time task's lateness to its budget rather than to the scheduler tick?

As bench/seeds/latency.py (cyclictest, SCHED_FIFO 40, 1 ms interval, on the NIC's CPU of
the PREEMPT_RT guest while a sender floods eth0 from inside the guest), in one boot, per
run: the task without a flood (its own worst case, the baseline), the NIC thread at the
kernel's SCHED_FIFO 50, and for each reservation (Q, T) the NIC thread reserved through a
profile with ``enforcement: keep`` (budget enforced at the tick, HZ=250) and with
``enforcement: hrtick`` (irqresd switches HRTICK_DL on). Raw data:
bench/seeds/data/latency-hrtick-*.json; ``report.py`` makes the table.

``--napi N/D``: over the NIC's whole receive path instead (eth0 with threaded NAPI, the
guest's seeds_path.py): its IRQ thread and NAPI kthread at SCHED_FIFO 50 on the NIC's CPU,
or both reserved with Q split N/D to the kthread. Raw data:
bench/seeds/data/latency-hrtick-napi-*.json.

    python3 bench/seeds/latency_hrtick.py [--runs 3] [--seconds 5] [--reserve 1:5,2:10]
                                          [--kernel 6.1] [--napi 3/4]
"""

from __future__ import annotations

import argparse
import sys

import latency
import testbed
from player_dl_napi import parse_split

MS = 1_000_000


def parse_reserve(text: str) -> list[list[int]]:
    """``Q:T,Q:T:D`` in ms -> [[Q_ns, T_ns], [Q_ns, T_ns, D_ns], ...] (D: a constrained
    deadline, Q <= D <= T)."""
    out = []
    for item in text.split(","):
        try:
            vals = [int(float(x) * MS) for x in item.split(":")]
        except ValueError:
            raise SystemExit(f"--reserve {item!r}: not Q:T or Q:T:D in milliseconds") \
                from None
        if len(vals) not in (2, 3):
            raise SystemExit(f"--reserve {item!r}: not Q:T or Q:T:D in milliseconds")
        q, t = vals[:2]
        d = vals[2] if len(vals) == 3 else t
        if not 0 < q <= d <= t:
            raise SystemExit(f"--reserve {item!r}: needs 0 < Q <= D <= T")
        out.append(vals)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    latency.flood_options(ap, 5)
    ap.add_argument("--reserve", default="1:5,2:10",
                    help="the NIC thread's reservations, Q:T in ms (Q:T:D: with a deadline "
                         "D shorter than T), comma-separated")
    ap.add_argument("--napi", metavar="N/D",
                    help="the whole receive path (threaded NAPI): IRQ thread and NAPI "
                         "kthread, N/D of each Q to the kthread")
    ap.add_argument("--trace", type=int, default=0, metavar="KB",
                    help="also trace the NIC's CPU in every row but FIFO 50's (timers, "
                         "wake-ups, switches, interrupts, soft IRQs) into a ring buffer of "
                         "KB KiB; latency_trace.py says what delayed the task")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    params = {"runs": args.runs, "seconds": args.seconds,
              "flood_period_ns": args.flood_period_us * 1000, "size": args.size,
              "reserved": parse_reserve(args.reserve),
              "interval_us": 1000, "priority": 40, "hist_us": 100_000}
    if args.trace:
        params["trace_kb"] = args.trace
    if args.napi and any(len(r) == 3 for r in params["reserved"]):
        ap.error("--napi takes Q:T reservations only (no deadline D)")
    if args.napi:
        params["napi_split"] = parse_split(args.napi, "--napi")
        rec = testbed.run_guest(args, "seeds_latency_enforcement_napi", "latency-hrtick-napi",
                                params)
    else:
        rec = testbed.run_guest(args, "seeds_latency_enforcement", "latency-hrtick", params)
    for r in rec["result"]["results"]:
        h = r["hist"]
        print(f"run {r['run']} {r['label']:18s} max {h['max_us']} avg {h['avg_us']} "
              f"cycles {h['cycles']} overflows {h['overflows']}")
    print(f"wall {rec['wall_s']} s, testbed {rec['testbed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
