"""A device's work wherever it ran: its IRQ thread, its NAPI threads, and the soft IRQ
time (NET_RX, BLOCK) that ran in ksoftirqd or in other tasks.

Conventions (also in docs/analysis.md, "The device's whole work"):

Soft IRQ run
    An ``irq:softirq_entry`` of a vector followed on the same CPU by the
    ``irq:softirq_exit`` of that vector (soft IRQs do not nest on a CPU). It ran in the
    task ``current`` of the events: ksoftirqd/N, or (PREEMPT_RT) whichever task re-enabled
    bottom halves after raising it, such as the IRQ thread itself. Its time is the time
    that task spent on the CPU between the two events (a preemption in between is not
    the soft IRQ's) where the trace holds that task's switches, else the whole interval.
    A run whose entry or exit is missing, or that overlaps a lost-events gap, is dropped.

Attribution
    A run inside an IRQ thread or a NAPI thread (``napi/<dev>-<id>``) is already part of
    that thread's own time. A NET_RX or BLOCK run in any other task (ksoftirqd, an
    application) is the device's whose thread ran last on that CPU before the run began,
    among the threads that run that vector themselves (the IRQ threads seen running it,
    and for NET_RX every NAPI thread): the softirq a thread's poll leaves pending is
    continued there. A run with no such thread before it on its CPU is unattributed.

Device
    An IRQ thread with the NAPI threads whose device name (``napi/<dev>-<id>``) is one
    of its handler names or the start of one (``eth0`` of ``eth0-TxRx-0``); a NAPI
    thread that matches several IRQ threads goes with the first (lowest pid).

Every time is an int64 number of nanoseconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..trace.reader import Trace
from .activations import Gaps, IrqThread, ThreadActivations

#: Soft IRQ vectors (include/linux/interrupt.h)
SOFTIRQ_NAMES = ("HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET",
                 "SCHED", "HRTIMER", "RCU")
NET_RX = 3
BLOCK = 4
#: The vectors that carry a device's work on
DEVICE_VECS = (NET_RX, BLOCK)

_NAPI_COMM = re.compile(r"^napi/(.+?)(?:-(\d*))?$")
_KSOFTIRQD = re.compile(r"^ksoftirqd/\d+$")


@dataclass
class Runs:
    """Paired soft IRQ runs of the device vectors."""

    cpu: np.ndarray      # int32
    current: np.ndarray  # int32: the task that ran it
    vec: np.ndarray      # int32
    start_ns: np.ndarray
    end_ns: np.ndarray
    ran_ns: np.ndarray   # time its task was on the CPU within [start, end]
    unpaired: int = 0    # entries or exits without their other half
    dropped_lost: int = 0


@dataclass
class Host:
    """A task (not one of the device's threads) that ran some of the device's work."""

    pid: int
    comm: str
    ns: int
    runs: int

    def to_dict(self) -> dict:
        return {"pid": self.pid, "comm": self.comm, "ns": self.ns, "runs": self.runs}


@dataclass
class DeviceWork:
    """Where one IRQ thread's device did its work over the trace."""

    thread_ns: int                    # the IRQ thread's own on-CPU time
    softirq_in_thread_ns: int         # of which soft IRQ runs (NET_RX, BLOCK)
    napi: list[Host] = field(default_factory=list)   # its NAPI threads' on-CPU time
    ksoftirqd_ns: int = 0
    other_ns: int = 0
    hosts: list[Host] = field(default_factory=list)  # ksoftirqd and others, largest first
    # work outside the IRQ thread, piece by piece (NAPI runs, soft IRQ runs elsewhere)
    piece_ts: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    piece_ns: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))

    @property
    def napi_ns(self) -> int:
        return sum(h.ns for h in self.napi)

    @property
    def leak_ns(self) -> int:
        """Work outside the device's own threads: no reservation of them bounds it."""
        return self.ksoftirqd_ns + self.other_ns

    @property
    def total_ns(self) -> int:
        return self.thread_ns + self.napi_ns + self.leak_ns

    def share(self, ns: int) -> float:
        return ns / self.total_ns if self.total_ns else 0.0

    @property
    def leak_share(self) -> float:
        return self.share(self.leak_ns)

    def to_dict(self) -> dict:
        return {
            "total_ns": self.total_ns,
            "irq_thread_ns": self.thread_ns,
            "softirq_in_irq_thread_ns": self.softirq_in_thread_ns,
            "napi_ns": self.napi_ns,
            "napi": [h.to_dict() for h in self.napi],
            "ksoftirqd_ns": self.ksoftirqd_ns,
            "other_tasks_ns": self.other_ns,
            "hosts": [h.to_dict() for h in self.hosts],
            "outside_ns": self.leak_ns,
            "outside_share": self.leak_share,
            "irq_thread_share": self.share(self.thread_ns),
            "napi_share": self.share(self.napi_ns),
            "ksoftirqd_share": self.share(self.ksoftirqd_ns),
            "other_tasks_share": self.share(self.other_ns),
        }


