"""Drive the threshold controller through a model of a CBS server with bursty arrivals.

The model, per sampling interval i (= one server period T):

* arrivals: a two-state Markov-modulated Poisson process. In state "on" the number of new
  jobs is Poisson(rate_on), in "off" Poisson(rate_off); the state flips with probability
  p_on_off / p_off_on at each interval. Each job needs ``job_ns`` of CPU, jittered
  uniformly by +-``job_jitter``, in integer ns.
* service: the IRQ thread runs up to its budget Q_i in the interval, first come first
  served; a job cut by the budget continues in the next period. Work left over stays
  queued (the device holds it), so it is carried to the next interval.
* the controller sees N_pro (jobs finished in i), T_pro (CPU time used in i) and N_rmn
  (jobs queued at the end of i) and returns Q_{i+1}.

The comparison is against a fixed budget equal to the average work per interval, which
has the same mean throughput when its queue does not grow without bound, and against no
limit at all (every job served in the interval it arrives).

``model="handoff"`` is the reference's own setting instead: in each interval the thread
runs whole jobs while they fit in the budget and hands the rest to another context, so
nothing is carried and N_rmn counts the jobs handed off.
"""

from __future__ import annotations

import bisect
from dataclasses import asdict, dataclass

import numpy as np

from .controller import ControlError, ControllerConfig, ThresholdController
from .limits import MAX_JOBS, max_rate


