"""Helpers for irqresd's integration tests: sched_getattr, spawned tasks, the daemon
under test and its control socket, profile text."""

from __future__ import annotations

import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from irqres import schedattr

ROOT = Path(__file__).resolve().parents[2]
IRQRESD = Path(os.environ.get("IRQRESD", ROOT / "build" / "daemon" / "irqresd"))

# sched_getattr and the policies: irqres.schedattr, the package's one struct sched_attr
sched_getattr = schedattr.get
Sched = schedattr.Sched
SCHED_OTHER = schedattr.SCHED_OTHER
SCHED_FIFO = schedattr.SCHED_FIFO
SCHED_DEADLINE = schedattr.SCHED_DEADLINE


def need_root_and_binary() -> None:
    if os.geteuid() != 0:
        pytest.skip("irqresd integration tests need root (sched_setattr on spawned tasks)")
    if not IRQRESD.exists():
        pytest.fail(f"{IRQRESD} is missing: run `make` first")
    if not schedattr.supported():
        pytest.skip(f"no sched_getattr syscall number known for {platform.machine()}")


def dl_bandwidth_in_use() -> float:
    """CPUs' worth of SCHED_DEADLINE bandwidth that threads on this host hold now."""
    bw = 0.0
    for stat in Path("/proc").glob("[0-9]*/task/[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[38]) != SCHED_DEADLINE:  # field 41: policy
                continue
            s = sched_getattr(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
        if s.period_ns:
            bw += s.runtime_ns / s.period_ns
    return bw


def wait_for_dl_headroom(limit: float = 0.3, timeout: float = 300) -> None:
    """Other test suites on this shared host hold reservations for a while; the tests
    here need most of the machine's bandwidth, so they wait until it is free."""
    end = time.monotonic() + timeout
    while (bw := dl_bandwidth_in_use()) > limit:
        if time.monotonic() > end:
            pytest.fail(f"other SCHED_DEADLINE threads hold {bw:.2f} CPUs for {timeout:.0f}s")
        time.sleep(0.5)


SCHED_DEBUG = Path("/sys/kernel/debug/sched/debug")
RT_RUNTIME = Path("/proc/sys/kernel/sched_rt_runtime_us")


def kernel_dl_total() -> int | None:
    """The SCHED_DEADLINE total of CPU 0's root domain as the kernel prints it (signed;
    2^20 is one CPU), or None where debugfs is not readable."""
    try:
        text = SCHED_DEBUG.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == ".dl_bw->total_bw":
            return int(value)
    return None


def _settled_dl_total(reads: int = 4, gap: float = 0.05) -> int | None:
    """The kernel's total once the recount a write of sched_rt_runtime_us started has
    settled: the same in ``reads`` reads ``gap`` s apart (at most 2 s)."""
    end = time.monotonic() + 2.0
    seen = [kernel_dl_total()]
    while time.monotonic() < end and (len(seen) < reads or len(set(seen[-reads:])) > 1):
        time.sleep(gap)
        seen.append(kernel_dl_total())
    return seen[-1]


def recount_kernel_dl_bandwidth(timeout: float = 120) -> None:
    """Puts the kernel's deadline accounting right before a test (docs/enforcement.md):
    6.18 keeps the bandwidth of tasks that left SCHED_DEADLINE asleep (a write of
    sched_rt_runtime_us recounts it, as irqresd does), and a root-domain rebuild racing
    with sched_setattr can leave a task out of its total, which then falls below zero when
    that task leaves; the kernel refuses the write then (the total is over every limit),
    so the test waits for the kernel's next rebuild."""
    end = time.monotonic() + timeout
    while True:
        try:
            RT_RUNTIME.write_text(RT_RUNTIME.read_text())
        except OSError:
            pass
        total = _settled_dl_total()
        if total is None or total >= 0:
            return
        if time.monotonic() > end:
            pytest.fail(f"the kernel's SCHED_DEADLINE total has been below zero ({total}) "
                        f"for {timeout:.0f}s: it refuses every reservation")
        time.sleep(0.5)


def wait_for(pred, timeout: float = 5.0, interval: float = 0.01):
    """Polls pred() until it returns something true; returns that or fails."""
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > end:
            pytest.fail(f"timed out after {timeout}s waiting for {pred}")
        time.sleep(interval)


def unique_comm(prefix: str = "irqt") -> str:
    """A comm (at most 15 characters) that no other process on the machine has."""
    return f"{prefix}{uuid.uuid4().hex[:15 - len(prefix)]}"


_CHILD = r"""
import ctypes, sys, time
name = sys.argv[1]
if name:
    ctypes.CDLL(None).prctl(15, name.encode(), 0, 0, 0)  # PR_SET_NAME
if sys.argv[2] == "busy":
    while True:
        pass
time.sleep(100000)
"""


class Spawner:
    """Starts processes for the tests and kills them all in teardown."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen] = []

    def __call__(self, comm: str = "", busy: bool = False) -> subprocess.Popen:
        p = subprocess.Popen([sys.executable, "-c", _CHILD, comm, "busy" if busy else "idle"])
        self.procs.append(p)
        if comm:
            wait_for(lambda: Path(f"/proc/{p.pid}/comm").read_text().strip() == comm)
        return p

    def kill_all(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()


class Daemon:
    """One irqresd under test: its process, run dir, socket and log."""

    def __init__(self, tmp: Path, n: int) -> None:
        self.run_dir = tmp / f"run{n}"
        self.sock = self.run_dir / "irqresd.sock"
        self.log = tmp / f"irqresd{n}.log"
        self.proc: subprocess.Popen | None = None

    def start(self, profile: Path | None, *args: str, wait: bool = True,
              wrap: tuple[str, ...] = ()) -> Daemon:
        """Starts irqresd (under the command ``wrap``, e.g. unshare, when given)."""
        cmd = [*wrap, str(IRQRESD), "--run-dir", str(self.run_dir), "-v", *args]
        if profile is not None:
            cmd += ["-p", str(profile)]
        # The host kernel may still count the bandwidth of an earlier test's task that
        # left SCHED_DEADLINE or exited while asleep, until that task's inactive timer
        # fires: irqresd's plan admits, the kernel says EBUSY. Only that refusal is
        # tried again, a few times, a second apart; any other exit fails at once.
        for attempt in range(4):
            seen = len(self.log_text())
            with open(self.log, "ab") as logf:  # the child keeps its own copy of the fd
                self.proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT)
            if not wait:
                return self
            wait_for(lambda: self.answers() or self.proc.poll() is not None, 10)
            if self.proc.poll() is None:
                return self
            said = self.log_text()[seen:]
            if attempt < 3 and "refused: EBUSY" in said and "the plan counted" in said:
                time.sleep(1.0)
                continue
            pytest.fail(f"irqresd exited with {self.proc.returncode}:\n{self.log_text()}")
        return self

    def answers(self) -> bool:
        """True when this daemon (not a stale socket file) answers a ping."""
        try:
            return self.request("ping")["ok"]
        except OSError:
            return False

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def connect(self) -> socket.socket:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(str(self.sock))
        return s

    def request(self, line: str | bytes) -> dict:
        """Sends one request line on a new connection and returns the parsed reply."""
        with self.connect() as s:
            s.sendall(line if isinstance(line, bytes) else line.encode() + b"\n")
            return json.loads(read_line(s))

    def send_profile(self, verb: str, path: Path, name: str | None = None) -> dict:
        """plan/apply: the request line, then the profile's text (docs/protocol.md)."""
        text = Path(path).read_bytes()
        return self.request(f"{verb} {name or path} {len(text)}\n".encode() + text)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout)

    def cleanup(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.stop()
        # whatever a killed daemon left behind goes back as found
        if (self.run_dir / "state").exists():
            run_irqresd("--restore", "--run-dir", str(self.run_dir))


def read_line(s: socket.socket) -> bytes:
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf


def run_irqresd(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run([str(IRQRESD), *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def task_target(name: str, runtime: str, period: str, *, pid: int | None = None,
                comm: str | None = None, deadline: str | None = None) -> str:
    """One task target of a profile, as YAML."""
    sel = []
    if pid is not None:
        sel.append(f"      pid: {pid}")
    if comm is not None:
        sel.append(f'      comm: "{comm}"')
    text = f"  - name: {name}\n    task:\n" + "\n".join(sel) + "\n"
    text += f"    runtime: {runtime}\n    period: {period}\n"
    if deadline:
        text += f"    deadline: {deadline}\n"
    return text


def profile_text(*targets: str) -> str:
    return "version: 1\ntargets:\n" + "".join(targets)
