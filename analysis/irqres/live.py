"""What ``irqres top`` shows: per thread, the use of its reservation between two
:class:`irqres.metrics.Snapshot` s, laid out for a terminal of a given size.

Per thread, over the interval between the two snapshots (irqresd's own clock):

* USED/T: the CPU time it ran per period on average (Δcpu · T / Δt), against its
  budget Q; %Q the same as a share of Q (can pass 100 % only when the kernel lets a
  reservation reclaim idle time);
* %CPU: Δcpu / Δt, the share of one CPU;
* IRQ/s: interrupts raised on its lines; THR/s: throttle events per second, derived as
  in :mod:`irqres.metrics` (involuntary switches under SCHED_DEADLINE; one throttling
  can pay for several periods' budgets, so not the periods whose budget ran out);
  WAIT%: the share of the interval it was runnable but held back;
* DROP/s: frames its target's NIC dropped (rx_dropped + rx_missed_errors).

Below, for the targets with ``serves:``, per process their threads woke: the
device-thread time spent on its behalf since the profile came in force (TIME) and over
the interval as a share of one CPU (%CPU), from irqresd's live accounting
(:mod:`irqres.served_time`).

No number is made up: a thread seen for the first time, or whose counters went back
(another thread took its pid), shows ``-`` until the next interval.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from . import served_time
from .metrics import Snapshot, ThreadSample
from .tables import Ns, column_texts, ns_cell
from .units import format_duration


@dataclass(frozen=True)
class Row:
    """One thread's line: the sample and its rates (None when not known yet)."""

    th: ThreadSample
    used_per_period_ns: int | None
    budget_share: float | None      # used / Q
    cpu_share: float | None         # of one CPU
    wait_share: float | None
    irq_per_s: float | None
    throttled_per_s: float | None
    drops_per_s: float | None


def rows(prev: Snapshot | None, cur: Snapshot) -> list[Row]:
    """The rows of ``cur``, with rates against ``prev``, ordered by target and pid."""
    before = {th.pid: th for th in prev.threads} if prev else {}
    dt = cur.time_ns - prev.time_ns if prev else 0
    drops: dict[str, float | None] = {}
    for (target, iface), c in cur.nic.items():
        was = prev.nic.get((target, iface)) if prev else None
        if was is None or dt <= 0 or not c:
            drops.setdefault(target, None)
            continue
        d = sum(c.values()) - sum(was.get(k, 0) for k in c)
        drops[target] = (drops.get(target) or 0.0) + max(d, 0) * 1e9 / dt
    out = []
    for th in sorted(cur.threads, key=lambda t: (t.target, t.pid)):
        p = before.get(th.pid)
        ok = (p is not None and dt > 0 and p.target == th.target
              and th.cpu_time_ns >= p.cpu_time_ns and th.involuntary >= p.involuntary
              and th.wait_time_ns >= p.wait_time_ns)
        if not ok:
            out.append(Row(th, None, None, None, None, None, None, drops.get(th.target)))
            continue
        assert p is not None
        d_cpu = th.cpu_time_ns - p.cpu_time_ns
        per_s = 1e9 / dt
        q, t = th.runtime_ns, th.period_ns
        dl = th.policy == "deadline" and bool(q) and bool(t)
        used = d_cpu * t // dt if dl and t else None
        irq = None
        if th.irq_count is not None and p.irq_count is not None \
                and th.irq_count >= p.irq_count:
            irq = (th.irq_count - p.irq_count) * per_s
        out.append(Row(th, used, used / q if used is not None and q else None,
                       d_cpu / dt, (th.wait_time_ns - p.wait_time_ns) / dt, irq,
                       (th.involuntary - p.involuntary) * per_s if dl else None,
                       drops.get(th.target)))
    return out


def _num(x: float | None, digits: int = 0) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _bar(x: float | None, width: int = 10) -> str:
    if x is None:
        return " " * (width + 2)
    n = max(0, min(width, round(x * width)))
    return "[" + "#" * n + " " * (width - n) + "]"


