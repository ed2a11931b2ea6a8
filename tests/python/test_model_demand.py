"""The per-period demand model: demands by hand, exact chains, Monte Carlo, replay and
the recommendation for interrupts that arrive many times per period."""

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from irqres.errors import ModelError
from irqres.model.demand import DemandModel, demand_granularity, occupied_demand, period_demand
from irqres.model.montecarlo import simulate
from irqres.model.recommend import recommend
from irqres.model.replay import replay
from irqres.pmf import Pmf, default_granularity

US, MS = 1_000, 1_000_000


def test_period_demand_by_hand():
    arr = np.array([0, 300, 999, 2999, 3000, 3500]) * US
    exe = np.array([10, 20, 30, 50, 60, 70]) * US
    d, n = period_demand(arr, exe, MS)
    # [0, 1ms): 10+20+30; [1ms, 2ms): nothing; [2ms, 3ms): 50; [3ms, 4ms), cut at the
    # last arrival: 60+70.
    assert d.dtype == np.int64 and d.tolist() == [60 * US, 0, 50 * US, 130 * US]
    assert n.dtype == np.int64 and n.tolist() == [3, 0, 1, 2]
    # Periods start at the first arrival, not at time 0; a boundary belongs to the next.
    d7, n7 = period_demand(arr + 7, exe, MS)
    assert d7.tolist() == d.tolist() and n7.tolist() == n.tolist()
    d5, n5 = period_demand(np.array([5, 10, 15, 20]), np.array([1, 2, 4, 8]), 5)
    assert d5.tolist() == [1, 2, 4, 8] and n5.tolist() == [1, 1, 1, 1]


@pytest.mark.parametrize(
    ("arr", "exe", "t", "match"),
    [
        ([0, 500 * US], [1, 1], MS, "less than one period of 1ms"),
        ([0, 2 * MS, MS], [1, 1, 1], MS, "sorted"),
        ([0, 2 * MS], [1], MS, "2 arrival times but 1"),
        ([0, 2 * MS], [1, -1], MS, "negative"),
        ([0, 2 * MS], [1, 1], 0, "period: must be positive"),
        ([], [], MS, "none to measure"),
        ([0.5, 2 * MS], [1, 1], MS, "fractional"),
    ],
)
def test_period_demand_bad_input(arr, exe, t, match):
    with pytest.raises(ModelError, match=match):
        period_demand(np.array(arr), np.array(exe, dtype=np.int64), t)


def test_demand_model_bad_input():
    with pytest.raises(ModelError, match="Pmf of the work"):
        DemandModel([1, 2], MS)
    m = DemandModel.from_activations(np.arange(11) * 100 * US, np.full(11, 20 * US), MS, US)
    with pytest.raises(ModelError, match="measured per period of 1ms, cannot be solved for"):
        m.solve(200 * US, 2 * MS)
    with pytest.raises(ModelError, match="granularity: must be positive"):
        DemandModel.from_activations(np.arange(11) * 100 * US, np.full(11, 1), MS, 0)
    with pytest.raises(ModelError, match="2 demands need as many job counts"):
        DemandModel.from_demand(np.array([1, 2]), np.array([1]), MS, 1)
    with pytest.raises(ModelError, match="not all 0"):
        DemandModel.from_demand(np.array([1, 2]), np.array([0, 0]), MS, 1)
    outside = Pmf(np.array([3 * US]), np.array([1.0]), US)
    with pytest.raises(ModelError, match="outside the work's support"):
        DemandModel(m.demand_pmf, MS, job_pmf=outside)


def frequent(n=20_000, every=100 * US, exec_ns=20 * US):
    return np.arange(n, dtype=np.int64) * every, np.full(n, exec_ns, dtype=np.int64)


def test_deterministic_demand_exact():
    # Ten jobs of 20us in every 1ms (the last period too): d = 200us always.
    arr, exe = frequent()
    m = DemandModel.from_activations(arr, exe, MS, 200)
    assert m.periods == 2000 and m.c_max == 1000 and m.mean_c == 1000.0
    r = m.solve(200 * US, MS, max_delta=3)
    assert r.stable and list(r.prob) == [1.0, 1.0, 1.0] and r.error_bound == 0.0
    assert r.load == 1.0  # the deterministic critical case: a constant backlog, stable
    low = m.solve(199_800, MS)
    assert not low.stable and low.prob is None and low.load == pytest.approx(1000 / 999)
    # The per-activation view of the same jobs (z = floor(100us/1ms) = 0) is unbounded.
    act = recommend(arr, exe, periods_ns=[MS], model="activation", mc_jobs=0, run_replay=False)
    assert not act.rows[0].feasible and "demand model counts" in act.rows[0].reason


