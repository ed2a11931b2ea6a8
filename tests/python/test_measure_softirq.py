"""The device's whole work: IRQ thread, NAPI threads and soft IRQs run elsewhere, on
synthetic traces whose shares are known."""

from __future__ import annotations

import numpy as np
import pytest
from irqres.measure.activations import activations
from irqres.measure.softirq import NET_RX, device_work, softirq_runs, work_per_activation
from irqres.report import Options, analyze
from irqres.trace.synthetic import (
    PREEMPTED,
    TASK_INTERRUPTIBLE,
    TASK_RUNNING,
    TraceBuilder,
    irq_thread_trace,
)

US = 1_000
N = 150          # activations
EXEC = 200 * US  # the IRQ thread's own execution time per activation
IN_THREAD = 100 * US   # of it, NET_RX run in the thread itself
NAPI = 30 * US   # napi/eth0-8193 after each activation, on CPU 1
KSOFT = 50 * US  # ksoftirqd/0 after each activation
APP = 20 * US    # NET_RX run in the receiving application, preempted 10 µs inside
IRQ_PID, NAPI_PID, KSOFT_PID, APP_PID, DISK_PID, KSOFT1_PID = 100, 200, 10, 300, 101, 11


def _device_trace(*, softirqs: bool = True, napi: bool = True):
    b = TraceBuilder(ncpus=2, uname="Linux vm 6.1.0-50-rt-amd64 x86_64")
    arrivals = [1_000_000 + k * 1_000_000 for k in range(N)]
    b, exp = irq_thread_trace(arrivals, [EXEC] * N, pid=IRQ_PID, builder=b)
    b.comm(KSOFT_PID, "ksoftirqd/0")
    b.comm(KSOFT1_PID, "ksoftirqd/1")
    b.comm(APP_PID, "receiver")
    b.comm(NAPI_PID, "napi/eth0-8193")
    # a disk's IRQ thread on CPU 1: it never runs NET_RX, so NET_RX is never its
    disk, _ = irq_thread_trace([a + 500_000 for a in arrivals], [10 * US] * N, pid=DISK_PID,
                               irq=14, action="ata_piix", cpu=1, builder=TraceBuilder())
    for name, rows in disk.rows.items():
        b.rows[name] += rows
    b.irq_names += [n for n in disk.irq_names if n not in b.irq_names]
    for c in disk.comms:
        b.comm(*c)
    for k, (a, end) in enumerate(zip(exp.start_ns, exp.end_ns, strict=True)):
        first_run = a - 2_000 + 3_000
        if softirqs:
            b.softirq(first_run + 10 * US, 0, IRQ_PID, NET_RX, IN_THREAD)
        t = end + 10 * US       # ksoftirqd continues what the poll left
        b.switch(t, 0, 0, TASK_RUNNING, KSOFT_PID)
        if softirqs:
            b.softirq(t + 1 * US, 0, KSOFT_PID, NET_RX, KSOFT)
        b.switch(t + KSOFT + 2 * US, 0, KSOFT_PID, TASK_INTERRUPTIBLE, APP_PID)
        t += KSOFT + 2 * US     # the receiver runs NET_RX on re-enabling bottom halves
        if softirqs:
            b.softirq(t + 1 * US, 0, APP_PID, NET_RX, APP + 10 * US)
        b.switch(t + 5 * US, 0, APP_PID, PREEMPTED, 9000)
        b.switch(t + 15 * US, 0, 9000, TASK_INTERRUPTIBLE, APP_PID)
        b.switch(t + 40 * US, 0, APP_PID, TASK_INTERRUPTIBLE, 0)
        if napi:                # the NAPI thread polls on CPU 1
            n0 = a + 100 * US
            b.switch(n0, 1, 0, TASK_RUNNING, NAPI_PID)
            b.switch(n0 + NAPI, 1, NAPI_PID, TASK_INTERRUPTIBLE, 0)
        if softirqs and k % 10 == 0:  # the disk thread runs BLOCK, ksoftirqd/1 goes on
            b.softirq(arrivals[k] + 504_000, 1, DISK_PID, 4, 2 * US)
            b.switch(arrivals[k] + 600_000, 1, 0, TASK_RUNNING, KSOFT1_PID)
            b.softirq(arrivals[k] + 601_000, 1, KSOFT1_PID, 4, 5 * US)
            b.switch(arrivals[k] + 610_000, 1, KSOFT1_PID, TASK_INTERRUPTIBLE, 0)
    return b.build(), exp


