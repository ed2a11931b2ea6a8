"""Experiment 2: throughput vs latency with fixed priorities.

A periodic player (40 ms period, a fixed amount of CPU work per frame, counting its own
deadline misses) on the NIC's CPU of the guest while a sender on the other vCPU floods
eth0; the player at SCHED_FIFO 60 (above the NIC thread's 50) and at SCHED_FIFO 40
(below). Throughput is what the NIC thread took off the ring (eth0's rx_bytes over the
flood, guest time); the paper's shape: raising the player costs the network its
throughput, lowering it costs the player its frames.

    python3 bench/seeds/player_fifo.py [--runs 3]

``--regimes``: the experiment twice in one boot, before irqres has done anything (irqresd
not started) and after the apply/restore cycles the VM suite's seeds boot makes before
it (irqresd started with the profile, the NIC thread reserved (2 ms, 10 ms) and
restored, restored once more), with the scheduler's fingerprint taken before the first
apply and compared after every restore, and where the network path ran in every row;
raw data bench/seeds/data/player-fifo-regimes-*.json.

    python3 bench/seeds/player_fifo.py --regimes [--runs 1] [--kernel 6.1]
"""

from __future__ import annotations

import argparse
import sys

import testbed

MS = 1_000_000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    testbed.add_options(ap)
    ap.add_argument("--seconds", type=int, default=4, help="guest seconds per measurement")
    ap.add_argument("--work-ms", type=float, default=20.0, help="CPU work per frame")
    ap.add_argument("--flood-period-us", type=int, default=100)
    ap.add_argument("--size", type=int, default=1400)
    ap.add_argument("--regimes", action="store_true",
                    help="before any irqres action and after apply/restore cycles, one boot")
    ap.add_argument("--suite-order", action="store_true",
                    help="with --regimes: two more phases, the VM suite's order of events "
                         "reproduced, then the sender's IRQ thread pinned to its CPU")
    ap.add_argument("--experiments", action="store_true",
                    help="with --regimes: two more phases, after the VM suite's latency and "
                         "tools experiments, then with the tracing they leave reset")
    ap.add_argument("--at-boot", action="store_true",
                    help="with --regimes: irqresd applies the profile at boot, as in the VM "
                         "suite (no phase before any irqres action then)")
    args = ap.parse_args()
    params = {"runs": args.runs, "seconds": args.seconds, "period_ns": 40 * MS,
              "work_ns": int(args.work_ms * MS),
              "flood_period_ns": args.flood_period_us * 1000, "size": args.size}
    if args.regimes:
        params["cycles"] = [[2 * MS, 10 * MS]]  # the latency experiment's reservation
        params["suite_order"] = args.suite_order
        if args.experiments:  # the VM suite's seeds boot's (tests/vm/test_seeds.py)
            params["experiments"] = {
                "latency": {"runs": 1, "seconds": 2, "flood_period_ns": 100_000,
                            "size": 1400, "reserved": [2 * MS, 10 * MS],
                            "interval_us": 1000, "priority": 40, "hist_us": 100_000},
                "tools": {"runs": 1, "rows": [[10 * MS, 100], [100 * MS, 20]], "size": 256}}
        params["at_boot"] = args.at_boot
        rec = testbed.run_guest(args, "seeds_player_fifo_regimes", "player-fifo-regimes",
                                params, irqresd=args.at_boot)
        for phase, diff in rec["result"]["fingerprint_diffs"].items():
            print(f"fingerprint {phase}: {diff or 'as before any apply'}")
    else:
        rec = testbed.run_guest(args, "seeds_player_fifo", "player-fifo", params)
    for r in rec["result"]["rows"]:
        print(f"{r.get('phase', '')} run {r['run']} player {r['order']:5s} NIC: {r['player']}, "
              f"{r['mbit_s']:.1f} Mbit/s, {r['receiver']}, rx {r['rx']}")
    print(f"wall {rec['wall_s']} s, testbed {rec['testbed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
