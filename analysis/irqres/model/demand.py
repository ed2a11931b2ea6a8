"""The per-period demand model, for interrupts that arrive several times per period.

The per-activation model (:mod:`.cbs`) counts the time between activations in whole
server periods, rounded down: with interrupts every 100 us and a period of 1 ms it sees
z = 0 almost always and cannot vouch for any budget. This model counts work per period
instead. With the periods [a_0 + kT, a_0 + (k+1)T) laid from the first arrival a_0, the
demand of period k is the execution time of the activations that arrive in it,

    d_k = Σ { e_j : a_0 + kT <= a_j < a_0 + (k+1)T },   n_k = #{ j : same },

an exact int64 sum in ns, rounded up to the granularity Δ for the chain. Each period's
work is taken as one batch that arrives at the period's start; the server supplies q
units per period and serves FIFO, so the backlog right after batch k+1 is

    v_{k+1} = max(v_k - q, 0) + d_{k+1}

(the chain of :mod:`.cbs` with z ≡ 1, solved by the same solver) and the work of a
period is done within δ periods of its start iff v <= δ·q. Every job of the batch
arrived at or after the period's start, so its response time is then at most δT.
Stable iff E[d] < q.

The probabilities are per job, as the target is: a period counts once per job it holds,

    P{response <= δT} = Σ_d P{d}·E[n | d]/E[n] · P{W <= δq - d},

with W the backlog before a batch (from the chain, unweighted). Busy periods are the ones
that miss; counting periods instead of jobs would be optimistic.

Assumptions: the demands (and job counts) of successive periods are independent and
identically distributed (the measured d_k, n_k); the work is served FIFO; the budget of a
period is available to the work that arrives in it (a CBS woken from sleep keeps its
remaining budget, or gets a fresh one with a new deadline). The periods run from the
first arrival to the one holding the last arrival, which is cut there: every activation
counts once.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..pmf import Pmf, as_ns_array, default_granularity, nice_granularity
from . import format_exact
from .cbs import CbsModel, _positive_int

_ONE = (np.ones(1, dtype=np.int64), np.ones(1))
_ONE[0].setflags(write=False)
_ONE[1].setflags(write=False)


def check_activations(arrival_ns: object, exec_ns: object) -> tuple[np.ndarray, np.ndarray]:
    """The activations as int64 arrays, checked: same length, sorted, no negative time."""
    arr = as_ns_array(arrival_ns, "arrival times")
    exe = as_ns_array(exec_ns, "execution times")
    if arr.size != exe.size:
        raise ModelError(f"activations: {arr.size} arrival times but {exe.size} execution times")
    if arr.size > 1 and np.any(np.diff(arr) < 0):
        raise ModelError("arrival times: must be sorted")
    if np.any(exe < 0):
        raise ModelError("execution times: must not be negative")
    return arr, exe


def _occupied(arrival_ns, exec_ns, period_ns) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Index, demand and jobs of each occupied period, and the number of periods."""
    arr, exe = check_activations(arrival_ns, exec_ns)
    t = _positive_int(period_ns, "period")
    if arr.size == 0:
        raise ModelError("activations: none to measure the demand per period from")
    rel = arr - arr[0]
    last = int(rel[-1]) // t
    if last < 1:
        raise ModelError(
            f"activations span {format_exact(int(rel[-1]))}, less than one period of "
            f"{format_exact(t)}: no whole period to measure the demand in"
        )
    k = rel // t
    # the first activation of each occupied period (k is sorted, as the arrivals are)
    starts = np.flatnonzero(np.diff(k, prepend=np.int64(-1)))
    ends = np.append(starts[1:], k.size)
    # work before each activation, by a prefix sum: exact in int64, no Python loop
    before = np.zeros(exe.size + 1, dtype=np.int64)
    np.cumsum(exe, out=before[1:])
    demand, jobs = before[ends] - before[starts], (ends - starts).astype(np.int64)
    return k[starts], demand, jobs, last + 1


