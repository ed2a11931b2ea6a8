"""CPUs whose switches out of the idle task are missing from a trace.

Some kernels write no ``sched_switch`` for a switch from the idle task to a task on some
CPUs (seen on the development host, a 6.18 virtual machine: on CPU 1, 11-415 switches
into idle per recording and none out of it; CPU 0 balanced). Every activation that
starts on such a CPU while it idles then has its wake-up and its switch-out but no
switch-in, and is dropped as inconsistent, so a thread can lose most of its activations
with no lost event to show for it. :func:`idle_switch_warning` names the CPUs.
"""

from __future__ import annotations

import numpy as np

from ..trace.reader import Trace
from .activations import ThreadActivations

#: a CPU counts when it has at least this many switches into idle ...
MIN_INTO = 10
#: ... and fewer out of idle than this share of them
OUT_SHARE = 0.1


def idle_switches(trace: Trace) -> dict[int, tuple[int, int]]:
    """Per CPU with a switch: (switches into the idle task, switches out of it)."""
    sw = trace.events["sched_switch"]
    if sw["ts"].size == 0:
        return {}
    cpu = sw["cpu"]
    ncpu = int(cpu.max()) + 1
    into = np.bincount(cpu[sw["next_pid"] == 0], minlength=ncpu)
    out = np.bincount(cpu[sw["prev_pid"] == 0], minlength=ncpu)
    seen = np.bincount(cpu, minlength=ncpu)
    return {c: (int(into[c]), int(out[c])) for c in range(ncpu) if seen[c]}


def idle_switch_gaps(trace: Trace) -> dict[int, tuple[int, int]]:
    """Per CPU whose switches out of idle are missing: (into idle, out of idle)."""
    return {c: (n_in, n_out) for c, (n_in, n_out) in idle_switches(trace).items()
            if n_in >= MIN_INTO and n_out < OUT_SHARE * n_in}


def idle_switch_warning(gaps: dict[int, tuple[int, int]],
                        act: ThreadActivations) -> str | None:
    """One line when ``act`` lost activations as inconsistent in a trace with such CPUs
    (``gaps`` from :func:`idle_switch_gaps`), or None."""
    if not gaps or act.dropped_inconsistent == 0:
        return None
    t = act.thread
    cpus = ", ".join(f"CPU {c} ({n_in} into idle, {n_out} out)"
                     for c, (n_in, n_out) in sorted(gaps.items()))
    return (f"{t.comm} (pid {t.pid}): {act.dropped_inconsistent} activations dropped as "
            f"inconsistent, and this trace has switches into the idle task but almost none "
            f"out of it on {cpus}: the kernel did not write those, so an activation that "
            f"started there on an idle CPU has no switch-in; record with those CPUs kept "
            f"busy: `irqres record --busy-idle` (a SCHED_IDLE task on each, which the "
            f"thread preempts at once)")
