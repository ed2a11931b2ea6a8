"""Hotplug: a matching task that appears after irqresd started gets its reservation."""

from __future__ import annotations

import subprocess
import sys

import pytest
from irqresd_util import (
    SCHED_DEADLINE,
    SCHED_OTHER,
    profile_text,
    run_irqresd,
    sched_getattr,
    task_target,
    unique_comm,
    wait_for,
)

pytestmark = pytest.mark.root

MS = 1_000_000


def start_with_late_target(spawn, daemon, profile, *args):
    """irqresd with a target on a task spawned now and one ("late", 2ms/20ms) on a comm
    that no task has yet; returns the first task, that comm and the daemon."""
    anchor = spawn()
    comm = unique_comm()
    d = daemon().start(profile(profile_text(
        task_target("anchor", "1ms", "10ms", pid=anchor.pid),
        task_target("late", "2ms", "20ms", comm=comm),
    )), *args)
    return anchor, comm, d


@pytest.mark.parametrize("args, within", [((), 2.0), (("--no-netlink", "--rescan", "100ms"), 3.0)])
def test_new_task_by_comm(spawn, daemon, profile, args, within):
    anchor = spawn()
    comm = unique_comm()
    d = daemon().start(profile(profile_text(
        task_target("anchor", "1ms", "10ms", pid=anchor.pid),
        task_target("late", "2ms", "20ms", comm=comm),
    )), *args)
    assert "target 'late' matches no thread yet" in d.log_text()
    late = spawn(comm=comm)
    s = wait_for(lambda: (x := sched_getattr(late.pid)).policy == SCHED_DEADLINE and x, within)
    assert (s.runtime_ns, s.deadline_ns, s.period_ns) == (2 * MS, 20 * MS, 20 * MS)
    st = d.request("status")
    late_t = next(t for t in st["targets"] if t["name"] == "late")
    assert [t["pid"] for t in late_t["threads"]] == [late.pid]
    # it exits: forgotten quietly, and the daemon goes on
    late.kill()
    late.wait()
    wait_for(lambda: not next(t for t in d.request("status")["targets"]
                              if t["name"] == "late")["threads"])
    assert d.stop() == 0
    assert sched_getattr(anchor.pid).policy == SCHED_OTHER
    assert f"pid {late.pid}" in d.log_text()  # its reservation was logged


def test_budget_of_target_applies_to_later_threads(spawn, daemon, profile):
    anchor = spawn()
    comm = unique_comm()
    d = daemon().start(profile(profile_text(
        task_target("anchor", "1ms", "10ms", pid=anchor.pid),
        task_target("late", "2ms", "20ms", comm=comm),
    )))
    assert d.request("set-budget late 3ms")["ok"]
    late = spawn(comm=comm)
    s = wait_for(lambda: (x := sched_getattr(late.pid)).policy == SCHED_DEADLINE and x)
    assert s.runtime_ns == 3 * MS


def test_rename_through_proc_comm(spawn, daemon, profile):
    # with the proc connector, user tasks are not listed by rescans: the rename event
    # that writing /proc/PID/comm sends is what must find the task
    anchor = spawn()
    comm = unique_comm()
    d = daemon().start(profile(profile_text(
        task_target("anchor", "1ms", "10ms", pid=anchor.pid),
        task_target("late", "2ms", "20ms", comm=comm),
    )), "--rescan", "0")
    # (only a process itself may write its /proc/PID/comm)
    late = subprocess.Popen([sys.executable, "-c", "import sys, time; "
                             "open('/proc/self/comm', 'w').write(sys.argv[1]); time.sleep(1000)",
                             comm])
    spawn.procs.append(late)
    wait_for(lambda: sched_getattr(late.pid).policy == SCHED_DEADLINE, 2.0)
    assert d.stop() == 0


def test_daemon_waits_when_nothing_matches_yet(spawn, daemon, profile):
    # at boot a NIC's IRQ thread appears only when the link goes up: the daemon serves
    # and waits, while --once (and apply over the socket) call it an error
    comm = unique_comm()
    p = profile(profile_text(task_target("late", "2ms", "20ms", comm=comm)))
    r = run_irqresd("--once", "-p", str(p), "--run-dir", str(daemon().run_dir))
    assert r.returncode == 1 and "matches no thread" in r.stderr
    d = daemon().start(p)
    assert "waits for them to appear" in d.log_text()
    assert d.request("status")["profile"] == str(p)
    r = d.send_profile("apply", p)
    assert not r["ok"] and "matches no thread" in r["error"]
    late = spawn(comm=comm)
    wait_for(lambda: sched_getattr(late.pid).policy == SCHED_DEADLINE, 2.0)
    assert d.stop() == 0
    assert sched_getattr(late.pid).policy == SCHED_OTHER


def test_new_task_refused_for_bandwidth_is_reserved_once_it_comes_free(spawn, daemon, profile):
    """Admission refuses a new task while other reservations hold the bandwidth; irqresd
    tries again (backing off from 1 s) and reserves it once one of them leaves."""
    from irqres import schedattr
    hogs = [spawn(), spawn()]
    for h in hogs:     # 2 x 0.7 CPUs, held by tasks of this test, not by irqresd
        assert schedattr.set_attr(h.pid, SCHED_DEADLINE, runtime_ns=7 * MS,
                                  deadline_ns=10 * MS, period_ns=10 * MS) == 0
    anchor = spawn()
    comm = unique_comm()
    d = daemon().start(profile(profile_text(
        task_target("anchor", "1ms", "100ms", pid=anchor.pid),
        task_target("late", "6ms", "10ms", comm=comm),
    )))
    late = spawn(comm=comm)
    wait_for(lambda: "not reserved" in d.log_text(), 5)
    assert sched_getattr(late.pid).policy == SCHED_OTHER
    hogs[0].kill()
    hogs[0].wait()
    s = wait_for(lambda: (x := sched_getattr(late.pid)).policy == SCHED_DEADLINE and x, 10)
    assert (s.runtime_ns, s.period_ns) == (6 * MS, 10 * MS)
    assert d.stop() == 0
    assert sched_getattr(late.pid).policy == SCHED_OTHER
    assert "tries again as bandwidth comes free" in d.log_text()
