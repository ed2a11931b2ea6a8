"""Plain-text tables, and the one column order of a reservation.

The plan report (:mod:`irqres.plan`), ``irqres status`` and ``irqres stats`` show a
reservation in the same three columns, in the order the kernel's ``sched_attr`` and
irqresd's plan give them: :data:`RESERVATION_COLUMNS`, filled by :func:`reservation_cells`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .units import format_duration

#: a reservation's columns, and the keys of the JSON objects that hold them
RESERVATION_COLUMNS = ("RUNTIME", "DEADLINE", "PERIOD")
RESERVATION_KEYS = ("runtime_ns", "deadline_ns", "period_ns")


def dur(ns: object) -> str:
    """A duration in ns for a table cell ("-" when missing)."""
    return "-" if ns is None else format_duration(int(ns))  # type: ignore[call-overload]


def reservation_cells(obj: Mapping[str, Any]) -> list[str]:
    """The :data:`RESERVATION_COLUMNS` cells of a JSON object with runtime_ns,
    deadline_ns and period_ns."""
    return [dur(obj.get(k)) for k in RESERVATION_KEYS]


def text_table(rows: Sequence[Sequence[object]]) -> list[str]:
    """Rows (the first is the header) as lines: cells left-aligned, two blanks apart."""
    cells = [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in cells]
