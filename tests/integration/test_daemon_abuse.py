"""irqresd's control socket under abuse: hostile files and bytes, half-sent and idle
connections, many clients at once, clients that are not root. The daemon must stay up,
answer every refusal, keep its memory and descriptors flat and leave reservations alone."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from irqres.client import Client
from irqres.errors import DaemonError
from irqresd_util import (
    Daemon,
    profile_text,
    read_line,
    sched_getattr,
    task_target,
    wait_for,
)

pytestmark = pytest.mark.root

ROOT = Path(__file__).resolve().parents[2]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"/proc/{pid}/status has no VmRSS")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def settled_fds(pid: int) -> int:
    """The daemon's open fds once they stop changing (closed clients are reaped)."""
    last = -1
    for _ in range(100):
        n = open_fds(pid)
        if n == last:
            return n
        last = n
        time.sleep(0.1)
    return last


def ask(s: socket.socket, line: bytes) -> dict:
    s.sendall(line)
    return json.loads(read_line(s))


# ---- hostile files and bytes ---------------------------------------------------------

def test_fifo_profile_refused_without_blocking(running, tmp_path):
    d, a = running
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    # the client reads the profile (irqresd never opens a client's path): it refuses a
    # FIFO at once instead of waiting for a writer
    for verb in ("plan", "apply"):
        t0 = time.monotonic()
        with pytest.raises(DaemonError, match="not a regular file"):
            getattr(Client(d.sock), verb)(fifo)
        assert time.monotonic() - t0 < 2
    assert d.request("ping")["ok"]
    assert sched_getattr(a.pid).runtime_ns == 2_000_000
    # at start-up too: refused at once with the same words
    t0 = time.monotonic()
    p = subprocess.run([str(d.proc.args[0]), "--dry-run", "-p", str(fifo)],
                       capture_output=True, text=True, timeout=20, check=False)
    assert time.monotonic() - t0 < 10
    assert p.returncode != 0 and "not a regular file (a FIFO)" in p.stdout + p.stderr


def test_zero_padded_pid(running):
    d, a = running
    r = d.request(f"set-budget pid:{'0' * 200}{a.pid} 3ms")
    assert r["ok"] is True, r
    assert sched_getattr(a.pid).runtime_ns == 3_000_000
    r = d.request(f"set-budget pid:{'0' * 4000} 3ms")
    assert r["ok"] is False and "not a pid" in r["error"], r
    assert d.request("ping")["ok"]


def test_non_utf8_request_words_refused(running):
    d, a = running
    r = d.request(b"apply\trel.yam\xff\xff\xff\xffl\n")
    assert r == {"ok": False, "error": "request word 2 'rel.yam????l': byte 0xff at offset 7 "
                                       "is not valid UTF-8: connection closed (what follows "
                                       "would be the body)"}
    r = d.request(b"set-budget \xc3 1ms\n")
    assert r["ok"] is False and "not valid UTF-8" in r["error"], r
    assert sched_getattr(a.pid).runtime_ns == 2_000_000


_NAMED = r"""
import ctypes, sys, time
ctypes.CDLL(None).prctl(15, bytes.fromhex(sys.argv[1]), 0, 0, 0)  # PR_SET_NAME
time.sleep(100000)
"""


def test_non_utf8_comm_keeps_replies_json(spawn, daemon, profile):
    comm = b"irqt\xff\xfe\xc3(bad"
    p = subprocess.Popen([sys.executable, "-c", _NAMED, comm.hex()])
    spawn.procs.append(p)
    wait_for(lambda: Path(f"/proc/{p.pid}/comm").read_bytes().rstrip(b"\n") == comm)
    d = daemon().start(profile(profile_text(task_target("odd", "2ms", "10ms", pid=p.pid))))
    try:
        for verb in ("status", "stats"):
            with d.connect() as s:
                s.sendall(verb.encode() + b"\n")
                raw = read_line(s)
            raw.decode("utf-8")                     # strict: raises on any stray byte
            assert json.loads(raw)["ok"] is True
        out = subprocess.run([sys.executable, "-m", "irqres", "status", "--json",
                              "--socket", str(d.sock)], capture_output=True, text=True,
                             timeout=30, check=False)
        assert out.returncode == 0, out.stderr
        threads = [th for t in json.loads(out.stdout)["targets"] for th in t["threads"]]
        assert threads[0]["comm"] == "irqt\ufffd\ufffd\ufffd(bad"
    finally:
        assert d.stop() == 0


