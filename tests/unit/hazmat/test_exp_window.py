"""The fixed-width window of ``exp(-x) * 2**(e + 64)``: rigorous against MPFR, at most 2 wide, same work for all.

The window replaced an MPFR ``exp`` of the exact ``x`` whose time followed ``x`` (issue 40); every window here is
checked against :func:`~securedp.hazmat.exact.interval.exp_neg` (an interval enclosure refined until it decides
the integer part), for integer gaps, for float gaps given only to within 2 units of ``2**-Q``, and at the ends of
the declared ranges.
"""

from __future__ import annotations

import math
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from securedp.hazmat.exact.exp_window import E_LIMIT, ExpWindow
from securedp.hazmat.exact.interval import exp_neg
from securedp.hazmat.exact.kernels import exp_neg_window, inverse_ln2_low
from securedp.hazmat.samplers.envelope import FloatGaps
from securedp.hazmat.samplers.groups import exponent_groups

_L = inverse_ln2_low()


def _exponent(x: Fraction, cap: int) -> int:
    """The efficient exponent ``floor(x / ln 2)`` (from below: ``x L``; may be one less), kept below ``cap``."""
    return min(cap - 1, int(x * _L))


def _check(window: ExpWindow, d: int, x: Fraction, e: int) -> None:
    low, high = window.bounds(d, e)
    floor, ceil = exp_neg(x, e + 64).floor_ceil(0)
    assert low <= floor and ceil <= high, (d, x, e, low, high, floor, ceil)
    assert high - low <= 2


@given(st.fractions(min_value=Fraction(1, 10**6), max_value=100).filter(lambda r: r > 0),
       st.integers(0, 2**40), st.sampled_from([128, 192, 1024]))
@settings(max_examples=300, deadline=None)
def test_integer_gaps_are_enclosed(rate, gap, cap):
    limit = -(-(cap + 2) * rate.denominator // rate.numerator)
    gap = min(gap, limit)
    x = rate * gap
    e = _exponent(x, cap)
    if x - e * Fraction(math.log(2)) >= Fraction(7, 10):  # float-ok: test filter; exponent capped, window unused
        return
    _check(ExpWindow(rate, 0, 0, limit, cap), gap, x, e)


@given(st.floats(-1e12, 1e12), st.floats(0, 1e6), st.sampled_from([Fraction(1, 2), Fraction(3, 7),
                                                                     Fraction(10**6), Fraction(1, 10**9)]))
@settings(max_examples=300, deadline=None)
def test_float_gaps_are_enclosed_from_their_scaled_lower_bound(v, up, rate):
    top = v + up
    values = np.array([v, top])
    gaps = FloatGaps(values)
    exact = Fraction(top) - Fraction(v)
    x = rate * exact
    cap = 128
    e = _exponent(x, cap)
    if e >= cap - 1:
        return
    groups = exponent_groups(rate, cap, None, gaps)
    window = groups._window
    lower, offset = gaps.scaled_lower(window.scale_bits)
    d = lower(0)
    assert d - offset <= exact * 2**window.scale_bits <= d - offset + 2
    _check(window, d, x, e)


@pytest.mark.parametrize("e", [0, 1, 63, 127, E_LIMIT - 1])
def test_the_ends_of_the_ranges(e):
    cap = max(e + 1, 128)
    rate = Fraction(1, 3)
    limit = (cap + 2) * 3
    window = ExpWindow(rate, 0, 0, limit, cap)
    for gap in {0, 1, 3 * math.ceil(e * math.log(2)), limit}:  # float-ok: test inputs only
        x = rate * gap
        if _exponent(x, cap + 1) == e:
            _check(window, gap, x, e)
    _check(window, 0, Fraction(0), 0)
    with pytest.raises(AssertionError, match="declared limit"):
        window.bounds(limit + 1, 0)


def test_agrees_with_the_mpfr_window_it_replaced():
    rate = Fraction(1, 2)
    window = ExpWindow(rate, 0, 0, 10**4, 128)
    for gap in range(0, 170, 7):  # t = x / ln 2 < 123: exponents below the cap
        x = rate * gap
        e = _exponent(x, 128)
        new, old = window.bounds(gap, e), exp_neg_window(gmpy2.mpq(x.numerator, x.denominator), e)
        assert max(new[0], old[0]) <= min(new[1], old[1])  # both enclose the same number
        assert abs(new[0] - old[0]) <= 2


def test_parameters_out_of_range_are_refused():
    for args in [(Fraction(0), 0, 0, 1, 128), (Fraction(1), -1, 0, 1, 128), (Fraction(1), 0, 0, 1, E_LIMIT + 1)]:
        with pytest.raises(ValueError):
            ExpWindow(*args)


def test_every_gap_reaches_the_window_at_one_width():
    """A gap of 0 was a small cached int, another gap a long one (36 ns apart per proposal): the caller adds the
    window's offset, so every value it forms has one width (the window subtracts it again)."""
    values = np.array([0.0, 0.0, -1.0, -3.5, 2.0**-30, -1e6])
    groups = exponent_groups(Fraction(1, 2), 128, None, FloatGaps(values))
    assert len({groups._scaled_gap(i).bit_length() for i in range(len(values))}) == 1
    ints = exponent_groups(Fraction(1, 10**6), 128, np.array([0, 1, 255, 256, 10**5], dtype=np.int64), None)
    assert len({ints._scaled_gap(i).bit_length() for i in range(5)}) == 1
    for i, gap in enumerate([0, 1, 255, 256, 10**5]):  # the window reads the gap, not the offset
        assert ints.bounds(0, i) == ExpWindow(Fraction(1, 10**6), 0, 0, 130 * 10**6, 128).bounds(gap, 0)
