"""systemd notifications, SIGHUP reload and the journal log format."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time

import pytest
from irqresd_util import (
    IRQRESD,
    SCHED_OTHER,
    profile_text,
    sched_getattr,
    task_target,
    wait_for,
)

pytestmark = pytest.mark.root

MS = 1_000_000


def test_sd_notify_ready_watchdog_stopping(spawn, profile, tmp_path):
    a = spawn()
    p = profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid)))
    addr = str(tmp_path / "notify.sock")
    ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ns.bind(addr)
    ns.settimeout(10)
    env = dict(os.environ, NOTIFY_SOCKET=addr, WATCHDOG_USEC="200000", JOURNAL_STREAM="8:1")
    with open(tmp_path / "log", "wb") as log:
        d = subprocess.Popen([str(IRQRESD), "-p", str(p), "--run-dir", str(tmp_path / "run")],
                             env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        msgs = []
        end = time.monotonic() + 10
        # READY once the reservation is in force, then watchdog pings every 100 ms
        while sum("WATCHDOG=1" in m for m in msgs) < 3 and time.monotonic() < end:
            msgs.append(ns.recv(4096).decode())
        ready = next(i for i, m in enumerate(msgs) if "READY=1" in m)
        assert "STATUS=" in msgs[ready]
        assert sum("WATCHDOG=1" in m for m in msgs[ready:]) >= 3
        assert sched_getattr(a.pid).runtime_ns == 2 * MS
        d.send_signal(signal.SIGTERM)
        while "STOPPING=1" not in ns.recv(4096).decode():
            pass
        assert d.wait(10) == 0
    finally:
        if d.poll() is None:
            d.kill()
            d.wait()
        ns.close()
    assert sched_getattr(a.pid).policy == SCHED_OTHER
    # under systemd (JOURNAL_STREAM set) every line carries its syslog priority
    lines = (tmp_path / "log").read_text().splitlines()
    assert lines and all(line[:1] == "<" and line[2:3] == ">" for line in lines), lines


def test_sighup_reloads_the_profile(spawn, daemon, profile):
    a = spawn()
    p = profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid)))
    d = daemon().start(p)
    p.write_text(profile_text(task_target("a", "3ms", "10ms", pid=a.pid)))
    d.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: sched_getattr(a.pid).runtime_ns == 3 * MS)
    # a broken profile on reload is refused and the previous one stays
    p.write_text("version: 1\ntargets: [\n")
    d.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: "reload refused" in d.log_text())
    assert f"{p}:" in d.log_text()
    assert sched_getattr(a.pid).runtime_ns == 3 * MS
    assert d.request("ping")["ok"]
    assert d.stop() == 0
    assert sched_getattr(a.pid).policy == SCHED_OTHER