def two_valued(periods=300):
    """Period demands 100us, 100us, 300us, repeated: P{d = 1} = 2/3, P{d = 3} = 1/3 in
    units of 100us. A 100us period holds one job, a 300us period three of 100us."""
    arr, exe = [], []
    for k in range(periods):
        base = k * MS
        offsets = [0, 300, 600] if k % 3 == 2 else [0]
        arr += [base + o * US for o in offsets]
        exe += [100 * US] * len(offsets)
    return np.array(arr, dtype=np.int64), np.array(exe, dtype=np.int64)


def test_two_valued_demand_known_answer():
    # q = 2 units: X = d - q is -1 w.p. 2/3 and +1 w.p. 1/3, so the backlog W before a
    # batch is geometric with ratio r = 1/2, P{W <= w} = 1 - r^(w+1). A job is in a
    # 1-unit period w.p. (2/3·1)/(5/3) = 2/5 and in a 3-unit one w.p. 3/5, so
    # P{response <= δT} = 2/5·P{W <= 2δ-1} + 3/5·P{W <= 2δ-3}
    #                   = 2/5·(1 - 4^-δ) + 3/5·(1 - 4^-(δ-1)).
    arr, exe = two_valued()
    m = DemandModel.from_activations(arr, exe, MS, 100 * US)
    assert m.periods == 300 and m.mean_c == pytest.approx(5 / 3)
    assert m.job_pmf.probs.tolist() == pytest.approx([2 / 5, 3 / 5])
    r = m.solve(200 * US, MS, max_delta=6)
    delta = np.arange(1, 7)
    expect = 2 / 5 * (1 - 4.0**-delta) + 3 / 5 * (1 - 4.0 ** -(delta - 1))
    assert np.allclose(r.prob, expect, atol=1e-10)
    assert r.prob[0] == pytest.approx(0.3) and r.prob[1] == pytest.approx(0.825)
    assert r.load == pytest.approx(5 / 6) and r.error_bound < 1e-9
    # Counting periods instead of jobs would say 2/3·3/4 = 0.5 within one period.
    per_period = DemandModel(m.demand_pmf, MS).solve(200 * US, MS, max_delta=6)
    assert per_period.prob[0] == pytest.approx(0.5) and per_period.prob[1] == pytest.approx(7 / 8)
    for model, res in ((m, r), (DemandModel(m.demand_pmf, MS), per_period)):
        mc = simulate(model, 200 * US, MS, max_delta=6, n_jobs=200_000, seed=2, confidence=0.999)
        assert np.all(res.prob >= mc.low) and np.all(res.prob <= mc.high)
        # Tight enough for the check to mean something (the regenerative interval at
        # 99.9 % over ~90,000 cycles is about 0.021 wide at its widest here).
        assert np.max(mc.high - mc.low) < 0.025
    # The real jobs through a CBS of 200us every 1ms: the third job of a busy period
    # waits for the next replenishment (500us response) and delays the next period's
    # job by 100us, never beyond the period. The model, which piles each period's work
    # at its start and supplies q per period, is the pessimistic one.
    rep = replay(arr, exe, 200 * US, MS, max_delta=6)
    assert rep.response_ns.max() == 500 * US and rep.throttles > 0
    assert np.all(rep.pessimism(r) >= 0.0) and rep.pessimism(r)[0] == pytest.approx(0.7)


@st.composite
def frequent_arrivals(draw):
    """Random frequent arrivals: inter-arrivals and execution times from small PMFs."""
    gaps = draw(st.lists(st.integers(1, 400), min_size=1, max_size=5))
    execs = draw(st.lists(st.integers(0, 60), min_size=1, max_size=5))
    periods = draw(st.integers(3, 40)) * 100  # 300us .. 4ms
    load = draw(st.floats(0.3, 0.9))
    seed = draw(st.integers(0, 2**16))
    return gaps, execs, periods, load, seed


