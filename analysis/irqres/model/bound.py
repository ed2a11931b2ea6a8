"""The default response bound D: one a reservation near the thread's measured use meets.

The engineer's D drives the recommendation. When none is given, D starts at the mean
inter-arrival time of the activations (whole µs, at least 1 ms: a thread that finishes
before its next wake-up keeps up with its device). That start is not always one a
reservation can meet cheaply: with a heavy tail of execution times (a guest whose vCPU
stalls stretch a few activations to tens of ms) a bound shorter than the execution
time at the target quantile cannot be met at any budget, and one a little longer only
with most of the CPU. So the bound is doubled, at most :data:`MAX_DOUBLINGS` times,
until the least bandwidth that meets it is at most :data:`NEAR_USE_FACTOR` times the
thread's measured use (its execution time per unit of trace time); when no doubling
gets there, the bound with the least bandwidth is kept. The report says which bound was
used and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..units import format_duration
from .recommend import Recommendation, default_response_bound, recommend

#: A default bound is accepted once the least bandwidth that meets it is at most this many
#: times the thread's measured CPU use.
NEAR_USE_FACTOR = 2.0
#: The most times the default bound is doubled.
MAX_DOUBLINGS = 6


@dataclass(frozen=True)
class DefaultBound:
    """The recommendation for the default bound, the bound, and why it was chosen."""

    recommendation: Recommendation
    deadline_ns: int
    source: str
    tried: list[tuple[int, float | None]]  # (D, least bandwidth or None) per bound tried


def near_use_bound(arrival_ns: np.ndarray, exec_ns: np.ndarray, interarrival_ns: np.ndarray,
                   use: float, *, period_max_ns: int | None = None,
                   **kwargs: Any) -> DefaultBound:
    """Search the default bound (module docstring) and recommend for it.

    ``use`` is the measured CPU use (execution time / trace time); ``kwargs`` go to
    :func:`~.recommend.recommend` (not ``deadline_ns`` nor ``periods_ns``: the candidate
    periods follow each bound). Bounds beyond ``period_max_ns`` are not tried.
    """
    start = default_response_bound(interarrival_ns)
    target = NEAR_USE_FACTOR * use
    # the budgets found for each bound tried, reused by the checked recommendation at the end
    searched: dict[tuple[int, int], dict] = {}
    quick = {**kwargs, "mc_jobs": 0, "run_replay": False, "searched": searched}
    tried: list[tuple[int, float | None]] = []
    d = start
    for _ in range(MAX_DOUBLINGS + 1):
        best = recommend(arrival_ns, exec_ns, deadline_ns=d, **quick).best
        bw = None if best is None else best.bandwidth
        tried.append((d, bw))
        if bw is not None and bw <= target:
            break
        if period_max_ns is not None and 2 * d > period_max_ns:
            break
        d *= 2
    last_d, last_bw = tried[-1]
    feasible = [(bw, d) for d, bw in tried if bw is not None]
    src = "default: the mean inter-arrival time, at least 1ms"
    if last_bw is not None and last_bw <= target:
        chosen, how = last_d, (f"doubled to the first bound met within {NEAR_USE_FACTOR:g}x "
                               f"the measured use of {use:.2%}")
    elif feasible:
        chosen = min(feasible)[1]
        how = (f"of the bounds up to {format_duration(last_d)}, the one met with the least "
               f"bandwidth (none within {NEAR_USE_FACTOR:g}x the measured use of {use:.2%})")
    else:
        chosen, how = start, ""
    if chosen != start:
        first = tried[0][1]
        at_start = ("no budget met it" if first is None else
                    f"the least budget was {first:.1%} of the CPU")
        src += f", {format_duration(start)}, where {at_start}; {how}"
    rec = recommend(arrival_ns, exec_ns, deadline_ns=chosen, searched=searched, **kwargs)
    return DefaultBound(rec, chosen, src + "; set --deadline", tried)


def far_from_use_note(rec: Recommendation, exec_ns: np.ndarray, span_ns: int) -> str | None:
    """One line saying why the best reservation of ``rec`` takes more than
    :data:`NEAR_USE_FACTOR` times the measured use, or None when it does not."""
    best = rec.best
    if best is None or best.bandwidth is None or span_ns <= 0:
        return None
    use = int(np.asarray(exec_ns, dtype=np.int64).sum()) / span_ns
    if best.bandwidth <= NEAR_USE_FACTOR * use:
        return None
    c_p, d = rec.slice_exec_ns, best.deadline_ns
    head = (f"{best.bandwidth:.1%} of the CPU is {best.bandwidth / use:.1f}x the measured use "
            f"({use:.2%}): ")
    if best.limited_by:
        return head + (f"Q is set by {best.limited_by}: a job at the {rec.target_prob} "
                       f"quantile runs {format_duration(c_p)}, and the budget is enforced "
                       f"{(rec.kernel.enforcement == 'tick' and 'only at the tick') or 'exactly'}"
                       f", so a smaller Q would cut jobs where the model does not expect; a "
                       f"larger --max-slices needs less, at that risk")
    return head + (f"{1 - rec.target_prob:.2g} of the activations need "
            f"{format_duration(c_p)} or more on their own, which D = {format_duration(d)} "
            f"fits only with at least {min(c_p / d, 1.0):.1%} of the CPU; a longer --deadline "
            f"or a lower --target-prob needs less")