# ---- malformed, oversized and partial requests ---------------------------------------

MALFORMED = [
    b"\n", b"\r\n", b"   \t \n", b"PING\n", b"ping ping\n", b"\x00\n", b"\x00ping\n",
    b"set-budget\n", b"set-budget a\n", b"set-budget a -1ms\n", b"set-budget a 1e9ms\n",
    b"set-budget a 99999999999999999999999ms\n", b"set-budget a 1ms 0ns\n",
    b"set-budget pid:-1 1ms\n", b"set-budget ../../a 1ms\n", b"set-budget a 2ms 1ms\n",
    b"set-budget " + b"n" * 200 + b" 1ms\n", b"plan\n", b"plan a b\n",
    b"plan " + b"/x" * 2000 + b"\n", b"apply /dev/zero\n", b"apply /proc/self/mem\n",
    b"apply /\n", b"plan /nonexistent\n", b"a b c d e f g h i j k\n",
    b"\xc0\xaf\n", b"\xed\xa0\x80\n", b"ping\x7f\n", b"status \x1b[2J\n",
]


def test_malformed_requests_all_answered(running):
    d, a = running
    pid = d.proc.pid
    with d.connect() as s:
        for line in MALFORMED:
            if line.split(b" ")[0].rstrip(b"\n") in (b"plan", b"apply", b"verify"):
                continue
            r = ask(s, line)
            assert r["ok"] is False and r["error"], (line, r)
    # a refused line that may announce a body ends its connection (what follows would
    # be the body, not requests)
    for line in MALFORMED:
        if line.split(b" ")[0].rstrip(b"\n") in (b"plan", b"apply", b"verify"):
            with d.connect() as s:
                r = ask(s, line)
                assert r["ok"] is False and "connection closed" in r["error"], (line, r)
    assert d.request("ping")["ok"]
    assert d.proc.pid == pid and d.proc.poll() is None
    assert sched_getattr(a.pid).runtime_ns == 2_000_000


def test_partial_and_oversized(running):
    d, _ = running
    # a request split into single bytes is still one request
    with d.connect() as s:
        for b in b"status\n":
            s.sendall(bytes([b]))
            time.sleep(0.005)
        assert json.loads(read_line(s))["ok"]
    # 4096 bytes with the newline are accepted; more is refused with an answer
    with d.connect() as s:
        assert ask(s, b"ping" + b" " * 4091 + b"\n")["ok"]
    with d.connect() as s:
        s.sendall(b"p" * 10000)
        r = json.loads(read_line(s))
        assert r["ok"] is False and "longer than 4096 bytes" in r["error"]
    # a client that sends half a request and hangs up costs nothing
    for _ in range(20):
        with d.connect() as s:
            s.sendall(b"set-budget a 2")
    assert d.request("ping")["ok"]


def test_half_sent_clients_do_not_lock_others_out(running):
    """64 connections that send half a request and go silent, then more clients: each
    is answered within about a second (the slot of the longest wait is taken)."""
    d, _ = running
    silent = []
    for _ in range(64):
        s = d.connect()
        s.sendall(b"stat")
        silent.append(s)
    time.sleep(1.2)
    for _ in range(5):
        t0 = time.monotonic()
        with d.connect() as s:
            assert ask(s, b"ping\n")["ok"]
        assert time.monotonic() - t0 < 3
    # the request timeout (5 s) answers and closes every silent one
    for s in silent:
        s.settimeout(10)
        r = json.loads(read_line(s))
        assert r["ok"] is False and "request incomplete (4 bytes, no newline)" in r["error"]
        assert s.recv(10) == b""
        s.close()
    assert d.request("ping")["ok"]


# ---- many clients, memory and descriptors --------------------------------------------

