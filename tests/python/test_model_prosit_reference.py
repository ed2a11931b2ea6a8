"""The CBS solver against published numbers of PROSIT, the classic tool for this chain.

The expected values below are PROSIT's own output (its periodic-task solver, cyclic
reduction of the quasi-birth-death chain), copied as numbers: nothing here is computed by
irqres except the value under test. The execution PMF is built from its definition, a
Gaussian N(1000 µs, 150 µs) sampled on 500..1500 µs in steps of Δ = 10 µs and
normalised, as PROSIT's examples build it.

Where the two differ (aperiodic arrivals) is stated in docs/model.md, "irqres and
PROSIT".
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from irqres.model.cbs import CbsModel
from irqres.pmf import Pmf

US = 1_000
DELTA_NS = 10 * US


def gaussian_exec_pmf() -> Pmf:
    x_us = np.arange(500, 1501, 10)
    dens = np.array([math.exp(-0.5 * ((v - 1000) / 150) ** 2) for v in x_us])
    return Pmf(x_us * US, dens / dens.sum(), DELTA_NS)


def periodic(period_us: int) -> Pmf:
    return Pmf(np.array([period_us * US]), np.array([1.0]), DELTA_NS)


# (Q µs, server period µs, task period µs) -> {deadline µs: PROSIT's P{d <= deadline}}
PROSIT = {
    (1000, 5000, 10000): {5000: 0.513308, 10000: 1.0},
    (1100, 2000, 2000): {2000: 0.653781},
}


@pytest.mark.parametrize(("budget_us", "server_us", "task_us"), sorted(PROSIT))
def test_periodic_task_matches_prosit(budget_us, server_us, task_us):
    model = CbsModel(gaussian_exec_pmf(), periodic(task_us))
    res = model.solve(budget_us * US, server_us * US, max_delta=5)
    assert res.stable
    for deadline_us, expected in PROSIT[(budget_us, server_us, task_us)].items():
        got = res.prob_within(deadline_us * US)
        # PROSIT prints six decimals; the solver's own bound is far below that
        assert abs(got - expected) <= 5e-7 + res.error_bound, (deadline_us, got, expected)


def test_first_fixture_is_the_probability_of_fitting_one_budget():
    # Q = 1000 µs every 5000 µs, a job every 10000 µs: the backlog is always empty at an
    # arrival, so P{d <= 5000 µs} = P{c <= 1000 µs}, which PROSIT gives as 0.513308
    c = gaussian_exec_pmf()
    assert abs(c.prob_le(1000 * US) - 0.513308) <= 5e-7
