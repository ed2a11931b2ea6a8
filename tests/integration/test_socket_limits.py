"""The control socket's limits on one request: slow bodies time out like request lines,
slow clients cannot lock others out, and a refused body length ends the connection."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest
from irqresd_util import read_line, sched_getattr

pytestmark = pytest.mark.root


def _closed(s: socket.socket) -> bool:
    try:
        return s.recv(100) == b""
    except ConnectionResetError:
        return True


def test_slow_body_times_out(running):
    """A body sent a byte every 2 s is dropped 5 s after its request line began."""
    d, _ = running
    with d.connect() as s:
        t0 = time.monotonic()
        s.sendall(b"plan /x 100\n")
        s.settimeout(0.5)
        reply = b""
        while time.monotonic() - t0 < 15 and not reply.endswith(b"\n"):
            try:
                s.sendall(b"#")
            except OSError:  # closed: the reply is still there to read
                pass
            try:
                chunk = s.recv(4096)
            except TimeoutError:
                time.sleep(1.5)
                continue
            except ConnectionResetError:
                break
            if not chunk:
                break
            reply += chunk
        took = time.monotonic() - t0
    assert reply, f"no reply after {took:.1f} s"
    r = json.loads(reply)
    assert not r["ok"] and "body incomplete" in r["error"] and "/x" in r["error"], r
    assert 4.5 < took < 7.5, took


def test_slow_bodies_do_not_lock_out(running):
    """64 clients trickling bodies: a real request is still answered within 2 s."""
    d, a = running
    stop = threading.Event()
    socks: list[socket.socket] = []

    def trickle() -> None:
        while not stop.is_set():
            for i, s in enumerate(socks):
                try:
                    s.sendall(b"#")
                except OSError:  # dropped: a new slow client takes its place
                    s.close()
                    try:
                        socks[i] = d.connect()
                        socks[i].sendall(b"plan /slow 100000\n")
                    except OSError:
                        pass
            stop.wait(0.5)

    for _ in range(64):
        s = d.connect()
        s.sendall(b"plan /slow 100000\n")
        socks.append(s)
    th = threading.Thread(target=trickle)
    th.start()
    worst = 0.0
    try:
        time.sleep(1.0)
        for _ in range(8):
            t0 = time.monotonic()
            r = None
            while time.monotonic() - t0 < 10:
                try:
                    r = d.request("ping")
                except OSError:
                    r = None
                if r and r["ok"]:
                    break
                time.sleep(0.05)
            took = time.monotonic() - t0
            worst = max(worst, took)
            assert r and r["ok"], f"locked out for {took:.1f} s: {r}"
            time.sleep(0.5)
    finally:
        stop.set()
        th.join()
        for s in socks:
            s.close()
    assert worst < 2.0, worst
    assert sched_getattr(a.pid).runtime_ns == 2_000_000


@pytest.mark.parametrize("line", [
    b"apply /x/big 2000000\nrestore\n",
    b"plan /x/big -1\nrestore\n",
    b"verify /x 12abc\nrestore\n",
    b"apply /x\xff 10\nrestore\n",
])
def test_bytes_after_refused_length_are_not_requests(running, line):
    d, a = running
    with d.connect() as s:
        s.sendall(line)
        r = json.loads(read_line(s))
        assert not r["ok"] and "connection closed" in r["error"], r
        assert _closed(s)
    assert d.request("status")["profile"] is not None
    assert sched_getattr(a.pid).runtime_ns == 2_000_000
