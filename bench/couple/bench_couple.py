#!/usr/bin/env python3
"""irqresd's CPU time per rescan with a coupled target (`serves:`), two builds side by side.

A spawned `sleep` stands in for the device thread (a task target by pid: no host thread
is touched), a spawned receiver holds a UDP socket bound to a loopback port and, with
``--tcp``, a listening TCP socket and one accepted connection. Each round starts irqresd
(``--rescan 100ms``, ``--tracefs`` naming no tracefs: no live accounting) with a profile
whose target ``serves:`` the port (or the receiver's comm), lets it settle, and counts
its CPU time (utime + stime of /proc/PID/stat) over a window: CPU per rescan = that time
divided by the window's rescans. The builds run in alternating rounds so that both see
the same host load; the report gives each build's median and the ratio of medians, with
the round-by-round ratios beside them.

    python3 bench/couple/bench_couple.py --bin OLD --bin NEW [--rounds 7] [--seconds 4]

Needs root (irqresd changes the stand-in's scheduling). Prints a Markdown report.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESCAN_MS = 100
TICK = os.sysconf("SC_CLK_TCK")

RECEIVER = r"""
import socket, sys, time
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", 0))
port = u.getsockname()[1]
keep = [u]
if sys.argv[1] == "tcp":
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    t.bind(("127.0.0.1", port))
    t.listen(4)
    c = socket.create_connection(("127.0.0.1", port))
    keep += [t, c, t.accept()[0]]
print(port, flush=True)
time.sleep(100000)
"""


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])      # utime, stime


def one_round(binary: str, serves: str, dev_pid: int, settle_s: float,
              seconds: float) -> float:
    """irqresd's CPU ms per rescan over ``seconds`` once it has run ``settle_s``."""
    with tempfile.TemporaryDirectory(prefix="bench-couple-") as d:
        prof = Path(d, "p.yaml")
        prof.write_text(f"version: 1\ntargets:\n  - name: dev\n    task:\n      pid: "
                        f"{dev_pid}\n    serves: {serves}\n")
        p = subprocess.Popen([binary, "-p", str(prof), "--run-dir", str(Path(d, "run")),
                              "--rescan", f"{RESCAN_MS}ms", "--tracefs", str(Path(d, "no"))],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(settle_s)
            if p.poll() is not None:
                raise SystemExit(f"{binary}: exited {p.returncode}: {p.stderr.read()}")
            a, t0 = cpu_ticks(p.pid), time.monotonic()
            time.sleep(seconds)
            b, t1 = cpu_ticks(p.pid), time.monotonic()
        finally:
            p.terminate()
            p.wait(timeout=30)
        rescans = (t1 - t0) * 1000 / RESCAN_MS
        return (b - a) * 1000 / TICK / rescans


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", action="append", required=True,
                    help="an irqresd binary (give two: they alternate)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=4.0, help="window per round")
    ap.add_argument("--settle", type=float, default=1.0, help="seconds before the window")
    ap.add_argument("--tcp", action="store_true",
                    help="the receiver also listens on TCP and holds an accepted connection")
    ap.add_argument("--comm", action="store_true",
                    help="serves: the receiver's comm instead of its port")
    ap.add_argument("--idle", type=int, default=0, metavar="N",
                    help="N more idle processes (sleep) during the rounds, as on a busier box")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root: irqresd changes the stand-in thread's scheduling")
    if args.rounds < 3:
        raise SystemExit("--rounds: at least 3")
    for b in args.bin:
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            raise SystemExit(f"--bin {b}: not an executable file (an irqresd build)")
    if not 0 <= args.idle <= 10000:
        raise SystemExit("--idle: 0 to 10000 processes")
    dev = subprocess.Popen(["sleep", "100000"])
    rx = subprocess.Popen([sys.executable, "-c", RECEIVER, "tcp" if args.tcp else "udp"],
                          stdout=subprocess.PIPE, text=True)
    idle: list[subprocess.Popen] = []
    try:
        for _ in range(args.idle):      # one at a time: a failure kills those started
            idle.append(subprocess.Popen(["sleep", "100000"]))
        port = int(rx.stdout.readline())
        n_proc = sum(1 for e in os.listdir("/proc") if e.isdigit())
        serves = '{comm: "python3"}' if args.comm else f"{{port: {port}}}"
        ms: dict[str, list[float]] = {b: [] for b in args.bin}
        for _ in range(args.rounds):
            for b in args.bin:
                ms[b].append(one_round(b, serves, dev.pid, args.settle, args.seconds))
    finally:
        for p in (dev, rx, *idle):
            p.kill()
            p.wait()
    mem_gb = int(Path("/proc/meminfo").read_text().split()[1]) / 2**20
    print(f"Command: `python3 bench/couple/bench_couple.py {' '.join(sys.argv[1:])}`  ")
    print(f"Host: {os.cpu_count()} CPUs, {mem_gb:.0f} GB, kernel {platform.release()}, "
          f"{n_proc} processes, "
          f"load average {os.getloadavg()[0]:.2f}; serves: {serves}"
          f"{', UDP + TCP listener + connection' if args.tcp else ', UDP'}; "
          f"{args.rounds} alternating rounds of {args.seconds:g} s at --rescan "
          f"{RESCAN_MS}ms\n")
    print("| build | CPU per rescan, median (ms) | rounds (ms) |")
    print("|---|---:|---|")
    for b in args.bin:
        print(f"| `{b}` | {statistics.median(ms[b]):.2f} | "
              f"{', '.join(f'{x:.2f}' for x in ms[b])} |")
    if len(args.bin) == 2:
        a, b = args.bin
        ratios = [y / x for x, y in zip(ms[a], ms[b], strict=True) if x]
        print(f"\nSecond over first: ratio of medians "
              f"{statistics.median(ms[b]) / statistics.median(ms[a]):.2f}; per round "
              f"{', '.join(f'{r:.2f}' for r in ratios)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
