"""The threshold controller of a bottom-half scheduler (docs/controller.md), in integer
nanoseconds.

Per sampling interval i the caller reports N_pro jobs processed in T_pro ns of CPU time
and N_rmn jobs left over. The controller computes

    T_rmn  = N_rmn * T_pro // N_pro          (N_pro = 0: N_rmn * default_job)
    +dT    = s * (mean_AW(T_rmn) - T_rmn)
    -dT    = mean_AW(T_pro) - T_pro
    T_thr(i) = T_thr(i-1) + G * (+dT + -dT)

and the clamped threshold becomes the next budget Q. That is ``form="published"``. The
default, ``form="backlog"``, steers by the work that arrives and the backlog's level:

    t_job  = T_pro / N_pro                               (N_pro = 0: default_job)
    D(i)   = T_pro + (N_rmn(i) - N_rmn(i-1)) * t_job     (work arrived in i, >= 0)
    -dT    = mean_W(D) - T_thr(i-1)   (W = min(AW, tau) intervals up to i; T_thr
                                                  of the budget in force)
    +dT    = (N_rmn - hold) * t_job / tau                (drain the backlog beyond hold)
    tau    = G / (1 - sqrt(1 - G))^2                     (the loop critically damped)

The published term only reacts to *changes* of the left-over work: a backlog that stays
gives no further raise, and under a queued backlog the printed loop
z^2 - (2 - 2G) z + (1 - G) rings (damping ratio 0.26 at G = 0.25) between the clamps.
docs/controller.md derives both. T_thr is CPU time per sampling interval S, as in the
reference; the budget per server period T that delivers it is
Q = T_thr * T / S (the same number when S = T). Readings of the reference, each argued
in docs/controller.md:

* Published form: ``mean_AW`` is the mean of the *previous* AW samples; the current sample
  is not in its own reference. With an empty window (the first interval) both terms are
  0. The backlog form's demand mean includes the current interval.
* ``s`` orients the published left-over term. ``deferred`` (s = +1) is the formula as
  printed: in the reference, work above the threshold was handed to another context, so
  leaving more work than usual lowers the threshold. ``queued`` (s = -1, its default) is
  the reading for a SCHED_DEADLINE server, whose left-over work stays queued in the
  device: more left over than usual raises the budget. With s = +1 a queued backlog
  feeds on itself (shown by ``irqres simulate --form published --orientation deferred``).
* T_thr(i-1) is the previous *clamped* value (no wind-up beyond the clamps).
* The product G * (...) is rounded to the nearest ns; T_rmn is rounded down.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

from ..errors import IrqresError
from ..model import buffering
from ..model.kernel import KERNEL_MIN_RUNTIME_NS
from ..units import format_duration

ORIENTATIONS = {"queued": -1, "deferred": 1}
FORMS = ("backlog", "published")


def drain_intervals(gain: float) -> float:
    """tau of the backlog form: the drain time that makes its loop critically damped.

    While the thread is backlogged T_pro(i) = T_thr(i-1) and the backlog B grows by the
    arrivals minus T_thr(i-1); with +dT = B/tau the loop's characteristic polynomial is
    z^2 - (2 - G - G/tau) z + (1 - G), with a double real root when
    G/tau = (1 - sqrt(1 - G))^2 (tau = 13.9 at G = 0.25, 5.8 at G = 0.5, 1 at G = 1).
    """
    return gain / (1.0 - (1.0 - gain) ** 0.5) ** 2


class ControlError(IrqresError, ValueError):
    """Bad controller settings or inputs; the message names the value and the cause."""


@dataclass(frozen=True)
class ControllerConfig:
    """Settings of one adaptive target (the profile's ``adaptive`` block, in ns).

    ``min_runtime_ns``/``max_runtime_ns`` of 0 mean "derived": the buffering bound (or the
    kernel's 1024 ns) below, the deadline above.
    """

    name: str
    period_ns: int
    deadline_ns: int = 0                # 0: equal to the period
    sample_ns: int = 0                  # S; 0: equal to the period
    gain: float = 0.25
    window: int = 100
    default_job_ns: int = 20_000
    min_runtime_ns: int = 0
    max_runtime_ns: int = 0
    hysteresis_ns: int = 0
    buffer: int | None = None           # N_c
    min_interarrival_ns: int | None = None  # P
    orientation: str = "queued"
    form: str = "backlog"
    hold: int = 0                       # jobs the backlog form keeps queued (its set point)

    def __post_init__(self) -> None:
        def bad(what: str, why: str) -> ControlError:
            return ControlError(f"target {self.name}: {what}: {why}")

        for field in ("period_ns", "deadline_ns", "sample_ns", "default_job_ns",
                      "min_runtime_ns", "max_runtime_ns", "hysteresis_ns"):
            v = getattr(self, field)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise bad(field, f"must be a non-negative integer of ns, got {v!r}")
        if self.period_ns == 0:
            raise bad("period_ns", "must be positive")
        if self.deadline_ns > self.period_ns:
            raise bad("deadline_ns", f"{format_duration(self.deadline_ns)} is longer than the "
                      f"period {format_duration(self.period_ns)}")
        if not (isinstance(self.gain, int | float) and 0 < self.gain <= 1):
            raise bad("gain", f"must be in (0, 1], got {self.gain!r}")
        if isinstance(self.window, bool) or not isinstance(self.window, int) \
                or not 1 <= self.window <= 100_000:
            raise bad("window", f"must be an integer 1..100000, got {self.window!r}")
        if self.orientation not in ORIENTATIONS:
            raise bad("orientation", f"must be one of {', '.join(ORIENTATIONS)}, "
                      f"got {self.orientation!r}")
        if self.form not in FORMS:
            raise bad("form", f"must be one of {', '.join(FORMS)}, got {self.form!r}")
        if isinstance(self.hold, bool) or not isinstance(self.hold, int) or self.hold < 0:
            raise bad("hold", f"must be a non-negative number of jobs, got {self.hold!r}")
        for field in ("buffer", "min_interarrival_ns"):
            v = getattr(self, field)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v <= 0):
                raise bad(field, f"must be a positive integer or unset, got {v!r}")
        if self.buffer is not None and self.hold >= self.buffer:
            raise bad("hold", f"{self.hold} jobs do not fit in the device's buffer of "
                      f"{self.buffer}")
        if self.max_runtime_ns and self.min_runtime_ns > self.max_runtime_ns:
            raise bad("min_runtime_ns", f"{format_duration(self.min_runtime_ns)} is above "
                      f"max_runtime {format_duration(self.max_runtime_ns)}")

    @property
    def buffering_floor_ns(self) -> int:
        """Smallest Q with (T - Q)/P < N_c, i.e. Q > T - N_c*P; 0 when P or N_c is unknown."""
        if self.buffer is None or self.min_interarrival_ns is None:
            return 0
        return buffering.min_runtime(self.period_ns, self.min_interarrival_ns, self.buffer)

    @property
    def lower_ns(self) -> int:
        """The lower clamp: the profile's minimum, the buffering bound, the kernel's 1024."""
        return max(self.min_runtime_ns, self.buffering_floor_ns, KERNEL_MIN_RUNTIME_NS)

    @property
    def upper_ns(self) -> int:
        """The upper clamp from the profile: max_runtime, else the deadline."""
        dl = self.deadline_ns or self.period_ns
        return min(self.max_runtime_ns, dl) if self.max_runtime_ns else dl

    @classmethod
    def from_status(cls, target: dict) -> ControllerConfig:
        """Build from one TARGET of irqresd's ``status`` reply (docs/protocol.md)."""
        name = str(target.get("name", "?"))
        ad = target.get("adaptive")
        if not isinstance(ad, dict):
            raise ControlError(f"target {name}: irqresd reports no adaptive settings "
                               "(mode is not adaptive)")
        try:
            return cls(
                name=name,
                period_ns=int(target["period_ns"]),
                deadline_ns=int(target.get("deadline_ns") or 0),
                sample_ns=int(ad.get("sample_ns") or 0),
                gain=float(ad["gain"]),
                window=int(ad["window"]),
                default_job_ns=int(ad["default_job_ns"]),
                min_runtime_ns=int(ad.get("min_runtime_ns") or 0),
                max_runtime_ns=int(ad.get("max_runtime_ns") or 0),
                hysteresis_ns=int(ad.get("hysteresis_ns") or 0),
                buffer=target.get("buffer") or None,
                min_interarrival_ns=target.get("min_interarrival_ns") or None,
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ControlError):
                raise
            raise ControlError(f"target {name}: irqresd's status lacks or garbles "
                               f"{exc}") from exc


class Step(NamedTuple):
    """What one interval did: the terms, the threshold and the budget to send (a tuple:
    one is built per target per interval)."""

    t_rmn_ns: int
    d_plus_ns: int          # +dT, oriented (see the module docstring)
    d_minus_ns: int         # -dT
    threshold_ns: int       # T_thr(i) before clamping (per sampling interval)
    budget_ns: int          # the next Q (per period), from the clamped T_thr
    clamp: str | None       # "min", "max" or None
    send: bool              # moved more than the hysteresis since the last budget sent


class ThresholdController:
    """One target's controller. ``update`` once per sampling interval.

    Parameters
    ----------
    config
        The target's settings.
    initial_ns
        T_thr(0): the budget in force when the controller starts (clamped).
    """

    def __init__(self, config: ControllerConfig, initial_ns: int):
        self.config = config
        self._sign = ORIENTATIONS[config.orientation]
        self._backlog = config.form == "backlog"
        self._tau = drain_intervals(config.gain)
        # backlog form: work arrived per interval, over at most tau intervals (a longer
        # mean lags a rising budget by more than the drain term raises it)
        self._dem_window = min(config.window, max(round(self._tau), 1))
        self._dem: deque[int] = deque()
        self._sum_dem = 0
        self._last_rmn: int | None = None
        self._pro: deque[int] = deque()
        self._rmn: deque[int] = deque()
        self._sum_pro = 0
        self._sum_rmn = 0
        # T_thr lives per sampling interval S, Q per period T: Q = T_thr * T // S.
        self._t = config.period_ns
        self._s = config.sample_ns or config.period_ns
        self._lower = -(-config.lower_ns * self._s // self._t)     # ceil: Q >= lower
        self._upper = config.upper_ns * self._s // self._t          # floor: Q <= upper
        self.threshold_ns = 0
        self.sent_ns: int | None = None
        self.hold(int(initial_ns))

    def to_budget(self, threshold_ns: int) -> int:
        """The budget per period that gives ``threshold_ns`` per sampling interval."""
        return threshold_ns * self._t // self._s

    def hold(self, budget_ns: int) -> None:
        """Take ``budget_ns`` as the budget in force (e.g. after a refusal)."""
        self.threshold_ns = self._clamp(budget_ns * self._s // self._t, self._upper)[0]
        self.sent_ns = int(budget_ns)

    def _clamp(self, value: int, upper: int) -> tuple[int, str | None]:
        lower = self._lower
        # When the bandwidth left is below the lower bound the lower bound wins: a budget
        # under the buffering bound or the kernel's minimum is no use, and irqresd
        # refuses what admission control cannot fit.
        if value > upper and upper >= lower:
            return upper, "max"
        if value < lower:
            return lower, "min"
        if value > upper:
            return lower, "max"
        return value, None

    def reset(self, initial_ns: int) -> None:
        """Forget the window (e.g. after the thread came back) and start from ``initial_ns``."""
        self._pro.clear()
        self._rmn.clear()
        self._sum_pro = self._sum_rmn = 0
        self._dem.clear()
        self._sum_dem = 0
        self._last_rmn = None
        self.hold(int(initial_ns))

    def update(self, n_pro: int, t_pro_ns: int, n_rmn: int,
               bandwidth_left_ns: int | None = None) -> Step:
        """Feed one interval and return the step.

        Parameters
        ----------
        n_pro, t_pro_ns, n_rmn
            Jobs processed, CPU time they took (ns) and jobs left over in the interval.
        bandwidth_left_ns
            The largest runtime (per period) the root domain still admits for this target
            (its current budget plus the free bandwidth times the period); ``None`` when
            unknown.
        """
        cfg = self.config
        if not (type(n_pro) is int and type(t_pro_ns) is int and type(n_rmn) is int
                and n_pro >= 0 and t_pro_ns >= 0 and n_rmn >= 0):
            for what, v in (("N_pro", n_pro), ("T_pro", t_pro_ns), ("N_rmn", n_rmn)):
                if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                    raise ControlError(f"target {cfg.name}: {what} must be a non-negative "
                                       f"integer, got {v!r}")
        t_rmn = n_rmn * t_pro_ns // n_pro if n_pro else n_rmn * cfg.default_job_ns
        if self._backlog:
            # per-job time of this interval; the work that arrived (served + the backlog's
            # growth, in jobs at this time per job); its window mean is what Q must meet.
            per_job = t_pro_ns / n_pro if n_pro else cfg.default_job_ns
            grew = 0 if self._last_rmn is None else n_rmn - self._last_rmn
            self._last_rmn = n_rmn
            arrived = max(t_pro_ns + round(grew * per_job), 0)
            self._dem.append(arrived)
            self._sum_dem += arrived
            if len(self._dem) > self._dem_window:
                self._sum_dem -= self._dem.popleft()
            plus = (n_rmn - cfg.hold) * per_job / self._tau
            # against the budget in force (the hysteresis may hold a moved T_thr back)
            in_force = self.threshold_ns if self.sent_ns is None \
                else self.sent_ns * self._s // self._t
            minus = self._sum_dem / len(self._dem) - in_force
            d_plus, d_minus = round(plus), round(minus)
            delta = round(cfg.gain * (plus + minus))
        elif self._pro:
            n = len(self._pro)
            # mean - x == (sum - n*x) / n; G * (...) rounded once, at the end.
            num_plus = self._sign * (self._sum_rmn - n * t_rmn)
            num_minus = self._sum_pro - n * t_pro_ns
            d_plus = round(num_plus / n)
            d_minus = round(num_minus / n)
            delta = round(cfg.gain * (num_plus + num_minus) / n)
        else:
            d_plus = d_minus = delta = 0
        raw = self.threshold_ns + delta
        upper = self._upper if bandwidth_left_ns is None else min(
            self._upper, int(bandwidth_left_ns) * self._s // self._t)
        clamped, clamp = self._clamp(raw, upper)
        self.threshold_ns = clamped
        budget = self.to_budget(clamped)

        if not self._backlog:       # the published form's windows
            self._pro.append(t_pro_ns)
            self._rmn.append(t_rmn)
            self._sum_pro += t_pro_ns
            self._sum_rmn += t_rmn
            if len(self._pro) > cfg.window:
                self._sum_pro -= self._pro.popleft()
                self._sum_rmn -= self._rmn.popleft()

        send = self.sent_ns is None or abs(budget - self.sent_ns) > cfg.hysteresis_ns
        if send:
            self.sent_ns = budget
        return Step(t_rmn, d_plus, d_minus, raw, budget, clamp, send)
