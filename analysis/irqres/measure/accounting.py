"""Whom did an IRQ thread's time serve? Accounting of IRQ time per served process.

Rule: an activation's execution time is split by the packets it delivered that each
process later read. A delivery is a ``net:netif_receive_skb`` event whose ``common_pid``
is the IRQ thread and whose time falls inside one of its kept activations, from its
wake-up request to its sleep (:meth:`ThreadActivations.holding`). A read is an
``skb:consume_skb`` or ``skb:skb_copy_datagram_iovec`` event whose ``common_pid`` is
another task than the thread. Both carry the skb's address (``skbaddr``), and the
kernel reuses an address once its skb is freed: a delivery of address A at time t is read
by the task of the first read of A after t and before the next delivery of A (by any
task); later reads of the same skb (a copy, then the free) add nothing, so each delivery
counts once at most. The activation's execution time is split among its readers in
proportion to the deliveries each read, in integer nanoseconds (the floor of
exec * count / total per process; the remainder goes to the reader with the lowest pid),
so the shares add up exactly.

An activation none of whose deliveries was read by anyone (a trace without these events,
a thread that delivers no packets: a disk, a sound card) falls back to the wake-ups: a
wake-up event (``sched_waking`` — or ``sched_wakeup`` when waking was not recorded —
whose ``common_pid``, the waker, is the IRQ thread) that falls inside the activation ties
it to the woken process, and its time is split evenly among the distinct processes it
woke, the remainder to the lowest pid. Activations that neither delivered a packet read
by someone nor woke anyone are accounted to nobody (``pid`` -1, "(none)"). A trace
without the packet events is accounted by the wake-ups throughout.

The packets are preferred because a wake-up is only seen when the reader sleeps: an
activation that delivers datagrams to a reader already awake (still busy with the
previous ones) wakes nobody, and under the wake-up rule its time goes to whoever else was
woken (up to 14 % off on a PREEMPT_RT guest with two receivers). What the packets cannot
see: a TCP skb coalesced into another before it is read (its address is never read: the
time goes to the skb it joined, or to the fallback), and a packet read by nobody (dropped,
or still queued when the trace ends), which takes no share (the activation's readers
share its whole time; with no reader at all, the wake-ups decide).

Which packets: on new kernels (about 7.x) a UDP reader's read no longer frees the skb
in its own context: the free is deferred to the CPU that allocated it and happens in the
NIC thread, so no read of the skb's address by the reader is traced and the rule above
finds no reader. Kernels from about 6.6 trace the socket instead, and the socket rule
replaces the skb rule wherever the trace holds records of both ``sock:sk_data_ready``
and ``sock:sock_recv_length`` (:func:`by_sockets`; never both rules, or each packet would
count twice). A delivery is then an ``sk_data_ready`` event (data queued on the socket
``skaddr``) whose ``common_pid`` is the thread, inside one of its kept activations, in
its own context as below. A read is a ``sock_recv_length`` event (a recvmsg on socket
``sk``) with ``ret`` > 0 (bytes read; not -EAGAIN) by a task other than the thread: it
makes that task the socket's reader from then on, and a delivery to socket S at time t
counts one packet for the latest reader of S at or before t. A socket not read before t
does not count (the live daemon cannot look ahead, and the two must agree). The split,
the remainder, the fallback to wake-ups and ``Served.packets`` are the same under both
rules; a trace with neither pair of events is accounted by the wake-ups.

sched_waking is preferred because it is emitted in the waker's context; sched_wakeup
can be emitted on the target CPU for remote wake-ups, where common_pid is not the waker.

Only wake-ups and deliveries the thread made in its own context count. ``common_pid`` is
the task that was current, so a hard IRQ (or NMI) taken while the thread runs wakes its
own waiters "from" the thread: the event's flags say hard IRQ, and such events are other
interrupts' work, never credited. An event in soft IRQ context is the thread's own work
on PREEMPT_RT, where soft IRQs never run on the way out of a hard IRQ but only in task
context, in the task that re-enables bottom halves (the IRQ thread itself after its
handler raised NET_RX, say); on other kernels a soft IRQ can run on top of any task at
the exit of any interrupt, so there it is not credited either. The kernel kind comes
from the release stored in the trace (:attr:`Trace.preempt_rt`); when the trace does not
say, soft IRQ wake-ups and deliveries are not credited. :func:`uncredited_wakeups` counts
the wake-ups left out.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ..tables import Ns, column_texts
from ..trace.reader import FLAG_HARDIRQ, FLAG_NMI, FLAG_SOFTIRQ, Trace
from .activations import ThreadActivations


@dataclass(frozen=True)
class Served:
    """The IRQ time one process got from one IRQ thread."""

    pid: int
    comm: str
    wakeups: int         # wake-ups of the process by the thread, in kept activations
    activations: int     # activations that gave it time (by its packets or wake-ups)
    irq_time_ns: int     # the share of those activations' execution time
    share: float         # irq_time_ns / total execution time of the kept activations
    packets: int         # deliveries of the thread it read, in kept activations

    def to_dict(self) -> dict:
        return asdict(self)


def _wakeups_inside(trace: Trace, act: ThreadActivations):
    """(activation index, woken pid, flags) of the wake-ups ``act``'s thread appears to
    raise inside its kept activations, itself excluded."""
    wk = trace.wakeups()
    rows = np.flatnonzero(wk["waker"] == act.thread.pid)
    ts = wk["ts"][rows]
    woken = wk["pid"][rows].astype(np.int64)
    flags = (wk["flags"][rows] & 0xFF) if "flags" in wk else np.zeros(len(rows), np.int32)
    n = act.count
    a = np.searchsorted(act.end_ns, ts, side="left")
    inside = a < n
    inside[inside] &= ts[inside] >= act.start_ns[a[inside]]
    # self wake-ups (the thread re-arming itself) serve nobody else
    inside &= woken != act.thread.pid
    return a[inside].astype(np.int64), woken[inside], flags[inside]


def _foreign(trace: Trace, flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the events (wake-ups, deliveries) raised in hard IRQ (or NMI) context and
    of those in soft IRQ context that are not credited (see the module rule)."""
    hard = (flags & (FLAG_HARDIRQ | FLAG_NMI)) != 0
    soft = ~hard & ((flags & FLAG_SOFTIRQ) != 0)
    if trace.preempt_rt:
        soft = np.zeros_like(soft)
    return hard, soft


