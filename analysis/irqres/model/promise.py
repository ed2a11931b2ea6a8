"""The promise checked: a trace recorded while the thread ran under a reservation (Q, T).

A recommendation promises P{response <= D} >= target. Recorded again under the
recommended (Q, T), the thread's activations say what it achieved: the fraction of them
that finished within D, with a 95% Wilson interval (the activations are not independent,
so the interval is a guide, not a test). Alongside, what the model and the replay give
for the same (Q, T) on these activations: the difference between them and the achieved
figure is what the model leaves out of the kernel.

Every time is an int64 number of nanoseconds.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from ..errors import ModelError
from ..pmf import Pmf, default_granularity
from . import format_exact
from .cbs import CbsModel
from .demand import DemandModel, check_activations
from .replay import replay

#: z of the two-sided 95% interval
_Z95 = 1.959963984540054


@dataclass(frozen=True)
class PromiseCheck:
    """Achieved against promised for one thread under (Q, T)."""

    runtime_ns: int
    period_ns: int
    deadline_ns: int
    promised: float
    jobs: int
    met: int
    low: float
    high: float
    model_prob: float | None
    replay_prob: float | None

    @property
    def achieved(self) -> float:
        """The fraction of the activations that finished within D."""
        return self.met / self.jobs if self.jobs else float("nan")

    @property
    def kept(self) -> bool:
        """The achieved fraction is at least the promise."""
        return self.jobs > 0 and self.achieved >= self.promised

    def to_dict(self) -> dict:
        return {**asdict(self), "achieved": self.achieved, "kept": self.kept}

    def text(self) -> str:
        verdict = "kept" if self.kept else "NOT kept"
        model = "-" if self.model_prob is None else f"{self.model_prob:.4f}"
        rep = "-" if self.replay_prob is None else f"{self.replay_prob:.4f}"
        return (f"under Q = {format_exact(self.runtime_ns)} every T = "
                f"{format_exact(self.period_ns)}: achieved P{{response <= "
                f"{format_exact(self.deadline_ns)}}} = {self.achieved:.4f} ({self.met} of "
                f"{self.jobs} activations, 95% [{self.low:.4f}, {self.high:.4f}]) against the "
                f"promised {self.promised}: {verdict}; on these activations the model gives "
                f"{model}, the replay {rep}")


def wilson(met: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of met/n."""
    if n <= 0:
        return 0.0, 1.0
    p = met / n
    z2 = _Z95 * _Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = _Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def check_promise(arrival_ns: np.ndarray, exec_ns: np.ndarray, response_ns: np.ndarray,
                  runtime_ns: int, period_ns: int, deadline_ns: int,
                  promised: float) -> PromiseCheck:
    """What the activations recorded under (``runtime_ns``, ``period_ns``) achieved
    against ``promised`` = P{response <= ``deadline_ns``}; with the model's and the
    replay's figure for the same reservation on the same activations.

    Raises
    ------
    ModelError
        A non-positive time, Q > T, a probability outside (0, 1), or arrays that do not
        match.
    """
    q, t, d = int(runtime_ns), int(period_ns), int(deadline_ns)
    if q <= 0 or t <= 0 or d <= 0 or q > t:
        raise ModelError(f"reservation under test: need 0 < Q <= T and D > 0, got Q = {q} ns, "
                         f"T = {t} ns, D = {d} ns")
    if not 0.0 < promised < 1.0:
        raise ModelError(f"promised probability: must be in (0, 1), got {promised}")
    resp = np.asarray(response_ns, dtype=np.int64)
    if resp.shape != np.shape(exec_ns):
        raise ModelError("response times: one per activation expected")
    met, n = int(np.count_nonzero(resp <= d)), int(resp.size)
    low, high = wilson(met, n)
    model_prob = replay_prob = None
    if n >= 2:
        arr, exe = check_activations(arrival_ns, exec_ns)
        g = default_granularity(exe)
        inter = np.diff(arr)
        try:
            if 2 * np.count_nonzero(inter >= t) >= inter.size:
                model: CbsModel = CbsModel(Pmf.from_samples(exe, g, rounding="up"),
                                           Pmf.from_samples(inter, g, rounding="down"))
            else:
                model = DemandModel.from_activations(arr, exe, t, g)
            model_prob = model.solve(q, t).prob_within(d)
        except ModelError:
            model_prob = None   # no chain fits these activations (the replay still runs)
        replay_prob = replay(arr, exe, q, t).prob_within(d)
    return PromiseCheck(q, t, d, float(promised), n, met, low, high, model_prob, replay_prob)
