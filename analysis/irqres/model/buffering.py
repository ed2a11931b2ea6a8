"""The buffering constraint of an IRQ-thread reservation.

A thread that gets Q every T can be kept off the CPU for T - Q at a time; interrupts
arriving at least P apart then pile up to (T - Q)/P of them. The device must hold them:

    (T - Q) / P < N_c

with N_c the number of interrupts the device can buffer (RX ring, coalescing). All
arithmetic is on integer nanoseconds, so the strict inequality is exact:
T - Q < N_c·P, hence Q ≥ T - N_c·P + 1 and T ≤ Q + N_c·P - 1.

:func:`passes` and :func:`min_runtime` are the rule, the one place it is written in
Python (irqresd's is daemon/src/buffering.c; tests/data/rules/buffering.tsv pins both).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ModelError
from . import format_exact


def _check_int(value: object, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise ModelError(f"{what}: expected an integer, got {value!r}")
    v = int(value.__index__())
    if v < minimum:
        raise ModelError(f"{what}: must be at least {minimum}, got {v}")
    return v


def passes(runtime_ns: int, period_ns: int, min_interarrival_ns: int, buffer: int) -> bool:
    """Whether Q every T keeps (T - Q)/P < N_c (exact, in integers)."""
    return period_ns - runtime_ns < buffer * min_interarrival_ns


def min_runtime(period_ns: int, min_interarrival_ns: int, buffer: int) -> int:
    """The smallest Q that passes with period T; 0 when any Q does."""
    return max(period_ns - buffer * min_interarrival_ns + 1, 0)


@dataclass(frozen=True)
class BufferCheck:
    """The verdict of the buffering check for one (Q, T, P, N_c)."""

    runtime_ns: int
    period_ns: int
    min_interarrival_ns: int
    buffer: int

    @property
    def delayed_irqs(self) -> float:
        """(T - Q)/P: how many interrupts can arrive while the thread is held back."""
        return (self.period_ns - self.runtime_ns) / self.min_interarrival_ns

    @property
    def ok(self) -> bool:
        """True when (T - Q)/P < N_c (exact, in integers)."""
        return passes(self.runtime_ns, self.period_ns, self.min_interarrival_ns, self.buffer)

    @property
    def excess(self) -> float:
        """How many interrupts beyond the buffer may pile up (≤ 0 when ok)."""
        return self.delayed_irqs - self.buffer

    def max_period_for(self, runtime_ns: int | None = None) -> int:
        """The largest period T that passes with runtime Q (default: this check's Q)."""
        q = self.runtime_ns if runtime_ns is None else _check_int(runtime_ns, "runtime", 0)
        return q + self.buffer * self.min_interarrival_ns - 1

    def min_runtime_for(self, period_ns: int | None = None) -> int:
        """The smallest runtime Q that passes with period T (default: this check's T).

        0 means that any runtime passes.
        """
        t = self.period_ns if period_ns is None else _check_int(period_ns, "period", 1)
        return min_runtime(t, self.min_interarrival_ns, self.buffer)

    @property
    def message(self) -> str:
        """One line for a user: the verdict, and by how much it is violated."""
        q, t = format_exact(self.runtime_ns), format_exact(self.period_ns)
        p = format_exact(self.min_interarrival_ns)
        head = (
            f"runtime {q}, period {t}, min inter-arrival {p}: up to "
            f"{self.delayed_irqs:.1f} interrupts delayed"
        )
        if self.ok:
            return f"{head} < buffer {self.buffer}: ok"
        ratio = self.delayed_irqs / self.buffer
        return (
            f"{head} >= buffer {self.buffer}: violated by {self.excess:.1f} interrupts "
            f"({ratio:.2f}x the buffer); needs runtime >= "
            f"{format_exact(self.min_runtime_for())} at this period, or period <= "
            f"{format_exact(self.max_period_for())} at this runtime"
        )

    def to_dict(self) -> dict:
        """A JSON-ready dict of the inputs and the verdict."""
        return {
            "runtime_ns": self.runtime_ns,
            "period_ns": self.period_ns,
            "min_interarrival_ns": self.min_interarrival_ns,
            "buffer": self.buffer,
            "delayed_irqs": self.delayed_irqs,
            "ok": self.ok,
            "min_runtime_ns": self.min_runtime_for(),
            "max_period_ns": self.max_period_for(),
            "message": self.message,
        }


def check(runtime_ns: int, period_ns: int, min_interarrival_ns: int, buffer: int) -> BufferCheck:
    """Check (T - Q)/P < N_c.

    Parameters
    ----------
    runtime_ns, period_ns
        The reservation Q every T, integer ns, 0 < Q <= T.
    min_interarrival_ns
        P, the minimum time between interrupts, integer ns > 0.
    buffer
        N_c, the number of interrupts the device can hold, >= 1.

    Raises
    ------
    ModelError
        When a value is not an integer or out of range; the message names it.
    """
    q = _check_int(runtime_ns, "runtime", 1)
    t = _check_int(period_ns, "period", 1)
    if q > t:
        raise ModelError(f"runtime {format_exact(q)} is larger than the period {format_exact(t)}")
    p = _check_int(min_interarrival_ns, "min inter-arrival", 1)
    n = _check_int(buffer, "buffer", 1)
    return BufferCheck(q, t, p, n)
