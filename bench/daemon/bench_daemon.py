#!/usr/bin/env python3
"""irqresd benchmarks: hotplug reaction time and idle cost. Needs root.

Reaction time: a child process renames itself (prctl PR_SET_NAME) to a comm that a task
target of the running irqresd selects; the time from just before the rename (taken by the
child, CLOCK_MONOTONIC) to the moment sched_getattr() first shows its SCHED_DEADLINE
reservation (polled by the parent in a tight loop). Event-driven (proc connector) and
rescan-only (--no-netlink) side by side.

Idle cost: irqresd with a profile in force and nothing to do, CPU time (utime + stime of
/proc/PID/stat) and VmRSS over a window.

With --unit FILE: event-driven reaction only, irqresd run with exactly the scheduling
the unit gives it (CPUSchedulingPolicy/Priority/ResetOnFork, LimitRTTIME, Nice) and at
SCHED_OTHER, in alternating rounds so that both arms see the same host load.

Prints a Markdown report on stdout.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import platform
import random
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IRQRESD = Path(os.environ.get("IRQRESD", ROOT / "build" / "daemon" / "irqresd"))
SYS_SCHED_GETATTR = {"x86_64": 315, "aarch64": 275}[platform.machine()]
SCHED_DEADLINE = 6
PR_SET_NAME = 15
# the state file lives in /run (tmpfs) on a real system: fsync costs what it costs there
RUN_BASE = "/dev/shm" if Path("/dev/shm").is_dir() else None

libc = ctypes.CDLL(None, use_errno=True)
attr_buf = ctypes.create_string_buffer(56)


def policy_of(pid: int) -> int:
    if libc.syscall(SYS_SCHED_GETATTR, pid, attr_buf, 48, 0) != 0:
        return -1
    return int.from_bytes(attr_buf.raw[4:8], "little")


SCHED_POLICIES = {"other": os.SCHED_OTHER, "batch": os.SCHED_BATCH, "idle": os.SCHED_IDLE,
                  "fifo": os.SCHED_FIFO, "rr": os.SCHED_RR}


class UnitSched:
    """The scheduling a systemd unit gives its processes, applied the way systemd does
    (in the child, before exec): policy and priority (with SCHED_RESET_ON_FORK),
    RLIMIT_RTTIME, nice."""

    def __init__(self, path: Path | None):
        """``path`` None: what a process gets without any of these keys (SCHED_OTHER)."""
        self.path = path
        self.keys: dict[str, str] = {}
        section = ""
        for raw in path.read_text().splitlines() if path else []:
            line = raw.strip()
            if line.startswith("["):
                section = line
            elif section == "[Service]" and "=" in line and not line.startswith("#"):
                k, v = line.split("=", 1)
                if k in ("CPUSchedulingPolicy", "CPUSchedulingPriority", "LimitRTTIME",
                         "CPUSchedulingResetOnFork", "Nice"):
                    self.keys[k] = v.strip()
        self.policy = SCHED_POLICIES[self.keys.get("CPUSchedulingPolicy", "other")]
        self.priority = int(self.keys.get("CPUSchedulingPriority", "0"))
        self.reset_on_fork = self.keys.get("CPUSchedulingResetOnFork", "no") in ("yes", "true")
        self.nice = int(self.keys.get("Nice", "0"))
        self.rttime = None
        if "LimitRTTIME" in self.keys:
            soft, _, hard = self.keys["LimitRTTIME"].partition(":")
            self.rttime = (self._us(soft), self._us(hard or soft))

    def _us(self, v: str) -> int:
        m = re.fullmatch(r"(\d+)(us|ms|s|)", v)
        if not m:
            sys.exit(f"{self.path}: LimitRTTIME={v}: not a time this benchmark reads")
        return int(m[1]) * {"us": 1, "ms": 1000, "s": 1_000_000, "": 1}[m[2]]

    def describe(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.keys.items())

    def apply(self) -> None:  # in the child, between fork and exec
        if self.nice:
            os.nice(self.nice)
        if self.rttime:
            resource.setrlimit(resource.RLIMIT_RTTIME, self.rttime)
        flags = os.SCHED_RESET_ON_FORK if self.reset_on_fork else 0
        os.sched_setscheduler(0, self.policy | flags, os.sched_param(self.priority))


def start_daemon(tmp: Path, profile: Path, args: list[str], nice: int = 0,
                 fifo: int = 0, sched: UnitSched | None = None) -> subprocess.Popen:
    run = tmp / "run"
    with open(tmp / "irqresd.log", "ab") as log:  # the child keeps its own copy
        p = subprocess.Popen([str(IRQRESD), "-p", str(profile), "--run-dir", str(run), *args],
                             stdout=log, stderr=subprocess.STDOUT,
                             preexec_fn=sched.apply if sched else None)
    if nice:
        os.setpriority(os.PRIO_PROCESS, p.pid, nice)
    if fifo:  # one above the measuring loop, so that it is never kept waiting by it
        os.sched_setscheduler(p.pid, os.SCHED_FIFO, os.sched_param(fifo + 1))
    end = time.monotonic() + 10
    while not (run / "irqresd.sock").exists():
        if p.poll() is not None or time.monotonic() > end:
            sys.exit(f"irqresd did not start: {(tmp / 'irqresd.log').read_text()}")
        time.sleep(0.01)
    return p


def stop_daemon(p: subprocess.Popen) -> None:
    p.send_signal(signal.SIGTERM)
    p.wait(30)


def write_profile(tmp: Path, anchor: int, comm: str) -> Path:
    prof = tmp / "profile.yaml"
    prof.write_text(
        "version: 1\ntargets:\n"
        f"  - name: anchor\n    task: {{pid: {anchor}}}\n    runtime: 1ms\n    period: 100ms\n"
        f"  - name: late\n    task: {{comm: \"{comm}*\"}}\n    runtime: 1ms\n    period: 100ms\n"
    )
    return prof


def one_sample(comm: bytes, timeout_s: float) -> int | None:
    """ns from the child's rename to its reservation in force; None on timeout."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        t0 = time.monotonic_ns()
        libc.prctl(PR_SET_NAME, comm, 0, 0, 0)
        os.write(w, t0.to_bytes(8, "little"))
        signal.pause()
        os._exit(0)
    os.close(w)
    t1 = None
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if policy_of(pid) == SCHED_DEADLINE:
            t1 = time.monotonic_ns()
            break
    t0 = int.from_bytes(os.read(r, 8), "little")
    os.close(r)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None if t1 is None else t1 - t0


