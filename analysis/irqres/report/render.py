"""How a :class:`~.types.Report` is shown: the text ``irqres analyze`` prints, the
JSON-ready dict of ``--json``, and the profile of ``--profile-out``. Reads the report;
computes nothing of the analysis."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import profiledoc
from ..errors import ModelError
from ..jsonout import json_safe
from ..measure.accounting import format_served
from ..measure.calibration import Calibration
from ..measure.softirq import has_softirq_events
from ..measure.stats import Summary
from ..model import buffering
from ..model.recommend import Recommendation
from ..tables import Ns, column_texts, dur, ns_cell
from ..trace.reader import Trace
from ..units import format_duration
from .device import device_dict, device_text

if TYPE_CHECKING:
    from ..measure.activations import Gaps
    from .types import Report, ThreadReport


def profile(report: Report) -> str:
    """One profile holding every thread that got a recommendation, each target under the
    comment that says what it achieves."""
    targets = [t for t in (tr.profile_target() for tr in report.threads) if t is not None]
    if not targets:
        raise ModelError("no thread got a recommendation; nothing to write")
    return profiledoc.dump(targets)


def report_dict(report: Report) -> dict[str, Any]:
    """The whole report as JSON-safe data (docs/json.md, ``irqres analyze --json``):
    statistics that are NaN or infinite become null."""
    t = report.trace
    return json_safe({
        "trace": {
            "path": t.path, "buffer": t.buffer, "cpus": t.ncpus, "records": t.nrecords,
            "events_kept": t.nevents, "first_ts_ns": t.first_ts, "last_ts_ns": t.last_ts,
            "softirq_events": has_softirq_events(t),
            "lost": _gaps_dict(report.gaps, t),
            "damaged_timestamps": {
                "records_dropped": sum(j.count for j in t.time_jumps),
                "runs": [j.to_dict() for j in t.time_jumps]},
        },
        "options": report.options.to_dict(),
        "threads": [_thread_dict(tr) for tr in report.threads],
        "irq_lines": [
            {"irq": ln.irq, "names": ln.names, "requests": len(ln.ts_ns),
             "rate_hz": ln.rate_hz,
             "interarrival": thread_summary_dict(ln.interarrival_ns)}
            for ln in report.lines
        ],
    })


def report_text(report: Report) -> str:
    """The whole report as ``irqres analyze`` prints it."""
    t = report.trace
    out = [
        f"trace {t.path}{f' (buffer {t.buffer})' if t.buffer else ''}: {t.ncpus} CPUs, "
        f"{t.nrecords} records, {format_duration(t.last_ts - t.first_ts)}",
        _gaps_text(report.gaps, t),
    ]
    if t.time_jumps:
        out.append(f"damaged timestamps: {sum(j.count for j in t.time_jumps)} records "
                   f"dropped in {len(t.time_jumps)} runs; activations across them are "
                   "discarded (counted with those across lost events)")
        out += [f"  {j.describe(t.first_ts)}" for j in t.time_jumps[:8]]
        if len(t.time_jumps) > 8:
            out.append(f"  ... and {len(t.time_jumps) - 8} more runs")
    for tr in report.threads:
        out.append("")
        out += _thread_text(tr, has_softirq_events(t))
    if report.lines:
        out += ["", "IRQ lines (hard IRQ requests):"]
    for ln in report.lines:
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


def _lost_counts(g: Gaps, trace: Trace) -> tuple[int, int]:
    """Gaps and events lost, without the gaps damaged timestamps left (each counted as
    one gap of one unknown amount in ``g``)."""
    n = len(trace.time_jumps)
    return len(g) - n, g.total_lost() - n


def _gaps_dict(g: Gaps, trace: Trace) -> dict:
    gaps, lost = _lost_counts(g, trace)
    return {"gaps": gaps, "events_lost": lost, "list": _lost_list(trace)}


def _gaps_text(g: Gaps, trace: Trace, limit: int = 8) -> str:
    ngaps, nlost = _lost_counts(g, trace)
    if ngaps == 0:
        return "lost events: none"
    out = [f"lost events: {nlost} in {ngaps} gaps; activations across them "
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
        "execution": _execution_dict(tr),
        "min_interarrival_ns": tr.min_interarrival_ns,
        "min_interarrival_source": tr.p_source,
        "buffering": _buffering_bounds(rec),
        "recommendation": None if rec is None else rec.to_dict(),
        "problem": tr.problem,
        "note": tr.note,
        "promise": None if tr.promise is None else tr.promise.to_dict(),
        "device_work": device_dict(tr),
        "warnings": tr.warnings,
        "deadline_ns": tr.deadline_ns,
        "deadline_source": tr.deadline_source if tr.deadline_ns is not None else None,
        "profile": _snippet(tr),
    }


def _execution_dict(tr: ThreadReport) -> dict:
    """Which execution time the model uses, and the kernel's charge against the
    switch-based figure."""
    return {"model_uses": tr.exec_source,
            "kernel_charge": None if tr.charge is None else tr.charge.summary(),
            "calibration": None if tr.calibration is None else tr.calibration.to_dict()}


def _calibration_text(c: Calibration) -> str:
    d = format_duration
    return (f"calibrated from {c.probe_path} ({c.probe_activations} activations its "
            f"reservation held, {c.preempted} preempted or throttled left out): the {c.source} "
            f"figure at the {c.quantile:g} quantile {d(c.free_ns)} here, {d(c.probe_ns)} "
            f"reserved (+{d(c.allowance_ns)}); median {d(c.median_free_ns)} here, "
            f"{d(c.median_probe_ns)} reserved; the model plans from the probe's quantiles")


def _execution_text(tr: ThreadReport) -> str:
    c = tr.charge
    if c is None:
        return ("execution time: from sched_switch (the trace has no sched_stat_runtime "
                "of this thread, so the kernel's charge is unknown)")
    s = c.summary()
    if s["relative_diff"] is None:
        head = "kernel charge (sched_stat_runtime): no execution measured"
    else:
        head = (f"kernel charge (sched_stat_runtime) - switch-based execution: "
                f"{100 * s['relative_diff']:+.2f}% in all, per activation mean "
                f"{_signed_duration(round(s['mean_diff_ns']))}, from "
                f"{_signed_duration(s['min_diff_ns'])} to {_signed_duration(s['max_diff_ns'])}")
    if c.uncharged:
        head += f"; {c.uncharged} activation(s) carry no charge"
    return f"{head}; the model uses the {tr.exec_source} figure"


def _signed_duration(ns: int) -> str:
    return ("-" if ns < 0 else "+") + format_duration(abs(int(ns)))


def _buffering_bounds(rec: Recommendation | None) -> list[dict] | None:
    """Per candidate period, the smallest runtime the buffering constraint allows."""
    if rec is None or rec.buffer is None or rec.min_interarrival_ns is None:
        return None
    p, n = rec.min_interarrival_ns, rec.buffer
    return [{"period_ns": r.period_ns,
             "min_runtime_ns": buffering.check(r.period_ns, r.period_ns, p, n).min_runtime_for()}
            for r in rec.rows]


def _pct(p: float | None) -> str:
    return "-" if p is None else f"{100 * p:.3f}%"


def _thread_text(tr: ThreadReport, softirqs: bool = False) -> list[str]:
    th = tr.act.thread
    if th.is_irq:
        names = ", ".join(th.names) if th.names else "no hard IRQ seen"
        out = [f"== {th.comm} (pid {th.pid}, IRQ {th.irq}: {names}) =="]
    else:
        out = [f"== {th.comm} (pid {th.pid}, task) =="]
    out.append(tr.stats.table())
    out.append(_execution_text(tr))
    if tr.calibration is not None:
        out.append(_calibration_text(tr.calibration))
    out += device_text(tr, softirqs)
    if tr.promise is not None:
        out.append(tr.promise.text())
    if tr.served:
        cost = "kernel charge" if tr.exec_source == "kernel" else "switch-based time"
        out += [f"processes served (each activation's {cost} split by the packets each got, "
                "else evenly among those it woke):",
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
                   f"{dur(rec.min_interarrival_ns)} ({tr.p_source})")
    out.append(f"recommendation: P{{response <= D}} >= {rec.target_prob}, D = "
               f"{dur(tr.deadline_ns)} ({tr.deadline_source}), "
               f"Q/T <= {rec.max_bandwidth:.0%}, Δ = {format_duration(rec.granularity_ns)}; "
               "* the least bandwidth that meets it")
    out.append(f"kernel: {rec.kernel.describe()}; at most {rec.max_slices} budget "
               f"slice(s) per job of {format_duration(rec.slice_exec_ns)} (the execution "
               f"time at the {rec.target_prob} quantile)")
    out.append(f"{'period':>10}{'runtime':>11}{'Q/T':>8}{'model':>12}{'P model':>10}{'±bound':>9}"
               f"{'Monte Carlo [95% CI]':>30}{'replay':>10}  buffering")
    # the period and runtime columns each in one unit (irqres.tables)
    periods = column_texts([Ns(r.period_ns) for r in rec.rows])
    runtimes = column_texts([ns_cell(r.runtime_ns) for r in rec.rows])
    for r, period, runtime in zip(rec.rows, periods, runtimes, strict=True):
        if r.runtime_ns is None:    # infeasible
            out.append(f"{period:>10}{'-':>11}{'-':>8}{r.model:>12}"
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
        if r.limited_by:
            mark += f" (Q set by {r.limited_by})"
        bandwidth = r.runtime_ns / r.period_ns
        out.append(f"{period:>10}{runtime:>11}"
                   f"{100 * bandwidth:>7.1f}%{r.model:>12}{_pct(r.solver_prob):>10}"
                   f"{r.error_bound:>9.1e}{mc:>30}{_pct(r.replay_prob):>10}  {buf}{mark}")
    if tr.note:
        out.append(f"note: {tr.note}")
    if rec.best is None:
        out.append("warning: no candidate period meets the target; try a longer --deadline, "
                   "--period, a lower --target-prob or a larger --max-bandwidth")
    else:
        out += ["profile (* above):",
                (_snippet(tr) or "").rstrip()]
    return out


def _snippet(tr: ThreadReport) -> str | None:
    """The profile of this thread alone, or None without a recommendation."""
    target = tr.profile_target()
    return None if target is None else profiledoc.dump([target])
