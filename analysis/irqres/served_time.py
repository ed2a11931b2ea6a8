"""Device-thread time per served process, live: the ``accounting`` member of irqresd's
``stats`` reply (docs/process-aware.md, "Accounting"; docs/json.md ACCOUNTING).

irqresd charges each activation of a target's threads to the processes it woke, by the
rule of :mod:`irqres.measure.accounting` (``irqres analyze``): its execution time split
evenly among them, the remainder to the lowest pid, nobody -> "(none)" (pid -1). The
totals are cumulative since the profile came in force; this module reads them, and
turns two readings into a share of a CPU for ``irqres top``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .errors import IrqresError
from .tables import Ns

NOBODY = -1


class AccountingError(IrqresError):
    """irqresd's accounting member is malformed."""


@dataclass(frozen=True)
class ServedTime:
    """What one target's threads spent on one process, since the profile came in force."""

    target: str
    pid: int                # NOBODY: activations that served nobody
    comm: str
    irq_time_ns: int
    activations: int
    wakeups: int
    packets: int = 0        # packets it read that the threads delivered (older irqresd: 0)


@dataclass(frozen=True)
class Accounting:
    """The ``accounting`` member of a stats reply."""

    enabled: bool
    error: str | None
    lost_events: int
    served: tuple[ServedTime, ...]
    dropped_activations: int = 0    # touched by lost events, or a switch not traced

    @property
    def wanted(self) -> bool:
        """Whether some target asked for it (it runs, or failed to start)."""
        return self.enabled or self.error is not None


#: what a reply without accounting (an older irqresd) stands for
NO_ACCOUNTING = Accounting(False, None, 0, ())


def parse(stats: dict) -> Accounting:
    """The accounting of a ``stats`` reply; an older irqresd without it gives an empty
    one. Raises :class:`AccountingError` on a malformed member."""
    acc = stats.get("accounting")
    if acc is None:
        return NO_ACCOUNTING
    try:
        served = tuple(ServedTime(str(s["target"]), int(s["pid"]), str(s["comm"]),
                                  int(s["irq_time_ns"]), int(s["activations"]),
                                  int(s["wakeups"]), int(s.get("packets", 0)))
                       for s in acc["served"])
        return Accounting(bool(acc["enabled"]), acc.get("error"), int(acc["lost_events"]),
                          served, int(acc["dropped_activations"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise AccountingError(f"irqresd stats: accounting: missing or bad field {exc}") \
            from exc


def ordered(served: Sequence[ServedTime]) -> list[ServedTime]:
    """By target, most time first."""
    return sorted(served, key=lambda s: (s.target, -s.irq_time_ns, s.pid))


def text_rows(acc: Accounting) -> list[list[object]]:
    """Rows of the ``irqres stats`` table: TARGET, PID, COMM, TIME, ACTIVATIONS, WAKEUPS,
    PACKETS."""
    return [[s.target, s.pid if s.pid != NOBODY else "-", s.comm, Ns(s.irq_time_ns),
             s.activations, s.wakeups, s.packets] for s in ordered(acc.served)]


def cpu_shares(prev: Accounting | None, cur: Accounting,
               dt_ns: int) -> list[tuple[ServedTime, float | None]]:
    """Each served process of ``cur`` with the share of one CPU the target's threads
    spent on it since ``prev`` (None when not known: first reading, or a total that went
    back, i.e. a new profile)."""
    before = {(s.target, s.pid): s for s in prev.served} if prev else {}
    out = []
    for s in ordered(cur.served):
        p = before.get((s.target, s.pid))
        ok = p is not None and dt_ns > 0 and s.irq_time_ns >= p.irq_time_ns
        out.append((s, (s.irq_time_ns - p.irq_time_ns) / dt_ns if ok and p else None))
    return out