def _client(d, n: int, errors: list, counts: list) -> None:
    lines = [b"ping\n", b"status\n", b"stats\n", b"bogus\n", b"set-budget a 2ms\n"]
    try:
        with d.connect() as s:
            f = s.makefile("rb")
            for i in range(n):
                s.sendall(lines[i % len(lines)])
                r = json.loads(f.readline())
                if r["ok"] is not (i % len(lines) != 3):
                    errors.append(r)
                counts.append(1)
    except Exception as exc:  # a thread's failure is the test's
        errors.append(repr(exc))


def _hammer(d, clients: int, each: int) -> tuple[list, int]:
    errors: list = []
    counts: list = []
    threads = [threading.Thread(target=_client, args=(d, each, errors, counts))
               for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    return errors, len(counts)


def test_50_clients_x_200_requests_flat(running):
    d, a = running
    pid = d.proc.pid
    errors, n = _hammer(d, 10, 50)          # warm-up: allocator and buffers settle
    assert not errors and n == 500
    fds0 = settled_fds(pid)                 # the warm-up's connections closed
    rss0 = rss_kib(pid)
    t0 = time.monotonic()
    errors, n = _hammer(d, 50, 200)
    t1 = time.monotonic() - t0
    assert not errors, errors[:5]
    assert n == 10_000
    wait_for(lambda: open_fds(pid) <= fds0, 10)
    rss1 = rss_kib(pid)
    assert rss1 - rss0 < 1024, f"RSS grew from {rss0} KiB to {rss1} KiB"
    errors, n = _hammer(d, 50, 200)          # a second round: no growth at all
    assert not errors and n == 10_000
    wait_for(lambda: open_fds(pid) <= fds0, 10)
    rss2 = rss_kib(pid)
    assert rss2 - rss1 < 256
    print(f"\n50 clients x 200 requests: {t1:.2f} s; irqresd RSS {rss0} -> {rss1} -> "
          f"{rss2} KiB, open fds {fds0} -> {open_fds(pid)}")
    assert d.proc.poll() is None
    assert sched_getattr(a.pid).runtime_ns == 2_000_000


# ---- clients that are not root -------------------------------------------------------

_AS_NOBODY = r"""
import json, socket, sys
out = []
for line in sys.argv[2:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    try:
        s.connect(sys.argv[1])
    except OSError as exc:
        out.append({"connect": exc.errno})
        continue
    try:
        try:  # the refusal may come (and the connection close) before the request goes
            s.sendall(line.encode() + b"\n")
        except BrokenPipeError:
            pass
        buf = b""
        while not buf.endswith(b"\n"):
            c = s.recv(4096)
            if not c:
                break
            buf += c
        out.append(json.loads(buf) if buf else {"eof": True})
    except OSError as exc:
        out.append({"io": exc.errno})
    s.close()
print(json.dumps(out))
"""


def _as_nobody(sock: Path, *lines: str) -> list:
    p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                        sys.executable, "-c", _AS_NOBODY, str(sock), *lines],
                       capture_output=True, text=True, timeout=60, check=False)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_non_root_clients_refused_with_an_answer(spawn, profile):
    a = spawn()
    # the daemon's run dir below a directory others may traverse (pytest's is 0700)
    top = Path(tempfile.mkdtemp(prefix="irqres-abuse-"))
    os.chmod(top, 0o711)
    d = Daemon(top, 0)
    try:
        d.start(profile(profile_text(task_target("a", "2ms", "10ms", pid=a.pid))))
        verbs = ["ping", "status", "set-budget a 9ms", "apply /etc/passwd", "restore"]
        # as installed, the socket's directory (0700) keeps other users out entirely
        assert all(r == {"connect": 13} for r in _as_nobody(d.sock, *verbs))   # EACCES
        # opened up by an administrator, the daemon itself refuses, and says so
        os.chmod(d.run_dir, 0o755)
        os.chmod(d.sock, 0o666)
        for r in _as_nobody(d.sock, *verbs):
            assert r == {"ok": False, "error": "permission denied: uid 65534 may not "
                                               "control irqresd"}, r
        assert sched_getattr(a.pid).runtime_ns == 2_000_000
        assert d.request("status")["ok"]
        assert d.stop() == 0
    finally:
        d.cleanup()
        shutil.rmtree(top, ignore_errors=True)
