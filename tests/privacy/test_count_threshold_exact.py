"""The threshold of a released count, checked against the exact pmf of its noise (small cases).

A table that selects its keys by the count it releases keeps a key iff ``c + Z >= tau``, where ``c`` is
the key's count (cell sensitivity ``s``: a key only one person holds has ``1 <= c <= s``) and ``Z`` the
count's own noise. The stated guarantee is that such a key appears with probability at most
``delta / k``, and that ``tau`` is the least threshold for which this holds:

    P(Z >= tau - s) <= delta / k < P(Z >= tau - s - 1)    (the second when tau > s).

Here ``P(Z >= t)`` is summed term by term from the pmf itself, written independently of the library
(no closed form, no ``securedp`` arithmetic): discrete Laplace ``P(z) = (1 - q)/(1 + q) q**|z|``,
``q = exp(-epsilon / (k s))``; discrete Gaussian ``P(z) = w(z) / sum_y w(y)``, ``w(z) = exp(-z**2 /
(2 sigma**2))``, ``sigma**2 = k s**2 / (2 rho)``. Every number is a gmpy2 MPFR enclosure with directed
rounding: the sums of the first ``L`` terms rounded down and up, and the rest bounded by a geometric
series (the ratio of consecutive terms is ``q``, resp. at most ``exp(-(2M + 3) / (2 sigma**2))`` past
``M``). The comparisons with the rational ``delta / k`` are exact.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import gmpy2
import pytest

from securedp.mechanisms.gaussian_threshold import gaussian_threshold
from securedp.mechanisms.partition_selection import laplace_threshold

PREC = 256


def _ctx(rounding: Any) -> Any:
    return gmpy2.context(precision=PREC, round=rounding, emax=gmpy2.get_emax_max(), emin=gmpy2.get_emin_min())


def _q(x: Fraction) -> Any:
    return gmpy2.mpq(x.numerator, x.denominator)


def exp_neg(x: Fraction, rounding: Any) -> Any:
    """``exp(-x)`` rounded in direction ``rounding`` (the argument is rounded the same way; exp increases)."""
    with _ctx(rounding):
        return gmpy2.exp(gmpy2.mpfr(-_q(x)))


def _rounded(rounding: Any, compute: Any) -> Any:
    """``compute()`` evaluated with every operation rounded in direction ``rounding``."""
    with _ctx(rounding):
        return compute()


def laplace_tail(t: int, scale: Fraction) -> tuple[Any, Any]:
    """``[lo, hi]`` enclosing ``P(Z >= t)``, ``t >= 0``, by summing the discrete Laplace pmf."""
    q_lo, q_hi = exp_neg(1 / scale, gmpy2.RoundDown), exp_neg(1 / scale, gmpy2.RoundUp)
    terms = math.ceil(60 * scale) + 50
    # (1 - q)/(1 + q) decreases in q: its lower bound from q_hi, its upper from q_lo, each part rounded outward
    c_lo = _rounded(gmpy2.RoundDown, lambda: (1 - q_hi) / _rounded(gmpy2.RoundUp, lambda: 1 + q_hi))
    c_hi = _rounded(gmpy2.RoundUp, lambda: (1 - q_lo) / _rounded(gmpy2.RoundDown, lambda: 1 + q_lo))
    gap = _rounded(gmpy2.RoundDown, lambda: 1 - q_hi)  # a lower bound of 1 - q
    with _ctx(gmpy2.RoundDown):
        lo, power = gmpy2.mpfr(0), q_lo ** t
        for _ in range(terms):
            lo, power = lo + c_lo * power, power * q_lo
    with _ctx(gmpy2.RoundUp):
        hi, power = gmpy2.mpfr(0), q_hi ** t
        for _ in range(terms):
            hi, power = hi + c_hi * power, power * q_hi
        hi = hi + c_hi * power / gap  # the rest: a geometric series of ratio q
    return lo, hi


def _weights(start: int, stop: int, variance: Fraction, rounding: Any) -> Any:
    """``sum_{start <= z < stop} w(z)`` rounded in direction ``rounding``."""
    with _ctx(rounding):
        total = gmpy2.mpfr(0)
        for z in range(start, stop):
            total = total + exp_neg(Fraction(z * z) / (2 * variance), rounding)
        return total


def gaussian_weight_tail(t: int, variance: Fraction) -> tuple[Any, Any]:
    """``[lo, hi]`` enclosing ``S(t) = sum_{z >= t} w(z)``, ``t >= 0``."""
    last = t + math.ceil(40 * math.sqrt(variance)) + 20
    lo = _weights(t, last + 1, variance, gmpy2.RoundDown)
    ratio = exp_neg(Fraction(2 * last + 3) / (2 * variance), gmpy2.RoundUp)  # w(z+1)/w(z) past ``last``
    gap = _rounded(gmpy2.RoundDown, lambda: 1 - ratio)
    with _ctx(gmpy2.RoundUp):
        rest = exp_neg(Fraction((last + 1) ** 2) / (2 * variance), gmpy2.RoundUp) / gap
        hi = _weights(t, last + 1, variance, gmpy2.RoundUp) + rest
    return lo, hi


def gaussian_tail(t: int, variance: Fraction) -> tuple[Any, Any]:
    """``[lo, hi]`` enclosing ``P(Z >= t) = S(t) / (1 + 2 S(1))``."""
    s_lo, s_hi = gaussian_weight_tail(t, variance)
    one_lo, one_hi = gaussian_weight_tail(1, variance)
    total_lo = _rounded(gmpy2.RoundDown, lambda: 1 + 2 * one_lo)
    total_hi = _rounded(gmpy2.RoundUp, lambda: 1 + 2 * one_hi)
    return _rounded(gmpy2.RoundDown, lambda: s_lo / total_hi), _rounded(gmpy2.RoundUp, lambda: s_hi / total_lo)


LAPLACE = [(1, "1e-9", 1, 1), (1, "1e-6", 2, 1), ("1/2", "1/1024", 1, 3), (2, "1/20", 2, 2), ("1/10", "1e-6", 1, 1),
           (1, "1e-6", 2, 4), (3, "1/3", 1, 1)]
GAUSSIAN = [("1/2", "1e-9", 1, 1), ("1/2", "1e-6", 2, 3), ("1/200", "1/20", 1, 1), (2, "1e-6", 3, 2), (1, "1/2", 1, 1)]


@pytest.mark.parametrize("epsilon, delta, k, s", LAPLACE)
def test_the_laplace_threshold_bounds_a_one_person_key_by_delta_over_k_and_is_least(epsilon, delta, k, s):
    plan = laplace_threshold(epsilon, delta, k, s)
    bound = _q(plan.delta / k)
    scale = Fraction(k * s) / plan.epsilon
    assert plan.scale == scale and plan.threshold >= s
    assert laplace_tail(plan.threshold - s, scale)[1] <= bound
    if plan.threshold > s:
        assert laplace_tail(plan.threshold - s - 1, scale)[0] > bound


@pytest.mark.parametrize("rho, delta, k, s", GAUSSIAN)
def test_the_gaussian_threshold_bounds_a_one_person_key_by_delta_over_k_and_is_least(rho, delta, k, s):
    plan = gaussian_threshold(rho, delta, k, s)
    bound = _q(plan.delta / k)
    variance = Fraction(k * s * s) / (2 * plan.rho)
    assert plan.variance == variance and plan.threshold >= s
    assert gaussian_tail(plan.threshold - s, variance)[1] <= bound
    if plan.threshold > s:
        assert gaussian_tail(plan.threshold - s - 1, variance)[0] > bound


def test_the_enclosures_are_tight_and_can_fail() -> None:
    """Controls: the sums agree with the closed form ``q**t / (1 + q)`` and the reference ``tau = 8`` of the
    Gaussian module; a threshold one lower is refused by the same check."""
    lo, hi = laplace_tail(5, Fraction(2))
    q = math.exp(-0.5)
    assert hi - lo < 1e-30 and abs(float(lo) - q**5 / (1 + q)) < 1e-12
    assert gaussian_threshold("1/2", "1e-9", 1).threshold == 8
    plan = laplace_threshold(1, "1e-6", 2)
    assert not laplace_tail(plan.threshold - 2, plan.scale)[1] <= _q(plan.delta / 2)
