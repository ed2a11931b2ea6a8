"""Benchmark of the model behind `irqres analyze` (results in RESULTS.md).

1. solver sweep: execution and inter-arrival PMFs of 1,000 bins each, 100 (Q, T)
   candidates (10 periods x 10 budgets, loads from 0.2 to 0.95, all stable), solved
   with CbsModel.solve; wall time of the whole sweep including building the model.
2. replay: 1,000,000 activations through the simulated SCHED_DEADLINE server.
3. Monte Carlo: 1,000,000 simulated jobs of the chain.
4. recommend(): 100,000 activations (Poisson, mean 2 ms; execution about 200 us), the
   default periods, a 5 ms response target, Monte Carlo and replay for each feasible row.
5. demand sweep: frequent interrupts (1,000,000 activations, Poisson, mean 100 us;
   execution 10..30 us), 10 periods from 500 us to 10 ms, for each the per-period demand
   (period_demand, its PMFs per period and per job) and 10 budgets with loads E[d]/q
   from 0.2 to 0.95, solved with DemandModel.solve; wall time of the whole sweep
   including the demands.
6. recommend() on 100,000 of those frequent activations, the default periods (every row
   uses the per-period demand model), Monte Carlo and replay for each feasible row.

``--fft-compare`` runs only the solver sweep (1.), side by side with the CBS solver's
transforms from numpy.fft (what irqres uses) and from scipy.fft (needs scipy), the same
inputs and runs alternated, and the largest difference of the two backlog CDFs over the
100 candidates: the measure that decides whether scipy earns a place in the solver.

Each is run several times; the median, minimum and maximum wall times and the median
CPU time are printed as JSON. Run from the repository root:

    PYTHONPATH=analysis python3 bench/solver/bench_solver.py --runs 7
    PYTHONPATH=analysis python3 bench/solver/bench_solver.py --runs 9 --fft-compare
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import math
import os
import platform
import statistics
import time

import numpy as np
from irqres.model.cbs import CbsModel
from irqres.model.demand import DemandModel, period_demand
from irqres.model.montecarlo import simulate
from irqres.model.recommend import recommend
from irqres.model.replay import replay
from irqres.pmf import Pmf, default_granularity

US = 1000


def pmfs() -> tuple[Pmf, Pmf]:
    """Execution times on 1..1000 us (gamma-shaped), inter-arrivals on 0..9.99 ms."""
    k = np.arange(1, 1001, dtype=np.float64)
    c = k**1.5 * np.exp(-k / 80.0)
    ex = Pmf((k * US).astype(np.int64), c / c.sum(), US)
    a = np.arange(0, 1000, dtype=np.float64)
    p = np.exp(-a / 200.0)  # about exponential, mean 2 ms, 10 us bins
    ia = Pmf((a * 10 * US).astype(np.int64), p / p.sum(), 10 * US)
    return ex, ia


def candidates(model: CbsModel) -> list[tuple[int, int]]:
    """10 periods x 10 budgets whose loads E[c]/(q·E[z]) run evenly from 0.2 to 0.95."""
    out = []
    for t in np.geomspace(400 * US, 4000 * US, 10).astype(np.int64) // US * US:
        zv, zp = model.z_pmf(int(t))
        need = model.mean_c / float(np.dot(zv, zp)) * model.granularity_ns  # Q at load 1
        for load in np.linspace(0.2, 0.95, 10):
            q = min(math.ceil(need / load / US) * US, int(t))
            out.append((q, int(t)))
    return out


DEMAND_PERIODS = [
    int(t) for t in np.geomspace(500 * US, 10_000 * US, 10).astype(np.int64) // US * US
]


def demand_models(arr: np.ndarray, exe: np.ndarray) -> list[DemandModel]:
    """The per-period demand model of each of DEMAND_PERIODS."""
    out = []
    for t in DEMAND_PERIODS:
        d, jobs = period_demand(arr, exe, t)
        out.append(DemandModel.from_demand(d, jobs, t, default_granularity(d)))
    return out


def demand_candidates(models: list[DemandModel]) -> list[tuple[DemandModel, int]]:
    """10 budgets per model whose loads E[d]/q run evenly from 0.2 to 0.95."""
    out = []
    for m in models:
        for load in np.linspace(0.2, 0.95, 10):
            q = min(math.ceil(m.mean_c / load), m.period_ns // m.granularity_ns)
            out.append((m, q * m.granularity_ns))
    return out


def solve_stats(results: list) -> dict:
    """How many solves were stable, their FFT grids and their largest error bound."""
    grids = [r.grid for r in results]
    return {
        "stable": sum(r.stable for r in results),
        "grid_min_median_max": [min(grids), int(statistics.median(grids)), max(grids)],
        "max_error_bound": max(r.error_bound for r in results),
    }


def timed(fn, runs: int) -> dict:
    """Wall and CPU time of ``runs`` calls (CPU time is what other users of a shared
    machine do not inflate)."""
    wall, cpu = [], []
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return {
        "median_s": statistics.median(wall),
        "min_s": min(wall),
        "max_s": max(wall),
        "cpu_median_s": statistics.median(cpu),
        "runs": runs,
    }


def _scipy_version() -> str | None:
    """scipy's version where it is installed (irqres does not need it)."""
    if importlib.util.find_spec("scipy") is None:
        return None
    import scipy

    return scipy.__version__


