"""systemd notifications, SIGHUP reload and the journal log format."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time

import pytest
from click.testing import CliRunner
from irqres.cli import main
from irqresd_util import (
    IRQRESD,
    SCHED_OTHER,
    profile_text,
    run_irqresd,
    sched_getattr,
    task_target,
    wait_for,
)

pytestmark = pytest.mark.root

MS = 1_000_000


@contextlib.contextmanager
def under_notify(p, tmp_path, **env_extra):
    """irqresd -p p with a NOTIFY_SOCKET (as under systemd): (process, notify socket);
    killed when still running at the end."""
    addr = str(tmp_path / "notify.sock")
    ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ns.bind(addr)
    ns.settimeout(10)
    env = dict(os.environ, NOTIFY_SOCKET=addr, **env_extra)
    with open(tmp_path / "log", "wb") as log:
        d = subprocess.Popen([str(IRQRESD), "-p", str(p), "--run-dir", str(tmp_path / "run")],
                             env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield d, ns
    finally:
        if d.poll() is None:
            d.kill()
            d.wait()
        ns.close()


def test_sd_notify_ready_watchdog_stopping(spawn, profile, tmp_path):
    a = spawn()
    p = profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid)))
    with under_notify(p, tmp_path, WATCHDOG_USEC="200000", JOURNAL_STREAM="8:1") as (d, ns):
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
    wait_for(lambda: f"reload of {p} refused" in d.log_text())
    assert f"{p}:" in d.log_text()
    assert sched_getattr(a.pid).runtime_ns == 3 * MS
    assert d.request("ping")["ok"]
    assert d.stop() == 0
    assert sched_getattr(a.pid).policy == SCHED_OTHER


def test_reload_rereads_the_configured_profile(spawn, daemon, profile, tmp_path):
    """Reload (systemctl reload runs irqresd --reload) re-reads -p's file and puts it in
    force in place of a profile `irqres apply` sent, and again after `restore`; a refused
    reload fails the command and leaves what is in force."""
    a, b = spawn(), spawn()
    p = profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid)))
    d = daemon().start(p)
    run_dir = ["--run-dir", str(d.run_dir)]
    other = profile(profile_text(task_target("b", "1ms", "10ms", pid=b.pid)))
    assert d.send_profile("apply", other, name="/home/op/other.yaml")["ok"]
    st = d.request("status")
    assert (st["profile"], st["configured_profile"]) == ("/home/op/other.yaml", str(p))
    r = CliRunner().invoke(main, ["status"], env={"IRQRES_SOCKET": str(d.sock)})
    assert f"profile /home/op/other.yaml, admission control keep; reload re-reads {p}" \
        in r.output, r.output
    assert sched_getattr(a.pid).policy == SCHED_OTHER
    r = run_irqresd("--reload", *run_dir)
    assert r.returncode == 0, r.stderr
    assert d.request("status")["profile"] == str(p)
    assert sched_getattr(a.pid).runtime_ns == 2 * MS
    assert sched_getattr(b.pid).policy == SCHED_OTHER  # the applied one's thread went back
    # after restore, reload puts the configured profile back in force
    assert d.request("restore")["ok"] and sched_getattr(a.pid).policy == SCHED_OTHER
    assert d.request("status")["profile"] is None
    r = run_irqresd("--reload", *run_dir)
    assert r.returncode == 0, r.stderr
    assert sched_getattr(a.pid).runtime_ns == 2 * MS
    # a refused reload: exit 1 with the reason, the profile in force stays
    p.write_text(profile_text(task_target("a", "20ms", "10ms", pid=a.pid)))
    r = run_irqresd("--reload", *run_dir)
    assert r.returncode == 1
    assert f"{p}:" in r.stderr and "runtime 20ms exceeds the period 10ms" in r.stderr
    assert sched_getattr(a.pid).runtime_ns == 2 * MS
    assert d.stop() == 0
    # no daemon: --reload says so and fails
    r = run_irqresd("--reload", *run_dir)
    assert r.returncode == 1 and "no irqresd answers" in r.stderr


def test_reload_notifies_systemd(spawn, profile, tmp_path):
    """RELOADING=1 with MONOTONIC_USEC, then READY=1, around a SIGHUP reload."""
    a = spawn()
    p = profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid)))
    with under_notify(p, tmp_path) as (d, ns):
        while "READY=1" not in ns.recv(4096).decode():
            pass
        t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        p.write_text(profile_text(task_target("a", "3ms", "10ms", pid=a.pid)))
        d.send_signal(signal.SIGHUP)
        msg = ns.recv(4096).decode()
        assert msg.startswith("RELOADING=1\nMONOTONIC_USEC="), msg
        usec = int(msg.split("MONOTONIC_USEC=")[1].split()[0])
        assert t0 <= usec <= time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        while "READY=1" not in (msg := ns.recv(4096).decode()):
            assert "RELOADING" not in msg
        assert sched_getattr(a.pid).runtime_ns == 3 * MS
        d.send_signal(signal.SIGTERM)
        assert d.wait(10) == 0
