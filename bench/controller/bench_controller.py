#!/usr/bin/env python3
"""Benchmark of the threshold controller (irqres tune).

1. update: ThresholdController.update alone, per target per interval.
2. tick: what `irqres tune` does per sampling interval for N targets once the `stats`
   reply has arrived: JSON decoding of the reply, counters, intervals, controller,
   NIC-counter lookup (Tuner._step), divided by N. The goal is < 50 us per target per
   interval (100 targets at 1 ms sampling < 5% of a CPU).
3. stats round trip: one `stats` request to a real irqresd (when it runs here), with one
   reserved process and with --stats-threads (50) of them (0.1 % of a CPU each).
4. decision -> in force: `set-budget` to a real irqresd for a process this script spawns,
   then sched_getattr until the new runtime shows; medians over the repetitions.

Prints Markdown. Usage: python3 bench/controller/bench_controller.py [--runs 5]
[--baseline DIR]: DIR holds another tree's analysis/ and bench/ (e.g. from
`git archive COMMIT analysis bench | tar -x -C DIR`); rows 1 and 2 are then measured for
both, runs interleaved so that the machine's load falls on both alike.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "analysis"))

from irqres.client import Client, DaemonError, find_irqresd
from irqres.control import ControllerConfig, ThresholdController
from irqres.control.admission import domain_usage
from irqres.control.inputs import read_dl_params
from irqres.control.loop import Tuner

ADAPTIVE = {"sample_ns": 1_000_000, "gain": 0.25, "window": 100, "default_job_ns": 20_000,
            "min_runtime_ns": 50_000, "max_runtime_ns": 800_000, "hysteresis_ns": 0}


def bench_update(targets: int, intervals: int) -> float:
    """ns per update."""
    cfg = ControllerConfig(name="b", period_ns=1_000_000, max_runtime_ns=800_000)
    ctls = [ThresholdController(cfg, 300_000) for _ in range(targets)]
    seq = [(10 + i % 7, 200_000 + (i * 7919) % 150_000, (i * 31) % 11) for i in range(intervals)]
    t0 = time.perf_counter_ns()
    for n_pro, t_pro, n_rmn in seq:
        for c in ctls:
            c.update(n_pro, t_pro, n_rmn)
    return (time.perf_counter_ns() - t0) / (targets * intervals)


class NoSocket:
    """Stands in for the client in the tick benchmark: accepts every budget at once."""

    def set_budget(self, target: str, runtime_ns: int) -> dict:
        return {"target": target, "runtime_ns": runtime_ns}


def bench_tick(targets: int, intervals: int) -> float:
    """ns per target per interval of the tune loop's own work (no socket)."""
    status = {"targets": [{"name": f"t{k}", "kind": "irq", "mode": "adaptive",
                           "runtime_ns": 300_000, "period_ns": 1_000_000,
                           "deadline_ns": 1_000_000, "buffer": 256,
                           "min_interarrival_ns": 10_000, "adaptive": ADAPTIVE,
                           "threads": [{"pid": 1000 + k, "cpus": str(k % 2),
                                        "actions": [f"bench{k}-q0"]}]}
                          for k in range(targets)]}
    tuner = Tuner(socket="/nonexistent", view=None)
    tuner._load(status)
    tuner.client = NoSocket()       # set-budget costs are measured against irqresd below
    replies = []
    for i in range(intervals):
        threads = [{"pid": 1000 + k, "comm": f"irq/{k}-bench", "target": f"t{k}",
                    "irqs": [k], "irq_count": i * 20 + k, "policy": "deadline",
                    "runtime_ns": 300_000, "period_ns": 1_000_000, "deadline_ns": 1_000_000,
                    "cpu_time_ns": i * 250_000 + (i * 7919) % 50_000, "wait_time_ns": 0,
                    "timeslices": i, "voluntary_switches": i * 2,
                    "involuntary_switches": i // 3} for k in range(targets)]
        replies.append(json.dumps({"ok": True, "time_ns": (i + 1) * 1_000_000,
                                   "threads": threads}))
    sts = list(tuner.targets.values())
    t0 = time.perf_counter_ns()
    for i, raw in enumerate(replies):
        reply = json.loads(raw)
        by_target: dict[str, list[dict]] = {}
        for th in reply["threads"]:
            by_target.setdefault(th["target"], []).append(th)
        now = time.monotonic_ns()
        used = domain_usage(sts, tuner._others)     # once per tick, as Tuner._tick does
        for st in sts:
            tuner._step(st, by_target.get(st.name, []), i, now, used, reply["time_ns"])
    return (time.perf_counter_ns() - t0) / (targets * intervals)


def bench_proc_reads(reps: int = 2000) -> tuple[float, float]:
    """ns to read /proc/self/schedstat and /proc/self/status once each (what irqresd reads
    per thread for `stats`), and status alone."""
    def one(names: tuple[str, ...]) -> float:
        t0 = time.perf_counter_ns()
        for _ in range(reps):
            for name in names:
                with open(f"/proc/self/{name}", "rb") as f:
                    f.read()
        return (time.perf_counter_ns() - t0) / reps

    return one(("schedstat", "status")), one(("status",))


def start_daemon(tmp: str, pid: int, others: list[int] = ()) -> subprocess.Popen | None:
    prof = Path(tmp) / "bench.yaml"
    text = (f"version: 1\ntargets:\n  - name: bench\n    task:\n      pid: {pid}\n"
            "    runtime: 1ms\n    period: 100ms\n")
    for k, other in enumerate(others):       # 0.1 % of a CPU each
        text += (f"  - name: extra{k}\n    task:\n      pid: {other}\n"
                 "    runtime: 100us\n    period: 100ms\n")
    prof.write_text(text)
    sock = os.path.join(tmp, "irqresd.sock")
    d = subprocess.Popen([find_irqresd(), "-p", str(prof), "--run-dir", tmp, "--socket", sock,
                          "--no-netlink", "--rescan", "0"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    for _ in range(100):
        if os.path.exists(sock):
            return d
        if d.poll() is not None:
            print(f"irqresd exited: {d.stdout.read().strip()}", file=sys.stderr)
            return None
        time.sleep(0.05)
    d.terminate()
    return None


@contextlib.contextmanager
def reserved(threads: int):
    """An irqresd of its own reserving ``threads`` `sleep` processes this script spawns;
    yields (client, pids), or None when irqresd cannot run here."""
    tmp = tempfile.mkdtemp(prefix="irqres-bench-")
    procs = [subprocess.Popen(["sleep", "600"]) for _ in range(threads)]
    d = None
    try:
        d = start_daemon(tmp, procs[0].pid, [p.pid for p in procs[1:]])
        if d is None:
            yield None
            return
        with Client(os.path.join(tmp, "irqresd.sock")) as c:
            yield c, [p.pid for p in procs]
    finally:
        if d is not None:
            d.terminate()
            d.wait(10)
        for p in procs:
            p.kill()
            p.wait()


def stats_rtt(c: Client, reps: int) -> list[int]:
    rtt = []
    for _ in range(reps):
        t0 = time.perf_counter_ns()
        c.stats()
        rtt.append(time.perf_counter_ns() - t0)
    return rtt


def bench_stats_threads(reps: int, threads: int) -> list[int] | None:
    """`stats` round trips (ns) with ``threads`` reserved processes, decoded as the tune
    loop does: the daemon's reads per thread and the reply's size grow with them."""
    try:
        with reserved(threads) as r:
            if r is None:
                return None
            c, _ = r
            if len(c.stats().get("threads") or []) != threads:
                print(f"irqresd reserved fewer than {threads} threads", file=sys.stderr)
                return None
            return stats_rtt(c, reps)
    except DaemonError as exc:
        print(f"irqresd: {exc}", file=sys.stderr)
        return None


def bench_daemon(reps: int) -> dict | None:
    try:
        with reserved(1) as r:
            if r is None:
                return None
            c, (pid,) = r
            rtt = stats_rtt(c, reps)
            force, polls = [], []
            for i in range(reps):
                q = 1_000_000 + (i % 2 + 1) * 100_000 + i * 1000
                t0 = time.perf_counter_ns()
                c.set_budget("bench", q)
                n = 1
                while read_dl_params(pid).runtime_ns != q:
                    n += 1
                force.append(time.perf_counter_ns() - t0)
                polls.append(n)
            return {"stats_rtt": rtt, "in_force": force, "polls": polls}
    except DaemonError as exc:
        print(f"irqresd: {exc}", file=sys.stderr)
        return None


def load_baseline(root: str):
    """This benchmark module of another tree, importing that tree's irqres."""
    ours = {k: v for k, v in sys.modules.items() if k == "irqres" or k.startswith("irqres.")}
    path = list(sys.path)
    for k in ours:
        del sys.modules[k]
    try:
        spec = importlib.util.spec_from_file_location(
            "bench_baseline", os.path.join(root, "bench", "controller", "bench_controller.py"))
        if spec is None or spec.loader is None:
            raise SystemExit(f"--baseline {root}: no bench/controller/bench_controller.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        for k in [k for k in sys.modules if k == "irqres" or k.startswith("irqres.")]:
            del sys.modules[k]
        sys.modules.update(ours)
        sys.path[:] = path
    return mod


def us(ns: float) -> str:
    return f"{ns / 1000:.2f} µs"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--targets", type=int, default=100)
    ap.add_argument("--intervals", type=int, default=200)
    ap.add_argument("--reps", type=int, default=200, help="set-budget repetitions")
    ap.add_argument("--no-daemon", action="store_true")
    ap.add_argument("--stats-threads", type=int, default=50,
                    help="reserved processes for the many-thread `stats` row (1: none)")
    ap.add_argument("--baseline", metavar="DIR", help="also measure rows 1-2 of this tree")
    a = ap.parse_args()
    base = load_baseline(a.baseline) if a.baseline else None
    upd, tick, b_upd, b_tick = [], [], [], []
    for _ in range(a.runs):
        if base is not None:
            b_upd.append(base.bench_update(a.targets, a.intervals * 5))
            b_tick.append(base.bench_tick(a.targets, a.intervals))
        upd.append(bench_update(a.targets, a.intervals * 5))
        tick.append(bench_tick(a.targets, a.intervals))
    med_tick = statistics.median(tick)
    print(f"| measure | median of {a.runs} runs | runs |")
    print("|---|---|---|")
    rows = [("controller update, per target per interval", upd, b_upd),
            (f"tune loop work per target per interval ({a.targets} targets, stats decoded)",
             tick, b_tick)]
    for label, v, b in rows:
        print(f"| {label} | {us(statistics.median(v))} | " + ", ".join(us(x) for x in v)
              + " |")
        if b:
            print(f"| the same, baseline {a.baseline} | {us(statistics.median(b))} | "
                  + ", ".join(us(x) for x in b) + " |")
    for sample_ms in (1, 10, 100):
        print(f"| CPU share, {a.targets} targets sampled every {sample_ms} ms | "
              f"{100 * med_tick * a.targets / (sample_ms * 1e6):.1f} % of one CPU | |")
    reads = [bench_proc_reads() for _ in range(a.runs)]
    print(f"| read /proc/PID/schedstat + /proc/PID/status (per thread in `stats`) | "
          f"{us(statistics.median(x[0] for x in reads))} | status alone "
          f"{us(statistics.median(x[1] for x in reads))} |")
    if a.no_daemon:
        return
    r = bench_daemon(a.reps)
    if r is None:
        print("\n(irqresd could not run here: no daemon measurements)")
        return
    for key, label in (("stats_rtt", "`stats` round trip to irqresd (1 thread)"),
                       ("in_force", "decision -> budget in force (set-budget + sched_getattr)")):
        v = sorted(r[key])
        print(f"| {label} | {us(statistics.median(v))} | p90 {us(v[int(0.9 * len(v))])}, "
              f"max {us(v[-1])}, n={len(v)} |")
    print(f"| sched_getattr reads until the new runtime showed | max {max(r['polls'])} | |")
    many = bench_stats_threads(a.reps, a.stats_threads) if a.stats_threads > 1 else None
    if many is None:
        return
    one, big = statistics.median(r["stats_rtt"]), statistics.median(many)
    print(f"| `stats` round trip, {a.stats_threads} reserved threads, decoded | {us(big)} | "
          f"p90 {us(sorted(many)[int(0.9 * len(many))])}, n={len(many)} |")
    print(f"| the same per thread beyond the first | "
          f"{us((big - one) / (a.stats_threads - 1))} | |")


if __name__ == "__main__":
    main()
