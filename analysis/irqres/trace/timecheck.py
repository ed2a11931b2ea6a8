"""Timestamps a damaged trace got wrong: found, dropped with a warning, and marked as gaps.

In a trace-cmd file a record's time is its page's timestamp plus the deltas of the records
before it on the page, so one damaged bit in a page header or in a time-extend record moves
a whole run of one CPU's records by 2**k ns. Left in, such a run makes a trace of centuries
(every rate 0.0/s), inter-arrival times of years, or activations that never end. The ring
buffer writes each CPU's records in time order, which gives the rules (applied per CPU, to
the rows the reader kept):

1. **after the recording ended**: a row later than the clock trace-cmd read when the
   recording stopped (the CPU's ``now ts`` in the file's stats) plus :data:`END_SLACK_NS`,
   or earlier than 0, cannot be;
2. **out of order**: where a CPU's rows in an event table step back in time, the longest
   subsequence of them in time order is kept and the rest dropped (a run moved ahead and
   back again, or moved back below its predecessors);
3. **far outside the trace**: rows cut off from all the others by a silence longer than
   :data:`FAR_NS` and :data:`FAR_FACTOR` times the rest of the trace's span (the side with
   fewer rows goes): a run moved at a CPU's first or last page, in a file without stats.

Each dropped run becomes a :class:`TimeJump` (its CPU, its rows and times, how far it
jumped), which the analysis takes as a gap between the CPU's good records around it, so
that the activations across it are discarded as those across lost events are.
A run moved by less than the slack and still in order cannot be told from real time and
stays.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..units import format_duration

if TYPE_CHECKING:
    from .reader import Trace

#: How far past the clock trace-cmd read at the end a record may lie (stats are in µs,
#: and ``trace-cmd extract`` reads them while the buffers may still be read).
END_SLACK_NS = 1_000_000_000
#: A silence that cuts rows off from the trace: longer than this and than FAR_FACTOR
#: times the span of the other rows.
FAR_NS = 3_600_000_000_000
FAR_FACTOR = 10

_NS_MAX = np.iinfo(np.int64).max

OUT_OF_ORDER = "out of order"
AFTER_END = "after the recording ended"
NEGATIVE = "before the clock's zero"
FAR = "far outside the trace"


@dataclass
class TimeJump:
    """A run of one CPU's rows dropped for an impossible timestamp.

    Attributes
    ----------
    cpu
        The CPU whose records they are.
    first_ns, last_ns
        The smallest and largest (damaged) timestamp among them.
    rows
        Rows dropped, per event.
    jump_ns
        How far they lie from the CPU's good records around them: positive ahead of the
        one before them, negative behind it (or, at the CPU's start, behind the one after).
    reason
        Which rule dropped them (:data:`AFTER_END`, :data:`NEGATIVE`, :data:`OUT_OF_ORDER`,
        :data:`FAR`).
    after_ns, before_ns
        The CPU's good records around them (-1 / int64 max: none), the gap they leave.
    record, offset
        Where the CPU's time stepped back at the run's end (a run moved ahead) or start
        (moved back): that record's index among the CPU's records and its offset in the
        file, as the reader noted them; None when time never stepped back there (a run
        at the CPU's end).
    """

    cpu: int
    first_ns: int
    last_ns: int
    rows: dict[str, int]
    jump_ns: int
    reason: str
    after_ns: int = -1
    before_ns: int = _NS_MAX
    record: int | None = None
    offset: int | None = None

    @property
    def count(self) -> int:
        return sum(self.rows.values())

    def describe(self, origin_ns: int = 0) -> str:
        """One line: ``CPU 0: 84 records (...) stamped ... dropped (out of order): ...``;
        times into the trace count from ``origin_ns``."""
        way = "ahead of" if self.jump_ns >= 0 else "behind"
        what = ", ".join(f"{k} {v}" for k, v in sorted(self.rows.items()))
        when = (_stamp(self.first_ns) if self.first_ns == self.last_ns else
                f"{_stamp(self.first_ns)} to {_stamp(self.last_ns)}")
        where = (f"after its record at +{format_duration(self.after_ns - origin_ns)}"
                 if self.after_ns >= 0 else "at its start")
        step = ("" if self.record is None else
                f"; its time steps back at its record {self.record} (file offset "
                f"{self.offset})")
        return (f"CPU {self.cpu}: {self.count} records ({what}) stamped {when} dropped "
                f"({self.reason}): {format_duration(abs(self.jump_ns))} {way} the CPU's "
                f"records around them, {where}{step}; activations across them are "
                "discarded")

    def to_dict(self) -> dict:
        return {"cpu": self.cpu, "first_ns": self.first_ns, "last_ns": self.last_ns,
                "records": self.count, "events": dict(self.rows), "jump_ns": self.jump_ns,
                "reason": self.reason,
                "after_ns": None if self.after_ns < 0 else self.after_ns,
                "before_ns": None if self.before_ns == _NS_MAX else self.before_ns,
                "record": self.record, "offset": self.offset}


def _stamp(ns: int) -> str:
    sign = "-" if ns < 0 else ""
    return f"{sign}{abs(ns) // 1_000_000_000}.{abs(ns) % 1_000_000_000:09d}s"


@dataclass
class _Drop:
    """Rows one rule drops from one table, on one CPU."""

    event: str
    cpu: int
    rows: np.ndarray        # indices into the table
    jump_ns: int
    reason: str
    after_ns: int = -1
    before_ns: int = _NS_MAX
    ts: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))


def _longest_in_order(s: list[int]) -> np.ndarray:
    """Which of the values ``s`` to keep: the longest subsequence in time order (each
    value no earlier than the one kept before it), by patience sorting, O(n log n)."""
    tails: list[int] = []          # the smallest last value of a kept sequence of length k+1
    ends: list[int] = []           # its index in s
    prev = [-1] * len(s)
    for i, v in enumerate(s):
        k = bisect.bisect_right(tails, v)
        if k == len(tails):
            tails.append(v)
            ends.append(i)
        else:
            tails[k], ends[k] = v, i
        prev[i] = ends[k - 1] if k else -1
    keep = np.zeros(len(s), dtype=bool)
    i = ends[-1] if ends else -1
    while i >= 0:
        keep[i] = True
        i = prev[i]
    return keep


def _runs(event: str, ts: np.ndarray, cpu: np.ndarray, alive: np.ndarray, bad: np.ndarray,
          reason: str) -> list[_Drop]:
    """The ``bad`` rows among the ``alive`` ones, as runs of one CPU's rows in the order
    it wrote them, each with the CPU's good rows around it."""
    drops = []
    for cpu_id in np.unique(cpu[bad & alive]).tolist():
        stream = np.flatnonzero(alive & (cpu == cpu_id))
        mine, out = ts[stream], bad[stream]
        edges = np.flatnonzero(np.diff(np.concatenate(([0], out.astype(np.int8), [0]))))
        for a, b in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
            before = int(mine[a - 1]) if a > 0 else -1
            after = int(mine[b]) if b < len(mine) else _NS_MAX
            run = mine[a:b]
            if before >= 0:
                jump = int(run[0]) - before
            elif after < _NS_MAX:
                jump = int(run[-1]) - after
            else:
                jump = 0
            drops.append(_Drop(event, int(cpu_id), stream[a:b], jump, reason, before, after,
                               run))
    return drops


def _outside(event: str, ts: np.ndarray, cpu: np.ndarray, alive: np.ndarray,
             end_ns: dict[int, int]) -> list[_Drop]:
    """Rule 1 on one table's rows still kept (``alive``)."""
    if not len(ts):
        return []
    drops = _runs(event, ts, cpu, alive, ts < 0, NEGATIVE) if ts.min() < 0 else []
    if end_ns and ts.max() > min(end_ns.values()) + END_SLACK_NS:
        limit = np.full(int(cpu.max(initial=0)) + 1, _NS_MAX, dtype=np.int64)
        for c, end in end_ns.items():
            if 0 <= c < len(limit):
                limit[c] = min(end, _NS_MAX - END_SLACK_NS) + END_SLACK_NS
        drops += _runs(event, ts, cpu, alive & (ts >= 0), ts > limit[np.maximum(cpu, 0)],
                       AFTER_END)
    return drops


def _out_of_order(event: str, ts: np.ndarray, cpu: np.ndarray,
                  alive: np.ndarray) -> list[_Drop]:
    """Rule 2 on one table's rows still kept (``alive``)."""
    every = bool(alive.all())
    t = ts if every else ts[alive]
    if len(t) < 2 or bool(np.all(t[1:] >= t[:-1])):
        return []               # in time order overall, so on every CPU
    live = np.arange(len(ts)) if every else np.flatnonzero(alive)
    order = live[np.argsort(cpu[live], kind="stable")]   # each CPU's rows, in stream order
    s, c = ts[order], cpu[order]
    back = np.flatnonzero((c[1:] == c[:-1]) & (s[1:] < s[:-1])) + 1
    bad = np.zeros(len(ts), dtype=bool)
    for cpu_id in np.unique(c[back]).tolist():
        lo, hi = np.searchsorted(c, cpu_id, "left"), np.searchsorted(c, cpu_id, "right")
        bad[order[lo:hi]] = ~_longest_in_order(s[lo:hi].tolist())
    return _runs(event, ts, cpu, alive, bad, OUT_OF_ORDER)


def _far(tables: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]) -> list[_Drop]:
    """Rule 3 over every table's rows still kept: (ts, cpu, alive) per event."""
    parts = [ts if alive.all() else ts[alive] for ts, _, alive in tables.values()]
    parts = [p for p in parts if len(p)]
    if not parts or max(int(p.max()) for p in parts) - min(int(p.min()) for p in parts) \
            <= FAR_NS:
        return []               # no silence that long fits in the trace
    every = np.sort(np.concatenate(parts))
    lo, hi = 0, len(every)          # the rows still in: every[lo:hi]
    cut_lo, cut_hi = np.iinfo(np.int64).min, _NS_MAX
    for _ in range(8):
        if hi - lo < 2:
            break
        gaps = np.diff(every[lo:hi])
        k = int(np.argmax(gaps))
        g = int(gaps[k])
        if g <= FAR_NS or g <= FAR_FACTOR * (int(every[hi - 1] - every[lo]) - g):
            break
        if k + 1 <= (hi - lo) // 2:         # the side before the silence is the smaller
            cut_lo, lo = int(every[lo + k + 1]), lo + k + 1
        else:
            cut_hi, hi = int(every[lo + k]), lo + k + 1
    if lo == 0 and hi == len(every):
        return []
    drops = []
    for event, (ts, cpu, alive) in tables.items():
        drops += _runs(event, ts, cpu, alive, (ts < cut_lo) | (ts > cut_hi), FAR)
    return drops


def _jumps(drops: list[_Drop]) -> list[TimeJump]:
    """The drops of every table, one TimeJump per CPU, rule and run of close times."""
    out: list[TimeJump] = []
    key = sorted(drops, key=lambda d: (d.cpu, d.reason, int(d.ts.min())))
    for d in key:
        lo, hi = int(d.ts.min()), int(d.ts.max())
        j = out[-1] if out else None
        # the same damaged run seen in several tables: times within a second of each other
        if j is not None and j.cpu == d.cpu and j.reason == d.reason and \
                lo <= j.last_ns + 1_000_000_000:
            j.first_ns, j.last_ns = min(j.first_ns, lo), max(j.last_ns, hi)
            j.rows[d.event] = j.rows.get(d.event, 0) + len(d.rows)
            if abs(d.jump_ns) > abs(j.jump_ns):
                j.jump_ns = d.jump_ns
            j.after_ns = max(j.after_ns, d.after_ns)
            j.before_ns = min(j.before_ns, d.before_ns)
            if j.after_ns >= j.before_ns:           # tables disagree: the wider gap
                j.after_ns, j.before_ns = min(j.after_ns, d.after_ns), max(j.before_ns,
                                                                           d.before_ns)
            continue
        out.append(TimeJump(d.cpu, lo, hi, {d.event: len(d.rows)}, d.jump_ns, d.reason,
                            d.after_ns, d.before_ns))
    return out


def _place(jumps: list[TimeJump], steps: dict[str, np.ndarray]) -> None:
    """Give each run the record where its CPU's time stepped back: out of a run moved
    ahead (the step from it to a time below its first), into a run moved back (the step
    from above its last to it)."""
    for j in jumps:
        mine = steps["cpu"] == j.cpu
        if j.jump_ns >= 0:
            hit = mine & (steps["prev_ts"] >= j.first_ns) & (steps["ts"] < j.first_ns)
        else:
            hit = mine & (steps["ts"] <= j.last_ns) & (steps["prev_ts"] > j.last_ns)
        k = np.flatnonzero(hit)
        if len(k):
            j.record, j.offset = int(steps["index"][k[0]]), int(steps["offset"][k[0]])


def drop_damaged_times(trace: Trace, end_ns: dict[int, int] | None = None,
                       cpu_spans: tuple[np.ndarray, np.ndarray] | None = None,
                       steps: dict[str, np.ndarray] | None = None) -> list[TimeJump]:
    """Drop the rows of ``trace`` whose timestamps cannot be (see the module's rules),
    in place: the tables lose them (and are put back in time order), ``first_ts`` and
    ``last_ts`` leave out what was dropped, ``time_jumps`` lists them (the analysis takes
    each as a gap, see :meth:`irqres.measure.activations.Gaps.from_trace`).

    Parameters
    ----------
    trace
        A trace as the reader (or :mod:`.synthetic`) made it, each CPU's rows in the
        order that CPU wrote them.
    end_ns
        Per CPU, the clock trace-cmd read when the recording ended (the stats' ``now
        ts``); None or a CPU missing: rule 1 only drops times below 0 there.
    cpu_spans
        Per CPU, the first and last timestamp of all its records (-1: none), as the
        reader saw them: the trace's span is taken from those that are plausible.
    steps
        Where the reader saw a CPU's time step back, over all its records: columns
        ``cpu``, ``index`` (among the CPU's records), ``offset`` (in the file),
        ``prev_ts``, ``ts``; they place each dropped run in the file.

    Returns
    -------
    The dropped runs, also in ``trace.time_jumps``.
    """
    end_ns = end_ns or {}
    drops: list[_Drop] = []
    alive: dict[str, np.ndarray] = {}
    for event, t in trace.events.items():
        keep = np.ones(len(t["ts"]), dtype=bool)
        for d in _outside(event, t["ts"], t["cpu"], keep, end_ns):
            keep[d.rows] = False
            drops.append(d)
        for d in _out_of_order(event, t["ts"], t["cpu"], keep):
            keep[d.rows] = False
            drops.append(d)
        alive[event] = keep
    for d in _far({e: (t["ts"], t["cpu"], alive[e]) for e, t in trace.events.items()}):
        alive[d.event][d.rows] = False
        drops.append(d)
    jumps = _jumps(drops)
    if steps is not None:
        _place(jumps, steps)
    trace.time_jumps = jumps
    if not jumps:
        return jumps
    _apply(trace, alive, jumps, end_ns, cpu_spans)
    return jumps


def _apply(trace: Trace, alive: dict[str, np.ndarray], jumps: list[TimeJump],
           end_ns: dict[int, int], cpu_spans: tuple[np.ndarray, np.ndarray] | None) -> None:
    """Keep the ``alive`` rows in time order and bound the trace's span by the rows left."""
    for event, keep in alive.items():
        t = trace.events[event]
        ts = t["ts"][keep]
        order = np.argsort(ts, kind="stable")
        trace.events[event] = {c: v[keep][order] for c, v in t.items()}
    left = [t["ts"] for t in trace.events.values() if len(t["ts"])]
    if not left:
        return
    lo = min(int(x[0]) for x in left)
    hi = max(int(x[-1]) for x in left)
    # the span: the rows left, widened by the CPUs' first and last records (of events not
    # kept too) that lie inside every bound a dropped run set
    top = min([j.first_ns for j in jumps if j.first_ns > hi]
              + [e + END_SLACK_NS for e in end_ns.values()], default=_NS_MAX)
    bottom = max([j.last_ns for j in jumps if j.last_ns < lo] + [-1])
    if cpu_spans is not None:
        firsts = [int(f) for f in cpu_spans[0] if bottom < f < lo]
        lasts = [int(x) for x in cpu_spans[1] if hi < x < top]
        lo, hi = min([lo, *firsts]), max([hi, *lasts])
    trace.first_ts, trace.last_ts = lo, hi
