"""irqres top and stats --openmetrics against the real irqresd on this host, which
reserves a process this test spawns: busy 3 ms of every 10 ms under a 2 ms / 10 ms
reservation, so the kernel throttles it every period.

top runs in a pseudo-terminal, as over ssh: it draws with plain ANSI codes, redraws in
the new size when the terminal is resized (SIGWINCH from the kernel), and quits on q
with the terminal put back.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import termios
import textwrap
import time

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse
from test_tune_client import stop
from test_tune_task import need_root_and_daemon

pytestmark = pytest.mark.root

BUSY = textwrap.dedent("""
    import time
    k, start = 0, time.monotonic()
    while True:
        t = start + k * 0.010
        while time.monotonic() < t + 0.003:
            pass
        k += 1
        d = start + k * 0.010 - time.monotonic()
        if d > 0:
            time.sleep(d)
        else:
            k = int((time.monotonic() - start) / 0.010) + 1
""")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture
def reserved(tmp_path):
    exe = need_root_and_daemon()
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    prof = tmp_path / "busy.yaml"
    prof.write_text(f"version: 1\ntargets:\n  - name: busy\n    task:\n      pid: {busy.pid}\n"
                    "    runtime: 2ms\n    period: 10ms\n")
    sock = tmp_path / "irqresd.sock"
    log = tmp_path / "irqresd.log"
    with log.open("w") as f:
        daemon = subprocess.Popen([exe, "-p", str(prof), "--run-dir", str(tmp_path),
                                   "--socket", str(sock), "--no-netlink"],
                                  stdout=f, stderr=subprocess.STDOUT)
    try:
        for _ in range(200):
            if sock.exists() or daemon.poll() is not None:
                break
            time.sleep(0.05)
        if not sock.exists():
            text = log.read_text()
            if "EBUSY" in text:
                pytest.skip(f"no SCHED_DEADLINE bandwidth left on this host now: {text[-300:]}")
            pytest.fail(f"irqresd did not start: {text}")
        yield {"pid": busy.pid, "sock": str(sock)}
    finally:
        stop(daemon)
        busy.kill()
        busy.wait()


def test_stats_openmetrics_on_a_real_reservation(reserved):
    def scrape() -> dict:
        r = subprocess.run([sys.executable, "-m", "irqres", "stats", "--openmetrics",
                            "--socket", reserved["sock"]], capture_output=True, text=True,
                           timeout=30)
        assert r.returncode == 0, r.stderr
        return {s.name: s.value for f in om_parse(r.stdout) for s in f.samples
                if s.labels.get("pid") == str(reserved["pid"])}

    t0 = time.monotonic()
    a = scrape()
    t1 = time.monotonic()
    time.sleep(1.0)
    t2 = time.monotonic()
    b = scrape()
    t3 = time.monotonic()
    assert (b["irqres_thread_runtime_seconds"], b["irqres_thread_period_seconds"]) == (
        0.002, 0.01)
    used = b["irqres_thread_cpu_seconds_total"] - a["irqres_thread_cpu_seconds_total"]
    # it wants 30 % of a CPU and may have 20 %: it gets about its budget, not more
    # (the two reads lie between t0..t1 and t2..t3)
    assert 0.1 * (t2 - t1) < used < 0.22 * (t3 - t0), (used, t2 - t1, t3 - t0)
    throttled = (b["irqres_thread_throttle_events_total"]
                 - a["irqres_thread_throttle_events_total"])
    # throttled in a good share of the periods (100 a second) between the two reads: half
    # of them on a quiet host, 44 % seen on a host at load 18, where the task's own
    # wake-ups drift against its periods; an unreserved or uncounted task shows none
    # (test_throttle_events.py checks the relation to periods)
    assert 20 * (t2 - t1) <= throttled <= 150 * (t3 - t0), (throttled, t2 - t1, t3 - t0)


def _read_until(fd: int, pred, seconds: float) -> str:
    buf, end = "", time.monotonic() + seconds
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:          # EIO: the child closed the terminal
                break
            if not chunk:
                break
            buf += chunk.decode(errors="replace")
            if pred(buf):
                return buf
    return buf


def _frames(buf: str) -> list[list[str]]:
    """The whole frames in ``buf``, ANSI codes taken out. top writes a frame at once, from
    cursor-home to erase-below, but the terminal may hand it over in pieces: a frame
    whose erase-below has not come yet is not whole."""
    frames = []
    for f in buf.split("\x1b[H")[1:]:
        body, end, _ = f.partition("\x1b[J")
        if end and "TARGET" in body:
            frames.append([ANSI.sub("", ln).rstrip("\r") for ln in body.split("\n")])
    return frames


def _resize(fd: int, rows: int, cols: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def test_top_in_a_terminal(reserved):
    pid, fd = pty.fork()
    if pid == 0:                                    # the child: top on the pty
        os.execvpe(sys.executable, [sys.executable, "-m", "irqres", "top", "--socket",
                                    reserved["sock"], "--interval", "300ms"],
                   {**os.environ, "TERM": "xterm", "COLUMNS": "", "LINES": ""})
    try:
        _resize(fd, 30, 140)
        row = re.compile(rf"^busy\s+python3?\S*\s+{reserved['pid']}\s.*2ms/10ms\s+\S+\s+(\d+)%")

        def used(b: str) -> list[int]:       # its %Q in each whole frame that shows one
            return [int(m.group(1)) for f in _frames(b) for ln in f if (m := row.search(ln))]

        buf = _read_until(fd, lambda b: len(used(b)) >= 3, 30)
        assert "\x1b[?1049h" in buf, "no alternate screen"
        frames = _frames(buf)
        assert len(used(buf)) >= 3, "\n".join(frames[-1]) if frames else buf[-2000:]
        # it uses about its whole budget: 3 ms wanted, 2 ms allowed. The median of three
        # 300 ms intervals: on a loaded host one late read of irqresd's makes one
        # interval look short and the next long.
        assert 50 <= statistics.median(used(buf)[:3]) <= 130, (used(buf), frames[-1])

        # resized to 60 columns: the kernel sends SIGWINCH and top redraws to fit
        def narrow(b: str) -> bool:
            f = (_frames(b) or [[]])[-1]
            return len(f) > 2 and max(map(len, f)) <= 60 and "TARGET" in f[2] \
                and str(reserved["pid"]) in "\n".join(f)

        _resize(fd, 20, 60)
        buf = _read_until(fd, narrow, 20)
        frame = (_frames(buf) or [[]])[-1]
        assert len(frame) > 2 and max(map(len, frame)) <= 60, "\n".join(frame) or buf[-2000:]
        assert str(reserved["pid"]) in "\n".join(frame) and "%Q" in frame[2]
        os.write(fd, b"q")
        buf = _read_until(fd, lambda b: "\x1b[?1049l" in b, 10)
        assert "\x1b[?1049l" in buf, "the terminal was not put back"
        _, status = os.waitpid(pid, 0)
        pid = 0
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        if pid:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