@contextlib.contextmanager
def scipy_transforms():
    """The CBS solver's np.fft.rfft/irfft taken from scipy.fft meanwhile."""
    from scipy import fft as sp_fft

    saved = np.fft.rfft, np.fft.irfft
    np.fft.rfft, np.fft.irfft = sp_fft.rfft, sp_fft.irfft
    try:
        yield
    finally:
        np.fft.rfft, np.fft.irfft = saved


def fft_compare(runs: int) -> dict:
    """The solver sweep with numpy.fft and with scipy.fft, runs alternated, and the
    largest difference between their backlog CDFs."""
    ex, ia = pmfs()
    cands = candidates(CbsModel(ex, ia))

    def sweep() -> list:
        m = CbsModel(ex, ia)
        return [m.solve(q, t) for q, t in cands]

    times: dict[str, list[dict]] = {"numpy.fft": [], "scipy.fft": []}
    for _ in range(runs):
        times["numpy.fft"].append(timed(sweep, 1))
        with scipy_transforms():
            times["scipy.fft"].append(timed(sweep, 1))
    ref = sweep()
    with scipy_transforms():
        alt = sweep()
    diff = max(float(np.max(np.abs(a._backlog_cdf - b._backlog_cdf)))
               for a, b in zip(ref, alt, strict=True)
               if a._backlog_cdf is not None and b._backlog_cdf is not None)
    return {
        "machine": {"python": platform.python_version(), "numpy": np.__version__,
                    "scipy": _scipy_version(), "cpus": os.cpu_count(),
                    "loadavg": os.getloadavg()},
        "candidates": len(cands),
        "max_abs_cdf_difference": diff,
        **{name: {"median_s": statistics.median(t["median_s"] for t in ts),
                  "min_s": min(t["min_s"] for t in ts), "max_s": max(t["max_s"] for t in ts),
                  "cpu_median_s": statistics.median(t["cpu_median_s"] for t in ts),
                  "runs": runs}
           for name, ts in times.items()},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--fft-compare", action="store_true",
                    help="only the solver sweep, numpy.fft against scipy.fft")
    args = ap.parse_args()
    if args.fft_compare:
        print(json.dumps(fft_compare(args.runs), indent=2))
        return
    ex, ia = pmfs()
    model = CbsModel(ex, ia)
    cands = candidates(model)
    results = [model.solve(q, t) for q, t in cands]
    loads = [r.load for r in results]
    out = {
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": _scipy_version(),
            "cpus": os.cpu_count(),
            "loadavg": os.getloadavg(),
        },
        "sweep_setup": {
            "exec_bins": len(ex),
            "interarrival_bins": len(ia),
            "candidates": len(cands),
            "load_min": min(loads),
            "load_max": max(loads),
            **solve_stats(results),
        },
    }

    def sweep():
        m = CbsModel(ex, ia)
        for q, t in cands:
            m.solve(q, t)

    out["solver_sweep_100"] = timed(sweep, args.runs)

    rng = np.random.default_rng(0)
    n = 1_000_000
    arr = np.cumsum(rng.exponential(2 * US * 1000, n).astype(np.int64))
    exe = (rng.gamma(2.5, 80 * US, n)).astype(np.int64) + US
    out["replay_1e6"] = timed(lambda: replay(arr, exe, 500 * US, 1000 * US), max(3, args.runs // 2))
    out["montecarlo_1e6"] = timed(
        lambda: simulate(model, 500 * US, 1000 * US, n_jobs=1_000_000), args.runs
    )
    m = 100_000
    out["recommend_1e5"] = timed(
        lambda: recommend(arr[:m], exe[:m], deadline_ns=5_000_000), max(3, args.runs // 2)
    )

    rng = np.random.default_rng(1)
    fast_arr = np.cumsum(rng.exponential(100 * US, n).astype(np.int64))
    fast_exe = rng.integers(10 * US, 30 * US, n)
    dem = demand_candidates(demand_models(fast_arr, fast_exe))
    dem_res = [dm.solve(q, dm.period_ns) for dm, q in dem]
    out["demand_setup"] = {
        "activations": n,
        "periods_ns": DEMAND_PERIODS,
        "demand_bins_min_max": [
            min(len(dm.demand_pmf) for dm, _ in dem),
            max(len(dm.demand_pmf) for dm, _ in dem),
        ],
        "candidates": len(dem),
        **solve_stats(dem_res),
    }

    def demand_sweep():
        for dm, q in demand_candidates(demand_models(fast_arr, fast_exe)):
            dm.solve(q, dm.period_ns)

    out["demand_sweep_100"] = timed(demand_sweep, args.runs)
    out["recommend_frequent_1e5"] = timed(
        lambda: recommend(fast_arr[:m], fast_exe[:m]), max(3, args.runs // 2)
    )
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
