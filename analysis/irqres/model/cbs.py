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

and Σ_k b_k e^{(β+iθ)k} = -log(1 - E[e^{(β+iθ)X}]) for any 0 < β < γ, where γ > 0 is
the Cramér root, E[e^{γX}] = 1. The tilt β removes the singularity at θ = 0, so both
steps are a handful of FFTs of size M: O(M log M), no truncated transition matrix.

Grid and error. The FFTs are cyclic: the tilted coefficients b_k·e^{βk} are read on
k = 1 .. P-1 (positive side) and P-M .. 0 (negative side). Four errors remain; each is
estimated by a bound that holds up to a factor of order one (the expected number of
visits of the walk to one state), and their sum is ``error_bound``:

- positive b_k dropped beyond P: b_k = e^{-γk}·(visits to k of the walk tilted by γ,
  weighted by 1/n), so about e^{-γP}/(1 - e^{-γ});
- the negative side wrapping onto 1 .. P-1: at most (1+Λ)·P·e^{-β(M-P)}, with
  Λ = -log(1 - E[e^{βX}]) bounding the sum of the tilted coefficients;
- the positive side wrapping once around: at most (1+Λ)·P·e^{-(γ-β)M};
- the law of W wrapping: P{W >= M_W} <= e^{-γ·M_W} (Kingman's bound), where M_W <= M,
  about 25/γ, is the shorter grid of the second step.

β = 0.618·γ (the golden ratio balances the last three; the tilt is capped so that
e^{β·c} stays far inside float64), P about 0.38·M, M the smallest fast FFT length
(factors 2, 3, 5) that brings the sum below 1e-10, capped at 2^20. Only a load close
to 1 hits the cap (0.95 with the 1,000-bin PMFs of bench/solver: error_bound 5e-5);
then ``error_bound`` says how far the numbers can be trusted, and
:func:`irqres.model.recommend.recommend` subtracts it before comparing with a target.
"""

# The docstrings use the notation of the maths (γ, β, θ); RUF002/RUF003 would mangle it.
# ruff: noqa: RUF002, RUF003

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from ..errors import ModelError
from ..pmf import Pmf
from .numeric import brentq, next_fast_len

#: Largest FFT grid the solver uses (see the module docstring).
MAX_GRID = 1 << 20
_TOLERANCE = 1e-10  # the grid is sized to bring error_bound below this
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0  # β/γ
_MAX_TILT_EXPONENT = 300.0  # keeps e^{β·c} well inside float64
_ROWS = 64  # backlog limits prob_v_le spreads over the work's support at a time


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
    _exec: np.ndarray  # the PMF of the work of the arrival asked about, in units of Δ

    @property
    def bandwidth(self) -> float:
        """Q/T."""
        return self.runtime_ns / self.period_ns

    @overload
    def prob_v_le(self, units: int) -> float | None: ...
    @overload
    def prob_v_le(self, units: np.ndarray) -> np.ndarray | None: ...

    def prob_v_le(self, units: np.ndarray | int) -> np.ndarray | float | None:
        """P{v <= x} for x in units of Δ (None when unstable)."""
        if self._backlog_cdf is None:
            return None
        xs = np.atleast_1d(np.asarray(units, dtype=np.int64))
        fw, c = self._backlog_cdf, self._exec
        out = np.empty(xs.size)
        j = np.arange(c.size)
        for lo in range(0, xs.size, _ROWS):
            # P{W <= x - j} for a block of x (rows) and every work j (columns)
            idx = xs[lo:lo + _ROWS, None] - j
            vals = fw[np.clip(idx, 0, fw.size - 1)]
            vals[idx < 0] = 0.0
            vals[idx >= fw.size] = 1.0
            for i, row in enumerate(vals, lo):
                out[i] = float(np.dot(c, row))
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
        # None in the demand model, whose steps are periods, not arrivals
        self.interarrival_pmf: Pmf | None = interarrival_pmf
        self._set_work(exec_pmf)
        self._z_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def _set_work(self, pmf: Pmf, asked: Pmf | None = None) -> None:
        """The work c added to the backlog at each step: ``pmf`` rounded up to Δ.

        ``asked`` is the PMF of the work of the arrival whose response is asked about,
        on the same support (default: c itself). The probabilities are
        P{W + c' <= x} with c' drawn from it and W, the backlog the chain leaves before
        an arrival, from c: the demand model weights each period by its jobs this way.
        """
        self.c = pmf.dense(self.granularity_ns, rounding="up")
        self.c.setflags(write=False)
        self._c_support = np.flatnonzero(self.c)
        self._log_c = np.log(self.c[self._c_support])
        self.mean_c = float(np.dot(np.arange(self.c.size), self.c))
        self.c_max = int(self._c_support[-1])
        self.c_asked = self.c
        if asked is not None:
            c_asked = np.zeros(self.c.size)
            dense = asked.dense(self.granularity_ns, rounding="up")
            if dense.size > self.c.size or np.any((dense > 0) & (self.c[: dense.size] == 0)):
                raise ModelError("CBS model: the asked-about work lies outside the work's support")
            c_asked[: dense.size] = dense
            c_asked.setflags(write=False)
            self.c_asked = c_asked

    def z_pmf(self, period_ns: int) -> tuple[np.ndarray, np.ndarray]:
        """Inter-arrival in whole server periods: (values, probabilities), values sorted."""
        t = _positive_int(period_ns, "period")
        hit = self._z_cache.get(t)
        if hit is None:
            ia = self.interarrival_pmf
            if ia is None:
                raise ModelError("CBS model: no inter-arrival PMF")
            z = ia.values_ns // t
            values, inverse = np.unique(z, return_inverse=True)
            probs = np.bincount(inverse.ravel(), weights=ia.probs)
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
        base: dict[str, Any] = {
            "runtime_ns": int(runtime_ns),
            "period_ns": int(period_ns),
            "granularity_ns": self.granularity_ns,
            "q": q,
            "load": load,
            "max_delta": k_max,
            "_exec": self.c_asked,
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
        beta = min(_GOLDEN * gamma, _MAX_TILT_EXPONENT / max(self.c_max, 1))
        log_m = self._log_mgf(beta, q, zv, np.log(zp))
        lam = -math.log(-math.expm1(log_m))  # Λ = -log(1 - E[e^{βX}]), finite: β < γ
        grid, split, err = _grid(gamma, beta, lam, self.c_max)
        fw = self._backlog_cdf(q, zv, zp, beta, gamma, grid, split)
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
        assert prob is not None     # stable: the backlog's CDF is set
        prob = np.maximum.accumulate(prob)  # remove FFT round-off wiggles (< error_bound)
        prob.setflags(write=False)
        object.__setattr__(res, "prob", prob)
        return res

    def _log_mgf(self, g: float, q: int, zv: np.ndarray, log_zp: np.ndarray) -> float:
        return _logsumexp(g * self._c_support + self._log_c) + _logsumexp(-g * q * zv + log_zp)

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

    def _backlog_cdf(self, q, zv, zp, beta, gamma, grid, split) -> np.ndarray:
        """P{W <= x} on 0 .. grid-1, by Spitzer's identity (see the module docstring)."""
        c_tilt = np.zeros(grid)
        kc = np.arange(self.c.size)
        c_tilt[: self.c.size] = self.c * np.exp(beta * kc)
        z_tilt = np.zeros(grid)
        shift = zv * q
        np.add.at(z_tilt, (-shift) % grid, zp * np.exp(-beta * shift.astype(np.float64)))
        phi = np.fft.rfft(c_tilt) * np.fft.rfft(z_tilt)  # E[e^{(β+iθ)X}] on the grid
        b_tilt = np.fft.irfft(-np.log1p(-phi), n=grid)
        # The law of W needs only the positive side and its own tail: a shorter grid.
        n_w = min(grid, next_fast_len(max(split, _w_grid(gamma))))
        b = np.zeros(n_w)
        k = np.arange(1, split)
        b[1:split] = np.clip(b_tilt[1:split] * np.exp(-beta * k), 0.0, None)
        big_b = np.fft.rfft(b)
        psi = np.exp(big_b - big_b[0].real)
        pw = np.clip(np.fft.irfft(psi, n=n_w), 0.0, None)
        fw = np.cumsum(pw)
        fw /= max(fw[-1], 1.0)
        return fw


def _logsumexp(x: np.ndarray) -> float:
    """log(sum(exp(x))) without overflow (scipy's is slower for these small arrays)."""
    top = float(x.max())
    return top + math.log(float(np.exp(x - top).sum()))


def _grid_error(gamma: float, beta: float, lam: float, grid: int, split: int) -> float:
    """The error bound of the module docstring for a grid of ``grid``, split at ``split``."""
    tail = math.exp(-gamma * split) / -math.expm1(-gamma)
    alias = (
        (1.0 + lam) * split * (math.exp(-beta * (grid - split)) + math.exp(-(gamma - beta) * grid))
    )
    return tail + alias + math.exp(-gamma * min(grid, _w_grid(gamma)))


def _w_grid(gamma: float) -> int:
    """Points that hold the law of W up to a tail of e^{-γM} <= a tenth of the tolerance."""
    return math.ceil(-math.log(_TOLERANCE / 10.0) / gamma)


def _grid(gamma: float, beta: float, lam: float, c_max: int) -> tuple[int, int, float]:
    """The smallest fast FFT length (and its split) meeting the tolerance, or the cap."""
    grid = next_fast_len(max(64, 2 * (c_max + 1)))
    while True:
        # Balance the dropped positive tail against the negative side's wrap.
        split = max(2, min(grid - 1, round(beta * grid / (gamma + beta))))
        err = _grid_error(gamma, beta, lam, grid, split)
        if err <= _TOLERANCE or grid >= MAX_GRID:
            return grid, split, min(err + 1e-12, 1.0)
        grid = min(next_fast_len(math.ceil(grid * 1.1)), MAX_GRID)