def has_softirq_events(trace: Trace) -> bool:
    """Whether the trace recorded soft IRQ runs (irq:softirq_entry and _exit)."""
    return "softirq_entry" in trace.events and "softirq_exit" in trace.events


class _OnCpu:
    """The on-CPU intervals of tasks on one CPU, from sched_switch, as prefix sums: the
    time a task ran on that CPU up to any instant."""

    def __init__(self, trace: Trace):
        sw = trace.table("sched_switch")
        self._sw = sw
        self._known = trace.selected_pids
        self._cache: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray] | None] = {}
        self._first, self._last = trace.first_ts, trace.last_ts

    def intervals(self, pid: int, cpu: int | None) -> tuple[np.ndarray, np.ndarray] | None:
        """(start, end) of ``pid``'s runs (on ``cpu``, or any CPU for None); None when the
        trace does not hold its switches."""
        if self._known is not None and pid not in self._known:
            return None
        sw = self._sw
        here = np.ones(len(sw["ts"]), dtype=bool) if cpu is None else sw["cpu"] == cpu
        ins = np.flatnonzero(here & (sw["next_pid"] == pid))
        outs = np.flatnonzero(here & (sw["prev_pid"] == pid))
        if len(ins) == 0 and len(outs) == 0:
            return None
        idx = np.concatenate([ins, outs])
        kind = np.concatenate([np.ones(len(ins), np.int8), np.zeros(len(outs), np.int8)])
        order = np.lexsort((kind, idx))   # rows are in time order already
        idx, kind = idx[order], kind[order]
        ts = sw["ts"][idx]
        # an interval is a switch-in followed by a switch-out of the same task; a task on
        # the CPU when the trace starts (or ends) ran from its start (to its end)
        if kind[0] == 0:
            kind = np.concatenate([[1], kind])
            ts = np.concatenate([[self._first], ts])
        if kind[-1] == 1:
            kind = np.concatenate([kind, [0]])
            ts = np.concatenate([ts, [self._last]])
        pair = np.flatnonzero((kind[:-1] == 1) & (kind[1:] == 0))
        return ts[pair], ts[pair + 1]

    def ran(self, pid: int, cpu: int, a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
        """Time ``pid`` spent on ``cpu`` within each [a, b]; None when unknown."""
        key = (pid, cpu)
        if key not in self._cache:
            iv = self.intervals(pid, cpu)
            if iv is None:
                self._cache[key] = None
            else:
                s, e = iv
                self._cache[key] = (s, e, np.concatenate([[0], np.cumsum(e - s)]))
        got = self._cache[key]
        if got is None:
            return None
        s, e, cum = got

        def upto(t: np.ndarray) -> np.ndarray:
            k = np.searchsorted(s, t, side="right") - 1
            kk = np.maximum(k, 0)
            part = np.clip(t - s[kk], 0, e[kk] - s[kk]) if len(s) else np.zeros(len(t))
            return np.where(k >= 0, cum[kk] + part, 0).astype(np.int64)

        return upto(b) - upto(a)


def softirq_runs(trace: Trace, gaps: Gaps | None = None,
                 vecs: tuple[int, ...] = DEVICE_VECS) -> Runs:
    """The runs of soft IRQ vectors ``vecs`` in ``trace`` (see the module's conventions)."""
    en, ex = trace.table("softirq_entry"), trace.table("softirq_exit")
    gaps = gaps or Gaps.from_trace(trace)
    cpu = np.concatenate([en["cpu"], ex["cpu"]])
    ts = np.concatenate([en["ts"], ex["ts"]])
    vec = np.concatenate([en["vec"], ex["vec"]])
    cur = np.concatenate([en["current"], ex["current"]])
    is_exit = np.concatenate([np.zeros(len(en["ts"]), bool), np.ones(len(ex["ts"]), bool)])
    # per CPU in time order; an entry and its exit at the same instant: entry first
    order = np.lexsort((is_exit, ts, cpu))
    cpu, ts, vec, cur, is_exit = cpu[order], ts[order], vec[order], cur[order], is_exit[order]
    pair = np.flatnonzero(~is_exit[:-1] & is_exit[1:] & (cpu[:-1] == cpu[1:])
                          & (vec[:-1] == vec[1:]) & (cur[:-1] == cur[1:]))
    unpaired = len(ts) - 2 * len(pair)
    keep = pair[np.isin(vec[pair], vecs)]
    a, b = ts[keep], ts[keep + 1]
    lost = gaps.overlaps(a, b)
    keep, a, b = keep[~lost], a[~lost], b[~lost]
    runs = Runs(cpu[keep], cur[keep], vec[keep], a, b, b - a, unpaired, int(lost.sum()))
    on = _OnCpu(trace)
    for p, c in set(zip(runs.current.tolist(), runs.cpu.tolist(), strict=True)):
        if p <= 0:   # the idle task (pid 0 on every CPU): hard IRQ exit, never preempted
            continue
        m = (runs.current == p) & (runs.cpu == c)
        ran = on.ran(p, c, a[m], b[m])
        if ran is not None:
            runs.ran_ns[m] = np.minimum(ran, b[m] - a[m])
    return runs


def napi_threads(trace: Trace) -> dict[int, tuple[str, str]]:
    """pid -> (comm, device name) of every threaded NAPI kthread ``napi/<dev>-<id>``."""
    out: dict[int, tuple[str, str]] = {}
    for pid, comm in trace.comms:
        m = _NAPI_COMM.match(comm)
        if m and pid > 0:
            out[pid] = (comm, m.group(1))
    return out


def _owns(thread: IrqThread, dev: str) -> bool:
    names = thread.names or [thread.action]
    return any(n == dev or n.startswith(dev + "-") for n in names)


def _comm_of(trace: Trace) -> dict[int, str]:
    last: dict[int, str] = {}
    for pid, comm in trace.comms:
        last[pid] = comm
    return last


def _last_runs(trace: Trace, pids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ts, cpu, pid) of every switch-out of ``pids``, in time order."""
    sw = trace.table("sched_switch")
    rows = np.flatnonzero(np.isin(sw["prev_pid"], pids))
    return sw["ts"][rows], sw["cpu"][rows], sw["prev_pid"][rows]


def _attribute(trace: Trace, runs: Runs, outside: np.ndarray, irq_pids: set[int],
               napi: dict[int, tuple[str, str]]) -> np.ndarray:
    """The device thread each run in ``outside`` (mask) goes to: the last candidate thread
    switched out on the run's CPU before it began, -1 when none."""
    owner = np.full(len(runs.start_ns), -1, dtype=np.int64)
    for v in np.unique(runs.vec[outside]).tolist():
        cands = {int(p) for p in runs.current[runs.vec == v].tolist() if int(p) in irq_pids}
        if v == NET_RX:
            cands |= set(napi)
        if not cands:
            continue
        ts, cpu, pid = _last_runs(trace, np.array(sorted(cands), dtype=np.int32))
        for c in np.unique(runs.cpu[outside & (runs.vec == v)]).tolist():
            m = np.flatnonzero(outside & (runs.vec == v) & (runs.cpu == c))
            here = cpu == c
            k = np.searchsorted(ts[here], runs.start_ns[m], side="right") - 1
            owner[m] = np.where(k >= 0, pid[here][np.maximum(k, 0)], -1)
    return owner


def device_work(trace: Trace, threads: list[ThreadActivations],
                gaps: Gaps | None = None) -> dict[int, DeviceWork]:
    """IRQ thread pid -> its device's work over ``trace``, for the IRQ threads among
    ``threads``; empty when the trace has no soft IRQ events."""
    if not has_softirq_events(trace):
        return {}
    irq = [t for t in threads if t.thread.is_irq]
    if not irq:
        return {}
    runs = softirq_runs(trace, gaps)
    irq_pids = set(trace.irq_threads())
    napi = napi_threads(trace)
    # a NAPI thread goes with the first IRQ thread of its device
    group: dict[int, int] = {}
    for pid, (_, dev) in sorted(napi.items()):
        for t in sorted(irq, key=lambda t: t.thread.pid):
            if _owns(t.thread, dev):
                group[pid] = t.thread.pid
                break
    for t in irq:
        group[t.thread.pid] = t.thread.pid
    inside = np.isin(runs.current, list(irq_pids | set(napi)))
    owner = _attribute(trace, runs, ~inside, irq_pids, napi)
    comms = _comm_of(trace)
    on = _OnCpu(trace)
    out = {}
    for t in irq:
        me = t.thread.pid
        own = inside & (runs.current == me)
        w = DeviceWork(thread_ns=int(t.busy_ns), softirq_in_thread_ns=int(runs.ran_ns[own].sum()))
        ts_parts, ns_parts = [], []
        for pid in sorted(p for p, g in group.items() if g == me and p in napi):
            iv = on.intervals(pid, None)
            if iv is None:
                continue
            s, e = iv
            w.napi.append(Host(pid, napi[pid][0], int((e - s).sum()), len(s)))
            ts_parts.append(s)
            ns_parts.append(e - s)
        mine = np.flatnonzero(~inside & np.isin(owner, [p for p, g in group.items() if g == me]))
        hosts: dict[int, Host] = {}
        for i in mine.tolist():
            p = int(runs.current[i])
            h = hosts.setdefault(p, Host(p, comms.get(p, "?"), 0, 0))
            h.ns += int(runs.ran_ns[i])
            h.runs += 1
        for h in hosts.values():
            if _KSOFTIRQD.match(h.comm):
                w.ksoftirqd_ns += h.ns
            else:
                w.other_ns += h.ns
        w.hosts = sorted(hosts.values(), key=lambda h: (-h.ns, h.pid))
        ts_parts.append(runs.start_ns[mine])
        ns_parts.append(runs.ran_ns[mine])
        ts_all = np.concatenate(ts_parts).astype(np.int64)
        ns_all = np.concatenate(ns_parts).astype(np.int64)
        order = np.argsort(ts_all, kind="stable")
        w.piece_ts, w.piece_ns = ts_all[order], ns_all[order]
        out[me] = w
    return out


def work_per_activation(act: ThreadActivations, work: DeviceWork) -> np.ndarray:
    """The device's work outside the IRQ thread that follows each kept activation: the
    pieces that start in it or after it and before the next activation. Pieces after an
    activation whose successor was dropped (lost events, the trace's end) count only
    up to its sleep, since where the next one began is not known."""
    out = np.zeros(act.count, dtype=np.int64)
    if act.count == 0 or len(work.piece_ts) == 0:
        return out
    k = np.searchsorted(act.start_ns, work.piece_ts, side="right") - 1
    ok = k >= 0
    kk = np.maximum(k, 0)
    nxt = np.append(act.start_ns[1:], np.iinfo(np.int64).max)
    consecutive = np.append(np.diff(act.seq) == 1, False)
    ok &= work.piece_ts < nxt[kk]
    ok &= consecutive[kk] | (work.piece_ts <= act.end_ns[kk])
    np.add.at(out, kk[ok], work.piece_ns[ok])
    return out
