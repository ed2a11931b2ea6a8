"""The loop's own admission estimate: the SCHED_DEADLINE bandwidth the reservations
irqresd holds take per root domain, and the largest budget a target may still ask for.
irqresd's admission check stays the final word (a refused budget is held off for a
while by the loop)."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable

from .state import TargetState


@functools.lru_cache(maxsize=256)
def cpu_count(cpus: str) -> int:
    """Number of CPUs in a list such as ``0-1,3``; 0 when empty or unreadable."""
    n = 0
    for part in (cpus or "").split(","):
        lo, _, hi = part.strip().partition("-")
        if lo.isdigit() and (not hi or hi.isdigit()):
            n += int(hi or lo) - int(lo) + 1
    return n


def rt_capacity(proc: str = "/proc") -> float:
    """The share of each CPU SCHED_DEADLINE may take: sched_rt_runtime_us / _period_us."""
    try:
        with open(os.path.join(proc, "sys/kernel/sched_rt_runtime_us")) as f:
            runtime = int(f.read())
        with open(os.path.join(proc, "sys/kernel/sched_rt_period_us")) as f:
            period = int(f.read())
    except (OSError, ValueError):
        return 0.95
    return 1.0 if runtime < 0 or period <= 0 else runtime / period


def domain_usage(targets: Iterable[TargetState], others: Iterable[dict]) -> dict[str, float]:
    """SCHED_DEADLINE bandwidth irqres holds per CPU list (root domain), by the
    reservations in force: every adaptive target's budget and the static ones' threads
    (``others``: status THREAD entries with their target's runtime_ns and period_ns)."""
    used: dict[str, float] = {}
    for st in targets:
        bw = st.runtime_ns / st.period_ns
        for th in st.threads.values():
            cpus = th.get("cpus", "")
            used[cpus] = used.get(cpus, 0.0) + bw
    for th in others:
        cpus = th.get("cpus", "")
        used[cpus] = used.get(cpus, 0.0) + (int(th.get("runtime_ns") or 0)
                                            / int(th.get("period_ns") or 1))
    return used


def _cpu_groups(st: TargetState) -> list[tuple[str, int, int]]:
    """(cpus, st's threads on them, CPUs in the list), kept until st's threads change."""
    if st.cpu_groups is None or st.cpu_groups[0] is not st.threads:
        mine: dict[str, int] = {}
        for th in st.threads.values():
            mine[th.get("cpus", "")] = mine.get(th.get("cpus", ""), 0) + 1
        st.cpu_groups = (st.threads, [(c, n, cpu_count(c)) for c, n in mine.items()
                                      if cpu_count(c)])
    return st.cpu_groups[1]


def bandwidth_left(st: TargetState, now: int, used: dict[str, float],
                   capacity: float) -> int | None:
    """Largest runtime the root domains of st's threads still admit (ns), from ``used``
    (:func:`domain_usage`) and the share ``capacity`` of each CPU, below the ceiling a
    refusal left while it holds; None when nothing limits it."""
    limit: int | None = None
    if st.ceiling is not None:
        if st.ceiling[1] > now:
            limit = st.ceiling[0]
        else:
            st.ceiling = None
    own_bw = st.runtime_ns / st.period_ns
    for cpus, n_mine, ncpu in _cpu_groups(st):
        free = capacity * ncpu - (used.get(cpus, 0.0) - n_mine * own_bw)
        allowed = int(free / n_mine * st.period_ns)
        limit = allowed if limit is None else min(limit, allowed)
    return limit
