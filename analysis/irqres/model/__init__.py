"""The stochastic model of an IRQ thread under a SCHED_DEADLINE reservation.

- :mod:`.buffering`: the buffering constraint (T - Q)/P < N_c and its inverses.
- :mod:`.cbs`: the backlog chain of a Constant Bandwidth Server, solved for its
  stationary distribution: P{response <= δT}.
- :mod:`.demand`: the same chain on the work that arrives per period (z ≡ 1), for
  interrupts that arrive several times per period.
- :mod:`.montecarlo`: the same recursion simulated, with a confidence interval.
- :mod:`.replay`: real arrivals and execution times through a simulated
  SCHED_DEADLINE server.
- :mod:`.recommend`: the smallest budget per candidate period, and a profile snippet.

docs/model.md describes the model, its conventions and how to read the results.
"""

from __future__ import annotations

from decimal import Decimal

#: The values of recommend()'s ``model`` keyword (here, so that the CLI can offer them
#: without importing numpy).
MODELS = ("auto", "activation", "demand")


def format_exact(ns: int) -> str:
    """Format integer ns with a unit, exactly (profile syntax: ``2ms``, ``1.5ms``, ``1234ns``).

    The project's one duration format (:func:`irqres.units.format_duration`) wherever it
    parses back to the same number of nanoseconds; otherwise the largest unit whose
    value needs at most three decimals.

    >>> format_exact(5_000_001)
    '5.000001ms'
    >>> format_exact(1_500_000)
    '1.5ms'
    """
    from ..units import format_duration, parse_duration

    ns = int(ns)
    # the project's one duration format, wherever it is exact
    text = format_duration(ns)
    try:
        if ns >= 0 and parse_duration(text) == ns:
            return text
    except ValueError:
        pass
    sign, mag = ("-", -ns) if ns < 0 else ("", ns)
    for unit, scale in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if mag >= scale and mag % (scale // 1000) == 0:
            text = f"{Decimal(mag) / scale:f}"
            if "." in text:
                text = text.rstrip("0").rstrip(".")
            return f"{sign}{text}{unit}"
    return f"{sign}{mag}ns"