def test_runs_pair_and_leave_out_preemption():
    tr, _ = _device_trace()
    runs = softirq_runs(tr)
    assert len(runs.start_ns) == 3 * N + 2 * (N // 10) and runs.unpaired == 0
    app = runs.current == APP_PID
    # 30 µs between entry and exit, 10 µs of it preempted by another task
    assert (runs.end_ns[app] - runs.start_ns[app] == APP + 10 * US).all()
    assert (runs.ran_ns[app] == APP).all()
    assert (runs.ran_ns[runs.current == KSOFT_PID] == KSOFT).all()


def test_shares_of_the_device_work_are_known():
    tr, _ = _device_trace()
    acts = activations(tr)
    work = device_work(tr, acts)
    w = work[IRQ_PID]
    assert w.thread_ns == N * EXEC
    assert w.softirq_in_thread_ns == N * IN_THREAD
    assert w.napi_ns == N * NAPI and [h.comm for h in w.napi] == ["napi/eth0-8193"]
    assert w.ksoftirqd_ns == N * KSOFT
    assert w.other_ns == N * APP
    assert w.total_ns == N * (EXEC + NAPI + KSOFT + APP)
    assert w.leak_share == pytest.approx((KSOFT + APP) / (EXEC + NAPI + KSOFT + APP))
    assert [h.comm for h in w.hosts] == ["ksoftirqd/0", "receiver"]
    # the BLOCK runs in ksoftirqd/1 are the disk's, never the NIC's
    d = work[DISK_PID]
    assert d.ksoftirqd_ns == (N // 10) * 5 * US and d.napi_ns == 0 and d.other_ns == 0


def test_the_model_sizes_the_whole_work():
    tr, _ = _device_trace()
    acts = {a.thread.pid: a for a in activations(tr)}
    work = device_work(tr, list(acts.values()))
    act = acts[IRQ_PID]
    extra = work_per_activation(act, work[IRQ_PID])
    # each activation is followed by its NAPI, ksoftirqd and receiver work, except the
    # last kept one: the next was dropped at the trace's end and the work after its sleep
    # cannot be placed
    assert (extra[:-1] == NAPI + KSOFT + APP).all()
    assert extra[-1] == NAPI
    rep = analyze(tr, Options(pattern="eth0", deadline_ns=1_000_000, mc_jobs=2000))
    t = rep.threads[0]
    assert t.device is not None and t.device_model_ns == int(extra.sum())
    assert t.recommendation is not None and t.recommendation.best is not None
    # with the leak the budget covers more than the thread's own 200 µs
    assert t.recommendation.best.runtime_ns >= EXEC + NAPI + KSOFT + APP
    d = rep.to_dict()["threads"][0]["device_work"]
    assert d["outside_share"] == pytest.approx(70 / 300)
    assert d["ksoftirqd_ns"] == N * KSOFT and d["added_to_model_ns"] == int(extra.sum())
    text = rep.text()
    assert "outside the device's threads (no reservation of them bounds it): 23.3%" in text
    assert "ksoftirqd/0 (pid 10)" in text


def test_without_softirq_events_the_report_says_so():
    tr, _ = _device_trace(softirqs=False)
    rep = analyze(tr, Options(pattern="eth0", deadline_ns=1_000_000, mc_jobs=2000))
    t = rep.threads[0]
    assert t.device is None and t.device_model_ns == 0
    assert rep.to_dict()["threads"][0]["device_work"] is None
    assert "the trace has no irq:softirq_entry/exit events" in rep.text()
    with_leak = analyze(_device_trace()[0], Options(pattern="eth0", deadline_ns=1_000_000,
                                                    mc_jobs=2000)).threads[0]
    assert (t.recommendation.best.runtime_ns
            < with_leak.recommendation.best.runtime_ns)


def test_napi_work_alone_is_not_outside():
    tr, _ = _device_trace()
    rep = analyze(tr, Options(pattern="eth0", deadline_ns=1_000_000, mc_jobs=2000))
    d = rep.to_dict()["threads"][0]["device_work"]
    assert d["napi_share"] == pytest.approx(30 / 300)
    assert d["outside_ns"] == N * (KSOFT + APP)
    np.testing.assert_allclose(d["irq_thread_share"] + d["napi_share"] + d["ksoftirqd_share"]
                               + d["other_tasks_share"], 1.0)


def test_a_task_whose_switches_were_not_read_counts_whole():
    tr, _ = _device_trace()
    # a read selected for the device threads: the receiver's switches are not in it
    tr.selected_pids = frozenset({IRQ_PID, NAPI_PID, KSOFT_PID, DISK_PID, KSOFT1_PID})
    runs = softirq_runs(tr)
    app = runs.current == APP_PID
    assert (runs.ran_ns[app] == APP + 10 * US).all()
    assert (runs.ran_ns[runs.current == KSOFT_PID] == KSOFT).all()


def test_unpaired_and_lost_runs_are_left_out():
    b = TraceBuilder(ncpus=1)
    b.comm(KSOFT_PID, "ksoftirqd/0")
    b.softirq(1_000, 0, KSOFT_PID, NET_RX, 500)
    b.rows["softirq_entry"].append((5_000, 0, KSOFT_PID, NET_RX))  # its exit never came
    b.softirq(9_000, 0, KSOFT_PID, NET_RX, 500)
    b.softirq(20_000, 0, KSOFT_PID, NET_RX, 500)
    b.gap(0, 19_000, 21_000, 3)
    b.switch(10, 0, 0, TASK_RUNNING, KSOFT_PID)
    runs = softirq_runs(b.build())
    assert runs.start_ns.tolist() == [1_000, 9_000]
    assert runs.unpaired == 1 and runs.dropped_lost == 1
