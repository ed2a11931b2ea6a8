"""Recommend a reservation (Q, T) for an IRQ thread from its measured activations.

For each candidate period T the smallest budget Q is searched (bisection on the CBS
solver, which is monotone in Q) such that

- P{response <= D} - error_bound >= target_prob (D: ``deadline_ns``, default T),
- the buffering constraint (T - Q)/P < N_c holds when a buffer is given,
- Q >= 1024 ns (the kernel's minimum) and Q/T <= max_bandwidth;
- T within the kernel's deadline period limits, and at most ``max_slices`` budgets per
  job at the target quantile of the execution time (:mod:`.kernel`: one under tick
  enforcement, where the budget does not cut a job where the model assumes).

The model is chosen per period (``model="auto"``): the per-activation chain of
:mod:`.cbs` when most inter-arrival times are at least T, the per-period demand chain of
:mod:`.demand` otherwise (several interrupts per period); ``model="activation"`` or
``"demand"`` forces one. Each row says which model it used.

Each feasible row is then checked by a Monte Carlo run of the same chain and by a replay
of the real activations through a simulated SCHED_DEADLINE server. The best row is the
one with the least bandwidth (ties: the shorter period).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import yaml

from .. import profiledoc
from ..errors import ModelError
from ..pmf import Pmf, as_ns_array, default_granularity
from ..targetkind import SELECTOR_KEYS
from . import MODELS, buffering, format_exact
from .cbs import CbsModel, supply_units
from .demand import DemandModel, check_activations, demand_granularity, occupied_demand
from .kernel import KernelFacts
from .montecarlo import simulate
from .replay import replay

MIN_PERIOD_NS = 100_000
MAX_PERIOD_NS = 1_000_000_000
_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,63}$")
#: The fewest samples (activations, or periods of demand) any target is judged on
#: (see min_samples).
MIN_SAMPLES = 20
MIN_DEMAND_PERIODS = MIN_SAMPLES
#: The default response bound is the mean inter-arrival time, but never below this.
MIN_DEFAULT_BOUND_NS = 1_000_000


@dataclass(frozen=True, eq=False)
class Candidate:
    """One candidate period and the smallest budget that meets the target (or why not)."""

    period_ns: int
    deadline_ns: int
    runtime_ns: int | None = None
    reason: str | None = None
    solver_prob: float | None = None
    error_bound: float | None = None
    load: float | None = None
    mc_prob: float | None = None
    mc_low: float | None = None
    mc_high: float | None = None
    replay_prob: float | None = None
    buffer_check: buffering.BufferCheck | None = None
    model: str = "activation"  # "activation" or "demand": the chain this row was solved with
    granularity_ns: int | None = None  # Δ of that chain (None: no model was built)
    limited_by: str | None = None  # the lower bound that set Q above the model's need

    @property
    def feasible(self) -> bool:
        """True when a budget was found."""
        return self.runtime_ns is not None

    @property
    def bandwidth(self) -> float | None:
        """Q/T of the found budget."""
        return None if self.runtime_ns is None else self.runtime_ns / self.period_ns

    def to_dict(self) -> dict:
        """A JSON-ready dict."""
        return {
            "period_ns": self.period_ns,
            "deadline_ns": self.deadline_ns,
            "runtime_ns": self.runtime_ns,
            "bandwidth": self.bandwidth,
            "feasible": self.feasible,
            "reason": self.reason,
            "solver_prob": self.solver_prob,
            "error_bound": self.error_bound,
            "load": self.load,
            "mc_prob": self.mc_prob,
            "mc_ci": None if self.mc_low is None else [self.mc_low, self.mc_high],
            "replay_prob": self.replay_prob,
            "buffering": None if self.buffer_check is None else self.buffer_check.to_dict(),
            "model": self.model,
            "granularity_ns": self.granularity_ns,
            "limited_by": self.limited_by,
        }


@dataclass(frozen=True, eq=False)
class Recommendation:
    """The candidate rows of :func:`recommend` and the best of them."""

    rows: list[Candidate]
    target_prob: float
    granularity_ns: int
    max_bandwidth: float
    exec_pmf: Pmf
    interarrival_pmf: Pmf
    buffer: int | None = None
    min_interarrival_ns: int | None = None
    model: str = "auto"  # what was asked for; each row's ``model`` says what was used
    kernel: KernelFacts = field(default_factory=KernelFacts)
    max_slices: int = 1
    slice_exec_ns: int = 0  # the execution time at the target quantile the slices count
    _best: Candidate | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        ok = [r for r in self.rows if r.feasible]
        best = min(ok, key=lambda r: ((r.runtime_ns or 0) / r.period_ns, r.period_ns),
                   default=None)
        object.__setattr__(self, "_best", best)

    @property
    def best(self) -> Candidate | None:
        """The feasible row with the least bandwidth, or None when none is feasible."""
        return self._best

    def to_dict(self) -> dict:
        """A JSON-ready dict of the inputs, every row and the best one."""
        return {
            "target_prob": self.target_prob,
            "granularity_ns": self.granularity_ns,
            "max_bandwidth": self.max_bandwidth,
            "buffer": self.buffer,
            "min_interarrival_ns": self.min_interarrival_ns,
            "model": self.model,
            "kernel": self.kernel.to_dict(),
            "max_slices": self.max_slices,
            "slice_exec_ns": self.slice_exec_ns,
            "rows": [r.to_dict() for r in self.rows],
            "best": None if self.best is None else self.best.to_dict(),
        }

    def profile_target(self, name: str, selector: dict[str, Any]) -> dict[str, Any]:
        """The best reservation as one target of a profile (docs/profile.md).

        Parameters
        ----------
        name
            The target's name, ``[A-Za-z0-9_.-]{1,63}``.
        selector
            The selector keys, e.g. ``{"irq": [11]}`` or ``{"task": {"comm": "ctrl"}}``.
        """
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise ModelError(f"target name {name!r}: must match [A-Za-z0-9_.-]{{1,63}}")
        if not isinstance(selector, dict) or not selector:
            raise ModelError(f"selector {selector!r}: expected keys such as 'irq: [11]'")
        unknown = sorted(set(map(str, selector)) - SELECTOR_KEYS)
        if unknown:
            raise ModelError(
                f"selector: unknown key(s) {', '.join(unknown)}; "
                f"use {', '.join(sorted(SELECTOR_KEYS))}"
            )
        best, runtime_ns = self._best_or_raise()
        target: dict[str, Any] = {"name": name, **selector,
                                  "runtime": format_exact(runtime_ns),
                                  "period": format_exact(best.period_ns)}
        if self.buffer is not None and self.min_interarrival_ns is not None:
            target["min_interarrival"] = format_exact(self.min_interarrival_ns)
            target["buffer"] = self.buffer
        return target

    def profile_comment(self) -> str:
        """What the best reservation achieves, for the line above its target."""
        best, _ = self._best_or_raise()
        replay_prob = "n/a" if best.replay_prob is None else f"{best.replay_prob:.6f}"
        return (f"P{{response <= {format_exact(best.deadline_ns)}}} >= {self.target_prob} "
                f"({best.model} model {best.solver_prob:.6f}, replay {replay_prob})")

    def profile_snippet(self, name: str, selector: dict[str, Any] | str) -> str:
        """A profile (docs/profile.md) holding the best reservation for one target.

        ``selector`` as in :meth:`profile_target`, or as YAML text (``"irq: [11]"``).
        """
        sel: Any = selector
        if isinstance(selector, str):
            try:
                sel = yaml.safe_load(selector)
            except yaml.YAMLError as exc:
                raise ModelError(f"selector {selector!r}: not valid YAML: {exc}") from exc
        target = self.profile_target(name, sel)
        return profiledoc.dump([(self.profile_comment(), target)])

    def _best_or_raise(self) -> tuple[Candidate, int]:
        """The best row and its runtime, or the reasons why no row is feasible."""
        best = self.best
        if best is None or best.runtime_ns is None:
            reasons = "; ".join(f"{format_exact(r.period_ns)}: {r.reason}" for r in self.rows)
            raise ModelError(f"no candidate period meets the target ({reasons})")
        return best, best.runtime_ns


def default_periods(mean_interarrival_ns: float, count: int = 16) -> list[int]:
    """Log-spaced periods from 0.1x to 50x the mean inter-arrival, in [100us, 1s].

    Periods shorter than the typical inter-arrival suit the per-activation model, longer
    ones the per-period demand model (several interrupts per period). Each is rounded to
    two significant digits; duplicates after clipping are dropped.
    """
    if not mean_interarrival_ns > 0:
        raise ModelError("activations: the mean inter-arrival time is 0; no period fits")
    raw = np.geomspace(0.1 * mean_interarrival_ns, 50.0 * mean_interarrival_ns, count)
    return sorted({_two_digits(x) for x in np.clip(raw, MIN_PERIOD_NS, MAX_PERIOD_NS)})


def default_response_bound(interarrival_ns: np.ndarray) -> int:
    """The response bound D used when the engineer gives none: the mean inter-arrival
    time of the activations (a thread that usually finishes before its next wake-up
    keeps up with its device), in whole µs, but at least :data:`MIN_DEFAULT_BOUND_NS`."""
    x = np.asarray(interarrival_ns, dtype=np.int64)
    if x.size == 0 or int(x.sum()) <= 0:
        raise ModelError("activations: no inter-arrival time measured; give a deadline")
    return max(int(x.sum()) // x.size // 1000 * 1000, MIN_DEFAULT_BOUND_NS)


def deadline_periods(deadline_ns: int, count: int = 12) -> list[int]:
    """Candidate periods for a response bound D: log-spaced from D/20 to D, in
    [100us, 1s], two significant digits. A period longer than D can meet D only with
    Q > T - D (more than 1 - D/T of the CPU), so none is tried by default."""
    d = int(deadline_ns)
    if d <= 0:
        raise ModelError(f"deadline: must be positive, got {d}")
    raw = np.geomspace(d / 20.0, float(d), count)
    return sorted({min(_two_digits(x), max(d, MIN_PERIOD_NS))
                   for x in np.clip(raw, MIN_PERIOD_NS, MAX_PERIOD_NS)})


def _two_digits(x: float) -> int:
    scale = 10 ** max(math.floor(math.log10(x)) - 1, 0)
    return int(np.rint(x / scale)) * scale


def recommend(
    arrival_ns: np.ndarray,
    exec_ns: np.ndarray,
    *,
    periods_ns: list[int] | np.ndarray | None = None,
    target_prob: float = 0.99,
    deadline_ns: int | None = None,
    buffer: int | None = None,
    min_interarrival_ns: int | None = None,
    max_bandwidth: float = 0.9,
    granularity_ns: int | None = None,
    max_delta: int = 10,
    mc_jobs: int = 100_000,
    run_replay: bool = True,
    seed: int = 0,
    model: str = "auto",
    kernel: KernelFacts | None = None,
    max_slices: int | None = None,
    searched: dict[tuple[int, int], dict] | None = None,
) -> Recommendation:
    """The smallest budget per candidate period, checked three ways.

    Parameters
    ----------
    arrival_ns
        Activation (or IRQ request) times, int64 ns, sorted; at least two.
    exec_ns
        Execution time of each activation, int64 ns, same length.
    periods_ns
        Candidate periods (default: :func:`deadline_periods` of ``deadline_ns`` when it
        is given, else :func:`default_periods` of the mean inter-arrival).
    target_prob
        Required P{response <= deadline}, in (0, 1).
    deadline_ns
        The response-time bound (default: each row's period).
    buffer, min_interarrival_ns
        N_c and P for the buffering constraint; P defaults to the smallest measured
        inter-arrival time. Without ``buffer`` the constraint is not applied.
    max_bandwidth
        The largest Q/T allowed, in (0, 1].
    granularity_ns
        Δ of the per-activation model (default: :func:`default_granularity` of the
        execution times). The demand model of a period T uses the larger of Δ and
        :func:`default_granularity` of that period's demands.
    max_delta, mc_jobs, run_replay, seed
        Largest δ of the model, Monte Carlo length (0: no Monte Carlo), whether to replay
        the activations, and the Monte Carlo seed.
    model
        ``"auto"`` (per period: the per-activation model when at least half of the
        inter-arrival times are >= T or when the activations span fewer periods than
        :func:`min_demand_periods`, else the per-period demand model),
        ``"activation"`` or ``"demand"`` (a row without enough periods is infeasible).
    kernel
        The kernel's limits and budget enforcement (default: the kernel's defaults, tick
        enforcement at HZ=250; :func:`.kernel.host_facts` reads the running kernel's).
        A period the kernel refuses is an infeasible row.
    max_slices
        The most budgets a job at the ``target_prob`` quantile of the execution times
        may need (Q >= c_p / max_slices); default ``kernel.default_max_slices()``.
    searched
        The budgets already searched, by (period, deadline): filled with this call's and
        read instead of searching again. Only for calls on the same activations with the
        same options but ``mc_jobs``, ``run_replay`` and ``seed`` (what checks a row, not
        what finds its budget), as :func:`.bound.near_use_bound` makes them.
    """
    if model not in MODELS:
        raise ModelError(f"model: must be one of {', '.join(MODELS)}, got {model!r}")
    arr, exe = check_activations(arrival_ns, exec_ns)
    if arr.size < 2:
        raise ModelError(f"activations: need at least 2 to measure inter-arrivals, got {arr.size}")
    inter = np.diff(arr)
    _check_shares(target_prob, max_bandwidth)
    gran = default_granularity(exe) if granularity_ns is None else granularity_ns
    exec_pmf = Pmf.from_samples(exe, gran, rounding="up")
    inter_pmf = Pmf.from_samples(inter, gran, rounding="down")
    act_model = CbsModel(exec_pmf, inter_pmf)
    p_min = _buffering_interarrival(buffer, min_interarrival_ns, inter)
    periods = _candidate_periods(periods_ns, deadline_ns, inter)
    kernel = KernelFacts() if kernel is None else kernel
    slices = _max_slices(kernel, max_slices)
    c_p = int(np.quantile(exe, target_prob, method="higher"))
    search = _Search(arr, exe, deadline_ns, target_prob, buffer, p_min, max_bandwidth,
                     max_delta, mc_jobs, run_replay, seed, kernel, -(-c_p // slices), slices,
                     {} if searched is None else searched)
    rows = [
        Candidate(t, t if deadline_ns is None else int(deadline_ns),
                  reason=kernel.period_refused(t)) if kernel.period_refused(t) else
        _candidate(*_model_for(model, act_model, arr, exe, inter, t, target_prob), t, search)
        for t in sorted(set(periods))
    ]
    return Recommendation(rows, target_prob, act_model.granularity_ns, max_bandwidth,
                          exec_pmf, inter_pmf, None if buffer is None else int(buffer), p_min,
                          model, kernel, slices, c_p)


def _check_shares(target_prob: float, max_bandwidth: float) -> None:
    if not 0.0 < target_prob < 1.0:
        raise ModelError(f"target probability: must be in (0, 1), got {target_prob}")
    if not 0.0 < max_bandwidth <= 1.0:
        raise ModelError(f"max bandwidth: must be in (0, 1], got {max_bandwidth}")


def _buffering_interarrival(buffer: int | None, min_interarrival_ns: int | None,
                            inter: np.ndarray) -> int | None:
    """P of the buffering check (None without ``buffer``): the one given, else the
    smallest measured inter-arrival; ModelError for a bad N_c or a P of 0."""
    if buffer is None:
        return None
    if isinstance(buffer, bool) or not isinstance(buffer, int | np.integer) or buffer < 1:
        raise ModelError(f"buffer: must be a positive number of interrupts, got {buffer!r}")
    p_min = int(inter.min()) if min_interarrival_ns is None else int(min_interarrival_ns)
    if p_min <= 0:
        raise ModelError(
            "min inter-arrival: the smallest measured inter-arrival is 0 ns "
            "(simultaneous activations); give min_interarrival_ns explicitly"
        )
    return p_min


def _candidate_periods(periods_ns: list[int] | np.ndarray | None, deadline_ns: int | None,
                       inter: np.ndarray) -> list[int]:
    """The periods given, else :func:`deadline_periods` of the bound, else
    :func:`default_periods` of the mean inter-arrival; ModelError for a bad one or a
    bound that is not positive."""
    if periods_ns is None and deadline_ns is not None and int(deadline_ns) > 0:
        periods = deadline_periods(int(deadline_ns))
    elif periods_ns is None:
        periods = default_periods(float(inter.mean()))
    else:
        periods = [int(t) for t in as_ns_array(periods_ns, "periods")]
        if not periods or min(periods) <= 0:
            raise ModelError("periods: give at least one positive period")
    if deadline_ns is not None and int(deadline_ns) <= 0:
        raise ModelError(f"deadline: must be positive, got {deadline_ns}")
    return periods


def _max_slices(kernel: KernelFacts, max_slices: int | None) -> int:
    """The most budgets a job may need: the one given, else the kernel's default."""
    if max_slices is None:
        max_slices = kernel.default_max_slices()
    if isinstance(max_slices, bool) or not isinstance(max_slices, int | np.integer) \
            or max_slices < 1:
        raise ModelError(f"max slices: must be a positive number of budgets, got {max_slices!r}")
    return int(max_slices)


def row_model(arrival_ns: np.ndarray, exec_ns: np.ndarray, row: Candidate) -> CbsModel:
    """The chain a feasible row was solved with, rebuilt from the same activations."""
    if row.granularity_ns is None:
        raise ModelError(f"period {format_exact(row.period_ns)}: the row has no model")
    arr, exe = check_activations(arrival_ns, exec_ns)
    g = int(row.granularity_ns)
    if row.model == "demand":
        return DemandModel.from_activations(arr, exe, row.period_ns, g)
    return CbsModel(Pmf.from_samples(exe, g, rounding="up"),
                    Pmf.from_samples(np.diff(arr), g, rounding="down"))


def predicted_response_cdf(arrival_ns: np.ndarray, exec_ns: np.ndarray, row: Candidate,
                           x_ns: np.ndarray) -> np.ndarray:
    """P{response <= x} for each x under the row's reservation, as the model predicts it
    (the budget surely supplied within x, as :meth:`CbsResult.prob_within`)."""
    q_ns = row.runtime_ns
    if q_ns is None:
        raise ModelError(f"period {format_exact(row.period_ns)}: no budget was found")
    model = row_model(arrival_ns, exec_ns, row)
    res = model.solve(q_ns, row.period_ns, max_delta=1)
    g = model.granularity_ns
    units = [supply_units(max(int(x), 0), q_ns, row.period_ns, g) for x in x_ns]
    out = res.prob_v_le(np.asarray(units, dtype=np.int64))
    if out is None:
        raise ModelError(f"period {format_exact(row.period_ns)}: the chain is unstable")
    return np.asarray(out, dtype=np.float64)


def min_samples(target_prob: float) -> int:
    """The fewest samples a target can be judged on: at least 20, and at least
    1/(1 - target), so that the 1 - target tail can show at all (100 for 0.99, 1,000
    for 0.999). Activations for a thread, periods of demand for the demand model."""
    return max(MIN_SAMPLES, math.ceil(1.0 / (1.0 - target_prob) - 1e-9))


def min_demand_periods(target_prob: float) -> int:
    """The fewest periods the demand model accepts for a target (:func:`min_samples`)."""
    return min_samples(target_prob)


def _model_for(kind, act_model, arr, exe, inter, t, target) -> tuple[CbsModel | str, str]:
    """The chain for period ``t`` (the per-activation model, or this period's demand
    model), or the reason why the demand of period ``t`` cannot be used; and a note for
    the row when ``"auto"`` had to fall back to the per-activation model because the
    activations span too few periods of ``t`` for the demand model
    (see :func:`min_demand_periods`).
    """
    auto = kind == "auto"
    if auto:
        kind = "activation" if 2 * np.count_nonzero(inter >= t) >= inter.size else "demand"
    if kind == "activation":
        return act_model, ""
    need = min_demand_periods(target)
    try:
        demand, jobs, periods = occupied_demand(arr, exe, t)
    except ModelError as exc:
        why = str(exc)
    else:
        if periods >= need:
            g = max(act_model.granularity_ns, demand_granularity(demand, periods))
            return DemandModel.from_demand(demand, jobs, t, g, periods=periods), ""
        why = (
            f"the activations span {periods} periods of {format_exact(t)}, fewer "
            f"than the {need} a target of {target} needs; record longer"
        )
    if auto:
        return act_model, f"not the demand model: {why}"
    return f"demand model: {why}", ""


@dataclass(frozen=True)
class _Search:
    """What every candidate row is searched and checked with (recommend()'s inputs)."""

    arr: np.ndarray
    exe: np.ndarray
    deadline_ns: int | None
    target: float
    buffer: int | None
    p_min: int | None
    max_bw: float
    max_delta: int
    mc_jobs: int
    run_replay: bool
    seed: int
    kernel: KernelFacts
    slice_min_ns: int   # Q that keeps a job at the target quantile within max_slices
    max_slices: int
    searched: dict[tuple[int, int], dict]  # _search_row's answers by (period, deadline)


def _candidate(model: CbsModel | str, note: str, t: int, s: _Search) -> Candidate:
    d = t if s.deadline_ns is None else int(s.deadline_ns)
    if isinstance(model, str):
        return Candidate(t, d, reason=model, model="demand")
    kind = "demand" if isinstance(model, DemandModel) else "activation"
    found = s.searched.get((t, d))
    if found is None:
        found = s.searched[(t, d)] = _search_row(model, t, d, s)
    row = dict(found)
    if row.get("runtime_ns") is not None:
        row.update(_row_checks(model, row["runtime_ns"], t, d, s))
    if note and row.get("reason"):
        row["reason"] += f" ({note})"
    return Candidate(t, d, **row, model=kind, granularity_ns=model.granularity_ns)


def _search_row(model: CbsModel, t: int, d: int, s: _Search) -> dict:
    """The fields of a candidate row for one model and period: the smallest budget that
    meets the target (unchecked: see :func:`_row_checks`), or the reason why none does."""
    g = model.granularity_ns
    q_hi = math.floor(s.max_bw * t) // g
    bounds = _lower_bounds(model, t, s)  # lower bounds on q, in units of g
    zv, zp = model.z_pmf(t)
    ez = float(np.dot(zv, zp))
    if ez == 0.0 and model.mean_c > 0:
        return {
            "reason": "every inter-arrival is shorter than the period, so the "
            "per-activation model (inter-arrivals in whole periods, rounded down) sees "
            "an unbounded backlog at any budget; the demand model counts the work per "
            "period instead"
        }
    if ez > 0:
        # Stability needs E[c] < q·E[z]; equality is kept for the deterministic case.
        bounds["stability"] = math.ceil(model.mean_c / ez - 1e-9)
    q_lo = max(bounds.values())
    if q_hi < 1 or q_lo > q_hi:
        over = [
            f"{what} needs runtime >= {format_exact(q * g)} ({q * g / t:.0%})"
            for what, q in bounds.items()
            if q > q_hi
        ]
        return {"reason": f"needs more than {s.max_bw:.0%} of the CPU: " + "; ".join(over)}

    def solve(q: int):
        res = model.solve(q * g, t, s.max_delta)
        p = res.prob_within(d)
        return res, p, p is not None and p - res.error_bound >= s.target

    res, p, ok = solve(q_hi)
    if not ok:
        shown = "unstable" if p is None else f"{p:.6f}"
        return {
            "reason": f"P{{response <= {format_exact(d)}}} = {shown} < "
            f"{s.target} even at {s.max_bw:.0%} of the CPU",
            "load": res.load,
        }
    lo, hi, best = q_lo, q_hi, (res, p)
    while lo < hi:
        mid = (lo + hi) // 2
        r_mid, p_mid, ok_mid = solve(mid)
        if ok_mid:
            hi, best = mid, (r_mid, p_mid)
        else:
            lo = mid + 1
    res, p = best  # hi only moves to budgets that pass
    # a lower bound that kept Q above what the model alone needs
    limited = None
    if hi == q_lo and hi > 1 and solve(hi - 1)[2]:
        limited = max(bounds, key=lambda w: bounds[w])
    return {
        "limited_by": limited,
        "runtime_ns": hi * g,
        "solver_prob": p,
        "error_bound": res.error_bound,
        "load": res.load,
    }


def _lower_bounds(model: CbsModel, t: int, s: _Search) -> dict[str, int]:
    """What keeps the budget of period t from below, each in units of the model's Δ:
    the kernel's minimum, the budget slices per job, the buffering constraint."""
    g = model.granularity_ns
    bounds = {"the kernel minimum": -(-s.kernel.runtime_min_ns // g)}
    slices = (f"at most {s.max_slices} budget slice{'s' if s.max_slices > 1 else ''} per job "
              f"({s.kernel.enforcement} enforcement; --max-slices)")
    bounds[slices] = -(-s.slice_min_ns // g)
    if s.buffer is not None and s.p_min is not None:   # p_min is known whenever buffer is
        need = buffering.check(t, t, s.p_min, s.buffer).min_runtime_for(t)
        bounds["the buffering constraint"] = -(-need // g)
    return bounds


def _row_checks(model: CbsModel, q_ns: int, t: int, d: int, s: _Search) -> dict:
    """The checks of a row's budget: buffering, Monte Carlo and replay (those asked)."""
    row: dict = {}
    if s.buffer is not None and s.p_min is not None:
        row["buffer_check"] = buffering.check(q_ns, t, s.p_min, s.buffer)
    if s.mc_jobs:
        limit = supply_units(d, q_ns, t, model.granularity_ns)
        mc = simulate(model, q_ns, t, n_jobs=s.mc_jobs, seed=s.seed,
                      limits_units=np.array([limit]))
        row.update(mc_prob=float(mc.prob[0]), mc_low=float(mc.low[0]), mc_high=float(mc.high[0]))
    if s.run_replay:
        row["replay_prob"] = replay(s.arr, s.exe, q_ns, t,
                                    max_delta=s.max_delta).prob_within(d)
    return row
