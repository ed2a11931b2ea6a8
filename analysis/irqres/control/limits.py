"""How large a simulated workload may be (``irqres simulate``), without numpy, so the
command's --help and its option checks can say it before the model is loaded.

A run keeps every job it simulates: each job's CPU time as numpy values while the
arrivals are drawn, then as Python ints in the lists the CBS model serves from, about
:data:`JOB_BYTES` per job at the peak (measured: 4,000,000 jobs, 310 MB more than 10
jobs). :data:`MAX_JOBS` keeps a run within about 2 GB; the rate options (jobs per
interval) are bounded by it over --intervals.
"""

from __future__ import annotations

JOB_BYTES = 80
MAX_JOBS = 25_000_000


def max_rate(intervals: int) -> float:
    """The most jobs per interval a rate may ask for over ``intervals`` intervals
    (at least 1)."""
    return MAX_JOBS / max(intervals, 1)
