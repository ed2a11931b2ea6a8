"""Accounting accuracy: irqres's live attribution of the NIC thread's time to the two
processes it serves, against the truth, in the PREEMPT_RT guest.

Two UDP receivers (two processes, two ports, datagrams of ``--size`` and one byte more)
read what two paced senders in namespace ``snd`` send them at known, different rates, for
each pair of
periods of ``--pairs`` (by default about 100/s : 300/s and 50/s : 250/s, periods chosen
not to be exact multiples so that the two flows' arrivals drift through every phase
against each other instead of keeping one). irqresd serves both ports with a coupled
target on eth0 and accounts the NIC thread's activations to the processes they woke
(docs/process-aware.md). Truth: the NIC thread's CPU time over the window split by the
datagrams it delivered to each receiver (each costs the thread the same), counted by the
kernel's histogram of ``net:netif_receive_skb`` by task and length (accounting_attribution).
Unless ``--no-trace``, the
guest also records each window with trace-cmd (left in the guest's out/ directory) for
``irqres analyze``'s offline attribution. Raw data:
bench/seeds/data/accounting-accuracy-*.json; ``report.py`` makes the table.

    python3 bench/seeds/accounting_accuracy.py [--runs 3] [--seconds 5]
                                               [--pairs 10030000:3337000,20030000:4003000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import testbed
from accounting_attribution import attribution

PAIRS = "10030000:3337000,20030000:4003000"
PORTS = [5001, 5002]


def profile_text(ports: list[int]) -> str:
    """The profile irqresd boots with: a coupled target for eth0's IRQ thread serving
    ``ports`` (nothing reserved: the accounting is what is measured). Booted with, not
    applied later: giving back the default profile's cpuset partition and making the
    tracefs instance in one go takes an emulated guest's irqresd seconds of CPU."""
    return ("version: 1\ntargets:\n  - name: nic\n    interface: eth0\n"
            f"    serves:\n      port: [{', '.join(map(str, ports))}]\n")


def parse_pairs(text: str) -> list[list[int]]:
    """``A:B,C:D`` (ns) -> [[A, B], [C, D]], every period a positive integer."""
    try:
        pairs = [[int(x) for x in p.split(":")] for p in text.split(",")]
    except ValueError:
        raise SystemExit(f"--pairs {text!r}: not PERIOD_NS:PERIOD_NS,...") from None
    if any(len(p) != 2 or min(p) <= 0 for p in pairs):
        raise SystemExit(f"--pairs {text!r}: each pair is two positive periods in ns")
    return pairs


def add_offline(path: Path) -> dict:
    """``irqres analyze`` of each window's trace-cmd recording (the guest's out/
    directory): the NIC thread's served processes as the offline rule counts them, kept in
    each row as ``offline`` (None without a recording) and the record saved again."""
    rec = json.loads(path.read_text())
    for row in rec["result"]["rows"]:
        row["offline"] = None
        if not row.get("trace"):
            continue
        p = subprocess.run(["irqres", "analyze", str(Path(rec["raw_out"]) / row["trace"]),
                            "--json", "--thread", row["before"]["thread"]["comm"]],
                           capture_output=True, text=True, check=False)
        if p.returncode != 0:
            raise SystemExit(f"irqres analyze {row['trace']}: {p.stderr.strip()}")
        threads = json.loads(p.stdout)["threads"]
        row["offline"] = threads[0]["served"] if len(threads) == 1 else None
    path.write_text(json.dumps(rec, indent=1, sort_keys=True))
    return rec


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    testbed.add_options(ap)
    ap.add_argument("--seconds", type=int, default=5, help="guest seconds per window")
    ap.add_argument("--size", type=int, default=512, help="datagram size, bytes")
    ap.add_argument("--pairs", default=PAIRS,
                    help="sender periods in ns, PORT1's:PORT2's, pairs separated by ','")
    ap.add_argument("--rt-limit", default="",
                    help="irqresd.service's LimitRTTIME in the guest ('', the default, "
                         "keeps the unit's 2s:3s; the committed runs used infinity, from "
                         "before irqresd stopped parsing /proc/kallsyms at its start)")
    ap.add_argument("--no-trace", action="store_true",
                    help="do not record the windows with trace-cmd")
    args = ap.parse_args()
    params = {"runs": args.runs, "pairs": parse_pairs(args.pairs), "seconds": args.seconds,
              "size": args.size, "ports": PORTS, "trace": not args.no_trace,
              "rt_limit": args.rt_limit or None}
    work = Path(os.environ.get("IRQRES_VM_WORKDIR", "/var/tmp/irqres-vm"))
    prof = work / "seeds-accounting-accuracy" / "coupled.yaml"
    prof.parent.mkdir(parents=True, exist_ok=True)
    prof.write_text(profile_text(PORTS))
    rec = testbed.run_guest(args, "seeds_acct", "accounting-accuracy", params,
                            profile=str(prof))
    if params["trace"]:
        rec = add_offline(Path(rec["path"]))
    for row in rec["result"]["rows"]:
        w = attribution(row)
        offline = {s["pid"]: s["irq_time_ns"] for s in row.get("offline") or []}
        parts = ", ".join(f"{r['port']}: read {r['reads']}"
                          + (f" (NIC thread {r['delivered']}, elsewhere {r['elsewhere']})"
                             if r["delivered"] is not None else "")
                          + f" truth {r['truth_ns'] / 1e6:.2f} ms "
                          f"accounted {r['accounted_ns'] / 1e6:.2f} ms "
                          f"error {100 * r['error']:+.2f} % (by reads "
                          f"{100 * r['error_read']:+.2f} %)"
                          + (f" offline {offline[r['pid']] / 1e6:.2f} ms"
                             if r["pid"] in offline else "") for r in w["receivers"])
        print(f"run {w['run']} periods {w['periods_ns']}: NIC {w['cpu_ns'] / 1e6:.2f} ms in "
              f"{w['activations']} activations, {w['shared']} shared, none "
              f"{w['none_ns'] / 1e6:.2f} ms; {parts}")
    print(f"wall {rec['wall_s']} s, testbed {rec['testbed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
