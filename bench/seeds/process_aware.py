"""The process-aware experiment of Lee et al.: a high-priority job's execution time
under a UDP server's rising load, kernel default vs coupled.

On the NIC's CPU of the guest: a high-priority periodic job (SCHED_FIFO 40, below the
kernel's IRQ-thread priority 50), a low-priority one (SCHED_FIFO 5) and the UDP server
they surround (SCHED_FIFO 10, the process the NIC thread serves); the sender in the
namespace ``snd`` sends to the server's port at each of ``--rates`` datagrams/s, paced in
guest time. Each job measures its execution time (release to completion) and its
deadline misses; the server counts what it received. ``default``: the NIC thread at the
kernel's SCHED_FIFO 50. ``coupled``: irqresd applies a profile whose NIC target has
``serves: {port: P}``, and the thread runs at the server's priority
(docs/process-aware.md). Raw data: bench/seeds/data/process-aware-*.json; ``report.py``
makes the table.

    python3 bench/seeds/process_aware.py [--runs 3] [--rates 0,150,300,450,600,900]
                                         [--modes default,coupled]
"""

from __future__ import annotations

import argparse
import statistics
import sys

import testbed

MS = 1_000_000


def parse_ints(text: str, what: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",")]
    except ValueError:
        raise SystemExit(f"--{what} {text!r}: not a comma-separated list of integers") from None
    if not out or min(out) < 0:
        raise SystemExit(f"--{what} {text!r}: needs integers >= 0")
    return out


def guest_params(runs: int, seconds: int, rates: list[int], modes: list[str],
                 size: int = 1000) -> dict:
    """The guest scenario's parameters: the jobs of the experiment, the server at 10."""
    return {"runs": runs, "seconds": seconds, "rates": rates, "modes": modes, "size": size,
            "high": {"prio": 40, "period_ns": 20 * MS, "work_ns": 4 * MS},
            "low": {"prio": 5, "period_ns": 50 * MS, "work_ns": 5 * MS},
            "server_prio": 10, "port": 5001}


def add_options(ap: argparse.ArgumentParser, seconds: int, rates: str) -> None:
    """The testbed's options and the process-aware experiments' own."""
    testbed.add_options(ap)
    ap.add_argument("--seconds", type=int, default=seconds, help="guest seconds per rate")
    ap.add_argument("--rates", default=rates,
                    help="the sender's (mean) datagrams/s, rising (0: no sender)")
    ap.add_argument("--modes", default="default,coupled",
                    help="default (NIC thread at SCHED_FIFO 50), coupled (serves: the port), "
                         "unaccounted (coupled, irqresd's live accounting off)")
    ap.add_argument("--size", type=int, default=1000, help="datagram payload bytes")


def modes_of(args: argparse.Namespace) -> list[str]:
    modes = args.modes.split(",")
    if not modes or not set(modes) <= {"default", "coupled", "unaccounted"}:
        raise SystemExit(f"--modes {args.modes!r}: default, coupled and/or unaccounted")
    return modes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_options(ap, 2, "0,150,300,450,600,900")
    args = ap.parse_args()
    params = guest_params(args.runs, args.seconds, parse_ints(args.rates, "rates"),
                          modes_of(args), args.size)
    rec = testbed.run_guest(args, "seeds_process_aware", "process-aware", params)
    for r in rec["result"]["rows"]:
        hi = r["high"]["exec_ns"]
        print(f"run {r['run']} {r['mode']:11s} {r['rate']:5d}/s: high mean "
              f"{statistics.mean(hi) / MS:.2f} ms max {max(hi) / MS:.2f} ms "
              f"({r['high']['out']}), low {r['low']['out']}, server {r['server']}")
    print(f"wall {rec['wall_s']} s, testbed {rec['testbed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
