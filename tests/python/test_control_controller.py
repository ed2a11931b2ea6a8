"""The threshold controller against sequences computed by hand (values in ns)."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from irqres.control import ControlError, ControllerConfig, ThresholdController
from irqres.control.controller import drain_intervals


def cfg(**kw):
    base = dict(name="nic", period_ns=1_000_000, gain=0.5, window=2, default_job_ns=10_000,
                min_runtime_ns=100_000, max_runtime_ns=900_000, hysteresis_ns=0,
                form="published")
    base.update(kw)
    return ControllerConfig(**base)


def test_hand_computed_sequence_queued():
    c = ThresholdController(cfg(), 500_000)
    # i=1: T_rmn = 5*200000//10; the window is empty, so both terms are 0.
    s = c.update(10, 200_000, 5)
    assert (s.t_rmn_ns, s.d_plus_ns, s.d_minus_ns, s.budget_ns) == (100_000, 0, 0, 500_000)
    assert s.send is False and s.clamp is None
    # i=2: +dT = -(100k - 300k) = 200k, -dT = 200k - 300k = -100k; 0.5 * 100k = 50k.
    s = c.update(10, 300_000, 10)
    assert (s.t_rmn_ns, s.d_plus_ns, s.d_minus_ns) == (300_000, 200_000, -100_000)
    assert s.budget_ns == 550_000 and s.send is True
    # i=3, N_pro = 0: T_rmn = 4 * default_job = 40k; window means 200k (rmn), 250k (pro):
    # +dT = -(200k - 40k) = -160k, -dT = 250k - 0 = 250k; 0.5 * 90k = 45k.
    s = c.update(0, 0, 4)
    assert (s.t_rmn_ns, s.d_plus_ns, s.d_minus_ns, s.budget_ns) == (40_000, -160_000,
                                                                    250_000, 595_000)
    # i=4: window (AW = 2) now holds i=2,3: rmn mean 170k, pro mean 150k.
    # T_rmn = 100*100k//1 = 10M; +dT = 9.83M, -dT = 50k; 0.5 * 9.88M = 4.94M -> max.
    s = c.update(1, 100_000, 100)
    assert s.threshold_ns == 595_000 + 4_940_000
    assert (s.budget_ns, s.clamp) == (900_000, "max")
    # i=5: no wind-up: starts from the clamped 900k. rmn mean 5.02M, pro mean 50k:
    # +dT = -5.02M, -dT = 50k - 900k = -850k; 0.5 * -5.87M = -2.935M -> min.
    s = c.update(10, 900_000, 0)
    assert s.threshold_ns == 900_000 - 2_935_000
    assert (s.budget_ns, s.clamp) == (100_000, "min")


def test_deferred_orientation_is_the_printed_formula():
    c = ThresholdController(cfg(orientation="deferred"), 500_000)
    c.update(10, 200_000, 5)
    # +dT = mean(T_rmn) - T_rmn = 100k - 300k = -200k; -dT = -100k; 0.5 * -300k.
    s = c.update(10, 300_000, 10)
    assert (s.d_plus_ns, s.d_minus_ns, s.budget_ns) == (-200_000, -100_000, 350_000)


def test_drain_time_makes_the_backlog_loop_critically_damped():
    for g in (0.05, 0.25, 0.5, 1.0):
        tau = drain_intervals(g)
        b = 2 - g - g / tau                      # z^2 - b z + (1 - g): discriminant 0
        assert b * b == pytest.approx(4 * (1 - g))
    assert drain_intervals(0.25) == pytest.approx(13.93, abs=0.01)
    assert drain_intervals(1.0) == 1.0


def test_hand_computed_sequence_backlog_form():
    # G = 0.5: tau = 0.5 / (1 - sqrt(0.5))^2 = 5.8284...; hold 2 jobs; AW = 2.
    c = ThresholdController(cfg(form="backlog", hold=2), 500_000)
    tau = drain_intervals(0.5)
    # i=1: t_job 20k; no earlier N_rmn, so D = T_pro = 200k; -dT = 200k - 500k;
    # +dT = (5 - 2) * 20k / tau = 10294.4; 0.5 * (10294.4 - 300000) = -144852.8
    s = c.update(10, 200_000, 5)
    assert round(60_000 / tau) == 10_294
    assert (s.d_plus_ns, s.d_minus_ns, s.budget_ns) == (10_294, -300_000, 355_147)
    # i=2: t_job 30k; the backlog grew 5 jobs: D = 300k + 150k; mean {200k, 450k} = 325k;
    # -dT = 325k - 355147 = -30147; +dT = 8 * 30k / tau = 41177.0; 0.5 * 11030.0 -> +5515
    s = c.update(10, 300_000, 10)
    assert (s.d_plus_ns, s.d_minus_ns, s.budget_ns) == (41_177, -30_147, 360_662)
    # i=3, N_pro = 0: t_job = default_job 10k; shrank 6 jobs: D = max(-60k, 0) = 0;
    # mean {450k, 0} = 225k; -dT = -135662; +dT = 2 * 10k / tau = 3431.5; -> -66115
    s = c.update(0, 0, 4)
    assert (s.d_plus_ns, s.d_minus_ns, s.budget_ns) == (3_431, -135_662, 294_547)
    # saturation at both clamps, without wind-up
    s = c.update(1, 100_000, 300)
    assert (s.budget_ns, s.clamp) == (900_000, "max")
    assert c.threshold_ns == 900_000                 # the next step starts from the clamp
    c = ThresholdController(cfg(form="backlog"), 150_000)
    s = c.update(10, 10_000, 0)      # -dT = 10k - 150k, +dT = 0: 150k - 70k = 80k
    assert (s.threshold_ns, s.budget_ns, s.clamp) == (80_000, 100_000, "min")


def test_backlog_form_keeps_raising_while_behind_and_follows_a_fall():
    tau = drain_intervals(0.5)
    # a task steadily 3 jobs behind: the same N_rmn every interval still raises Q ...
    c = ThresholdController(cfg(form="backlog", window=3), 300_000)
    budgets = []
    for _ in range(8):
        budgets.append(c.update(10, c.threshold_ns, 3).budget_ns)
    assert all(b2 > b1 for b1, b2 in itertools.pairwise(budgets))
    # ... and once nothing is left over, Q settles on the work that arrives
    for _ in range(40):
        s = c.update(10, 200_000, 0)
    assert abs(s.budget_ns - 200_000) <= 1
    # fewer left over than the hold lowers the budget below the demand
    c = ThresholdController(cfg(form="backlog", hold=5, window=3), 300_000)
    s = c.update(10, 300_000, 0)
    assert s.budget_ns == 300_000 + round(0.5 * (-5 * 30_000 / tau))


def test_window_mean_excludes_current_sample_and_slides():
    c = ThresholdController(cfg(window=1, gain=1.0), 500_000)
    c.update(1, 100_000, 0)
    c.update(1, 300_000, 0)          # mean of {100k} - 300k = -200k
    assert c.threshold_ns == 300_000
    s = c.update(1, 300_000, 0)      # window is {300k} only: no change
    assert s.d_minus_ns == 0 and s.budget_ns == 300_000


def test_hysteresis_holds_small_moves_back():
    c = ThresholdController(cfg(hysteresis_ns=60_000), 500_000)
    c.update(10, 200_000, 5)
    s = c.update(10, 300_000, 10)    # +50k: not more than 60k
    assert s.budget_ns == 550_000 and s.send is False
    s = c.update(0, 0, 4)            # +45k more: 95k from the 500k last sent
    assert s.budget_ns == 595_000 and s.send is True and c.sent_ns == 595_000


def test_buffering_bound_and_bandwidth_left_clamp():
    # T - N_c*P = 1ms - 10*50us = 500us: Q must be above it.
    conf = cfg(buffer=10, min_interarrival_ns=50_000)
    assert conf.buffering_floor_ns == 500_001 and conf.lower_ns == 500_001
    c = ThresholdController(conf, 200_000)
    assert c.threshold_ns == 500_001
    c.update(10, 200_000, 0)
    s = c.update(10, 800_000, 0)     # 0.5 * (200k - 800k) = -300k -> floor
    assert (s.budget_ns, s.clamp) == (500_001, "min")
    c2 = ThresholdController(cfg(), 500_000)
    c2.update(10, 900_000, 0)
    s = c2.update(0, 0, 0, bandwidth_left_ns=520_000)   # +450k wanted, 520k admitted
    assert (s.budget_ns, s.clamp) == (520_000, "max")
    s = c2.update(0, 0, 0, bandwidth_left_ns=0)         # nothing left: the floor holds
    assert (s.budget_ns, s.clamp) == (100_000, "max")
    s = c2.update(0, 0, 0, bandwidth_left_ns=0)         # and stays, no oscillation
    assert s.budget_ns == 100_000


def test_derived_clamps():
    conf = ControllerConfig(name="x", period_ns=10_000_000, deadline_ns=8_000_000)
    assert conf.lower_ns == 1024 and conf.upper_ns == 8_000_000


@pytest.mark.parametrize("kw, word", [
    (dict(gain=0), "gain"), (dict(gain=1.5), "gain"), (dict(window=0), "window"),
    (dict(period_ns=0), "period_ns"), (dict(min_runtime_ns=-1), "min_runtime_ns"),
    (dict(min_runtime_ns=950_000), "min_runtime_ns"), (dict(buffer=0), "buffer"),
    (dict(orientation="sideways"), "orientation"), (dict(form="pid"), "form"),
    (dict(hold=-1), "hold"), (dict(hold=8, buffer=8), "hold: 8 jobs do not fit"),
    (dict(deadline_ns=2_000_000), "deadline"),
])
def test_bad_settings_are_named(kw, word):
    with pytest.raises(ControlError, match=f"target nic: {word}"):
        cfg(**kw)


def test_bad_inputs_are_named():
    c = ThresholdController(cfg(), 500_000)
    with pytest.raises(ControlError, match="N_pro must be a non-negative integer"):
        c.update(-1, 0, 0)
    with pytest.raises(ControlError, match="T_pro"):
        c.update(1, 1.5, 0)


def test_from_status():
    t = {"name": "nic", "period_ns": 1_000_000, "deadline_ns": 1_000_000, "buffer": 64,
         "min_interarrival_ns": None,
         "adaptive": {"sample_ns": 1_000_000, "gain": 0.25, "window": 100,
                      "default_job_ns": 20_000, "min_runtime_ns": 0,
                      "max_runtime_ns": 800_000, "hysteresis_ns": 10_000}}
    conf = ControllerConfig.from_status(t)
    assert (conf.buffer, conf.min_interarrival_ns, conf.upper_ns) == (64, None, 800_000)
    with pytest.raises(ControlError, match="target nic: irqresd reports no adaptive"):
        ControllerConfig.from_status({**t, "adaptive": None})
    with pytest.raises(ControlError, match="target nic: irqresd's status lacks"):
        ControllerConfig.from_status({"name": "nic", "adaptive": {}})


def test_threshold_per_sample_budget_per_period():
    """S = 2T: T_thr is CPU time per 2 ms, Q = T_thr / 2 per 1 ms period."""
    c = ThresholdController(cfg(sample_ns=2_000_000, gain=1.0, window=1), 500_000)
    assert c.threshold_ns == 1_000_000
    assert c.update(10, 1_000_000, 0).budget_ns == 500_000
    s = c.update(10, 600_000, 0)            # -dT = 1.0M - 0.6M: T_thr 1.4M per 2 ms
    assert (s.threshold_ns, s.budget_ns) == (1_400_000, 700_000)
    s = c.update(10, 0, 0)                  # T_thr 2.0M > 2 * 900us
    assert (s.threshold_ns, s.budget_ns, s.clamp) == (2_000_000, 900_000, "max")
    s = c.update(0, 0, 0, bandwidth_left_ns=600_000)
    assert (s.budget_ns, s.clamp) == (600_000, "max")
    c.hold(300_000)
    assert (c.threshold_ns, c.sent_ns) == (600_000, 300_000)

interval = st.tuples(st.integers(0, 10_000), st.integers(0, 50_000_000), st.integers(0, 10_000))


@settings(max_examples=200, deadline=None)
@given(seq=st.lists(interval, min_size=1, max_size=60),
       gain=st.floats(0.01, 1.0), window=st.integers(1, 20),
       sample=st.sampled_from([1_000_000, 2_000_000, 5_000_000]),
       variant=st.sampled_from(["queued", "deferred", "backlog"]),
       bw=st.one_of(st.none(), st.integers(0, 2_000_000)), hold=st.integers(0, 50))
def test_budget_is_an_integer_inside_the_clamps(seq, gain, window, sample, variant, bw, hold):
    """Published form with either orientation, and the backlog form."""
    form = "backlog" if variant == "backlog" else "published"
    c = ThresholdController(cfg(gain=gain, window=window, sample_ns=sample, form=form,
                                orientation="queued" if form == "backlog" else variant,
                                hold=hold, hysteresis_ns=20_000), 400_000)
    for n_pro, t_pro, n_rmn in seq:
        last_sent = c.sent_ns
        s = c.update(n_pro, t_pro, n_rmn, bw)
        assert type(s.budget_ns) is int and type(s.threshold_ns) is int
        upper = 900_000 if bw is None else min(900_000, bw)
        assert 100_000 <= s.budget_ns <= 900_000
        assert s.budget_ns <= max(upper, 100_000)
        # sent exactly when it moved more than the hysteresis from the last budget sent
        assert s.send == (abs(s.budget_ns - last_sent) > 20_000)
