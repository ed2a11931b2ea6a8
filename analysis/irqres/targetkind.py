"""The kinds of target irqresd reserves threads for, as its ``status`` reply names them
(docs/protocol.md).

The daemon keeps one table of operations per kind (daemon/src/target_kind.h); here every
branch on the kind is a ``match`` over :class:`TargetKind` ending in ``assert_never``, so
that mypy names each place a new kind must be handled, and a reply naming a kind this
package does not know is refused instead of taking some other kind's branch.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from .errors import DaemonError


class TargetKind(StrEnum):
    """What a target selects: IRQ threads, user threads (tasks), the threaded NAPI
    kthreads of an interface (``napi/<if>-<id>``), or per-CPU soft IRQ kthreads
    (``ksoftirqd/N``, ``ktimers/N``, ``backlog_napi/N``)."""

    IRQ = "irq"
    TASK = "task"
    NAPI = "napi"
    SOFTIRQ = "softirq"

    @classmethod
    def of(cls, target: Mapping[str, Any]) -> TargetKind:
        """The kind of one target of a ``status`` reply (a reply without ``kind`` comes
        from an irqresd that knew IRQ targets only). Raises :class:`DaemonError` naming
        the target when the kind is unknown."""
        raw = target.get("kind", cls.IRQ.value)
        try:
            return cls(raw)
        except ValueError:
            known = ", ".join(k.value for k in cls)
            raise DaemonError(f"irqresd status: target {target.get('name')!r} has kind "
                              f"{raw!r}, which this irqres does not know (known: {known}); "
                              f"update irqres") from None


#: The keys of a profile target that select its threads (docs/profile.md), every kind's:
#: IRQ (with ``with_napi``), task, napi (with ``threaded_napi``), softirq.
SELECTOR_KEYS = frozenset({"interface", "irq", "action", "driver", "secondary", "with_napi",
                           "task", "napi", "threaded_napi", "softirq"})

_NAPI_COMM = re.compile(r"napi/(?P<ifname>[^/:\s]{1,15})-(?P<id>[0-9]+)")


def napi_interface(comm: str) -> str | None:
    """The interface of a threaded NAPI kthread's name ``napi/<if>-<id>``, or None when
    ``comm`` is no such name (or the 15-character limit cut it before the id)."""
    m = _NAPI_COMM.fullmatch(comm)
    return m.group("ifname") if m else None


# The per-CPU soft IRQ kthreads (daemon/src/softirqd.c; cases in
# tests/data/rules/softirq-kthread.tsv): the kernel writes the CPU without a leading zero.
SOFTIRQ_KTHREADS = ("ksoftirqd", "ktimers", "backlog_napi")
_SOFTIRQ_COMM = re.compile(r"(?P<name>ksoftirqd|ktimers|backlog_napi)/(?P<cpu>0|[1-9][0-9]{0,9})")


def softirq_kthread(comm: str) -> tuple[str, int] | None:
    """(kthread name, CPU) of a per-CPU soft IRQ kthread's name ``<name>/<cpu>``, or None
    when ``comm`` is no such name."""
    m = _SOFTIRQ_COMM.fullmatch(comm)
    if m is None or int(m.group("cpu")) > 2**31 - 1:
        return None
    return m.group("name"), int(m.group("cpu"))