@dataclass(frozen=True)
class Workload:
    """Bursty arrivals; rates are jobs per interval."""

    intervals: int = 20_000
    interval_ns: int = 1_000_000
    job_ns: int = 20_000
    job_jitter: float = 0.5
    rate_on: float = 40.0
    rate_off: float = 10.0
    p_on_off: float = 0.3
    p_off_on: float = 0.3
    seed: int = 1
    traffic: str = "onoff"
    rate_sd: float = 2.0        # fluctuating: sd of the rate (jobs per interval) ...
    rate_corr: float = 0.6      # ... and its correlation from one interval to the next

    def __post_init__(self) -> None:
        checks = [
            ("intervals", 1 <= self.intervals <= 10_000_000, "1..10000000"),
            ("interval_ns", self.interval_ns > 0, "positive"),
            ("job_ns", self.job_ns > 0, "positive"),
            ("job_jitter", 0 <= self.job_jitter < 1, "in [0, 1)"),
            ("rate_on", self.rate_on >= 0, "non-negative"),
            ("rate_off", self.rate_off >= 0, "non-negative"),
            ("p_on_off", 0 < self.p_on_off <= 1, "in (0, 1]"),
            ("p_off_on", 0 < self.p_off_on <= 1, "in (0, 1]"),
            ("traffic", self.traffic in TRAFFIC, f"one of {', '.join(TRAFFIC)}"),
            ("rate_sd", self.rate_sd >= 0, "non-negative"),
            ("rate_corr", 0 <= self.rate_corr < 1, "in [0, 1)"),
        ]
        for name, ok, want in checks:
            if not ok:
                raise ControlError(f"simulation workload: {name} must be {want}, "
                                   f"got {getattr(self, name)!r}")
        top = max_rate(self.intervals)
        for name in ("rate_on", "rate_off", "rate_sd"):
            if not getattr(self, name) <= top:       # inf too
                raise ControlError(
                    f"simulation workload: {name} must be at most {top:g} jobs per "
                    f"interval over {self.intervals} intervals (a run keeps every job: "
                    f"{MAX_JOBS} at most), got {getattr(self, name)!r}")

    def generate(self) -> tuple[np.ndarray, np.ndarray]:
        """Jobs arrived per interval (int64) and each job's CPU time in ns (int64)."""
        rng = np.random.default_rng(self.seed)
        if self.traffic == "fluctuating":
            return self._fluctuating(rng)
        u = rng.random(self.intervals)
        on = np.empty(self.intervals, dtype=bool)
        state = False
        for i, x in enumerate(u.tolist()):
            state = (x >= self.p_on_off) if state else (x < self.p_off_on)
            on[i] = state
        counts = rng.poisson(np.where(on, self.rate_on, self.rate_off)).astype(np.int64)
        return counts, self._jobs(rng, counts)

    def _fluctuating(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Demand fluctuating around a mean: Poisson jobs at a rate ``rate_on`` + an AR(1)
        deviation (sd ``rate_sd``, lag-1 correlation ``rate_corr``: short correlated bursts).
        With ``rate_on`` 25 (jobs of 20 us +-50 %) the work per 1 ms has p1..p99 of
        263-779 us (seed 1), close to the reference's 200-850 us without control."""
        e = rng.standard_normal(self.intervals).tolist()
        c, k = self.rate_corr, (1.0 - self.rate_corr ** 2) ** 0.5
        dev = np.empty(self.intervals)
        v = 0.0
        for i, x in enumerate(e):
            v = c * v + k * x
            dev[i] = v
        rate = np.maximum(self.rate_on + self.rate_sd * dev, 0.0)
        counts = rng.poisson(rate).astype(np.int64)
        return counts, self._jobs(rng, counts)

    def _jobs(self, rng: np.random.Generator, counts: np.ndarray) -> np.ndarray:
        jitter = rng.uniform(-self.job_jitter, self.job_jitter, int(counts.sum()))
        return np.maximum(np.rint(self.job_ns * (1.0 + jitter)), 1).astype(np.int64)


TRAFFIC = ("onoff", "fluctuating")


@dataclass
class SimResult:
    """Per-interval series (int64 ns / counts) of one run."""

    label: str
    budget_ns: np.ndarray
    consumed_ns: np.ndarray     # T_pro: CPU time the thread used in each interval
    n_pro: np.ndarray
    n_rmn: np.ndarray           # jobs queued at the end of each interval
    dropped: np.ndarray         # jobs that found the device's buffer full (queued model)

    def summary(self) -> dict:
        c = self.consumed_ns
        p1, p99 = np.percentile(c, [1, 99])
        out = {
            "label": self.label,
            "mean_consumed_ns": round(float(c.mean())),
            "range_ns": int(c.max() - c.min()),
            "p1_p99_ns": round(float(p99 - p1)),
            "jobs_done": int(self.n_pro.sum()),
            "max_backlog": int(self.n_rmn.max()),
            "final_backlog": int(self.n_rmn[-1]),
            "dropped": int(self.dropped.sum()),
            "mean_budget_ns": round(float(self.budget_ns.mean())),
        }
        return out


def serve(workload: Workload, policy, label: str, initial_ns: int,
          buffer: int | None = None) -> SimResult:
    """Run the CBS model; ``policy(n_pro, t_pro, n_rmn) -> next budget`` (ns).

    With ``buffer`` (N_c) the device holds at most that many jobs: new jobs that find it
    full are dropped (counted in ``dropped``, as a NIC counts rx_missed).
    """
    counts, jobs = workload.generate()
    jobs_l = jobs.tolist()
    n = workload.intervals
    budget = np.empty(n, np.int64)
    consumed = np.empty(n, np.int64)
    n_pro = np.empty(n, np.int64)
    n_rmn = np.empty(n, np.int64)
    dropped = np.zeros(n, np.int64)
    cum: list[int] = []  # work finished when each kept job ends
    total = 0           # work of every kept job
    served = 0          # work served so far (ns)
    done = 0            # jobs finished so far
    nxt = 0             # next job in jobs_l
    q = int(initial_ns)
    for i, a in enumerate(counts.tolist()):
        room = a if buffer is None else max(min(a, buffer - (len(cum) - done)), 0)
        for w in jobs_l[nxt:nxt + room]:
            total += w
            cum.append(total)
        nxt += a
        dropped[i] = a - room
        used = min(q, total - served)
        served += used
        now_done = bisect.bisect_right(cum, served, done)
        budget[i], consumed[i] = q, used
        n_pro[i], n_rmn[i] = now_done - done, len(cum) - now_done
        done = now_done
        q = int(policy(int(n_pro[i]), used, int(n_rmn[i])))
    return SimResult(label, budget, consumed, n_pro, n_rmn, dropped)


def serve_handoff(workload: Workload, policy, label: str, initial_ns: int) -> SimResult:
    """The reference's setting: whole jobs while they fit in the budget, the rest of the
    interval's jobs handed to another context (not carried)."""
    counts, jobs = workload.generate()
    cum = [0, *np.cumsum(jobs).tolist()]
    starts = [0, *np.cumsum(counts).tolist()]
    n = workload.intervals
    budget = np.empty(n, np.int64)
    consumed = np.empty(n, np.int64)
    n_pro = np.empty(n, np.int64)
    n_rmn = np.empty(n, np.int64)
    q = int(initial_ns)
    for i in range(n):
        lo, hi = starts[i], starts[i + 1]
        end = bisect.bisect_right(cum, cum[lo] + q, lo, hi + 1) - 1   # last job that fits
        used = cum[end] - cum[lo]
        budget[i], consumed[i], n_pro[i], n_rmn[i] = q, used, end - lo, hi - end
        q = int(policy(end - lo, used, hi - end))
    return SimResult(label, budget, consumed, n_pro, n_rmn, np.zeros(n, np.int64))


MODELS = {"queued": serve, "handoff": serve_handoff}


def mean_work_ns(workload: Workload) -> int:
    _, jobs = workload.generate()
    return int(jobs.sum() // workload.intervals)


def simulate_fixed(workload: Workload, budget_ns: int | None = None,
                   buffer: int | None = None, model: str = "queued",
                   label: str = "fixed") -> SimResult:
    """A constant budget (default: the average work per interval)."""
    q = mean_work_ns(workload) if budget_ns is None else int(budget_ns)
    if model == "handoff":
        return serve_handoff(workload, lambda *_: q, label, q)
    return serve(workload, lambda *_: q, label, q, buffer)


def simulate_unlimited(workload: Workload) -> SimResult:
    """No limit: every job served in the interval it arrives (same in both models)."""
    _, jobs = workload.generate()
    return serve_handoff(workload, lambda *_: int(jobs.sum()) + 1, "no limit",
                         int(jobs.sum()) + 1)


def simulate_adaptive(workload: Workload, config: ControllerConfig,
                      initial_ns: int | None = None, model: str = "queued") -> SimResult:
    """The threshold controller choosing each next budget."""
    if model not in MODELS:
        raise ControlError(f"simulation: model must be one of {', '.join(MODELS)}, "
                           f"got {model!r}")
    q0 = mean_work_ns(workload) if initial_ns is None else int(initial_ns)
    if config.period_ns != workload.interval_ns:
        raise ControlError(f"target {config.name}: the model samples once per period: "
                           f"period_ns {config.period_ns} != interval_ns "
                           f"{workload.interval_ns}")
    ctl = ThresholdController(config, q0)
    label = "adaptive (backlog)" if config.form == "backlog" else \
        f"adaptive ({config.orientation})"
    q0 = ctl.to_budget(ctl.threshold_ns)
    if model == "handoff":
        return serve_handoff(workload, lambda a, b, c: ctl.update(a, b, c).budget_ns,
                             label, q0)
    return serve(workload, lambda a, b, c: ctl.update(a, b, c).budget_ns, label, q0,
                 config.buffer)


def compare(workload: Workload, config: ControllerConfig, model: str = "queued") -> dict:
    """No limit, fixed average and adaptive budgets (the queued model with the device
    buffer ``config.buffer``): each run's summary, and how many times smaller the
    adaptive run's consumption range is than the others' (``*_shrink``)."""
    if model not in MODELS:
        raise ControlError(f"simulation: model must be one of {', '.join(MODELS)}, "
                           f"got {model!r}")
    unlimited = simulate_unlimited(workload).summary()
    unlimited["mean_budget_ns"] = None
    fixed = simulate_fixed(workload, buffer=config.buffer, model=model).summary()
    adaptive = simulate_adaptive(workload, config, model=model).summary()

    def ratio(base: dict, key: str) -> float | None:
        return base[key] / adaptive[key] if adaptive[key] else None

    return {"workload": asdict(workload), "config": asdict(config), "model": model,
            "unlimited": unlimited, "fixed": fixed, "adaptive": adaptive,
            "range_shrink": ratio(fixed, "range_ns"),
            "p1_p99_shrink": ratio(fixed, "p1_p99_ns"),
            "range_shrink_vs_unlimited": ratio(unlimited, "range_ns"),
            "p1_p99_shrink_vs_unlimited": ratio(unlimited, "p1_p99_ns")}
