"""The CBS backlog chain: exact cases, an independent reference, Monte Carlo, errors."""

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from irqres.errors import ModelError
from irqres.model import cbs
from irqres.model.cbs import CbsModel, supply_units
from irqres.model.montecarlo import simulate
from irqres.pmf import Pmf

US = 1000


def model_of(c_vals, c_probs, a_vals, a_probs, gran=US):
    """A model from execution values and inter-arrival values given in units of gran."""
    ex = Pmf(np.array(c_vals, dtype=np.int64) * gran, np.array(c_probs, dtype=float), gran)
    ia = Pmf(np.array(a_vals, dtype=np.int64) * gran, np.array(a_probs, dtype=float), gran)
    return CbsModel(ex, ia)


def reference(c, zv, zp, q, k_max, states=3000, iters=20000):
    """P{v <= δq} by iterating the exact transition of W on a large truncated space."""
    pw = np.zeros(states)
    pw[0] = 1.0
    for _ in range(iters):
        up = np.convolve(pw, c)[:states]  # W + c (mass beyond the space is negligible)
        new = np.zeros(states)
        for z, p in zip(zv, zp, strict=True):
            s = int(z * q)
            new[0] += p * up[: s + 1].sum()
            new[1 : states - s] += p * up[s + 1 :] if s + 1 < states else 0.0
        if np.abs(new - pw).sum() < 1e-15:
            pw = new
            break
        pw = new
    pv = np.convolve(pw, c)
    cdf = np.cumsum(pv)
    return np.array([cdf[min(d * q, cdf.size - 1)] for d in range(1, k_max + 1)])


def test_deterministic_exact():
    # c = 3 units, inter-arrival 20 units = 2 periods of 10, q = 2: v = 3 always.
    m = model_of([3], [1.0], [20], [1.0])
    r = m.solve(2 * US, 10 * US, max_delta=4)
    assert r.stable and list(r.prob) == [0.0, 1.0, 1.0, 1.0]
    assert r.error_bound == 0.0
    assert r.prob_within(10 * US) == 0.0 and r.prob_within(20 * US) == 1.0
    # Within 1.5 periods the server surely supplies 1 period + max(0, 5 - 8) = 2 units.
    assert r.prob_within(15 * US) == 0.0
    # Critical but deterministic: v = max(v - 2, 0) + 2 = 2 forever, stable.
    crit = model_of([2], [1.0], [10], [1.0]).solve(2 * US, 10 * US, max_delta=2)
    assert crit.stable and list(crit.prob) == [1.0, 1.0]


def test_unstable_reported_as_such():
    m = model_of([3], [1.0], [10], [1.0])
    r = m.solve(2 * US, 10 * US)
    assert not r.stable and r.prob is None and r.load == 1.5
    assert r.prob_within(10 * US) is None
    assert r.to_dict()["prob_within_periods"] is None
    # Arrivals always within one period: z = 0, unstable at any budget.
    r0 = model_of([1], [1.0], [5], [1.0]).solve(9 * US, 10 * US)
    assert not r0.stable and r0.load == float("inf")


@pytest.mark.parametrize("p", [0.1, 0.3, 0.45])
def test_geometric_backlog_exact(p):
    # c = 1, z in {0, 2}, q = 1: X = +1 w.p. p, -1 w.p. 1-p, so W is geometric with
    # ratio r = p/(1-p) and P{v <= δ} = P{W <= δ-1} = 1 - r^δ.
    m = model_of([1], [1.0], [0, 20], [p, 1 - p])
    r = m.solve(US, 10 * US, max_delta=8)
    expect = 1 - (p / (1 - p)) ** np.arange(1, 9)
    assert np.allclose(r.prob, expect, atol=1e-10)
    assert r.error_bound < 1e-9


@pytest.mark.parametrize("cap", [64, 128, 256])
@pytest.mark.parametrize("p", [0.3, 0.45, 0.49])
def test_error_bound_holds_when_the_grid_is_capped(monkeypatch, p, cap):
    # Force grids too small for the tail: the reported bound must cover the real error.
    monkeypatch.setattr(cbs, "MAX_GRID", cap)
    m = model_of([1], [1.0], [0, 20], [p, 1 - p])
    r = m.solve(US, 10 * US, max_delta=8)
    expect = 1 - (p / (1 - p)) ** np.arange(1, 9)
    assert r.grid <= cap
    assert np.max(np.abs(r.prob - expect)) <= r.error_bound


def test_against_truncated_chain():
    c = np.array([0.0, 0.1, 0.2, 0.3, 0.1, 0.2, 0.1])  # 0..6 units
    m = model_of(np.flatnonzero(c), c[c > 0], [0, 10, 20, 30], [0.2, 0.3, 0.3, 0.2])
    r = m.solve(3 * US, 10 * US, max_delta=6)
    zv, zp = m.z_pmf(10 * US)
    ref = reference(m.c, zv, zp, 3, 6)
    assert np.allclose(r.prob, ref, atol=1e-9)


pmf_st = st.lists(st.integers(1, 30), min_size=1, max_size=6)


