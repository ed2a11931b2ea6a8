"""The systemd units: Debian 12's systemd reads every directive, and irqresd.service's
scheduling does what its comment promises (the VM suite checks it on a real boot).

irqresd runs at SCHED_FIFO (bench/daemon/RESULTS.md: a new thread's reservation in well
under 1 ms whatever the CFS load), at the lowest RT priority, below the IRQ threads'
FIFO 50, and with RLIMIT_RTTIME, so that a runaway irqresd is stopped instead of
starving the CPU it spins on.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UNITS = REPO / "systemd"


def service_keys(unit: Path) -> dict[str, str]:
    keys, section = {}, ""
    for raw in unit.read_text().splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line
        elif section == "[Service]" and "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            keys[k] = v
    return keys


def test_debian_systemd_knows_every_directive(tmp_path):
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.fail("systemd-analyze is missing (Debian: the systemd package)")
    irqresd = REPO / "build" / "daemon" / "irqresd"
    paths = []
    for unit in ("irqresd.service", "irqres-tune.service"):
        text = (UNITS / unit).read_text()
        # the commands must exist for verify: this build's irqresd, any executable for irqres
        text = text.replace("/usr/local/sbin/irqresd", str(irqresd))
        text = text.replace("/usr/local/bin/irqres", shutil.which("true") or "/bin/true")
        (tmp_path / unit).write_text(text)
        paths.append(str(tmp_path / unit))
    r = subprocess.run([tool, "verify", "--man=no", *paths], capture_output=True, text=True)
    out = r.stdout + r.stderr
    assert r.returncode == 0 and out == "", out


def test_irqresd_runs_fifo_below_every_other_rt_thread():
    keys = service_keys(UNITS / "irqresd.service")
    assert keys.get("CPUSchedulingPolicy") == "fifo", keys
    # the lowest RT priority: IRQ threads (FIFO 50) and any RT application outrank it
    assert keys.get("CPUSchedulingPriority") == "1", keys
    assert keys.get("CPUSchedulingResetOnFork") == "yes", keys
    assert "RestrictRealtime" not in keys  # it would refuse the reservations' sched_setattr
    assert "LimitRTTIME" in keys


def rttime_us(value: str) -> tuple[int, int]:
    scale = {"us": 1, "ms": 1000, "s": 1_000_000, "": 1}
    soft, _, hard = value.partition(":")
    out = []
    for v in (soft, hard or soft):
        m = re.fullmatch(r"(\d+)(us|ms|s|)", v)
        assert m, f"LimitRTTIME={value}: not a value this test reads"
        out.append(int(m[1]) * scale[m[2]])
    return out[0], out[1]


@pytest.mark.root
def test_the_units_rt_limits_stop_a_runaway_process():
    """A process run exactly as the unit runs irqresd (policy, priority, reset-on-fork,
    RLIMIT_RTTIME) that spins without blocking is stopped by SIGXCPU after the limit."""
    if os.geteuid() != 0:
        pytest.skip("SCHED_FIFO needs root")
    keys = service_keys(UNITS / "irqresd.service")
    soft, hard = rttime_us(keys["LimitRTTIME"])
    assert soft <= 2_000_000, "a runaway may hold a CPU at most 2 s"
    prio = int(keys["CPUSchedulingPriority"])

    def as_the_unit():
        import resource
        resource.setrlimit(resource.RLIMIT_RTTIME, (soft, hard))
        os.sched_setscheduler(0, os.SCHED_FIFO | os.SCHED_RESET_ON_FORK,
                              os.sched_param(prio))

    t0 = time.monotonic()
    p = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=as_the_unit)
    try:
        assert os.sched_getscheduler(p.pid) == os.SCHED_FIFO | os.SCHED_RESET_ON_FORK
        rc = p.wait(timeout=soft / 1e6 + 10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    took = time.monotonic() - t0
    # the soft limit's SIGXCPU (its default action ends the process), or the hard one's
    assert rc == (-signal.SIGXCPU if soft < hard else -signal.SIGKILL), rc
    assert took >= soft / 1e6 * 0.9, took
