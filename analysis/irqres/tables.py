"""Plain-text tables, durations a person can read in them, and the one column order of
a reservation.

The plan report (:mod:`irqres.plan`), ``irqres status`` and ``irqres stats`` show a
reservation in the same three columns, in the order the kernel's ``sched_attr`` and
irqresd's plan give them: :data:`RESERVATION_COLUMNS`, filled by :func:`reservation_cells`.

A duration in a table cell is an :class:`Ns`; :func:`column_texts` (which
:func:`text_table` applies to every column) prints a column of them in one unit, the
largest that the column's longest value reaches, rounded to :data:`SIGNIFICANT`
significant digits of that value (``908.5ms``, ``27.57ms``). The exact nanoseconds are
the JSON's (``--json``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .units import format_duration

#: a reservation's columns, and the keys of the JSON objects that hold them
RESERVATION_COLUMNS = ("RUNTIME", "DEADLINE", "PERIOD")
RESERVATION_KEYS = ("runtime_ns", "deadline_ns", "period_ns")


SIGNIFICANT = 4
_UNITS = (("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000), ("ns", 1))


class Ns(int):
    """A duration (integer ns) in a table cell: printed by :func:`column_texts`."""


def ns_cell(ns: object) -> Ns | str:
    """``ns`` as a table cell: an :class:`Ns`, or "-" when missing."""
    return "-" if ns is None else Ns(ns)  # type: ignore[call-overload]


def duration_column(values: Sequence[int]) -> list[str]:
    """Durations of one column in one unit, the largest the longest of them reaches,
    with as many decimals as give it :data:`SIGNIFICANT` significant digits (trailing
    zeros dropped: ``2ms``, ``1.05ms``, ``0.55ms``)."""
    top = max((abs(int(v)) for v in values), default=0)
    unit, scale = next(((u, n) for u, n in _UNITS if top >= n), _UNITS[-1])
    decimals = max(0, SIGNIFICANT - len(str(top // scale))) if scale > 1 else 0
    out = []
    for v in values:
        text = f"{int(v) / scale:.{decimals}f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        out.append(f"{'0' if text in ('-0', '') else text}{unit}")
    return out


def readable(ns: int) -> str:
    """One duration as a table shows it: :data:`SIGNIFICANT` significant digits."""
    return duration_column([ns])[0]


def column_texts(cells: Sequence[object]) -> list[str]:
    """One column's cells as text: its :class:`Ns` cells in one unit
    (:func:`duration_column`), tuples of them position by position joined by "/" (a
    ``Q/T`` column), anything else as ``str``."""
    pairs = [c for c in cells if isinstance(c, tuple)]
    if pairs:
        parts = [column_texts([c[i] if isinstance(c, tuple) else "" for c in cells])
                 for i in range(max(len(p) for p in pairs))]
        return ["/".join(p[j] for p in parts) if isinstance(c, tuple) else str(c)
                for j, c in enumerate(cells)]
    ns = [c for c in cells if isinstance(c, Ns)]
    texts = iter(duration_column(ns))
    return [next(texts) if isinstance(c, Ns) else str(c) for c in cells]


def dur(ns: object) -> str:
    """A duration in ns for a table cell ("-" when missing)."""
    return "-" if ns is None else format_duration(int(ns))  # type: ignore[call-overload]


def reservation_cells(obj: Mapping[str, Any]) -> list[Ns | str]:
    """The :data:`RESERVATION_COLUMNS` cells of a JSON object with runtime_ns,
    deadline_ns and period_ns."""
    return [ns_cell(obj.get(k)) for k in RESERVATION_KEYS]


def text_table(rows: Sequence[Sequence[object]]) -> list[str]:
    """Rows (the first is the header) as lines: cells left-aligned, two blanks apart,
    durations (:class:`Ns`) a column in one unit."""
    columns = [column_texts([r[i] for r in rows]) for i in range(len(rows[0]))]
    cells = [[col[j] for col in columns] for j in range(len(rows))]
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in cells]
