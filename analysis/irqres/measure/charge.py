"""Execution time as the kernel charges it: ``sched:sched_stat_runtime``.

A SCHED_DEADLINE reservation's budget is consumed by what the scheduler accounts to the
task (``update_curr``: from the moment the task is picked to the moment it is put back,
plus the scheduler's own work in between), not by the time between the two
``sched_switch`` events a trace shows around each run. ``sched_stat_runtime`` is emitted
at every such charge (each tick, each switch-out, each dequeue) with the nanoseconds
charged since the previous one, so the sum of the events of a task over an activation is
what that activation cost its budget.

An activation's charge is the sum of the ``runtime`` of the thread's events whose time
falls in [wake-up request, switch-out to sleep]: the thread is asleep before it and after
it, so no other activation is charged then, and the charge made at the switch-out to
sleep is traced just before that switch.

Every time is an int64 number of nanoseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError, TraceError
from ..trace.reader import Trace
from . import EXEC_SOURCES
from .activations import ThreadActivations


@dataclass(frozen=True)
class KernelCharge:
    """The kernel's charge of each kept activation of one thread.

    Attributes
    ----------
    charged_ns
        Per kept activation, the CPU time the scheduler charged it (int64 ns).
    switch_ns
        Per kept activation, the execution time from the ``sched_switch`` events.
    uncharged
        Activations that ran (switch time > 0) but carry no charge event at all: the
        trace lost them, or the kernel does not charge this thread's class.
    """

    charged_ns: np.ndarray
    switch_ns: np.ndarray
    uncharged: int

    @property
    def complete(self) -> bool:
        """Every activation that ran was charged: the charge can stand for the execution."""
        return self.uncharged == 0 and len(self.charged_ns) > 0

    @property
    def diff_ns(self) -> np.ndarray:
        """Per activation, kernel charge minus switch-based execution time."""
        return self.charged_ns - self.switch_ns

    def summary(self) -> dict:
        """Mean and extremes of the difference, and the relative difference of the sums
        (charged / switch - 1); JSON-ready."""
        n = len(self.charged_ns)
        total_c = int(self.charged_ns.sum())
        total_s = int(self.switch_ns.sum())
        d = self.diff_ns
        return {
            "activations": n,
            "uncharged": self.uncharged,
            "charged_total_ns": total_c,
            "switch_total_ns": total_s,
            "mean_diff_ns": float(d.mean()) if n else None,
            "min_diff_ns": int(d.min()) if n else None,
            "max_diff_ns": int(d.max()) if n else None,
            "relative_diff": (total_c / total_s - 1.0) if total_s > 0 else None,
        }


def kernel_charge(trace: Trace, act: ThreadActivations) -> KernelCharge | None:
    """The kernel's charge of ``act``'s kept activations, or None when the trace holds
    no ``sched_stat_runtime`` event of the thread (not recorded, or a kernel that does
    not emit it for the thread's scheduling class)."""
    table = trace.events.get("sched_stat_runtime")
    if table is None:
        return None
    mine = table["pid"] == act.thread.pid
    if not mine.any():
        return None
    ts = table["ts"][mine]
    run = table["runtime"][mine]
    order = np.argsort(ts, kind="stable")
    ts, run = ts[order], run[order]
    cs = np.concatenate([[0], np.cumsum(run, dtype=np.int64)])
    lo = np.searchsorted(ts, act.start_ns, side="left")
    hi = np.searchsorted(ts, act.end_ns, side="right")
    charged = (cs[hi] - cs[lo]).astype(np.int64)
    uncharged = int(np.count_nonzero((hi == lo) & (act.exec_ns > 0)))
    return KernelCharge(charged, act.exec_ns.astype(np.int64), uncharged)


def execution_for_model(act: ThreadActivations, charge: KernelCharge | None,
                        source: str = "auto") -> tuple[np.ndarray, str]:
    """The execution times the model is given and where they come from (``"kernel"`` or
    ``"switch"``).

    ``source`` ``"auto"`` takes the kernel's charge when it covers every activation,
    ``"switch"`` the ``sched_switch`` intervals, ``"kernel"`` the charge or raises.

    Raises
    ------
    ModelError
        ``source`` unknown.
    TraceError
        ``"kernel"`` asked of a trace without a complete charge of the thread.
    """
    if source not in EXEC_SOURCES:
        raise ModelError(f"execution source: must be one of {', '.join(EXEC_SOURCES)}, "
                         f"got {source!r}")
    if source == "switch":
        return act.exec_ns, "switch"
    if charge is not None and charge.complete:
        return charge.charged_ns, "kernel"
    if source == "kernel":
        th = act.thread
        why = ("the trace has no sched:sched_stat_runtime event of it" if charge is None else
               f"{charge.uncharged} of its activations carry no sched_stat_runtime event")
        raise TraceError(f"{th.comm} (pid {th.pid}): no kernel charge to use: {why}; "
                         "record with sched:sched_stat_runtime, or use --exec switch")
    return act.exec_ns, "switch"
