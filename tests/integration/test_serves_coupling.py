"""A coupled target (serves: without runtime and period) on this host: a spawned task
stands in for the device thread, spawned receivers with chrt priorities for the processes
it serves. Its SCHED_FIFO priority follows theirs within the scan interval, goes back when
they exit, and everything is given back at stop and by --restore after a SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from irqresd_util import (
    SCHED_DEADLINE,
    SCHED_FIFO,
    SCHED_OTHER,
    profile_text,
    run_irqresd,
    sched_getattr,
    unique_comm,
    wait_for,
)

pytestmark = pytest.mark.root

RESCAN = "100ms"
FOLLOW_S = 3.0          # 30 scan intervals: a shared 2-CPU host can be slow


def coupled_target(name: str, dev_pid: int, serves: str) -> str:
    return (f"  - name: {name}\n    task:\n      pid: {dev_pid}\n"
            f"    serves: {serves}\n")


def sched(pid: int) -> tuple[int, int]:
    s = sched_getattr(pid)
    return s.policy, s.priority


def fifo(pid: int, prio: int) -> None:
    os.sched_setscheduler(pid, os.SCHED_FIFO, os.sched_param(prio))


def follows(pid: int, want: tuple[int, int]) -> None:
    wait_for(lambda: sched(pid) == want, FOLLOW_S)


@contextmanager
def child(args: list[str], **kw) -> Iterator[subprocess.Popen]:
    """A process for the test, killed at the end whatever happened."""
    p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, **kw)
    try:
        yield p
    finally:
        if p.poll() is None:
            p.kill()
        p.wait()


def target_status(d, name: str) -> dict:
    return next(t for t in d.request("status")["targets"] if t["name"] == name)


def test_priority_follows_the_served_processes(spawn, daemon, profile):
    dev = spawn()
    fifo(dev.pid, 50)                   # an IRQ thread's kernel default
    comm = unique_comm("rx")
    srv = spawn(comm)
    fifo(srv.pid, 20)
    d = daemon().start(profile(profile_text(coupled_target("nic", dev.pid,
                                                           f'{{comm: "{comm}"}}'))),
                       "--rescan", RESCAN)
    # below its default: it must not preempt what is more important than its receiver
    follows(dev.pid, (SCHED_FIFO, 20))
    st = target_status(d, "nic")
    assert [(s["pid"], s["comm"], s["policy"], s["priority"]) for s in st["serves"]] == \
        [(srv.pid, comm, "fifo", 20)]
    assert st["coupling"]["priority"] == 20
    assert [(t["pid"], t["policy"], t["priority"], t["coupled"])
            for t in st["coupling"]["threads"]] == [(dev.pid, "fifo", 20, True)]
    assert st["threads"] == []          # nothing reserved
    fifo(srv.pid, 30)                   # the receiver raises its priority
    follows(dev.pid, (SCHED_FIFO, 30))
    os.sched_setscheduler(srv.pid, os.SCHED_OTHER, os.sched_param(0))
    follows(dev.pid, (SCHED_FIFO, 1))   # a SCHED_OTHER receiver: the floor
    srv2 = spawn(comm)                  # a second receiver starts
    fifo(srv2.pid, 40)
    follows(dev.pid, (SCHED_FIFO, 40))
    srv2.kill()
    srv2.wait()
    follows(dev.pid, (SCHED_FIFO, 1))
    srv.kill()
    srv.wait()
    follows(dev.pid, (SCHED_FIFO, 50))  # serves nobody: its own scheduling back
    st = target_status(d, "nic")
    assert st["serves"] == [] and st["coupling"]["priority"] is None
    assert d.stop() == 0
    assert sched(dev.pid) == (SCHED_FIFO, 50)
    assert "SCHED_FIFO 20, the priority of whom it serves (was fifo 50)" in d.log_text()


def test_stop_and_kill_restore(spawn, daemon, profile):
    dev = spawn()
    srv = spawn()
    fifo(srv.pid, 15)
    p = profile(profile_text(coupled_target("nic", dev.pid, f"{{pid: {srv.pid}}}")))
    d = daemon().start(p, "--rescan", RESCAN)
    follows(dev.pid, (SCHED_FIFO, 15))
    assert d.stop() == 0
    assert sched(dev.pid) == (SCHED_OTHER, 0)
    d = daemon().start(p, "--rescan", RESCAN)
    follows(dev.pid, (SCHED_FIFO, 15))
    assert d.stop(signal.SIGKILL) == -signal.SIGKILL
    assert sched(dev.pid) == (SCHED_FIFO, 15)      # the crash left it so
    r = run_irqresd("--restore", "--run-dir", str(d.run_dir))
    assert r.returncode == 0, r.stderr
    assert sched(dev.pid) == (SCHED_OTHER, 0)
    assert sched(srv.pid) == (SCHED_FIFO, 15)      # the served process is never changed


_RECEIVER = r"""
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
time.sleep(100000)
"""


def test_served_by_port(spawn, daemon, profile):
    dev = spawn()
    with child(["chrt", "-f", "12", sys.executable, "-c", _RECEIVER]) as rx:
        port = int(rx.stdout.readline())
        d = daemon().start(profile(profile_text(coupled_target("nic", dev.pid,
                                                               f"{{port: {port}}}"))),
                           "--rescan", RESCAN)
        follows(dev.pid, (SCHED_FIFO, 12))
        assert [s["pid"] for s in target_status(d, "nic")["serves"]] == [rx.pid]
        rx.kill()
        rx.wait()
        follows(dev.pid, (SCHED_OTHER, 0))
    assert d.stop() == 0


_THREADED = r"""
import os, sys, threading, time
ready = threading.Event()
def worker():
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(33))    # this thread only
    print(threading.get_native_id(), flush=True)
    ready.set()
    time.sleep(100000)
