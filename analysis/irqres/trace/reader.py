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

from ..errors import TraceError
from .isolate import isolated_read

if TYPE_CHECKING:
    import numpy as np

#: The line to record everything ``irqres analyze`` needs with trace-cmd (on a box where
#: ``trace-cmd record`` works, e.g. the PREEMPT_RT target).
RECORD_COMMAND = (
    "trace-cmd record -e sched:sched_switch -e sched:sched_wakeup -e sched:sched_waking "
    "-e sched:sched_migrate_task -e irq:irq_handler_entry -e irq:irq_handler_exit "
    "-o trace.dat -- sleep 10"
)

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
}

_IRQ_COMM = re.compile(r"^irq/(\d+)-(.*)$")
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

    The wake-up tables carry ``flags``, the events' common_flags: the context the
    wake-up was raised in (:data:`FLAG_HARDIRQ`, :data:`FLAG_SOFTIRQ`, :data:`FLAG_NMI`).
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

    def names_of(self, pid: int) -> list[str]:
        """Every comm seen for ``pid``, in order of appearance."""
        if self._pid_names is None:
            names: dict[int, list[str]] = {}
            for p, comm in self.comms:
                names.setdefault(p, []).append(comm)
            self._pid_names = names
        return self._pid_names.get(pid, [])

    def irq_threads(self) -> dict[int, tuple[int, str]]:
        """pid -> (irq, comm) of every task whose comm is ``irq/<N>-<action>``.

        comm is cut at 15 characters by the kernel, so the action may be truncated.
        """
        out: dict[int, tuple[int, str]] = {}
        for pid, comm in self.comms:
            m = _IRQ_COMM.match(comm)
            if m and pid > 0:
                out[pid] = (int(m.group(1)), comm)
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


def parse_cpustats(text: str, buffer: str) -> dict[int, dict[str, int]]:
    """cpu -> {"overrun": n, "dropped": n} from the stats trace-cmd stores in a file.

    The text holds the top-level buffer's CPUs first, then a ``Buffer: NAME`` section per
    instance; the section of ``buffer`` ("" = top level) is returned.
    """
    sections = re.split(r"^Buffer: (.*)$", text, flags=re.M)
    by_name = {"": sections[0]}
    for i in range(1, len(sections) - 1, 2):
        by_name[sections[i].strip()] = sections[i + 1]
    out: dict[int, dict[str, int]] = {}
    for block in re.split(r"^CPU: ", by_name.get(buffer, ""), flags=re.M)[1:]:
        head, _, rest = block.partition("\n")
        if not head.strip().isdigit():
            continue
        vals = dict(re.findall(r"^([a-z ]+):\s*(\d+)\s*$", rest, flags=re.M))
        out[int(head)] = {"overrun": int(vals.get("overrun", 0)),
                          "dropped": int(vals.get("dropped events", 0))}
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
    if len(trace.table("sched_switch")["ts"]) == 0:
        missing.append("sched:sched_switch")
    if len(trace.table("sched_waking")["ts"]) == 0 and len(trace.table("sched_wakeup")["ts"]) == 0:
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


def read_trace(path: str | os.PathLike, *, buffer: str | None = None, progress=None,
               check_events: bool = True, threads: int | None = None) -> Trace:
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

    Raises
    ------
    TraceError
        The file is missing, empty, not a trace, truncated or damaged, or lacks events.
    """
    path = os.fspath(path)
    nthreads = _threads(threads)
    _check_file(path)
    raw = isolated_read(path, buffer=buffer, progress=progress, threads=nthreads)
    import numpy as np

    events = {}
    for name, cols in raw["events"].items():
        events[name] = {c: np.frombuffer(cols[c], dtype=dt) for c, dt in _COLUMNS[name].items()}
    lost_raw = raw["lost"]
    lost = {
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
    )
    if check_events:
        _check_events(trace)
    return trace
