"""Stochastic analysis of an IRQ thread served by a CBS (SCHED_DEADLINE) reservation.

The model (docs/model.md): time in units of the granularity Δ, the budget q = floor(Q/Δ),
the execution time c of a job (rounded up to Δ) and the inter-arrival time z counted in
whole server periods (floor(a/T)). The backlog right after the k-th arrival is

    v_{k+1} = max(v_k - z_k·q, 0) + c_{k+1},

and a job finishes within δ server periods iff v <= δ·q. The chain is stable iff
E[c] < q·E[z]; an unstable setting gets ``stable=False`` and no probabilities.

Solver. With W_k = max(v_k - z_k·q, 0), W_{k+1} = max(W_k + X, 0) with X = c - z·q: a
Lindley recursion, whose stationary W is the supremum of the random walk with steps X
and v = W + c. Spitzer's identity gives the law of that supremum,

    E[exp(iθW)] = exp( Σ_{k>0} b_k (e^{iθk} - 1) ),   b_k = Σ_{n>=1} P{S_n = k}/n,

and Σ_k b_k e^{(β+iθ)k} = -log(1 - E[e^{(β+iθ)X}]) for any 0 < β < gamma, where gamma > 0 is the
Cramér root E[e^{gammaX}] = 1. Tilting by β = gamma/2 removes the singularity at θ = 0, so both
steps are a handful of FFTs of size M: O(M log M), no truncated transition matrix.

Error. The FFTs are cyclic: coefficients that fall outside the grid of M points wrap
around. After untilting, the positive b_k carry an aliasing error below
(1+Λ)·M·exp(-β·M/2) with Λ = -log(1 - E[e^{βX}]), and the law of W loses
P{W >= M} <= exp(-gamma·M) (Kingman's bound) to wrapping. M is the smallest power of two
with β·M/2 >= 40 and at least four times the execution-time range, capped at 2^20; the
sum of both terms is reported as ``error_bound`` (about 1e-15 unless the cap binds,
i.e. unless the load is within a hair of 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import logsumexp

from ..errors import ModelError
from ..pmf import Pmf

#: Largest FFT grid the solver uses (see the module docstring).
MAX_GRID = 1 << 20
_TAIL_EXPONENT = 40.0  # β·M/2 >= this: aliasing below e^-40 per coefficient
_MAX_TILT_EXPONENT = 300.0  # keeps e^{β·c} well inside float64


def _positive_int(value: object, what: str) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise ModelError(f"{what}: expected integer nanoseconds, got {value!r}")
    v = int(value.__index__())
    if v <= 0:
        raise ModelError(f"{what}: must be positive, got {v}")
    return v


def supply_units(duration_ns: int, runtime_ns: int, period_ns: int, unit_ns: int) -> int:
    """The budget a CBS (Q, T) surely supplies within ``duration_ns``, in units of Δ.

    Within δ·T + r the server supplies at least δ·q + max(0, r - (T - Q)) (budget given
    at the end of each period, the worst case); δ whole periods give exactly δ·q.
    """
    whole, rest = divmod(int(duration_ns), period_ns)
    extra = max(0, rest - (period_ns - runtime_ns))
    return whole * (runtime_ns // unit_ns) + extra // unit_ns


@dataclass(frozen=True, eq=False)
class CbsResult:
    """The stationary analysis of one (Q, T).

    ``prob[i]`` is P{response <= (i+1)·T} for i = 0 .. max_delta-1, or None when the
    chain is unstable. ``load`` is E[c]/(q·E[z]); ``error_bound`` bounds the numerical
    error of every probability (see the module docstring).
    """

    runtime_ns: int
    period_ns: int
    granularity_ns: int
    q: int
    load: float
    stable: bool
    max_delta: int
    prob: np.ndarray | None
    error_bound: float
    decay_rate: float  # gamma: P{W > x} <= exp(-gamma·x), x in units of Δ (inf: W is always 0)
    grid: int
    _backlog_cdf: np.ndarray | None  # P{W <= x}, x = 0 .. grid-1
    _exec: np.ndarray  # the execution-time PMF in units of Δ

    @property
    def bandwidth(self) -> float:
        """Q/T."""
        return self.runtime_ns / self.period_ns

    def prob_v_le(self, units: np.ndarray | int) -> np.ndarray | float | None:
        """P{v <= x} for x in units of Δ (None when unstable)."""
        if self._backlog_cdf is None:
            return None
        xs = np.atleast_1d(np.asarray(units, dtype=np.int64))
        fw, c = self._backlog_cdf, self._exec
        out = np.empty(xs.size)
        j = np.arange(c.size)
        for i, x in enumerate(xs):
            idx = x - j
            vals = np.where(idx < 0, 0.0, fw[np.clip(idx, 0, fw.size - 1)])
            vals[idx >= fw.size] = 1.0
            out[i] = float(np.dot(c, vals))
        out = np.clip(out, 0.0, 1.0)
        return out if np.ndim(units) else float(out[0])

    def prob_within(self, deadline_ns: int) -> float | None:
        """P{response <= deadline_ns}, using the budget surely supplied in that time."""
        d = _positive_int(deadline_ns, "deadline")
        return self.prob_v_le(supply_units(d, self.runtime_ns, self.period_ns, self.granularity_ns))

    def to_dict(self) -> dict:
        """A JSON-ready dict; unstable settings have ``prob: null``."""
        return {
            "runtime_ns": self.runtime_ns,
            "period_ns": self.period_ns,
            "granularity_ns": self.granularity_ns,
            "q": self.q,
            "load": self.load,
            "stable": self.stable,
            "prob_within_periods": None if self.prob is None else [float(p) for p in self.prob],
            "error_bound": self.error_bound,
        }


class CbsModel:
    """The execution and inter-arrival PMFs of one IRQ thread, ready for many (Q, T).

    Parameters
    ----------
    exec_pmf
        Execution times per activation.
    interarrival_pmf
        Times between activations.
    granularity_ns
        Δ, the time unit of the chain (default: the execution PMF's granularity).
        Execution times are rounded up to it.
    """

    def __init__(self, exec_pmf: Pmf, interarrival_pmf: Pmf, granularity_ns: int | None = None):
        if not isinstance(exec_pmf, Pmf) or not isinstance(interarrival_pmf, Pmf):
            raise ModelError("CBS model: expected two Pmf objects (execution, inter-arrival)")
        g = exec_pmf.granularity_ns if granularity_ns is None else granularity_ns
        self.granularity_ns = _positive_int(g, "granularity")
        self.exec_pmf = exec_pmf
        self.interarrival_pmf = interarrival_pmf
        self.c = exec_pmf.dense(self.granularity_ns, rounding="up")
        self.c.setflags(write=False)
        self._c_support = np.flatnonzero(self.c)
        self._log_c = np.log(self.c[self._c_support])
        self.mean_c = float(np.dot(np.arange(self.c.size), self.c))
        self.c_max = int(self._c_support[-1])
        self._z_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def z_pmf(self, period_ns: int) -> tuple[np.ndarray, np.ndarray]:
        """Inter-arrival in whole server periods: (values, probabilities), values sorted."""
        t = _positive_int(period_ns, "period")
        hit = self._z_cache.get(t)
        if hit is None:
            z = self.interarrival_pmf.values_ns // t
            values, inverse = np.unique(z, return_inverse=True)
            probs = np.bincount(inverse.ravel(), weights=self.interarrival_pmf.probs)
            hit = (values.astype(np.int64), probs)
            if len(self._z_cache) >= 256:
                self._z_cache.clear()
            self._z_cache[t] = hit
        return hit

    def q_units(self, runtime_ns: int, period_ns: int) -> int:
        """q = floor(Q/Δ), checking 0 < Q <= T and Q >= Δ."""
        q_ns = _positive_int(runtime_ns, "runtime")
        t = _positive_int(period_ns, "period")
        if q_ns > t:
            raise ModelError(f"runtime {q_ns} ns is larger than the period {t} ns")
        q = q_ns // self.granularity_ns
        if q < 1:
            raise ModelError(
                f"runtime {q_ns} ns is smaller than the granularity {self.granularity_ns} ns"
            )
        return q

    def load(self, runtime_ns: int, period_ns: int) -> float:
        """E[c]/(q·E[z]): the chain is stable iff this is below 1."""
        q = self.q_units(runtime_ns, period_ns)
        zv, zp = self.z_pmf(period_ns)
        ez = float(np.dot(zv, zp))
        if self.mean_c == 0.0:
            return 0.0
        return math.inf if ez == 0.0 else self.mean_c / (q * ez)

    def solve(self, runtime_ns: int, period_ns: int, max_delta: int = 10) -> CbsResult:
        """The stationary analysis for budget ``runtime_ns`` every ``period_ns``."""
        q = self.q_units(runtime_ns, period_ns)
        k_max = _positive_int(max_delta, "max_delta")
        zv, zp = self.z_pmf(period_ns)
        load = self.load(runtime_ns, period_ns)
        base = {
            "runtime_ns": int(runtime_ns),
            "period_ns": int(period_ns),
            "granularity_ns": self.granularity_ns,
            "q": q,
            "load": load,
            "max_delta": k_max,
            "_exec": self.c,
        }
        if self.c_max <= int(zv[0]) * q:
            # X = c - z·q <= 0 always: the backlog is empty at every arrival, v = c.
            fw = np.ones(1)
            return self._finish(base, fw, 0.0, math.inf, 1, q, k_max)
        if load >= 1.0:
            return CbsResult(
                **base,
                stable=False,
                prob=None,
                error_bound=0.0,
                decay_rate=0.0,
                grid=0,
                _backlog_cdf=None,
            )
        gamma = self._cramer_root(q, zv, zp)
        beta = min(gamma / 2.0, _MAX_TILT_EXPONENT / max(self.c_max, 1))
        need = max(2.0 * _TAIL_EXPONENT / beta, 4.0 * (self.c_max + 1), 64.0)
        grid = min(1 << math.ceil(math.log2(need)), MAX_GRID)
        fw, err = self._backlog_cdf(q, zv, zp, beta, gamma, grid)
        return self._finish(base, fw, err, gamma, grid, q, k_max)

    def sweep(self, candidates, max_delta: int = 10) -> list[CbsResult]:
        """Solve each (runtime_ns, period_ns) of ``candidates``."""
        return [self.solve(q, t, max_delta) for q, t in candidates]

    # internals ----------------------------------------------------------------------

    def _finish(self, base, fw, err, gamma, grid, q, k_max) -> CbsResult:
        res = CbsResult(
            **base,
            stable=True,
            prob=None,
            error_bound=err,
            decay_rate=gamma,
            grid=grid,
            _backlog_cdf=fw,
        )
        prob = res.prob_v_le(np.arange(1, k_max + 1, dtype=np.int64) * q)
        prob = np.maximum.accumulate(prob)  # remove FFT round-off wiggles (< error_bound)
        prob.setflags(write=False)
        object.__setattr__(res, "prob", prob)
        return res

    def _log_mgf(self, g: float, q: int, zv: np.ndarray, log_zp: np.ndarray) -> float:
        return float(logsumexp(g * self._c_support + self._log_c) + logsumexp(-g * q * zv + log_zp))

    def _cramer_root(self, q: int, zv: np.ndarray, zp: np.ndarray) -> float:
        """gamma > 0 with E[exp(gamma(c - z·q))] = 1 (exists: E[X] < 0 and P{X > 0} > 0)."""
        log_zp = np.log(zp)

        def f(g: float) -> float:
            return self._log_mgf(g, q, zv, log_zp)

        hi = 1.0 / max(self.c_max, 1)
        while f(hi) <= 0.0:
            hi *= 2.0
        lo = hi / 2.0
        while f(lo) >= 0.0:
            lo /= 2.0
            if lo < 1e-300:  # pragma: no cover - E[X] < 0 makes f negative near 0
                raise ModelError("CBS solver: cannot bracket the Cramér root")
        return float(brentq(f, lo, hi, xtol=1e-14 * hi, rtol=1e-12))

    def _backlog_cdf(self, q, zv, zp, beta, gamma, grid) -> tuple[np.ndarray, float]:
        """P{W <= x} on 0 .. grid-1 and the error bound, by Spitzer's identity."""
        c_tilt = np.zeros(grid)
        kc = np.arange(self.c.size)
        c_tilt[: self.c.size] = self.c * np.exp(beta * kc)
        z_tilt = np.zeros(grid)
        shift = zv * q
        np.add.at(z_tilt, (-shift) % grid, zp * np.exp(-beta * shift.astype(np.float64)))
        phi = np.fft.rfft(c_tilt) * np.fft.rfft(z_tilt)  # E[e^{(β+iθ)X}] on the grid
        m_beta = float(phi[0].real)
        b_tilt = np.fft.irfft(-np.log1p(-phi), n=grid)
        half = grid // 2
        k = np.arange(1, half)
        b = np.zeros(grid)
        b[1:half] = np.clip(b_tilt[1:half] * np.exp(-beta * k), 0.0, None)
        big_b = np.fft.rfft(b)
        psi = np.exp(big_b - big_b[0].real)
        pw = np.clip(np.fft.irfft(psi, n=grid), 0.0, None)
        fw = np.cumsum(pw)
        fw /= max(fw[-1], 1.0)
        lam = -math.log1p(-m_beta) if m_beta < 1.0 else math.inf
        err = (1.0 + lam) * grid * math.exp(-beta * half) + math.exp(-gamma * grid)
        return fw, min(err + 1e-12, 1.0)
