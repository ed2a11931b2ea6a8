"""Which irqresd a command uses: --socket / $IRQRES_SOCKET name that daemon or give an
error (never a silent fall back to /run/irqres); --run-dir / $IRQRES_RUN_DIR name the run
directory whose state file the commands use without a daemon; both work before the
subcommand too."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fakes import FakeDaemon
from irqres.cli import main
from irqres.client import endpoint

# what irqresd --status prints for a state file holding two SCHED_DEADLINE threads (an
# irqresd killed with SIGKILL leaves this)
STATE = {"exists": True, "admission_control": "keep", "partitions": [], "owed": [],
         "threads": [{"comm": "a", "pid": 501, "cpus": "0", "alive": True,
                      "policy": "deadline", "runtime_ns": 2_000_000,
                      "deadline_ns": 10_000_000, "period_ns": 10_000_000,
                      "orig_policy": "other", "cpuset": None},
                     {"comm": "b", "pid": 502, "cpus": "1", "alive": True,
                      "policy": "deadline", "runtime_ns": 1_000_000,
                      "deadline_ns": 5_000_000, "period_ns": 5_000_000,
                      "orig_policy": "other", "cpuset": None}]}


def run(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


@pytest.fixture
def irqresd(tmp_path, monkeypatch):
    """A fake irqresd binary that logs its arguments; --status prints STATE with the
    state file of the --run-dir it was given."""
    log = tmp_path / "irqresd.log"
    exe = tmp_path / "irqresd"
    exe.write_text(f"""#!/bin/sh
echo "$@" >> {log}
case "$1" in
--status) printf '{{"state_file":"%s/state",%s\\n' "$4" '{json.dumps(STATE)[1:]}'; exit 0;;
esac
exit 0
""")
    exe.chmod(0o755)
    monkeypatch.setenv("IRQRESD", str(exe))
    monkeypatch.delenv("IRQRES_SOCKET", raising=False)
    monkeypatch.delenv("IRQRES_RUN_DIR", raising=False)
    log.write_text("")
    return log


@pytest.fixture
def profile(tmp_path):
    p = tmp_path / "profile.yaml"
    p.write_text("version: 1\ntargets: []\n")
    return p


def test_endpoint_resolution(tmp_path, monkeypatch):
    monkeypatch.delenv("IRQRES_SOCKET", raising=False)
    monkeypatch.delenv("IRQRES_RUN_DIR", raising=False)
    ep = endpoint()
    assert (ep.socket, ep.run_dir, ep.fallback) == ("/run/irqres/irqresd.sock",
                                                    "/run/irqres", True)
    ep = endpoint(run_dir=tmp_path)
    assert (ep.socket, ep.run_dir, ep.fallback) == (f"{tmp_path}/irqresd.sock",
                                                    str(tmp_path), True)
    ep = endpoint(socket_=tmp_path / "d" / "x.sock")      # its run dir: where it lies
    assert (ep.run_dir, ep.state_file, ep.fallback) == (f"{tmp_path}/d",
                                                        f"{tmp_path}/d/state", False)
    monkeypatch.setenv("IRQRES_SOCKET", "/s/irqresd.sock")
    monkeypatch.setenv("IRQRES_RUN_DIR", "/r")
    ep = endpoint()
    assert (ep.socket, ep.run_dir, ep.fallback) == ("/s/irqresd.sock", "/r", True)
    assert ep.describe() == "/s/irqresd.sock (run directory /r)"


def test_status_of_a_named_dead_daemon_is_an_error(tmp_path, irqresd):
    """The daemon named by --socket is gone and left two threads reserved: status shows
    them from its run directory's state file and exits 1, never "no reservation", 0."""
    sock = tmp_path / "run" / "irqresd.sock"
    for args, env in ((["status", "--socket", str(sock)], None),
                      (["--socket", str(sock), "status"], None),
                      (["status"], {"IRQRES_SOCKET": str(sock)})):
        r = run(*args, env=env)
        assert r.exit_code == 1, r.output
        assert "holds no reservation" not in r.output
        assert f"no irqresd answers on {sock}; state file {tmp_path}/run/state" in r.output
        assert "2 thread(s)" in r.output and "501" in r.output and "502" in r.output
        assert f"irqresd is not running: {sock}" in r.output
        assert f"{sock} was named" in r.output
    r = run("status", "--json", "--socket", str(sock))
    assert r.exit_code == 1
    reply = json.loads(r.output[:r.output.rindex("}") + 1])
    assert (reply["daemon"], reply["socket"], reply["run_dir"]) == (
        False, str(sock), f"{tmp_path}/run")
    assert len(reply["threads"]) == 2
    assert irqresd.read_text().splitlines() == [f"--status --json --run-dir {tmp_path}/run"] * 4


