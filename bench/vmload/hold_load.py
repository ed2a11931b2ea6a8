"""Run a command while holding the host's 1-minute load average at or above a target.

    python3 bench/vmload/hold_load.py --target 8 --log load.jsonl -- make test-vm

The load average is the mean number of runnable tasks, so the loops (child processes
spinning at the default nice value, taking their full share of the CPUs) make up what the
rest of the machine leaves short of the target: every second it counts the runnable tasks
other than its loops (/proc/loadavg), and every ``--interval`` seconds it runs as many
loops as the target less the mean of those counts (one more while the 1-minute load is
still below the target). Each decision goes to ``--log`` as a JSON line (time since the
start and wall-clock time in integer ns, the 1-minute load, the mean runnable tasks
besides the loops, the loops running from then on). When the command exits, the loops
are killed, a summary of the load over the command's lifetime (after the first minute,
which the load average needs to rise) is printed, and the command's exit status is
returned.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

NS = 1_000_000_000
# The 1-minute load average follows a change with a time constant of a minute; samples
# before this much time has passed say more about the start than about the run.
SETTLE_NS = 60 * NS


def read_loadavg(path: Path = Path("/proc/loadavg")) -> tuple[float, int]:
    """The 1-minute load average and the number of runnable tasks now."""
    fields = path.read_text().split()
    return float(fields[0]), int(fields[3].split("/")[0])


def step(load1: float, others: float, target: float, max_loops: int) -> int:
    """How many loops to run next: the target less the other runnable tasks (mean over the
    last interval), one more while the 1-minute load lags below the target."""
    want = math.ceil(target - others) + (1 if load1 < target else 0)
    return max(0, min(max_loops, want))


PR_SET_PDEATHSIG = 1


def _spin() -> None:
    """Spin until killed, or until the holder dies (a holder killed with SIGKILL must not
    leave its loops running)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    while True:
        pass


class Loops:
    """Busy-loop child processes, added and removed one at a time."""

    def __init__(self) -> None:
        self.pids: list[int] = []

    def resize(self, n: int) -> None:
        while len(self.pids) < n:
            pid = os.fork()
            if pid == 0:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                _spin()
            self.pids.append(pid)
        while len(self.pids) > n:
            pid = self.pids.pop()
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def summary(samples: list[dict]) -> dict:
    """The load over the run, leaving out its first minute."""
    settled = [s for s in samples if s["t_ns"] >= SETTLE_NS] or samples
    loads = [s["load1"] for s in settled]
    return {"samples": len(settled),
            "load1_min": min(loads), "load1_median": statistics.median(loads),
            "load1_max": max(loads),
            "below_target": sum(1 for s in settled if s["load1"] < s["target"]),
            "loops_max": max(s["loops"] for s in settled)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", type=float, default=8.0,
                    help="1-minute load average to hold at or above (default 8)")
    ap.add_argument("--interval", type=float, default=15.0,
                    help="seconds between samples (default 15)")
    ap.add_argument("--max-loops", type=int, default=16,
                    help="never run more busy loops than this (default 16)")
    ap.add_argument("--log", type=Path, required=True, help="JSON lines, one per sample")
    ap.add_argument("command", nargs=argparse.REMAINDER,
                    help="the command to run, after --")
    args = ap.parse_args(argv)
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("command: nothing to run (give it after --)")
    for name in ("target", "interval"):
        if getattr(args, name) <= 0:
            ap.error(f"--{name}: must be above 0, not {getattr(args, name)}")
    if args.max_loops < 1:
        ap.error(f"--max-loops: must be at least 1, not {args.max_loops}")

    loops = Loops()
    samples: list[dict] = []
    start = time.monotonic_ns()
    proc = subprocess.Popen(cmd)
    stop = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    try:
        with args.log.open("w") as log:
            others = [0.0]
            while proc.poll() is None:
                load1, _ = read_loadavg()
                mean = statistics.fmean(others)
                loops.resize(step(load1, mean, args.target, args.max_loops))
                s = {"t_ns": time.monotonic_ns() - start, "unix_ns": time.time_ns(),
                     "load1": load1,
                     "others": round(mean, 2), "loops": len(loops.pids),
                     "target": args.target}
                samples.append(s)
                log.write(json.dumps(s) + "\n")
                log.flush()
                others = []
                next_ns = time.monotonic_ns() + int(args.interval * NS)
                while proc.poll() is None and time.monotonic_ns() < next_ns:
                    time.sleep(1)
                    # This process is runnable while it reads: not one of the others.
                    others.append(max(0, read_loadavg()[1] - 1 - len(loops.pids)))
                others = others or [0.0]
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait()
    finally:
        loops.resize(0)
        signal.signal(signal.SIGTERM, stop)
    wall_ns = time.monotonic_ns() - start
    if samples:
        out = {"command": cmd, "exit": proc.returncode, "wall_ns": wall_ns,
               **summary(samples)}
        print("hold_load: " + json.dumps(out), file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
