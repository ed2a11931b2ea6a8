"""A cost only a reservation brings: the lock hand-over with ``ktimers/N`` on PREEMPT_RT.

On PREEMPT_RT a timer (a timerfd, an hrtimer sleep) expires in the timer softirq thread
``ktimers/N`` (SCHED_FIFO), which wakes the sleeper while it still holds the timer's
wait-queue lock, a sleeping lock there. A task that is not reserved waits until ktimers
is done, so its trace shows it woken by ktimers and switched in after it, nothing more.
Under SCHED_DEADLINE the task outranks ktimers: it preempts it at once, blocks on that
lock (a switch-out in state D), boosts ktimers to its deadline until the lock is free and
runs its wake-up path twice. Measured in the PREEMPT_RT guest (docs/model.md, "The
promise, closed loop, in the PREEMPT_RT guest"): one blocked switch-out per job, a wait
of 70-81 µs for the boosted ktimers and 73-94 µs more of the budget per job, which a
trace recorded without the reservation cannot show. :func:`handover_warning` says when a
trace is of that kind: a PREEMPT_RT trace in which most activations of the task are woken
by a ktimers thread and almost none blocks.

Every time is an int64 number of nanoseconds.
"""

from __future__ import annotations

import numpy as np

from ..trace.reader import Trace
from .activations import ThreadActivations

#: the comm prefix of PREEMPT_RT's timer softirq threads
KTIMERS = "ktimers/"
#: prev_state of a switch-out blocked on a lock or I/O (D: TASK_UNINTERRUPTIBLE; the
#: kernel reports a task waiting for an RT lock so too)
BLOCKED_STATE = 0x2
#: warn when at least this share of the activations is woken by ktimers ...
WOKEN_SHARE = 0.5
#: ... and at most this share of them blocks (a reserved task blocks in nearly every one)
BLOCKED_SHARE = 0.25


def ktimers_share(trace: Trace, act: ThreadActivations) -> float:
    """The share of ``act``'s activations whose wake-up (the sched_waking at its start)
    was made by a ktimers thread."""
    if act.count == 0:
        return 0.0
    wk = trace.events["sched_waking"]
    mine = wk["pid"] == act.thread.pid
    ts, waker = wk["ts"][mine], wk["waker"][mine]
    if ts.size == 0:
        return 0.0
    idx = np.minimum(np.searchsorted(ts, act.start_ns), ts.size - 1)
    found = ts[idx] == act.start_ns
    ktimers = np.array(sorted({pid for pid, comm in trace.comms if comm.startswith(KTIMERS)}),
                       dtype=np.int64)
    by_ktimers = found & np.isin(waker[idx], ktimers)
    return float(np.count_nonzero(by_ktimers)) / act.count


def blocked_share(trace: Trace, act: ThreadActivations) -> float:
    """Switch-outs of the thread in state D per activation."""
    if act.count == 0:
        return 0.0
    sw = trace.events["sched_switch"]
    out = (sw["prev_pid"] == act.thread.pid) & ((sw["prev_state"] & BLOCKED_STATE) != 0)
    # only those within an activation: [wake-up request, switch-out to sleep]
    return float(np.count_nonzero(act.holding(sw["ts"][out]) >= 0)) / act.count


def handover_warning(trace: Trace, act: ThreadActivations) -> str | None:
    """One line when ``act``'s recommendation is planned without the lock hand-over a
    reservation will bring (module docstring), or None."""
    if not trace.preempt_rt or act.count == 0:
        return None
    woken = ktimers_share(trace, act)
    if woken < WOKEN_SHARE or blocked_share(trace, act) > BLOCKED_SHARE:
        return None
    t = act.thread
    return (f"{t.comm} (pid {t.pid}): {woken:.0%} of its activations are woken by "
            f"{KTIMERS}N, which on PREEMPT_RT still holds the timer's lock then; reserved, "
            f"the task preempts it and waits for that lock once per job, a cost this trace "
            f"(no blocked switch-outs: recorded unreserved) does not show, so the "
            f"recommended budget is short of what the reserved task is charged and its "
            f"promise may not hold: record the task once under a reservation that holds "
            f"it and give that trace with --calibrate (docs/analysis.md)")
