"""Reading /proc and /sys: the files the live commands read themselves (irqresd reads the
rest and reports it).

/proc/interrupts: a header of CPU columns (online CPUs only: ``CPU0 CPU2`` once CPU1 is
hot-removed), then one line per interrupt::

     11:      1234       567   IO-APIC  11-fasteoi   eth0
     11:        10        20     GICv3  27 Level     arch_timer

Only a line whose label is a number (ASCII digits up to 2**31 - 1) is an IRQ; ``NMI:``,
``LOC:``, ``ERR:``, ``IPI0:`` ... are not. An IRQ line has up to one count per CPU column,
each ASCII digits; the chip, hardware IRQ, trigger and action names follow. irqresd's
rule is daemon/src/interrupts.c; tests/data/rules/proc-interrupts/ pins both.

/sys/class/net/IF/statistics: a network device's drop counters.
"""

from __future__ import annotations

import os
import re

from .errors import IrqresError

#: the drop counters of a network device (/sys/class/net/IF/statistics)
NET_DROP_COUNTERS = ("rx_missed_errors", "rx_dropped")

_INT32_MAX = 2**31 - 1
_LABEL = re.compile(r"[ \t]*([0-9]+):")
_BLANKS = re.compile(r"[ \t]+")
_DIGITS = re.compile(r"[0-9]+")


class ProcfsError(IrqresError, ValueError):
    """A /proc or /sys file could not be read or parsed; the message names the file."""


def _tokens(text: str) -> list[str]:
    return [t for t in _BLANKS.split(text.rstrip("\n")) if t]


def interrupts_ncpu(header: str) -> int | None:
    """The CPU columns of /proc/interrupts' header line; None when it has none."""
    return len(_tokens(header)) or None


def interrupts_line(line: str, ncpu: int) -> tuple[int, int] | None:
    """(IRQ, sum of its counts) of one line of /proc/interrupts with ``ncpu`` CPU
    columns; None for a line that is not an IRQ's.

    Raises
    ------
    ValueError
        When the line is an IRQ's but its counts are not numbers.
    """
    m = _LABEL.match(line)
    if m is None or int(m[1]) > _INT32_MAX:
        return None
    counts = _tokens(line[m.end():])[:ncpu]
    if not all(_DIGITS.fullmatch(c) for c in counts):
        raise ValueError(f"cannot read the counts of IRQ {int(m[1])}")
    return int(m[1]), sum(int(c) for c in counts)


def parse_interrupts(text: str, path: str = "/proc/interrupts") -> dict[int, int]:
    """Interrupts raised per IRQ line, summed over CPUs, from the text of ``path``.

    Raises
    ------
    ProcfsError
        ``path:LINE: cause`` for a file without a header or an IRQ line without numbers.
    """
    lines = text.splitlines()
    ncpu = interrupts_ncpu(lines[0]) if lines else None
    if ncpu is None:
        raise ProcfsError(f"{path}: empty" if not text else f"{path}:1: no CPU columns")
    out: dict[int, int] = {}
    for no, line in enumerate(lines[1:], start=2):
        try:
            row = interrupts_line(line, ncpu)
        except ValueError as exc:
            raise ProcfsError(f"{path}:{no}: {exc}") from exc
        if row is not None:
            out[row[0]] = row[1]
    return out


def read_interrupts(proc: str = "/proc") -> dict[int, int]:
    """Interrupts raised per IRQ line, summed over CPUs (``proc``/interrupts)."""
    path = os.path.join(proc, "interrupts")
    try:
        with open(path) as f:
            text = f.read()
    except OSError as exc:
        raise ProcfsError(f"{path}: {exc.strerror or exc}") from exc
    return parse_interrupts(text, path)


def net_interface(actions: list[str], sys: str = "/sys") -> str | None:
    """The network interface an IRQ thread serves, from its action names, if any.

    ``eth0`` names it directly; queue actions such as ``eth0-TxRx-0`` or ``eth0-rx-1`` are
    tried without their suffix.
    """
    for action in actions:
        for name in (action, action.split("-", 1)[0]):
            if name and "/" not in name and os.path.isdir(
                    os.path.join(sys, "class", "net", name, "statistics")):
                return name
    return None


def read_net_drops(iface: str, sys: str = "/sys") -> int | None:
    """rx_missed_errors + rx_dropped of ``iface``; None when the device has neither.

    Raises
    ------
    ProcfsError
        When a counter the device has cannot be read.
    """
    total, found = 0, False
    for name in NET_DROP_COUNTERS:
        path = os.path.join(sys, "class", "net", iface, "statistics", name)
        try:
            with open(path) as f:
                total += int(f.read().strip() or 0)
            found = True
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            raise ProcfsError(f"{path}: cannot read: {exc}") from exc
    return total if found else None


def read_net_counters(iface: str, sys: str = "/sys") -> dict[str, int]:
    """The drop counters (:data:`NET_DROP_COUNTERS`) ``iface`` has; unreadable ones are
    left out (a device without them, or an interface that went away)."""
    out = {}
    for name in NET_DROP_COUNTERS:
        try:
            with open(os.path.join(sys, "class", "net", iface, "statistics", name)) as f:
                out[name] = int(f.read().strip() or 0)
        except (OSError, ValueError):
            continue
    return out
