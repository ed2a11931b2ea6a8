"""Task targets never select init or irqresd itself, and set-budget does not fail on a
thread of its target that has just exited (rescans only: no exit event yet)."""

from __future__ import annotations

import os
import signal

import pytest
from irqresd_util import (
    SCHED_DEADLINE,
    profile_text,
    run_irqresd,
    sched_getattr,
    task_target,
    unique_comm,
    wait_for,
)

pytestmark = pytest.mark.root


def test_glob_never_selects_irqresd(spawn, daemon, profile):
    a = spawn()
    d = daemon().start(profile(profile_text(task_target("a", "1ms", "100ms", pid=a.pid))))
    p = profile(profile_text(task_target("self", "1ms", "100ms", comm="irqres?")))
    r = d.send_profile("plan", p)
    assert r["ok"] and r["plan"]["items"] == [], r
    assert "matches no thread" in r["plan"]["summary"], r
    r = run_irqresd("--dry-run", "-p", str(p), "--run-dir", str(d.run_dir) + "-dry")
    assert r.returncode != 0 and f"pid {d.proc.pid}" not in r.stdout + r.stderr
    assert sched_getattr(d.proc.pid).policy != SCHED_DEADLINE
    assert d.stop() == 0


def test_set_budget_right_after_an_exit_without_events(spawn, daemon, profile):
    comm = unique_comm()
    a, b = spawn(comm), spawn(comm)
    d = daemon().start(profile(profile_text(task_target("t", "1ms", "100ms", comm=comm))),
                       "--no-netlink", "--rescan", "30s")
    wait_for(lambda: all(sched_getattr(p.pid).policy == SCHED_DEADLINE for p in (a, b)))
    os.kill(b.pid, signal.SIGKILL)
    b.wait()
    r = d.request("set-budget t 2ms")
    assert r["ok"], r
    assert r["pids"] == [a.pid]
    assert sched_getattr(a.pid).runtime_ns == 2_000_000
    assert d.stop() == 0
