"""Experiment 3: throughput vs latency with both the player and the NIC thread reserved.

The player of experiment 2 (40 ms period, fixed CPU work per frame) and the NIC thread
irq/11-eth0 both get SCHED_DEADLINE reservations through irqres (one profile with an
`interface: eth0` target and a `task: comm: seedplayer` target, applied with `irqres
apply` once the player runs in the NIC's partition), while a sender on the other vCPU
floods eth0. Five rows Test1..Test5 move bandwidth from the player to the NIC: the
network's throughput should rise with the NIC's Q/T while the player misses no frame.

    python3 bench/seeds/player_dl.py [--runs 3]
"""

from __future__ import annotations

import argparse
import sys

import testbed

MS = 1_000_000
# (player Q, NIC Q) in ms; player T = 40 ms, NIC T = 100 ms. The end rows are the
# paper's Test1 (29,40)/(9,100) and Test5 (20,40)/(18,100); the middle rows are evenly
# spaced between them.
TESTS = [(29, 9), (27, 11), (25, 13), (22, 16), (20, 18)]


def add_options(ap: argparse.ArgumentParser) -> None:
    """The testbed's options and the experiment's (also player_dl_napi.py's)."""
    testbed.add_options(ap)
    ap.add_argument("--seconds", type=int, default=4, help="guest seconds per measurement")
    ap.add_argument("--work-ms", type=float, default=16.0,
                    help="CPU work per frame (fits the smallest player budget, 20 ms)")
    ap.add_argument("--flood-period-us", type=int, default=100)
    ap.add_argument("--size", type=int, default=1400)


def params_of(args) -> dict:
    """The guest scenario's parameters from the options of ``add_options``."""
    return {"runs": args.runs, "seconds": args.seconds, "period_ns": 40 * MS,
            "work_ns": int(args.work_ms * MS), "nic_period_ns": 100 * MS,
            "flood_period_ns": args.flood_period_us * 1000, "size": args.size,
            "tests": [[p * MS, n * MS] for p, n in TESTS]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_options(ap)
    args = ap.parse_args()
    rec = testbed.run_guest(args, "seeds_player_dl", "player-dl", params_of(args))
    for r in rec["result"]["rows"]:
        print(f"run {r['run']} Test{r['test']}: player {r['player_sched']}: {r['player']}, "
              f"NIC {r['mbit_s']:.1f} Mbit/s")
    print(f"wall {rec['wall_s']} s, testbed {rec['testbed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
