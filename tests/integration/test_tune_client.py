"""The irqres client commands against the real irqresd on this host.

irqresd runs with its own run directory and socket, and reserves only a `sleep`
process this test spawns (0.5 ms every 100 ms).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time

import pytest
from click.testing import CliRunner
from irqres.cli import main
from irqres.client import DaemonError, find_irqresd
from irqres.control.inputs import SCHED_DEADLINE, read_dl_params

pytestmark = pytest.mark.root


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def env(tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("needs root: irqresd gives SCHED_DEADLINE reservations")
    try:
        exe = find_irqresd()
    except DaemonError as exc:
        pytest.skip(f"irqresd not built: {exc}")
    victim = subprocess.Popen(["sleep", "600"])
    prof = tmp_path / "p.yaml"
    prof.write_text(f"version: 1\ntargets:\n  - name: sleeper\n    task:\n      pid: {victim.pid}"
                    "\n    runtime: 500us\n    period: 100ms\n")
    sock = tmp_path / "irqresd.sock"
    monkeypatch.setenv("IRQRES_SOCKET", str(sock))
    monkeypatch.setenv("IRQRESD", exe)
    state = {"exe": exe, "pid": victim.pid, "profile": str(prof), "sock": sock,
             "tmp": tmp_path, "daemon": None}
    yield state
    stop(state["daemon"])
    victim.kill()
    victim.wait()


def stop(daemon: subprocess.Popen | None) -> None:
    """SIGTERM (irqresd restores everything), then SIGKILL after 10 s."""
    if daemon is not None and daemon.poll() is None:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(10)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()


def start(env, profile: bool = True):
    args = [env["exe"], "--run-dir", str(env["tmp"]), "--socket", str(env["sock"]),
            "--no-netlink"] + (["-p", env["profile"]] if profile else [])
    log = (env["tmp"] / "irqresd.log").open("w")
    env["daemon"] = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(100):
        if env["sock"].exists():
            return
        if env["daemon"].poll() is not None:
            break
        time.sleep(0.05)
    pytest.fail(f"irqresd did not start: {(env['tmp'] / 'irqresd.log').read_text()}")


def test_dry_run_without_daemon_uses_irqresd(env, monkeypatch):
    monkeypatch.setenv("IRQRES_RUN_DIR", str(env["tmp"]))   # the socket alone: an error
    r = run("apply", "--dry-run", "--json", env["profile"])
    assert r.exit_code == 0, r.output
    plan = json.loads(r.output)
    item = plan["items"][0]
    assert (item["pid"], item["new_policy"], item["runtime_ns"]) == (env["pid"], "deadline",
                                                                     500_000)
    assert read_dl_params(env["pid"]).policy != SCHED_DEADLINE     # nothing changed


def test_apply_status_stats_set_budget_restore(env):
    start(env, profile=False)
    r = run("apply", env["profile"])
    assert r.exit_code == 0, r.output
    assert "through irqresd" in r.output
    assert any(row.split()[1:3] == ["sleep", str(env["pid"])] for row in r.output.splitlines())
    p = read_dl_params(env["pid"])
    assert (p.policy, p.runtime_ns, p.period_ns) == (SCHED_DEADLINE, 500_000, 100_000_000)

    r = run("status", "--json")
    assert json.loads(r.output)["targets"][0]["threads"][0]["pid"] == env["pid"]
    r = run("stats")
    assert r.exit_code == 0 and "sleeper" in r.output
    assert re.search(r" 500us +100ms +100ms ", r.output)   # RUNTIME DEADLINE PERIOD

    r = run("set-budget", "sleeper", "700us")
    assert r.exit_code == 0, r.output
    assert read_dl_params(env["pid"]).runtime_ns == 700_000
    r = run("set-budget", "sleeper", "600us", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["runtime_ns"] == 600_000, r.output
    assert read_dl_params(env["pid"]).runtime_ns == 600_000
    r = run("set-budget", "sleeper", "-600us")
    assert r.exit_code == 2 and "'-600us' is not a duration" in r.output
    r = run("set-budget", "sleeper", "200ms", "100ms")
    assert r.exit_code == 2 and "200ms is longer than PERIOD 100ms" in r.output
    assert read_dl_params(env["pid"]).runtime_ns == 600_000
    r = run("set-budget", "nosuch", "700us")
    assert r.exit_code == 1 and "nosuch" in r.output and "Traceback" not in r.output

    r = run("restore")
    assert r.exit_code == 0 and "restored 1 thread" in r.output
    assert read_dl_params(env["pid"]).policy != SCHED_DEADLINE


def test_daemon_gone(env):
    start(env)
    env["daemon"].send_signal(signal.SIGTERM)
    env["daemon"].wait(10)
    r = run("stats")
    assert r.exit_code == 1 and "irqresd is not running" in r.output
    # status shows the state file (irqresd --status) instead, and, the socket being named
    # ($IRQRES_SOCKET), fails: that daemon does not answer
    r = run("status")
    assert r.exit_code == 1 and f"no irqresd answers on {env['sock']}" in r.output


def test_apply_once_then_restore_without_daemon(env, monkeypatch):
    """No irqresd running: apply runs `irqresd --once`, restore `irqresd --restore`, and
    restore says truthfully what it put back (irqresd in a run directory of its own,
    named: a named socket alone is that daemon or an error)."""
    r = run("apply", env["profile"])
    assert r.exit_code == 1 and f"irqresd is not running: {env['sock']}" in r.output
    monkeypatch.setenv("IRQRES_RUN_DIR", str(env["tmp"]))
    r = run("apply", env["profile"])
    assert r.exit_code == 0 and "irqresd --once" in r.output, r.output
    assert read_dl_params(env["pid"]).policy == SCHED_DEADLINE
    r = run("restore", "--json")
    assert r.exit_code == 0, r.output
    reply = json.loads(r.output)
    assert (reply["by"], reply["restored"]) == ("irqresd --restore", 1), reply
    assert read_dl_params(env["pid"]).policy != SCHED_DEADLINE
    r = run("restore")
    assert r.exit_code == 0 and "nothing to restore" in r.output, r.output
    r = run("restore", "--json")
    assert json.loads(r.output)["restored"] == 0
