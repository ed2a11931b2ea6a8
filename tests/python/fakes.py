"""Stand-ins the Python tests share: a fake irqresd on a Unix socket speaking
docs/protocol.md, the data it serves, and a small SCHED_DEADLINE load model for the tune
loop. Their fixtures are in conftest.py; a test module imports the classes and data from
here (never from another test module).
"""

from __future__ import annotations

import copy
import json
import os
import socket
import threading
import time

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
                         "orig_policy": "fifo", "orig_priority": 50, "cpuset": None}],
            "waiting": []}


def make_waiting(pid=106, irq=12, waiting_ns=1_500_000_000, runtime=2_000_000,
                 period=10_000_000) -> dict:
    """A hotplugged thread irqresd moved into its partition and has not reserved yet."""
    return {"pid": pid, "comm": f"irq/{irq}-eth1", "irq": irq, "cpus": "1",
            "cpuset": "/sys/fs/cgroup/irqres.cpu1", "runtime_ns": runtime,
            "period_ns": period, "deadline_ns": period, "waiting_ns": waiting_ns,
            "reason": "SCHED_DEADLINE is refused (EPERM) until the thread has run in its "
                      "cpuset partition once, at its next interrupt"}


class FakeDaemon:
    """A small irqresd stand-in on a Unix socket, keeping just enough state.

    ``override[word]`` replaces the reply to a request: a dict (sent as JSON), bytes (sent
    raw), ``"close"`` (hang up), ``"silent"`` (no answer for 5 s, then hang up) or
    ``"hang"`` (no answer until the fake stops), or a callable given the connection (it
    answers as it likes; returning False hangs up). ``once[word]`` does the same for the
    next such request only. ``frozen`` set: every request, of any word, hangs, as with a
    stopped (SIGSTOP) irqresd whose socket still accepts connections.
    """

    def __init__(self, path: str, targets: list | None = None, profile: str | None = None):
        self.path = path
        self.targets = targets if targets is not None else [make_target()]
        self.apply_waiting: list[dict] = []   # the apply reply's "waiting"
        self.profile = profile
        self.requests: list[str] = []
        self.bodies: list[bytes] = []  # the profile texts of plan/apply
        self.override: dict[str, object] = {}
        self.once: dict[str, object] = {}
        self.frozen = threading.Event()
        self.stats_threads: list[dict] = []
        self.stats_fn = None          # when set, called for each stats request
        self.stats_clock = None       # when set, gives the stats reply's time_ns
        self.accounting = None        # when set, the stats reply's "accounting" member
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
                    word = words[0] if words else ""
                    with self.lock:
                        ov = self.once.pop(word, self.override.get(word))
                    if self.frozen.is_set():
                        ov = "hang"
                    if ov == "close":
                        return
                    if ov == "silent":
                        time.sleep(5)
                        return
                    if ov == "hang":
                        self._stop.wait()
                        return
                    if isinstance(ov, bytes):
                        try:
                            conn.sendall(ov)
                        except OSError:
                            return
                        continue
                    if callable(ov):
                        try:
                            if ov(conn) is False:
                                return
                        except OSError:
                            return
                        continue
                    reply = ov if isinstance(ov, dict) else self.handle(words)
                    try:
                        conn.sendall((json.dumps(reply) + "\n").encode())
                    except OSError:         # the client gave up (a cancelled request)
                        return

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
                reply = {"ok": True, "time_ns": now, "threads": copy.deepcopy(threads)}
                if self.accounting is not None:
                    reply["accounting"] = copy.deepcopy(self.accounting)
                return reply
            if cmd in ("plan", "apply") and len(args) == 2:
                if cmd == "apply":
                    self.profile = args[0]
                reply = {"ok": True, "plan": copy.deepcopy(PLAN)}
                if cmd == "apply":
                    reply["waiting"] = copy.deepcopy(self.apply_waiting)
                return reply
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


