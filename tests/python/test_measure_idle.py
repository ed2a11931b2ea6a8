"""A trace whose kernel wrote no switch out of the idle task on a CPU: the activations
that start there have no switch-in and are dropped; the warning names the CPU, and a
trace with every switch gets none."""

import pytest
from irqres.measure.activations import activations
from irqres.measure.idle import idle_switch_gaps, idle_switch_warning
from irqres.report.pipeline import analyze
from irqres.report.types import Options
from irqres.trace.synthetic import TASK_INTERRUPTIBLE, TraceBuilder

US = 1_000
JOB, WAKER = 300, 15


def job_on_two_cpus(n: int = 200, write_idle_out_on_cpu1: bool = False):
    """A task woken every 1 ms from an idle CPU, on CPU 0 and CPU 1 by turns, 200 µs a
    job. Unless ``write_idle_out_on_cpu1``, CPU 1's switches out of idle are missing."""
    b = TraceBuilder(ncpus=2, uname="Linux host 6.18.44 #1 SMP x86_64")
    b.comm(JOB, "timer-job")
    b.comm(WAKER, "kworker/0:1")
    b.comm(0, "swapper/0")
    b.switch(1, 0, JOB, TASK_INTERRUPTIBLE, 0)
    for k in range(n):
        t, cpu = 1_000 * US * (k + 1), k % 2
        b.waking(t, cpu, WAKER, JOB, cpu)
        if cpu == 0 or write_idle_out_on_cpu1:
            b.switch(t + 10 * US, cpu, 0, 0, JOB)
        b.runtime(t + 210 * US, cpu, JOB, 200 * US)
        b.switch(t + 211 * US, cpu, JOB, TASK_INTERRUPTIBLE, 0)
    return b.build()


def job_act(trace):
    (act,) = [a for a in activations(trace, None, ["timer-job"]) if a.thread.pid == JOB]
    return act


def test_missing_switches_out_of_idle_are_named_with_the_drops():
    tr = job_on_two_cpus()
    gaps = idle_switch_gaps(tr)
    assert list(gaps) == [1] and gaps[1][1] == 0 and gaps[1][0] >= 99
    act = job_act(tr)
    assert act.dropped_inconsistent >= 90
    why = idle_switch_warning(gaps, act)
    assert why is not None and "timer-job (pid 300)" in why and "CPU 1 (" in why
    assert f"{act.dropped_inconsistent} activations dropped" in why
    rep = analyze(tr, Options(tasks=("timer-job",), mc_jobs=0, deadline_ns=1_000 * US))
    (th,) = [t for t in rep.threads if t.act.thread.pid == JOB]
    assert why in th.warnings


@pytest.mark.parametrize("case", ["every switch written", "nothing dropped"])
def test_no_warning_without_both_the_gap_and_drops(case):
    tr = job_on_two_cpus(write_idle_out_on_cpu1=case == "every switch written")
    act = job_act(tr)
    if case == "every switch written":
        assert idle_switch_gaps(tr) == {} and act.dropped_inconsistent == 0
        assert idle_switch_warning(idle_switch_gaps(tr), act) is None
    else:
        act.dropped_inconsistent = 0
        assert idle_switch_warning(idle_switch_gaps(tr), act) is None
