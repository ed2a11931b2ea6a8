"""The irqresd client against a fake daemon speaking docs/protocol.md.

``FakeDaemon`` is also used by the CLI and tune tests (``from test_client import ...``).
"""

from __future__ import annotations

import copy
import json
import os
import socket
import stat
import threading
import time

import pytest
from irqres.client import (
    BODY_MAX,
    Client,
    DaemonNotRunning,
    daemon_running,
    find_irqresd,
    socket_path,
)
from irqres.errors import DaemonError
from irqres.units import DurationError, parse_duration

PLAN = {
    "profile": "/etc/irqres/nic.yaml", "feasible": True,
    "summary": "the kernel will accept it",
    "items": [{"target": "nic", "pid": 105, "comm": "irq/11-eth0", "irq": 11, "cpus": "0",
               "old_policy": "fifo", "old_priority": 50, "old_nice": 0,
               "new_policy": "deadline", "runtime_ns": 2_000_000, "deadline_ns": 10_000_000,
               "period_ns": 10_000_000, "bw": 0.2, "needs_partition": True,
               "partition": "irqres.cpu0", "cpuset": "/sys/fs/cgroup/irqres.cpu0",
               "buffer_check": "ok", "verdict": "ok"}],
    "domains": [{"cpus": "1", "partition": None, "new": False, "capacity": 0.95,
                 "existing_bw": 0.0, "new_bw": 0.0, "total_bw": 0.0, "ok": True},
                {"cpus": "0", "partition": "irqres.cpu0", "new": True, "capacity": 0.95,
                 "existing_bw": 0.0, "new_bw": 0.2, "total_bw": 0.2, "ok": True}],
    "warnings": ["nic.yaml:9:5: target 'disk' matches no thread yet; its threads are "
                 "reserved when they appear"], "errors": [],
}

ADAPTIVE = {"sample_ns": 1_000_000, "gain": 0.25, "window": 100, "default_job_ns": 20_000,
            "min_runtime_ns": 100_000, "max_runtime_ns": 800_000, "hysteresis_ns": 0}


def make_target(name="nic", pid=105, runtime=2_000_000, period=10_000_000, adaptive=None,
                kind="irq", irq=11):
    return {"name": name, "kind": kind, "mode": "adaptive" if adaptive else "static",
            "runtime_ns": runtime, "period_ns": period, "deadline_ns": period,
            "min_interarrival_ns": None, "buffer": None, "adaptive": adaptive,
            "threads": [{"pid": pid, "comm": f"irq/{irq}-eth0" if kind == "irq" else "load",
                         "irq": irq if kind == "irq" else None, "actions": ["eth0"],
                         "secondary": False, "cpus": "0", "policy": "deadline",
                         "runtime_ns": runtime, "period_ns": period, "deadline_ns": period,
                         "orig_policy": "fifo", "orig_priority": 50, "cpuset": None}]}


