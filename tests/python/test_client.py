"""The irqresd client against a fake daemon speaking docs/protocol.md (``fake``:
tests/python/conftest.py, the daemon itself in fakes.py)."""

from __future__ import annotations

import os
import socket
import stat
import threading
import time

import irqres.client as client_mod
import pytest
from fakes import FakeDaemon
from irqres.client import (
    BODY_MAX,
    Client,
    DaemonNotRunning,
    DaemonUnreachable,
    RequestCancelled,
    daemon_running,
    find_irqresd,
    socket_path,
)
from irqres.errors import DaemonError


def test_requests_and_replies(fake, tmp_path):
    prof = tmp_path / "p.yaml"
    prof.write_text("version: 1\n")
    with Client() as c:
        assert c.ping()["version"] == "0.1.0"
        assert c.status()["targets"][0]["name"] == "nic"
        assert c.plan(prof)["feasible"] is True
        assert c.apply(prof)["items"][0]["pid"] == 105
        r = c.set_budget("nic", 3_000_000)
        assert (r["runtime_ns"], r["period_ns"]) == (3_000_000, 10_000_000)
        assert c.restore() == 1
        assert c.reload()["profile"] == "/etc/irqres/profile.yaml"
    # several requests on one connection, in order; plan and apply carry the profile's
    # text (its absolute path only names it)
    assert fake.requests == ["ping", "status", f"plan {prof} 11", f"apply {prof} 11",
                             "set-budget nic 3ms", "restore", "reload"]
    assert fake.bodies == [b"version: 1\n", b"version: 1\n"]


def test_profile_text_limits(fake, tmp_path):
    odd = tmp_path / "my profile.yaml"
    odd.write_text("version: 1\n")
    with Client() as c:
        c.plan(odd)
        (tmp_path / "empty.yaml").touch()
        with pytest.raises(DaemonError, match="the profile is empty"):
            c.plan(tmp_path / "empty.yaml")
        big = tmp_path / "big.yaml"
        big.write_bytes(b"#" * (BODY_MAX + 1))
        with pytest.raises(DaemonError, match="larger than 1048576 bytes"):
            c.apply(big)
        with pytest.raises(DaemonError, match="cannot read"):
            c.apply(tmp_path / "missing.yaml")
    # a blank in the path would split the request line: it is named with '?'
    assert fake.requests == [f"plan {tmp_path}/my?profile.yaml 11"]
    assert daemon_running()


def test_daemon_error_keeps_its_message(fake):
    with Client() as c, pytest.raises(DaemonError, match="set-budget: no target named disk"):
        c.set_budget("disk", 1_000_000)


def test_daemon_error_carries_the_errno(fake):
    fake.override["set-budget"] = {"ok": False, "error": "set-budget nic: new budget "
                                   "refused: EBUSY: admission control", "errno": "EBUSY"}
    with Client() as c, pytest.raises(DaemonError) as e:
        c.set_budget("nic", 1_000_000)
    assert e.value.errno_name == "EBUSY"
    fake.override["set-budget"] = {"ok": False, "error": "EBUSY in the text alone",
                                   "errno": 16}
    with Client() as c, pytest.raises(DaemonError) as e:
        c.set_budget("nic", 1_000_000)
    assert e.value.errno_name is None           # not a name: not taken


def test_not_running(tmp_path):
    path = str(tmp_path / "none.sock")
    with pytest.raises(DaemonNotRunning, match=f"irqresd is not running: {path}"):
        Client(path).ping()
    assert not daemon_running(path)


