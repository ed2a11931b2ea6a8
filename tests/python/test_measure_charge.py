"""Execution time as the kernel charges it (sched_stat_runtime), against the switches."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from irqres.cli import main
from irqres.errors import TraceError
from irqres.measure.activations import activations
from irqres.measure.charge import execution_for_model, kernel_charge
from irqres.report import Options, analyze
from irqres.trace.synthetic import irq_thread_trace

US = 1_000
DATA = Path(__file__).resolve().parents[1] / "data"
#: recordings of the real job at most (see the test)
RECORD_ATTEMPTS = 6
TRACEFS = "/sys/kernel/tracing"


def periodic(n=300, overhead=8 * US, preempt=None):
    arrivals = 1_000_000 + np.arange(n, dtype=np.int64) * 1_000 * US
    execs = np.full(n, 200 * US, dtype=np.int64)
    return irq_thread_trace(arrivals, execs, preempt=preempt, charge_overhead_ns=overhead)


def test_charge_per_activation_is_the_sum_of_its_events():
    b, exp = periodic(50, overhead=7 * US, preempt={3: 50 * US})
    (act,) = activations(b.build())
    c = kernel_charge(b.build(), act)
    assert c is not None and c.complete
    assert c.charged_ns.tolist() == exp.charged_ns
    # a preempted job runs twice, so it is charged the overhead twice
    assert exp.charged_ns[3] == exp.exec_ns[3] + 14 * US
    assert c.diff_ns.tolist() == [14 * US if i == 3 else 7 * US for i in range(50)]
    s = c.summary()
    assert s["min_diff_ns"] == 7 * US and s["max_diff_ns"] == 14 * US
    assert s["relative_diff"] == pytest.approx(sum(exp.charged_ns) / sum(exp.exec_ns) - 1)


def test_the_model_uses_the_kernel_charge_and_the_report_says_so():
    b, exp = periodic(300, overhead=20 * US)
    tr = b.build()
    opts = {"mc_jobs": 0, "deadline_ns": 1_000 * US, "periods_ns": [1_000 * US]}
    rep = analyze(tr, Options(**opts))
    (t,) = rep.threads
    assert t.exec_source == "kernel"
    assert t.model_exec_ns.tolist() == exp.charged_ns
    assert t.exec_pmf.max_ns >= 220 * US
    d = rep.to_dict()["threads"][0]
    assert d["execution"]["model_uses"] == "kernel"
    assert d["execution"]["kernel_charge"]["mean_diff_ns"] == pytest.approx(20 * US)
    assert d["stats"]["charged"]["mean_ns"] == pytest.approx(220 * US)
    text = rep.text()
    assert "kernel charge (sched_stat_runtime) - switch-based execution: +10.00% in all" in text
    assert "the model uses the kernel figure" in text
    # the budget pays the charge: asked to use the switches, the model asks for less
    sw = analyze(tr, Options(**opts, exec_source="switch"))
    assert sw.threads[0].exec_source == "switch"
    q_kernel = t.recommendation.best.runtime_ns
    q_switch = sw.threads[0].recommendation.best.runtime_ns
    assert q_kernel >= 220 * US and q_switch < 220 * US


def test_without_the_event_the_switches_are_used_and_kernel_is_refused():
    b, _ = periodic(120, overhead=None)
    tr = b.build()
    (act,) = activations(tr)
    assert kernel_charge(tr, act) is None
    rep = analyze(tr, Options(mc_jobs=0))
    assert rep.threads[0].exec_source == "switch"
    assert "the trace has no sched_stat_runtime of this thread" in rep.text()
    with pytest.raises(TraceError, match=r"irq/11-eth0 \(pid 100\): no kernel charge to use"):
        execution_for_model(act, None, "kernel")


def test_an_activation_without_a_charge_makes_auto_fall_back():
    b, _ = periodic(120)
    b.rows["sched_stat_runtime"].pop(10)   # one activation lost its only charge event
    tr = b.build()
    (act,) = activations(tr)
    c = kernel_charge(tr, act)
    assert c.uncharged == 1 and not c.complete
    exe, src = execution_for_model(act, c, "auto")
    assert src == "switch" and exe is act.exec_ns
    with pytest.raises(TraceError, match="1 of its activations carry no sched_stat_runtime"):
        execution_for_model(act, c, "kernel")
    assert "1 activation(s) carry no charge" in analyze(tr, Options(mc_jobs=0)).text()


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="recording needs root (tracefs writes)")
@pytest.mark.skipif(not os.path.isfile(f"{TRACEFS}/events/sched/sched_stat_runtime/format"),
                    reason="no tracefs with sched_stat_runtime at /sys/kernel/tracing")
def test_real_recording_charges_what_the_kernel_accounts(tmp_path):
    # A recording on this (virtual, shared) host now and then lacks the idle-to-task
    # switches of a whole run (`trace-cmd report` shows the same gap): its activations are
    # then "inconsistent" and dropped. That is the host's tracing, not the charge under
    # test, so such a recording is made again (it happened in about 1 of 3 here).
    for attempt in range(RECORD_ATTEMPTS):
        out, ss = tmp_path / f"job{attempt}.dat", tmp_path / f"schedstat{attempt}"
        # the gap was seen on CPU 1 only (none of its switches out of idle traced while
        # CPU 0's balance): the job runs on CPU 0
        cmd = [sys.executable, "-m", "irqres", "record", "-o", str(out), "--buffer-kb",
               "4096", "--", "taskset", "-c", "0", sys.executable, str(DATA / "timer_job.py"),
               "--period-us",
               "1000", "--work-us", "200", "--count", "300", "--schedstat-out", str(ss)]
        subprocess.run(cmd, check=True, capture_output=True)
        from irqres.trace import read_trace

        tr = read_trace(out)
        pid = next(p for p, c in tr.comms if c == "timer-job")
        rt = tr.events["sched_stat_runtime"]
        sums = np.cumsum(rt["runtime"][rt["pid"] == pid])
        # the process's own sum_exec_runtime, read near its end, is exactly a prefix of
        # its charges: the events are every charge the kernel made
        assert int(ss.read_text()) in set(sums.tolist())
        res = CliRunner().invoke(main, ["analyze", str(out), "--task", "timer-job", "--json"])
        assert res.exit_code == 0, res.output
        th = json.loads(res.output)["threads"][0]
        if th["stats"]["dropped_inconsistent"] <= 10:
            break
    else:
        pytest.fail(f"{RECORD_ATTEMPTS} recordings in a row lost the job's switches: "
                    f"{th['stats']['dropped_inconsistent']} inconsistent activations")
    assert th["execution"]["model_uses"] == "kernel"
    k = th["execution"]["kernel_charge"]
    assert k["activations"] >= 20 and k["uncharged"] == 0
    # each job burns 200 us of its own CPU time; the charge adds the kernel's entry/exit
    assert 200 * US <= th["stats"]["charged"]["mean_ns"] <= 400 * US
