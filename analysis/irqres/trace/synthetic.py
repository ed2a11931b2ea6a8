"""Synthetic traces with known answers, for tests and benchmarks.

:class:`TraceBuilder` collects events as a kernel would emit them and builds a
:class:`~irqres.trace.reader.Trace` with the same columns the native reader fills.
:func:`irq_thread_trace` simulates one PREEMPT_RT IRQ thread on one CPU: hard IRQs at
given times, each bringing a job of a given execution time; the thread wakes when it is
asleep, runs its pending jobs (preempted when told) and sleeps when none is left, so the
activations, their execution times and the merged IRQs are known exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import irqname
from .reader import _COLUMNS, Trace

TASK_RUNNING = 0
TASK_INTERRUPTIBLE = 1
PREEMPTED = 0x100  # TASK_REPORT_MAX on current kernels: R+
IRQ_HANDLED = 1
IRQ_WAKE_THREAD = 2


_PACKET_EVENTS = ("netif_receive_skb", "consume_skb", "skb_copy_datagram_iovec")
_SOCKET_EVENTS = ("sk_data_ready", "sock_recv_length")


def _column(values: np.ndarray, dtype: str) -> np.ndarray:
    """An int64 column as ``dtype``; uint64 columns (skb and socket addresses) keep their
    bits."""
    if dtype == "uint64":
        return np.ascontiguousarray(values).view(np.uint64)
    return values.astype(dtype)


def _signed(addr: int) -> int:
    """A kernel address as int64 (two's complement), until build() views its column as
    uint64."""
    return addr - 2**64 if addr >= 2**63 else addr


@dataclass
class TraceBuilder:
    """Collects events; :meth:`build` sorts them by time into a Trace."""

    ncpus: int = 2
    uname: str = ""  # e.g. "Linux box 6.1.0-50-rt-amd64 x86_64" (Trace.preempt_rt)
    rows: dict[str, list[tuple]] = field(default_factory=lambda: {k: [] for k in _COLUMNS})
    lost: list[tuple[int, int, int, int]] = field(default_factory=list)
    comms: dict[tuple[int, str], None] = field(default_factory=dict)
    irq_names: list[tuple[int, str]] = field(default_factory=list)

    def comm(self, pid: int, name: str) -> None:
        self.comms[(pid, name)] = None

    def switch(self, ts: int, cpu: int, prev_pid: int, prev_state: int, next_pid: int) -> None:
        self.rows["sched_switch"].append((ts, cpu, prev_pid, prev_state, next_pid))

    def waking(self, ts: int, cpu: int, waker: int, pid: int, target_cpu: int = 0,
               flags: int = 0) -> None:
        """A wake-up of ``pid`` by ``waker``; ``flags`` its context (reader.FLAG_*)."""
        self.rows["sched_waking"].append((ts, cpu, waker, pid, target_cpu, flags))
        self.rows["sched_wakeup"].append((ts + 500, target_cpu, waker, pid, target_cpu, flags))

    def irq(self, ts: int, cpu: int, current: int, irq: int, name: str, ret: int,
            duration: int = 1000) -> None:
        if (irq, name) not in self.irq_names:
            self.irq_names.append((irq, name))
        idx = self.irq_names.index((irq, name))
        self.rows["irq_handler_entry"].append((ts, cpu, current, irq, idx))
        self.rows["irq_handler_exit"].append((ts + duration, cpu, current, irq, ret))

    def softirq(self, ts: int, cpu: int, current: int, vec: int, duration: int) -> None:
        """Soft IRQ ``vec`` (3 NET_RX) run by ``current`` on ``cpu`` from ``ts``."""
        self.rows["softirq_entry"].append((ts, cpu, current, vec))
        self.rows["softirq_exit"].append((ts + duration, cpu, current, vec))

    def runtime(self, ts: int, cpu: int, pid: int, runtime: int) -> None:
        """The scheduler charged ``pid`` ``runtime`` ns (sched_stat_runtime)."""
        self.rows["sched_stat_runtime"].append((ts, cpu, pid, runtime))

    def _skb(self, event: str, ts: int, cpu: int, pid: int, skbaddr: int, flags: int) -> None:
        self.rows[event].append((ts, cpu, pid, flags, _signed(skbaddr)))

    def deliver(self, ts: int, cpu: int, pid: int, skbaddr: int, flags: int = 0) -> None:
        """``pid`` (common_pid) hands the skb at ``skbaddr`` to the protocols
        (net:netif_receive_skb); ``flags`` its context (reader.FLAG_*)."""
        self._skb("netif_receive_skb", ts, cpu, pid, skbaddr, flags)

    def consume_skb(self, ts: int, cpu: int, pid: int, skbaddr: int, flags: int = 0) -> None:
        """``pid`` frees the skb at ``skbaddr`` after use (skb:consume_skb)."""
        self._skb("consume_skb", ts, cpu, pid, skbaddr, flags)

    def copy_datagram(self, ts: int, cpu: int, pid: int, skbaddr: int, flags: int = 0) -> None:
        """``pid`` copies the datagram of ``skbaddr`` out (skb:skb_copy_datagram_iovec)."""
        self._skb("skb_copy_datagram_iovec", ts, cpu, pid, skbaddr, flags)

    def data_ready(self, ts: int, cpu: int, pid: int, skaddr: int, flags: int = 0) -> None:
        """``pid`` (common_pid) queues data on the socket at ``skaddr``
        (sock:sk_data_ready); ``flags`` its context (reader.FLAG_*)."""
        self.rows["sk_data_ready"].append((ts, cpu, pid, flags, _signed(skaddr)))

    def recv_length(self, ts: int, cpu: int, pid: int, sk: int, ret: int,
                    flags: int = 0) -> None:
        """``pid`` returns from a recvmsg on the socket at ``sk`` with ``ret``: the bytes
        read, or -errno (sock:sock_recv_length)."""
        self.rows["sock_recv_length"].append((ts, cpu, pid, flags, _signed(sk), ret))

    def _skipped(self, name: str) -> bool:
        """Events only traces that use them record: the soft IRQs, the packets, the
        sockets."""
        if name.startswith("softirq_"):
            return not self.rows["softirq_entry"]
        for group in (_PACKET_EVENTS, _SOCKET_EVENTS):
            if name in group:
                return not any(self.rows[e] for e in group)
        return False

    def gap(self, cpu: int, prev_ts: int, ts: int, count: int) -> None:
        self.lost.append((cpu, prev_ts, ts, count))

    def build(self, path: str = "<synthetic>") -> Trace:
        events = {}
        first, last = None, None
        for name, cols in _COLUMNS.items():
            rows = sorted(self.rows[name], key=lambda r: r[0])
            if self._skipped(name):
                continue
            arr = np.array(rows, dtype=np.int64).reshape(len(rows), len(cols))
            events[name] = {c: _column(arr[:, i], dt) for i, (c, dt) in enumerate(cols.items())}
            if rows:
                first = rows[0][0] if first is None else min(first, rows[0][0])
                last = rows[-1][0] if last is None else max(last, rows[-1][0])
        lost_rows = sorted(self.lost, key=lambda r: r[2])
        lost_arr = np.array(lost_rows, dtype=np.int64).reshape(len(lost_rows), 4)
        lost: dict[str, np.ndarray] = {
            "cpu": lost_arr[:, 0].astype(np.int32), "prev_ts": lost_arr[:, 1],
            "ts": lost_arr[:, 2], "count": lost_arr[:, 3]}
        nrec = sum(len(r) for r in self.rows.values())
        return Trace(path=path, ncpus=self.ncpus, events=events, lost=lost,
                     comms=list(self.comms), irq_names=list(self.irq_names),
                     first_ts=first or 0, last_ts=last or 0, nrecords=nrec,
                     uname=self.uname)


@dataclass
class Expected:
    """What the analysis must find in a trace made by :func:`irq_thread_trace`."""

    start_ns: list[int] = field(default_factory=list)
    exec_ns: list[int] = field(default_factory=list)
    end_ns: list[int] = field(default_factory=list)
    irqs: list[int] = field(default_factory=list)
    charged_ns: list[int] = field(default_factory=list)  # with charge_overhead_ns only


def irq_thread_trace(arrivals_ns, exec_ns, *, pid: int = 100, irq: int = 11,
                     action: str = "eth0", cpu: int = 0, wake_delay_ns: int = 2_000,
                     switch_delay_ns: int = 3_000, preempt: dict[int, int] | None = None,
                     served: dict[int, int] | None = None,
                     builder: TraceBuilder | None = None,
                     charge_overhead_ns: int | None = None) -> tuple[TraceBuilder, Expected]:
    """Simulate an IRQ thread: job k arrives (hard IRQ) at ``arrivals_ns[k]`` and needs
    ``exec_ns[k]`` of CPU.

    The hard IRQ handler runs for 1 µs; when the thread sleeps it is woken
    ``wake_delay_ns`` after the IRQ entry and switched in ``switch_delay_ns`` after it.
    ``preempt`` maps a job index to a preemption (ns) taken by another task halfway
    through that job. ``served`` maps a job index to a pid the thread wakes when it
    finishes that job. Every activation of the result is complete (the thread is asleep
    at the start and at the end); the first activation is preceded by a sleep at time 1.
    With ``charge_overhead_ns`` the scheduler's charge is traced too (sched_stat_runtime,
    1 ns before each switch-out of the thread): each on-CPU interval plus that overhead,
    which may be negative (time the kernel does not charge, such as IRQ time).
    """
    b = builder or TraceBuilder()
    b.comm(pid, irqname.comm(irq, action))
    b.comm(0, f"swapper/{cpu}")
    other = 9_000 + cpu
    b.comm(other, "worker")
    preempt = preempt or {}
    served = served or {}
    arrivals = [int(a) for a in arrivals_ns]
    execs = [int(c) for c in exec_ns]
    exp = Expected()
    # the thread goes to sleep once before the first activation (so that one is complete)
    b.switch(1, cpu, pid, TASK_INTERRUPTIBLE, 0)
    k = 0
    n = len(arrivals)
    while k < n:
        a = arrivals[k]
        b.irq(a, cpu, 0, irq, action, IRQ_WAKE_THREAD)
        b.waking(a + wake_delay_ns, cpu, 0, pid, cpu)
        t = a + switch_delay_ns
        b.switch(t, cpu, 0, TASK_RUNNING, pid)
        exp.start_ns.append(a + wake_delay_ns)
        total, count, charged, run_from = 0, 0, 0, t

        def charge(until: int, since: int) -> int:
            if charge_overhead_ns is None:
                return 0
            ran = until - since + charge_overhead_ns
            b.runtime(until - 1, cpu, pid, ran)
            return ran

        while True:
            c = execs[k]
            pre = preempt.get(k, 0)
            if pre:
                half = c // 2
                charged += charge(t + half, run_from)
                run_from = t + half + pre
                b.switch(t + half, cpu, pid, PREEMPTED, other)
                b.switch(t + half + pre, cpu, other, TASK_INTERRUPTIBLE, pid)
                t += pre
            t += c
            total += c
            count += 1
            if k in served:
                b.waking(t - 1, cpu, pid, served[k], 1 - cpu if b.ncpus > 1 else cpu)
            k += 1
            # an IRQ that arrived while the thread was awake merges into this activation
            if k < n and arrivals[k] < t:
                b.irq(arrivals[k], cpu, pid, irq, action, IRQ_WAKE_THREAD)
                continue
            break
        charged += charge(t, run_from)
        b.switch(t, cpu, pid, TASK_INTERRUPTIBLE, 0)
        exp.exec_ns.append(total)
        if charge_overhead_ns is not None:
            exp.charged_ns.append(charged)
        exp.end_ns.append(t)
        exp.irqs.append(count)
    return b, exp


def damage_times(trace: Trace, cpu: int, start_ns: int, stop_ns: int, delta_ns: int) -> int:
    """Move the timestamps of ``cpu``'s rows in [start_ns, stop_ns) by ``delta_ns`` in every
    table, leaving the rows where they are, as one damaged page header or time-extend
    record does in a trace-cmd file (the reader hands each CPU's rows over in the order the
    CPU wrote them). Returns the rows moved."""
    moved = 0
    for t in trace.events.values():
        hit = (t["cpu"] == cpu) & (t["ts"] >= start_ns) & (t["ts"] < stop_ns)
        t["ts"] = t["ts"].copy()
        t["ts"][hit] += np.int64(delta_ns)
        moved += int(hit.sum())
    return moved
