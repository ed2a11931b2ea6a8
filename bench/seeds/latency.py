"""Experiment 6: does the reservation keep a real-time task's latency under a NIC flood?

cyclictest (SCHED_FIFO 40, 1 ms interval, histogram in 1 µs buckets) on the NIC's CPU of
the PREEMPT_RT guest while a sender on the other vCPU floods eth0 from inside the guest;
the NIC thread irq/11-eth0 at the kernel's SCHED_FIFO 50 (above cyclictest) vs reserved
by irqresd (SCHED_DEADLINE 2 ms / 10 ms). Runs alternate FIFO/reserved ``--runs`` times in
one boot. Raw data: bench/seeds/data/latency-*.json; ``report.py`` makes the table.

    python3 bench/seeds/latency.py [--runs 3] [--seconds 10] [--testbed icount]
                                   [--eth1-cpus 0-1]

Each measurement records the CPU time that eth0's and eth1's IRQ threads and ksoftirqd of
the NIC's CPU had over the flood: who did the NIC's work. ``--eth1-cpus`` is a control:
eth1's IRQ thread (the sender's NIC, SCHED_FIFO 90) allowed on those CPUs before each
measurement, the placement a restore once left it in.
"""

from __future__ import annotations

import argparse
import re
import sys

import testbed

MS = 1_000_000


def flood_options(ap: argparse.ArgumentParser, seconds: int) -> None:
    """The testbed's options and the measurement's and the flood's (also latency_hrtick.py)."""
    testbed.add_options(ap)
    ap.add_argument("--seconds", type=int, default=seconds,
                    help="guest seconds per measurement")
    ap.add_argument("--flood-period-us", type=int, default=100,
                    help="the sender's period (guest time)")
    ap.add_argument("--size", type=int, default=1400, help="datagram size in bytes")


def _ms(ns: int | None) -> str:
    return "?" if ns is None else f"{ns / MS:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    flood_options(ap, 10)
    ap.add_argument("--runtime-ms", type=float, default=2.0, help="reserved Q")
    ap.add_argument("--period-ms", type=float, default=10.0, help="reserved T")
    ap.add_argument("--eth1-cpus", default=None, metavar="CPUS",
                    help="a control: before each measurement, allow the IRQ thread of eth1 "
                         "(the sender's NIC, SCHED_FIFO 90) on these CPUs (taskset list, "
                         "e.g. 0-1), as a restore that left it on the NIC's CPU did")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if args.eth1_cpus is not None and not re.fullmatch(r"\d+(-\d+)?(,\d+(-\d+)?)*",
                                                       args.eth1_cpus):
        ap.error(f"--eth1-cpus {args.eth1_cpus!r}: not a CPU list such as 0-1 or 0,1")
    params = {"runs": args.runs, "seconds": args.seconds,
              "flood_period_ns": args.flood_period_us * 1000, "size": args.size,
              "reserved": [int(args.runtime_ms * MS), int(args.period_ms * MS)],
              "interval_us": 1000, "priority": 40, "hist_us": 100_000,
              "eth1_cpus": args.eth1_cpus}
    rec = testbed.run_guest(args, "seeds_latency", "latency", params)
    for r in rec["result"]["results"]:
        h = r["hist"]
        print(f"run {r['run']} {r['label']:8s} max {h['max_us']} avg {h['avg_us']} "
              f"cycles {h['cycles']} overflows {h['overflows']} | {r['sender']} | "
              f"{r['receiver']}")
        w = r["work_ns"]
        print(f"      CPU time over the flood (ms): irq eth0 {_ms(w['nic_thread'])}, irq eth1 "
              f"{_ms(w['eth1_thread'])} ({w['eth1_migrations']} migrations), ksoftirqd "
              f"{_ms(w['ksoftirqd'])}; interrupts eth0 {w.get('eth0_irqs')}, eth1 "
              f"{w.get('eth1_irqs')}")
        print("      ran most: " + ", ".join(f"{t['comm']} (CPU {t['cpu']}) {_ms(t['ns'])}"
                                          for t in w.get("top", [])[:5]))
    print(f"wall {rec['wall_s']} s, testbed {rec['testbed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
