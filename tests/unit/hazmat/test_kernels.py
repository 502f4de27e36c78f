"""The exact numeric kernels: rounding, directed products and the ``exp(-x)`` window are rigorous."""

from __future__ import annotations

from fractions import Fraction
from itertools import repeat

import gmpy2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from securedp.hazmat.exact.interval import Interval, Real, exp_neg
from securedp.hazmat.exact.kernels import (
    directed_products,
    exp_neg_window,
    inverse_ln2_low,
    round_half_even,
    scaled_bounds,
    tabulated_floors,
)


@given(st.integers(-10**30, 10**30), st.integers(1, 10**12))
@settings(max_examples=300, deadline=None)
def test_round_half_even_is_exact(num, den):
    q = Fraction(num, den)
    r = round_half_even(num, den)
    assert abs(q - r) <= Fraction(1, 2)
    if abs(q - r) == Fraction(1, 2):
        assert r % 2 == 0
    assert r == round(q)  # Python's round of a Fraction: nearest, ties to even


@pytest.mark.parametrize("rate", [Fraction(1, 3), Fraction(5), Fraction(1, 10**6)])
def test_directed_products_enclose_the_powers(rate):
    bits = 100
    q = scaled_bounds(exp_neg(rate).interval(bits + 8), bits)
    lows, highs = directed_products((1 << bits, 1 << bits), repeat(q), 300, bits)
    assert len(lows) == len(highs) == 300
    for r in (0, 1, 2, 77, 299):
        exact = exp_neg(rate * r).interval(400)
        scaled_lo = gmpy2.mpq(lows[r], 1 << bits)
        scaled_hi = gmpy2.mpq(highs[r], 1 << bits)
        assert scaled_lo <= exact.lo and exact.hi <= scaled_hi
        assert highs[r] - lows[r] <= (r + 1) * (q[1] - q[0] + 1)  # the width of q, plus a unit, per step
    floors = tabulated_floors(lows, highs, bits, 64, lambda r: exp_neg(rate * r))
    assert floors == [exp_neg(rate * r).floor_ceil(64)[0] for r in range(300)]


def test_directed_products_with_varying_factors():
    bits = 80
    factors = [(3 << bits, 3 << bits), (1 << (bits - 1), 1 << (bits - 1))]  # exactly 3, then exactly 1/2
    lows, highs = directed_products((5 << bits, 5 << bits), factors, 3, bits)
    assert lows == highs == [5 << bits, 15 << bits, 15 << (bits - 1)]
    assert directed_products((1, 1), [], 0, bits) == ([], [])


def test_tabulated_floors_recompute_loose_entries():
    one_third = Fraction(1, 3)
    loose = scaled_bounds(Interval.exact(one_third, 8), 8)  # 8 bits: far too loose for 64
    floors = tabulated_floors([loose[0]], [loose[1]], 8, 8, lambda k: Real.rational(one_third))
    assert floors == [int(one_third * 2**8)]
    floors = tabulated_floors([loose[0] << 60], [loose[1] << 60], 68, 64, lambda k: Real.rational(one_third))
    assert floors == [int(one_third * 2**64)]


@pytest.mark.parametrize("x", [Fraction(0), Fraction(1, 7), Fraction(10**9), Fraction(3, 2**40)])
@pytest.mark.parametrize("e", [0, 5, 127])
def test_exp_neg_window_encloses(x, e):
    e = min(e, int(x * inverse_ln2_low()))  # a valid envelope exponent: exp(-x) * 2**e <= 1
    low, high = exp_neg_window(gmpy2.mpq(x.numerator, x.denominator), e)
    assert 0 <= high - low <= 2
    tight = exp_neg(x, e + 64).floor_ceil(0)
    assert low <= tight[0] and tight[1] <= high


def test_inverse_ln2_low():
    low = inverse_ln2_low()
    with gmpy2.context(precision=300, round=gmpy2.RoundUp):
        assert gmpy2.mpq(low.numerator, low.denominator) * gmpy2.log(2) <= 1
    with gmpy2.context(precision=300, round=gmpy2.RoundDown):
        assert gmpy2.mpq(low.numerator, low.denominator) * gmpy2.log(2) > 1 - gmpy2.mpfr(2) ** -250
