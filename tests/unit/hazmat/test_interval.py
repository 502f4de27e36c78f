"""Interval arithmetic encloses the true value; ``Real.floor_ceil`` brackets it within one unit.

The true values come from outside MPFR: exact ``Fraction`` arithmetic for
rational expressions, and Python's ``decimal`` module at 400 digits
(correctly rounded ``exp``) for the exponential.
"""

from __future__ import annotations

import decimal
import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from securedp.hazmat.exact.interval import Interval, Real, exp_neg, logistic_neg

SETTINGS = settings(max_examples=30, deadline=None, database=None)
DIGITS = 400
# The decimal value is within one unit in the last of its 400 digits of the truth.
DECIMAL = decimal.Context(prec=DIGITS, Emax=10**9, Emin=-(10**9))

rationals = st.fractions(min_value=-(10**6), max_value=10**6, max_denominator=10**9)
positive = st.fractions(min_value=Fraction(1, 10**9), max_value=10**6, max_denominator=10**9)
precisions = st.integers(min_value=2, max_value=300)


def as_fraction(x: Any) -> Fraction:
    return Fraction(*x.as_integer_ratio())


def encloses(iv: Interval, value: Fraction) -> bool:
    return as_fraction(iv.lo) <= value <= as_fraction(iv.hi)


def exp_enclosure(x: Fraction) -> tuple[Fraction, Fraction]:
    """Bounds on ``exp(x)`` from a 400-digit correctly rounded decimal computation.

    For ``x != 0``, ``exp(x)`` is irrational, so a sound enclosure at <= 300 bits
    contains these bounds too (unless the truth lies within 10**-390 of one of
    its ends: a coincidence no test input comes near).
    """
    if x == 0:
        return Fraction(1), Fraction(1)
    value = DECIMAL.divide(decimal.Decimal(x.numerator), decimal.Decimal(x.denominator))
    approx = DECIMAL.exp(value)
    # Two roundings (the argument, then exp) of relative size 10**(1 - DIGITS); exp amplifies
    # the first by at most |x| <= 10**4 here. 10**(10 - DIGITS) is a safe margin.
    slack = abs(Fraction(approx)) * Fraction(1, 10 ** (DIGITS - 10))
    return Fraction(approx) - slack, Fraction(approx) + slack


@SETTINGS
@given(a=rationals, b=rationals, prec=precisions)
def test_exact_and_ring_operations_enclose_the_truth(a: Fraction, b: Fraction, prec: int) -> None:
    x, y = Interval.exact(a, prec), Interval.exact(b, prec)
    assert encloses(x, a) and encloses(y, b)
    assert encloses(x + y, a + b) and encloses(x - y, a - b) and encloses(x * y, a * b)
    assert encloses(-x, -a) and encloses(x + 3, a + 3) and encloses(2 - x, 2 - a) and encloses(5 * x, 5 * a)
    assert encloses(x + Fraction(1, 3), a + Fraction(1, 3))


@SETTINGS
@given(a=rationals, b=positive, k=st.integers(0, 40), prec=precisions)
def test_division_and_powers_enclose_the_truth(a: Fraction, b: Fraction, k: int, prec: int) -> None:
    x, y = Interval.exact(a, prec), Interval.exact(b, prec)
    assert encloses(x / y, a / b)
    assert encloses(1 / y, 1 / b)
    assert encloses(y**k, b**k)


@SETTINGS
@given(a=st.fractions(min_value=-10**4, max_value=50, max_denominator=10**6), prec=precisions)
def test_exp_encloses_the_truth(a: Fraction, prec: int) -> None:
    lo, hi = exp_enclosure(a)
    iv = Interval.exact(a, prec).exp()
    assert as_fraction(iv.lo) <= lo and hi <= as_fraction(iv.hi)
    negated = (-Interval.exact(-a, prec)).exp()  # how the samplers compute exp(-x)
    assert as_fraction(negated.lo) <= lo and hi <= as_fraction(negated.hi)


def test_exp_enclosure_is_tight_at_high_precision() -> None:
    """Intervals shrink with the precision (the decimal reference is tighter still, ~10**-390)."""
    lo, hi = exp_enclosure(Fraction(-1, 3))
    iv = (-Interval.exact(Fraction(1, 3), 1000)).exp()
    assert as_fraction(iv.lo) <= lo and hi <= as_fraction(iv.hi)
    assert as_fraction(iv.hi) - as_fraction(iv.lo) < Fraction(1, 2**990)


