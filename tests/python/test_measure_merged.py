"""Merged jobs: a periodic task still running at its next release is not woken again, so
its trace has one activation for several jobs. Recognised when more activations than the
target leaves look so; not for a task that keeps up, nor for releases with no period."""

import pytest
from irqres.measure.activations import activations
from irqres.measure.merged import merged_jobs, merged_jobs_warning
from irqres.report.pipeline import analyze
from irqres.report.types import Options
from irqres.trace.synthetic import TASK_INTERRUPTIBLE, TASK_RUNNING, TraceBuilder

US = 1_000
JOB, WAKER = 300, 15
PERIOD = 1_000 * US


def periodic_job(n: int = 200, late_every: int = 0, release=lambda k: PERIOD * (k + 1)):
    """A task released every PERIOD (job k at ``release(k)``), each job 200 µs of CPU. Every
    ``late_every``-th job is starved: it runs 400 µs, then is preempted for 1.2 ms, so it
    is still running at the next release and does that job without sleeping (one
    activation, 600 µs of CPU, the next wake-up two periods later)."""
    b = TraceBuilder(ncpus=1, uname="Linux host 6.18.44 #1 SMP x86_64")
    b.comm(JOB, "timer-job")
    b.comm(WAKER, "kworker/0:1")
    b.comm(0, "swapper/0")
    b.switch(1, 0, JOB, TASK_INTERRUPTIBLE, 0)
    k = 0
    while k < n:
        t = release(k)
        b.switch(t, 0, 0, TASK_RUNNING, WAKER)
        b.waking(t + 5 * US, 0, WAKER, JOB, 0)
        b.switch(t + 10 * US, 0, WAKER, TASK_INTERRUPTIBLE, JOB)
        if late_every and k % late_every == late_every - 1:
            b.runtime(t + 410 * US, 0, JOB, 400 * US)
            b.switch(t + 410 * US, 0, JOB, TASK_RUNNING, WAKER)
            b.switch(t + 1_610 * US, 0, WAKER, TASK_INTERRUPTIBLE, JOB)
            b.runtime(t + 1_810 * US, 0, JOB, 200 * US)
            b.switch(t + 1_811 * US, 0, JOB, TASK_INTERRUPTIBLE, 0)
            k += 2
        else:
            b.runtime(t + 210 * US, 0, JOB, 200 * US)
            b.switch(t + 211 * US, 0, JOB, TASK_INTERRUPTIBLE, 0)
            k += 1
    return b.build()


def job_act(trace):
    (act,) = [a for a in activations(trace, None, ["timer-job"]) if a.thread.pid == JOB]
    return act


def test_a_starved_periodic_task_is_flagged_with_its_period():
    tr = periodic_job(late_every=10)
    act = job_act(tr)
    period, merged = merged_jobs(act)
    assert period == PERIOD
    # 200 jobs, every 10th merged with the next: 20 merged activations of 180
    assert act.count >= 170 and merged >= 18
    why = merged_jobs_warning(act, 0.99)
    assert why is not None and "timer-job (pid 300)" in why and "1ms period" in why
    assert f"{merged} of its {act.count} activations" in why
    rep = analyze(tr, Options(tasks=("timer-job",), mc_jobs=0, deadline_ns=PERIOD))
    (th,) = [t for t in rep.threads if t.act.thread.pid == JOB]
    assert th.recommendation is not None and why in th.warnings


def test_below_what_the_target_leaves_no_warning():
    act = job_act(periodic_job(late_every=100))     # 2 merged of about 198
    assert merged_jobs(act)[1] >= 1
    assert merged_jobs_warning(act, 0.99) is None
    assert merged_jobs_warning(act, 0.999) is not None


@pytest.mark.parametrize("case", ["keeps up", "not periodic", "too few"])
def test_no_warning_without_merged_jobs_or_a_period(case):
    if case == "keeps up":
        act = job_act(periodic_job())
    elif case == "not periodic":
        # releases 1-3 ms apart, no two gaps alike: no period, even with starved jobs
        gaps = [1_000 * US + (k * 7919 % 2000) * US for k in range(200)]
        act = job_act(periodic_job(late_every=5, release=lambda k: sum(gaps[:k + 1])))
    else:
        act = job_act(periodic_job(n=12, late_every=2))
    assert merged_jobs(act)[1] == 0
    assert merged_jobs_warning(act, 0.99) is None
