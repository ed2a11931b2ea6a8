"""PMFs of durations: binning, statistics, conversions and bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from irqres.errors import ModelError
from irqres.pmf import Pmf, as_ns_array, nice_granularity

samples_st = st.lists(st.integers(0, 10**12), min_size=1, max_size=200)
gran_st = st.integers(1, 10**7)


@settings(max_examples=80, deadline=None)
@given(samples_st, gran_st, st.sampled_from(["up", "down"]))
def test_pmf_properties(samples, gran, rounding):
    x = np.array(samples, dtype=np.int64)
    pmf = Pmf.from_samples(x, gran, rounding=rounding)
    assert pmf.probs.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(pmf.probs > 0)
    assert np.all(np.diff(pmf.values_ns) > 0)
    assert np.all(pmf.values_ns % gran == 0)
    cdf = pmf.cdf()
    assert np.all(np.diff(cdf) >= 0) and cdf[-1] == 1.0
    assert pmf.count == x.size
    if rounding == "up":
        assert pmf.min_ns >= x.min() and pmf.max_ns - x.max() < gran
        assert pmf.mean_ns() >= x.mean() - 1e-6 * max(1.0, x.mean())
    else:
        assert pmf.max_ns <= x.max() and x.min() - pmf.min_ns < gran
        assert pmf.mean_ns() <= x.mean() + 1e-6 * max(1.0, x.mean())
    # The probability of each bin is the fraction of samples that fall in it.
    k = (x + gran - 1) // gran if rounding == "up" else x // gran
    for v, p in zip(pmf.values_ns[:5], pmf.probs[:5], strict=False):
        assert p == pytest.approx(np.mean(k * gran == v))


def test_known_statistics():
    pmf = Pmf.from_samples(np.array([1000, 2000, 2000, 3000], dtype=np.int64), 1000)
    assert list(pmf.values_ns) == [1000, 2000, 3000]
    assert list(pmf.probs) == [0.25, 0.5, 0.25]
    assert pmf.mean_ns() == 2000.0
    assert pmf.std_ns() == pytest.approx(np.sqrt(0.5) * 1000)
    assert (pmf.min_ns, pmf.max_ns) == (1000, 3000)
    assert list(pmf.cdf()) == [0.25, 0.75, 1.0]
    assert pmf.prob_le(1999) == 0.25 and pmf.prob_le(2000) == 0.75
    assert pmf.prob_le(999) == 0.0 and pmf.prob_le(10**9) == 1.0
    assert pmf.quantile_ns(0.5) == 2000 and pmf.quantile_ns(1.0) == 3000


def test_rounding_directions():
    x = np.array([1, 999, 1000, 1001], dtype=np.int64)
    up = Pmf.from_samples(x, 1000, rounding="up")
    down = Pmf.from_samples(x, 1000, rounding="down")
    assert list(up.values_ns) == [1000, 2000] and list(up.probs) == [0.75, 0.25]
    assert list(down.values_ns) == [0, 1000] and list(down.probs) == [0.5, 0.5]


def test_single_value_and_huge_range():
    one = Pmf.from_samples(np.array([5000]), 1000)
    assert len(one) == 1 and one.std_ns() == 0.0 and one.mean_ns() == 5000.0
    # A one-second outlier at 1 ns granularity costs one bin, not 10^9.
    x = np.array([100, 200, 10**9], dtype=np.int64)
    pmf = Pmf.from_samples(x, 1)
    assert len(pmf) == 3
    with pytest.raises(ModelError, match="use a granularity of at least"):
        pmf.dense(max_bins=1000)
    assert pmf.dense(unit_ns=10**6).size == 1001


def test_dense_and_roundtrip():
    pmf = Pmf.from_samples(np.array([0, 3000, 3000, 7000]), 1000)
    d = pmf.dense()
    assert d.size == 8 and d[0] == 0.25 and d[3] == 0.5 and d[7] == 0.25
    d2 = pmf.dense(unit_ns=2000, rounding="up")
    assert list(d2) == [0.25, 0.0, 0.5, 0.0, 0.25]
    again = Pmf.from_dict(pmf.to_dict())
    assert np.array_equal(again.values_ns, pmf.values_ns)
    assert np.array_equal(again.probs, pmf.probs) and again.count == 4
    assert pmf.to_dict()["mean_ns"] == pmf.mean_ns()


@pytest.mark.parametrize(
    ("samples", "gran", "rounding", "match"),
    [
        (np.array([], dtype=np.int64), 1000, "up", "no samples"),
        (np.array([5, -1]), 1000, "up", "negative duration"),
        (np.array([5]), 0, "up", "positive number"),
        (np.array([5]), 1.5, "up", "expected integer"),
        (np.array([5]), 10, "sideways", "rounding"),
        (np.array([1.5]), 10, "up", "fractional"),
        (np.array([np.nan]), 10, "up", "NaN"),
        (np.array(["a"]), 10, "up", "dtype"),
        (np.array([[1, 2]]), 10, "up", "one-dimensional"),
        (np.array([True]), 10, "up", "booleans"),
    ],
)
def test_bad_input(samples, gran, rounding, match):
    with pytest.raises(ModelError, match=match):
        Pmf.from_samples(samples, gran, rounding=rounding)


def test_bad_construction():
    with pytest.raises(ModelError, match="sum to"):
        Pmf(np.array([0, 10]), np.array([0.5, 0.6]), 10)
    with pytest.raises(ModelError, match="multiples"):
        Pmf(np.array([0, 15]), np.array([0.5, 0.5]), 10)
    with pytest.raises(ModelError, match="increasing"):
        Pmf(np.array([10, 0]), np.array([0.5, 0.5]), 10)
    with pytest.raises(ModelError, match="cannot read"):
        Pmf.from_dict({"values_ns": [0]})
    with pytest.raises(ModelError, match="quantile"):
        Pmf.from_samples(np.array([1]), 1).quantile_ns(0.0)


def test_helpers():
    assert nice_granularity(1_000_000) == 1000
    assert nice_granularity(1_500_000) == 2000
    assert nice_granularity(4_000_000) == 5000
    assert nice_granularity(999) == 1
    assert as_ns_array(np.array([1.0, 2.0]), "x").dtype == np.int64
    with pytest.raises(ModelError, match="int64"):
        as_ns_array(np.array([2**64 - 1], dtype=np.uint64), "x")
