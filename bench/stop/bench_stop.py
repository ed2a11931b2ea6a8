#!/usr/bin/env python3
"""irqresd: how long stop (SIGTERM) and `irqresd --restore` take with many reserved tasks.
Needs root.

Spawns --tasks sleeping processes (a copy of sleep(1) under a unique name, so that a
task target selects them by comm and nothing else), starts irqresd in a temporary run
dir (on /dev/shm, tmpfs like /run) with a profile reserving them (10us every 1s each),
waits until every one is SCHED_DEADLINE (--run-base: a disk directory instead), then
times:

  stop      SIGTERM to irqresd's exit (every task restored; the unit's TimeoutStopSec=20s)
  restore   irqresd --once, then irqresd --restore (the unit's ExecStopPost path)

--runs times each; prints a Markdown table with medians. IRQRESD=PATH measures another
build (an older one, for comparison).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IRQRESD = Path(os.environ.get("IRQRESD", ROOT / "build" / "daemon" / "irqresd"))
SCHED_DEADLINE = 6


def policy(pid: int) -> int:
    try:
        return os.sched_getscheduler(pid) & ~0x40000000  # SCHED_RESET_ON_FORK
    except OSError:
        return -1


def wait_all(pids: list[int], want_dl: bool, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if all((policy(p) == SCHED_DEADLINE) == want_dl for p in pids):
            return
        time.sleep(0.05)
    n = sum(policy(p) == SCHED_DEADLINE for p in pids)
    raise SystemExit(f"{n} of {len(pids)} tasks SCHED_DEADLINE after {timeout} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--run-base", default="/dev/shm",
                    help="where the run dir goes (/dev/shm: tmpfs like /run; a disk "
                    "directory shows what fsync costs there)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root")
    comm = f"irqbst{os.getpid() % 100000}"
    results: dict[str, list[float]] = {"stop": [], "restore": []}
    with tempfile.TemporaryDirectory(dir=args.run_base) as td:
        tmp = Path(td)
        exe = tmp / comm
        shutil.copy("/bin/sleep", exe)
        procs = [subprocess.Popen([str(exe), "100000"]) for _ in range(args.tasks)]
        pids = [p.pid for p in procs]
        prof = tmp / "p.yaml"
        prof.write_text(f'version: 1\ntargets:\n  - name: many\n    task: {{comm: "{comm}"}}\n'
                        "    runtime: 10us\n    period: 1s\n")
        run = tmp / "run"
        log = open(tmp / "irqresd.log", "wb")
        try:
            for _ in range(args.runs):
                d = subprocess.Popen([str(IRQRESD), "--run-dir", str(run), "-p", str(prof),
                                      "--rescan", "0"],
                                     stdout=log, stderr=subprocess.STDOUT)
                try:
                    wait_all(pids, True)
                except SystemExit:
                    d.kill()
                    print((tmp / "irqresd.log").read_text()[-3000:], file=sys.stderr)
                    raise
                while not (run / "irqresd.sock").exists():
                    time.sleep(0.01)
                t0 = time.monotonic()
                d.send_signal(signal.SIGTERM)
                rc = d.wait(300)
                results["stop"].append(time.monotonic() - t0)
                assert rc == 0, rc
                wait_all(pids, False, 5)
                r = subprocess.run([str(IRQRESD), "--run-dir", str(run), "-p", str(prof),
                                    "--once"], capture_output=True, text=True, check=False)
                assert r.returncode == 0, r.stderr[-2000:]
                wait_all(pids, True, 5)
                t0 = time.monotonic()
                r = subprocess.run([str(IRQRESD), "--run-dir", str(run), "--restore"],
                                   capture_output=True, text=True, check=False)
                results["restore"].append(time.monotonic() - t0)
                assert r.returncode == 0, r.stderr[-2000:]
                wait_all(pids, False, 5)
        finally:
            log.close()
            for p in procs:
                p.kill()
            for p in procs:
                p.wait()
    la = os.getloadavg()
    print(f"Command: `python3 bench/stop/bench_stop.py --tasks {args.tasks} --runs "
          f"{args.runs} --run-base {args.run_base}` (irqresd: {IRQRESD})  ")
    print(f"Host: {os.cpu_count()} CPUs, kernel {platform.release()}, load average "
          f"{la[0]:.2f}; run dir under {args.run_base}.\n")
    print("| operation | tasks | median | min | max |")
    print("|---|---|---|---|---|")
    for k, v in results.items():
        print(f"| {k} | {args.tasks} | {statistics.median(v):.2f} s | {min(v):.2f} s | "
              f"{max(v):.2f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
