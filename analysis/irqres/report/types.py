"""The types the report layer returns: what the user asked (:class:`Options`), the
analysis of one thread (:class:`ThreadReport`) and of a trace (:class:`Report`), and the
response-time curves a plot draws (:class:`ResponseCurves`). Built by :mod:`.pipeline`
and :mod:`.curves`, shown by :mod:`.render` and :mod:`irqres.plots`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, assert_never

import numpy as np

from ..measure.accounting import Served
from ..measure.activations import Gaps, LineRequests, ThreadActivations
from ..measure.calibration import Calibration
from ..measure.charge import KernelCharge
from ..measure.softirq import DeviceWork
from ..measure.stats import ThreadStats
from ..model.kernel import KernelFacts
from ..model.promise import PromiseCheck
from ..model.recommend import Recommendation
from ..pmf import Pmf
from ..targetkind import TargetKind, napi_interface, softirq_kthread
from ..trace.reader import Trace
from . import render

SERVES_MIN_SHARE = 0.01   # of a thread's time, for a process served by wake-ups only
SERVES_MAX = 16           # comms written into a recommended target's serves:


def literal_glob(comm: str) -> str:
    """``comm`` as an fnmatch glob that matches it alone (glob characters in brackets)."""
    return re.sub(r"([*?\[])", r"[\1]", comm)


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
    exec_source: str = "auto"  # "auto", "kernel" or "switch" (measure.charge.EXEC_SOURCES)
    kernel: KernelFacts = field(default_factory=KernelFacts)  # limits, enforcement
    max_slices: int | None = None  # None: kernel.default_max_slices()
    under: tuple[int, int] | None = None  # (Q, T) the trace was recorded under: check it
    calibrate: str | None = None  # the probe trace's path (measure.calibration)

    def to_dict(self) -> dict[str, Any]:
        """The options as ``analyze --json`` publishes them (docs/json.md): each key
        named here, none added by a new field unseen."""
        return {
            "pattern": self.pattern, "tasks": list(self.tasks),
            "granularity_ns": self.granularity_ns,
            "buffers": [[pattern, n] for pattern, n in self.buffers],
            "min_interarrival_ns": self.min_interarrival_ns,
            "periods_ns": None if self.periods_ns is None else list(self.periods_ns),
            "deadline_ns": self.deadline_ns, "target_prob": self.target_prob,
            "max_bandwidth": self.max_bandwidth, "mc_jobs": self.mc_jobs, "model": self.model,
            "exec_source": self.exec_source, "kernel": self.kernel.to_dict(),
            "max_slices": self.max_slices,
            "under": None if self.under is None else list(self.under),
            "calibrate": self.calibrate,
        }


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
    charge: KernelCharge | None = None  # the kernel's charge (sched_stat_runtime)
    exec_source: str = "switch"         # what the PMF and the model use: "kernel", "switch"
    note: str | None = None             # why the best reservation is far above the use
    promise: PromiseCheck | None = None  # achieved vs promised under Options.under
    device: DeviceWork | None = None     # the device's work wherever it ran (soft IRQs)
    device_model_ns: int = 0             # of it, added to the model's execution times
    calibration: Calibration | None = None  # what a probe did (--calibrate)
    calibrated_ns: np.ndarray | None = None  # the execution times the probe made of them

    @property
    def model_exec_ns(self) -> np.ndarray:
        """The execution time of each kept activation as the model takes it."""
        if self.calibrated_ns is not None:
            return self.calibrated_ns
        if self.exec_source == "kernel" and self.charge is not None:
            return self.charge.charged_ns
        return self.act.exec_ns

    @property
    def kind(self) -> TargetKind:
        """The kind of target the recommended profile makes of this thread."""
        th = self.act.thread
        if th.is_irq:
            return TargetKind.IRQ
        if napi_interface(th.comm):
            return TargetKind.NAPI
        return TargetKind.SOFTIRQ if softirq_kthread(th.comm) else TargetKind.TASK

    @property
    def target_name(self) -> str:
        th = self.act.thread
        match self.kind:
            case TargetKind.TASK:
                name = re.sub(r"[^A-Za-z0-9_.-]+", "_", th.comm).strip("_-.")
                return (name or f"task{th.pid}")[:63].rstrip("_-.")
            case TargetKind.IRQ:
                # the full handler name when it is known (comm cuts the action at 15
                # characters)
                action = th.names[0] if len(th.names) == 1 else th.action
                return re.sub(r"[^A-Za-z0-9_.-]+", "_",
                              f"irq{th.irq}-{action}")[:63].rstrip("_-.")
            case TargetKind.NAPI:
                return re.sub(r"[^A-Za-z0-9_.-]+", "_",
                              f"napi-{napi_interface(th.comm)}")[:63].rstrip("_-.")
            case TargetKind.SOFTIRQ:
                return th.comm.replace("/", "-")
            case _:
                assert_never(self.kind)

    @property
    def selector(self) -> dict[str, Any]:
        """The profile selector of this thread (docs/profile.md)."""
        th = self.act.thread
        match self.kind:
            case TargetKind.TASK:
                # comm is stable across restarts, a pid is not; glob characters match
                # literally
                return {"task": {"comm": literal_glob(th.comm)}}
            case TargetKind.IRQ:
                sel: dict[str, Any] = {"irq": [th.irq]}
                if len(th.names) == 1:
                    sel["action"] = th.names[0]
                if th.secondary:
                    sel["secondary"] = True
                return sel
            case TargetKind.NAPI:
                # the interface's NAPI kthreads, all of them; threaded_napi keeps the
                # interface polling in kthreads while the profile is in force
                return {"napi": napi_interface(th.comm), "threaded_napi": True}
            case TargetKind.SOFTIRQ:
                # this kthread on its CPU: a task selector never takes a kernel thread
                name, cpu = softirq_kthread(th.comm) or ("", 0)
                return {"softirq": {"kthreads": [name], "cpu": [cpu]}}
            case _:
                assert_never(self.kind)

    @property
    def served_comms(self) -> list[str]:
        """The comms of the processes this device thread served in the trace, most served
        first, as the recommended profile's ``serves: comm`` (docs/process-aware.md): those
        that read its packets where packets were counted, else those its wake-ups got at
        least :data:`SERVES_MIN_SHARE` of its time for; at most :data:`SERVES_MAX`. Empty
        for a task target (it serves nobody)."""
        if self.kind is TargetKind.TASK:
            return []
        procs = [s for s in self.served if s.pid > 0]     # not "(none)", the time unserved
        by_packets = any(s.packets for s in procs)
        chosen = [s for s in sorted(procs, key=lambda s: (-s.irq_time_ns, s.pid))
                  if (s.packets > 0 if by_packets else s.share >= SERVES_MIN_SHARE)]
        return list(dict.fromkeys(literal_glob(s.comm) for s in chosen))[:SERVES_MAX]

    def profile_target(self) -> tuple[str, dict[str, Any]] | None:
        """(comment, target) of this thread's recommended reservation, or None; the target
        lists the processes it served (``serves``), so that irqresd accounts its time to
        them live."""
        rec = self.recommendation
        if rec is None or rec.best is None:
            return None
        target = rec.profile_target(self.target_name, self.selector)
        comms = self.served_comms
        if comms:
            target["serves"] = {"comm": comms}
        return rec.profile_comment(), target


@dataclass
class Report:
    trace: Trace
    options: Options
    threads: list[ThreadReport]
    gaps: Gaps
    lines: list[LineRequests] = field(default_factory=list)

    # ---- output (irqres.report.render) ----------------------------------------------

    def profile(self) -> str:
        """One profile holding every thread that got a recommendation."""
        return render.profile(self)

    def to_dict(self) -> dict[str, Any]:
        """Everything, as JSON-safe data (``irqres analyze --json``, docs/json.md)."""
        return render.report_dict(self)

    def text(self) -> str:
        """Everything, as ``irqres analyze`` prints it."""
        return render.report_text(self)


@dataclass(frozen=True)
class ResponseCurves:
    """The response time of one thread as its plot draws it (integer ns, sorted).

    ``measured_ns`` are the response times as traced; under the recommended reservation,
    ``replay_ns`` are those of the recorded jobs replayed through it and
    ``predicted_cdf`` the model's P{response <= x} at each ``xs_ns`` (all three None
    without a recommendation)."""

    measured_ns: np.ndarray
    replay_ns: np.ndarray | None = None
    xs_ns: np.ndarray | None = None
    predicted_cdf: np.ndarray | None = None
