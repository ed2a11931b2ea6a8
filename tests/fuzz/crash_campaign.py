#!/usr/bin/env python3
"""Crash campaign: SIGKILL irqresd at a random instant while it changes 20 tasks, then
recover as documented and check that every task is back to its original policy,
parameters and cgroup.

Run as root on the host, under the host lock:

    flock /tmp/irqres-host.lock nice -n 19 tests/fuzz/crash_campaign.py --trials 100

The tasks are processes this script spawns (never anything else), with varied original
scheduling (SCHED_OTHER at nice 0 and 7, SCHED_BATCH at nice 3, SCHED_FIFO, SCHED_RR),
half of them in a cgroup v2 group the script creates. The phases, the instants of the
kills and the recovery are crashlib.py's (shared with the PREEMPT_RT guest's campaign on
the NIC's IRQ thread, tests/vm/test_crash_campaign.py). A task left changed after
recovery is a failure. With --damage N, N more trials damage the state file a kill left
(crashlib.py) and check that the restore restores exactly what the intact records name,
fails, and keeps the file. The script prints one JSON summary with the counts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "integration"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from crashlib import Campaign, Irqresd  # noqa: E402
from irqresd_util import (  # noqa: E402
    IRQRESD,
    profile_text,
    sched_getattr,
    task_target,
    wait_for_dl_headroom,
)

CGROUP_ROOTS = ("/sys/fs/cgroup/unified", "/sys/fs/cgroup")

_SLEEPER = "import time\nwhile True:\n    time.sleep(1000)\n"


@dataclass(frozen=True)
class Orig:
    policy: int
    priority: int
    nice: int
    runtime_ns: int
    deadline_ns: int
    period_ns: int
    cgroup: str


def cgroup_of(pid: int) -> str:
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        if line.startswith("0::"):
            return line[3:]
    return ""


def snapshot(pid: int) -> Orig:
    s = sched_getattr(pid)
    return Orig(s.policy, s.priority, os.getpriority(os.PRIO_PROCESS, pid), s.runtime_ns,
                s.deadline_ns, s.period_ns, cgroup_of(pid))


def v2_root() -> Path | None:
    for r in CGROUP_ROOTS:
        if Path(r, "cgroup.procs").exists() and Path(r, "cgroup.controllers").exists():
            return Path(r)
    return None


class Tasks:
    """The spawned tasks, their original attributes and their cgroup."""

    def __init__(self, n: int) -> None:
        self.procs = [subprocess.Popen([sys.executable, "-c", _SLEEPER]) for _ in range(n)]
        self.group: Path | None = None
        self.home: Path | None = None
        root = v2_root()
        if root is not None:
            self.home = root
            self.group = root / f"irqres-crash-{os.getpid()}"
            self.group.mkdir(exist_ok=True)
        for i, p in enumerate(self.procs):
            kind = i % 5
            if kind == 1:
                os.setpriority(os.PRIO_PROCESS, p.pid, 7)
            elif kind == 2:
                os.sched_setscheduler(p.pid, os.SCHED_FIFO, os.sched_param(10 + i))
            elif kind == 3:
                os.sched_setscheduler(p.pid, os.SCHED_RR, os.sched_param(5))
            elif kind == 4:
                os.sched_setscheduler(p.pid, os.SCHED_BATCH, os.sched_param(0))
                os.setpriority(os.PRIO_PROCESS, p.pid, 3)
            if self.group is not None and i % 2 == 0:
                (self.group / "cgroup.procs").write_text(str(p.pid))
        self.orig = {p.pid: snapshot(p.pid) for p in self.procs}

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    @property
    def total(self) -> int:
        return len(self.procs)

    def changed(self) -> list[int]:
        return [pid for pid in self.pids if snapshot(pid) != self.orig[pid]]

    def residue(self) -> list[str]:
        return []  # no partition on the host: the tasks keep their full affinity

    def progress(self, phase: str) -> int:
        """How many of the tasks the killed operation had done: at the new budget for
        set-budget, back to the original for restore, changed for the others."""
        if phase == "set-budget":
            return sum(sched_getattr(pid).runtime_ns == 2_000_000 for pid in self.pids)
        changed = len(self.changed())
        return self.total - changed if phase in ("restore", "recovery") else changed

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        if self.group is not None:
            for _ in range(100):
                try:
                    self.group.rmdir()
                    break
                except OSError:
                    time.sleep(0.02)


def campaign(trials: int, n_tasks: int = 20, seed: int = 1, damage: int = 0) -> dict:
    if os.geteuid() != 0:
        raise SystemExit("crash_campaign: needs root (sched_setattr on spawned tasks)")
    wait_for_dl_headroom()
    tasks = Tasks(n_tasks)
    try:
        with tempfile.TemporaryDirectory(prefix="irqres-crash-") as tmp:
            work = Path(tmp)
            profile = work / "profile.yaml"
            profile.write_text(profile_text(*(
                task_target(f"t{i}", "1ms", "100ms", pid=pid)
                for i, pid in enumerate(tasks.pids))))
            d = Irqresd(IRQRESD, work / "run", work / "irqresd.log")
            c = Campaign(tasks, d, profile, [f"set-budget t{i} 2ms" for i in range(n_tasks)],
                         seed)
            try:
                out = c.run(trials)
                out["damage"] = c.damage_trials(damage)
            finally:
                d.kill()
                if d.state_left:
                    d.restore()
            out["tasks"] = n_tasks
            out["cgroup"] = str(tasks.group) if tasks.group else None
            out["originals"] = sorted({json.dumps(asdict(o)) for o in tasks.orig.values()})
            return out
    finally:
        tasks.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--tasks", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--damage", type=int, default=0,
                    help="then this many trials with the state file damaged")
    a = ap.parse_args()
    t0 = time.monotonic()
    out = campaign(a.trials, a.tasks, a.seed, a.damage)
    out["seconds"] = round(time.monotonic() - t0, 1)
    print(json.dumps(out, indent=1))
    sys.exit(1 if out["threads_left_changed"] or out["failures"] or out["damage"]["failures"]
             else 0)


if __name__ == "__main__":
    main()