threading.Thread(target=worker, daemon=True).start()
ready.wait()
time.sleep(100000)
"""


def test_served_by_a_thread_id_or_its_process(spawn, daemon, profile):
    """irqresd lists the threads of the processes the pids name, not every process's: a
    pid of a thread selects that thread, the process's pid all its threads."""
    dev, dev2 = spawn(), spawn()
    with child([sys.executable, "-c", _THREADED]) as rx:
        tid = int(rx.stdout.readline())
        d = daemon().start(profile(profile_text(
            coupled_target("by-tid", dev.pid, f"{{pid: {tid}}}") +
            coupled_target("by-process", dev2.pid, f"{{pid: {rx.pid}}}"))),
            "--rescan", RESCAN)
        follows(dev.pid, (SCHED_FIFO, 33))
        follows(dev2.pid, (SCHED_FIFO, 33))     # the worker's priority, not the main's
        assert [s["pid"] for s in target_status(d, "by-tid")["serves"]] == [tid]
        assert [s["pid"] for s in target_status(d, "by-process")["serves"]] == \
            [rx.pid, tid]
        rx.kill()
        rx.wait()
        follows(dev.pid, (SCHED_OTHER, 0))
        follows(dev2.pid, (SCHED_OTHER, 0))
    assert d.stop() == 0


_TCP_SERVER = r"""
import socket, sys, time
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.bind(("::1", 0))
print(s.getsockname()[1], flush=True)
sys.stdin.readline()
s.listen(4)
print("listening", flush=True)
time.sleep(100000)
"""


def test_served_by_a_tcp_listener_not_a_bound_socket(spawn, daemon, profile):
    """A TCP socket serves its port's device threads once it listens (docs/process-aware.md;
    irqresd asks the kernel's socket diagnostics for listeners)."""
    dev = spawn()
    with child(["chrt", "-f", "14", sys.executable, "-c", _TCP_SERVER],
               stdin=subprocess.PIPE) as srv:
        port = int(srv.stdout.readline())
        d = daemon().start(profile(profile_text(coupled_target("nic", dev.pid,
                                                               f"{{port: {port}}}"))),
                           "--rescan", RESCAN)
        time.sleep(0.5)                 # five scans: bound, not listening, serves nobody
        assert target_status(d, "nic")["serves"] == []
        assert sched(dev.pid) == (SCHED_OTHER, 0)
        srv.stdin.write("go\n")
        srv.stdin.flush()
        assert srv.stdout.readline().strip() == "listening"
        follows(dev.pid, (SCHED_FIFO, 14))
        assert [s["pid"] for s in target_status(d, "nic")["serves"]] == [srv.pid]
    follows(dev.pid, (SCHED_OTHER, 0))
    assert d.stop() == 0


def test_reserved_target_lists_whom_it_serves(spawn, daemon, profile):
    dev, srv = spawn(), spawn()
    fifo(srv.pid, 25)
    text = profile_text(f"  - name: nic\n    task:\n      pid: {dev.pid}\n"
                        f"    runtime: 1ms\n    period: 10ms\n"
                        f"    serves: {{pid: {srv.pid}}}\n")
    d = daemon().start(profile(text), "--rescan", RESCAN)
    st = wait_for(lambda: (t := target_status(d, "nic"))["serves"] and t, FOLLOW_S)
    assert [(s["pid"], s["priority"]) for s in st["serves"]] == [(srv.pid, 25)]
    assert st["coupling"] is None
    assert sched_getattr(dev.pid).runtime_ns == 1_000_000     # reserved, not coupled
    assert d.stop() == 0


