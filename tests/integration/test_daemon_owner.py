"""One owner per thread: a second irqresd (another run dir) that selects a thread the
first one reserved refuses it by name instead of fighting over it; one that takes it
over (take_over: true) is left alone by the first, which takes it back when it is
given back."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time

import pytest
from irqresd_util import (
    SCHED_DEADLINE,
    profile_text,
    run_irqresd,
    sched_getattr,
    task_target,
    wait_for,
)

pytestmark = pytest.mark.root

MS = 1_000_000


def reapplies(d) -> int:
    return d.log_text().count("SCHED_DEADLINE 3ms/10ms") + d.log_text().count(
        "reservation re-applied")


def test_second_daemon_refuses_the_first_ones_thread(spawn, daemon, profile):
    a = spawn()
    first = daemon().start(profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid))),
                           "--rescan", "100ms")
    p2 = profile(profile_text(task_target("b", "3ms", "10ms", pid=a.pid)))
    # the plan names the holder, in text and JSON, and changes nothing
    second = daemon()
    r = run_irqresd("--dry-run", "--json", "-p", str(p2), "--run-dir", str(second.run_dir))
    assert r.returncode != 0
    (item,) = json.loads(r.stdout)["items"]
    assert item["owner"] == {
        "kind": "irqresd", "pid": first.proc.pid, "run_dir": str(first.run_dir),
        "scheduling": "deadline 2ms/10ms/10ms", "text": item["owner"]["text"]}
    assert item["verdict"].startswith(
        f"taken: reserved by another irqresd (pid {first.proc.pid}, run dir "
        f"{first.run_dir}): scheduling is deadline 2ms/10ms/10ms")
    r = run_irqresd("--dry-run", "-p", str(p2), "--run-dir", str(second.run_dir))
    assert "REFUSED: another irqresd or tool holds a thread it selects" in r.stdout
    assert f"taken: reserved by another irqresd (pid {first.proc.pid}" in r.stdout
    # the second daemon refuses to start on it; the first keeps it, and re-applies nothing
    second.start(p2, "--rescan", "100ms", wait=False)
    assert second.proc.wait(30) != 0
    assert f"reserved by another irqresd (pid {first.proc.pid}" in second.log_text()
    time.sleep(2)
    s = sched_getattr(a.pid)
    assert (s.policy, s.runtime_ns) == (SCHED_DEADLINE, 2 * MS)
    assert "changed behind irqresd's back" not in first.log_text()
    assert first.stop() == 0


def test_taken_over_thread_is_left_alone_then_given_back(spawn, daemon, profile):
    a = spawn()
    first = daemon().start(profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid))),
                           "--rescan", "100ms")
    p2 = profile(profile_text(task_target("b", "3ms", "10ms", pid=a.pid)
                              + "    take_over: true\n"))
    second = daemon().start(p2, "--rescan", "100ms")
    assert "take_over: taken from its holder, reserved by another irqresd" in \
        second.log_text()
    wait_for(lambda: "taken behind irqresd's back" in first.log_text(), 3.0)
    # no fight: over 2 s (20 rescans each) the second applied once, the first never
    time.sleep(2)
    assert reapplies(second) == 1 and "reservation re-applied" not in first.log_text()
    assert "changed behind irqresd's back" not in second.log_text()
    assert sched_getattr(a.pid).runtime_ns == 3 * MS
    th = first.request("status")["targets"][0]["threads"][0]
    assert th["taken"] is True
    assert th["drift"].startswith("scheduling is deadline 3ms/10ms/10ms, the reservation "
                                  "is deadline 2ms/10ms/10ms; reserved by another irqresd "
                                  f"(pid {second.proc.pid}, run dir {second.run_dir})")
    # the second one stops and restores what it found: the first's reservation
    assert second.stop() == 0
    wait_for(lambda: "back in line" in first.log_text(), 3.0)
    assert first.request("status")["targets"][0]["threads"][0]["taken"] is False
    assert sched_getattr(a.pid).runtime_ns == 2 * MS
    assert first.stop() == 0


def test_boost_by_another_tool_is_not_fought(spawn, daemon, profile):
    """stalld's boost (SCHED_DEADLINE 20us/1s for a few seconds), done here with chrt:
    drift: reapply does not undo it; the thread is shown as taken until the boost ends."""
    if not shutil.which("chrt"):
        pytest.skip("chrt (util-linux) is missing")
    a = spawn()
    d = daemon().start(profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid))),
                       "--rescan", "100ms")
    chrt_d(a.pid, 20_000, 1_000_000_000)
    wait_for(lambda: "taken behind irqresd's back" in d.log_text(), 3.0)
    time.sleep(1)   # ten rescans
    s = sched_getattr(a.pid)
    assert (s.policy, s.runtime_ns, s.period_ns) == (SCHED_DEADLINE, 20_000, 1_000_000_000)
    assert "reservation re-applied" not in d.log_text()
    assert d.log_text().count("taken behind irqresd's back") == 1
    assert ("scheduling is deadline 20us/1s/1s, the reservation is deadline 2ms/10ms/10ms; "
            "set by another tool: scheduling is deadline 20us/1s/1s") in d.log_text()
    assert d.request("status")["targets"][0]["threads"][0]["taken"] is True
    r = subprocess.run([sys.executable, "-m", "irqres", "stats", "--openmetrics", "--socket",
                        str(d.sock)], capture_output=True, text=True, timeout=30)
    comm = open(f"/proc/{a.pid}/comm").read().strip()
    assert f'irqres_thread_taken{{target="a",comm="{comm}",pid="{a.pid}"}} 1' in r.stdout, \
        r.stdout
    # the boost ends: the tool puts back what it found, irqres's reservation
    chrt_d(a.pid, 2 * MS, 10 * MS)
    wait_for(lambda: "back in line" in d.log_text(), 3.0)
    assert d.request("status")["targets"][0]["threads"][0]["taken"] is False
    assert "reservation re-applied" not in d.log_text()
    assert d.stop() == 0


def chrt_d(pid: int, runtime: int, period: int) -> None:
    subprocess.run(["chrt", "-d", "-T", str(runtime), "-D", str(period), "-P", str(period),
                    "-p", "0", str(pid)], check=True)