def uncredited_wakeups(trace: Trace, act: ThreadActivations) -> dict[str, int]:
    """Wake-ups inside the thread's activations that were not its own: raised in hard
    IRQ (or NMI) context, or in soft IRQ context on a kernel that is not PREEMPT_RT."""
    _, _, flags = _wakeups_inside(trace, act)
    hard, soft = _foreign(trace, flags)
    return {"hardirq": int(hard.sum()), "softirq": int(soft.sum())}


def _deliveries_read(trace: Trace, thread_pid: int) -> np.ndarray:
    """Per ``netif_receive_skb`` row, the pid of the task that read its skb: the first
    read of its address by a task other than ``thread_pid`` after it and before the
    address's next delivery; -1 when there is none."""
    d = trace.table("netif_receive_skb")
    r = trace.skb_reads()
    others = r["pid"] != thread_pid
    r = {c: v[others] for c, v in r.items()}
    nd = len(d["ts"])
    addr = np.concatenate([d["skbaddr"], r["skbaddr"]])
    ts = np.concatenate([d["ts"], r["ts"]])
    is_read = np.concatenate([np.zeros(nd, dtype=bool), np.ones(len(r["ts"]), dtype=bool)])
    who = np.concatenate([d["pid"], r["pid"]]).astype(np.int64)
    # by address, then time; a delivery before a read at the same time
    order = np.lexsort((is_read, ts, addr))
    reader = np.full(nd, -1, dtype=np.int64)
    if len(order) < 2:
        return reader
    cur, nxt = order[:-1], order[1:]
    hit = ~is_read[cur] & is_read[nxt] & (addr[cur] == addr[nxt])
    reader[cur[hit]] = who[nxt[hit]]
    return reader


