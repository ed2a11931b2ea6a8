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
import shlex
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


def plot(rows: list[dict], latency: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    bw = [100 * r["runtime_ns"] / r["period_ns"] for r in rows]
    mbit = [r["throughput"]["bits_per_s"] / 1e6 for r in rows]
    a.plot(bw, mbit, "o-")
    a.set_xlabel("NIC IRQ thread bandwidth Q/T (%), T = 10 ms")
    a.set_ylabel("TCP throughput into the guest (Mbit/s)")
    a.set_title("Throughput follows the reservation")
    a.grid(True, alpha=0.3)
    labels = list(latency)
    worst = [latency[k]["summary"].get("max_us", 0) for k in labels]
    avg = [latency[k]["summary"].get("avg_us", 0) for k in labels]
    x = range(len(labels))
    b.bar([i - 0.2 for i in x], worst, 0.4, label="max")
    b.bar([i + 0.2 for i in x], avg, 0.4, label="avg")
    b.set_xticks(list(x), ["NIC reserved 2ms/10ms", "NIC SCHED_FIFO 50"])
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
                             "rt_interval_us": 1000, "rt_priority": 40,
                             "reserved": RESERVED})
    res = vm.run()
    d = res.data
    if "error" in d:
        print(d.get("traceback", d["error"]), file=sys.stderr)
        return 1
    rows, latency = d["rows"], d["latency"]
    plot(rows, latency, HERE / "reference.png")
    lines = [
        "# Reference experiment on the PREEMPT_RT guest",
        "",
        f"Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC. "
        f"Command: `{command}` (as root, from the top of the checkout); "
        f"{time.monotonic() - t0:.0f} s wall.",
        "",
        f"Guest: Debian 12, kernel {image.release}, QEMU `-accel tcg -smp 2 -m 1024`, e1000 "
        "NIC on QEMU user networking (host traffic through `hostfwd` on 127.0.0.1). The host "
        "is a shared 2-CPU machine, so absolute numbers are those of software emulation; "
        "the shape is what matters.",
        "",
        f"## TCP throughput into the guest vs. the NIC thread's reservation ({args.seconds} s "
        "each)",
        "",
        "| Q (ms) | T (ms) | Q/T | set-budget | thread policy | Mbit/s | bytes |",
        "|---:|---:|---:|---|---|---:|---:|",
    ]
    for r in rows:
        s = (r["thread"] or {}).get("sched") or {}
        ok = "ok" if r["set_budget"]["rc"] == 0 else "FAILED"
        lines.append(f"| {r['runtime_ns'] / MS:g} | {r['period_ns'] / MS:g} | "
                     f"{r['runtime_ns'] / r['period_ns']:.0%} | {ok} | "
                     f"{s.get('policy')} {s.get('runtime_ns', 0) / MS:g}/"
                     f"{s.get('period_ns', 0) / MS:g} ms | "
                     f"{r['throughput']['bits_per_s'] / 1e6:.2f} | {r['throughput']['bytes']} |")
    lines += [
        "",
        f"## cyclictest (SCHED_FIFO 40, CPU 0, 1 ms interval) under a {args.flood_pps}/s "
        "UDP flood",
        "",
        "| NIC thread | cycles | avg (µs) | max (µs) | datagrams sent / received |",
        "|---|---:|---:|---:|---:|",
    ]
    for v in latency.values():
        s = v["summary"]
        sched = (v["thread"] or {}).get("sched") or {}
        what = (f"SCHED_DEADLINE {sched.get('runtime_ns', 0) / MS:g}/"
                f"{sched.get('period_ns', 0) / MS:g} ms" if sched.get("policy") == "deadline"
                else f"SCHED_{str(sched.get('policy')).upper()} {sched.get('priority')}")
        lines.append(f"| {what} | {s.get('cycles')} | {s.get('avg_us')} | {s.get('max_us')} "
                     f"| {v['host_sent']} / {v['received']['packets']} |")
    lines += ["", "![throughput and latency](reference.png)", ""]
    (HERE / "reference.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
