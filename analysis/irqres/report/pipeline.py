"""The analysis of one trace, start to end: the activations of each thread
(:mod:`irqres.measure`), its PMFs and recommended reservation (:mod:`irqres.model`),
gathered in a :class:`~.types.Report` that :mod:`.render` shows as text, JSON or a
profile.

Data flows one way: trace -> measure -> model -> report.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..errors import IrqresError, ModelError
from ..measure.accounting import served_processes, uncredited_wakeups
from ..measure.activations import (
    Gaps,
    ThreadActivations,
    activations,
    joined_arrivals,
    line_requests,
    task_matches,
)
from ..measure.calibration import MIN_PROBE_ACTIVATIONS, Calibration, calibrate, preempted
from ..measure.charge import KernelCharge, execution_for_model, kernel_charge
from ..measure.handover import handover_warning
from ..measure.idle import idle_switch_gaps, idle_switch_warning
from ..measure.merged import merged_jobs_warning
from ..measure.softirq import DeviceWork, device_work, work_per_activation
from ..measure.stats import thread_stats
from ..model.bound import far_from_use_note, near_use_bound
from ..model.promise import check_promise
from ..model.recommend import (
    MIN_DEFAULT_BOUND_NS,
    default_response_bound,
    min_samples,
    recommend,
)
from ..pmf import Pmf, nice_granularity
from ..trace.reader import Trace
from ..units import format_duration
from .types import Options, Report, ThreadReport


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


class _Execution(NamedTuple):
    """One thread's execution as the model takes it, and what it is made of."""

    charge: KernelCharge | None  # the kernel's charge
    exec_ns: np.ndarray          # the device's whole work where the trace shows it
    source: str                  # "kernel" or "switch"
    device: DeviceWork | None    # the device's work wherever it ran
    extra: np.ndarray | None     # of it, per activation, in exec_ns


class _ProbeThread(NamedTuple):
    """One thread of the probe: its held activations' execution times."""

    pid: int
    exec_ns: np.ndarray
    source: str
    preempted: int               # activations left out


def _executions(trace: Trace, acts: list[ThreadActivations], gaps: Gaps,
                source: str) -> dict[int, _Execution]:
    """Per thread pid, its :class:`_Execution`."""
    work = device_work(trace, acts, gaps)
    out = {}
    for act in acts:
        charge = kernel_charge(trace, act)
        exec_ns, exec_source = execution_for_model(act, charge, source)
        device = work.get(act.thread.pid)
        extra = None if device is None else work_per_activation(act, device)
        if extra is not None:  # the recommendation sizes the device's whole work
            exec_ns = exec_ns + extra
        out[act.thread.pid] = _Execution(charge, exec_ns, exec_source, device, extra)
    return out


def _probe_executions(probe: Trace, opt: Options) -> dict[str, list[_ProbeThread]]:
    """comm -> the probe's threads of that comm, selected as the free trace's are."""
    try:
        acts = activations(probe, opt.pattern, opt.tasks)
        execs = _executions(probe, acts, Gaps.from_trace(probe), opt.exec_source)
    except IrqresError as exc:
        raise type(exc)(f"--calibrate {opt.calibrate}: {exc}") from exc
    out: dict[str, list[_ProbeThread]] = {}
    for act in acts:
        ex = execs[act.thread.pid]
        off = preempted(probe, act)
        out.setdefault(act.thread.comm, []).append(
            _ProbeThread(act.thread.pid, ex.exec_ns[~off], ex.source,
                         int(np.count_nonzero(off))))
    return out