class FakeDaemon:
    """A small irqresd stand-in on a Unix socket, keeping just enough state.

    ``override[word]`` replaces the reply to a request: a dict (sent as JSON), bytes (sent
    raw), ``"close"`` (hang up) or ``"silent"`` (never answer).
    """

    def __init__(self, path: str, targets: list | None = None, profile: str | None = None):
        self.path = path
        self.targets = targets if targets is not None else [make_target()]
        self.profile = profile
        self.requests: list[str] = []
        self.bodies: list[bytes] = []  # the profile texts of plan/apply
        self.override: dict[str, object] = {}
        self.stats_threads: list[dict] = []
        self.stats_fn = None          # when set, called for each stats request
        self.stats_clock = None       # when set, gives the stats reply's time_ns
        self.lock = threading.Lock()
        self._srv: socket.socket | None = None
        self._stop = threading.Event()

    def start(self) -> FakeDaemon:
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(self.path)
        srv.listen(16)
        srv.settimeout(0.1)
        self._srv = srv
        self._stop.clear()
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._srv is not None:
            self._srv.close()
            self._srv = None
        if os.path.exists(self.path):
            os.unlink(self.path)

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._srv.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = b""
        with conn:
            while not self._stop.is_set():
                try:
                    chunk = conn.recv(65536)
                except OSError:
                    return
                if not chunk:
                    return
                buf += chunk
                while b"\n" in buf:
                    line, _, rest = buf.partition(b"\n")
                    words = line.decode().split()
                    if len(words) == 3 and words[0] in ("plan", "apply"):  # + a body
                        if len(rest) < int(words[2]):
                            break
                        self.bodies.append(rest[:int(words[2])])
                        rest = rest[int(words[2]):]
                    buf = rest
                    with self.lock:
                        self.requests.append(line.decode())
                    ov = self.override.get(words[0] if words else "")
                    if ov == "close":
                        return
                    if ov == "silent":
                        time.sleep(5)
                        return
                    if isinstance(ov, bytes):
                        conn.sendall(ov)
                        continue
                    reply = ov if isinstance(ov, dict) else self.handle(words)
                    conn.sendall((json.dumps(reply) + "\n").encode())

    def target(self, name: str) -> dict | None:
        return next((t for t in self.targets if t["name"] == name), None)

    def handle(self, words: list[str]) -> dict:
        cmd, args = (words[0], words[1:]) if words else ("", [])
        with self.lock:
            if cmd == "ping":
                return {"ok": True, "version": "0.1.0"}
            if cmd == "status":
                return {"ok": True, "pid": 4242, "profile": self.profile,
                        "admission_control": "keep", "targets": copy.deepcopy(self.targets)}
            if cmd == "stats":
                threads = self.stats_fn() if self.stats_fn else self.stats_threads
                now = self.stats_clock() if self.stats_clock else time.monotonic_ns()
                return {"ok": True, "time_ns": now, "threads": copy.deepcopy(threads)}
            if cmd in ("plan", "apply") and len(args) == 2:
                if cmd == "apply":
                    self.profile = args[0]
                return {"ok": True, "plan": copy.deepcopy(PLAN)}
            if cmd == "restore":
                self.profile = None
                return {"ok": True, "restored": 1}
            if cmd == "reload":
                self.profile = "/etc/irqres/profile.yaml"
                return {"ok": True, "profile": self.profile}
            if cmd == "set-budget" and len(args) in (2, 3):
                t = self.target(args[0])
                if t is None:
                    return {"ok": False, "error": f"set-budget: no target named {args[0]}"}
                old_deadline = t["deadline_ns"]
                try:
                    t["runtime_ns"] = parse_duration(args[1])
                    if len(args) == 3:  # the deadline keeps its ratio to the period
                        period = parse_duration(args[2])
                        t["deadline_ns"] = t["deadline_ns"] * period // t["period_ns"]
                        t["period_ns"] = period
                except DurationError as exc:
                    return {"ok": False, "error": f"set-budget {args[0]}: {exc}"}
                return {"ok": True, "target": t["name"], "runtime_ns": t["runtime_ns"],
                        "period_ns": t["period_ns"], "deadline_ns": t["deadline_ns"],
                        "deadline_scaled": t["deadline_ns"] != old_deadline,
                        "old_deadline_ns": old_deadline,
                        "pids": [th["pid"] for th in t["threads"]]}
            return {"ok": False, "error": f"unknown request {cmd!r}"}


def fake_daemon(tmp_path, monkeypatch, **kw):
    """Start a FakeDaemon in ``tmp_path`` and point $IRQRES_SOCKET at it (a generator)."""
    d = FakeDaemon(str(tmp_path / "irqresd.sock"), **kw).start()
    monkeypatch.setenv("IRQRES_SOCKET", d.path)
    try:
        yield d
    finally:
        d.stop()


@pytest.fixture
def fake(tmp_path, monkeypatch):
    yield from fake_daemon(tmp_path, monkeypatch)


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
