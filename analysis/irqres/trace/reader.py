"""Read a trace-cmd data file into numpy columns.

The decoding is done by the native extension ``irqres._tracereader`` (C, libtracecmd)
in a child process (:mod:`.isolate`: libtracecmd crashes on some damaged files, and a
crash there must be an error here, not the end of ``irqres analyze``); this module
checks the file first, wraps the column bytes the child hands back as numpy arrays
without copying, and turns every failure into a :class:`~irqres.errors.TraceError` that
names the file and the cause.

Columns are int64 for timestamps (ns) and ``prev_state``, int32 for cpus, pids, IRQ
numbers and return values. All event tables are sorted by time (the reader merges the
per-CPU buffers in timestamp order).

On an uncompressed file (trace-cmd record's default) with enough records, the decoding
runs on every idle core (cores other work keeps busy are left out): each worker thread
has its own libtracecmd handle and takes pieces of the per-CPU streams, and the pieces
are merged in C into the columns the sequential reader gives, byte for byte.
``IRQRES_READ_THREADS=1`` (or ``threads=1``) forces one thread, ``=2`` two.

numpy is imported only once the records are read, so that ``irqres analyze`` can load it
(and the model) on a second thread while the native reader runs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import irqname
from ..errors import TraceError
from .isolate import isolated_read

if TYPE_CHECKING:
    import numpy as np

#: The line to record everything ``irqres analyze`` needs with trace-cmd (on a box where
#: ``trace-cmd record`` works, e.g. the PREEMPT_RT target).
RECORD_COMMAND = (
    "trace-cmd record -e sched:sched_switch -e sched:sched_wakeup -e sched:sched_waking "
    "-e sched:sched_migrate_task -e sched:sched_stat_runtime -e irq:irq_handler_entry "
    "-e irq:irq_handler_exit -e irq:softirq_entry -e irq:softirq_exit "
    "-e net:netif_receive_skb -e skb:consume_skb -e skb:skb_copy_datagram_iovec "
    "-e sock:sk_data_ready -e sock:sock_recv_length -o trace.dat -- sleep 10"
)

#: Threads whose switches a selective read keeps besides the threads analysed: the
#: device's work outside its IRQ thread runs in them (:mod:`irqres.measure.softirq`).
DEVICE_THREADS = ("irq/*", "napi/*", "ksoftirqd/*")

_MAGIC = b"\x17\x08\x44tracing"

# event name -> column -> numpy dtype
_COLUMNS: dict[str, dict[str, str]] = {
    "sched_switch": {"ts": "int64", "cpu": "int32", "prev_pid": "int32",
                     "prev_state": "int64", "next_pid": "int32"},
    "sched_waking": {"ts": "int64", "cpu": "int32", "waker": "int32", "pid": "int32",
                     "target_cpu": "int32", "flags": "int32"},
    "sched_wakeup": {"ts": "int64", "cpu": "int32", "waker": "int32", "pid": "int32",
                     "target_cpu": "int32", "flags": "int32"},
    "irq_handler_entry": {"ts": "int64", "cpu": "int32", "current": "int32",
                          "irq": "int32", "name_idx": "int32"},
    "irq_handler_exit": {"ts": "int64", "cpu": "int32", "current": "int32",
                         "irq": "int32", "ret": "int32"},
    "sched_migrate_task": {"ts": "int64", "cpu": "int32", "pid": "int32",
                           "orig_cpu": "int32", "dest_cpu": "int32"},
    # the CPU time the scheduler charged the task since its previous charge (update_curr)
    "sched_stat_runtime": {"ts": "int64", "cpu": "int32", "pid": "int32",
                           "runtime": "int64"},
    # a soft IRQ vector (``vec``: 3 NET_RX, 4 BLOCK, ...) run by the task ``current``
    "softirq_entry": {"ts": "int64", "cpu": "int32", "current": "int32", "vec": "int32"},
    "softirq_exit": {"ts": "int64", "cpu": "int32", "current": "int32", "vec": "int32"},
    # a packet handed to the protocols by ``pid`` (common_pid), and the reads of one by
    # its reader: an skb freed after use, a datagram copied out (``skbaddr``: the skb)
    "netif_receive_skb": {"ts": "int64", "cpu": "int32", "pid": "int32", "flags": "int32",
                          "skbaddr": "uint64"},
    "consume_skb": {"ts": "int64", "cpu": "int32", "pid": "int32", "flags": "int32",
                    "skbaddr": "uint64"},
    "skb_copy_datagram_iovec": {"ts": "int64", "cpu": "int32", "pid": "int32",
                                "flags": "int32", "skbaddr": "uint64"},
    # data queued on a socket by ``pid`` (``skaddr``: the struct sock), and a recvmsg on
    # socket ``sk`` by its reader (``ret``: the bytes read, or -errno)
    "sk_data_ready": {"ts": "int64", "cpu": "int32", "pid": "int32", "flags": "int32",
                      "skaddr": "uint64"},
    "sock_recv_length": {"ts": "int64", "cpu": "int32", "pid": "int32", "flags": "int32",
                         "sk": "uint64", "ret": "int32"},
}

#: The events that read a delivered skb (:meth:`Trace.skb_reads`).
SKB_READS = ("consume_skb", "skb_copy_datagram_iovec")

_RT_RELEASE = re.compile(r"(^|[-+._~])rt(\d+)?([-+._~]|$)")

#: common_flags bits (kernel/trace/trace.h, TRACE_FLAG_*): the event was raised in hard
#: IRQ context, while serving a soft IRQ, or in an NMI
FLAG_HARDIRQ = 0x08
FLAG_SOFTIRQ = 0x10
FLAG_NMI = 0x40

#: Environment variable: decoding threads (0 = one per idle core, 1 = sequential).
THREADS_ENV = "IRQRES_READ_THREADS"


def _threads(threads: int | None) -> int:
    if threads is None:
        text = os.environ.get(THREADS_ENV, "").strip()
        if not text:
            return 0
        try:
            threads = int(text)
        except ValueError:
            raise TraceError(f"{THREADS_ENV}={text!r}: not a number of threads "
                             "(0 = one per core, 1 = sequential)") from None
    if threads < 0:
        raise TraceError(f"decoding threads: {threads} is negative "
                         "(0 = one per core, 1 = sequential)")
    return threads


@dataclass(frozen=True)
class Selection:
    """The threads whose rows a read keeps (see :func:`read_trace`), by the rules of
    :func:`irqres.measure.activations.select_threads`: the IRQ threads (narrowed by
    ``thread_pattern``) when ``irq_threads``, and the tasks matching ``tasks``."""

    irq_threads: bool = True
    thread_pattern: str | None = None
    tasks: tuple[str, ...] = ()
    #: also kept, not analysed: :data:`DEVICE_THREADS` for the device accounting
    also: tuple[str, ...] = DEVICE_THREADS

    @classmethod
    def of(cls, pattern: str | None, tasks: tuple[str, ...] | list[str] = ()) -> Selection:
        """The selection of ``irqres analyze --thread PATTERN --task ...``."""
        return cls(pattern is not None or not tasks, pattern, tuple(tasks))


def empty_table(event: str) -> dict[str, np.ndarray]:
    """An event table with no rows, with the columns of ``event``."""
    import numpy as np

    return {name: np.empty(0, dtype=dt) for name, dt in _COLUMNS[event].items()}


@dataclass
class Trace:
    """The events of one trace that the analysis uses.

    Attributes
    ----------
    path
        The file read (or a description for synthetic traces).
    ncpus
        CPUs in the trace.
    events
        event name -> column name -> numpy array; an event absent from the file's
        formats is absent here, an event recorded but never hit has empty columns.
    lost
        Gaps where the ring buffer lost events: ``cpu``, ``prev_ts`` (last record on that
        CPU before the gap, -1 when the gap is before the CPU's first record), ``ts``
        (first record after the gap, int64 max when the gap is after the CPU's last
        record), ``count`` (events lost, -1 when unknown). They come from the records'
        missed_events and from the overrun / dropped counters trace-cmd stores.
    comms
        Every (pid, comm) pair seen in sched_switch and sched_waking/wakeup.
    irq_names
        Every (irq, handler name) pair seen in irq_handler_entry; an entry's
        ``name_idx`` indexes this list.
    first_ts, last_ts
        Timestamps of the first and last record of the trace (any event).
    nrecords
        Records of any event read.
    buffer
        The trace-cmd buffer read ("" for the top level).
    uname
        The recording machine's "sysname nodename release machine" as trace-cmd stored
        it ("" when the file has none).
    selected_pids
        None when every row was kept; else the pids of the threads whose rows were
        (a read with a :class:`Selection`): the tables hold only rows that involve them.
    seen
        Records of each event in the file, kept or not.
    time_jumps
        Runs of rows dropped for impossible timestamps (a damaged file), each a
        :class:`~irqres.trace.timecheck.TimeJump`; each left a gap in ``lost``.

    The wake-up tables carry ``flags``, the events' common_flags: the context the
    wake-up was raised in (:data:`FLAG_HARDIRQ`, :data:`FLAG_SOFTIRQ`, :data:`FLAG_NMI`);
    so do the packet tables (``netif_receive_skb``, ``consume_skb``,
    ``skb_copy_datagram_iovec``: ``pid`` is common_pid, ``skbaddr`` the skb, uint64) and
    the socket tables (``sk_data_ready``: ``skaddr`` the socket; ``sock_recv_length``:
    ``sk`` the socket, ``ret`` the bytes read or -errno).
    """

    path: str
    ncpus: int
    events: dict[str, dict[str, np.ndarray]]
    lost: dict[str, np.ndarray]
    comms: list[tuple[int, str]]
    irq_names: list[tuple[int, str]]
    first_ts: int
    last_ts: int
    nrecords: int
    buffer: str = ""
    uname: str = ""
    selected_pids: frozenset[int] | None = None
    seen: dict[str, int] | None = None
    time_jumps: list = field(default_factory=list)
    _pid_names: dict[int, list[str]] | None = field(default=None, repr=False)

    def table(self, event: str) -> dict[str, np.ndarray]:
        """The columns of ``event``, empty when the trace has none."""
        return self.events.get(event) or empty_table(event)

    def wakeups(self) -> dict[str, np.ndarray]:
        """The wake-up events to use: sched_waking when it was recorded, else sched_wakeup.

        sched_waking is emitted at the wake-up request (in the waker's context, e.g. the
        hard IRQ handler), sched_wakeup once the task is queued; the request is the
        arrival the analysis wants.
        """
        waking = self.events.get("sched_waking")
        if waking is not None and len(waking["ts"]):
            return waking
        return self.table("sched_wakeup")

    def skb_reads(self) -> dict[str, np.ndarray]:
        """The reads of skbs (:data:`SKB_READS`) in one table sorted by time: ``ts``,
        ``pid`` (the reader, common_pid) and ``skbaddr``; empty when none was recorded."""
        import numpy as np

        tables = [self.table(name) for name in SKB_READS]
        ts = np.concatenate([t["ts"] for t in tables])
        order = np.argsort(ts, kind="stable")
        return {c: np.concatenate([t[c] for t in tables])[order]
                for c in ("ts", "pid", "skbaddr")}

    def names_of(self, pid: int) -> list[str]:
        """Every comm seen for ``pid``, in order of appearance."""
        if self._pid_names is None:
            names: dict[int, list[str]] = {}
            for p, comm in self.comms:
                names.setdefault(p, []).append(comm)
            self._pid_names = names
        return self._pid_names.get(pid, [])

    def irq_threads(self) -> dict[int, tuple[int, str]]:
        """pid -> (irq, comm) of every task whose comm is an IRQ thread's name
        (:mod:`irqres.irqname`: ``irq/<N>-<action>``, the action maybe cut)."""
        out: dict[int, tuple[int, str]] = {}
        for pid, comm in self.comms:
            name = irqname.parse(comm)
            if name is not None and pid > 0:
                out[pid] = (name.irq, comm)
        return out

    @property
    def preempt_rt(self) -> bool | None:
        """Whether the trace was recorded on a PREEMPT_RT kernel, from the release in
        ``uname`` (``6.1.0-50-rt-amd64``, ``6.6.30-rt30``); None when it is not stored."""
        parts = self.uname.split()
        if len(parts) < 3:
            return None
        return bool(_RT_RELEASE.search(parts[2]))

    @property
    def nevents(self) -> int:
        """Rows kept over all event tables."""
        return sum(len(t["ts"]) for t in self.events.values())


def _cpustats_blocks(text: str, buffer: str) -> dict[int, str]:
    """cpu -> its lines in the stats trace-cmd stores in a file. The text holds the
    top-level buffer's CPUs first, then a ``Buffer: NAME`` section per instance; the
    section of ``buffer`` ("" = top level) is read."""
    sections = re.split(r"^Buffer: (.*)$", text, flags=re.M)
    by_name = {"": sections[0]}
    for i in range(1, len(sections) - 1, 2):
        by_name[sections[i].strip()] = sections[i + 1]
    out: dict[int, str] = {}
    for block in re.split(r"^CPU: ", by_name.get(buffer, ""), flags=re.M)[1:]:
        head, _, rest = block.partition("\n")
        if head.strip().isdigit():
            out[int(head)] = rest
    return out


def parse_cpustats(text: str, buffer: str) -> dict[int, dict[str, int]]:
    """cpu -> {"overrun": n, "dropped": n} from the stats trace-cmd stores in a file
    (the section of ``buffer``, "" = top level)."""
    out: dict[int, dict[str, int]] = {}
    for cpu, rest in _cpustats_blocks(text, buffer).items():
        vals = dict(re.findall(r"^([a-z ]+):\s*(\d+)\s*$", rest, flags=re.M))
        out[cpu] = {"overrun": int(vals.get("overrun", 0)),
                    "dropped": int(vals.get("dropped events", 0))}
    return out


def parse_cpustats_now(text: str, buffer: str) -> dict[int, int]:
    """cpu -> the clock (ns) trace-cmd read when it took the stats, at the end of the
    recording (``now ts:  56.682105``); CPUs without a readable one are left out."""
    out: dict[int, int] = {}
    for cpu, rest in _cpustats_blocks(text, buffer).items():
        m = re.search(r"^now ts:\s*(\d{1,12})\.(\d{1,9})\s*$", rest, flags=re.M)
        if m:
            out[cpu] = int(m.group(1)) * 1_000_000_000 + int(m.group(2).ljust(9, "0"))
    return out


def _stats_gaps(raw: dict) -> list[tuple[int, int, int, int]]:
    """Gaps the ring buffer's counters reveal but no record marks: events overwritten
    before a CPU's first record (overrun), events dropped after its last (full buffer)."""
    import numpy as np

    first = np.frombuffer(raw["cpu_first_ts"], dtype=np.int64)
    last = np.frombuffer(raw["cpu_last_ts"], dtype=np.int64)
    # a CPU whose first record already says it missed events needs no second gap
    rec_cpu = np.frombuffer(raw["lost"]["cpu"], dtype=np.int32)
    rec_prev = np.frombuffer(raw["lost"]["prev_ts"], dtype=np.int64)
    marked = set(rec_cpu[rec_prev < 0].tolist())
    gaps = []
    for cpu, st in parse_cpustats(raw["cpustats"], raw["buffer"]).items():
        if cpu >= len(first) or first[cpu] < 0:
            continue
        if st["overrun"] > 0 and cpu not in marked:
            gaps.append((cpu, -1, int(first[cpu]), st["overrun"]))
        if st["dropped"] > 0:
            gaps.append((cpu, int(last[cpu]), np.iinfo(np.int64).max, st["dropped"]))
    return gaps


def _check_file(path: str) -> None:
    try:
        st = os.stat(path)
    except OSError as exc:
        raise TraceError(f"{path}: cannot read the trace: {exc.strerror}") from exc
    if not os.path.isfile(path):
        raise TraceError(f"{path}: not a regular file")
    if st.st_size == 0:
        raise TraceError(f"{path}: the file is empty")
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(_MAGIC))
    except OSError as exc:
        raise TraceError(f"{path}: cannot read the trace: {exc.strerror}") from exc
    if head != _MAGIC:
        raise TraceError(
            f"{path}: not a trace-cmd data file (no 'tracing' magic at the start); "
            f"record one with: {RECORD_COMMAND}"
        )


