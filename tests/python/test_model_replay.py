"""Replay through a simulated SCHED_DEADLINE server, against hand-computed timelines."""

import numpy as np
import pytest
from irqres.errors import ModelError
from irqres.model.cbs import CbsModel
from irqres.model.replay import replay
from irqres.pmf import Pmf


def run(arrivals, execs, q, t, d=None):
    r = replay(np.array(arrivals), np.array(execs), q, t, d, max_delta=3)
    return r.finish_ns.tolist(), r


def test_throttle_and_replenish():
    # Q=2, T=10: runs 0-2, throttled to 10 (d 10 -> 20), runs 10-12, throttled to 20
    # (d -> 30), runs 20-21.
    finish, r = run([0], [5], 2, 10)
    assert finish == [21] and r.throttles == 2
    assert r.response_ns.tolist() == [21]
    assert r.prob.tolist() == [0.0, 0.0, 1.0]


def test_wakeup_without_overflow_keeps_deadline():
    # Job 1 at 0 (exec 1): d = 10, r = 3 left. Job 2 wakes at 2: (10-2)*4 = 32 >= 3*10,
    # no overflow: keeps d = 10, r = 3; runs 2-5, throttled to 10, d = 20, runs 10-11.
    finish, r = run([0, 2], [1, 4], 4, 10)
    assert finish == [1, 11] and r.throttles == 1


def test_overflow_wakeup_replenishes():
    # Job 2 wakes at 8: (10-8)*4 = 8 < 3*10: overflow, so d = 18, r = 4: runs 8-12 and
    # ends with r = 0 (throttled until 18, then d = 28, r = 4). Job 3 arrives at 13
    # while the thread is throttled, waits until 18 and runs 18-19.
    finish, r = run([0, 8, 13], [1, 4, 1], 4, 10)
    assert finish == [1, 12, 19] and r.throttles == 1


def test_fifo_and_deadline_passed():
    # Two jobs at once are served in order; a late arrival (d passed) gets a new budget.
    finish, _ = run([0, 0, 100], [1, 1, 2], 2, 10)
    assert finish == [1, 2, 102]


def test_constrained_deadline_revised_wakeup():
    # Q=2, D=5, T=10. Job 1: d = 5, r = 1 left. Job 2 wakes at 4: overflow
    # ((5-4)*2 < 1*5) with the deadline ahead: revised rule r = (5-4)*2//5 = 0, so it is
    # throttled until 5, replenished (d = 15, r = 2) and runs 5-6.
    finish, _ = run([0, 4], [1, 1], 2, 10, 5)
    assert finish == [1, 6]
    # With an implicit deadline the same wake-up replenishes at once (d = 14): ends at 5.
    assert run([0, 4], [1, 1], 2, 5)[0] == [1, 5]


def test_probabilities_and_pessimism():
    rng = np.random.default_rng(2)
    n = 20000
    arr = np.cumsum(rng.integers(500, 3000, n))
    exe = rng.integers(50, 600, n)
    r = replay(arr, exe, 600, 1000, max_delta=5)
    resp = r.response_ns
    assert np.all(resp >= exe)
    assert r.prob[0] == np.mean(resp <= 1000) and np.all(np.diff(r.prob) >= 0)
    model = CbsModel(
        Pmf.from_samples(exe, 10, "up"), Pmf.from_samples(np.diff(arr), 10, "down")
    ).solve(600, 1000, max_delta=5)
    gap = r.pessimism(model)
    # The model rounds against the reservation: the replay does at least as well.
    assert gap.shape == (5,) and np.all(gap >= -0.01)
    d = r.to_dict()
    assert d["jobs"] == n and d["response_max_ns"] == int(resp.max())


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (([0, 1], [1], 2, 10), "2 arrival times but 1"),
        (([], [], 2, 10), "no activations"),
        (([5, 1], [1, 1], 2, 10), "sorted"),
        (([0], [-1], 2, 10), "negative"),
        (([0], [1], 20, 10), "runtime <= deadline <= period"),
        (([0], [1], 2, 10, 1), "runtime <= deadline <= period"),
        (([0.5], [1], 2, 10), "fractional"),
    ],
)
def test_bad_input(args, match):
    arrivals, execs, *rest = args
    with pytest.raises(ModelError, match=match):
        replay(np.array(arrivals), np.array(execs), *rest)
