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


def grid_lateness(hist: dict, interval_us: int, hist_us: int) -> tuple[dict[int, int], int]:
    """The lateness of every cycle of cyclictest's intended period grid, from its start to
    its last wake-up: ({lateness in µs: cycles}, cycles later than ``hist_us``).

    cyclictest skips the cycles it missed: a wake-up L µs late held back the ceil(L/I) - 1
    cycles due before it, each late until that wake-up (L - I, L - 2I, ...). Wake-ups
    beyond the histogram (``overflows``) are known only by their number and, through
    cyclictest's average, their sum S: each held back one cycle per I of lateness below
    ``hist_us`` (counted at hist_us - jI, i.e. to within one interval) and
    (S - n * hist_us) / I cycles more, all later than ``hist_us``.
    """
    cycles: dict[int, int] = {}
    buckets = {int(k): v for k, v in hist["buckets"].items()}
    for lat, n in buckets.items():
        for j in range(max(1, -(-lat // interval_us))):
            cycles[lat - j * interval_us] = cycles.get(lat - j * interval_us, 0) + n
    over = hist.get("overflows") or 0
    beyond = 0
    if over:
        # cyclictest's average is over every wake-up, its "Total" over the histogram's
        total = (hist["avg_us"] * (hist["cycles"] + over)
                 - sum(k * v for k, v in buckets.items()))
        total = max(total, over * hist_us)  # the average is truncated to 1 µs
        for j in range(hist_us // interval_us):
            cycles[hist_us - j * interval_us] = cycles.get(hist_us - j * interval_us, 0) + over
        beyond = (total - over * hist_us) // interval_us
    return cycles, beyond


def grid_summary(hist: dict, interval_us: int, hist_us: int) -> dict:
    """p50/p99/p99.9/max over the intended cycle grid (``grid_lateness``) and its size.
    A percentile among the cycles later than ``hist_us`` is None: known only to be
    later than that."""
    cycles, beyond = grid_lateness(hist, interval_us, hist_us)
    total = sum(cycles.values()) + beyond

    def pct(p: float) -> int | None:
        rank, seen = p / 100 * total, 0
        for lat in sorted(cycles):
            seen += cycles[lat]
            if seen >= rank:
                return lat
        return None

    return {"p50": pct(50), "p99": pct(99), "p99.9": pct(99.9), "max": hist["max_us"],
            "cycles": total, "ran": sum(int(v) for v in hist["buckets"].values())
            + (hist.get("overflows") or 0)}


def grid_tail_mean(hists: list[dict], interval_us: int, hist_us: int,
                   share_pct: float) -> int | None:
    """The mean lateness (µs) of the latest ``share_pct`` % of the intended cycle grid's
    cycles (``grid_lateness``), the grids of ``hists`` pooled; None when a wake-up beyond
    the histogram makes it unknown (or there is no cycle)."""
    pooled: dict[int, int] = {}
    for hist in hists:
        if hist.get("overflows"):
            return None
        for lat, n in grid_lateness(hist, interval_us, hist_us)[0].items():
            pooled[lat] = pooled.get(lat, 0) + n
    left = want = max(1, round(sum(pooled.values()) * share_pct / 100))
    total = 0
    for lat in sorted(pooled, reverse=True):
        took = min(left, pooled[lat])
        total, left = total + took * lat, left - took
        if not left:
            return total // want
    return None


def spread_bounded(values: list[int | None], bound: int) -> str:
    """``spread`` of values some of which are only known to exceed ``bound`` (None)."""
    def key(v: int | None) -> float:
        return float("inf") if v is None else v

    def fmt(v: int | None) -> str:
        return f"> {bound}" if v is None else str(v)

    vs = sorted(values, key=key)
    if vs[0] is None:
        return f"> {bound} in every run"
    return f"{fmt(vs[(len(vs) - 1) // 2])} [{fmt(vs[0])}..{fmt(vs[-1])}]"


def series_stats(values: list[int]) -> dict:
    """mean/std/min/max in ns of a list of intervals (population std, as a PMF's)."""
    n = len(values)
    if n == 0:
        return {"count": 0}
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / n
    return {"count": n, "mean_ns": mean, "std_ns": var ** 0.5, "min_ns": min(values),
            "max_ns": max(values)}
