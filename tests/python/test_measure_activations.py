"""Activations of IRQ threads from events, with known answers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from irqres.errors import TraceError
from irqres.measure.activations import (
    Gaps,
    activations,
    find_irq_threads,
    joined_arrivals,
    line_requests,
)
from irqres.trace import read_trace
from irqres.trace.synthetic import (
    IRQ_HANDLED,
    IRQ_WAKE_THREAD,
    PREEMPTED,
    TASK_INTERRUPTIBLE,
    TASK_RUNNING,
    TraceBuilder,
    irq_thread_trace,
)

DATA = Path(__file__).resolve().parents[1] / "data"


def only(trace):
    acts = activations(trace)
    assert len(acts) == 1
    return acts[0]


def test_periodic_arrivals_recover_exact_statistics():
    arrivals = 500_000 + np.arange(50) * 1_000_000
    b, exp = irq_thread_trace(arrivals, [120_000] * 50)
    a = only(b.build())
    assert a.count == 50
    assert a.exec_ns.tolist() == exp.exec_ns
    assert a.start_ns.tolist() == exp.start_ns
    assert a.end_ns.tolist() == exp.end_ns
    assert a.interarrival_ns.tolist() == [1_000_000] * 49
    assert a.irq_interarrival_ns.tolist() == [1_000_000] * 49
    assert a.irqs.tolist() == [1] * 50
    assert a.latency_ns.tolist() == [1_000] * 50  # switch-in 3 us after the IRQ, wake at 2 us
    assert a.dropped_edge == a.dropped_lost == a.dropped_inconsistent == 0
    assert a.exec_ns.dtype == np.int64 and a.start_ns.dtype == np.int64


def test_random_arrivals_and_exec_times_recovered():
    rng = np.random.default_rng(7)
    gaps = rng.integers(300_000, 3_000_000, size=200)
    execs = rng.integers(10_000, 250_000, size=200)
    arrivals = np.cumsum(gaps)
    b, _ = irq_thread_trace(arrivals, execs, cpu=1)
    a = only(b.build())
    assert a.exec_ns.tolist() == execs.tolist()
    assert a.interarrival_ns.tolist() == np.diff(arrivals).tolist()
    assert a.irq_ts_ns.tolist() == arrivals.tolist()


def test_irqs_while_awake_merge_into_one_activation():
    # IRQs at 0, 50 us and 200 us arrive while the thread still works: one activation
    b, exp = irq_thread_trace([1_000, 51_000, 201_000, 1_000_000], [100_000] * 4)
    a = only(b.build())
    assert exp.irqs == [3, 1]
    assert a.count == 2
    assert a.irqs.tolist() == [3, 1]
    assert a.exec_ns.tolist() == [300_000, 100_000]
    assert a.merged_irqs == 2
    assert len(a.irq_ts_ns) == 4  # every request is still an IRQ arrival


def test_preemption_is_not_execution_time():
    arrivals = [1_000_000, 2_000_000, 3_000_000]
    b, _ = irq_thread_trace(arrivals, [100_000] * 3, preempt={1: 400_000})
    a = only(b.build())
    assert a.exec_ns.tolist() == [100_000] * 3
    assert a.response_ns[1] - a.response_ns[0] == 400_000


def test_migration_sums_intervals_on_both_cpus():
    b = TraceBuilder()
    pid = 77
    b.comm(pid, "irq/30-nvme0q1")
    b.switch(10, 0, pid, TASK_INTERRUPTIBLE, 0)
    b.irq(1_000, 0, 0, 30, "nvme0q1", IRQ_WAKE_THREAD)
    b.waking(1_500, 0, 0, pid)
    b.switch(2_000, 0, 0, TASK_RUNNING, pid)
    b.switch(12_000, 0, pid, PREEMPTED, 500)       # 10 us on CPU 0
    b.switch(20_000, 1, 0, TASK_RUNNING, pid)      # continues on CPU 1
    b.switch(45_000, 1, pid, TASK_INTERRUPTIBLE, 0)  # 25 us on CPU 1
    b.irq(100_000, 1, 0, 30, "nvme0q1", IRQ_WAKE_THREAD)
    b.waking(100_500, 1, 0, pid)
    b.switch(101_000, 1, 0, TASK_RUNNING, pid)
    b.switch(106_000, 1, pid, TASK_INTERRUPTIBLE, 0)
    a = only(b.build())
    assert a.exec_ns.tolist() == [35_000, 5_000]
    assert a.migrated.tolist() == [True, False]
    assert a.first_run_ns.tolist() == [2_000, 101_000]


def test_lost_events_discard_activations_never_stretch_them():
    arrivals = 500_000 + np.arange(10) * 1_000_000
    b, _ = irq_thread_trace(arrivals, [100_000] * 10)
    # CPU 1 lost events between 4.2 ms and 4.8 ms: activation 4 (4.5 ms) is touched, and
    # so is activation 5, whose window starts at the previous sleep (4.603 ms): a hidden
    # activation could have been lost in front of it
    b.gap(1, 4_200_000, 4_800_000, 17)
    trace = b.build()
    a = only(trace)
    assert a.count == 8
    assert a.dropped_lost == 2
    assert 4_502_000 not in a.start_ns.tolist() and 5_502_000 not in a.start_ns.tolist()
    assert a.interarrival_ns.tolist() == [1_000_000] * 6  # none across the hole
    assert a.irq_interarrival_ns.tolist() == [1_000_000] * 7
    joined = joined_arrivals(a)
    assert np.diff(joined).tolist() == [1_000_000] * 7
    assert Gaps.from_trace(trace).total_lost() == 17


def test_gap_before_a_cpus_first_record_cuts_everything_before_it():
    arrivals = 500_000 + np.arange(6) * 1_000_000
    b, _ = irq_thread_trace(arrivals, [100_000] * 6)
    b.gap(1, -1, 2_000_000, 300)  # CPU 1 overwritten before its first record at 2 ms
    a = only(b.build())
    # activation 2 (2.5 ms) is cut too: its window opens at the previous sleep, 1.603 ms
    assert a.start_ns.min() > 2_603_000
    assert a.dropped_lost == 3


def test_partial_activations_at_the_edges_are_dropped():
    b = TraceBuilder()
    pid = 5
    b.comm(pid, "irq/11-eth0")
    # the trace starts while the thread runs: its sleep at 50 us ends a partial activation
    b.switch(40_000, 0, 0, TASK_RUNNING, pid)
    b.switch(50_000, 0, pid, TASK_INTERRUPTIBLE, 0)
    for k in range(3):
        t = 100_000 + k * 100_000
        b.irq(t, 0, 0, 11, "eth0", IRQ_WAKE_THREAD)
        b.waking(t + 100, 0, 0, pid)
        b.switch(t + 200, 0, 0, TASK_RUNNING, pid)
        b.switch(t + 10_200, 0, pid, TASK_INTERRUPTIBLE, 0)
    # the trace ends while the thread runs
    b.irq(500_000, 0, 0, 11, "eth0", IRQ_WAKE_THREAD)
    b.waking(500_100, 0, 0, pid)
    b.switch(500_200, 0, 0, TASK_RUNNING, pid)
    a = only(b.build())
    assert a.count == 3
    assert a.dropped_edge == 2
    assert a.exec_ns.tolist() == [10_000] * 3


def test_missing_wakeup_makes_an_activation_inconsistent():
    b, _ = irq_thread_trace(500_000 + np.arange(5) * 1_000_000, [100_000] * 5)
    b.rows["sched_waking"] = [r for r in b.rows["sched_waking"] if r[0] != 2_502_000]
    b.rows["sched_wakeup"] = []
    a = only(b.build())
    assert a.count == 4
    assert a.dropped_inconsistent == 1


def test_threaded_handler_entries_are_not_requests():
    b = TraceBuilder()
    pid = 40
    b.comm(pid, "irq/19-ahci[000")
    b.switch(1, 0, pid, TASK_INTERRUPTIBLE, 0)
    for k in range(4):
        t = 1_000_000 * (k + 1)
        b.irq(t, 0, 0, 19, "ahci[0000:00:1f.2]", IRQ_WAKE_THREAD, duration=100)
        b.waking(t + 50, 0, 0, pid)
        b.switch(t + 200, 0, 0, TASK_RUNNING, pid)
        # the thread's own handler, traced inside the thread
        b.irq(t + 300, 0, pid, 19, "ahci[0000:00:1f.2]", IRQ_HANDLED, duration=5_000)
        b.switch(t + 20_000, 0, pid, TASK_INTERRUPTIBLE, 0)
    a = only(b.build())
    assert a.thread.names == ["ahci[0000:00:1f.2]"]
    assert len(a.irq_ts_ns) == 4
    assert a.irqs.tolist() == [1, 1, 1, 1]


def test_shared_line_counts_each_action_for_its_own_thread():
    b = TraceBuilder()
    for pid, action in ((60, "eth0"), (61, "snd")):
        b.comm(pid, f"irq/16-{action}")
        b.switch(1 + pid, 0, pid, TASK_INTERRUPTIBLE, 0)
    for k in range(5):
        t = 1_000_000 * (k + 1)
        b.irq(t, 0, 0, 16, "eth0", IRQ_WAKE_THREAD)
        b.irq(t + 2_000, 0, 0, 16, "snd", IRQ_WAKE_THREAD if k % 2 == 0 else 0)
        b.waking(t + 500, 0, 0, 60)
        b.switch(t + 5_000, 0, 0, TASK_RUNNING, 60)
        b.switch(t + 15_000, 0, 60, TASK_INTERRUPTIBLE, 0)
        if k % 2 == 0:
            b.waking(t + 2_500, 0, 0, 61)
            b.switch(t + 20_000, 0, 0, TASK_RUNNING, 61)
            b.switch(t + 23_000, 0, 61, TASK_INTERRUPTIBLE, 0)
    trace = b.build()
    by_comm = {a.thread.comm: a for a in activations(trace)}
    assert by_comm["irq/16-eth0"].exec_ns.tolist() == [10_000] * 5
    assert by_comm["irq/16-snd"].exec_ns.tolist() == [3_000] * 3
    assert len(by_comm["irq/16-eth0"].irq_ts_ns) == 5
    lines = line_requests(trace)
    assert [ln.irq for ln in lines] == [16]
    assert len(lines[0].ts_ns) == 5 and sorted(lines[0].names) == ["eth0", "snd"]


def test_thread_selection_by_pattern_and_errors():
    b, _ = irq_thread_trace([1_000_000, 2_000_000], [1_000, 1_000], irq=11, action="eth0")
    irq_thread_trace([1_500_000, 2_500_000], [1_000, 1_000], pid=101, irq=38,
                     action="virtio2-input.0", cpu=1, builder=b)
    trace = b.build()
    assert [t.comm for t in find_irq_threads(trace)] == ["irq/11-eth0", "irq/38-virtio2-i"[:15]]
    assert [t.irq for t in find_irq_threads(trace, "38")] == [38]
    assert [t.irq for t in find_irq_threads(trace, "eth0")] == [11]
    assert [t.irq for t in find_irq_threads(trace, "irq/38-*")] == [38]
    assert find_irq_threads(trace, "irq/38-*")[0].names == ["virtio2-input.0"]
    with pytest.raises(TraceError, match=r"no IRQ thread matches 'nvme'.*irq/11-eth0"):
        activations(trace, "nvme")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1_000, 400_000), st.integers(1_000, 300_000)),
                min_size=2, max_size=60))
def test_every_request_is_served_once(jobs):
    gaps, execs = zip(*jobs, strict=True)
    arrivals = np.cumsum(gaps)
    b, exp = irq_thread_trace(arrivals, execs)
    a = only(b.build())
    assert a.exec_ns.tolist() == exp.exec_ns
    assert a.irqs.tolist() == exp.irqs
    assert int(a.irqs.sum()) == len(arrivals)
    assert int(a.exec_ns.sum()) == sum(execs)
    assert a.busy_ns == sum(execs)
    assert np.all(a.interarrival_ns > 0)


def test_real_host_trace_of_a_fake_irq_thread():
    # tests/data/README.md: a user process named irq/99-fakedev woken every 2 ms, 200 us
    trace = read_trace(DATA / "host-fakeirq.dat")
    a = only(trace)
    assert a.thread.comm == "irq/99-fakedev"
    assert a.count >= 120
    assert 1_500_000 <= int(np.median(a.interarrival_ns)) <= 2_500_000
    assert 200_000 <= int(np.median(a.exec_ns)) <= 600_000
    assert np.all(a.exec_ns <= a.response_ns)
    assert np.all(a.start_ns < a.end_ns)


def test_wakeup_traced_just_before_the_sleep_starts_the_next_activation():
    b = TraceBuilder()
    pid = 8
    b.comm(pid, "irq/11-eth0")
    b.switch(1, 0, pid, TASK_INTERRUPTIBLE, 0)
    b.waking(1_000, 1, 0, pid)
    b.switch(2_000, 0, 0, TASK_RUNNING, pid)
    b.waking(11_900, 1, 0, pid)  # on CPU 1, while CPU 0 is still switching the thread out
    b.switch(12_000, 0, pid, TASK_INTERRUPTIBLE, 0)
    b.switch(13_000, 0, 0, TASK_RUNNING, pid)
    b.switch(20_000, 0, pid, TASK_INTERRUPTIBLE, 0)
    b.waking(50_000, 1, 0, pid)
    b.switch(51_000, 0, 0, TASK_RUNNING, pid)
    b.switch(52_000, 0, pid, TASK_INTERRUPTIBLE, 0)
    a = only(b.build())
    assert a.dropped_inconsistent == 0
    assert a.start_ns.tolist() == [1_000, 11_900, 50_000]
    assert a.exec_ns.tolist() == [10_000, 7_000, 1_000]


def test_real_preempt_rt_trace_of_the_e1000_thread():
    # tests/data/README.md: PREEMPT_RT guest, UDP datagrams every 5 ms from the host
    trace = read_trace(DATA / "vm-e1000-udp.dat")
    by_comm = {a.thread.comm: a for a in activations(trace)}
    nic = by_comm["irq/11-eth0"]
    assert nic.thread.names == ["eth0"]
    entry, exit_ = trace.table("irq_handler_entry"), trace.table("irq_handler_exit")
    on11 = entry["irq"] == 11
    # every entry of IRQ 11 is the primary handler (it returned IRQ_WAKE_THREAD), also
    # those taken while the thread itself was running: all of them are requests
    assert np.all(exit_["ret"][exit_["irq"] == 11] == 2)
    assert np.any(entry["current"][on11] == nic.thread.pid)
    assert len(nic.irq_ts_ns) == int(on11.sum())
    assert int(nic.irqs.sum()) <= len(nic.irq_ts_ns)
    assert nic.merged_irqs > 0
    # the sender's period shows in the bulk of the IRQ inter-arrival times
    assert abs(int(np.median(nic.irq_interarrival_ns)) - 5_000_000) < 250_000
    assert nic.count >= 700 and nic.dropped_lost == nic.dropped_inconsistent == 0
    assert np.all(nic.exec_ns > 0) and np.all(nic.exec_ns <= nic.response_ns)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 1000), st.integers(0, 1000)), max_size=12),
       st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 1000)), min_size=1,
                max_size=20))
def test_gap_overlap_matches_brute_force(gaps, intervals):
    b = TraceBuilder()
    for i, (start, length) in enumerate(gaps):
        b.gap(i % 2, start, (max(start, 0) + length) if start >= 0 else length, 1)
    trace = b.build()
    g = Gaps.from_trace(trace)
    a = np.array([min(x, y) for x, y in intervals], dtype=np.int64)
    e = np.array([max(x, y) for x, y in intervals], dtype=np.int64)
    lo = np.iinfo(np.int64).min
    pairs = list(zip(trace.lost["prev_ts"].tolist(), trace.lost["ts"].tolist(), strict=True))
    want = [any((lo if s < 0 else s) < bb and end > aa for s, end in pairs)
            for aa, bb in zip(a.tolist(), e.tolist(), strict=True)]
    assert g.overlaps(a, e).tolist() == want


def test_blocking_on_a_lock_inside_the_handler_does_not_end_the_activation():
    b = TraceBuilder()
    pid, owner = 9, 300
    b.comm(pid, "irq/11-eth0")
    b.switch(1, 0, pid, TASK_INTERRUPTIBLE, 0)
    b.irq(1_000, 0, 0, 11, "eth0", IRQ_WAKE_THREAD, duration=200)
    b.waking(1_100, 0, 0, pid)
    b.switch(2_000, 0, 0, TASK_RUNNING, pid)
    b.switch(5_000, 0, pid, 2, owner)        # D: a sleeping spinlock held by `owner`
    b.waking(9_000, 0, owner, pid)           # the owner releases it
    b.switch(9_500, 0, owner, TASK_RUNNING, pid)
    b.switch(12_500, 0, pid, TASK_INTERRUPTIBLE, 0)  # done: waits for the next IRQ
    b.irq(100_000, 0, 0, 11, "eth0", IRQ_WAKE_THREAD, duration=200)
    b.waking(100_100, 0, 0, pid)
    b.switch(101_000, 0, 0, TASK_RUNNING, pid)
    b.switch(102_000, 0, pid, TASK_INTERRUPTIBLE, 0)
    a = only(b.build())
    assert a.count == 2
    assert a.exec_ns.tolist() == [6_000, 1_000]
    assert a.response_ns.tolist() == [11_400, 1_900]
    assert a.irqs.tolist() == [1, 1]


def test_missing_switch_in_does_not_move_the_next_activations_start():
    # the switch-in at 201 us is missing, without a lost-event mark: the activation woken
    # at 200 us is inconsistent and dropped; the next one still starts at its own wake-up
    b = TraceBuilder()
    pid = 8
    b.comm(pid, "irq/11-eth0")
    b.switch(1_000, 0, pid, TASK_INTERRUPTIBLE, 0)
    b.waking(100_000, 1, 0, pid)
    b.switch(101_000, 0, 0, TASK_RUNNING, pid)
    b.switch(110_000, 0, pid, TASK_INTERRUPTIBLE, 0)
    b.waking(200_000, 1, 0, pid)
    b.switch(210_000, 0, pid, TASK_INTERRUPTIBLE, 0)
    b.waking(300_000, 1, 0, pid)
    b.switch(301_000, 0, 0, TASK_RUNNING, pid)
    b.switch(310_000, 0, pid, TASK_INTERRUPTIBLE, 0)
    b.waking(400_000, 1, 0, pid)
    b.switch(401_000, 0, 0, TASK_RUNNING, pid)
    b.switch(410_000, 0, pid, TASK_INTERRUPTIBLE, 0)
    a = only(b.build())
    assert a.start_ns.tolist() == [100_000, 300_000, 400_000]
    assert a.response_ns.tolist() == [10_000] * 3
    assert a.dropped_inconsistent == 1
    # the hole is a hole: no inter-arrival across the dropped activation
    assert a.interarrival_ns.tolist() == [100_000]


def test_segment_with_two_wakeups_of_a_sleeping_thread_is_inconsistent():
    # a run and a sleep between the wake-ups at 200 us and 250 us are missing: the
    # segment holds two activations and must not become one long one
    b = TraceBuilder()
    pid = 8
    b.comm(pid, "irq/11-eth0")
    b.switch(1_000, 0, pid, TASK_INTERRUPTIBLE, 0)
    for t in (100_000, 400_000):
        b.waking(t, 1, 0, pid)
        b.switch(t + 1_000, 0, 0, TASK_RUNNING, pid)
        b.switch(t + 10_000, 0, pid, TASK_INTERRUPTIBLE, 0)
    b.waking(200_000, 1, 0, pid)
    b.waking(250_000, 1, 0, pid)
    b.switch(251_000, 0, 0, TASK_RUNNING, pid)
    b.switch(260_000, 0, pid, TASK_INTERRUPTIBLE, 0)
    a = only(b.build())
    assert a.start_ns.tolist() == [100_000, 400_000]
    assert a.dropped_inconsistent == 1


def test_wakeup_while_running_merges_into_the_activation():
    # a wake-up that finds the thread on its CPU (it set TASK_INTERRUPTIBLE, then was
    # woken before it left the run queue, so it stays runnable) is not a second activation
    b = TraceBuilder()
    pid = 8
    b.comm(pid, "irq/11-eth0")
    b.switch(1_000, 0, pid, TASK_INTERRUPTIBLE, 0)
    for t in (100_000, 200_000, 300_000):
        b.waking(t, 1, 0, pid)
        b.switch(t + 1_000, 0, 0, TASK_RUNNING, pid)
        b.waking(t + 5_000, 1, 0, pid)
        b.switch(t + 6_000, 0, pid, PREEMPTED, 0)
        b.switch(t + 7_000, 0, 0, TASK_RUNNING, pid)
        b.switch(t + 10_000, 0, pid, TASK_INTERRUPTIBLE, 0)
    a = only(b.build())
    assert a.start_ns.tolist() == [100_000, 200_000, 300_000]
    assert a.exec_ns.tolist() == [8_000] * 3
    assert a.dropped_inconsistent == 0