def test_compound_expression_encloses_the_truth() -> None:
    """The discrete Laplace zero mass ``(1 - q) / (1 + q)``, q = exp(-1/10), at 64 bits."""
    q_lo, q_hi = exp_enclosure(Fraction(-1, 10))
    q = (-Interval.exact(Fraction(1, 10), 64)).exp()
    p0 = (1 - q) / (1 + q)
    # (1 - q) / (1 + q) decreases in q.
    assert as_fraction(p0.lo) <= (1 - q_hi) / (1 + q_hi) and (1 - q_lo) / (1 + q_lo) <= as_fraction(p0.hi)
    assert as_fraction(p0.hi) - as_fraction(p0.lo) < Fraction(1, 2**58)


def test_invalid_operations_are_refused() -> None:
    with pytest.raises(ZeroDivisionError):
        Interval.exact(1, 64) / Interval.exact(0, 64)
    with pytest.raises(ZeroDivisionError):
        Interval.exact(1, 64) / (Interval.exact(-1, 64) + Interval.exact(2, 64) - 1)  # [0, 0]
    with pytest.raises(ValueError):
        Interval.exact(-1, 64) ** 2
    with pytest.raises(ValueError):
        Interval.exact(2, 64) ** -1


def _check_floor_ceil(real: Real, lo: Fraction, hi: Fraction, k: int) -> None:
    """``L <= x * 2**k <= H`` and ``H - L <= 1``, for ``x`` known to lie in the (far tighter) ``[lo, hi]``."""
    low, high = real.floor_ceil(k)
    assert high - low <= 1
    assert low <= hi * Fraction(2) ** k and lo * Fraction(2) ** k <= high


@SETTINGS
@given(x=st.fractions(min_value=0, max_value=200, max_denominator=10**6), k=st.integers(-10, 300))
def test_floor_ceil_brackets_irrationals_within_one_unit(x: Fraction, k: int) -> None:
    lo, hi = exp_enclosure(-x)
    _check_floor_ceil(exp_neg(x), lo, hi, k)
    # logistic_neg(y) = 1 / (1 + exp(y)): decreasing in exp(y).
    elo, ehi = exp_enclosure(x)
    _check_floor_ceil(logistic_neg(x), 1 / (1 + ehi), 1 / (1 + elo), k)


@SETTINGS
@given(x=st.fractions(min_value=-10**9, max_value=10**9, max_denominator=10**12), k=st.integers(-20, 200))
def test_rationals_give_exact_floors_and_ceilings(x: Fraction, k: int) -> None:
    scaled = x * Fraction(2) ** k
    assert Real.rational(x).floor_ceil(k) == (math.floor(scaled), math.ceil(scaled))
    assert Real.rational(x).exact == x


def test_dyadic_rationals_have_equal_floor_and_ceiling() -> None:
    assert Real.rational(Fraction(3, 8)).floor_ceil(3) == (3, 3)
    assert Real.rational(Fraction(3, 8)).floor_ceil(64) == (3 << 61, 3 << 61)
    assert Real.rational(1).floor_ceil(64) == (1 << 64, 1 << 64)
    assert Real.rational(Fraction(1, 3)).floor_ceil(2) == (1, 2)


def test_floor_ceil_of_an_exp_rational_is_resolved_at_higher_precision() -> None:
    """``exp(-x)`` for huge ``x`` (e.g. Laplace scale 1/1000): a tiny but positive threshold."""
    low, high = exp_neg(Fraction(1000)).floor_ceil(64)
    assert (low, high) == (0, 1)
    low, high = exp_neg(Fraction(1000)).floor_ceil(1500)
    lo, hi = exp_enclosure(Fraction(-1000))
    assert high - low <= 1 and low <= hi * 2**1500 and lo * 2**1500 <= high and low > 0


def test_a_cached_rounding_context_is_never_changed_by_the_code_it_rounds() -> None:
    """``rounding_context`` is built once per (precision, rounding); ``with`` enters a copy, so a change made
    inside (gmpy2's current context) never reaches the cached one, nor the next block that enters it."""
    import gmpy2

    from securedp.hazmat.exact.interval import rounding_context

    context = rounding_context(80, gmpy2.RoundUp)
    assert context is rounding_context(80, gmpy2.RoundUp)
    with rounding_context(80, gmpy2.RoundUp):
        gmpy2.get_context().precision = 20
        gmpy2.get_context().round = gmpy2.RoundDown
    with rounding_context(80, gmpy2.RoundUp):
        current = gmpy2.get_context()
        assert (current.precision, current.round) == (80, gmpy2.RoundUp)
        assert gmpy2.mpfr(1) / 3 > gmpy2.mpq(1, 3)  # rounded up at 80 bits
    assert (context.precision, context.round) == (80, gmpy2.RoundUp)