def _calibration(act: ThreadActivations, exec_ns: np.ndarray, source: str,
                 probes: dict[str, list[_ProbeThread]], path: str,
                 target: float) -> tuple[np.ndarray, Calibration]:
    """``act``'s execution times calibrated with the probe's threads of the same comm
    (:mod:`~irqres.measure.calibration`), and what was done."""
    th = act.thread
    found = probes.get(th.comm)
    if not found:
        names = ", ".join(sorted(probes)) or "none"
        raise ModelError(f"--calibrate {path}: no thread named {th.comm} in it (its threads "
                         f"analysed: {names}); record the probe of the same thread")
    sources = {f.source for f in found}
    if sources != {source}:
        raise ModelError(f"--calibrate {path}: {th.comm}: the probe's execution is the "
                         f"{'/'.join(sorted(sources))} figure, the trace's the {source} one; "
                         "record both with sched:sched_stat_runtime, or use --exec switch")
    probe_ns = np.concatenate([f.exec_ns for f in found])
    off = sum(f.preempted for f in found)
    if len(probe_ns) < MIN_PROBE_ACTIVATIONS:
        raise ModelError(f"--calibrate {path}: {th.comm}: {len(probe_ns)} activation(s) in "
                         f"the probe that its reservation held ({off} more preempted or "
                         f"throttled), at least {MIN_PROBE_ACTIVATIONS} needed; record it "
                         "longer, or under a larger budget")
    if off > (1 - target) * (off + len(probe_ns)):
        raise ModelError(f"--calibrate {path}: {th.comm}: its reservation in the probe "
                         f"preempted or throttled it in {off} of {off + len(probe_ns)} "
                         f"activations, more than the {1 - target:.3g} the target leaves: "
                         "behind each throttle jobs pile up into one activation, and the "
                         "probe's upper quantiles are theirs, not one job's; record the "
                         "probe under a larger budget (e.g. twice this one's, at most 90 % "
                         "of its period)")
    return calibrate(exec_ns, probe_ns, probe_path=path,
                     probe_pids=tuple(f.pid for f in found), source=source,
                     quantile=target, preempted_count=off)


def _check_options(opt: Options, probe: Trace | None) -> None:
    if opt.under is not None and opt.deadline_ns is None:
        raise ModelError("--under Q,T: give the --deadline D the promise was made for")
    if (probe is None) != (opt.calibrate is None):
        raise ModelError("calibration: give both the probe trace and its path, or neither")
    if probe is not None and opt.under is not None:
        raise ModelError("--calibrate with --under: a trace recorded under the reservation "
                         "is checked, not planned; give one of them")


def _buffering_interarrival(act: ThreadActivations, opt: Options) -> tuple[int | None, str]:
    """P of the buffering check, and where it comes from."""
    if opt.min_interarrival_ns is not None:
        return opt.min_interarrival_ns, "given"
    if len(act.irq_interarrival_ns):
        return int(act.irq_interarrival_ns.min()), "smallest measured IRQ inter-arrival"
    if len(act.interarrival_ns):
        return int(act.interarrival_ns.min()), "smallest measured activation inter-arrival"
    return None, "not measured"


def _recommendation(act: ThreadActivations, exec_ns: np.ndarray, opt: Options, need: int,
                    buffer: int | None, p: int | None) -> tuple:
    """The recommendation for one thread (or None), why there is none, its warnings, and
    the response bound it was searched for with its source."""
    rec, problem, warnings = None, None, []
    deadline, d_src = opt.deadline_ns, "given"
    if act.count < need or len(act.interarrival_ns) == 0:
        problem = (f"only {act.count} complete activation(s); a target of "
                   f"{opt.target_prob} needs at least {need} (a tail of "
                   f"{1 - opt.target_prob:.3g} must be able to show); record longer "
                   "while the thread is busy")
        warnings.append(f"{act.thread.comm} (pid {act.thread.pid}): no reservation "
                        f"recommended: {problem}")
        return rec, problem, warnings, deadline, d_src
    if buffer is not None and p is not None and p <= 0:
        problem = ("the smallest measured inter-arrival is 0 ns; give "
                   "--min-interarrival for the buffering check")
        return rec, problem, warnings, deadline, d_src
    kw: dict[str, Any] = {
        "target_prob": opt.target_prob, "buffer": buffer,
        "min_interarrival_ns": p if buffer is not None else None,
        "max_bandwidth": opt.max_bandwidth, "granularity_ns": opt.granularity_ns,
        "mc_jobs": opt.mc_jobs, "model": opt.model, "kernel": opt.kernel,
        "max_slices": opt.max_slices}
    if deadline is None and opt.periods_ns is None:
        span = max(int(act.span_ns), 1)
        found = near_use_bound(joined_arrivals(act), exec_ns, act.interarrival_ns,
                               int(exec_ns.sum()) / span,
                               period_max_ns=opt.kernel.period_max_ns, **kw)
        return found.recommendation, problem, warnings, found.deadline_ns, found.source
    if deadline is None:
        deadline = default_response_bound(act.interarrival_ns)
        d_src = (f"default: the mean inter-arrival time, at least "
                 f"{format_duration(MIN_DEFAULT_BOUND_NS)}; set --deadline")
    rec = recommend(joined_arrivals(act), exec_ns, periods_ns=opt.periods_ns,
                    deadline_ns=deadline, **kw)
    return rec, problem, warnings, deadline, d_src