@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(frequent_arrivals())
def test_demand_solver_agrees_with_monte_carlo(case):
    gaps, execs, t_us, load, seed = case
    rng = np.random.default_rng(seed)
    n = 5000
    arr = np.cumsum(rng.choice(np.array(gaps) * US, n))
    exe = rng.choice(np.array(execs) * US, n)
    t = t_us * US
    assume(arr[-1] - arr[0] >= 20 * t)  # at least 20 periods of demand
    demand, jobs = period_demand(arr, exe, t)
    m = DemandModel.from_demand(demand, jobs, t, default_granularity(demand))
    g = m.granularity_ns
    q = max(int(np.ceil(m.mean_c / load)), 1)
    assume(q * g <= t)
    r = m.solve(q * g, t, max_delta=4)
    assert r.stable and np.all(np.diff(r.prob) >= 0)
    # 20 examples of 4 limits each: at 99.999 % per interval, the chance that any of the
    # 80 misses an exact solver is below 0.1 %.
    mc = simulate(m, q * g, t, max_delta=4, n_jobs=100_000, seed=seed, confidence=0.99999)
    assert np.all(r.prob >= mc.low - 1e-9) and np.all(r.prob <= mc.high + 1e-9)


def test_recommendation_for_frequent_interrupts():
    # A NIC under load: interrupts about every 100us (Poisson), 10..30us of work each,
    # periods of milliseconds. Utilisation about 20%.
    rng = np.random.default_rng(1)
    n = 50_000
    arr = np.cumsum(rng.exponential(100 * US, n).astype(np.int64))
    exe = rng.integers(10 * US, 30 * US, n)
    util = exe.sum() / (arr[-1] - arr[0])
    assert 0.19 < util < 0.21
    periods = [2 * MS, 5 * MS, 10 * MS]
    rec = recommend(arr, exe, periods_ns=periods, target_prob=0.99, mc_jobs=50_000)
    for row in rec.rows:
        assert row.model == "demand" and row.feasible, row.reason
        assert row.solver_prob - row.error_bound >= 0.99
        assert row.mc_low - 1e-3 <= row.solver_prob <= row.mc_high + 1e-3
        assert util < row.bandwidth < 2 * util
        assert row.replay_prob >= 0.99
        assert row.to_dict()["model"] == "demand"
        # One step of Δ less misses the target: the search is tight.
        m = DemandModel.from_activations(arr, exe, row.period_ns, row.granularity_ns)
        below = m.solve(row.runtime_ns - row.granularity_ns, row.period_ns)
        p = below.prob_within(row.period_ns)
        assert p is None or p - below.error_bound < 0.99
    # Longer periods average more interrupts: less bandwidth is needed.
    bw = [r.bandwidth for r in rec.rows]
    assert bw == sorted(bw, reverse=True) and rec.best.period_ns == 10 * MS
    assert "demand model" in rec.profile_snippet("nic", "interface: eth0")
    # The per-activation model cannot vouch for any of these periods.
    act = recommend(arr, exe, periods_ns=periods, model="activation", mc_jobs=0, run_replay=False)
    assert act.best is None and act.model == "activation"


def test_deterministic_frequent_recommendation_is_the_utilisation():
    arr, exe = frequent()
    rec = recommend(arr, exe, periods_ns=[MS, 2 * MS], mc_jobs=10_000)
    by_t = {r.period_ns: r for r in rec.rows}
    assert by_t[MS].runtime_ns == 200 * US and by_t[2 * MS].runtime_ns == 400 * US
    assert all(r.model == "demand" and r.bandwidth == 0.2 for r in rec.rows)
    assert all(r.solver_prob == 1.0 and r.replay_prob == 1.0 for r in rec.rows)