def _check_events(trace: Trace) -> None:
    missing = []
    seen = trace.seen or {}

    def count(event: str) -> int:
        return seen.get(event, len(trace.table(event)["ts"]))

    if count("sched_switch") == 0:
        missing.append("sched:sched_switch")
    if count("sched_waking") == 0 and count("sched_wakeup") == 0:
        missing.append("sched:sched_waking (or sched:sched_wakeup)")
    if "irq_handler_entry" not in trace.events:
        missing.append("irq:irq_handler_entry")
    if missing:
        if trace.nrecords == 0:
            cause = "the trace holds no records at all"
        else:
            cause = f"it has no {', no '.join(missing)} events"
        raise TraceError(
            f"{trace.path}: cannot analyse IRQ threads: {cause}; record with: "
            f"{RECORD_COMMAND} (or, where trace-cmd record fails: irqres record -o trace.dat "
            "-- sleep 10)"
        )


def _keep_selected(events: dict, pids: np.ndarray, since: np.ndarray,
                   irqs: np.ndarray) -> None:
    """Drop the rows the reader kept only because it could not judge them yet (a waker,
    or an IRQ number, whose comm it had not met): now the whole trace has named them.
    ``pids`` (sorted) are the selected threads, ``since`` the time each first carried a
    selected name: a thread that renamed itself is analysed from then on."""
    import numpy as np

    def chosen(who: np.ndarray, ts: np.ndarray) -> np.ndarray:
        i = np.clip(np.searchsorted(pids, who), 0, max(len(pids) - 1, 0))
        if not len(pids):
            return np.zeros(len(who), dtype=bool)
        return (pids[i] == who) & (ts >= since[i])

    for name in ("sched_waking", "sched_wakeup"):
        t = events.get(name)
        if t is not None and len(t["ts"]):
            keep = chosen(t["pid"], t["ts"]) | chosen(t["waker"], t["ts"])
            if not keep.all():
                events[name] = {c: v[keep] for c, v in t.items()}
    for name in ("sched_migrate_task", "sched_stat_runtime"):
        t = events.get(name)
        if t is not None and len(t["ts"]):
            keep = chosen(t["pid"], t["ts"])
            if not keep.all():
                events[name] = {c: v[keep] for c, v in t.items()}
    for name in ("irq_handler_entry", "irq_handler_exit"):
        t = events.get(name)
        if t is not None and len(t["ts"]):
            keep = np.isin(t["irq"], irqs)
            if not keep.all():
                events[name] = {c: v[keep] for c, v in t.items()}


