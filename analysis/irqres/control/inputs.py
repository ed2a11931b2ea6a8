"""The controller's live inputs, per thread and per sampling interval.

Where each number comes from (all are cumulative counters; the controller uses the
difference between two samples):

* **jobs processed, N_pro** — for an IRQ thread, the interrupts raised on its IRQ lines:
  the sum over CPUs of the thread's lines in /proc/interrupts (irqresd's ``stats`` reports
  it as ``irq_count``; :func:`irqres.procfs.read_interrupts` reads the file directly when
  the daemon does not). Every interrupt raised is handled by the thread unless it is left
  over (see N_rmn). For a ``task`` target, the times it ran: each run ends either in a voluntary
  sleep (the job is done) or in an involuntary switch (throttled or preempted), so the
  sum of both context-switch counts of /proc/PID/status. (Counting only the voluntary
  ones gives 0 or 1 job per interval to a task that is behind, and T_pro/N_pro then
  jumps between the default job time and the whole interval.)
* **CPU time, T_pro** — ``cpu_time_ns`` of irqresd's ``stats``: the first field of
  /proc/PID/schedstat, the time the thread ran.
* **jobs left over, N_rmn** — work raised but not served in the interval. Each time the
  thread was cut before it finished (an involuntary context switch: the budget ran out
  and SCHED_DEADLINE throttled it, or it was preempted) it leaves about one activation's
  worth of jobs behind. For an IRQ thread N_rmn = cuts * max(interrupts / activations, 1),
  activations being the voluntary switches (an activation ends in a voluntary sleep; all
  the interval's interrupts when it never slept); for a task, whose jobs are its runs,
  N_rmn = cuts. For a NIC add the frames
  the device could not hold: the increase of rx_missed_errors + rx_dropped in
  /sys/class/net/IF/statistics, where the device has those files. (On this kernel a
  throttled SCHED_DEADLINE task shows one involuntary switch each time it is throttled,
  which can be once for several periods' budgets (docs/metrics.md), and
  its schedstat wait time grows by the time it was held back.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, assert_never

from .. import schedattr

# the /proc and /sys readers, here for the control loop; InputError: a counter (a file's,
# or one of irqresd's stats) could not be read or parsed
from ..procfs import NET_DROP_COUNTERS as NET_DROP_COUNTERS
from ..procfs import ProcfsError as InputError
from ..procfs import net_interface as net_interface
from ..procfs import read_interrupts as read_interrupts
from ..procfs import read_net_drops as read_net_drops
from ..targetkind import TargetKind


class Counters(NamedTuple):
    """One thread's cumulative counters at one instant (a tuple: cheap to build at every
    tick for every thread)."""

    pid: int
    kind: TargetKind
    jobs: int               # irq_count (irq) or all context switches (task)
    activations: int        # voluntary switches
    cpu_time_ns: int
    cut: int                # involuntary switches
    drops: int | None       # device drops (NIC only)


class Interval(NamedTuple):
    """What a thread did between two samples."""

    n_pro: int
    t_pro_ns: int
    n_rmn: int


def _jobs(thread: dict, kind: TargetKind, interrupts: dict[int, int] | None) -> int:
    """A thread's jobs so far: its IRQs' interrupts, or a task's (or NAPI kthread's)
    context switches."""
    match kind:
        case TargetKind.IRQ:
            count = thread.get("irq_count")
            if count is None and interrupts is not None:
                count = sum(interrupts.get(int(i), 0) for i in thread.get("irqs") or [])
            if count is None:
                raise KeyError("irq_count")
            return int(count)
        # a NAPI or soft IRQ kthread: one wake-up per poll or per round of soft IRQs
        case TargetKind.TASK | TargetKind.NAPI | TargetKind.SOFTIRQ:
            return int(thread["voluntary_switches"]) + int(thread["involuntary_switches"])
        case _:
            assert_never(kind)


def counters_from_stats(thread: dict, kind: TargetKind | str,
                        interrupts: dict[int, int] | None = None,
                        drops: int | None = None) -> Counters:
    """Counters from one STATS entry of irqresd's ``stats`` reply (docs/protocol.md). A
    thread of an IRQ target with no IRQ is a NAPI kthread (``with_napi``), counted as one."""
    try:
        pid = int(thread["pid"])
        kind = TargetKind(kind)
        if kind is TargetKind.IRQ and thread.get("irqs") == []:
            kind = TargetKind.NAPI
        jobs = _jobs(thread, kind, interrupts)
        return Counters(pid, kind, jobs, int(thread["voluntary_switches"]),
                        int(thread["cpu_time_ns"]), int(thread["involuntary_switches"]), drops)
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"irqresd stats for pid {thread.get('pid', '?')}: missing or bad "
                         f"field {exc}") from exc


def interval(prev: Counters, cur: Counters) -> Interval | None:
    """The difference of two samples of the same thread; None when a counter went back
    (a different thread took the pid), so the caller starts over from ``cur``."""
    d_jobs = cur.jobs - prev.jobs
    d_act = cur.activations - prev.activations
    d_cpu = cur.cpu_time_ns - prev.cpu_time_ns
    d_cut = cur.cut - prev.cut
    d_drop = 0
    if prev.drops is not None and cur.drops is not None:
        d_drop = max(cur.drops - prev.drops, 0)      # a NIC reset zeroes its counters
    if cur.pid != prev.pid or min(d_jobs, d_act, d_cpu, d_cut) < 0:
        return None
    match cur.kind:
        case TargetKind.TASK | TargetKind.NAPI | TargetKind.SOFTIRQ:
            per_cut = 1
        case TargetKind.IRQ:
            per_cut = max(d_jobs // d_act, 1) if d_act else max(d_jobs, 1)
        case _:
            assert_never(cur.kind)
    return Interval(d_jobs, d_cpu, d_cut * per_cut + d_drop)


def per_sample(iv: Interval, sample_ns: int, elapsed_ns: int) -> Interval:
    """``iv`` measured over ``elapsed_ns`` scaled to the nominal sampling interval.

    A sample taken late (a busy machine) covers more time and would look like more work;
    counts and CPU time are scaled by sample/elapsed, rounded to the nearest integer, when
    the two differ by more than 2 %. The per-job time T_pro/N_pro stays (both scale).
    """
    if elapsed_ns <= 0 or abs(elapsed_ns - sample_ns) * 50 <= sample_ns:
        return iv

    def scale(x: int) -> int:
        return (2 * x * sample_ns + elapsed_ns) // (2 * elapsed_ns)

    return Interval(scale(iv.n_pro), scale(iv.t_pro_ns), scale(iv.n_rmn))


SCHED_DEADLINE = schedattr.SCHED_DEADLINE


@dataclass(frozen=True)
class DlParams:
    policy: int
    runtime_ns: int
    deadline_ns: int
    period_ns: int


def read_dl_params(pid: int) -> DlParams:
    """The scheduling parameters in force for ``pid`` (sched_getattr; reads only)."""
    try:
        s = schedattr.get(pid)
    except OSError as exc:
        raise InputError(exc.strerror) from exc
    return DlParams(s.policy, s.runtime_ns, s.deadline_ns, s.period_ns)
