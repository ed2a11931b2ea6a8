"""Drift: a managed thread whose scheduling someone else changed (chrt -o -p 0 PID) is
noticed on irqresd's rescan (the kernel sends no event for it), logged, and re-applied
or, with `drift: report`, reported in status and by `irqres verify`."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from click.testing import CliRunner
from irqres.cli import main
from irqresd_util import (
    SCHED_DEADLINE,
    SCHED_OTHER,
    profile_text,
    sched_getattr,
    task_target,
    wait_for,
)

pytestmark = pytest.mark.root

MS = 1_000_000


def verify(d) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["verify"], env={"IRQRES_SOCKET": str(d.sock)},
                           catch_exceptions=False)
    return r.exit_code, r.output


def chrt_other(pid: int) -> None:
    if not shutil.which("chrt"):
        pytest.skip("chrt (util-linux) is missing")
    subprocess.run(["chrt", "-o", "-p", "0", str(pid)], check=True)
    assert sched_getattr(pid).policy == SCHED_OTHER


def test_drift_is_reapplied(spawn, daemon, profile):
    a = spawn()
    d = daemon().start(profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid))),
                       "--rescan", "100ms")
    assert sched_getattr(a.pid).policy == SCHED_DEADLINE
    chrt_other(a.pid)
    s = wait_for(lambda: (x := sched_getattr(a.pid)).policy == SCHED_DEADLINE and x, 3.0)
    assert (s.runtime_ns, s.deadline_ns, s.period_ns) == (2 * MS, 10 * MS, 10 * MS)
    wait_for(lambda: "reservation re-applied" in d.log_text())
    assert (f"(pid {a.pid}), target 'a': changed behind irqresd's back: scheduling is other "
            "nice 0, the reservation is deadline 2ms/10ms/10ms; reservation re-applied"
            ) in d.log_text()
    assert d.stop() == 0
    assert sched_getattr(a.pid).policy == SCHED_OTHER  # restored as found


def test_drift_is_reported(spawn, daemon, profile):
    a = spawn()
    text = "drift: report\n" + profile_text(task_target("a", "2ms", "10ms", pid=a.pid))
    d = daemon().start(profile(text), "--rescan", "100ms")
    chrt_other(a.pid)
    wait_for(lambda: "left as it is (drift: report)" in d.log_text(), 3.0)
    th = d.request("status")["targets"][0]["threads"][0]
    assert th["drift"] == ("scheduling is other nice 0, the reservation is deadline "
                           "2ms/10ms/10ms")
    assert sched_getattr(a.pid).policy == SCHED_OTHER
    assert d.log_text().count("changed behind irqresd's back") == 1  # once per drift
    r = CliRunner().invoke(main, ["status"], env={"IRQRES_SOCKET": str(d.sock)})
    assert (f"drift: python3 (pid {a.pid}), target a: scheduling is other nice 0, the "
            "reservation is deadline 2ms/10ms/10ms") in r.output
    # irqres verify (the profile irqresd holds, over its socket) fails on it
    code, out = verify(d)
    assert code == 1 and f"(pid {a.pid}): scheduling is other nice 0" in out
    # set back by hand: back in line, and status says so
    subprocess.run(["chrt", "-d", "-T", str(2 * MS), "-D", str(10 * MS), "-P", str(10 * MS),
                    "-p", "0", str(a.pid)], check=True)
    wait_for(lambda: "back in line" in d.log_text(), 3.0)
    assert d.request("status")["targets"][0]["threads"][0]["drift"] is None
    code, out = verify(d)
    assert code == 0 and "1 thread as the profile says" in out, out
    assert d.stop() == 0