@st.composite
def chains(draw):
    cv = sorted(set(draw(st.lists(st.integers(0, 24), min_size=1, max_size=6))))
    cw = draw(st.lists(st.integers(1, 30), min_size=len(cv), max_size=len(cv)))
    zv = sorted(set(draw(st.lists(st.integers(0, 6), min_size=1, max_size=5))))
    zw = draw(st.lists(st.integers(1, 30), min_size=len(zv), max_size=len(zv)))
    q = draw(st.integers(1, 10))
    return cv, np.array(cw) / sum(cw), [z * 10 for z in zv], np.array(zw) / sum(zw), q


def stable_model(chain, max_load, max_q=10):
    """The model of a drawn chain and its q (at most max_q); skips loads >= max_load."""
    cv, cp, av, ap, q = chain
    q = min(q, max_q)
    m = model_of(cv, cp, av, ap)
    assume(m.load(q * US, 10 * US) < max_load)
    return m, q


@settings(max_examples=40, deadline=None, derandomize=True)
@given(chains())
def test_solver_matches_reference(chain):
    m, q = stable_model(chain, 0.85)
    r = m.solve(q * US, 10 * US, max_delta=5)
    zv, zp = m.z_pmf(10 * US)
    assert np.allclose(r.prob, reference(m.c, zv, zp, q, 5), atol=1e-7)


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(chains())
def test_solver_agrees_with_monte_carlo(chain):
    m, q = stable_model(chain, 0.9)
    r = m.solve(q * US, 10 * US, max_delta=4)
    mc = simulate(m, q * US, 10 * US, max_delta=4, n_jobs=100_000, seed=7, confidence=0.999)
    assert np.all(r.prob >= mc.low - 1e-9) and np.all(r.prob <= mc.high + 1e-9)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(chains())
def test_monotone_in_delta_and_budget(chain):
    m, q = stable_model(chain, 0.95, max_q=9)  # q + 1 must fit in the period of 10 units
    r = m.solve(q * US, 10 * US, max_delta=6)
    assert np.all(np.diff(r.prob) >= 0) and np.all((r.prob >= 0) & (r.prob <= 1))
    more = m.solve((q + 1) * US, 10 * US, max_delta=6)
    assert np.all(more.prob >= r.prob - r.error_bound - more.error_bound)


def test_random_pmf_of_1000_bins():
    rng = np.random.default_rng(5)
    ex = Pmf.from_samples(rng.gamma(2.0, 150.0, 200_000).astype(np.int64), 1)
    ia = Pmf.from_samples(rng.exponential(1000.0, 200_000).astype(np.int64), 1, "down")
    m = CbsModel(ex, ia)
    r = m.solve(700, 1000, max_delta=8)
    assert r.stable and 0.5 < r.load < 0.95 and r.error_bound < 1e-6
    mc = simulate(m, 700, 1000, max_delta=8, n_jobs=1_000_000, seed=1, confidence=0.999)
    assert np.all(r.prob >= mc.low) and np.all(r.prob <= mc.high)


def test_supply_units():
    # Q = 2, T = 10 (units of 1): supply at the end of each period.
    assert supply_units(10, 2, 10, 1) == 2
    assert supply_units(15, 2, 10, 1) == 2
    assert supply_units(19, 2, 10, 1) == 3
    assert supply_units(20, 2, 10, 1) == 4
    assert supply_units(7, 2, 10, 1) == 0


@pytest.mark.parametrize(
    ("q", "t", "match"),
    [
        (0, 10 * US, "runtime: must be positive"),
        (20 * US, 10 * US, "larger than the period"),
        (500, 10 * US, "smaller than the granularity"),
        (US, 0, "period: must be positive"),
        (1.5, 10 * US, "runtime: expected integer"),
    ],
)
def test_bad_input(q, t, match):
    m = model_of([1], [1.0], [20], [1.0])
    with pytest.raises(ModelError, match=match):
        m.solve(q, t)


def test_bad_model_and_simulation_input():
    with pytest.raises(ModelError, match="two Pmf"):
        CbsModel([1, 2], [3])
    m = model_of([1], [1.0], [20], [1.0])
    with pytest.raises(ModelError, match="max_delta"):
        m.solve(US, 10 * US, max_delta=0)
    with pytest.raises(ModelError, match="confidence"):
        simulate(m, US, 10 * US, confidence=1.0)
    with pytest.raises(ModelError, match="after burn-in"):
        simulate(m, US, 10 * US, n_jobs=10)
    with pytest.raises(ModelError, match="use a granularity"):
        CbsModel(Pmf.from_samples(np.array([10**9]), 1), Pmf.from_samples(np.array([1]), 1))


def test_monte_carlo_deterministic_and_seeded():
    m = model_of([3], [1.0], [20], [1.0])
    mc = simulate(m, 2 * US, 10 * US, max_delta=3, n_jobs=1000)
    assert list(mc.prob) == [0.0, 1.0, 1.0]
    assert mc.low[1] < 1.0 and mc.high[0] > 0.0  # the rule-of-three floor
    m2 = model_of([1, 5], [0.5, 0.5], [0, 20], [0.4, 0.6])
    a = simulate(m2, 2 * US, 10 * US, seed=3, n_jobs=5000)
    b = simulate(m2, 2 * US, 10 * US, seed=3, n_jobs=5000)
    assert np.array_equal(a.prob, b.prob) and a.to_dict()["n_jobs"] == 5000
