"""From trace events to the activations of IRQ threads.

Conventions (also in docs/analysis.md):

IRQ thread
    A task whose comm is ``irq/<N>-<action>`` (``irq/<N>-s-<action>`` for a forced
    threading secondary thread). comm is cut at 15 characters, so the action is matched
    as a prefix of the full handler names that irq_handler_entry carries for IRQ N. The
    rule is :mod:`irqres.irqname`'s (the same as irqresd's).

Activation
    From the wake-up request of the sleeping thread (``sched_waking`` of its pid, or
    ``sched_wakeup`` when waking was not recorded) to the ``sched_switch`` that takes it
    off the CPU waiting for work: ``prev_state`` S (TASK_INTERRUPTIBLE, where an IRQ
    thread waits for its next interrupt) or I (TASK_IDLE), i.e. ``prev_state & 0x81``.
    A thread switched out runnable (0 = R, or the TASK_REPORT_MAX bit, 0x100 on current
    kernels, for a preempted task) or blocked otherwise (D: on PREEMPT_RT a sleeping
    spinlock inside the handler shows as D) stays in its activation: the time off the
    CPU counts in its response time, not in its execution time. A wake-up traced just
    before the switch-out to sleep did not
    stop that sleep (try_to_wake_up emits sched_waking before it waits for the task to
    leave its CPU): it starts the next activation.

Execution time
    The sum of the on-CPU intervals of the activation, each from a ``sched_switch`` to
    the thread to the next ``sched_switch`` away from it, whatever the CPU: preemption
    splits an activation into several intervals, migration moves them between CPUs.

Hard IRQ requests
    ``irq_handler_entry`` events of IRQ N for the thread's action taken on the hard IRQ
    path. On PREEMPT_RT the primary handler runs in hard IRQ context and wakes the
    thread; an entry traced while the thread itself is the current task is its threaded
    handler and not a request, unless its ``irq_handler_exit`` returned IRQ_WAKE_THREAD
    (2), which only the primary handler returns. A request belongs to the activation
    whose window (previous sleep, this sleep] holds its handler's exit (the entry when
    no exit was traced): requests that arrive while the thread is already awake merge
    into the running activation and are counted there.

Edges and lost events
    The activation in progress when the trace starts and the one in progress when it
    ends are partial and dropped. An activation is discarded, never stretched, when a
    lost-events gap on any CPU overlaps the time from the previous sleep to its own
    sleep, and when its events are inconsistent (a switch-in without a switch-out, no
    wake-up before the first switch-in, two wake-ups before it: a sleeping thread is
    woken once, so two mean a run and a sleep are missing). Inter-arrival times are
    only taken between two consecutive kept activations, and between two hard IRQ
    requests with no gap between them.

Every time is an int64 number of nanoseconds.
"""

from __future__ import annotations

import fnmatch
import logging
from dataclasses import dataclass, field

import numpy as np

from .. import irqname
from ..errors import SelectionError, TraceError
from ..trace.reader import Trace

log = logging.getLogger(__name__)

#: irq_handler_exit's ret for IRQ_WAKE_THREAD: only a primary (hard IRQ) handler returns it
IRQ_WAKE_THREAD = 2
#: prev_state bits of a thread waiting for work: S (TASK_INTERRUPTIBLE) and I (TASK_IDLE).
#: R (0), R+ (TASK_REPORT_MAX) and D (blocked on a lock or I/O) stay in the activation.
SLEEP_STATE_MASK = 0x81

_OUT_RUN, _OUT_SLEEP, _WAKE, _IN = 0, 1, 2, 3
# order of events with equal timestamps: a switch-out, then a wake-up, then a switch-in
_TIE_RANK = np.array([0, 0, 1, 2], dtype=np.int8)


