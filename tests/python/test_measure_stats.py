"""Statistics tables and IRQ-time accounting, with known answers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from irqres.measure.accounting import format_served, served_processes, uncredited_wakeups
from irqres.measure.activations import activations
from irqres.measure.stats import Summary, thread_stats
from irqres.report import Options, analyze
from irqres.trace import read_trace
from irqres.trace.reader import FLAG_HARDIRQ, FLAG_NMI, FLAG_SOFTIRQ
from irqres.trace.synthetic import irq_thread_trace

DATA = Path(__file__).resolve().parents[1] / "data"


def test_summary_of_known_samples():
    s = Summary.of(np.array([1_000, 2_000, 3_000, 6_000], dtype=np.int64))
    assert (s.count, s.min_ns, s.max_ns) == (4, 1_000, 6_000)
    assert s.mean_ns == 3_000.0
    assert math.isclose(s.std_ns, math.sqrt((4 + 1 + 0 + 9) / 4) * 1_000)
    # one duration format in the table, as everywhere else
    assert s.row() == ["4", "3us", "1.871us", "1us", "6us"]
    empty = Summary.of(np.empty(0, dtype=np.int64))
    assert empty.count == 0 and empty.row() == ["0", "-", "-", "-", "-"]
    # no samples: no statistic at all, never a count of 0 with a min of 0
    assert empty.to_dict() == {"count": 0, "mean_ns": None, "std_ns": None,
                               "min_ns": None, "max_ns": None}


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 10**12), min_size=1, max_size=200))
def test_summary_matches_numpy(values):
    x = np.array(values, dtype=np.int64)
    s = Summary.of(x)
    assert s.min_ns <= s.mean_ns <= s.max_ns
    assert math.isclose(s.mean_ns, float(np.mean(x)), rel_tol=1e-12)
    assert math.isclose(s.std_ns, float(np.std(x)), rel_tol=1e-9, abs_tol=1e-3)


def test_thread_table_of_a_periodic_thread():
    arrivals = 1_000_000 + np.arange(100) * 2_000_000  # 500 Hz
    b, _ = irq_thread_trace(arrivals, [150_000] * 100)
    trace = b.build()
    st_ = thread_stats(activations(trace)[0])
    assert st_.activations == 100
    assert st_.interarrival.mean_ns == 2_000_000 and st_.interarrival.std_ns == 0
    assert st_.exec.min_ns == st_.exec.max_ns == 150_000
    span = trace.last_ts - trace.first_ts
    assert math.isclose(st_.irq_rate_hz, 100 * 1e9 / span)
    assert math.isclose(st_.bandwidth, 100 * 150_000 / span)
    text = st_.table()
    # each value in its own unit, 4 significant digits (irqres.tables.readable)
    assert "2ms" in text and "150us" in text and "CPU bandwidth 7.5" in text
    d = st_.to_dict()
    assert d["exec"]["mean_ns"] == 150_000 and d["irq_requests"] == 100


def test_a_short_value_beside_long_ones_is_never_shown_as_0():
    """An execution time of microseconds in a table whose inter-arrival times run to
    seconds (and a 0.2 ms gap beside 2 s ones) keeps its digits."""
    arrivals = [1_000_000, 1_202_400, 2_001_202_400, 4_001_202_400]
    b, _ = irq_thread_trace(arrivals, [97_590, 290_100, 180_000, 150_000])
    text = thread_stats(activations(b.build())[0]).table()
    rows = {ln[:24].strip(): ln[33:].split() for ln in text.splitlines()[1:5]}
    assert "0s" not in [c for cells in rows.values() for c in cells], text
    assert rows["execution time"][3] == "290.1us", text


def test_irq_time_is_split_evenly_among_the_woken_processes():
    arrivals = [1_000_000, 2_000_000, 3_000_000, 4_000_000]
    # job 0 wakes pid 500; job 1 wakes 500 and (below) 600; job 2 wakes nobody; job 3: 600
    b, _ = irq_thread_trace(arrivals, [90_001, 100_001, 50_000, 30_000],
                            served={0: 500, 1: 500, 3: 600})
    b.comm(500, "player")
    b.comm(600, "recorder")
    b.waking(2_050_000, 0, 100, 600, 1)  # inside activation 1 (2.002 .. 2.103 ms)
    trace = b.build()
    act = activations(trace)[0]
    served = {s.comm: s for s in served_processes(trace, act)}
    # activation 1 (100,001 ns) is split 50,001 (pid 500, the lower pid) + 50,000
    assert served["player"].irq_time_ns == 90_001 + 50_001
    assert served["recorder"].irq_time_ns == 50_000 + 30_000
    assert served["(none)"].irq_time_ns == 50_000
    assert served["player"].activations == 2 and served["player"].wakeups == 2
    assert sum(s.irq_time_ns for s in served.values()) == int(act.exec_ns.sum())
    assert math.isclose(sum(s.share for s in served.values()), 1.0)
    text = format_served(list(served.values()))
    assert "player" in text and "recorder" in text


def test_wakeups_outside_activations_are_not_accounted():
    b, _ = irq_thread_trace([1_000_000, 2_000_000], [10_000, 10_000])
    b.comm(700, "late")
    b.waking(1_500_000, 0, 100, 700, 1)  # the thread is asleep: not its IRQ work
    trace = b.build()
    served = served_processes(trace, activations(trace)[0])
    assert [s.comm for s in served] == ["(none)"]


def test_report_of_two_threads_text_json_and_one_profile():
    rng = np.random.default_rng(11)
    arr = 1_000_000 + np.cumsum(rng.integers(900_000, 1_100_000, 300))
    b, _ = irq_thread_trace(arr, rng.integers(50_000, 150_000, 300), irq=11, action="eth0")
    arr2 = 1_500_000 + np.cumsum(rng.integers(1_800_000, 2_200_000, 150))
    irq_thread_trace(arr2, rng.integers(20_000, 40_000, 150), pid=101, irq=38,
                     action="virtio2-input.0", cpu=1, builder=b)
    trace = b.build()
    rep = analyze(trace, Options(periods_ns=[1_000_000, 2_000_000], target_prob=0.9,
                                 buffers=((None, 64),), mc_jobs=20_000))
    text = rep.text()
    assert "== irq/11-eth0 (pid 100, IRQ 11: eth0) ==" in text
    assert "IRQ 11 (eth0): 300 requests" in text and "IRQ 38 (virtio2-input.0): 150" in text
    assert "buffering check: N_c = 64" in text
    d = json.loads(json.dumps(rep.to_dict(), allow_nan=False))
    assert [t["irq"] for t in d["threads"]] == [11, 38]
    assert [ln["requests"] for ln in d["irq_lines"]] == [300, 150]
    prof = yaml.safe_load(rep.profile())
    assert prof["version"] == 1
    assert [t["name"] for t in prof["targets"]] == ["irq11-eth0", "irq38-virtio2-input.0"]
    assert prof["targets"][1]["action"] == "virtio2-input.0"
    assert all(t["buffer"] == 64 for t in prof["targets"])


def _thread_with_foreign_wakeups(uname: str):
    arrivals = [1_000_000, 2_000_000, 3_000_000]
    b, _ = irq_thread_trace(arrivals, [100_000] * 3, served={0: 500, 1: 500, 2: 500})
    b.uname = uname
    b.comm(500, "player")
    b.comm(700, "ktimers/0")
    b.comm(800, "rx-reader")
    # a hard IRQ (a timer) taken while the thread runs wakes its own waiter "from" it
    for t in arrivals:
        b.waking(t + 20_000, 0, 100, 700, 0, flags=FLAG_HARDIRQ | 0x01)
    # NET_RX served in soft IRQ context inside the thread wakes the socket's reader
    b.waking(2_030_000, 0, 100, 800, 0, flags=FLAG_SOFTIRQ)
    b.waking(2_040_000, 0, 100, 700, 0, flags=FLAG_NMI)
    return b.build()


def test_wakeups_raised_in_hard_irq_context_are_not_credited():
    trace = _thread_with_foreign_wakeups("Linux box 6.18.4 x86_64")
    act = activations(trace)[0]
    served = {s.comm: s for s in served_processes(trace, act)}
    assert "ktimers/0" not in served
    # not PREEMPT_RT: a soft IRQ may be another interrupt's, run on its way out
    assert "rx-reader" not in served
    assert served["player"].irq_time_ns == int(act.exec_ns.sum())
    assert uncredited_wakeups(trace, act) == {"hardirq": 4, "softirq": 1}


def test_soft_irq_wakeups_are_the_threads_own_work_on_preempt_rt():
    trace = _thread_with_foreign_wakeups("Linux irqres-vm 6.1.0-50-rt-amd64 x86_64")
    assert trace.preempt_rt is True
    act = activations(trace)[0]
    served = {s.comm: s for s in served_processes(trace, act)}
    assert "ktimers/0" not in served
    assert served["rx-reader"].irq_time_ns == 50_000
    assert served["player"].irq_time_ns == int(act.exec_ns.sum()) - 50_000
    assert uncredited_wakeups(trace, act) == {"hardirq": 4, "softirq": 0}


def test_real_preempt_rt_trace_credits_the_socket_reader_not_hard_irq_wakeups():
    # tests/data/vm-e1000-udp.dat: irq/11-eth0 wakes the UDP receiver from NET_RX (soft
    # IRQ context, in the thread) and, from hard IRQs taken while it ran, irq_work/0,
    # rcuc/0 and ktimers/0
    trace = read_trace(DATA / "vm-e1000-udp.dat")
    nic = next(a for a in activations(trace) if a.thread.comm == "irq/11-eth0")
    served = served_processes(trace, nic)
    comms = {s.comm for s in served}
    assert served[0].pid == 305 and served[0].share > 0.9
    assert "irq_work/0" not in comms
    assert uncredited_wakeups(trace, nic)["hardirq"] >= 50
