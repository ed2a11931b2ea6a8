"""Durations with units, held as integer nanoseconds.

One source of truth for the duration grammar of every profile key, command-line option
and daemon option (the cases in ``tests/data/units/`` are shared with the C parser):
``<number>[blanks]<unit>`` with the unit one of ``ns``, ``us``, ``µs``, ``ms``, ``s``;
blanks around the number and the unit are allowed; ``0`` alone is the only bare number
(any other bare number is ambiguous, so it is refused rather than guessed).
"""

from __future__ import annotations

import re

from .errors import UnitError

UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
NS_MAX = 2**63 - 1
HINT = "use a number with a unit (ns, us, ms, s), e.g. 2ms or 500us"

_BLANKS = " \t"
_NUMBER = re.compile(r"([0-9]+)(?:\.([0-9]*))?|\.([0-9]+)")
_UNIT = re.compile(r"[A-Za-zµ]+")


class DurationError(UnitError):
    """A text that is not a duration.

    Attributes
    ----------
    text
        What the user typed, unchanged.
    kind
        The class of the error, as in ``tests/data/units/durations-parse.txt``:
        ``unit``, ``negative``, ``fraction``, ``range`` or ``syntax``.
    cause
        Why, in words (without the text).
    """

    def __init__(self, text: str, kind: str, cause: str, what: str = ""):
        self.text, self.kind, self.cause, self.what = text, kind, cause, what
        msg = f"{text!r} is not a duration: {cause}"
        super().__init__(f"{what}: {msg}" if what else msg)


def _split(text: str) -> tuple[str, str | None, str | None, str] | None:
    """``(whole, fraction or None, unit or None, what follows when it is no unit)`` of a
    number and unit with blanks around; None when no number starts the text."""
    s = text.strip(_BLANKS)
    m = _NUMBER.match(s)
    if not m:
        return None
    whole = m.group(1) if m.group(1) is not None else "0"
    frac = m.group(2) if m.group(1) is not None else m.group(3)
    rest = s[m.end():].lstrip(_BLANKS)
    u = _UNIT.fullmatch(rest)
    return whole, frac, u.group(0) if u else None, "" if u else rest


def parse_duration(text: str | int, what: str = "") -> int:
    """Return ``text`` as integer nanoseconds.

    Parameters
    ----------
    text
        ``"2ms"``, ``"500us"``, ``"1.5ms"``, ``"10ns"``, ``"1s"``, ``"0"``; an ``int`` is
        taken as nanoseconds already (a value that was parsed before).
    what
        The name of the value (an option, a profile key), put before the message.

    Raises
    ------
    DurationError
        When the text is not a duration; its ``kind`` says which rule it breaks.
    """
    if isinstance(text, bool) or not isinstance(text, int | str):
        raise DurationError(str(text), "syntax", f"expected text such as 2ms, got "
                            f"{type(text).__name__}", what)
    if isinstance(text, int):
        if text < 0:
            raise DurationError(str(text), "negative", "a duration cannot be negative", what)
        if text > NS_MAX:
            raise DurationError(str(text), "range", "too large (2^63 ns or more)", what)
        return text
    body = text.lstrip(_BLANKS)
    if body.startswith("-"):
        raise DurationError(text, "negative", "a duration cannot be negative", what)
    parts = _split(text)
    if parts is None:
        raise DurationError(text, "syntax", HINT if text.strip(_BLANKS) else
                            "empty; " + HINT, what)
    whole, frac, unit, tail = parts
    if tail:
        raise DurationError(text, "syntax", f"{tail!r} is not a unit; {HINT}", what)
    if unit is not None and unit not in UNITS:
        raise DurationError(text, "syntax", f"unknown unit {unit!r}; {HINT}", what)
    digits = whole + (frac or "")
    if unit is None:
        if frac is None and whole == "0":
            return 0
        if int(digits) == 0:
            raise DurationError(text, "syntax", f"0 alone or with a unit; {HINT}", what)
        t = text.strip(_BLANKS)
        raise DurationError(text, "unit", f"a nonzero number needs a unit: {t}s, {t}ms, "
                            f"{t}us or {t}ns?", what)
    scale = UNITS[unit]
    frac = frac or ""
    # exact: value = (whole * 10^len(frac) + frac) * scale / 10^len(frac)
    num = (int(whole) * 10 ** len(frac) + int(frac or "0")) * scale
    den = 10 ** len(frac)
    if num // den > NS_MAX:
        raise DurationError(text, "range", "too large (2^63 ns or more)", what)
    if num % den:
        raise DurationError(text, "fraction", "not a whole number of nanoseconds", what)
    return num // den


def format_duration(ns: int) -> str:
    """Integer nanoseconds as the exact text with the largest unit the value reaches
    (``tests/data/units/durations-format.txt``); :func:`parse_duration` reads it back.

    >>> format_duration(2_000_000)
    '2ms'
    >>> format_duration(1_234_567)
    '1.234567ms'
    >>> format_duration(750)
    '750ns'
    """
    ns = int(ns)
    sign = "-" if ns < 0 else ""      # differences (a change of budget) can be negative
    ns = abs(ns)
    for unit, scale, width in (("s", 1_000_000_000, 9), ("ms", 1_000_000, 6),
                               ("us", 1_000, 3)):
        if ns >= scale:
            whole, rest = divmod(ns, scale)
            frac = f".{rest:0{width}d}".rstrip("0") if rest else ""
            return f"{sign}{whole}{frac}{unit}"
    return f"{sign}{ns}ns"