@dataclass
class Gaps:
    """Intervals where a CPU lost events, as (start, end] with start -1 for 'since ever'."""

    start: np.ndarray
    end: np.ndarray
    count: np.ndarray
    _prefix_max_end: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def from_trace(cls, trace: Trace) -> Gaps:
        # runs of records dropped for impossible timestamps leave gaps of unknown size too
        jumps = np.array([(j.after_ns, j.before_ns) for j in trace.time_jumps],
                         dtype=np.int64).reshape(-1, 2)
        start = np.concatenate([np.asarray(trace.lost["prev_ts"], dtype=np.int64), jumps[:, 0]])
        start[start < 0] = np.iinfo(np.int64).min
        end = np.concatenate([np.asarray(trace.lost["ts"], dtype=np.int64), jumps[:, 1]])
        count = np.concatenate([np.asarray(trace.lost["count"], dtype=np.int64),
                                np.full(len(jumps), -1, dtype=np.int64)])
        order = np.argsort(start, kind="stable")
        return cls(start[order], end[order], count[order])

    def __len__(self) -> int:
        return len(self.start)

    def overlaps(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """For each interval (a, b]: does any gap (start, end] overlap it?"""
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        if len(self.start) == 0:
            return np.zeros(len(a), dtype=bool)
        if self._prefix_max_end is None:
            self._prefix_max_end = np.maximum.accumulate(self.end)
        # gaps starting before b; overlap iff the latest end among them is after a
        n = np.searchsorted(self.start, b, side="left")
        out = np.zeros(len(a), dtype=bool)
        has = n > 0
        out[has] = self._prefix_max_end[n[has] - 1] > a[has]
        return out

    def total_lost(self) -> int:
        """Events lost, counting unknown amounts (-1) as one."""
        return int(np.where(self.count < 0, 1, self.count).sum())


@dataclass
class IrqThread:
    """A thread found in a trace: an IRQ thread, or (``irq`` None) any other task, such
    as a real-time application thread, analysed the same way."""

    pid: int
    comm: str
    irq: int | None     # None: not an IRQ thread
    action: str         # the (possibly truncated) action part of comm ("" for a task)
    secondary: bool     # irq/N-s-action
    names: list[str]    # the full handler names of IRQ N that match the action

    @property
    def is_irq(self) -> bool:
        return self.irq is not None


@dataclass
class ThreadActivations:
    """The activations of one IRQ thread and its hard IRQ requests.

    Every array is int64 nanoseconds (``irqs`` is a count).
    """

    thread: IrqThread
    start_ns: np.ndarray        # wake-up request
    first_run_ns: np.ndarray    # first switch-in
    end_ns: np.ndarray          # switch-out to sleep
    exec_ns: np.ndarray         # sum of on-CPU intervals
    irqs: np.ndarray            # hard IRQ requests served by the activation
    migrated: np.ndarray        # bool: ran on more than one CPU
    seq: np.ndarray             # number among all activations, kept or not: consecutive
                                # numbers are consecutive activations
    interarrival_ns: np.ndarray  # between consecutive kept activations
    irq_ts_ns: np.ndarray       # hard IRQ request times (irq_handler_entry)
    irq_interarrival_ns: np.ndarray
    busy_ns: int                # all on-CPU time seen, kept activations or not
    span_ns: int                # length of the trace
    dropped_edge: int = 0
    dropped_lost: int = 0
    dropped_inconsistent: int = 0

    @property
    def count(self) -> int:
        return len(self.start_ns)

    @property
    def response_ns(self) -> np.ndarray:
        """Wake-up request to sleep."""
        return self.end_ns - self.start_ns

    @property
    def latency_ns(self) -> np.ndarray:
        """Wake-up request to first switch-in."""
        return self.first_run_ns - self.start_ns

    @property
    def merged_irqs(self) -> int:
        """Hard IRQ requests that arrived while the thread was already awake."""
        return int(np.maximum(self.irqs - 1, 0).sum())

    def holding(self, ts: np.ndarray) -> np.ndarray:
        """Per time in ``ts``, the index of the kept activation whose [wake-up request,
        switch-out to sleep] holds it, or -1."""
        k = np.searchsorted(self.start_ns, ts, side="right") - 1
        ok = k >= 0
        ok[ok] = ts[ok] <= self.end_ns[k[ok]]
        return np.where(ok, k, -1)


def _names_by_irq(trace: Trace) -> dict[int, list[str]]:
    """irq -> its distinct handler names, in order of appearance."""
    out: dict[int, list[str]] = {}
    for irq, name in trace.irq_names:
        names = out.setdefault(irq, [])
        if name not in names:
            names.append(name)
    return out


def find_irq_threads(trace: Trace, pattern: str | None = None) -> list[IrqThread]:
    """The IRQ threads of ``trace``, optionally those whose comm or IRQ matches ``pattern``.

    ``pattern`` is an fnmatch glob on the comm (``irq/11-*``, ``*eth0*``) or an IRQ number.
    """
    names_by_irq = _names_by_irq(trace)
    out = []
    for pid, (irq, comm) in sorted(trace.irq_threads().items()):
        if pattern is not None and not _matches(pattern, comm, irq):
            continue
        secondary, names = irqname.own_actions(comm, names_by_irq.get(irq, []))
        action = comm.split("-", 1)[1][2 * secondary:]
        out.append(IrqThread(pid, comm, irq, action, secondary, names))
    return out


def _matches(pattern: str, comm: str, irq: int) -> bool:
    if pattern.isdigit():
        return int(pattern) == irq
    return fnmatch.fnmatchcase(comm, pattern) or fnmatch.fnmatchcase(comm, f"*{pattern}*")


def task_matches(pattern: str, comm: str, pid: int) -> bool:
    """``--task`` matching: a pid (digits), else an fnmatch glob on comm (``rtapp*``),
    else a substring of comm."""
    if pattern.isdigit():
        return int(pattern) == pid
    return fnmatch.fnmatchcase(comm, pattern) or pattern in comm


def find_tasks(trace: Trace, pattern: str) -> list[IrqThread]:
    """Every task of ``trace`` (pid > 0) whose pid or comm matches ``pattern``
    (:func:`task_matches`); an IRQ thread among them comes with its IRQ."""
    irq_threads = {t.pid: t for t in find_irq_threads(trace)}
    last: dict[int, str] = {}
    for pid, comm in trace.comms:
        if pid > 0:
            last[pid] = comm
    out = []
    for pid in sorted(last):
        if any(task_matches(pattern, c, pid) for c in trace.names_of(pid)):
            out.append(irq_threads.get(pid) or IrqThread(pid, last[pid], None, "", False, []))
    return out


def select_threads(trace: Trace, pattern: str | None = None,
                   tasks: list[str] | tuple[str, ...] = ()) -> list[IrqThread]:
    """The threads to analyse: the IRQ threads (matching ``pattern``) when no ``tasks``
    are given or a ``pattern`` is; plus every task matching one of ``tasks``.

    Raises
    ------
    TraceError
        When nothing matches, or a task pattern matches no task of the trace.
    """
    chosen: dict[int, IrqThread] = {}
    if pattern is not None or not tasks:
        for th in find_irq_threads(trace, pattern):
            chosen[th.pid] = th
        if not chosen and not tasks:
            seen = sorted({comm for _, (_, comm) in trace.irq_threads().items()})
            if pattern is not None and seen:
                raise TraceError(f"{trace.path}: no IRQ thread matches {pattern!r}; the "
                                 f"trace has {', '.join(seen)}")
            raise TraceError(
                f"{trace.path}: no IRQ thread (irq/<N>-<action>) appears in sched_switch "
                "or sched_waking events; on a PREEMPT_RT kernel (or with threadirqs) "
                "record while the device is busy, or pick any thread with --task")
    for pat in tasks:
        found = find_tasks(trace, pat)
        if not found:
            raise TraceError(f"{trace.path}: no task matches {pat!r} (a pid, a glob on "
                             "comm or a part of it) in its sched_switch or wake-up events")
        for th in found:
            chosen.setdefault(th.pid, th)
    if trace.selected_pids is not None:
        _check_selection(trace, trace.selected_pids, chosen, pattern, tasks)
    return [chosen[pid] for pid in sorted(chosen)]


def _check_selection(trace: Trace, selected: frozenset[int], chosen: dict[int, IrqThread],
                     pattern: str | None, tasks: tuple[str, ...] | list[str]) -> None:
    """A trace read with a selection holds the rows of a chosen thread from its first
    selected name on (the reader matches as this module does). A thread that took a
    selected name late (exec, prctl) is analysed from then on; one that dropped it again
    would be kept or not depending on how the read was split: read the trace whole."""
    irq_threads = pattern is not None or not tasks

    def kept(pid: int, comm: str) -> bool:
        name = irqname.parse(comm)
        if irq_threads and name and (pattern is None or _matches(pattern, comm, name.irq)):
            return True
        return any(task_matches(t, comm, pid) for t in tasks)

    for pid in sorted(chosen):
        names = trace.names_of(pid)
        verdicts = [kept(pid, c) for c in names]
        late_drop = True in verdicts and not all(verdicts[verdicts.index(True):])
        if pid not in selected or late_drop:
            raise SelectionError(f"{trace.path}: pid {pid} ({', '.join(names)}) was not "
                                 "read whole with the selection; read the trace whole")


def _hard_requests(trace: Trace, thread: IrqThread) -> tuple[np.ndarray, np.ndarray]:
    """Entry and exit (or entry) timestamps of the thread's hard IRQ requests, sorted
    (none for a thread that is not an IRQ thread)."""
    if thread.irq is None:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    entry = trace.table("irq_handler_entry")
    exit_ = trace.table("irq_handler_exit")
    name_idx = [i for i, (irq, name) in enumerate(trace.irq_names)
                if irq == thread.irq and name in thread.names]
    sel = entry["irq"] == thread.irq
    if name_idx:
        sel &= np.isin(entry["name_idx"], np.asarray(name_idx, dtype=np.int32))
    idx = np.flatnonzero(sel)
    ets = entry["ts"][idx]
    ecpu = entry["cpu"][idx]
    xts = ets.copy()
    xret = np.full(len(idx), -1, dtype=np.int32)
    # hard IRQ handlers do not nest: the next exit on the entry's CPU is its own
    for cpu in np.unique(ecpu):
        on = np.flatnonzero(ecpu == cpu)
        xsel = np.flatnonzero(exit_["cpu"] == cpu)
        if len(xsel) == 0:
            continue
        x_ts = exit_["ts"][xsel]
        k = np.searchsorted(x_ts, ets[on], side="left")
        ok = k < len(xsel)
        k_ok = xsel[k[ok]]
        same = exit_["irq"][k_ok] == thread.irq
        tgt = on[ok][same]
        xts[tgt] = exit_["ts"][k_ok[same]]
        xret[tgt] = exit_["ret"][k_ok[same]]
    threaded = (entry["current"][idx] == thread.pid) & (xret != IRQ_WAKE_THREAD)
    keep = ~threaded
    return ets[keep], xts[keep]


def _last_switch_before(k: np.ndarray) -> np.ndarray:
    """For each event, the kind of the last switch event before it (-1: none)."""
    pos = np.where(k != _WAKE, np.arange(len(k)), -1)
    prev = np.maximum.accumulate(np.concatenate([[-1], pos[:-1]]))
    return np.where(prev >= 0, k[np.maximum(prev, 0)], -1)


def _valid_diffs(ts: np.ndarray, gaps: Gaps) -> np.ndarray:
    if len(ts) < 2:
        return np.empty(0, dtype=np.int64)
    ok = ~gaps.overlaps(ts[:-1], ts[1:])
    return np.diff(ts)[ok]


def _thread_events(trace: Trace, pid: int, switch_sel: tuple[np.ndarray, np.ndarray] | None,
                   wake_sel: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Times, kinds (_WAKE, _IN, _OUT_*) and CPUs of the thread's events, in order."""
    sw = trace.table("sched_switch")
    wk = trace.wakeups()
    if switch_sel is None:
        in_rows = np.flatnonzero(sw["next_pid"] == pid)
        out_rows = np.flatnonzero(sw["prev_pid"] == pid)
    else:
        in_rows, out_rows = switch_sel
    w_rows = np.flatnonzero(wk["pid"] == pid) if wake_sel is None else wake_sel

    ts = np.concatenate([wk["ts"][w_rows], sw["ts"][in_rows], sw["ts"][out_rows]])
    sleeping = (sw["prev_state"][out_rows] & SLEEP_STATE_MASK) != 0
    kind = np.concatenate([
        np.full(len(w_rows), _WAKE, dtype=np.int8),
        np.full(len(in_rows), _IN, dtype=np.int8),
        np.where(sleeping, _OUT_SLEEP, _OUT_RUN).astype(np.int8),
    ])
    cpu = np.concatenate([np.full(len(w_rows), -1, dtype=np.int32), sw["cpu"][in_rows],
                          sw["cpu"][out_rows]])
    order = np.lexsort((_TIE_RANK[kind], ts))
    # try_to_wake_up emits sched_waking before it waits for the task to leave its CPU, so
    # the request that starts the next activation can be traced just before the
    # switch-out to sleep; a wake-up that did not stop the sleep belongs after it. Only
    # while the thread is on a CPU, though: a wake-up whose last switch event is a
    # switch-out woke a thread that was off the CPU, and a sleep right after it means a
    # switch-in is missing (that activation is inconsistent), not an early wake-up.
    k = kind[order]
    early = np.flatnonzero((k[:-1] == _WAKE) & (k[1:] == _OUT_SLEEP))
    if len(early):
        last_switch = _last_switch_before(k)
        early = early[last_switch[early] == _IN]
    order[early], order[early + 1] = order[early + 1], order[early].copy()
    return ts[order], kind[order], cpu[order]


def _bad_segments(k: np.ndarray, s_idx: np.ndarray, s_in: np.ndarray, seg: np.ndarray,
                  nsleep: int) -> np.ndarray:
    """Per segment, whether its events are inconsistent (see the module docstring)."""
    bad = np.zeros(nsleep + 1, dtype=bool)
    # switches must alternate in/out; a violation spoils the segment of the later one
    if len(s_idx) > 1:
        viol = np.flatnonzero(s_in[1:] == s_in[:-1]) + 1
        bad[seg[s_idx[viol]]] = True
    # a sleeping thread is woken once (try_to_wake_up traces only a wake-up that finds
    # it asleep), so a second wake-up before the first switch-in means a run and a sleep
    # are missing and the segment holds two activations
    woke_asleep = (k == _WAKE) & (_last_switch_before(k) == _OUT_SLEEP)
    wseg, wcount = np.unique(seg[woke_asleep], return_counts=True)
    bad[wseg[wcount > 1]] = True
    return bad


def _first_in_and_migrated(k: np.ndarray, c: np.ndarray, seg: np.ndarray,
                           nsleep: int) -> tuple[np.ndarray, np.ndarray]:
    """Per segment, the index of its first switch-in (-1: none) and whether it ran on
    more than one CPU (two consecutive switch-ins on different CPUs)."""
    in_idx = np.flatnonzero(k == _IN)
    first_in = np.full(nsleep + 1, -1, dtype=np.int64)
    useg, upos = np.unique(seg[in_idx], return_index=True)
    first_in[useg] = in_idx[upos]
    migrated_seg = np.zeros(nsleep + 1, dtype=bool)
    if len(in_idx) > 1:
        mv = (seg[in_idx[1:]] == seg[in_idx[:-1]]) & (c[in_idx[1:]] != c[in_idx[:-1]])
        migrated_seg[seg[in_idx[1:]][mv]] = True
    return first_in, migrated_seg


def thread_activations(trace: Trace, thread: IrqThread, *, gaps: Gaps | None = None,
                       switch_sel: tuple[np.ndarray, np.ndarray] | None = None,
                       wake_sel: np.ndarray | None = None) -> ThreadActivations:
    """The activations of one IRQ thread. See the module docstring for the rules.

    ``switch_sel`` (rows of sched_switch where the thread is next / prev) and
    ``wake_sel`` (rows of the wake-up table of the thread) may be given by a caller that
    selected them for many threads at once.
    """
    gaps = gaps if gaps is not None else Gaps.from_trace(trace)
    t, k, c = _thread_events(trace, thread.pid, switch_sel, wake_sel)
    n = len(t)

    # on-CPU intervals: a switch-out right after a switch-in (switch events only)
    s_idx = np.flatnonzero(k != _WAKE)
    s_in = k[s_idx] == _IN
    on_dur = np.zeros(n, dtype=np.int64)
    pair = np.flatnonzero(~s_in[1:] & s_in[:-1]) + 1 if len(s_idx) > 1 else np.empty(0, int)
    on_dur[s_idx[pair]] = t[s_idx[pair]] - t[s_idx[pair - 1]]
    busy = int(on_dur.sum())

    is_sleep = k == _OUT_SLEEP
    sleep_idx = np.flatnonzero(is_sleep)
    nsleep = len(sleep_idx)
    seg = np.cumsum(is_sleep) - is_sleep  # the segment j ends with sleep j (0-based)
    span = int(trace.last_ts - trace.first_ts)
    irq_ts, irq_x = _hard_requests(trace, thread)
    empty = np.empty(0, dtype=np.int64)
    # partial activations: the one holding the first sleep, the one after the last
    edge = int(n > 0 and (nsleep == 0 or sleep_idx[0] > 0)) + int(
        nsleep > 0 and sleep_idx[-1] < n - 1)
    if nsleep < 2:
        return ThreadActivations(
            thread, empty, empty, empty, empty, empty, np.empty(0, bool), empty, empty, irq_ts,
            _valid_diffs(irq_ts, gaps), busy, span, dropped_edge=edge)

    # candidate activations: segments 1..nsleep-1 (closed, with a sleep before them)
    j = np.arange(1, nsleep)
    first = sleep_idx[j - 1] + 1
    last = sleep_idx[j]
    prev_sleep = t[sleep_idx[j - 1]]
    end = t[last]
    # the first event of an activation must be its wake-up request, and the only one
    inconsistent = _bad_segments(k, s_idx, s_in, seg, nsleep)[j] | (k[first] != _WAKE)
    lost = gaps.overlaps(prev_sleep, end) & ~inconsistent
    keep = ~inconsistent & ~lost

    cs = np.concatenate([[0], np.cumsum(on_dur)])
    exec_ns = cs[last + 1] - cs[first]
    first_in, migrated_seg = _first_in_and_migrated(k, c, seg, nsleep)

    # hard IRQ requests served: exit (or entry) time in (previous sleep, sleep]
    irq_sorted = np.sort(irq_x)
    irqs = (np.searchsorted(irq_sorted, end, side="right")
            - np.searchsorted(irq_sorted, prev_sleep, side="right")).astype(np.int64)

    kj = j[keep]
    start = t[first][keep]
    consecutive = np.diff(kj) == 1
    inter = np.diff(start)[consecutive]
    return ThreadActivations(
        thread,
        start_ns=start,
        first_run_ns=t[first_in[kj]],
        end_ns=end[keep],
        exec_ns=exec_ns[keep],
        irqs=irqs[keep],
        migrated=migrated_seg[kj],
        seq=kj.astype(np.int64),
        interarrival_ns=inter.astype(np.int64),
        irq_ts_ns=irq_ts,
        irq_interarrival_ns=_valid_diffs(irq_ts, gaps),
        busy_ns=busy,
        span_ns=span,
        dropped_edge=edge,
        dropped_lost=int(lost.sum()),
        dropped_inconsistent=int(inconsistent.sum()),
    )


def activations(trace: Trace, pattern: str | None = None,
                tasks: list[str] | tuple[str, ...] = ()) -> list[ThreadActivations]:
    """The activations of the threads :func:`select_threads` picks: every IRQ thread of
    ``trace`` (matching ``pattern``), and the tasks matching ``tasks``.

    Raises
    ------
    TraceError
        When no thread (or none matching a pattern) appears in the trace.
    """
    threads = select_threads(trace, pattern, tasks)
    gaps = Gaps.from_trace(trace)
    sw = trace.table("sched_switch")
    wk = trace.wakeups()
    pids = np.array([t.pid for t in threads], dtype=np.int32)
    # select the rows of all threads in one pass, then split them per thread
    in_all = np.flatnonzero(np.isin(sw["next_pid"], pids))
    out_all = np.flatnonzero(np.isin(sw["prev_pid"], pids))
    w_all = np.flatnonzero(np.isin(wk["pid"], pids))
    result = []
    for th in threads:
        sel = (in_all[sw["next_pid"][in_all] == th.pid], out_all[sw["prev_pid"][out_all] == th.pid])
        result.append(thread_activations(trace, th, gaps=gaps, switch_sel=sel,
                                         wake_sel=w_all[wk["pid"][w_all] == th.pid]))
    return result


@dataclass
class LineRequests:
    """The hard IRQ requests of one IRQ line (every action of a shared line is called for
    every interrupt, so one action's entries count the line's interrupts)."""

    irq: int
    names: list[str]
    ts_ns: np.ndarray
    interarrival_ns: np.ndarray
    span_ns: int

    @property
    def rate_hz(self) -> float:
        return len(self.ts_ns) * 1e9 / self.span_ns if self.span_ns > 0 else 0.0


def line_requests(trace: Trace, irqs: list[int] | None = None) -> list[LineRequests]:
    """Hard IRQ requests per IRQ line (threaded-handler entries excluded as for threads)."""
    gaps = Gaps.from_trace(trace)
    threads_by_irq: dict[int, list[IrqThread]] = {}
    for th in find_irq_threads(trace):
        if th.irq is not None:      # always, for an IRQ thread
            threads_by_irq.setdefault(th.irq, []).append(th)
    names_by_irq = _names_by_irq(trace)
    out = []
    entry = trace.table("irq_handler_entry")
    span = int(trace.last_ts - trace.first_ts)
    for irq in sorted(names_by_irq if irqs is None else irqs):
        names = names_by_irq.get(irq, [])
        if not names:
            continue
        # count one action: the most frequent one on this line
        idx = [i for i, (q, _) in enumerate(trace.irq_names) if q == irq]
        counts = {i: int(np.count_nonzero(entry["name_idx"] == i)) for i in idx}
        best = max(counts, key=lambda i: counts[i])
        pids = [th.pid for th in threads_by_irq.get(irq, [])]
        name = trace.irq_names[best][1]
        th = IrqThread(pids[0] if pids else -1, "", irq, name, False, [name])
        ts, _ = _hard_requests(trace, th)
        out.append(LineRequests(irq, names, ts, _valid_diffs(ts, gaps), span))
    return out


def joined_arrivals(act: ThreadActivations) -> np.ndarray:
    """Arrival times of the kept activations with the holes of dropped ones closed.

    Runs of consecutive kept activations keep their real spacing; each run after a
    dropped activation is shifted to start one median inter-arrival after the previous
    run, so a hole left by lost events never becomes one long inter-arrival time.
    """
    start = act.start_ns
    if len(start) < 2:
        return start.copy()
    brk = np.flatnonzero(np.diff(act.seq) != 1)
    if len(brk) == 0:
        return start.copy()
    gaps = np.diff(start)
    fill = int(np.median(act.interarrival_ns)) if len(act.interarrival_ns) else 0
    gaps[brk] = fill
    return np.concatenate([[start[0]], start[0] + np.cumsum(gaps)]).astype(np.int64)
