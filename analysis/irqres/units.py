"""Durations with units, held as integer nanoseconds.

One source of truth for the unit syntax of profiles and command-line options:
``2ms``, ``500us``, ``1.5ms``, ``10ns``, ``1s``; a bare integer is nanoseconds.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from .errors import UnitError

_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(ns|us|µs|ms|s)?\s*$")


def parse_duration(text: str | int, what: str = "duration") -> int:
    """Return ``text`` as integer nanoseconds.

    Parameters
    ----------
    text
        ``"2ms"``, ``"500us"``, ``"1.5ms"``, ``"10ns"``, ``"1s"`` or an integer (ns).
    what
        The name of the value, used in the error message.

    Raises
    ------
    UnitError
        When the text is not a non-negative duration that is a whole number of ns.
    """
    if isinstance(text, bool):
        raise UnitError(f"{what}: expected a duration such as 2ms, got {text!r}")
    if isinstance(text, int):
        if text < 0:
            raise UnitError(f"{what}: must not be negative, got {text}")
        return text
    m = _RE.match(str(text))
    if not m:
        raise UnitError(
            f"{what}: cannot read {text!r} as a duration; use a number with a unit "
            "(ns, us, ms, s), e.g. 2ms or 500us"
        )
    number, unit = m.group(1), m.group(2)
    if unit is None and "." in number:
        raise UnitError(f"{what}: {text!r} has a fraction but no unit")
    try:
        value = Decimal(number) * _UNITS[unit or "ns"]
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only numbers
        raise UnitError(f"{what}: cannot read {text!r}") from exc
    if value != value.to_integral_value():
        raise UnitError(f"{what}: {text!r} is not a whole number of nanoseconds")
    result = int(value)
    if result >= 2**63:
        raise UnitError(f"{what}: {text!r} is too large")
    return result


def format_duration(ns: int) -> str:
    """Format integer nanoseconds with the largest unit that keeps it short and exact-ish.

    >>> format_duration(2_000_000)
    '2ms'
    >>> format_duration(1_500_000)
    '1.5ms'
    >>> format_duration(750)
    '750ns'
    """
    ns = int(ns)
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    for unit, scale in (("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)):
        if ns >= scale:
            value = Decimal(ns) / scale
            text = f"{value:.3f}".rstrip("0").rstrip(".")
            return f"{sign}{text}{unit}"
    return f"{sign}{ns}ns"


def format_us(ns: int | float, digits: int = 1) -> str:
    """Format nanoseconds as microseconds with ``digits`` decimals (for tables)."""
    return f"{ns / 1000:.{digits}f}"