def test_bad_serves_is_refused_naming_target_and_key(spawn, profile):
    dev = spawn()
    p = profile(profile_text(coupled_target("nic", dev.pid, "{port: 0}")))
    r = run_irqresd("--dry-run", "-p", str(p))
    assert r.returncode == 2
    assert "target 'nic': serves.port: 0 is too small (at least 1)" in r.stderr


def test_verify_lists_whom_it_serves_and_checks_the_priority(spawn, daemon, profile):
    dc, sc = unique_comm("dev"), unique_comm("rx")
    dev, srv = spawn(dc), spawn(sc)
    fifo(srv.pid, 20)
    p = profile(profile_text(coupled_target("nic", dev.pid, f"{{pid: {srv.pid}}}")))
    r = run_irqresd("--verify", "--json", "-p", str(p))    # nothing couples it yet
    assert r.returncode == 1, r.stderr
    v = json.loads(r.stdout)
    assert v["differences"] == [f"{dc} (pid {dev.pid}) of target 'nic': other 0, the "
                                "processes it serves give SCHED_FIFO 20"]
    assert v["serves"] == [{"target": "nic", "threads": [
        {"pid": srv.pid, "tgid": srv.pid, "comm": sc, "policy": "fifo",
         "priority": 20}]}]
    d = daemon().start(p, "--rescan", RESCAN)
    follows(dev.pid, (SCHED_FIFO, 20))
    v = d.request("verify")
    assert v["consistent"] and v["checked"] == 1, v
    assert [t["pid"] for t in v["serves"][0]["threads"]] == [srv.pid]
    r = run_irqresd("--verify", "-p", str(p))
    assert r.returncode == 0, r.stderr
    assert f"target 'nic' serves: {sc} (pid {srv.pid}) fifo 20" in r.stdout
    assert d.stop() == 0


def test_dry_run_of_a_coupled_target(spawn, profile):
    dev = spawn()
    p = profile(profile_text(coupled_target("nic", dev.pid, "{port: 5000}")))
    r = run_irqresd("--dry-run", "--json", "-p", str(p))
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    assert plan["feasible"] and plan["items"] == []
    assert plan["summary"] == "nothing to reserve: its coupled targets follow whom they serve"
    assert any("target 'nic' is coupled" in w for w in plan["warnings"])
    assert sched(dev.pid) == (SCHED_OTHER, 0)       # a plan changes nothing


def test_apply_and_restore_requests_couple_at_once(spawn, daemon, profile):
    dev, a, b = spawn(), spawn(), spawn()
    fifo(a.pid, 20)
    fifo(b.pid, 30)
    pa = profile(profile_text(coupled_target("nic", dev.pid, f"{{pid: {a.pid}}}")))
    pb = profile(profile_text(coupled_target("nic", dev.pid, f"{{pid: {b.pid}}}")))
    d = daemon().start(pa, "--rescan", "0")       # no rescans: the apply couples
    assert sched(dev.pid) == (SCHED_FIFO, 20)
    assert "--rescan 0: whom its targets serve is looked at this once" in d.log_text()
    r = d.send_profile("apply", pb)
    assert r["ok"], r
    assert sched(dev.pid) == (SCHED_FIFO, 30)
    assert d.request("restore")["ok"]
    assert sched(dev.pid) == (SCHED_OTHER, 0)
    assert d.request("status")["targets"] == []
    assert d.stop() == 0
    assert sched(dev.pid) == (SCHED_OTHER, 0)


def test_someone_elses_deadline_is_left_alone(spawn, daemon, profile):
    dev, srv = spawn(), spawn()
    fifo(srv.pid, 20)
    d = daemon().start(profile(profile_text(coupled_target("nic", dev.pid,
                                                           f"{{pid: {srv.pid}}}"))),
                       "--rescan", RESCAN)
    follows(dev.pid, (SCHED_FIFO, 20))
    # another tool boosts it (stalld does so with SCHED_DEADLINE for a few seconds)
    r = subprocess.run(["chrt", "-d", "--sched-runtime", "1000000", "--sched-deadline",
                        "100000000", "--sched-period", "100000000", "-p", "0",
                        str(dev.pid)], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    fifo(srv.pid, 30)       # a change the coupling would follow
    time.sleep(1.0)         # ten rescans
    assert sched_getattr(dev.pid).policy == SCHED_DEADLINE
    fifo(dev.pid, 20)       # the boost ends: the coupling takes it again
    # this host's kernel leaks a sleeping task's bandwidth when it leaves SCHED_DEADLINE;
    # writing sched_rt_runtime_us its own value makes it recount
    rt = Path("/proc/sys/kernel/sched_rt_runtime_us")
    rt.write_text(rt.read_text())
    follows(dev.pid, (SCHED_FIFO, 30))
    assert d.stop() == 0
    assert sched(dev.pid) == (SCHED_OTHER, 0)
