"""The numerical routines the model carries instead of importing scipy, against scipy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from irqres.errors import ModelError
from irqres.model.numeric import brentq, next_fast_len, student_t_quantile
from scipy import fft as sp_fft
from scipy import optimize, stats


def test_next_fast_len_is_scipys_for_real_transforms():
    ours = [next_fast_len(n) for n in range(1, 20_001)]
    theirs = [sp_fft.next_fast_len(n, real=True) for n in range(1, 20_001)]
    assert ours == theirs
    for n in (2**20 - 1, 2**20 + 1, 999_999, 1_000_001, 3**12 + 1, 5**8 - 1):
        assert next_fast_len(n) == sp_fft.next_fast_len(n, real=True)
    with pytest.raises(ModelError, match="at least 1, got 0"):
        next_fast_len(0)


@pytest.mark.parametrize("df", [*range(1, 61), 99, 100, 199, 200, 1000])
def test_student_t_quantile_matches_scipy(df):
    for p in (0.5, 0.6, 0.9, 0.95, 0.975, 0.99, 0.995, 0.9995, 0.025, 0.1, 1e-4):
        want = float(stats.t.ppf(p, df))
        # scipy 1.10's quantile (cephes) is good to about 1e-9 relative, newer ones better
        assert student_t_quantile(p, df) == pytest.approx(want, rel=1e-8, abs=1e-12), p


def test_student_t_quantile_closed_forms():
    for p in (0.5001, 0.6, 0.9, 0.975, 0.99, 0.9995, 0.999999, 0.3, 1e-6):
        cauchy = math.tan(math.pi * (p - 0.5))  # df = 1
        assert student_t_quantile(p, 1) == pytest.approx(cauchy, rel=1e-10)
        two = (2 * p - 1) / math.sqrt(2 * p * (1 - p))  # df = 2
        assert student_t_quantile(p, 2) == pytest.approx(two, rel=1e-10)


@pytest.mark.parametrize("p, df, message", [
    (1.0, 10, "p must be in \\(0, 1\\), got 1.0"),
    (0.0, 10, "got 0.0"),
    (0.9, 0, "degrees of freedom must be an integer >= 1, got 0"),
    (0.9, 2.5, "got 2.5"),
])
def test_student_t_quantile_refuses_bad_input(p, df, message):
    with pytest.raises(ModelError, match=message):
        student_t_quantile(p, df)


def test_brentq_takes_scipys_steps():
    rng = np.random.default_rng(7)
    funcs = [
        (lambda x: x**3 - 2 * x - 5, 2.0, 3.0),
        (lambda x: math.cos(x) - x, 0.0, 1.0),
        (lambda x: math.exp(x) - 1e6, 0.0, 20.0),
        (lambda x: math.log(x) + 3, 1e-9, 1.0),
    ]
    for _ in range(30):  # log-MGFs like the Cramér root's: convex, negative near 0
        c, z = rng.uniform(0.1, 5, 4), rng.uniform(0.5, 8, 3)
        funcs.append((lambda g, c=c, z=z: math.log(np.exp(g * c).mean())
                       + math.log(np.exp(-g * z).mean()), 1e-3, 50.0))
    for f, a, b in funcs:
        if f(a) * f(b) > 0:
            continue
        for xtol, rtol in ((2e-12, 8.881784197001252e-16), (1e-14 * b, 1e-12), (1e-3, 1e-6)):
            assert brentq(f, a, b, xtol=xtol, rtol=rtol) == optimize.brentq(
                f, a, b, xtol=xtol, rtol=rtol)


def test_brentq_refuses_an_unbracketed_root():
    with pytest.raises(ModelError, match="have the same sign; no root is bracketed"):
        brentq(lambda x: x * x + 1, -1.0, 1.0)
    with pytest.raises(ModelError, match="no convergence in 3 steps"):
        brentq(lambda x: math.exp(x) - 1e6, 0.0, 20.0, maxiter=3)
    with pytest.raises(RuntimeError):  # scipy gives up there too
        optimize.brentq(lambda x: math.exp(x) - 1e6, 0.0, 20.0, maxiter=3)