def test_status_of_a_named_run_dir_reads_its_state(tmp_path, irqresd):
    r = run("--run-dir", str(tmp_path / "r"), "status")
    assert r.exit_code == 0, r.output
    assert f"no irqresd answers on {tmp_path}/r/irqresd.sock; state file {tmp_path}/r/state" \
        in r.output
    assert irqresd.read_text().splitlines() == [f"--status --json --run-dir {tmp_path}/r"]


@pytest.mark.parametrize("cmd", [["apply", "PROFILE"], ["apply", "-n", "PROFILE"],
                                 ["restore"], ["verify", "PROFILE"]])
def test_a_named_socket_never_falls_back(tmp_path, irqresd, profile, cmd):
    """apply/restore/verify with a named socket that nobody answers: an error, and
    irqresd (--once, --restore, --verify on some run directory) is never run."""
    sock = tmp_path / "gone.sock"
    args = [str(profile) if a == "PROFILE" else a for a in cmd]
    for argv, env in (([*args, "--socket", str(sock)], None),
                      (["--socket", str(sock), *args], None),
                      (args, {"IRQRES_SOCKET": str(sock)})):
        r = run(*argv, env=env)
        assert r.exit_code == 1, r.output
        assert f"irqresd is not running: {sock}" in r.output
        assert "name one with --run-dir" in r.output
    assert irqresd.read_text() == ""


def test_a_named_run_dir_is_where_apply_works_without_a_daemon(tmp_path, irqresd, profile):
    r = run("--socket", str(tmp_path / "gone.sock"), "--run-dir", str(tmp_path / "r"),
            "restore")
    assert r.exit_code == 0, r.output
    assert irqresd.read_text().splitlines() == [f"--restore --run-dir {tmp_path}/r"]


def test_options_before_the_subcommand_name_the_daemon(tmp_path, monkeypatch):
    monkeypatch.delenv("IRQRES_SOCKET", raising=False)
    monkeypatch.setenv("IRQRES_RUN_DIR", str(tmp_path / "nowhere"))
    d = FakeDaemon(str(tmp_path / "irqresd.sock"), profile="/etc/p.yaml").start()
    try:
        for args in (["--socket", d.path, "status"], ["--run-dir", str(tmp_path), "status"],
                     ["--socket", "/nowhere.sock", "status", "--socket", d.path]):
            r = run(*args)
            assert r.exit_code == 0, (args, r.output)
            assert f"irqresd pid 4242 on {d.path}, profile /etc/p.yaml" in r.output
        r = run("--socket", d.path, "status", "--json")
        assert json.loads(r.output)["socket"] == d.path
        r = run("--socket", d.path, "restore")
        assert r.exit_code == 0 and f"irqresd ({d.path}) restored 1 thread" in r.output
        r = run("--run-dir", str(tmp_path), "set-budget", "nic", "1ms")
        assert r.exit_code == 0, r.output
        assert d.requests == ["status", "status", "status", "status", "restore",
                              "set-budget nic 1ms"]
    finally:
        d.stop()
