"""Jobs a trace cannot tell apart: a periodic thread still running at its next release.

A thread woken periodically (a timerfd, a timer sleep, an IRQ at a steady rate) is not
woken again when its next release comes while it still runs: it finds the work waiting
and goes on. Its trace then has one activation for two or more jobs, whose execution is
their sum and whose inter-arrival to the next is a multiple of the period. That happens
when the recording starved the thread (recorded at SCHED_OTHER beside a heavy load): the
execution times the model is given are then several jobs long, and the recommendation
sizes those (on the development host, a 1 ms job every 5 ms recorded beside 8 busy loops
on 2 CPUs: 85 of 400 expiries found the job running, the 0.99 quantile of its execution
was 3.08 ms and the recommended Q 3.085 ms every 3.8 ms, 5.7 times the measured use).
:func:`merged_jobs_warning` says when a trace looks so.

Every time is an int64 number of nanoseconds.
"""

from __future__ import annotations

import numpy as np

from ..units import format_duration
from .activations import ThreadActivations

#: an inter-arrival within this share of a multiple of the period counts as that multiple
TOLERANCE = 0.05
#: the release pattern counts as periodic when at least this share of the inter-arrivals
#: are within TOLERANCE of one period
PERIODIC_SHARE = 0.5
#: fewer activations than this say nothing about a pattern
MIN_ACTIVATIONS = 20


def merged_jobs(act: ThreadActivations) -> tuple[int, int]:
    """(the period of ``act``'s releases, how many of its activations look like merged
    jobs), or (0, 0) when its releases are not periodic. A merged activation ran past
    the next release (its response is longer than the period) and the next activation
    came k >= 2 periods after it. Only consecutive activations (by ``seq``) count. An
    IRQ thread whose hard IRQs the trace has is left out: its requests merged into a
    running activation are counted from them (``merged_irqs``)."""
    if act.count < MIN_ACTIVATIONS or act.irq_ts_ns.size:
        return 0, 0
    start, seq = act.start_ns, act.seq
    consecutive = np.diff(seq) == 1
    ia = np.diff(start)[consecutive]
    if ia.size < MIN_ACTIVATIONS - 1:
        return 0, 0
    period = int(np.median(ia))
    if period <= 0:
        return 0, 0
    k = np.rint(ia / period)
    near = np.abs(ia - k * period) <= TOLERANCE * period
    if np.count_nonzero(near & (k == 1)) < PERIODIC_SHARE * ia.size:
        return 0, 0
    response = act.response_ns[:-1][consecutive]
    merged = near & (k >= 2) & (response > (1 + TOLERANCE) * period)
    return period, int(np.count_nonzero(merged))


def merged_jobs_warning(act: ThreadActivations, target_prob: float) -> str | None:
    """One line when more of ``act``'s activations than the target leaves look like
    merged jobs (:func:`merged_jobs`), or None."""
    period, merged = merged_jobs(act)
    if merged == 0 or merged <= (1 - target_prob) * act.count:
        return None
    t = act.thread
    return (f"{t.comm} (pid {t.pid}): {merged} of its {act.count} activations ran past "
            f"the next release of its {format_duration(period)} period and the next came "
            f"whole periods later: a periodic thread still running at its release is not "
            f"woken again, so this trace counts several jobs as one activation and the "
            f"recommendation sizes those; record it where it is not starved (under a "
            f"reservation, at a higher priority or beside less load)")
