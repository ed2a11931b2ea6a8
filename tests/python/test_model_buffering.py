"""The buffering check (T - Q)/P < N_c and its inverses."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from irqres.errors import ModelError
from irqres.model.buffering import check


def test_reference_example():
    # 2 ms every 10 ms, interrupts at least 50 us apart: 160 may be delayed.
    ok = check(2_000_000, 10_000_000, 50_000, 256)
    assert ok.ok and ok.delayed_irqs == 160.0
    assert "ok" in ok.message
    bad = check(2_000_000, 10_000_000, 50_000, 100)
    assert not bad.ok and bad.excess == 60.0
    assert "violated by 60.0 interrupts" in bad.message
    assert bad.min_runtime_for() == 5_000_001
    assert bad.max_period_for() == 6_999_999
    # the one duration format (units.format_duration), exact
    assert "runtime >= 5.000001ms" in bad.message and "period <= 6.999999ms" in bad.message


def test_boundary_is_strict():
    # (T - Q)/P == N_c exactly is a violation; one ns more budget passes.
    assert not check(1_000, 11_000, 1_000, 10).ok
    assert check(1_001, 11_000, 1_000, 10).ok


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10**9), st.integers(0, 10**9), st.integers(1, 10**7), st.integers(1, 10**4))
def test_inverses_are_tight(q, slack, p, n):
    t = q + slack
    c = check(q, t, p, n)
    assert c.ok == ((t - q) / p < n or (t - q) < n * p)
    qmin = c.min_runtime_for()
    if 0 < qmin <= t:
        assert check(qmin, t, p, n).ok
        if qmin > 1:
            assert not check(qmin - 1, t, p, n).ok
    tmax = c.max_period_for()
    assert check(q, tmax, p, n).ok
    assert not check(q, tmax + 1, p, n).ok
    assert c.to_dict()["ok"] == c.ok


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((0, 10, 1, 1), "runtime: must be at least 1"),
        ((11, 10, 1, 1), "larger than the period"),
        ((1, 10, 0, 1), "min inter-arrival"),
        ((1, 10, 1, 0), "buffer"),
        ((1.5, 10, 1, 1), "runtime: expected an integer"),
        ((1, 10, 1, True), "buffer: expected an integer"),
    ],
)
def test_bad_input(args, match):
    with pytest.raises(ModelError, match=match):
        check(*args)
