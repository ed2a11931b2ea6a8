"""What ``irqres analyze`` recommends, for which threads, and what it refuses to."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from irqres.errors import ModelError
from irqres.report import Options, analyze
from irqres.trace.synthetic import TraceBuilder, irq_thread_trace

US, MS = 1_000, 1_000_000


def nic_trace(n: int, *, mean_gap_ns: int = 1_370 * US, seed: int = 1,
              builder: TraceBuilder | None = None, irq: int = 11, action: str = "eth0",
              pid: int = 100, cpu: int = 0):
    rng = np.random.default_rng(seed)
    gaps = rng.exponential(mean_gap_ns - 200 * US, n).astype(np.int64) + 200 * US
    arrivals = 1_000_000 + np.cumsum(gaps)
    execs = rng.integers(40 * US, 90 * US, n)
    b, _ = irq_thread_trace(arrivals, execs, pid=pid, irq=irq, action=action, cpu=cpu,
                            builder=builder)
    return b


def test_default_recommendation_is_driven_by_the_response_bound():
    # a NIC thread with a 1.37 ms mean inter-arrival: the least bandwidth over periods of
    # up to 50x the inter-arrival used to be the longest period (68 ms); the default
    # response bound starts at the mean inter-arrival, the periods are chosen for it, and
    # it is doubled until a reservation near the measured use meets it
    rep = analyze(nic_trace(600).build(), Options(mc_jobs=2_000))
    (tr,) = rep.threads
    mean = int(tr.act.interarrival_ns.mean()) // 1000 * 1000
    use = int(tr.act.exec_ns.sum()) / tr.act.span_ns
    assert tr.deadline_ns in [mean << k for k in range(7)] and tr.deadline_ns > mean
    assert "default: the mean inter-arrival time" in tr.deadline_source
    assert f"{mean / 1e6:g}ms, where the least budget was" in tr.deadline_source
    best = tr.recommendation.best
    assert best is not None and best.deadline_ns == tr.deadline_ns
    assert best.bandwidth <= 2 * use
    assert all(r.period_ns <= tr.deadline_ns for r in tr.recommendation.rows)
    assert best.solver_prob - best.error_bound >= 0.99
    # the bound before it needed more than twice the use: it was not doubled for nothing
    half = analyze(nic_trace(600).build(), Options(mc_jobs=0, deadline_ns=tr.deadline_ns // 2))
    assert half.threads[0].recommendation.best.bandwidth > 2 * use
    text = rep.text()
    assert f"D = {tr.deadline_ns / 1e6:g}ms (default: the mean inter-arrival time" in text


def test_given_response_bound_drives_the_choice():
    rep = analyze(nic_trace(600).build(), Options(mc_jobs=0, deadline_ns=10 * MS))
    (tr,) = rep.threads
    assert tr.deadline_source == "given"
    rows = tr.recommendation.rows
    assert {r.deadline_ns for r in rows} == {10 * MS}
    assert max(r.period_ns for r in rows) == 10 * MS
    best = tr.recommendation.best
    ok = [r for r in rows if r.feasible]
    assert best.bandwidth == min(r.bandwidth for r in ok)


def test_too_few_activations_get_no_reservation_but_a_warning():
    rep = analyze(nic_trace(5).build(), Options(mc_jobs=0))
    (tr,) = rep.threads
    assert tr.recommendation is None
    assert tr.act.count == 5
    assert "needs at least 100" in tr.problem          # 1/(1 - 0.99)
    assert tr.warnings and "no reservation recommended" in tr.warnings[0]
    assert "warning: no reservation recommended" in rep.text()
    with pytest.raises(ModelError, match="nothing to write"):
        rep.profile()
    rep = analyze(nic_trace(150).build(), Options(mc_jobs=0, target_prob=0.999))
    assert "needs at least 1000" in rep.threads[0].problem


def test_buffer_per_thread_by_pattern():
    b = nic_trace(300, pid=100, irq=11, action="eth0", cpu=0)
    nic_trace(300, pid=200, irq=19, action="nvme0q1", cpu=1, seed=2, builder=b)
    trace = b.build()
    opts = Options(mc_jobs=0, buffers=(("eth0", 64), ("19", 8)))
    rep = analyze(trace, opts)
    by = {t.act.thread.comm: t for t in rep.threads}
    assert by["irq/11-eth0"].recommendation.buffer == 64
    assert by["irq/19-nvme0q1"].recommendation.buffer == 8
    # the first match wins; a bare N is for every thread not matched before
    rep = analyze(trace, Options(mc_jobs=0, buffers=(("irq/19-*", 4), (None, 32))))
    by = {t.act.thread.comm: t.recommendation.buffer for t in rep.threads}
    assert by == {"irq/11-eth0": 32, "irq/19-nvme0q1": 4}
    # without --buffer no buffering check
    rep = analyze(trace, Options(mc_jobs=0))
    assert all(t.recommendation.buffer is None for t in rep.threads)
    with pytest.raises(ModelError, match="matches none of the threads"):
        analyze(trace, Options(mc_jobs=0, buffers=(("sda", 4),)))


def rt_app_trace(n: int = 300):
    """An RT application thread (pid 300, "ctrl-loop") woken by a timer every 1 ms,
    computing 200-400 us, and an IRQ thread beside it."""
    b = nic_trace(300, pid=100, cpu=0)
    b.comm(300, "ctrl-loop")
    rng = np.random.default_rng(5)
    b.switch(5, 1, 300, 1, 0)
    for k in range(n):
        t = 2 * MS + k * MS
        b.waking(t, 1, 0, 300, 1)
        b.switch(t + 5 * US, 1, 0, 0, 300)
        b.switch(t + 5 * US + int(rng.integers(200 * US, 400 * US)), 1, 300, 1, 0)
    return b.build()


@pytest.mark.parametrize("pattern", ["ctrl-loop", "ctrl*", "300", "loop"])
def test_any_thread_by_comm_glob_or_pid(pattern):
    rep = analyze(rt_app_trace(), Options(mc_jobs=0, tasks=(pattern,)))
    (tr,) = rep.threads  # --task alone: only the tasks it names
    th = tr.act.thread
    assert (th.pid, th.comm, th.is_irq) == (300, "ctrl-loop", False)
    assert tr.act.count == 300 and 200 * US <= tr.act.exec_ns.min()
    best = tr.recommendation.best
    assert best is not None and best.period_ns <= tr.deadline_ns == MS
    prof = yaml.safe_load(rep.profile())
    (t,) = prof["targets"]
    assert t["name"] == "ctrl-loop" and t["task"] == {"comm": "ctrl-loop"}
    assert "== ctrl-loop (pid 300, task) ==" in rep.text()


def test_irq_threads_and_tasks_together():
    rep = analyze(rt_app_trace(), Options(mc_jobs=0, pattern="eth0", tasks=("ctrl-loop",)))
    assert [t.act.thread.comm for t in rep.threads] == ["irq/11-eth0", "ctrl-loop"]
    text = rep.profile()
    prof = yaml.safe_load(text)
    assert [t["name"] for t in prof["targets"]] == ["irq11-eth0", "ctrl-loop"]
    # each target's comment right above it, not all of them at the top
    lines = text.splitlines()
    assert lines[:2] == ["version: 1", "targets:"]
    for i, ln in enumerate(lines):
        if ln.startswith("  - name:"):
            assert lines[i - 1].startswith("  # P{response <= "), lines[i - 1]
    assert prof["targets"][0]["irq"] == [11]
