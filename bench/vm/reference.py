"""The reference experiment on the PREEMPT_RT guest (issue: CI on a real PREEMPT_RT kernel).

1. TCP throughput from the host into the guest with the e1000's IRQ thread reserved at
   several (Q,T): throughput should follow the thread's bandwidth Q/T.
2. cyclictest on the NIC's CPU, below the NIC thread's SCHED_FIFO 50, while the host
   floods the guest with UDP: worst and average latency with the NIC thread reserved and
   with it left at SCHED_FIFO 50.

Writes bench/vm/reference.md (table, date, command) and bench/vm/reference.png.

    python3 bench/vm/reference.py [--seconds 5]
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import shlex
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests" / "vm"))

import vmrunner  # noqa: E402

MS = 1_000_000
PERIOD = 10 * MS
BUDGETS = [1 * MS, 2 * MS, 4 * MS, 6 * MS, 8 * MS]
RESERVED = [2 * MS, 10 * MS]
RT_PRIORITY = 40    # below the NIC thread's default SCHED_FIFO 50


LABELS = {"reserved": "NIC reserved 2ms/10ms", "fifo50": "NIC SCHED_FIFO 50"}


def medians(rows: list[dict], latency: list[dict]) -> tuple[list[dict], dict]:
    """Median over the runs: throughput per (Q,T), latency per case."""
    points: dict[tuple[int, int], list[dict]] = {}
    for r in rows:
        points.setdefault((r["runtime_ns"], r["period_ns"]), []).append(r)
    tput = [{"runtime_ns": q, "period_ns": t,
             "bits_per_s": [x["throughput"]["bits_per_s"] for x in rs],
             "median": statistics.median(x["throughput"]["bits_per_s"] for x in rs),
             "set_budget_ok": all(x["set_budget"]["rc"] == 0 for x in rs),
             "sched": [(x["thread"] or {}).get("sched") or {} for x in rs]}
            for (q, t), rs in sorted(points.items())]
    lat = {}
    for label in LABELS:
        rs = [x for x in latency if x["label"] == label and "max_us" in x["summary"]]
        lat[label] = {
            "max_us": [x["summary"]["max_us"] for x in rs],
            "avg_us": [x["summary"]["avg_us"] for x in rs],
            "cycles": [x["summary"]["cycles"] for x in rs],
            "sent": [x["host_sent"] for x in rs],
            "received": [x["received"]["packets"] for x in rs],
            "sched": [(x["thread"] or {}).get("sched") or {} for x in rs],
        }
    return tput, lat


def plot(tput: list[dict], lat: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    bw = [100 * r["runtime_ns"] / r["period_ns"] for r in tput]
    a.plot(bw, [r["median"] / 1e6 for r in tput], "o-", label="median")
    for r, x in zip(tput, bw, strict=True):
        a.plot([x] * len(r["bits_per_s"]), [v / 1e6 for v in r["bits_per_s"]], "k.", alpha=0.4)
    a.set_xlabel("NIC IRQ thread bandwidth Q/T (%), T = 10 ms")
    a.set_ylabel("TCP throughput into the guest (Mbit/s)")
    a.set_title("Throughput follows the reservation")
    a.grid(True, alpha=0.3)
    a.legend()
    x = range(len(LABELS))
    b.bar([i - 0.2 for i in x], [statistics.median(lat[k]["max_us"]) for k in LABELS], 0.4,
          label="max (median of runs)")
    b.bar([i + 0.2 for i in x], [statistics.median(lat[k]["avg_us"]) for k in LABELS], 0.4,
          label="avg (median of runs)")
    b.set_xticks(list(x), list(LABELS.values()))
    b.set_ylabel("cyclictest latency (µs)")
    b.set_yscale("log")
    b.set_title("RT task below the NIC thread, UDP flood")
    b.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=5, help="length of each measurement")
    ap.add_argument("--flood-pps", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=3, help="repetitions; medians are reported")
    args = ap.parse_args()
    command = "python3 bench/vm/reference.py " + " ".join(map(shlex.quote, sys.argv[1:]))
    t0 = time.monotonic()
    image = vmrunner.ensure_image()
    work = Path("/var/tmp/irqres-vm/bench-reference")
    stage = vmrunner.stage_checkout(work / "stage")
    vm = vmrunner.VM(image, stage, "throughput", name="bench-reference",
                     profile=vmrunner.REPO / "profiles" / "demo.yaml", enable_irqresd=True,
                     workdir=work / "vm", timeout_s=1200,
                     params={"points": [[q, PERIOD] for q in BUDGETS], "seconds": args.seconds,
                             "udp_port": vmrunner.VM.UDP_PORT,
                             "tcp_port": vmrunner.VM.TCP_PORT, "flood_pps": args.flood_pps,
                             "rt_interval_us": 1000, "rt_priority": RT_PRIORITY,
                             "reserved": RESERVED, "runs": args.runs})
    d = vm.run().data
    if "error" in d:
        print(d.get("traceback", d["error"]), file=sys.stderr)
        return 1
    tput, lat = medians(d["rows"], d["latency"])
    plot(tput, lat, HERE / "reference.png")
    lines = [
        "# Reference experiment on the PREEMPT_RT guest",
        "",
        f"Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC. "
        f"Command: `{command}` (as root, from the top of the checkout); "
        f"{time.monotonic() - t0:.0f} s wall. Medians over {args.runs} runs, every run "
        "listed.",
        "",
        f"Guest: Debian 12, kernel {image.release}, QEMU `-accel tcg -smp 2 -m 1024`, e1000 "
        "NIC on QEMU user networking (host traffic through `hostfwd` on 127.0.0.1). The host "
        "is a shared 2-CPU machine, so absolute numbers are those of software emulation; "
        "the shape is what matters.",
        "",
        f"## TCP throughput into the guest vs. the NIC thread's reservation ({args.seconds} s "
        "each)",
        "",
        "| Q (ms) | T (ms) | Q/T | set-budget | thread policy | median Mbit/s | runs Mbit/s |",
        "|---:|---:|---:|---|---|---:|---|",
    ]
    for r in tput:
        pol = {f"{x.get('policy')} {x.get('runtime_ns', 0) / MS:g}/"
               f"{x.get('period_ns', 0) / MS:g} ms" for x in r["sched"]}
        lines.append(f"| {r['runtime_ns'] / MS:g} | {r['period_ns'] / MS:g} | "
                     f"{r['runtime_ns'] / r['period_ns']:.0%} | "
                     f"{'ok' if r['set_budget_ok'] else 'FAILED'} | {', '.join(sorted(pol))} | "
                     f"{r['median'] / 1e6:.1f} | "
                     f"{', '.join(f'{v / 1e6:.1f}' for v in r['bits_per_s'])} |")
    lines += [
        "",
        f"## cyclictest (SCHED_FIFO {RT_PRIORITY}, CPU 0, 1 ms interval, "
        f"{args.seconds + 2} s) under a {args.flood_pps}/s UDP flood",
        "",
        "| NIC thread | median max (µs) | runs max (µs) | median avg (µs) | cycles | "
        "datagrams received / sent |",
        "|---|---:|---|---:|---|---|",
    ]
    for label, v in lat.items():
        if not v["max_us"]:
            lines.append(f"| {LABELS[label]} | cyclictest gave no summary | | | | |")
            continue
        pkts = ", ".join(f"{r}/{s}" for r, s in zip(v["received"], v["sent"], strict=True))
        lines.append(f"| {LABELS[label]} | {statistics.median(v['max_us'])} | "
                     f"{', '.join(map(str, v['max_us']))} | {statistics.median(v['avg_us'])} | "
                     f"{', '.join(map(str, v['cycles']))} | {pkts} |")
    steps = list(itertools.pairwise(r["median"] for r in tput))
    rises = "; ".join(f"{a / 1e6:.1f} → {b / 1e6:.1f}" for a, b in steps)
    verdict = ("rising at every step" if all(b > a for a, b in steps)
               else "not rising at every step")
    lmax = {k: statistics.median(v["max_us"]) for k, v in lat.items() if v["max_us"]}
    lines += [
        "",
        "## Reading",
        "",
        f"- Median throughput from one Q/T to the next: {rises} Mbit/s ({verdict}).",
    ]
    if len(lmax) == 2:
        lines.append(
            f"- cyclictest's median worst latency: {lmax['reserved']} µs with the NIC thread "
            f"reserved, {lmax['fifo50']} µs with it at SCHED_FIFO 50.")
    lines += [
        "- Under software emulation on a shared host the guest's vCPUs stall for tens to "
        "hundreds of milliseconds now and then; such stalls dominate the worst latencies and "
        "the spread between runs, so compare medians, not single runs.",
        "", "![throughput and latency](reference.png)", ""]
    (HERE / "reference.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
