"""The whole analysis of one trace, as ``irqres analyze`` shows it: per IRQ thread the
statistics, the lost events, the processes served, the PMFs, the buffering check and the
recommended reservation; as text or as a JSON-ready dict."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError
from ..model import buffering
from ..model.recommend import (
    MIN_DEFAULT_BOUND_NS,
    Recommendation,
    default_response_bound,
    min_samples,
    recommend,
)
from ..pmf import Pmf, nice_granularity
from ..trace.reader import Trace
from ..units import format_duration
from .accounting import Served, format_served, served_processes, uncredited_wakeups
from .activations import (
    Gaps,
    ThreadActivations,
    activations,
    joined_arrivals,
    line_requests,
    task_matches,
)
from .stats import Summary, ThreadStats, thread_stats


@dataclass
class Options:
    """What the user asked of the analysis (integer ns for every time).

    ``buffers`` holds (pattern, N_c) pairs: the first whose pattern matches a thread
    (:func:`~.activations.task_matches` on its comm or pid, or its IRQ number) gives that
    thread's N_c; a pattern of None matches every thread. ``deadline_ns`` None takes
    :func:`~irqres.model.recommend.default_response_bound` per thread.
    """

    pattern: str | None = None
    tasks: tuple[str, ...] = ()
    granularity_ns: int | None = None
    buffers: tuple[tuple[str | None, int], ...] = ()
    min_interarrival_ns: int | None = None
    periods_ns: list[int] | None = None
    deadline_ns: int | None = None
    target_prob: float = 0.99
    max_bandwidth: float = 0.9
    mc_jobs: int = 100_000
    model: str = "auto"  # "auto", "activation" or "demand" (recommend()'s model keyword)


@dataclass
class ThreadReport:
    act: ThreadActivations
    stats: ThreadStats
    served: list[Served]
    uncredited: dict[str, int]        # wake-ups in its activations that were not its own
    exec_pmf: Pmf | None
    interarrival_pmf: Pmf | None
    min_interarrival_ns: int | None   # P used for the buffering check
    p_source: str
    recommendation: Recommendation | None
    problem: str | None               # why there is no recommendation
    deadline_ns: int | None = None    # the response bound D the rows were searched for
    deadline_source: str = ""         # "given", or how the default was chosen
    warnings: list[str] = field(default_factory=list)

    @property
    def target_name(self) -> str:
        th = self.act.thread
        if not th.is_irq:
            name = re.sub(r"[^A-Za-z0-9_.-]+", "_", th.comm).strip("_-.")
            return (name or f"task{th.pid}")[:63].rstrip("_-.")
        # the full handler name when it is known (comm cuts the action at 15 characters)
        action = th.names[0] if len(th.names) == 1 else th.action
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"irq{th.irq}-{action}")[:63].rstrip("_-.")

    @property
    def selector_yaml(self) -> str:
        th = self.act.thread
        if not th.is_irq:
            # comm is stable across restarts, a pid is not; glob characters match literally
            glob = re.sub(r"([*?\[])", r"[\1]", th.comm)
            return f"task:\n  comm: {json.dumps(glob)}"
        lines = [f"irq: [{th.irq}]"]
        if len(th.names) == 1:
            lines.append(f"action: {json.dumps(th.names[0])}")
        if th.secondary:
            lines.append("secondary: true")
        return "\n".join(lines)


@dataclass
class Report:
    trace: Trace
    options: Options
    threads: list[ThreadReport]
    gaps: Gaps
    lines: list = field(default_factory=list)

    # ---- output ------------------------------------------------------------------

    def profile(self) -> str:
        """One profile holding every thread that got a recommendation."""
        targets = []
        for tr in self.threads:
            if tr.recommendation is None or tr.recommendation.best is None:
                continue
            text = tr.recommendation.profile_snippet(tr.target_name, tr.selector_yaml)
            head, body = text.split("targets:\n", 1)
            # each target's comment right above it
            notes = [f"  {ln}" for ln in head.splitlines() if ln.startswith("#")]
            targets.append("\n".join(notes) + "\n" + body)
        if not targets:
            raise ModelError("no thread got a recommendation; nothing to write")
        return "version: 1\ntargets:\n" + "".join(targets)

    def to_dict(self) -> dict:
        t = self.trace
        return {
            "trace": {
                "path": t.path, "buffer": t.buffer, "cpus": t.ncpus, "records": t.nrecords,
                "events_kept": t.nevents, "first_ts_ns": t.first_ts, "last_ts_ns": t.last_ts,
                "lost": _gaps_dict(self.gaps, t),
            },
            "options": self.options.__dict__,
            "threads": [_thread_dict(tr) for tr in self.threads],
            "irq_lines": [
                {"irq": ln.irq, "names": ln.names, "requests": len(ln.ts_ns),
                 "rate_hz": ln.rate_hz,
                 "interarrival": thread_summary_dict(ln.interarrival_ns)}
                for ln in self.lines
            ],
        }

    def text(self) -> str:
        t = self.trace
        out = [
            f"trace {t.path}{f' (buffer {t.buffer})' if t.buffer else ''}: {t.ncpus} CPUs, "
            f"{t.nrecords} records, {format_duration(t.last_ts - t.first_ts)}",
            _gaps_text(self.gaps, t),
        ]
        for tr in self.threads:
            out.append("")
            out += _thread_text(tr)
        if self.lines:
            out += ["", "IRQ lines (hard IRQ requests):"]
        for ln in self.lines:
            s = Summary.of(ln.interarrival_ns)
            gap = ("" if s.count == 0 else
                   f", inter-arrival mean {format_duration(round(s.mean_ns))}, "
                   f"min {format_duration(s.min_ns)}")
            out.append(f"  IRQ {ln.irq} ({', '.join(ln.names)}): {len(ln.ts_ns)} requests, "
                       f"{ln.rate_hz:.1f}/s{gap}")
        return "\n".join(out) + "\n"


def thread_summary_dict(x: np.ndarray) -> dict:
    return Summary.of(x).to_dict()


_NS_MAX = np.iinfo(np.int64).max


def _lost_list(trace: Trace) -> list[dict]:
    """Each gap: its CPU, the records around it (None: the CPU's start or end) and the
    number of events lost (None: unknown)."""
    lost = trace.lost
    return [
        {"cpu": int(c), "after_ns": None if p < 0 else int(p),
         "before_ns": None if t == _NS_MAX else int(t), "count": None if n < 0 else int(n)}
        for c, p, t, n in zip(lost["cpu"], lost["prev_ts"], lost["ts"], lost["count"],
                              strict=True)
    ]


def _gaps_dict(g: Gaps, trace: Trace) -> dict:
    return {"gaps": len(g), "events_lost": g.total_lost(), "list": _lost_list(trace)}


def _gaps_text(g: Gaps, trace: Trace, limit: int = 8) -> str:
    if len(g) == 0:
        return "lost events: none"
    out = [f"lost events: {g.total_lost()} in {len(g)} gaps; activations across them "
           "are discarded"]

    def at(ns: int) -> str:
        return f"+{format_duration(ns - trace.first_ts)}"

    gaps = _lost_list(trace)
    for gap in gaps[:limit]:
        n = "an unknown number of" if gap["count"] is None else str(gap["count"])
        a, b = gap["after_ns"], gap["before_ns"]
        where = (f"before {at(b)} (overwritten)" if a is None else
                 f"after {at(a)} (buffer full)" if b is None else f"between {at(a)} and {at(b)}")
        out.append(f"  CPU {gap['cpu']}: {n} events lost {where}")
    if len(gaps) > limit:
        out.append(f"  ... and {len(gaps) - limit} more gaps")
    return "\n".join(out)


def _thread_dict(tr: ThreadReport) -> dict:
    th = tr.act.thread
    rec = tr.recommendation
    return {
        "comm": th.comm, "pid": th.pid, "irq": th.irq, "action": th.action,
        "handler_names": th.names, "secondary": th.secondary,
        "stats": tr.stats.to_dict(),
        "served": [s.to_dict() for s in tr.served],
        "uncredited_wakeups": tr.uncredited,
        "pmf": {
            "interarrival": None if tr.interarrival_pmf is None else tr.interarrival_pmf.to_dict(),
            "exec": None if tr.exec_pmf is None else tr.exec_pmf.to_dict(),
        },
        "min_interarrival_ns": tr.min_interarrival_ns,
        "min_interarrival_source": tr.p_source,
        "buffering": _buffering_bounds(rec),
        "recommendation": None if rec is None else rec.to_dict(),
        "problem": tr.problem,
        "warnings": tr.warnings,
        "deadline_ns": tr.deadline_ns,
        "deadline_source": tr.deadline_source if tr.deadline_ns is not None else None,
        "profile": (rec.profile_snippet(tr.target_name, tr.selector_yaml)
                    if rec is not None and rec.best is not None else None),
    }


def _buffering_bounds(rec: Recommendation | None) -> list[dict] | None:
    """Per candidate period, the smallest runtime the buffering constraint allows."""
    if rec is None or rec.buffer is None or rec.min_interarrival_ns is None:
        return None
    return [{"period_ns": r.period_ns,
             "min_runtime_ns": _buffer_min_runtime(rec, r.period_ns)} for r in rec.rows]


def _buffer_min_runtime(rec: Recommendation, period_ns: int) -> int:
    return buffering.check(period_ns, period_ns, rec.min_interarrival_ns,
                           rec.buffer).min_runtime_for()


def _pct(p: float | None) -> str:
    return "-" if p is None else f"{100 * p:.3f}%"


def _thread_text(tr: ThreadReport) -> list[str]:
    th = tr.act.thread
    if th.is_irq:
        names = ", ".join(th.names) if th.names else "no hard IRQ seen"
        out = [f"== {th.comm} (pid {th.pid}, IRQ {th.irq}: {names}) =="]
    else:
        out = [f"== {th.comm} (pid {th.pid}, task) =="]
    out.append(tr.stats.table())
    if tr.served:
        out += ["processes served (IRQ time split evenly among those an activation woke):",
                format_served(tr.served)]
    skipped = [f"{n} raised in {ctx[:-3]} IRQ context" for ctx, n in tr.uncredited.items() if n]
    if skipped:
        out.append(f"not credited (other interrupts' work while it ran): {', '.join(skipped)}")
    rec = tr.recommendation
    if rec is None:
        out.append(f"warning: no reservation recommended: {tr.problem}")
        return out
    if rec.buffer is not None:
        out.append(f"buffering check: N_c = {rec.buffer}, P = "
                   f"{format_duration(rec.min_interarrival_ns)} ({tr.p_source})")
    out.append(f"recommendation: P{{response <= D}} >= {rec.target_prob}, D = "
               f"{format_duration(tr.deadline_ns)} ({tr.deadline_source}), "
               f"Q/T <= {rec.max_bandwidth:.0%}, Δ = {format_duration(rec.granularity_ns)}; "
               "* the least bandwidth that meets it")
    out.append(f"{'period':>10}{'runtime':>11}{'Q/T':>8}{'model':>12}{'P model':>10}{'±bound':>9}"
               f"{'Monte Carlo [95% CI]':>30}{'replay':>10}  buffering")
    for r in rec.rows:
        if not r.feasible:
            out.append(f"{format_duration(r.period_ns):>10}{'-':>11}{'-':>8}{r.model:>12}"
                       f"  infeasible: {r.reason}")
            continue
        mc = "-" if r.mc_prob is None else (
            f"{_pct(r.mc_prob)} [{_pct(r.mc_low)}, {_pct(r.mc_high)}]")
        buf = "-" if r.buffer_check is None else (
            # rounded down, so that a value just under N_c never prints as N_c
            f"ok ({math.floor(100 * r.buffer_check.delayed_irqs) / 100:.2f} < "
            f"{r.buffer_check.buffer})"
            if r.buffer_check.ok else r.buffer_check.message)
        mark = " *" if r is rec.best else ""
        out.append(f"{format_duration(r.period_ns):>10}{format_duration(r.runtime_ns):>11}"
                   f"{100 * r.bandwidth:>7.1f}%{r.model:>12}{_pct(r.solver_prob):>10}"
                   f"{r.error_bound:>9.1e}{mc:>30}{_pct(r.replay_prob):>10}  {buf}{mark}")
    if rec.best is None:
        out.append("warning: no candidate period meets the target; try a longer --deadline, "
                   "--period, a lower --target-prob or a larger --max-bandwidth")
    else:
        out += ["profile (* above):",
                rec.profile_snippet(tr.target_name, tr.selector_yaml).rstrip()]
    return out


def _pmf(samples: np.ndarray, granularity_ns: int | None, rounding: str) -> Pmf | None:
    if len(samples) == 0:
        return None
    g = granularity_ns or nice_granularity(int(samples.max()), 1000)
    return Pmf.from_samples(samples, g, rounding=rounding)


def buffer_for(thread, buffers) -> int | None:
    """N_c for ``thread`` from (pattern, N) pairs: the first matching pattern's, a pattern
    of None matching every thread; None when no pair applies."""
    for pattern, n in buffers:
        if pattern is None or task_matches(pattern, thread.comm, thread.pid) or (
                thread.is_irq and pattern.isdigit() and int(pattern) == thread.irq):
            return n
    return None


def _check_buffer_patterns(buffers, threads) -> None:
    for pattern, _ in buffers:
        if pattern is not None and not any(buffer_for(t, [(pattern, 1)]) for t in threads):
            names = ", ".join(t.comm for t in threads)
            raise ModelError(f"--buffer {pattern}=...: the pattern matches none of the "
                             f"threads analysed ({names})")


def analyze(trace: Trace, options: Options | None = None) -> Report:
    """Analyse every IRQ thread of ``trace`` (matching ``options.pattern``) and every
    task matching ``options.tasks``.

    Raises
    ------
    TraceError
        No thread in the trace (or none matching a pattern).
    ModelError
        An option the model cannot use (e.g. a non-positive period, a ``--buffer``
        pattern that matches no thread analysed).
    """
    opt = options or Options()
    acts = activations(trace, opt.pattern, opt.tasks)
    _check_buffer_patterns(opt.buffers, [a.thread for a in acts])
    gaps = Gaps.from_trace(trace)
    need = min_samples(opt.target_prob)
    threads = []
    for act in acts:
        st = thread_stats(act)
        served = served_processes(trace, act)
        uncredited = uncredited_wakeups(trace, act)
        exec_pmf = _pmf(act.exec_ns, opt.granularity_ns, "up")
        inter_pmf = _pmf(act.interarrival_ns, opt.granularity_ns, "down")
        buffer = buffer_for(act.thread, opt.buffers)
        if opt.min_interarrival_ns is not None:
            p, src = opt.min_interarrival_ns, "given"
        elif len(act.irq_interarrival_ns):
            p, src = int(act.irq_interarrival_ns.min()), "smallest measured IRQ inter-arrival"
        elif len(act.interarrival_ns):
            p, src = int(act.interarrival_ns.min()), "smallest measured activation inter-arrival"
        else:
            p, src = None, "not measured"
        rec, problem, warnings = None, None, []
        deadline, d_src = opt.deadline_ns, "given"
        if act.count < need or len(act.interarrival_ns) == 0:
            problem = (f"only {act.count} complete activation(s); a target of "
                       f"{opt.target_prob} needs at least {need} (a tail of "
                       f"{1 - opt.target_prob:.3g} must be able to show); record longer "
                       "while the thread is busy")
            warnings.append(f"{act.thread.comm} (pid {act.thread.pid}): no reservation "
                            f"recommended: {problem}")
        elif buffer is not None and p is not None and p <= 0:
            problem = ("the smallest measured inter-arrival is 0 ns; give "
                       "--min-interarrival for the buffering check")
        else:
            if deadline is None:
                deadline = default_response_bound(act.interarrival_ns)
                d_src = (f"default: the mean inter-arrival time, at least "
                         f"{format_duration(MIN_DEFAULT_BOUND_NS)}; set --deadline")
            rec = recommend(
                joined_arrivals(act), act.exec_ns, periods_ns=opt.periods_ns,
                target_prob=opt.target_prob, deadline_ns=deadline,
                buffer=buffer, min_interarrival_ns=p if buffer is not None else None,
                max_bandwidth=opt.max_bandwidth, granularity_ns=opt.granularity_ns,
                mc_jobs=opt.mc_jobs, model=opt.model)
        threads.append(ThreadReport(act, st, served, uncredited, exec_pmf, inter_pmf, p, src,
                                    rec, problem, deadline, d_src, warnings))
    lines = line_requests(trace, sorted({a.thread.irq for a in acts if a.thread.is_irq}))
    return Report(trace, opt, threads, gaps, lines)