def test_refused_connection_is_not_running(tmp_path):
    path = str(tmp_path / "stale.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.close()                        # a stale socket file with nobody listening
    with pytest.raises(DaemonNotRunning):
        Client(path).ping()


def test_permission_denied(tmp_path):
    if os.geteuid() == 0:
        # root passes file permissions, so check with a socket in a directory we cannot
        # search as an unprivileged user instead: run the check in a child as nobody.
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.setgid(65534)
                os.setuid(65534)
                try:
                    Client(str(tmp_path / "irqresd.sock")).ping()
                except DaemonError as exc:
                    code = 0 if "permission denied" in str(exc) else 2
            finally:
                os._exit(code)
        d = FakeDaemon(str(tmp_path / "irqresd.sock")).start()
        try:
            os.chmod(d.path, 0o600)
            os.chmod(tmp_path, stat.S_IRWXU | stat.S_IXOTH)
            _, status = os.waitpid(pid, 0)
        finally:
            d.stop()
        assert os.waitstatus_to_exitcode(status) == 0
    else:
        pytest.skip("needs root to create a socket another user cannot open")


def test_timeout_garbage_and_hangup(fake):
    fake.override["status"] = "silent"
    with pytest.raises(DaemonError, match=r"no reply to status within 0.3 s"):
        Client(timeout=0.3).status()
    fake.override["status"] = b"not json\n"
    with pytest.raises(DaemonError, match="reply to status is not JSON"):
        Client().status()
    fake.override["status"] = b"[1, 2]\n"
    with pytest.raises(DaemonError, match="has no \"ok\" field"):
        Client().status()
    fake.override["status"] = "close"
    with pytest.raises(DaemonError, match="closed the connection without answering status"):
        Client().status()
    fake.override["status"] = {"ok": False}
    with pytest.raises(DaemonError, match="status: refused"):
        Client().status()


def test_bad_request_words(fake):
    with pytest.raises(DaemonError, match="contains white space"):
        Client().request("set-budget", "my target", "1ms")
    with pytest.raises(DaemonError, match="longer than 4096"):
        Client().request("plan", "x" * 5000)


def test_socket_path_precedence(monkeypatch):
    monkeypatch.delenv("IRQRES_SOCKET", raising=False)
    assert socket_path() == "/run/irqres/irqresd.sock"
    monkeypatch.setenv("IRQRES_SOCKET", "/tmp/a.sock")
    assert socket_path() == "/tmp/a.sock"
    assert socket_path("/tmp/b.sock") == "/tmp/b.sock"


def test_find_irqresd(monkeypatch, tmp_path):
    exe = tmp_path / "irqresd"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setenv("IRQRESD", str(exe))
    assert find_irqresd() == str(exe)
    monkeypatch.setenv("IRQRESD", str(tmp_path / "missing"))
    with pytest.raises(DaemonError, match="not an executable file"):
        find_irqresd()
    monkeypatch.delenv("IRQRESD")
    monkeypatch.setenv("PATH", str(tmp_path))
    found = find_irqresd()          # the checkout's build when it exists, else PATH
    assert found.endswith("build/daemon/irqresd") or found == str(exe)


def test_a_reply_trickling_in_is_bounded_by_the_timeout(fake):
    """The timeout bounds the whole request, not each read: one byte every 0.1 s of a
    long reply would otherwise keep the client for minutes."""
    def trickle(conn):
        for b in b'{"ok": true, "pad": "' + b"x" * 300 + b'"}\n':
            conn.sendall(bytes([b]))
            time.sleep(0.1)

    fake.override["status"] = trickle
    t0 = time.monotonic()
    with pytest.raises(DaemonUnreachable, match=r"no reply to status within 0.5 s"):
        Client(timeout=0.5).status()
    assert time.monotonic() - t0 < 1.5


def test_truncated_nested_and_over_long_replies(fake, monkeypatch):
    fake.override["status"] = lambda conn: (conn.sendall(b'{"ok": tr'), False)[1]
    with pytest.raises(DaemonUnreachable, match=rf"irqresd \({fake.path}\): closed the "
                       r"connection in the middle of its reply to status \(truncated after "
                       r"9 bytes\)"):
        Client().status()
    fake.override["status"] = b"[" * 100_000 + b"\n"          # deeper than json can go
    with pytest.raises(DaemonError, match=rf"irqresd \({fake.path}\): reply to status is "
                       r"not JSON \(100000 bytes\)"):
        Client().status()
    monkeypatch.setattr(client_mod, "REPLY_MAX", 1000)
    fake.override["status"] = {"ok": True, "pad": "x" * 5000}
    with pytest.raises(DaemonError, match=rf"irqresd \({fake.path}\): reply to status is "
                       r"longer than 1000 bytes: refused"):
        Client().status()


@pytest.mark.parametrize("how", ["cancel_fd", "deadline_ns"])
def test_a_waiting_request_is_cancelled(fake, how):
    """A caller that must stop (a signal's self-pipe, the end of its run) is not held
    for the timeout by a daemon that does not answer."""
    fake.override["status"] = "hang"
    r, w = os.pipe()
    try:
        if how == "cancel_fd":
            threading.Timer(0.2, os.write, (w, b"x")).start()
            c = Client(timeout=10, cancel_fd=r)
        else:
            c = Client(timeout=10, deadline_ns=time.monotonic_ns() + 200_000_000)
        t0 = time.monotonic()
        with pytest.raises(RequestCancelled, match=rf"irqresd \({fake.path}\): status given "
                           "up unanswered"):
            c.status()
        assert 0.15 < time.monotonic() - t0 < 1.0
        with pytest.raises(RequestCancelled):            # and so is the next one, at once
            c.ping()
    finally:
        os.close(r)
        os.close(w)


def test_bad_timeout():
    with pytest.raises(DaemonError, match="timeout 0 s is not positive"):
        Client(timeout=0)
