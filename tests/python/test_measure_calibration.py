"""`irqres analyze --calibrate PROBE`: what a reservation adds to a job, measured from one
trace recorded under it, added to the free trace's execution times before the model plans
(irqres.measure.calibration)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from irqres.cli import main
from irqres.errors import ModelError
from irqres.measure.activations import activations
from irqres.measure.calibration import calibrate, mapped, preempted, quantile_ns
from irqres.measure.charge import execution_for_model, kernel_charge
from irqres.report.pipeline import analyze
from irqres.report.types import Options
from irqres.trace import read_trace
from irqres.trace.synthetic import (
    PREEMPTED,
    TASK_INTERRUPTIBLE,
    TASK_RUNNING,
    irq_thread_trace,
)
from test_measure_handover import JOB, KTIMERS, job_builder, timer_job

US = 1_000
D = 1_000 * US
DATA = Path(__file__).resolve().parents[1] / "data"
TRACEFS = "/sys/kernel/tracing"
RECORD_ATTEMPTS = 6


def opts(**kw):
    return Options(**{"tasks": ("timer-job",), "mc_jobs": 0, "deadline_ns": D, **kw})


def job(report):
    (th,) = [t for t in report.threads if t.act.thread.comm == "timer-job"]
    return th


def throttled_probe(n=150, every=3, throttled=True):
    """A reserved timer job (200 µs of work, 244 µs charged) whose every ``every``-th
    activation outran its budget: ``throttled``, it is switched out runnable halfway
    (R+) and resumes 1 ms later, holding the jobs piled up meanwhile (2 ms charged in
    all); else it runs the 2 ms through."""
    b = job_builder()
    for k in range(n):
        t = 5_000 * US * (k + 1)
        b.waking(t, 0, KTIMERS, JOB, 0)
        b.switch(t + 6 * US, 0, 0, TASK_RUNNING, JOB)
        run, end = 244 * US, t + 250 * US
        if k % every == 0:
            run, end = 2_000 * US, t + 2_006 * US
            if throttled:
                b.runtime(t + 306 * US, 0, JOB, 300 * US)
                b.switch(t + 307 * US, 0, JOB, PREEMPTED, 0)
                b.switch(t + 1_307 * US, 0, 0, TASK_RUNNING, JOB)
                run, end = 1_700 * US, t + 3_007 * US
        b.runtime(end, 0, JOB, run)
        b.switch(end + 1 * US, 0, JOB, TASK_INTERRUPTIBLE, 0)
    return b.build("probe.dat")


def test_free_executions_take_the_probes_at_the_same_quantile():
    free = np.array([400, 100, 300, 200] * 10, dtype=np.int64) * US
    probe = np.array([150, 250, 350, 450] * 5, dtype=np.int64) * US  # 50 µs more each
    assert (mapped(free, probe) == free + 50 * US).all()
    # the rank decides, not the value: the free trace's largest get the probe's largest
    probe = np.concatenate([probe[:15], np.full(5, 900 * US)])
    out = mapped(free, probe)
    assert set(out[free == 400 * US].tolist()) == {900 * US}
    # never below the free trace's own execution
    assert (mapped(free, free // 2) == free).all()
    out, c = calibrate(free, probe, probe_path="p.dat", probe_pids=(7,), source="kernel",
                       quantile=0.99, preempted_count=3)
    assert (c.free_ns, c.probe_ns, c.allowance_ns) == (400 * US, 900 * US, 500 * US)
    assert (c.median_free_ns, c.median_probe_ns) == (300 * US, 350 * US)
    assert c.added_ns == int(out.sum() - free.sum()) and c.preempted == 3
    assert quantile_ns(np.array([5, 1, 3, 2]), 0.25) == 2


def test_a_probe_under_a_reservation_raises_the_budget_and_ends_the_warning():
    free = timer_job()
    plain = job(analyze(free, opts()))
    assert plain.calibration is None
    assert any("ktimers" in w for w in plain.warnings)
    rep = analyze(free, opts(calibrate="probe.dat"), timer_job(reserved=True))
    th = job(rep)
    c = th.calibration
    # free: 200 µs charged per job; reserved (the hand-over with ktimers): 244 µs
    assert (c.free_ns, c.probe_ns, c.allowance_ns, c.source) == (200 * US, 244 * US, 44 * US,
                                                                  "kernel")
    assert c.probe_pids == (JOB,) and c.probe_activations >= 140 and c.preempted == 0
    assert th.recommendation.best.runtime_ns >= 244 * US > plain.recommendation.best.runtime_ns
    assert not any("ktimers" in w for w in th.warnings)
    # the curves and plots see what the model planned from
    assert set(th.model_exec_ns.tolist()) == {244 * US}
    # the measured statistics stay the free trace's
    assert th.stats.to_dict() == plain.stats.to_dict()
    d = rep.to_dict()
    assert d["options"]["calibrate"] == "probe.dat"
    cal = d["threads"][0]["execution"]["calibration"]
    assert cal["allowance_ns"] == 44 * US and cal["probe"] == "probe.dat"
    assert cal["added_ns"] == 44 * US * th.act.count
    assert "calibrated from probe.dat" in rep.text() and "(+44us)" in rep.text()


def test_throttled_activations_of_the_probe_are_left_out():
    rep = analyze(timer_job(), opts(calibrate="probe.dat"), throttled_probe(300, 100))
    c = job(rep).calibration
    assert c.preempted == 3 and c.probe_activations == 297
    assert (c.probe_ns, c.allowance_ns) == (244 * US, 44 * US)
    # jobs piled up in one activation that was not throttled stay in: a larger budget
    c = job(analyze(timer_job(), opts(calibrate="probe.dat"),
                    throttled_probe(300, 100, throttled=False))).calibration
    assert c.preempted == 0 and c.probe_ns == 2_000 * US


@pytest.mark.parametrize("case,why", [
    ("other thread", "no thread named irq/11-eth0 in it (its threads analysed: irq/12-eth0)"),
    ("short", "activation(s) in the probe that its reservation held (0 more preempted"),
    ("no charge", "the probe's execution is the switch figure, the trace's the kernel one"),
    ("with --under", "--calibrate with --under"),
    ("throttled", "preempted or throttled it in 50 of 150 activations, more than the 0.01"),
])
def test_a_probe_that_cannot_calibrate_is_refused_naming_it(case, why):
    free, kw = timer_job(), {}
    if case == "other thread":  # the IRQ threads of another line
        arr = [k * 1_000 * US for k in range(1, 400)]
        free = irq_thread_trace(arr, [100 * US] * len(arr), charge_overhead_ns=0)[0].build()
        probe = irq_thread_trace(arr, [100 * US] * len(arr), irq=12,
                                 charge_overhead_ns=0)[0].build()
        kw = {"tasks": ()}
    elif case == "short":
        probe = timer_job(n=10, reserved=True)
    elif case == "no charge":
        probe = timer_job(reserved=True)
        rt = probe.events["sched_stat_runtime"]
        probe.events["sched_stat_runtime"] = {k: v[:0] for k, v in rt.items()}
    elif case == "throttled":
        probe = throttled_probe()
    else:
        probe, kw = timer_job(reserved=True), {"under": (300 * US, D)}
    with pytest.raises(ModelError, match="calibrate") as err:
        analyze(free, opts(calibrate="probe.dat", **kw), probe)
    assert why in str(err.value)
    if case != "with --under":
        assert "probe.dat" in str(err.value)


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="recording needs root (tracefs writes)")
@pytest.mark.skipif(not os.path.isfile(f"{TRACEFS}/events/sched/sched_stat_runtime/format"),
                    reason="no tracefs with sched_stat_runtime at /sys/kernel/tracing")
def test_a_real_probe_recorded_under_sched_deadline_calibrates(tmp_path):
    """The timer job recorded free and under SCHED_DEADLINE (600 µs every 1 ms, given by
    chrt: a process this test spawns), then `irqres analyze FREE --calibrate PROBE`: the
    model's execution times are the free trace's mapped onto the probe's held ones, each
    read from its own trace."""
    traces = {}
    # free, the job runs on CPU 0 (this virtual host's tracing now and then loses CPU
    # 1's switches out of idle: test_measure_charge.py); a SCHED_DEADLINE task cannot be
    # pinned inside its root domain, so the probe runs on either CPU
    for tag, prefix in (("free", ["taskset", "-c", "0"]),
                        ("probe", ["chrt", "-d", "-T", "600000", "-P", "1000000", "0"])):
        for attempt in range(RECORD_ATTEMPTS):  # again when the host's tracing lost it
            out = tmp_path / f"{tag}{attempt}.dat"
            cmd = [sys.executable, "-m", "irqres", "record", "-o", str(out), "--buffer-kb",
                   "4096", "--", *prefix, sys.executable, str(DATA / "timer_job.py"),
                   "--period-us", "1000", "--work-us", "200", "--count", "300"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            assert r.returncode == 0, (tag, r.stdout, r.stderr)
            tr = read_trace(out)
            (act,) = activations(tr, None, ["timer-job"])
            # a probe must hold the job (throttled in at most the 0.01 the target leaves,
            # else --calibrate refuses it); a stall of this virtual host's vCPU is charged
            # to the running job's budget and throttles it now and then (3 of 298 seen)
            held = tag == "free" or int(preempted(tr, act).sum()) <= 0.01 * act.count
            if act.count >= 200 and held:
                break
        else:
            pytest.fail(f"{RECORD_ATTEMPTS} recordings of the {tag} job in a row lost its "
                        f"switches or did not hold it: {act.count} of 300 activations kept; "
                        f"the last record said {r.stderr.strip()[-400:]!r}")
        traces[tag] = out
    res = CliRunner().invoke(main, ["analyze", str(traces["free"]), "--task", "timer-job",
                                    "--deadline", "1ms", "--calibrate", str(traces["probe"]),
                                    "--json"])
    assert res.exit_code == 0, res.output
    (th,) = json.loads(res.output)["threads"]
    cal = th["execution"]["calibration"]
    assert cal, (th["problem"], th["stats"]["activations"])
    ex = {}
    for tag, path in traces.items():
        tr = read_trace(path)
        (act,) = activations(tr, None, ["timer-job"])
        ex[tag], source = execution_for_model(act, kernel_charge(tr, act))
        assert source == "kernel", tag
        if tag == "probe":
            off = preempted(tr, act)
            assert cal["preempted"] == int(off.sum())
            ex[tag] = ex[tag][~off]
    q = {tag: quantile_ns(e, 0.99) for tag, e in ex.items()}
    assert (cal["free_ns"], cal["probe_ns"]) == (q["free"], q["probe"])
    assert cal["allowance_ns"] == max(0, q["probe"] - q["free"])
    assert cal["added_ns"] == int((mapped(ex["free"], ex["probe"]) - ex["free"]).sum())
    assert cal["source"] == "kernel" and cal["probe_activations"] >= 150
    # each job burns 200 us of its own CPU time, free or reserved
    assert 200 * US <= min(cal["median_free_ns"], cal["median_probe_ns"]) <= 400 * US
