"""The three numerical routines the model needs from outside numpy, written out so that
``irqres analyze`` does not import scipy (its subpackages cost 0.3-0.9 s of start-up each,
more than the whole analysis of a trace):

- :func:`brentq`: Brent's root finder, the algorithm of scipy.optimize.brentq (scipy's
  ``brentq.c``, Brent 1973), step for step, so it returns the same root;
- :func:`next_fast_len`: the smallest 5-smooth length >= n (scipy.fft.next_fast_len(n,
  real=True)), for which numpy's pocketfft is fast;
- :func:`student_t_quantile`: the quantile of Student's t with an integer number of
  degrees of freedom, from its exact finite-sum CDF (Abramowitz & Stegun 26.7.3-4).

The tests compare each with scipy over a range of inputs.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

from ..errors import ModelError


def brentq(f: Callable[[float], float], a: float, b: float, *, xtol: float = 2e-12,
           rtol: float = 8.881784197001252e-16, maxiter: int = 100) -> float:
    """A root of ``f`` in [a, b] (f(a) and f(b) of opposite signs), to within
    xtol + rtol·|root|.

    Raises
    ------
    ModelError
        f(a) and f(b) have the same sign, or no convergence in ``maxiter`` steps.
    """
    fpre, fcur = f(a), f(b)
    if fpre * fcur > 0.0:
        raise ModelError(f"root finder: f({a!r}) = {fpre!r} and f({b!r}) = {fcur!r} "
                         "have the same sign; no root is bracketed")
    if fpre == 0.0:
        return a
    if fcur == 0.0:
        return b
    xpre, xcur = a, b
    xblk = fblk = spre = scur = 0.0
    for _ in range(maxiter):
        if fpre != 0.0 and fcur != 0.0 and (math.copysign(1.0, fpre)
                                            != math.copysign(1.0, fcur)):
            xblk, fblk = xpre, fpre
            spre = scur = xcur - xpre
        if abs(fblk) < abs(fcur):
            xpre, xcur, xblk = xcur, xblk, xcur
            fpre, fcur, fblk = fcur, fblk, fcur
        delta = (xtol + rtol * abs(xcur)) / 2.0
        sbis = (xblk - xcur) / 2.0
        if fcur == 0.0 or abs(sbis) < delta:
            return xcur
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            if xpre == xblk:  # secant
                stry = -fcur * (xcur - xpre) / (fcur - fpre)
            else:  # inverse quadratic interpolation
                dpre = (fpre - fcur) / (xpre - xcur)
                dblk = (fblk - fcur) / (xblk - xcur)
                stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            if 2.0 * abs(stry) < min(abs(spre), 3.0 * abs(sbis) - delta):
                spre, scur = scur, stry  # interpolation accepted
            else:
                spre, scur = sbis, sbis  # bisection
        else:
            spre, scur = sbis, sbis
        xpre, fpre = xcur, fcur
        xcur += scur if abs(scur) > delta else (delta if sbis > 0.0 else -delta)
        fcur = f(xcur)
    raise ModelError(f"root finder: no convergence in {maxiter} steps on [{a!r}, {b!r}]")


def next_fast_len(n: int) -> int:
    """The smallest integer >= n whose only prime factors are 2, 3 and 5 (n >= 1)."""
    n = int(n)
    if n < 1:
        raise ModelError(f"FFT length: must be at least 1, got {n}")
    return _fast_len(n)


@functools.lru_cache(maxsize=4096)
def _fast_len(n: int) -> int:
    """next_fast_len of a checked n: the solver's grid search asks for the same few often."""
    best = 1 << (n - 1).bit_length()  # a power of two always qualifies
    p5 = 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            quot = -(-n // p35)  # the power of two that brings p35 to n or beyond
            best = min(best, p35 * (1 << (quot - 1).bit_length()))
            p35 *= 3
        p5 *= 5
    return best


def _student_t_two_sided(theta: float, df: int) -> float:
    """P{|T| < t} for t = sqrt(df)·tan(theta), df degrees of freedom (A&S 26.7.3-4)."""
    s, c = math.sin(theta), math.cos(theta)
    c2 = c * c
    if df % 2 == 0:
        term = total = 1.0
        for k in range(1, df // 2):  # 1, 1/2·c², 1·3/(2·4)·c⁴, ...
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        return s * total
    if df == 1:
        return 2.0 * theta / math.pi
    term = total = 1.0
    for k in range(1, (df - 1) // 2):  # 1, 2/3·c², 2·4/(3·5)·c⁴, ...
        term *= c2 * (2 * k) / (2 * k + 1)
        total += term
    return 2.0 / math.pi * (theta + s * c * total)


def student_t_quantile(p: float, df: int) -> float:
    """t with P{T <= t} = p for Student's t with ``df`` (an integer >= 1) degrees of
    freedom, to about 1e-10 relative for p within [1e-6, 1 - 1e-6] (bisection on the
    angle of A&S 26.7; 2p - 1 carries the rounding of p)."""
    if not 0.0 < p < 1.0:
        raise ModelError(f"Student t quantile: p must be in (0, 1), got {p!r}")
    if int(df) != df or df < 1:
        raise ModelError(f"Student t quantile: degrees of freedom must be an integer >= 1, "
                         f"got {df!r}")
    df = int(df)
    if p == 0.5:
        return 0.0
    want = abs(2.0 * p - 1.0)  # P{|T| < t} for the upper quantile
    lo, hi = 0.0, math.pi / 2.0
    for _ in range(80):  # the interval halves each step: below one ulp of pi/2 by then
        mid = (lo + hi) / 2.0
        if mid in (lo, hi):
            break
        if _student_t_two_sided(mid, df) < want:
            lo = mid
        else:
            hi = mid
    t = math.sqrt(df) * math.tan((lo + hi) / 2.0)
    return t if p > 0.5 else -t
