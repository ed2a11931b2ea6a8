"""The name rule of IRQ threads, the one place it is written in Python.

The kernel names the thread of an IRQ's action ``irq/<N>-<action>``, and with forced
threading a secondary thread ``irq/<N>-s-<action>``; comm is cut at 15 characters, so the
action may be a prefix of the handler's name (``irq/128-mlx5_co``). N is ASCII digits up
to 2**31 - 1. The name alone does not make an IRQ thread on a live system (a user
process can call itself ``irq/11-eth0``; irqresd also asks for a kernel thread whose
parent is kthreadd), but a trace carries only the name.

The daemon's and the trace reader's C rule is daemon/src/irqname.c; the cases in
tests/data/rules/irq-thread-*.tsv pin both to the same answers.
"""

from __future__ import annotations

from typing import NamedTuple

_INT32_MAX = 2**31 - 1
#: the kernel's TASK_COMM_LEN less its NUL: a comm's length
COMM_MAX = 15
_DIGITS = frozenset("0123456789")


class IrqName(NamedTuple):
    """What an IRQ thread's comm says."""

    irq: int
    secondary: bool     # named irq/N-s-...: see own_actions()
    action: str         # after "irq/N-", and after "s-" when secondary (maybe cut)


def parse(comm: str) -> IrqName | None:
    """The IRQ, secondary flag and action of ``comm``; None when it is not of that form."""
    if not comm.startswith("irq/"):
        return None
    digits, dash, tail = comm[4:].partition("-")
    if not dash or not digits or not set(digits) <= _DIGITS or int(digits) > _INT32_MAX:
        return None
    secondary = tail.startswith("s-")
    return IrqName(int(digits), secondary, tail[2:] if secondary else tail)


def comm(irq: int, action: str, secondary: bool = False) -> str:
    """The comm the kernel gives the thread of ``action`` of IRQ ``irq``, cut at 15."""
    return f"irq/{irq}-{'s-' if secondary else ''}{action}"[:COMM_MAX]


def own_actions(comm: str, names: list[str]) -> tuple[bool, list[str]]:
    """Whether ``comm`` is a secondary thread, and which of its IRQ's action ``names`` it
    serves: those its action is a prefix of, all of them when it names none.

    ``irq/N-s-x`` is a secondary thread unless the IRQ has an action whose name starts
    with ``s-x``.

    Raises
    ------
    ValueError
        When ``comm`` is not an IRQ thread name.
    """
    name = parse(comm)
    if name is None:
        raise ValueError(f"{comm!r} is not an IRQ thread name (irq/<N>-<action>)")
    secondary, action = name.secondary, name.action
    if secondary and any(n.startswith("s-" + action) for n in names):
        secondary, action = False, "s-" + action
    return secondary, [n for n in names if n.startswith(action)] or list(names)
