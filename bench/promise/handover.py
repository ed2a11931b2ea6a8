#!/usr/bin/env python3
"""What a task's reservation holds beyond its job: the lock hand-over on PREEMPT_RT.

For each trace (``irqres record`` of a task, free or under SCHED_DEADLINE) and the task's
comm, from `trace-cmd report -t` (nanosecond timestamps): its jobs (switch-outs to sleep,
S), its CPU time as the kernel charges it (sched_stat_runtime) per job and its time on the
CPU per job (switch-in to switch-out), its switch-outs blocked (D) per job, the switches
to another task boosted to a deadline (priority -1: a task the reserved one waits for
through a priority-inheritance lock, on PREEMPT_RT the ktimers softirq thread holding the
timerfd's wait-queue lock) and how long those ran boosted, and the time from a blocked
switch-out to the task's next switch-in (the wait for the lock). Each figure is counted
per job (from one sleep to the next) and the row gives the median over the jobs, so the
task's start-up before its first job does not count. One Markdown row per trace.

Usage: handover.py COMM TRACE [TRACE...]
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
from dataclasses import dataclass, field

_LINE = re.compile(r"\[(\d+)\]\s+(\d+)\.(\d{9}):\s+(\w+):\s+(.*)$")
_SWITCH = re.compile(r"(.+):(-?\d+) \[(-?\d+)\] (\S+) ==> (.+):(-?\d+) \[(-?\d+)\]$")
_RUNTIME = re.compile(r"comm=.* pid=(\d+) runtime=(\d+)")


_FIGURES = ("charged_ns", "oncpu_ns", "blocked", "boosted_switches", "boosted_ns",
            "lock_wait_ns")


@dataclass
class Tally:
    jobs: list[dict[str, int]] = field(default_factory=list)   # one per sleep
    cur: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_FIGURES, 0))
    pid: int = -1
    _in_at: dict[int, int] = field(default_factory=dict)       # cpu -> task's switch-in
    _boost_at: dict[int, int] = field(default_factory=dict)    # cpu -> boosted switch-in
    _blocked_at: int = -1


def _switch(t: Tally, comm: str, cpu: int, ts: int, m: re.Match) -> None:
    prev_comm, state = m.group(1), m.group(4)
    next_comm, next_pid, next_prio = m.group(5), int(m.group(6)), int(m.group(7))
    c = t.cur
    if cpu in t._boost_at:
        c["boosted_ns"] += ts - t._boost_at.pop(cpu)
    if prev_comm == comm and cpu in t._in_at:
        c["oncpu_ns"] += ts - t._in_at.pop(cpu)
        if state.startswith("D"):
            c["blocked"] += 1
            t._blocked_at = ts
        elif state.startswith("S"):
            t.jobs.append(c)
            t.cur = dict.fromkeys(_FIGURES, 0)
    if next_comm == comm:
        t.pid = next_pid
        t._in_at[cpu] = ts
        if t._blocked_at >= 0:
            t.cur["lock_wait_ns"] += ts - t._blocked_at
            t._blocked_at = -1
    elif next_prio == -1 and next_pid > 0:
        t.cur["boosted_switches"] += 1
        t._boost_at[cpu] = ts


def tally(path: str, comm: str) -> Tally:
    text = subprocess.run(["trace-cmd", "report", "-t", path], capture_output=True, text=True,
                          check=True).stdout
    t = Tally()
    for line in text.splitlines():
        m = _LINE.search(line)
        if not m:
            continue
        cpu, ts, event, rest = int(m.group(1)), int(m.group(2) + m.group(3)), m.group(4), m.group(5)
        if event == "sched_switch":
            sw = _SWITCH.match(rest)
            if sw:
                _switch(t, comm, cpu, ts, sw)
        elif event == "sched_stat_runtime":
            r = _RUNTIME.search(rest)
            if r and int(r.group(1)) == t.pid:
                t.cur["charged_ns"] += int(r.group(2))
    return t


def median(t: Tally, what: str) -> float:
    return float(statistics.median(j[what] for j in t.jobs)) if t.jobs else float("nan")


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    comm = argv[1]
    print("| trace | jobs | charged µs | on CPU µs | blocked (D) | boosted switches | "
          "boosted µs | lock wait µs |")
    print("|---|---|---|---|---|---|---|---|")
    for path in argv[2:]:
        t = tally(path, comm)
        print(f"| {path} | {len(t.jobs)} | {median(t, 'charged_ns') / 1e3:.1f} | "
              f"{median(t, 'oncpu_ns') / 1e3:.1f} | {median(t, 'blocked'):g} | "
              f"{median(t, 'boosted_switches'):g} | {median(t, 'boosted_ns') / 1e3:.1f} | "
              f"{median(t, 'lock_wait_ns') / 1e3:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
