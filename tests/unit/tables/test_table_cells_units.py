"""The integer kernels of a table's means and variances against the rational formulas they replace.

The oracles below are the reference code of :mod:`securedp.tables.cells` (Fractions throughout):
``mean_units``, ``variance_units`` and ``_on_lattice`` must give the same integers and the same
reduced Fractions on every input, ties, odd centres, negative noisy counts and huge values included.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import example, given
from hypothesis import strategies as st

from securedp.hazmat.exact.kernels import round_half_even
from securedp.mechanisms.mean import mean_units
from securedp.mechanisms.variance import variance_units
from securedp.tables.cells import _on_lattice

big = st.integers(-(2**130), 2**130)
small = st.integers(-60, 60)
ints = st.one_of(small, big)


def _rhe(x: Fraction) -> int:
    return round_half_even(x.numerator, x.denominator)


def mean_oracle(count: int, centred: int, c: int, lo_u: int, hi_u: int, t_n: int, t_s: int) -> tuple[int, int, int]:
    mean = min(max(c + Fraction(centred, max(count, 1)), Fraction(lo_u)), Fraction(hi_u))
    n_hi, n_lo = count + t_n, max(count - t_n, 1)
    if n_hi < 1:
        return _rhe(mean), lo_u, hi_u
    corners = [c + Fraction(s, d) for s in (centred - t_s, centred + t_s) for d in (n_lo, n_hi)]
    return _rhe(mean), max(lo_u, min(corners).__floor__()), min(hi_u, max(corners).__ceil__())


def variance_oracle(count: int, first: int, second: int, width: int) -> int:
    d = max(count, 1)
    v = min(max(Fraction(second, d) - Fraction(first, d) ** 2, Fraction(0)), Fraction(width, 2) ** 2)
    return _rhe(v)


@given(count=ints, centred=ints, lo_u=ints, span=st.one_of(st.integers(0, 40), st.integers(0, 2**70)),
       t_n=st.one_of(st.integers(0, 30), st.integers(0, 2**70)), t_s=st.one_of(st.integers(0, 30), big.map(abs)))
@example(count=2, centred=1, lo_u=-3, span=8, t_n=0, t_s=0)  # tie, odd centre c = 1: rounds to 2, not 1 + 0
@example(count=2, centred=-1, lo_u=-3, span=8, t_n=0, t_s=0)
@example(count=-5, centred=7, lo_u=0, span=10, t_n=3, t_s=2)  # N~ + t_n < 1: the whole bounds
def test_mean_units_are_the_rational_formula(count: int, centred: int, lo_u: int, span: int, t_n: int,
                                             t_s: int) -> None:
    hi_u = lo_u + span
    c = (lo_u + hi_u) // 2
    values, lows, highs = mean_units([count], [centred], c, lo_u, hi_u, t_n, t_s)
    assert (values[0], lows[0], highs[0]) == mean_oracle(count, centred, c, lo_u, hi_u, t_n, t_s)


@given(count=ints, first=ints, second=ints, width=st.one_of(st.integers(0, 41), st.integers(0, 2**70)))
@example(count=2, first=1, second=1, width=3)  # 1/2 - 1/4 = 1/4 rounds to 0; top (3/2)**2 = 9/4 rounds to 2
@example(count=1, first=0, second=10, width=5)  # clamped to the top 25/4, rounded to 6
def test_variance_units_are_the_rational_formula(count: int, first: int, second: int, width: int) -> None:
    assert variance_units([count], [first], [second], width) == [variance_oracle(count, first, second, width)]


@given(units=st.lists(ints, max_size=5), p=st.integers(1, 2**70), q=st.integers(1, 2**70))
def test_lattice_values_are_reduced_fractions(units: list[int], p: int, q: int) -> None:
    step = Fraction(p, q)
    built = _on_lattice(units, step)
    assert all(type(f) is Fraction for f in built)
    assert [(f.numerator, f.denominator) for f in built] == [((u * step).numerator, (u * step).denominator)
                                                             for u in units]
    assert built == [u * step for u in units] and [hash(f) for f in built] == [hash(u * step) for u in units]
