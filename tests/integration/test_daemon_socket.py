"""The control socket: bad requests get error replies and the daemon keeps serving."""

from __future__ import annotations

import json
import os
import socket
import stat

import pytest
from irqresd_util import read_line, sched_getattr, wait_for

pytestmark = pytest.mark.root


def test_socket_and_dir_modes(running):
    d, _ = running
    assert stat.S_IMODE(os.stat(d.sock).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(d.run_dir).st_mode) == 0o700
    assert d.request("ping") == {"ok": True, "version": "0.1.0"}


@pytest.mark.parametrize("line, words", [
    (b"\n", "empty request"),
    (b"hello\n", "unknown request 'hello'"),
    (b"ping pong\n", "ping: too many arguments"),
    (b"set-budget a\n", "missing arguments"),
    (b"set-budget a 1parsec\n", "runtime '1parsec'"),
    (b"plan\n", "plan: missing arguments"),
    (b"plan /nonexistent/p.yaml\n", "plan: missing arguments"),
    (b"plan /nonexistent/p.yaml 10\nversion: 2", "/nonexistent/p.yaml:1:10: version: 2"),
    (b"apply p.yaml 2000000\n", "length '2000000': not a number of bytes in 1..1048576"),
    (b"\x00\xff\xfe garbage\n", "byte 0xff at offset 1 is not valid UTF-8"),
    (b"\x00\x01 garbage\n", "unknown request"),
])
def test_bad_requests(running, line, words):
    d, _ = running
    r = d.request(line)
    assert r["ok"] is False and words in r["error"], r


def test_oversized_request_closes_connection(running):
    d, a = running
    with d.connect() as s:
        s.sendall(b"x" * 5000)
        r = json.loads(read_line(s))
        assert not r["ok"] and "longer than 4096 bytes" in r["error"]
        try:  # closed; the unread rest of the request may turn the close into a reset
            assert s.recv(100) == b""
        except ConnectionResetError:
            pass
    assert d.request("ping")["ok"]
    assert sched_getattr(a.pid).runtime_ns == 2_000_000


def test_pipelined_requests_in_order(running):
    d, _ = running
    with d.connect() as s:
        s.sendall(b"ping\nstatus\nbogus\nstats\n")
        f = s.makefile("rb")
        replies = [json.loads(f.readline()) for _ in range(4)]
    assert replies[0]["version"] == "0.1.0"
    assert "targets" in replies[1]
    assert replies[2]["ok"] is False
    assert "threads" in replies[3]


def test_many_clients_and_rude_ones(running):
    d, a = running
    socks = [d.connect() for _ in range(40)]
    for s in socks:
        s.sendall(b"status\n")
    for s in socks:
        assert json.loads(read_line(s))["ok"]
        s.close()
    # clients that ask and leave before the reply, or reset the connection
    # (while their slots are still taken the daemon may refuse new ones: "too many clients")
    for i in range(70):
        s = d.connect()
        try:
            s.sendall(b"status\nstats\nstatus\n" if i < 50 else b"stat")  # whole or half
        except OSError:
            pass
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()
    assert d.proc.poll() is None
    wait_for(lambda: d.request("ping")["ok"])
    assert sched_getattr(a.pid).runtime_ns == 2_000_000


def test_other_uid_refused(running):
    d, _ = running
    pid = os.fork()
    if pid == 0:  # the child drops to nobody and tries
        code = 3
        try:
            os.setgid(65534)
            os.setuid(65534)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(d.sock))
            code = 1
        except PermissionError:
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