#: The socket events whose presence (both, with records) selects the socket rule.
SOCKET_EVENTS = ("sk_data_ready", "sock_recv_length")


def by_sockets(trace: Trace) -> bool:
    """Whether the trace is accounted by the socket rule: it holds records of both
    :data:`SOCKET_EVENTS` (else the skb rule, else the wake-ups)."""
    return all(len(trace.table(name)["ts"]) for name in SOCKET_EVENTS)


def _socket_readers(trace: Trace, thread_pid: int) -> np.ndarray:
    """Per ``sk_data_ready`` row, the pid of its socket's reader: the task of the latest
    ``sock_recv_length`` on that socket with ``ret`` > 0 by a task other than
    ``thread_pid`` at or before it; -1 when the socket was not read before."""
    d = trace.table("sk_data_ready")
    r = trace.table("sock_recv_length")
    keep = (r["ret"] > 0) & (r["pid"] != thread_pid)
    nd = len(d["ts"])
    sk = np.concatenate([d["skaddr"], r["sk"][keep]])
    ts = np.concatenate([d["ts"], r["ts"][keep]])
    is_read = np.concatenate([np.zeros(nd, dtype=bool), np.ones(int(keep.sum()), dtype=bool)])
    who = np.concatenate([d["pid"], r["pid"][keep]]).astype(np.int64)
    # by socket, then time; a read before a delivery at the same time
    order = np.lexsort((~is_read, ts, sk))
    sk, is_read, who = sk[order], is_read[order], who[order]
    # the latest read so far in this order: of the same socket, or of an earlier one
    last = np.maximum.accumulate(np.where(is_read, np.arange(len(order)), -1))
    found = ~is_read & (last >= 0)
    found[found] &= sk[last[found]] == sk[found]
    reader = np.full(nd, -1, dtype=np.int64)
    reader[order[found]] = who[last[found]]
    return reader


def _packets_read(trace: Trace, act: ThreadActivations) -> tuple[np.ndarray, np.ndarray]:
    """(activation index, reader pid) of each delivery ``act``'s thread made in its own
    context inside its kept activations and another task read: by the socket rule when
    the trace allows it (:func:`by_sockets`), else by the skb rule."""
    if by_sockets(trace):
        d, readers = trace.table("sk_data_ready"), _socket_readers
    else:
        d, readers = trace.table("netif_receive_skb"), _deliveries_read
    rows = np.flatnonzero(d["pid"] == act.thread.pid)
    a = act.holding(d["ts"][rows]).astype(np.int64)
    hard, soft = _foreign(trace, d["flags"][rows] & 0xFF)
    reader = readers(trace, act.thread.pid)[rows]
    keep = (a >= 0) & ~hard & ~soft & (reader >= 0)
    return a[keep], reader[keep]


def _own_wakeups(trace: Trace, act: ThreadActivations) -> tuple[np.ndarray, np.ndarray]:
    """(activation index, woken pid) of the wake-ups credited to ``act``'s thread."""
    a, woken, flags = _wakeups_inside(trace, act)
    hard, soft = _foreign(trace, flags)
    own = ~hard & ~soft
    return a[own], woken[own]


@dataclass(frozen=True)
class _Split:
    """Per (activation, pid) pair, sorted by activation then pid: the events that tie
    them (packets read or wake-ups) and the pid's share of the activation's time."""

    act: np.ndarray
    pid: np.ndarray
    events: np.ndarray
    time_ns: np.ndarray