def commit() -> str:
    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True, check=False)
    return git.stdout.strip() or "unknown"


def count_threads() -> int:
    return sum(1 for _ in Path("/proc").glob("[0-9]*/task/[0-9]*"))


def pct(xs: list[int], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


def reaction(tmp: Path, mode: str, n: int, rescan_ms: int, nice: int, fifo: int,
             sched: UnitSched | None = None, seed: int = 1) -> dict:
    anchor = subprocess.Popen(["sleep", "100000"])
    comm = f"rb{os.getpid() % 10000}"
    # event-driven: the default fallback rescan (1 s); rescan-only: every rescan_ms
    args = ["--rescan", "1s"] if mode == "events" else ["--rescan", f"{rescan_ms}ms",
                                                         "--no-netlink"]
    (tmp / "irqresd.log").unlink(missing_ok=True)
    d = start_daemon(tmp, write_profile(tmp, anchor.pid, comm), [*args, "-v"], nice, fifo,
                     sched)
    samples, lost = [], 0
    rng = random.Random(seed)
    try:
        if sched is not None:  # the benchmark measures what it says it does
            got = os.sched_getscheduler(d.pid)
            want = sched.policy | (os.SCHED_RESET_ON_FORK if sched.reset_on_fork else 0)
            prio = os.sched_getparam(d.pid).sched_priority
            if got != want or prio != sched.priority:
                sys.exit(f"irqresd runs at policy {got} priority {prio}, not the unit's "
                         f"{want}/{sched.priority}")
        for i in range(n):
            v = one_sample(f"{comm}-{i}".encode()[:15], timeout_s=5.0)
            if v is None:
                lost += 1
            else:
                samples.append(v)
            # a random pause, so that samples do not start in step with the rescan timer
            # (each would otherwise begin right after the rescan that caught the last one)
            time.sleep(0.002 + rng.uniform(0, rescan_ms / 1000))
    finally:
        stop_daemon(d)
        anchor.kill()
        anchor.wait()
    # the daemon's own share: reading + matching the thread, then applying (its debug log)
    inside = [int(m[1]) + int(m[2]) for m in re.finditer(
        r"read and matched in (\d+) us, applied in (\d+) us",
        (tmp / "irqresd.log").read_text())]
    return {"mode": mode, "args": " ".join(args), "n": len(samples), "lost": lost,
            "samples": samples, "inside_us": inside,
            "inside": f"{statistics.median(inside):.0f} / {pct(inside, 0.99):.0f} us"
            if inside else "-",
            "median_us": statistics.median(samples) / 1e3, "p99_us": pct(samples, 0.99) / 1e3,
            "min_us": min(samples) / 1e3, "max_us": max(samples) / 1e3}


def idle(tmp: Path, seconds: int) -> dict:
    anchor = subprocess.Popen(["sleep", "100000"])
    d = start_daemon(tmp, write_profile(tmp, anchor.pid, "never-matches-x"), [])
    tick = os.sysconf("SC_CLK_TCK")

    def cpu_rss() -> tuple[int, int]:
        f = Path(f"/proc/{d.pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu_ns = (int(f[11]) + int(f[12])) * 1_000_000_000 // tick
        rss = next(int(line.split()[1]) for line in
                   Path(f"/proc/{d.pid}/status").read_text().splitlines()
                   if line.startswith("VmRSS:"))
        return cpu_ns, rss

    try:
        time.sleep(1)
        c0, _ = cpu_rss()
        t0 = time.monotonic_ns()
        time.sleep(seconds)
        c1, rss = cpu_rss()
        t1 = time.monotonic_ns()
    finally:
        stop_daemon(d)
        anchor.kill()
        anchor.wait()
    return {"seconds": (t1 - t0) / 1e9, "cpu_ms": (c1 - c0) / 1e6,
            "cpu_pct": 100 * (c1 - c0) / (t1 - t0), "rss_kib": rss}


def unit_comparison(unit: Path, rounds: int, n: int, fifo: int) -> None:
    """The unit's scheduling against SCHED_OTHER, event-driven, alternating rounds."""
    sched = UnitSched(unit)
    arms = {"SCHED_OTHER": UnitSched(None), "unit": sched}
    print(f"irqresd arms: SCHED_OTHER, and as {unit.name} runs it: {sched.describe()}  ")
    print(f"Measuring loop (and the children it forks): "
          f"{f'SCHED_FIFO {fifo}' if fifo else 'SCHED_OTHER'}, the same in both arms\n")
    if fifo:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(fifo))
    pooled: dict[str, list[int]] = {a: [] for a in arms}
    inside: dict[str, list[int]] = {a: [] for a in arms}
    medians: dict[str, list[float]] = {a: [] for a in arms}
    lost = dict.fromkeys(arms, 0)
    loads = [os.getloadavg()[0]]
    for r in range(rounds):
        order = list(arms) if r % 2 == 0 else list(reversed(arms))
        for arm in order:
            with tempfile.TemporaryDirectory(dir=RUN_BASE) as t:
                res = reaction(Path(t), "events", n, 100, 0, 0, arms[arm], seed=r + 1)
            pooled[arm] += res["samples"]
            inside[arm] += res["inside_us"]
            medians[arm].append(res["median_us"])
            lost[arm] += res["lost"]
            loads.append(os.getloadavg()[0])
            print(f"round {r + 1} {arm}: median {res['median_us']:.0f} us, "
                  f"load {loads[-1]:.2f}", file=sys.stderr, flush=True)
    if fifo:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    print("| irqresd scheduling | samples | missed | median of round medians (range) "
          "| pooled median | p90 | p99 | max | in irqresd: median / p99 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for arm in arms:
        xs, ms = pooled[arm], medians[arm]
        label = "SCHED_OTHER" if arm == "SCHED_OTHER" else f"unit: {sched.describe()}"
        print(f"| {label} | {len(xs)} | {lost[arm]} | {statistics.median(ms):.0f} us "
              f"({min(ms):.0f}..{max(ms):.0f}) | {statistics.median(xs) / 1e3:.0f} us | "
              f"{pct(xs, 0.90) / 1e3:.0f} us | {pct(xs, 0.99) / 1e3:.0f} us | "
              f"{max(xs) / 1e3:.0f} us | {statistics.median(inside[arm]):.0f} / "
              f"{pct(inside[arm], 0.99):.0f} us |")
    ratio = statistics.median(pooled["SCHED_OTHER"]) / statistics.median(pooled["unit"])
    print(f"\nSCHED_OTHER / unit, pooled medians: {ratio:.2f}x; "
          f"p99: {pct(pooled['SCHED_OTHER'], 0.99) / pct(pooled['unit'], 0.99):.1f}x  ")
    print(f"Load average (1 min) at the start and after each arm of each round: "
          f"{min(loads):.2f}..{max(loads):.2f} (median {statistics.median(loads):.2f})\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=200, help="samples per mode")
    ap.add_argument("--rescan-ms", type=int, default=100, help="rescan period, rescan-only run")
    ap.add_argument("--idle-seconds", type=int, default=60)
    ap.add_argument("--nice", type=int, default=0,
                    help="nice value of irqresd and of the measuring loop (the host is shared)")
    ap.add_argument("--fifo", type=int, default=0, metavar="PRIO",
                    help="run the measuring loop (and the children it forks) at SCHED_FIFO "
                         "PRIO and irqresd at PRIO+1 during the reaction runs; only these "
                         "processes, never the host's threads")
    ap.add_argument("--unit", type=Path, metavar="FILE",
                    help="compare irqresd with this unit's scheduling and at SCHED_OTHER "
                         "(event-driven reaction only; -n samples per arm and round)")
    ap.add_argument("--rounds", type=int, default=4, help="with --unit: alternating rounds")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root")
    if a.unit:
        print(f"## irqresd reaction: {a.unit} vs SCHED_OTHER, "
              f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
        print(f"Command: `python3 bench/daemon/bench_daemon.py --unit {a.unit} -n {a.n} "
              f"--rounds {a.rounds}{f' --fifo {a.fifo}' if a.fifo else ''}`  ")
        print(f"Host: {os.cpu_count()} CPUs, kernel {platform.release()}, {count_threads()} "
              f"threads, load average {os.getloadavg()[0]:.2f} at the start; "
              f"commit {commit()}\n")
        unit_comparison(a.unit, a.rounds, a.n, a.fifo)
        print(f"At the end: load average {os.getloadavg()[0]:.2f}")
        return
    if not 0 <= a.fifo < 99:
        sys.exit("--fifo: a priority of 1..98 (0: off)")
    if a.nice:
        os.setpriority(os.PRIO_PROCESS, 0, a.nice)
    print(f"## irqresd benchmarks, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    print(f"Command: `python3 bench/daemon/bench_daemon.py -n {a.n} --rescan-ms {a.rescan_ms} "
          f"--idle-seconds {a.idle_seconds}"
          f"{f' --nice {a.nice}' if a.nice else ''}{f' --fifo {a.fifo}' if a.fifo else ''}`  ")
    print(f"Host: {os.cpu_count()} CPUs, kernel {platform.release()}, {count_threads()} threads, "
          f"load average {os.getloadavg()[0]:.2f} at the start; run dir on {RUN_BASE}\n")
    print("### Reaction time: rename of a matching task -> SCHED_DEADLINE in force\n")
    print("| mode | irqresd options | samples | missed | median | p99 | min | max "
          "| in irqresd: median / p99 |")
    print("|---|---|---|---|---|---|---|---|---|")
    if a.fifo:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(a.fifo))
    for mode in ("events", "rescan"):
        with tempfile.TemporaryDirectory(dir=RUN_BASE) as t:
            r = reaction(Path(t), mode, a.n, a.rescan_ms, a.nice, a.fifo)
        print(f"| {r['mode']} | `{r['args']}` | {r['n']} | {r['lost']} | "
              f"{r['median_us']:.0f} us | {r['p99_us']:.0f} us | {r['min_us']:.0f} us | "
              f"{r['max_us']:.0f} us | {r['inside']} |", flush=True)
    if a.fifo:  # the idle run measures irqresd as it normally runs
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    with tempfile.TemporaryDirectory(dir=RUN_BASE) as t:
        r = idle(Path(t), a.idle_seconds)
    print("\n### Idle cost (profile in force, proc connector on, rescan every 1000 ms)\n")
    print(f"CPU time {r['cpu_ms']:.0f} ms over {r['seconds']:.1f} s "
          f"({r['cpu_pct']:.3f} % of one CPU); VmRSS {r['rss_kib']} KiB\n")
    print(f"At the end: {count_threads()} threads, load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
