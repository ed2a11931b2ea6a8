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

Only wake-ups the thread raised in its own context count. ``common_pid`` is the task
that was current, so a hard IRQ (or NMI) taken while the thread runs wakes its own
waiters "from" the thread: the event's flags say hard IRQ, and such wake-ups are other
interrupts' work, never credited. A wake-up in soft IRQ context is the thread's own work
on PREEMPT_RT, where soft IRQs never run on the way out of a hard IRQ but only in task
context, in the task that re-enables bottom halves (the IRQ thread itself after its
handler raised NET_RX, say); on other kernels a soft IRQ can run on top of any task at
the exit of any interrupt, so there it is not credited either. The kernel kind comes
from the release stored in the trace (:attr:`Trace.preempt_rt`); when the trace does not
say, soft IRQ wake-ups are not credited. :func:`uncredited_wakeups` counts what was left
out.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..tables import Ns, column_texts
from ..trace.reader import FLAG_HARDIRQ, FLAG_NMI, FLAG_SOFTIRQ, Trace
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


def _wakeups_inside(trace: Trace, act: ThreadActivations):
    """(activation index, woken pid, flags) of the wake-ups ``act``'s thread appears to
    raise inside its kept activations, itself excluded."""
    wk = trace.wakeups()
    rows = np.flatnonzero(wk["waker"] == act.thread.pid)
    ts = wk["ts"][rows]
    woken = wk["pid"][rows].astype(np.int64)
    flags = (wk["flags"][rows] & 0xFF) if "flags" in wk else np.zeros(len(rows), np.int32)
    n = act.count
    a = np.searchsorted(act.end_ns, ts, side="left")
    inside = a < n
    inside[inside] &= ts[inside] >= act.start_ns[a[inside]]
    # self wake-ups (the thread re-arming itself) serve nobody else
    inside &= woken != act.thread.pid
    return a[inside].astype(np.int64), woken[inside], flags[inside]


def _foreign(trace: Trace, flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the wake-ups raised in hard IRQ (or NMI) context and of those in soft IRQ
    context that are not credited (see the module rule)."""
    hard = (flags & (FLAG_HARDIRQ | FLAG_NMI)) != 0
    soft = ~hard & ((flags & FLAG_SOFTIRQ) != 0)
    if trace.preempt_rt:
        soft = np.zeros_like(soft)
    return hard, soft


def uncredited_wakeups(trace: Trace, act: ThreadActivations) -> dict[str, int]:
    """Wake-ups inside the thread's activations that were not its own: raised in hard
    IRQ (or NMI) context, or in soft IRQ context on a kernel that is not PREEMPT_RT."""
    _, _, flags = _wakeups_inside(trace, act)
    hard, soft = _foreign(trace, flags)
    return {"hardirq": int(hard.sum()), "softirq": int(soft.sum())}


def served_processes(trace: Trace, act: ThreadActivations) -> list[Served]:
    """The processes ``act``'s thread woke, most IRQ time first (see the module rule)."""
    n = act.count
    total = int(act.exec_ns.sum())
    a, woken, flags = _wakeups_inside(trace, act)
    hard, soft = _foreign(trace, flags)
    own = ~hard & ~soft
    a, woken = a[own], woken[own]

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
    lines = [f"{'process':28}{'pid':>8}{'wakeups':>9}{'activ.':>8}{'IRQ time':>10}{'share':>8}"]
    times = column_texts([Ns(s.irq_time_ns) for s in served[:limit]])
    for s, t in zip(served[:limit], times, strict=True):
        lines.append(f"{s.comm[:27]:28}{s.pid:>8}{s.wakeups:>9}{s.activations:>8}"
                     f"{t:>10}{100 * s.share:>7.1f}%")
    if len(served) > limit:
        lines.append(f"... and {len(served) - limit} more")
    return "\n".join(lines)