def _pairs(a: np.ndarray, pid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (activation, pid) pairs, sorted, and the events of each."""
    key = (a << 32) | (pid & 0xFFFFFFFF)
    pairs, counts = np.unique(key, return_counts=True)
    ppid = (pairs & 0xFFFFFFFF).astype(np.int64)
    ppid[ppid >= 2**31] -= 2**32
    return pairs >> 32, ppid, counts.astype(np.int64)


def _split(exec_ns: np.ndarray, a: np.ndarray, pid: np.ndarray, weighted: bool) -> _Split:
    """Split each activation's execution time among its pids: in proportion to their
    events when ``weighted``, else evenly; the floor of each share, and the remainder to
    the lowest pid of the activation."""
    pa, ppid, counts = _pairs(a, pid)
    weight = counts if weighted else np.ones(len(pa), dtype=np.int64)
    per_act = np.zeros(len(exec_ns), dtype=np.int64)
    np.add.at(per_act, pa, weight)
    share = exec_ns[pa] * weight // np.maximum(per_act[pa], 1)
    given = np.zeros(len(exec_ns), dtype=np.int64)
    np.add.at(given, pa, share)
    # pairs are sorted by (activation, pid): the first pair of each activation has the
    # lowest pid and takes the remainder
    first = np.ones(len(pa), dtype=bool)
    first[1:] = pa[1:] != pa[:-1]
    share = share + np.where(first, exec_ns[pa] - given[pa], 0)
    return _Split(pa, ppid, counts, share)


def _restricted(a: np.ndarray, pid: np.ndarray,
                acts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (activation, pid) rows whose activation is marked in ``acts``."""
    sel = acts[a]
    return a[sel], pid[sel]


def _served_row(trace: Trace, pid: int, wakeups: int, packets: int, parts: list[_Split],
                total: int) -> Served:
    """The row of ``pid``: its wake-ups and packets, and the time the splits gave it."""
    sel = [p.pid == pid for p in parts]
    t = sum(int(p.time_ns[s].sum()) for p, s in zip(parts, sel, strict=True))
    n = sum(int(s.sum()) for s in sel)
    names = trace.names_of(pid)
    return Served(pid, names[-1] if names else "?", wakeups, n, t,
                  t / total if total else 0.0, packets)


def served_processes(trace: Trace, act: ThreadActivations,
                     exec_ns: np.ndarray | None = None) -> list[Served]:
    """The processes ``act``'s thread served, most IRQ time first (see the module rule).
    ``exec_ns``: each kept activation's cost as the model takes it (the kernel's charge,
    as irqresd's live accounting does where the trace has it); default the switches'."""
    n = act.count
    exec_ns = (act.exec_ns if exec_ns is None else exec_ns).astype(np.int64)
    total = int(exec_ns.sum())
    pa, reader = _packets_read(trace, act)
    wa, woken = _own_wakeups(trace, act)
    by_packets = np.zeros(n, dtype=bool)
    by_packets[pa] = True
    by_packets_split = _split(exec_ns, pa, reader, weighted=True)
    fa, fpid = _restricted(wa, woken, ~by_packets)
    by_wakeups_split = _split(exec_ns, fa, fpid, weighted=False)
    parts = [by_packets_split, by_wakeups_split]

    wake_count = dict(zip(*np.unique(woken, return_counts=True), strict=True))
    packet_count = dict(zip(*np.unique(reader, return_counts=True), strict=True))
    out = [_served_row(trace, int(pid), int(wake_count.get(pid, 0)),
                       int(packet_count.get(pid, 0)), parts, total)
           for pid in np.union1d(woken, reader)]
    nobody = ~by_packets
    nobody[by_wakeups_split.act] = False
    if nobody.any():
        t = int(exec_ns[nobody].sum())
        out.append(Served(-1, "(none)", 0, int(nobody.sum()), t,
                          t / total if total else 0.0, 0))
    out.sort(key=lambda s: (-s.irq_time_ns, s.pid))
    return out


def format_served(served: list[Served], limit: int = 10) -> str:
    """A short table of the processes served."""
    lines = [f"{'process':28}{'pid':>8}{'packets':>9}{'wakeups':>9}{'activ.':>8}"
             f"{'IRQ time':>10}{'share':>8}"]
    times = column_texts([Ns(s.irq_time_ns) for s in served[:limit]])
    for s, t in zip(served[:limit], times, strict=True):
        lines.append(f"{s.comm[:27]:28}{s.pid:>8}{s.packets:>9}{s.wakeups:>9}"
                     f"{s.activations:>8}{t:>10}{100 * s.share:>7.1f}%")
    if len(served) > limit:
        lines.append(f"... and {len(served) - limit} more")
    return "\n".join(lines)
