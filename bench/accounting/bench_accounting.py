#!/usr/bin/env python3
"""irqresd: the CPU cost of the live accounting of device-thread time (docs/process-aware.md,
"Accounting") at a high wake rate, side by side with accounting off. Needs root.

A spawned process poses as the device thread of a coupled target (`serves:` its
receiver): it loops write one byte to the receiver's pipe, sleep --gap-us, so that each
loop is one activation that wakes the receiver. irqresd runs with --rescan 100ms (the
accounting reads its tracefs instance at every rescan and at every stats request);
accounting off is the same run with --tracefs pointing at a directory that is no tracefs
(irqresd logs "accounting off" once and does everything else). Per run of --seconds:

  irqresd CPU   its CPU time (/proc/PID/schedstat) over the window, as % of one CPU
  device CPU    the device process's CPU time per activation (what tracing its
                sched_switch and sched_waking adds to the traced thread itself)
  activations/s the device's loops per second
  accounted     activations irqresd charged to the receiver (on), against the device's
                own count; the rest went to "(none)" (a write to a receiver that was still
                running wakes nobody) or was dropped (dropped_activations)

--runs alternated on/off; prints a Markdown table with medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "analysis"))
from irqres.client import Client  # noqa: E402
from irqres.errors import IrqresError  # noqa: E402

IRQRESD = Path(os.environ.get("IRQRESD", ROOT / "build" / "daemon" / "irqresd"))

RECEIVER = r"""
import os
while os.read(0, 1):
    pass
"""

# Waits for "go", loops for the given seconds, prints (loops, own CPU ns), then waits.
DEVICE = r"""
import json, os, sys, time
fd, gap, secs = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
sys.stdin.readline()
n, c0, end = 0, time.thread_time_ns(), time.monotonic() + secs
while time.monotonic() < end:
    os.write(fd, b"x")
    time.sleep(gap)
    n += 1
print(json.dumps({"loops": n, "cpu_ns": time.thread_time_ns() - c0}), flush=True)
time.sleep(100000)
"""


def cpu_ns(pid: int) -> int:
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def request(sock: Path, verb: str) -> dict:
    with Client(str(sock), timeout=10) as c:
        return c.request(verb)


def wait_socket(sock: Path, proc: subprocess.Popen, timeout: float = 20) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"irqresd exited with {proc.returncode}")
        if sock.exists():
            try:
                request(sock, "ping")
                return
            except (OSError, IrqresError):
                pass
        time.sleep(0.05)
    raise SystemExit("irqresd did not answer")


def one_run(on: bool, gap_s: float, seconds: float, tmp: Path) -> dict:
    r, w = os.pipe()
    rx = subprocess.Popen([sys.executable, "-c", RECEIVER], stdin=r)
    os.close(r)
    dev = subprocess.Popen([sys.executable, "-c", DEVICE, str(w), str(gap_s), str(seconds)],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                           pass_fds=(w,))
    os.close(w)
    run = Path(tempfile.mkdtemp(dir=tmp))
    prof = run / "profile.yaml"
    prof.write_text(f"version: 1\ntargets:\n  - name: dev\n    task:\n      pid: {dev.pid}\n"
                    f"    serves: {{pid: {rx.pid}}}\n")
    args = [str(IRQRESD), "--run-dir", str(run), "--rescan", "100ms", "-p", str(prof)]
    if not on:
        args += ["--tracefs", str(run / "no-tracefs")]
    log = open(run / "irqresd.log", "w")
    d = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    try:
        sock = run / "irqresd.sock"
        wait_socket(sock, d)
        end = time.monotonic() + 5
        while on and not request(sock, "stats")["accounting"]["enabled"]:
            if time.monotonic() > end:
                raise SystemExit(f"accounting did not start: see {run}/irqresd.log")
            time.sleep(0.05)
        time.sleep(0.3)
        before = request(sock, "stats")["accounting"]
        c0 = cpu_ns(d.pid)
        assert dev.stdin and dev.stdout
        dev.stdin.write("go\n")
        dev.stdin.flush()
        own = json.loads(dev.stdout.readline())
        c1 = cpu_ns(d.pid)
        after = request(sock, "stats")["accounting"]
        def acts(acc: dict, pids: tuple[int, ...]) -> int:
            return sum(s["activations"] for s in acc["served"] if s["pid"] in pids)

        charged = acts(after, (rx.pid,)) - acts(before, (rx.pid,))
        nobody = acts(after, (-1,)) - acts(before, (-1,))
        return {"on": on, "irqresd_cpu_pct": 100 * (c1 - c0) / (seconds * 1e9),
                "device_cpu_us_per_act": own["cpu_ns"] / own["loops"] / 1000,
                "act_per_s": own["loops"] / seconds, "loops": own["loops"],
                "accounted": charged if on else None,
                "to_nobody": nobody if on else None,
                "lost_events": after["lost_events"],
                "dropped": after.get("dropped_activations", 0)}
    finally:
        d.terminate()
        d.wait(20)
        log.close()
        for p in (dev, rx):
            p.kill()
            p.wait()


def _cell(rs: list[dict], key: str, fmt: str) -> str:
    """Median (min-max) of one measure over runs."""
    vals = [r[key] for r in rs]
    return f"{statistics.median(vals):{fmt}} ({min(vals):{fmt}}-{max(vals):{fmt}})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--gap-us", type=int, default=50,
                    help="the device's sleep between activations")
    ap.add_argument("--json", action="store_true", help="print every run as JSON too")
    a = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root")
    if not IRQRESD.exists():
        raise SystemExit(f"{IRQRESD} is missing: run `make` first")
    results: list[dict] = []
    with tempfile.TemporaryDirectory(dir="/dev/shm") as tmp:
        for _ in range(a.runs):
            for on in (True, False):
                results.append(one_run(on, a.gap_us / 1e6, a.seconds, Path(tmp)))
    if a.json:
        print(json.dumps(results, indent=1))
    print("| accounting | irqresd CPU (% of one CPU) | device CPU per activation | "
          "activations/s | accounted / device loops | runs |")
    print("|---|---|---|---|---|---|")
    for on in (True, False):
        rs = [r for r in results if r["on"] == on]
        acc = (f"{statistics.median(r['accounted'] / r['loops'] for r in rs):.4f}"
               if on else "-")
        print(f"| {'on' if on else 'off'} | {_cell(rs, 'irqresd_cpu_pct', '.2f')} | "
              f"{_cell(rs, 'device_cpu_us_per_act', '.1f')} µs | "
              f"{statistics.median(r['act_per_s'] for r in rs):.0f} | {acc} | {len(rs)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