def occupied_demand(
    arrival_ns: np.ndarray, exec_ns: np.ndarray, period_ns: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """The work and the number of jobs of each period that holds an arrival, and how many
    periods there are in all.

    The periods are those of :func:`period_demand`; the ones without arrivals (demand 0,
    no jobs) are only counted. Memory and time grow with the number of activations, not
    with the time they span: one corrupted timestamp years after the others adds one
    period here, not billions.

    Returns
    -------
    demand, jobs, periods
        int64 arrays over the occupied periods in time order (every job count >= 1), and
        K + 1, the number of periods with the empty ones.

    Raises
    ------
    ModelError
        As :func:`period_demand`.
    """
    _, demand, jobs, periods = _occupied(arrival_ns, exec_ns, period_ns)
    return demand, jobs, periods


#: The most periods :func:`period_demand` lays out one by one (128 MiB per array).
MAX_PERIOD_SERIES = 1 << 24


def period_demand(
    arrival_ns: np.ndarray, exec_ns: np.ndarray, period_ns: int
) -> tuple[np.ndarray, np.ndarray]:
    """The work and the number of jobs that arrive in each period from the first arrival.

    Element k of each is over the activations arriving in [a_0 + kT, a_0 + (k+1)T), for
    k = 0 .. K with K = floor((a_last - a_0)/T): the last period holds the last arrival
    and is cut there. Periods without arrivals have demand 0 and no jobs. The series
    takes memory in K; :func:`occupied_demand` gives the same in memory by activations
    (the model uses it).

    Returns
    -------
    demand, jobs
        int64 arrays: the sum of the execution times in ns, and the activation count.

    Raises
    ------
    ModelError
        Bad arrays (see :func:`check_activations`), a non-positive period, activations
        spanning less than one period, or more than :data:`MAX_PERIOD_SERIES` periods.
    """
    index, demand, jobs, periods = _occupied(arrival_ns, exec_ns, period_ns)
    if periods > MAX_PERIOD_SERIES:
        arr = np.asarray(arrival_ns)
        raise ModelError(
            f"activations span {format_exact(int(arr[-1]) - int(arr[0]))}, "
            f"{periods:,} periods of {format_exact(int(period_ns))}: more than the "
            f"{MAX_PERIOD_SERIES:,} a per-period series is laid out for (a corrupted "
            "timestamp?)"
        )
    d = np.zeros(periods, dtype=np.int64)
    n = np.zeros(periods, dtype=np.int64)
    d[index], n[index] = demand, jobs
    return d, n


def demand_granularity(demand_ns: np.ndarray, periods: int) -> int:
    """:func:`~irqres.pmf.default_granularity` of the demand of all ``periods`` periods,
    from the occupied periods' demand (:func:`occupied_demand`): the others add zeros."""
    d = np.sort(as_ns_array(demand_ns, "demand per period"))
    zeros = int(periods) - d.size
    if d.size == 0 or zeros < 0:
        raise ModelError(f"demand: {d.size} occupied periods of {periods}")
    if zeros == 0:
        return default_granularity(d)
    # np.quantile(..., 0.999, method="higher") of the series with the zeros, as numpy
    # computes it: index ceil(n*q + (1 - q) - 1), clipped to the last
    q = np.float64(0.999)
    idx = min(int(np.ceil(periods * q + (1 + q * (1 - 1 - 1)) - 1)), periods - 1)
    bulk = 0 if idx < zeros else int(d[idx - zeros])
    return max(nice_granularity(bulk, 1000), nice_granularity(int(d[-1]), 20_000))


class DemandModel(CbsModel):
    """The per-period demand of one IRQ thread for one period T: the chain with z ≡ 1.

    Parameters
    ----------
    demand_pmf
        The work that arrives per period (see :func:`period_demand`).
    period_ns
        T, the period the demand was measured with; the model solves only that period.
    granularity_ns
        Δ, the time unit of the chain (default: the demand PMF's granularity). Demands
        are rounded up to it.
    job_pmf
        The demand of the period a job arrives in: P{d} weighted by E[n | d]/E[n] (see
        the module docstring), on the demand's support. Default: the demand PMF itself
        (every period counts once).
    """

    def __init__(
        self,
        demand_pmf: Pmf,
        period_ns: int,
        granularity_ns: int | None = None,
        job_pmf: Pmf | None = None,
    ):
        if not isinstance(demand_pmf, Pmf) or not isinstance(job_pmf, Pmf | None):
            raise ModelError("demand model: expected a Pmf of the work per period")
        g = demand_pmf.granularity_ns if granularity_ns is None else granularity_ns
        self.granularity_ns = _positive_int(g, "granularity")
        self.period_ns = _positive_int(period_ns, "period")
        self.demand_pmf = demand_pmf
        self.job_pmf = demand_pmf if job_pmf is None else job_pmf
        self.exec_pmf = demand_pmf  # the work added at each step of the chain
        self.interarrival_pmf = None
        self._set_work(demand_pmf, job_pmf)

    @classmethod
    def from_demand(
        cls,
        demand_ns: np.ndarray,
        jobs: np.ndarray,
        period_ns: int,
        granularity_ns: int,
        periods: int | None = None,
    ) -> DemandModel:
        """The model of measured demands and job counts per period (:func:`period_demand`,
        or with ``periods`` the occupied periods of :func:`occupied_demand` and the number
        of all periods, the others holding no work) at granularity Δ: the demand PMF and
        its job-weighted twin."""
        g = _positive_int(granularity_ns, "granularity")
        demand = as_ns_array(demand_ns, "demand per period")
        n = as_ns_array(jobs, "jobs per period")
        if demand.size != n.size or n.size == 0 or np.any(n < 0) or int(n.sum()) == 0:
            raise ModelError(
                f"demand model: {demand.size} demands need as many job counts "
                f"(non-negative, not all 0), got {n.size}"
            )
        empty = 0 if periods is None else int(periods) - demand.size
        if empty < 0:
            raise ModelError(f"demand model: {demand.size} demands in {periods} periods")
        if empty == 0:
            demand_pmf = Pmf.from_samples(demand, g, rounding="up")
        else:  # the empty periods' zeros, counted without laying them out
            if int(demand.min()) < 0:
                raise ModelError(f"PMF samples: negative duration {int(demand.min())} ns")
            ubins, counts = np.unique(-(-demand // g), return_counts=True)
            if ubins[0] == 0:
                counts[0] += empty
            else:
                ubins, counts = np.append(0, ubins), np.append(empty, counts)
            demand_pmf = Pmf(ubins * g, counts / counts.sum(), g, demand.size + empty)
        bins, where = np.unique(-(-demand // g), return_inverse=True)
        weight = np.bincount(where.ravel(), weights=n.astype(np.float64))
        job_pmf = Pmf(bins * g, weight / weight.sum(), g, int(n.sum()))
        return cls(demand_pmf, period_ns, job_pmf=job_pmf)

    @classmethod
    def from_activations(
        cls,
        arrival_ns: np.ndarray,
        exec_ns: np.ndarray,
        period_ns: int,
        granularity_ns: int,
    ) -> DemandModel:
        """The model of the activations' demand per period T at granularity Δ."""
        g = _positive_int(granularity_ns, "granularity")
        demand, jobs, periods = occupied_demand(arrival_ns, exec_ns, period_ns)
        return cls.from_demand(demand, jobs, period_ns, g, periods=periods)

    @property
    def periods(self) -> int:
        """How many measured periods the demand PMF holds (0 when built from a PMF)."""
        return self.demand_pmf.count

    def z_pmf(self, period_ns: int) -> tuple[np.ndarray, np.ndarray]:
        """One period between batches, always: (values [1], probabilities [1.0])."""
        t = _positive_int(period_ns, "period")
        if t != self.period_ns:
            raise ModelError(
                f"demand model: measured per period of {format_exact(self.period_ns)}, "
                f"cannot be solved for a period of {format_exact(t)}"
            )
        return _ONE
