"""Whom did an IRQ thread's time serve? Accounting of IRQ time per woken process.

Rule: while an IRQ thread runs an activation it wakes the processes its interrupts
concern (a network receive wakes the socket's reader, a disk completion the waiting
writer). A wake-up event (``sched_waking`` — or ``sched_wakeup`` when waking was not
recorded — whose ``common_pid``, the waker, is the IRQ thread) that falls inside a kept
activation, from its wake-up request to its sleep, ties that activation to the woken
process. Each activation's execution time is split evenly among the distinct processes
it woke, in integer nanoseconds; the remainder of the division (less than one ns per
process) goes to the woken process with the lowest pid, so the shares add up exactly.
Activations that woke nobody are accounted to nobody (``pid`` -1, "(none)").

sched_waking is preferred because it is emitted in the waker's context; sched_wakeup
can be emitted on the target CPU for remote wake-ups, where common_pid is not the waker.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..trace.reader import Trace
from .activations import ThreadActivations


@dataclass(frozen=True)
class Served:
    """The IRQ time one process got from one IRQ thread."""

    pid: int
    comm: str
    wakeups: int         # wake-ups of the process by the thread, in kept activations
    activations: int     # activations that woke it
    irq_time_ns: int     # the share of those activations' execution time
    share: float         # irq_time_ns / total execution time of the kept activations

    def to_dict(self) -> dict:
        return asdict(self)


def served_processes(trace: Trace, act: ThreadActivations) -> list[Served]:
    """The processes ``act``'s thread woke, most IRQ time first (see the module rule)."""
    wk = trace.wakeups()
    rows = np.flatnonzero(wk["waker"] == act.thread.pid)
    ts = wk["ts"][rows]
    woken = wk["pid"][rows].astype(np.int64)
    n = act.count
    total = int(act.exec_ns.sum())
    a = np.searchsorted(act.end_ns, ts, side="left")
    inside = a < n
    inside[inside] &= ts[inside] >= act.start_ns[a[inside]]
    a, woken = a[inside].astype(np.int64), woken[inside]
    # self wake-ups (the thread re-arming itself) serve nobody else
    other = woken != act.thread.pid
    a, woken = a[other], woken[other]

    key = (a << 32) | (woken & 0xFFFFFFFF)
    pairs, wake_counts = np.unique(key, return_counts=True)
    pa = pairs >> 32
    ppid = (pairs & 0xFFFFFFFF).astype(np.int64)
    ppid[ppid >= 2**31] -= 2**32
    per_act = np.bincount(pa, minlength=n) if n else np.zeros(0, np.int64)
    k = per_act[pa]
    share = act.exec_ns[pa] // k
    # pairs are sorted by (activation, pid): the first pair of each activation has the
    # lowest pid and takes the remainder
    first = np.ones(len(pa), dtype=bool)
    first[1:] = pa[1:] != pa[:-1]
    share = share + np.where(first, act.exec_ns[pa] - share * k, 0)

    out = []
    for pid in np.unique(ppid):
        sel = ppid == pid
        names = trace.names_of(int(pid))
        t = int(share[sel].sum())
        out.append(Served(int(pid), names[-1] if names else "?", int(wake_counts[sel].sum()),
                          int(sel.sum()), t, t / total if total else 0.0))
    nobody = np.ones(n, dtype=bool)
    nobody[pa] = False
    if nobody.any():
        t = int(act.exec_ns[nobody].sum())
        out.append(Served(-1, "(none)", 0, int(nobody.sum()), t, t / total if total else 0.0))
    out.sort(key=lambda s: (-s.irq_time_ns, s.pid))
    return out


def format_served(served: list[Served], limit: int = 10) -> str:
    """A short table of the processes served."""
    lines = [f"{'process':28}{'pid':>8}{'wakeups':>9}{'activ.':>8}{'IRQ time µs':>13}{'share':>8}"]
    for s in served[:limit]:
        lines.append(f"{s.comm[:27]:28}{s.pid:>8}{s.wakeups:>9}{s.activations:>8}"
                     f"{s.irq_time_ns / 1000:>13.1f}{100 * s.share:>7.1f}%")
    if len(served) > limit:
        lines.append(f"... and {len(served) - limit} more")
    return "\n".join(lines)