def _first_selected(pids: np.ndarray, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pids (sorted) and the earliest time each was selected."""
    import numpy as np

    order = np.lexsort((ts, pids))
    p, t = pids[order], ts[order]
    first = np.ones(len(p), dtype=bool)
    first[1:] = p[1:] != p[:-1]
    return p[first], t[first]


def read_trace(path: str | os.PathLike, *, buffer: str | None = None, progress=None,
               check_events: bool = True, threads: int | None = None,
               select: Selection | None = None) -> Trace:
    """Read the scheduling and IRQ events of a trace-cmd data file.

    Parameters
    ----------
    path
        The trace.dat file.
    buffer
        The trace-cmd buffer instance to read; ``""`` for the top level; ``None`` picks
        the top level when it holds records, else the first instance that does (traces
        written by ``irqres record`` keep their events in an instance).
    progress
        Called with the number of records read so far every 2**20 records.
    check_events
        Raise when the events the analysis needs are absent.
    threads
        Decoding threads: 0 = one per idle core, 1 = sequential; ``None`` takes
        ``$IRQRES_READ_THREADS``, else 0. The columns do not depend on it.
    select
        Keep only the rows of these threads (their switches, their wake-ups and the
        ones they raise, the hard IRQs of their IRQ numbers), so that memory grows with
        their events, not with the trace; comms, lost events and counts stay complete.

    Raises
    ------
    TraceError
        The file is missing, empty, not a trace, truncated or damaged, or lacks events.
    """
    path = os.fspath(path)
    nthreads = _threads(threads)
    _check_file(path)
    sel = None if select is None else (select.irq_threads, select.thread_pattern,
                                        list(select.tasks) + list(select.also))
    raw = isolated_read(path, buffer=buffer, progress=progress, threads=nthreads, select=sel)
    import numpy as np

    events = {}
    for name, cols in raw["events"].items():
        events[name] = {c: np.frombuffer(cols[c], dtype=dt) for c, dt in _COLUMNS[name].items()}
    selected = None
    if raw.get("selected_pids") is not None:
        pids, since = _first_selected(np.frombuffer(raw["selected_pids"], dtype=np.int32),
                                      np.frombuffer(raw["selected_ts"], dtype=np.int64))
        irqs = np.unique(np.frombuffer(raw["selected_irqs"], dtype=np.int32))
        _keep_selected(events, pids, since, irqs)
        selected = frozenset(pids.tolist())
    lost_raw = raw["lost"]
    lost: dict[str, np.ndarray] = {
        "cpu": np.frombuffer(lost_raw["cpu"], dtype=np.int32),
        "prev_ts": np.frombuffer(lost_raw["prev_ts"], dtype=np.int64),
        "ts": np.frombuffer(lost_raw["ts"], dtype=np.int64),
        "count": np.frombuffer(lost_raw["count"], dtype=np.int64),
    }
    extra = _stats_gaps(raw)
    if extra:
        cols = np.array(extra, dtype=np.int64)
        lost = {
            "cpu": np.concatenate([lost["cpu"], cols[:, 0].astype(np.int32)]),
            "prev_ts": np.concatenate([lost["prev_ts"], cols[:, 1]]),
            "ts": np.concatenate([lost["ts"], cols[:, 2]]),
            "count": np.concatenate([lost["count"], cols[:, 3]]),
        }
    trace = Trace(
        path=path, ncpus=raw["ncpus"], events=events, lost=lost, comms=raw["comms"],
        irq_names=raw["irq_names"], first_ts=raw["first_ts"], last_ts=raw["last_ts"],
        nrecords=raw["nrecords"], buffer=raw["buffer"], uname=raw.get("uname", ""),
        selected_pids=selected, seen=dict(raw.get("seen", {})),
    )
    from .timecheck import drop_damaged_times

    steps = {c: np.frombuffer(v, dtype=np.int32 if c == "cpu" else np.int64)
             for c, v in raw["steps"].items()}
    drop_damaged_times(trace, parse_cpustats_now(raw["cpustats"], raw["buffer"]),
                       (np.frombuffer(raw["cpu_first_ts"], dtype=np.int64),
                        np.frombuffer(raw["cpu_last_ts"], dtype=np.int64)), steps)
    if check_events:
        _check_events(trace)
    return trace
