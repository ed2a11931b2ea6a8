"""Experiment 1: the statistical tools (inter-arrival and execution time of the NIC thread).

A sender in the guest's second network namespace sends datagrams at fixed periods of
1, 5, 10, 50, 100 ms (rows T1..T100) to eth0. For each row: the inter-packet times at
the sender (its own CLOCK_MONOTONIC after each sendto), at the receiver (the kernel's
receive timestamps, SO_TIMESTAMPNS), and the NIC thread's inter-arrival and execution
times from ``irqres analyze`` on a trace-cmd trace of the same seconds. Each row keeps
its per-datagram series (the gaps at the sender, at the receiver, between the thread's
activations that woke the receiver and between all of them) and its datagram counts;
the goal is judged per run on their spread and distribution (tools_spread.py): no datagram
lost or merged, the thread's std at most the receiver's, and the thread's inter-arrival
distribution within 1 % of the period (Wasserstein-1) of the sender's.

    python3 bench/seeds/tools.py [--runs 3]

Raw data: bench/seeds/data/tools-*.json (with the analysed statistics added).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import testbed
from stats import series_stats

MS = 1_000_000
# (period, datagrams): a few seconds of guest time per row; idle time costs little
# under icount with sleep=off
ROWS = [(1 * MS, 2000), (5 * MS, 600), (10 * MS, 400), (50 * MS, 120), (100 * MS, 60)]
NIC = "irq/11-eth0"


def times(path: Path) -> list[int]:
    return [int(x.split()[0]) for x in path.read_text().split("\n") if x.strip()]


def diffs(path: Path) -> list[int]:
    return [b - a for a, b in itertools.pairwise(times(path))]


def analyze(trace: Path) -> dict:
    p = subprocess.run([sys.executable, "-c", "from irqres.cli import main; main()",
                        "analyze", str(trace), "--json", "--thread", NIC],
                       capture_output=True, text=True, check=False,
                       env=dict(os.environ, PYTHONPATH=str(testbed.REPO / "analysis")))
    if p.returncode != 0:
        return {"error": p.stderr.strip()[-500:]}
    threads = [t for t in json.loads(p.stdout)["threads"] if t["comm"] == NIC]
    if len(threads) != 1:
        return {"error": f"{NIC} not found once in {trace.name}"}
    s = threads[0]["stats"]
    return {"interarrival": s["interarrival"], "exec": s["exec"],
            "irq_interarrival": s["irq_interarrival"], "activations": s["activations"],
            "merged_irqs": s["merged_irqs"]}


def receiver_activations(trace: Path, receiver: str = "seedload") -> dict:
    """Inter-arrival and execution time of the NIC thread's activations that woke the
    receiving process: the datagrams' own activations. The e1000 driver's watchdog
    raises an interrupt of its own every 2 s (it writes ICS to make the NIC refill its
    ring), so at long periods the thread has activations no datagram caused."""
    sys.path.insert(0, str(testbed.REPO / "analysis"))
    from irqres.trace.reader import read_trace

    return datagram_activations(read_trace(trace), receiver, trace.name)


def datagram_activations(tr, receiver: str = "seedload", name: str = "the trace") -> dict:
    """:func:`receiver_activations` of a read trace (``name`` for the error)."""
    import numpy as np
    from irqres.measure.activations import activations

    acts = [a for a in activations(tr, NIC) if a.thread.comm == NIC]
    if len(acts) != 1:
        return {"error": f"{NIC} not found once in {name}"}
    act = acts[0]
    wk = tr.wakeups()
    rows = np.flatnonzero(wk["waker"] == act.thread.pid)
    woken = wk["pid"][rows]
    mine = np.array([receiver in (tr.names_of(int(p)) or [""])[-1] for p in woken], bool)
    ts = wk["ts"][rows][mine]
    # the kept activation each wake-up fell in; one in an activation that was not kept
    # (the thread's first in the trace, dropped as possibly partial) has none: taking the
    # next instead took the e1000 watchdog's when it came first (a 20 ms short first gap)
    idx = act.holding(ts)
    idx = np.unique(idx[idx >= 0])
    starts = act.start_ns[idx].astype(np.int64)
    gaps = [int(x) for x in np.diff(starts)]
    return {"activations": len(idx), "of": int(act.count),
            "interarrival": series_stats(gaps),
            "exec": series_stats([int(x) for x in act.exec_ns[idx]]),
            "gaps_ns": gaps,
            "all_gaps_ns": [int(x) for x in np.diff(act.start_ns.astype(np.int64))]}


def keep_series(row: dict, base: Path) -> None:
    """The row's per-datagram series (gaps in ns) and datagram counts, into ``row``:
    what spread.py judges; ``row["irq_rx"]`` as receiver_activations returned it."""
    send = times(base.with_name(base.name + "-send.txt"))
    recv = times(base.with_name(base.name + "-recv.txt"))
    rx = row["irq_rx"]
    row["series"] = {"send": [b - a for a, b in itertools.pairwise(send)],
                     "recv": [b - a for a, b in itertools.pairwise(recv)],
                     "irq_rx": rx.pop("gaps_ns", []), "irq": rx.pop("all_gaps_ns", [])}
    row["datagrams"] = {"sent": len(send), "received": len(recv),
                        "woke": rx.get("activations", 0)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    testbed.add_options(ap)
    ap.add_argument("--size", type=int, default=256, help="datagram size in bytes")
    ap.add_argument("--reanalyze", metavar="JSON",
                    help="no boot: analyse again the guest output a raw data file names")
    args = ap.parse_args()
    params = {"runs": args.runs, "rows": [list(r) for r in ROWS], "size": args.size}
    if args.reanalyze:
        rec = json.loads(Path(args.reanalyze).read_text())
    else:
        rec = testbed.run_guest(args, "seeds_tools", "tools", params)
    out = Path(rec["raw_out"])
    for row in rec["result"]["rows"]:
        base = out / row["files"]
        row["send"] = series_stats(diffs(base.with_name(base.name + "-send.txt")))
        row["recv"] = series_stats(diffs(base.with_name(base.name + "-recv.txt")))
        row["irq"] = analyze(base.with_name(base.name + ".dat"))
        row["irq_rx"] = receiver_activations(base.with_name(base.name + ".dat"))
        keep_series(row, base)
        irq = row["irq"].get("interarrival", {})
        print(f"run {row['run']} T{row['period_ns'] // MS}: "
              f"send {row['send'].get('mean_ns', 0):.0f} "
              f"recv {row['recv'].get('mean_ns', 0):.0f} irq {irq.get('mean_ns', 0):.0f} ns "
              f"exec {row['irq'].get('exec', {}).get('mean_ns', 0):.0f} ns")
    Path(rec["path"]).write_text(json.dumps(rec, indent=1, sort_keys=True))
    print(f"wall {rec['wall_s']} s, testbed {rec['testbed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
