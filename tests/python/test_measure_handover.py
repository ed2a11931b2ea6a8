"""The lock hand-over with ktimers a reservation brings on PREEMPT_RT: recognised in a
trace recorded without one, not in one recorded under a reservation (where the blocked
switch-outs show it), not on a kernel without PREEMPT_RT, not for another waker."""

import pytest
from irqres.measure.activations import activations
from irqres.measure.handover import blocked_share, handover_warning, ktimers_share
from irqres.report.pipeline import analyze
from irqres.report.types import Options
from irqres.trace.synthetic import TASK_INTERRUPTIBLE, TASK_RUNNING, TraceBuilder

US = 1_000
RT = "Linux guest 6.1.0-50-rt-amd64 #1 SMP PREEMPT_RT x86_64"
JOB, KTIMERS, OTHER = 300, 15, 40
BLOCKED = 0x2


def job_builder(uname=RT) -> TraceBuilder:
    """One CPU with the timer job asleep from time 1, ktimers and the idle task."""
    b = TraceBuilder(ncpus=1, uname=uname)
    b.comm(JOB, "timer-job")
    b.comm(KTIMERS, "ktimers/0")
    b.comm(0, "swapper/0")
    b.switch(1, 0, JOB, TASK_INTERRUPTIBLE, 0)
    return b


def timer_job(n=150, reserved=False, uname=RT, waker=KTIMERS):
    """A task woken every 1 ms by ``waker`` that runs 200 µs. ``reserved``: it preempts
    the waker, blocks on the lock the waker holds (D), waits for it and runs on, as a
    SCHED_DEADLINE task does on PREEMPT_RT."""
    b = job_builder(uname)
    b.comm(OTHER, "kworker/0:1")
    for k in range(n):
        t = 1_000 * US * (k + 1)
        b.switch(t, 0, 0, TASK_RUNNING, waker)
        b.waking(t + 5 * US, 0, waker, JOB, 0)
        if reserved:
            b.switch(t + 6 * US, 0, waker, TASK_RUNNING, JOB)
            b.switch(t + 50 * US, 0, JOB, BLOCKED, waker)
            b.waking(t + 120 * US, 0, waker, JOB, 0)
            b.switch(t + 125 * US, 0, waker, TASK_INTERRUPTIBLE, JOB)
            b.runtime(t + 325 * US, 0, JOB, 244 * US)
            b.switch(t + 326 * US, 0, JOB, TASK_INTERRUPTIBLE, 0)
        else:
            b.switch(t + 50 * US, 0, waker, TASK_INTERRUPTIBLE, JOB)
            b.runtime(t + 250 * US, 0, JOB, 200 * US)
            b.switch(t + 251 * US, 0, JOB, TASK_INTERRUPTIBLE, 0)
    return b.build()


def job_acts(trace):
    (act,) = [a for a in activations(trace, None, ["timer-job"]) if a.thread.pid == JOB]
    return act


def test_a_free_trace_of_a_task_woken_by_ktimers_is_flagged():
    tr = timer_job()
    act = job_acts(tr)
    assert act.count >= 140
    assert ktimers_share(tr, act) == 1.0 and blocked_share(tr, act) == 0.0
    why = handover_warning(tr, act)
    assert why is not None and "ktimers/N" in why and "timer-job (pid 300)" in why
    # and the report carries it with the recommendation
    rep = analyze(tr, Options(tasks=("timer-job",), mc_jobs=0, deadline_ns=1_000 * US))
    (th,) = [t for t in rep.threads if t.act.thread.pid == JOB]
    assert th.recommendation is not None
    assert why in th.warnings


@pytest.mark.parametrize("case", ["reserved", "no PREEMPT_RT", "another waker"])
def test_no_warning_where_the_trace_shows_the_cost_or_there_is_none(case):
    tr = {"reserved": lambda: timer_job(reserved=True),
          "no PREEMPT_RT": lambda: timer_job(uname="Linux host 6.18.44 #1 SMP x86_64"),
          "another waker": lambda: timer_job(waker=OTHER)}[case]()
    act = job_acts(tr)
    assert act.count >= 140
    if case == "reserved":
        assert blocked_share(tr, act) == 1.0
    assert handover_warning(tr, act) is None
