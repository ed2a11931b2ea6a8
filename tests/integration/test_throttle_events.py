"""irqres_thread_throttle_events_total counts what its help says: the times the kernel
took the CPU from a SCHED_DEADLINE thread (its budget ran out, or an earlier deadline
preempted it), never more than one per period, and fewer than the periods in which the
budget ran out when the kernel enforces budgets at its tick."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from irqresd_util import profile_text, task_target
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om_parse

pytestmark = pytest.mark.root

MS = 1_000_000
T_NS = 10 * MS
Q_NS = 1 * MS


def scrape(sock, pid: int) -> dict:
    r = subprocess.run([sys.executable, "-m", "irqres", "stats", "--openmetrics", "--socket",
                        str(sock)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    fams = list(om_parse(r.stdout))
    helps = {f.name: f.documentation for f in fams}
    vals = {s.name: s.value for f in fams for s in f.samples
            if s.labels.get("pid") == str(pid) and s.labels.get("kind") in (None, "involuntary")}
    return {"help": helps, **vals}


def test_throttle_events_rate(spawn, daemon, profile):
    busy = spawn(busy=True)
    d = daemon().start(profile(profile_text(task_target("hog", "1ms", "10ms", pid=busy.pid))))
    t0 = time.monotonic()
    a = scrape(d.sock, busy.pid)
    t1 = time.monotonic()
    time.sleep(2.0)
    t2 = time.monotonic()
    b = scrape(d.sock, busy.pid)
    t3 = time.monotonic()
    assert "irqres_thread_throttled_periods" not in b["help"]
    help_ = b["help"]["irqres_thread_throttle_events"]
    assert "not the periods" in help_ and "tick" in help_, help_
    events = b["irqres_thread_throttle_events_total"] - a["irqres_thread_throttle_events_total"]
    cpu_ns = (b["irqres_thread_cpu_seconds_total"] - a["irqres_thread_cpu_seconds_total"]) * 1e9
    periods_max = (t3 - t0) * 1e9 / T_NS
    periods_min = (t2 - t1) * 1e9 / T_NS
    print(f"events {events} over {periods_min:.0f}..{periods_max:.0f} periods, "
          f"cpu {cpu_ns / 1e6:.1f} ms")
    # the same counter as the involuntary context switches, under another name
    assert events == (b["irqres_thread_context_switches_total"]
                      - a["irqres_thread_context_switches_total"])
    # at most one throttling per period (+ a few preemptions by other reservations)
    assert events <= 1.1 * periods_max + 5, (events, periods_max)
    # the budget runs out in every period of a busy thread, and it ran about Q/T of the
    # time: each event ended a burst of at most Q plus one tick of overrun (4 ms at
    # HZ=250), so events >= cpu / (Q + 4 ms) -- well below one per period
    assert 0.05 * (t2 - t1) * 1e9 < cpu_ns < 0.2 * (t3 - t0) * 1e9, cpu_ns
    assert events >= 0.8 * cpu_ns / (Q_NS + 4 * MS), (events, cpu_ns)
    assert d.stop() == 0
