"""Probability mass functions of durations (execution and inter-arrival times).

A :class:`Pmf` is held sparsely: the occupied bins only (``values_ns``, strictly
increasing int64 multiples of the granularity) and their probabilities (``probs``,
float64, summing to 1). Memory is therefore proportional to the number of distinct
binned samples, never to the range they span: a trace with an inter-arrival outlier of a
second at 1 us granularity costs one bin, not a million. Code that needs a dense array
(the CBS solver) asks for one with :meth:`Pmf.dense`, which refuses more than
``max_bins`` bins with an error that names a coarser granularity.

Rounding: execution times are rounded *up* to the granularity (the model never
under-estimates demand); inter-arrival times are rounded *down* (the model never
over-estimates the time between jobs). Both are conservative for the reservation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .errors import ModelError

#: Largest dense array :meth:`Pmf.dense` builds unless told otherwise.
DEFAULT_MAX_DENSE_BINS = 1 << 20

_ROUNDING = ("up", "down")


def as_ns_array(samples: object, what: str) -> np.ndarray:
    """Return ``samples`` as a one-dimensional int64 array of nanoseconds.

    Integer arrays of any width are accepted; floats only when every value is a whole
    number. Raises :class:`ModelError` naming ``what`` otherwise.
    """
    arr = np.asarray(samples)
    if arr.ndim != 1:
        raise ModelError(f"{what}: expected a one-dimensional array, got shape {arr.shape}")
    if arr.dtype.kind == "b":
        raise ModelError(f"{what}: expected integer nanoseconds, got booleans")
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)):
            raise ModelError(f"{what}: contains NaN or infinite values")
        if not np.all(arr == np.floor(arr)):
            raise ModelError(f"{what}: expected integer nanoseconds, got fractional values")
        if arr.size and np.max(np.abs(arr)) >= 2.0**63:
            raise ModelError(f"{what}: values do not fit in int64 nanoseconds")
    elif arr.dtype.kind not in "iu":
        raise ModelError(f"{what}: expected integer nanoseconds, got dtype {arr.dtype}")
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) >= 2**63:
        raise ModelError(f"{what}: values do not fit in int64 nanoseconds")
    return arr.astype(np.int64, copy=False)


def nice_granularity(span_ns: int, bins: int = 1000) -> int:
    """The smallest 1-2-5 x 10^k ns step that covers ``span_ns`` in at most ``bins`` bins.

    >>> nice_granularity(1_000_000, 1000)
    1000
    >>> nice_granularity(1_500_000, 1000)
    2000
    >>> nice_granularity(0)
    1
    """
    if bins < 1:
        raise ModelError(f"bins: must be at least 1, got {bins}")
    span_ns = int(span_ns)
    if span_ns <= bins:
        return 1
    raw = span_ns / bins
    exp = 10 ** max(math.floor(math.log10(raw)), 0)
    for mult in (1, 2, 5, 10):
        if mult * exp >= raw:
            return mult * exp
    return 10 * exp  # pragma: no cover - the loop above always returns


def default_granularity(samples_ns: np.ndarray) -> int:
    """Δ for the model: about 1,000 bins up to the 99.9th percentile of the samples
    (execution times, or the work per period), coarsened only as far as needed to keep
    the whole PMF within 20,000 bins.

    A rare outlier (a job preempted by something the trace did not show) then costs some
    resolution, not all of it: a single job 250x the others gives Δ = 1/40 of the bulk
    instead of 1/4 with a plain 1,000 bins up to the maximum.
    """
    bulk = int(np.quantile(samples_ns, 0.999, method="higher"))
    return max(nice_granularity(bulk, 1000), nice_granularity(int(samples_ns.max()), 20_000))


@dataclass(frozen=True, eq=False)
class Pmf:
    """A PMF of durations on a lattice of ``granularity_ns``.

    Attributes
    ----------
    values_ns
        int64, strictly increasing multiples of ``granularity_ns``: the occupied bins.
    probs
        float64, positive, summing to 1, one per value.
    granularity_ns
        The bin width Δ in ns (a positive integer).
    count
        The number of samples the PMF was built from (0 when built from probabilities).
    """

    values_ns: np.ndarray
    probs: np.ndarray
    granularity_ns: int
    count: int = 0
    _cdf: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        values = as_ns_array(self.values_ns, "PMF values")
        probs = np.asarray(self.probs, dtype=np.float64)
        g = int(self.granularity_ns)
        if g <= 0:
            raise ModelError(f"PMF granularity: must be a positive number of ns, got {g}")
        if values.size == 0:
            raise ModelError("PMF: has no values")
        if probs.shape != values.shape:
            raise ModelError(f"PMF: {values.size} values but {probs.size} probabilities")
        if np.any(values < 0):
            raise ModelError("PMF values: durations must not be negative")
        if np.any(values % g):
            raise ModelError(f"PMF values: not all multiples of the granularity {g} ns")
        if values.size > 1 and np.any(np.diff(values) <= 0):
            raise ModelError("PMF values: must be strictly increasing")
        if not np.all(np.isfinite(probs)) or np.any(probs < 0):
            raise ModelError("PMF probabilities: must be finite and non-negative")
        total = float(probs.sum())
        if abs(total - 1.0) > 1e-9:
            raise ModelError(f"PMF probabilities: sum to {total!r}, not 1")
        keep = probs > 0
        values, probs = values[keep], probs[keep] / probs[keep].sum()
        values.setflags(write=False)
        probs.setflags(write=False)
        object.__setattr__(self, "values_ns", values)
        object.__setattr__(self, "probs", probs)
        object.__setattr__(self, "granularity_ns", g)
        cdf = np.cumsum(probs)
        cdf[-1] = 1.0
        cdf.setflags(write=False)
        object.__setattr__(self, "_cdf", cdf)

    # construction -------------------------------------------------------------------

    @classmethod
    def from_samples(cls, samples_ns: np.ndarray, granularity_ns: int, rounding: str = "up") -> Pmf:
        """Bin duration samples into a PMF.

        Parameters
        ----------
        samples_ns
            Durations in integer ns (any integer dtype; must not be negative).
        granularity_ns
            The bin width Δ in ns. Any positive value works for any range: only occupied
            bins are stored (see the module docstring). :func:`nice_granularity` picks one
            that gives about 1,000 bins over a range.
        rounding
            ``"up"`` bins x at ceil(x/Δ)·Δ (execution times), ``"down"`` at floor(x/Δ)·Δ
            (inter-arrival times).

        Raises
        ------
        ModelError
            Empty or negative input, a non-positive granularity or an unknown rounding.
        """
        if rounding not in _ROUNDING:
            raise ModelError(f"PMF rounding: must be 'up' or 'down', got {rounding!r}")
        if isinstance(granularity_ns, bool) or not isinstance(granularity_ns, int | np.integer):
            raise ModelError(f"PMF granularity: expected integer ns, got {granularity_ns!r}")
        g = int(granularity_ns)
        if g <= 0:
            raise ModelError(f"PMF granularity: must be a positive number of ns, got {g}")
        x = as_ns_array(samples_ns, "PMF samples")
        if x.size == 0:
            raise ModelError("PMF samples: no samples to build a distribution from")
        if int(x.min()) < 0:
            raise ModelError(f"PMF samples: negative duration {int(x.min())} ns")
        bins = (x + (g - 1)) // g if rounding == "up" else x // g
        if rounding == "up" and int(x.max()) > np.iinfo(np.int64).max - g:
            raise ModelError("PMF samples: values too large to round up")
        uniq, counts = np.unique(bins, return_counts=True)
        return cls(uniq * g, counts / counts.sum(), g, int(x.size))

    @classmethod
    def from_dict(cls, data: dict) -> Pmf:
        """Rebuild a PMF from :meth:`to_dict` output."""
        try:
            return cls(
                np.asarray(data["values_ns"], dtype=np.int64),
                np.asarray(data["probs"], dtype=np.float64),
                int(data["granularity_ns"]),
                int(data.get("count", 0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ModelError):
                raise
            raise ModelError(f"PMF: cannot read {exc}") from exc

    # statistics ---------------------------------------------------------------------

    @property
    def min_ns(self) -> int:
        """The smallest occupied bin, in ns."""
        return int(self.values_ns[0])

    @property
    def max_ns(self) -> int:
        """The largest occupied bin, in ns."""
        return int(self.values_ns[-1])

    def mean_ns(self) -> float:
        """The mean of the binned distribution, in ns (a float: it is a statistic)."""
        return float(np.dot(self.values_ns.astype(np.float64), self.probs))

    def std_ns(self) -> float:
        """The standard deviation of the binned distribution, in ns."""
        v = self.values_ns.astype(np.float64) - self.mean_ns()
        return float(math.sqrt(max(float(np.dot(v * v, self.probs)), 0.0)))

    def cdf(self) -> np.ndarray:
        """P{X <= values_ns[i]} for each occupied bin; non-decreasing, ends at 1."""
        return self._cdf

    def prob_le(self, x_ns: int) -> float:
        """P{X <= x_ns}."""
        i = int(np.searchsorted(self.values_ns, int(x_ns), side="right"))
        return 0.0 if i == 0 else float(self._cdf[i - 1])

    def quantile_ns(self, p: float) -> int:
        """The smallest bin value v with P{X <= v} >= p (0 < p <= 1)."""
        if not 0.0 < p <= 1.0:
            raise ModelError(f"quantile: probability must be in (0, 1], got {p}")
        i = int(np.searchsorted(self._cdf, p - 1e-12, side="left"))
        return int(self.values_ns[min(i, self.values_ns.size - 1)])

    # conversions --------------------------------------------------------------------

    def dense(
        self,
        unit_ns: int | None = None,
        rounding: str = "up",
        max_bins: int = DEFAULT_MAX_DENSE_BINS,
    ) -> np.ndarray:
        """Probabilities on the dense lattice 0, u, 2u, ... (u = ``unit_ns``).

        Element k is P{X in units of u, rounded as told, equals k}. ``unit_ns`` defaults to
        the granularity. Raises :class:`ModelError` when the array would exceed
        ``max_bins`` elements, naming the unit that would fit.
        """
        u = self.granularity_ns if unit_ns is None else int(unit_ns)
        if u <= 0:
            raise ModelError(f"PMF unit: must be a positive number of ns, got {u}")
        if rounding not in _ROUNDING:
            raise ModelError(f"PMF rounding: must be 'up' or 'down', got {rounding!r}")
        k = (self.values_ns + (u - 1)) // u if rounding == "up" else self.values_ns // u
        size = int(k[-1]) + 1
        if size > max_bins:
            need = nice_granularity(self.max_ns, max_bins - 1)
            raise ModelError(
                f"PMF: {size} bins of {u} ns exceed the limit of {max_bins} "
                f"(max {self.max_ns} ns); use a granularity of at least {need} ns"
            )
        return np.bincount(k, weights=self.probs, minlength=size)

    def to_dict(self) -> dict:
        """A JSON-ready dict: granularity, count, statistics and the bins."""
        return {
            "granularity_ns": self.granularity_ns,
            "count": self.count,
            "mean_ns": self.mean_ns(),
            "std_ns": self.std_ns(),
            "min_ns": self.min_ns,
            "max_ns": self.max_ns,
            "values_ns": [int(v) for v in self.values_ns],
            "probs": [float(p) for p in self.probs],
        }

    def __len__(self) -> int:
        return int(self.values_ns.size)