def analyze(trace: Trace, options: Options | None = None,
            probe: Trace | None = None) -> Report:
    """Analyse every IRQ thread of ``trace`` (matching ``options.pattern``) and every
    task matching ``options.tasks``. ``probe``: a trace of the same threads recorded under
    a reservation (``options.calibrate`` its path), whose extra cost per job the model
    adds to the execution times (:mod:`irqres.measure.calibration`).

    Raises
    ------
    TraceError
        No thread in the trace (or none matching a pattern).
    ModelError
        An option the model cannot use (e.g. a non-positive period, a ``--buffer``
        pattern that matches no thread analysed).
    """
    opt = options or Options()
    _check_options(opt, probe)
    acts = activations(trace, opt.pattern, opt.tasks)
    _check_buffer_patterns(opt.buffers, [a.thread for a in acts])
    gaps = Gaps.from_trace(trace)
    need = min_samples(opt.target_prob)
    threads = []
    execs = _executions(trace, acts, gaps, opt.exec_source)
    probes = None if probe is None else _probe_executions(probe, opt)
    # only a thread that lost activations as inconsistent can be told why (measure/idle)
    idle_gaps = (idle_switch_gaps(trace) if any(a.dropped_inconsistent for a in acts)
                 else {})
    for act in acts:
        charge, exec_ns, exec_source, device, extra = execs[act.thread.pid]
        calibration = None
        if probes is not None and act.count >= need:  # else no recommendation to calibrate
            exec_ns, calibration = _calibration(act, exec_ns, exec_source, probes,
                                                str(opt.calibrate), opt.target_prob)
        st = thread_stats(act, None if charge is None else charge.charged_ns)
        served = served_processes(trace, act, charge.charged_ns
                                  if exec_source == "kernel" and charge is not None else None)
        uncredited = uncredited_wakeups(trace, act)
        exec_pmf = _pmf(exec_ns, opt.granularity_ns, "up")
        inter_pmf = _pmf(act.interarrival_ns, opt.granularity_ns, "down")
        buffer = buffer_for(act.thread, opt.buffers)
        p, src = _buffering_interarrival(act, opt)
        rec, problem, warnings, deadline, d_src = _recommendation(act, exec_ns, opt, need,
                                                                  buffer, p)
        note = None if rec is None else far_from_use_note(rec, exec_ns, act.span_ns)
        # a calibrated allowance holds the hand-over's cost: no warning then
        handover = (None if rec is None or calibration is not None
                    else handover_warning(trace, act))
        if handover:
            warnings.append(handover)
        merged = None if rec is None else merged_jobs_warning(act, opt.target_prob)
        if merged:
            warnings.append(merged)
        idle = idle_switch_warning(idle_gaps, act)
        if idle:
            warnings.append(idle)
        promise = None
        if opt.under is not None and opt.deadline_ns is not None:
            promise = check_promise(act.start_ns, exec_ns, act.response_ns, opt.under[0],
                                    opt.under[1], opt.deadline_ns, opt.target_prob)
        threads.append(ThreadReport(act, st, served, uncredited, exec_pmf, inter_pmf, p, src,
                                    rec, problem, deadline, d_src, warnings, charge,
                                    exec_source, note, promise, device,
                                    0 if extra is None else int(extra.sum()), calibration,
                                    None if calibration is None else exec_ns))
    lines = line_requests(trace, sorted({a.thread.irq for a in acts if a.thread.irq is not None}))
    return Report(trace, opt, threads, gaps, lines)