# header, priority (lower goes first when the terminal is narrow), right-aligned, cell
# (durations are Ns: a column of them in one unit, irqres.tables)
COLUMNS: list[tuple[str, int, bool, Callable[[Row], object]]] = [
    ("TARGET", 9, False, lambda r: r.th.target),
    ("THREAD", 8, False, lambda r: r.th.comm),
    ("PID", 7, True, lambda r: str(r.th.pid)),
    ("CPU", 2, True, lambda r: r.th.cpus or "-"),
    ("POLICY", 3, False, lambda r: r.th.policy),
    ("Q/T", 6, True, lambda r: (Ns(r.th.runtime_ns), Ns(r.th.period_ns))
     if r.th.policy == "deadline" and r.th.runtime_ns and r.th.period_ns else "-"),
    ("USED/T", 5, True, lambda r: ns_cell(r.used_per_period_ns)),
    ("%Q", 10, True, lambda r: _pct(r.budget_share)),
    ("", 1, False, lambda r: _bar(r.budget_share)),
    ("%CPU", 4, True, lambda r: _pct(r.cpu_share)),
    ("WAIT%", 0, True, lambda r: _pct(r.wait_share)),
    ("IRQ/s", 5, True, lambda r: _num(r.irq_per_s)),
    ("THR/s", 6, True, lambda r: _num(r.throttled_per_s)),
    ("DROP/s", 4, True, lambda r: _num(r.drops_per_s)),
]


def table(rs: Sequence[Row], width: int) -> list[str]:
    """Header and rows in at most ``width`` columns: the least important columns go first
    when they do not fit, then the lines are cut."""
    cells = [column_texts([c[3](r) for r in rs]) for c in COLUMNS]
    widths = [max([len(c[0]), *map(len, col)]) for c, col in zip(COLUMNS, cells, strict=True)]
    keep = list(range(len(COLUMNS)))
    for i in sorted(keep, key=lambda i: COLUMNS[i][1]):
        if sum(widths[k] + 1 for k in keep) - 1 <= width:
            break
        if COLUMNS[i][1] >= 7:            # target, thread, pid, %Q always stay
            continue
        keep.remove(i)

    def line(texts: Sequence[str]) -> str:
        parts = [texts[k].rjust(widths[k]) if COLUMNS[k][2] else texts[k].ljust(widths[k])
                 for k in keep]
        return " ".join(parts).rstrip()[:width]

    out = [line([c[0] for c in COLUMNS])]
    for j in range(len(rs)):
        out.append(line([cells[i][j] for i in range(len(COLUMNS))]))
    return out


def served_lines(prev: Snapshot | None, cur: Snapshot, width: int) -> list[str]:
    """The served-process table (nothing when no target asked for accounting)."""
    acc = cur.accounting
    if not acc.wanted:
        return []
    if not acc.enabled:
        return [f"accounting off: {acc.error}"[:width]]
    shares = served_time.cpu_shares(prev.accounting if prev else None, acc,
                                    cur.time_ns - prev.time_ns if prev else 0)
    if not shares:
        return ["device-thread time per served process: nothing accounted yet"[:width]]
    cols = [column_texts(c) for c in zip(*[
        (s.target, str(s.pid) if s.pid != served_time.NOBODY else "-", s.comm,
         Ns(s.irq_time_ns), _pct(x)) for s, x in shares], strict=True)]
    head = ("SERVED BY", "PID", "PROCESS", "TIME", "%CPU")
    widths = [max(len(h), *map(len, c)) for h, c in zip(head, cols, strict=True)]

    def line(texts: Sequence[str]) -> str:
        return " ".join(t.rjust(w) if k in (1, 3, 4) else t.ljust(w)
                        for k, (t, w) in enumerate(zip(texts, widths, strict=True)))[:width]

    return [line(head), *(line([c[j] for c in cols]) for j in range(len(shares)))]


def gone_frame(why: str, width: int) -> list[str]:
    """The screen while irqresd does not answer: why, and no table (the last one would
    show a daemon that is gone, and its reservations, as if they were current)."""
    return [f"irqres top  {time.strftime('%H:%M:%S')}  irqresd is gone"[:width], why[:width],
            "no table: nothing is measured while irqresd does not answer (retrying every "
            "interval; q quits)"[:width]]


def frame(prev: Snapshot | None, cur: Snapshot, width: int, height: int,
          interval_ns: int, note: str = "") -> list[str]:
    """A whole screen: a title, the table, cut to ``height`` lines (the last says how
    many threads did not fit)."""
    rs = rows(prev, cur)
    title = (f"irqres top  {time.strftime('%H:%M:%S')}  irqresd pid {cur.daemon_pid}  "
             f"profile {cur.profile or '(none)'}  every {format_duration(interval_ns)}  "
             f"{len(rs)} thread(s)  q quits")
    lines = [title[:width], (note or "")[:width]]
    body = table(rs, width) if rs else ["no threads under irqresd"]
    served = served_lines(prev, cur, width)
    if served:
        body = [*body, "", *served]
    room = max(height - len(lines), 2)
    if len(body) > room:
        hidden = len(body) - (room - 1)
        more = f"... {hidden} more thread(s): a taller terminal shows them"
        body = [*body[:room - 1], more[:width]]
    return lines + body