def test_automatic_choice_and_forced_models():
    # Inter-arrivals of exactly 1ms: at T = 1ms every one is >= T (per activation); at
    # 1.5ms none is (demand).
    arr = np.arange(3000, dtype=np.int64) * MS
    exe = np.full(3000, 100 * US, dtype=np.int64)
    quiet = {"mc_jobs": 0, "run_replay": False}
    rec = recommend(arr, exe, periods_ns=[MS, 1_500_000], **quiet)
    assert [r.model for r in rec.rows] == ["activation", "demand"]
    # 1.5ms periods hold one or two jobs (1:1): the demand model asks for 200us.
    assert rec.rows[1].runtime_ns == 200 * US
    forced = recommend(arr, exe, periods_ns=[MS, 1_500_000], model="demand", **quiet)
    assert [r.model for r in forced.rows] == ["demand", "demand"]
    assert forced.rows[0].runtime_ns == 100 * US and forced.to_dict()["model"] == "demand"
    # A trace shorter than the period gives the demand model nothing to measure.
    short = recommend(arr[:3], exe[:3], periods_ns=[5 * MS], model="demand", **quiet)
    row = short.rows[0]
    assert not row.feasible and row.model == "demand" and row.granularity_ns is None
    assert "less than one period of 5ms" in row.reason
    # Too few periods for the tail a target asks about: 3s of activations span 600
    # periods of 5ms, and a target of 0.999 needs 1,000. "auto" falls back and says why.
    strict = {"periods_ns": [5 * MS], "target_prob": 0.999, **quiet}
    fell = recommend(arr, exe, **strict).rows[0]
    assert fell.model == "activation" and "unbounded backlog" in fell.reason
    assert "(not the demand model: the activations span 600 periods of 5ms, fewer than the " in (
        fell.reason
    )
    few = recommend(arr, exe, model="demand", **strict).rows[0]
    assert few.model == "demand" and not few.feasible
    assert few.reason.startswith("demand model: the activations span 600 periods of 5ms")
    assert recommend(arr, exe, model="demand", **{**strict, "target_prob": 0.99}).best
    with pytest.raises(ModelError, match="model: must be one of auto, activation, demand"):
        recommend(arr, exe, model="fluid", **quiet)


def _activations(seed, n=400):
    rng = np.random.default_rng(seed)
    arr = np.cumsum(rng.choice(np.array([0, 1, 40, 300, 2500, 9000]) * US, n))
    exe = rng.choice(np.array([0, 3, 17, 250]) * US, n)
    return arr, exe


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("t", [100 * US, MS, 7 * MS])
def test_occupied_demand_is_the_series_without_its_empty_periods(seed, t):
    arr, exe = _activations(seed)
    d, n = period_demand(arr, exe, t)
    occ_d, occ_n, periods = occupied_demand(arr, exe, t)
    assert periods == d.size and np.all(occ_n >= 1)
    assert occ_d.tolist() == d[n > 0].tolist() and occ_n.tolist() == n[n > 0].tolist()
    assert demand_granularity(occ_d, periods) == default_granularity(d)
    g = default_granularity(d)
    dense = DemandModel.from_demand(d, n, t, g)
    sparse = DemandModel.from_demand(occ_d, occ_n, t, g, periods=periods)
    for a, b in ((dense.demand_pmf, sparse.demand_pmf), (dense.job_pmf, sparse.job_pmf)):
        assert a.values_ns.tolist() == b.values_ns.tolist() and a.count == b.count
        np.testing.assert_allclose(a.probs, b.probs, rtol=1e-12)


def test_a_corrupted_timestamp_costs_one_period_not_its_span():
    # One activation's timestamp with a high bit flipped: ~36 years after the others.
    # The demand of 100us periods over that span would take 90 TB laid out period by
    # period; by occupied period it is as small as the activations.
    arr, exe = frequent()
    arr = np.append(arr, arr[-1] + (1 << 60))
    exe = np.append(exe, exe[-1])
    demand, jobs, periods = occupied_demand(arr, exe, 100 * US)
    assert periods > 10**13 and demand.size <= arr.size and int(jobs.sum()) == arr.size
    m = DemandModel.from_activations(arr, exe, 100 * US, US)
    assert m.periods == periods and m.demand_pmf.prob_le(0) > 0.999
    with pytest.raises(ModelError, match=r"periods of 100us: more than the 16,777,216 .*corrupted"):
        period_demand(arr, exe, 100 * US)
    rec = recommend(arr, exe, periods_ns=[MS], model="demand", mc_jobs=1000, run_replay=False)
    assert len(rec.rows) == 1
