"""Small statistics shared by the seeds' reports: percentiles of a cyclictest histogram,
spread over repeats. Integers in, integers or plain floats out; no numpy needed."""

from __future__ import annotations

import statistics


def hist_percentile(buckets: dict[int, int], overflows: int, max_us: int, p: float) -> int:
    """The ``p``-th percentile (0..100) of a histogram of 1 µs buckets, in µs.

    Samples beyond the histogram (``overflows``) count as ``max_us``, the run's maximum:
    a percentile falling among them is reported as that maximum.
    """
    total = sum(buckets.values()) + overflows
    if total == 0:
        raise ValueError("empty histogram")
    rank = p / 100 * total
    seen = 0
    for lat in sorted(buckets):
        seen += buckets[lat]
        if seen >= rank:
            return lat
    return max_us


def summary(hist: dict) -> dict:
    """p50/p99/p99.9/max and the sample count of one cyclictest histogram."""
    b = {int(k): v for k, v in hist["buckets"].items()}
    ov = hist.get("overflows") or 0
    mx = hist["max_us"]
    return {"p50": hist_percentile(b, ov, mx, 50), "p99": hist_percentile(b, ov, mx, 99),
            "p99.9": hist_percentile(b, ov, mx, 99.9), "max": mx,
            "samples": sum(b.values()) + ov}


def spread(values: list[float]) -> str:
    """``median [min..max]`` over repeats."""
    def fmt(v: float) -> str:
        return str(int(v)) if float(v).is_integer() else f"{v:.1f}"

    return f"{fmt(statistics.median(values))} [{fmt(min(values))}..{fmt(max(values))}]"
