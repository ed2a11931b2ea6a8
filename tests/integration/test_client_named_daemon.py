"""The client and a real irqresd killed with SIGKILL while it holds two spawned tasks:
the socket the operator names is that daemon or an error, never /run/irqres."""

from __future__ import annotations

import json
import signal

import pytest
from click.testing import CliRunner
from irqres.cli import main
from irqresd_util import (
    IRQRESD,
    SCHED_DEADLINE,
    SCHED_OTHER,
    profile_text,
    sched_getattr,
    task_target,
)

pytestmark = pytest.mark.root


def test_a_killed_daemon_is_never_reported_as_no_reservation(spawn, daemon, profile):
    a, b = spawn(), spawn()
    p = profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid),
                             task_target("b", "1ms", "10ms", pid=b.pid)))
    d = daemon().start(p)
    assert d.stop(signal.SIGKILL) == -signal.SIGKILL
    assert sched_getattr(a.pid).policy == sched_getattr(b.pid).policy == SCHED_DEADLINE
    env = {"IRQRESD": str(IRQRESD), "IRQRES_SOCKET": None, "IRQRES_RUN_DIR": None}

    def irqres(*args: str, **more: str):
        return CliRunner().invoke(main, list(args), env={**env, **more},
                                  catch_exceptions=False)

    for r in (irqres("status", "--socket", str(d.sock)),
              irqres("--socket", str(d.sock), "status"),
              irqres("status", IRQRES_SOCKET=str(d.sock))):
        assert r.exit_code == 1, r.output
        assert "holds no reservation" not in r.output
        assert f"no irqresd answers on {d.sock}; state file {d.run_dir}/state" in r.output
        assert str(a.pid) in r.output and str(b.pid) in r.output
    r = irqres("status", "--json", "--socket", str(d.sock))
    assert r.exit_code == 1
    reply = json.loads(r.output[:r.output.rindex("}") + 1])
    assert sorted(th["pid"] for th in reply["threads"]) == sorted([a.pid, b.pid])
    assert reply["socket"] == str(d.sock) and reply["run_dir"] == str(d.run_dir)
    # apply and restore do not quietly act on /run/irqres (or anywhere) instead
    for args in (["apply", str(p)], ["restore"]):
        r = irqres(*args, "--socket", str(d.sock))
        assert r.exit_code == 1 and f"irqresd is not running: {d.sock}" in r.output
    assert sched_getattr(a.pid).policy == sched_getattr(b.pid).policy == SCHED_DEADLINE
    # named, its run directory's state file is where restore works without the daemon
    r = irqres("restore", "--run-dir", str(d.run_dir))
    assert r.exit_code == 0, r.output
    assert f"restored 2 thread(s) from its state file {d.run_dir}/state" in r.output
    assert sched_getattr(a.pid).policy == sched_getattr(b.pid).policy == SCHED_OTHER
