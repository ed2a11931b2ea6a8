"""How large a simulated workload may be (``irqres simulate``), without numpy, so the
command's --help and its option checks can say it before the model is loaded.

A run keeps every job it simulates: each job's CPU time as numpy values while the
arrivals are drawn, then as Python ints in the lists the CBS model serves from. Measured
(2026-11-27, development host, Python 3.11, numpy 2.4): peak RSS 48.9 MB at about 10 jobs
and 510.4 MB at 4,000,000 (``/usr/bin/time -f %M irqres simulate --intervals 100000
--rate-on R --rate-off R --json`` with R = 0.0001 and 40), about :data:`JOB_BYTES` per
job. :data:`MAX_JOBS` keeps a run within about 3 GB; the rate options (jobs per interval)
are bounded by it over --intervals.
"""

from __future__ import annotations

JOB_BYTES = 116
MAX_JOBS = 25_000_000


def max_rate(intervals: int) -> float:
    """The most jobs per interval a rate may ask for over ``intervals`` intervals
    (at least 1)."""
    return MAX_JOBS / max(intervals, 1)