# -- the stats of two threads, one of each kind (irqres stats, metrics, top) --------
STATUS = {"ok": True, "pid": 4242, "profile": "/etc/irqres/profile.yaml",
          "targets": [make_target("nic", pid=105),
                      make_target("load", pid=777, kind="task")]}
NIC = {"pid": 105, "comm": "irq/11-eth0", "target": "nic", "irqs": [11], "irq_count": 1234,
       "policy": "deadline", "runtime_ns": 2_000_000, "period_ns": 10_000_000,
       "deadline_ns": 8_000_000, "cpu_time_ns": 1_234_567_891, "wait_time_ns": 5_000,
       "timeslices": 3, "voluntary_switches": 10, "involuntary_switches": 2}
TASK = {"pid": 777, "comm": 'lo"ad\\x', "target": "load", "irqs": [], "irq_count": 0,
        "policy": "other", "runtime_ns": None, "period_ns": None, "deadline_ns": None,
        "cpu_time_ns": 7, "wait_time_ns": 0, "timeslices": 1, "voluntary_switches": 1,
        "involuntary_switches": 4}
STATS = {"ok": True, "time_ns": 99, "threads": [NIC, TASK]}


# -- a task under SCHED_DEADLINE for the tune loop -------------------------------------
LOAD_SAMPLE_NS = 2_000_000
LOAD_PERIOD_NS = 10_000_000
LOAD_ADAPTIVE = {"sample_ns": LOAD_SAMPLE_NS, "gain": 0.25, "window": 100,
                 "default_job_ns": 1_000_000, "min_runtime_ns": 1_000_000,
                 "max_runtime_ns": 9_000_000, "hysteresis_ns": 100_000}


class LoadModel:
    """A task under SCHED_DEADLINE, one period per `stats` request: it wants ``load`` ns
    per period, gets at most the budget irqresd holds, and carries what is left."""

    def __init__(self, daemon: FakeDaemon, loads: list[tuple[int, int]], pid: int = 777):
        self.d, self.loads, self.pid = daemon, loads, pid
        daemon.stats_clock = lambda: self.calls * LOAD_SAMPLE_NS    # one sample per request
        self.calls = 0
        self.backlog = self.cpu = self.vol = self.invol = 0
        self.budgets: list[int] = []
        self.gone: range = range(0)
        self.done = threading.Event()
        self.done_at = self.requests_at_done = 0

    def load(self) -> int | None:
        n = self.calls
        for calls, load in self.loads:
            if n < calls:
                return load
            n -= calls
        return None

    def __call__(self) -> list[dict]:
        self.calls += 1
        w = self.load()
        if w is None:
            if not self.done.is_set():
                self.done_at = len(self.budgets)   # budgets after this are not the test's
                self.requests_at_done = len(self.d.requests)   # nor these requests
            self.done.set()
            w = 0
        if self.calls in self.gone:
            return []
        if self.calls == self.gone.stop:      # back, as a new thread
            self.pid += 1
            self.backlog = self.cpu = self.vol = self.invol = 0
        q = self.d.target("load")["runtime_ns"]
        self.budgets.append(q)
        # per request the task gets the share of a 10 ms period that one sample covers
        avail = self.backlog + w * LOAD_SAMPLE_NS // LOAD_PERIOD_NS
        used = min(avail, q * LOAD_SAMPLE_NS // LOAD_PERIOD_NS)
        self.backlog = min(avail - used, 5 * w)
        self.cpu += used
        if self.backlog:
            self.invol += 1
        else:
            self.vol += 1
        return [{"pid": self.pid, "comm": "load", "target": "load", "irqs": [],
                 "irq_count": 0, "policy": "deadline", "runtime_ns": q,
                 "period_ns": 10_000_000, "deadline_ns": 10_000_000, "cpu_time_ns": self.cpu,
                 "wait_time_ns": 0, "timeslices": 0, "voluntary_switches": self.vol,
                 "involuntary_switches": self.invol}]
