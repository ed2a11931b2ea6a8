"""The default response bound's search: the checked recommendation at the end reuses the
budgets the search found instead of solving them again, and gives what a fresh one does."""

import numpy as np
from irqres.model import bound
from irqres.model.cbs import CbsModel
from irqres.model.recommend import recommend

MS, US = 1_000_000, 1_000


def heavy_tail(n=3000, seed=3):
    """Activations every 2 ms whose execution has a tail far above its mean: the default
    bound (2 ms) is doubled before a reservation near the use meets it."""
    rng = np.random.default_rng(seed)
    arr = np.arange(n, dtype=np.int64) * 2 * MS + rng.integers(0, 200 * US, n)
    exe = rng.integers(100 * US, 300 * US, n)
    exe[rng.random(n) < 0.02] = 3 * MS
    return np.sort(arr), exe.astype(np.int64)


def counting(monkeypatch):
    calls = []
    real = CbsModel.solve

    def solve(self, runtime_ns, period_ns, max_delta=10):
        calls.append((runtime_ns, period_ns))
        return real(self, runtime_ns, period_ns, max_delta)

    monkeypatch.setattr(CbsModel, "solve", solve)
    return calls


def test_the_checked_recommendation_solves_nothing_again(monkeypatch):
    arr, exe = heavy_tail()
    use = int(exe.sum()) / int(arr[-1] - arr[0])
    calls = counting(monkeypatch)
    found = bound.near_use_bound(arr, exe, np.diff(arr), use, mc_jobs=2000)
    in_search = len(calls)
    assert len(found.tried) > 1, found.tried  # the bound was doubled at least once
    calls.clear()
    for d, _ in found.tried:     # what the search itself solves, bound by bound
        recommend(arr, exe, deadline_ns=d, mc_jobs=0, run_replay=False)
    assert in_search == len(calls)
    # the same recommendation as one made from scratch for the chosen bound
    fresh = recommend(arr, exe, deadline_ns=found.deadline_ns, mc_jobs=2000)
    assert found.recommendation.to_dict() == fresh.to_dict()
    assert found.recommendation.best is not None and found.recommendation.best.mc_prob
