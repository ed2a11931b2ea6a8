#!/usr/bin/env python3
"""irqresd: the most expensive requests a client can send, timed. Needs root.

Starts irqresd in a temporary run dir with a one-task profile (a sleeping child it
spawns), then sends each request below --runs times on a fresh connection and measures
the wall time until the reply and irqresd's CPU time for it (utime + stime of
/proc/PID/stat, in clock ticks: what the unit's LimitRTTIME=2s:3s counts while irqresd
runs SCHED_FIFO). Then 64 clients trickle request bodies while a real client pings (the
share answered within 1 s); a last check sends the heaviest request and SIGTERM right
behind it and times irqresd's exit. Prints a Markdown report on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "integration"))
from irqresd_util import read_line

ROOT = Path(__file__).resolve().parents[2]
IRQRESD = Path(os.environ.get("IRQRESD", ROOT / "build" / "daemon" / "irqresd"))
BODY_MAX = 1 << 20
DEPTH_MAX = 32           # yamlmap.h
EVENTS_MAX = 65536
HZ = os.sysconf("SC_CLK_TCK")


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def cases() -> dict[str, bytes]:
    head = "version: 1\ntargets: "
    c: dict[str, str] = {}
    # 1 MiB of flow nesting: refused at level 33 (took minutes before the bound)
    n = (BODY_MAX - len(head) - 1) // 2
    c["1 MiB of [[[...]]] (refused at depth 33)"] = head + nested(n) + "\n"
    # nesting at the limit, repeated up to the event bound
    block = nested(DEPTH_MAX - 2)  # in the root mapping and the outer list
    reps = (EVENTS_MAX - 100) // (2 * (DEPTH_MAX - 1))
    c[f"{reps} lists nested {DEPTH_MAX} deep (at the limits)"] = (
        head + "[" + ",".join([block] * reps) + "]\n")
    # a flat list of scalars at the event bound, padded with long scalars to 1 MiB
    items = EVENTS_MAX - 100
    pad = (BODY_MAX - len(head) - 4 - 2 * items) // items
    c[f"{items} scalars, 1 MiB"] = head + "[" + ",".join(["x" * pad] * items) + "]\n"
    # the largest profile accepted: 256 targets, 1,024 IRQs that do not exist, 1 MiB
    t = []
    for i in range(256):
        irqs = ", ".join(str(50000 + 4 * i + k) for k in range(4))
        t.append(f"  - name: t{i}\n    irq: [{irqs}]\n    runtime: 10us\n    period: 100ms\n")
    text = "version: 1\ntargets:\n" + "".join(t)
    filler = "# " + "x" * 1000 + "\n"
    text += filler * ((BODY_MAX - len(text)) // len(filler))
    c["256 targets, 1,024 IRQs, 1 MiB (largest accepted)"] = text
    # 20,000 IRQs in one list (refused: at most 1,024 entries)
    c["20,000 IRQs (refused)"] = ("version: 1\ntargets:\n  - name: nic\n    runtime: 1ms\n"
                                 "    period: 10ms\n    irq: ["
                                 + ", ".join(str(i) for i in range(20000)) + "]\n")
    return {k: v.encode() for k, v in c.items()}


def cpu_ticks(pid: int) -> int:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])


def request(sock: Path, body: bytes, timeout: float) -> tuple[dict, float]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(str(sock))
    t0 = time.monotonic()
    s.sendall(f"plan /bench {len(body)}\n".encode() + body)
    buf = read_line(s)
    took = time.monotonic() - t0
    s.close()
    return json.loads(buf), took


def start(tmp: Path, child: subprocess.Popen) -> subprocess.Popen:
    prof = tmp / "p.yaml"
    prof.write_text(f"version: 1\ntargets:\n  - name: a\n    task: {{pid: {child.pid}}}\n"
                    "    runtime: 1ms\n    period: 100ms\n")
    d = subprocess.Popen([str(IRQRESD), "--run-dir", str(tmp / "run"), "-p", str(prof)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock = tmp / "run" / "irqresd.sock"
    for _ in range(500):
        if sock.exists():
            return d
        time.sleep(0.01)
    raise SystemExit("irqresd did not start")


def slow_clients(sock: Path, seconds: float) -> tuple[int, int, float]:
    """64 clients that each announce a body and send it a byte every 2 s (reconnecting
    when dropped) while a real client sends `ping` every 0.25 s: (tries, answered within
    1 s, the slowest answer in ms)."""
    stop = threading.Event()
    socks: list[socket.socket | None] = [None] * 64

    def trickle() -> None:
        while not stop.is_set():
            for i in range(len(socks)):
                try:
                    if socks[i] is None:
                        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                        s.connect(str(sock))
                        s.sendall(b"plan /slow 100000\n")
                        socks[i] = s
                    socks[i].sendall(b"#")
                except OSError:
                    if socks[i] is not None:
                        socks[i].close()
                    socks[i] = None
            stop.wait(2.0)

    th = threading.Thread(target=trickle)
    th.start()
    tries = answered = 0
    worst = 0.0
    time.sleep(1.0)
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            tries += 1
            t0 = time.monotonic()
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(1.0)
                s.connect(str(sock))
                s.sendall(b"ping\n")
                ok = json.loads(s.recv(4096)).get("ok") is True
                s.close()
            except (OSError, ValueError):
                ok = False
            took = time.monotonic() - t0
            if ok:
                answered += 1
                worst = max(worst, took * 1000)
            time.sleep(0.25)
    finally:
        stop.set()
        th.join()
        for s in socks:
            if s is not None:
                s.close()
    return tries, answered, worst


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--slow-seconds", type=float, default=20)
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("needs root")
    child = subprocess.Popen(["sleep", "3600"])
    rows = []
    with tempfile.TemporaryDirectory(dir="/dev/shm") as td:
        tmp = Path(td)
        d = start(tmp, child)
        sock = tmp / "run" / "irqresd.sock"
        try:
            for name, body in cases().items():
                walls, cpus = [], []
                for _ in range(args.runs):
                    c0 = cpu_ticks(d.pid)
                    reply, took = request(sock, body, 600)
                    cpus.append((cpu_ticks(d.pid) - c0) * 1000 / HZ)
                    walls.append(took * 1000)
                verdict = "ok" if reply["ok"] else reply["error"][:90]
                rows.append((name, len(body), statistics.median(walls), max(walls),
                             statistics.median(cpus), max(cpus), verdict))
            slow = slow_clients(sock, args.slow_seconds)
            heaviest = max(rows, key=lambda r: r[2])[0]
            body = cases()[heaviest]
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(sock))
            s.sendall(f"plan /bench {len(body)}\n".encode() + body)
            t0 = time.monotonic()
            d.send_signal(signal.SIGTERM)
            rc = d.wait(60)
            term_ms = (time.monotonic() - t0) * 1000
            s.close()
        finally:
            if d.poll() is None:
                d.kill()
                d.wait()
            child.kill()
            child.wait()
    la = os.getloadavg()
    print(f"Command: `python3 bench/requests/bench_requests.py --runs {args.runs} "
          f"--slow-seconds {args.slow_seconds:g}` (irqresd: {IRQRESD})  ")
    print(f"Host: {os.cpu_count()} CPUs, kernel {platform.release()}, load average "
          f"{la[0]:.2f}; irqresd SCHED_OTHER; clock ticks {HZ}/s.\n")
    print("| request (`plan`) | bytes | wall median | wall max | CPU median | CPU max "
          "| reply |")
    print("|---|---|---|---|---|---|---|")
    for name, size, wm, wx, cm, cx, verdict in rows:
        print(f"| {name} | {size} | {wm:.1f} ms | {wx:.1f} ms | {cm:.0f} ms | {cx:.0f} ms "
              f"| {verdict} |")
    print(f"\n64 clients trickling request bodies (a byte every 2 s), {args.slow_seconds:g} s: "
          f"a real `ping` every 0.25 s answered within 1 s {slow[1]} of {slow[0]} times, "
          f"the slowest answer {slow[2]:.0f} ms.")
    print(f"\nSIGTERM right behind the heaviest request ({heaviest}): irqresd exited "
          f"{rc} after {term_ms:.0f} ms.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
