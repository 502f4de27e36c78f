"""The fixed-width comparison ``[U < c]`` on scripted bits, including ties at 64 and 128 bits.

Ties (``u == floor(c * 2**width)``) happen with probability ``2**-width`` in
production, far too rarely for a statistical test at 64 or 128 bits; here the
random words are scripted so that the tie, and the resolver after it, happen
on purpose, and every answer is checked against exact rational arithmetic.
"""

from __future__ import annotations

import decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.interval import Real, exp_neg
from securedp.hazmat.samplers.decide import Thresholds, below, leading_bits, resolve_below, words_for
from securedp.hazmat.samplers.discrete_gaussian import DiscreteGaussianPlan
from securedp.hazmat.samplers.discrete_laplace import DiscreteLaplacePlan
from securedp.hazmat.samplers.geometric import ExpRatio, GeometricPlan

SETTINGS = settings(max_examples=30, deadline=None, database=None)
MASK = (1 << 64) - 1


class ScriptedSource(RandomSource):
    """Serves the given 64-bit words (little-endian), and fails if asked for more."""

    def __init__(self, words: list[int]) -> None:
        super().__init__()
        self._data = b"".join(w.to_bytes(8, "little") for w in words)
        self._pos = 0

    def _generate(self, n: int) -> bytes:
        chunk = self._data[self._pos : self._pos + n]
        assert len(chunk) == n, "the comparison read more words than scripted"
        self._pos += n
        return chunk

    @property
    def unread_words(self) -> int:
        return (len(self._data) - self._pos) // 8

    def describe(self) -> dict[str, Any]:
        return {"kind": "scripted"}


def exact_below(c: Fraction, prefix: int, prefix_bits: int, more: list[int]) -> tuple[bool, int]:
    """``[U < c]`` for the uniform ``U`` whose bits are ``prefix`` then the words ``more``.

    Returns the answer and how many of ``more`` were needed to decide it.
    """
    value, bits = prefix, prefix_bits
    for used in range(len(more) + 1):
        low, high = Fraction(value, 1 << bits), Fraction(value + 1, 1 << bits)
        if high <= c:
            return True, used
        if low >= c:
            return False, used
        value, bits = (value << 64) | more[used], bits + 64
    raise AssertionError("not decided by the scripted words")


thresholds = st.fractions(min_value=0, max_value=1, max_denominator=10**12)
words = st.integers(0, MASK)


def _tie_words(c: Fraction, width: int) -> list[int]:
    """The first ``words_for(width)`` words of a ``U`` whose first ``width`` bits equal ``floor(c * 2**width)``."""
    low = min(int(c * (1 << width)), (1 << width) - 1)  # the stored threshold is clamped
    if width == 128:
        return [low >> 64, low & MASK]
    return [low << (64 - width)]


@SETTINGS
@given(c=thresholds, width=st.sampled_from([3, 64, 128]), more=st.lists(words, min_size=4, max_size=4))
def test_ties_are_resolved_exactly(c: Fraction, width: int, more: list[int]) -> None:
    """Vectorised and scalar comparisons of a tied word against a rational, at 3, 64 and 128 bits."""
    prefix = _tie_words(c, width)
    tie = int(min(int(c * (1 << width)), (1 << width) - 1))
    expected, used = exact_below(c, tie, width, more)
    plan = Thresholds.of([Real.rational(c)], width)

    source = ScriptedSource(prefix + more)
    assert bool(plan.bernoulli(1, source)[0]) == expected
    assert source.unread_words == len(more) - used

    source = ScriptedSource(prefix + more)
    assert plan.decide_one(source) == expected
    assert source.unread_words == len(more) - used


@SETTINGS
@given(c=thresholds, width=st.sampled_from([3, 64, 128]), data=st.data())
def test_untied_words_decide_at_once(c: Fraction, width: int, data: st.DataObject) -> None:
    first = data.draw(st.lists(words, min_size=words_for(width), max_size=words_for(width)))
    u = (first[0] << 64 | first[1]) if width == 128 else first[0] >> (64 - width)
    low, high = Fraction(u, 1 << width), Fraction(u + 1, 1 << width)
    assume(high <= c or low >= c)  # ties are covered above
    expected = high <= c
    plan = Thresholds.of([Real.rational(c)], width)
    source = ScriptedSource(first)
    assert bool(plan.bernoulli(1, source)[0]) == expected and source.unread_words == 0
    source = ScriptedSource(first)
    assert plan.decide_one(source) == expected and source.unread_words == 0


def test_ties_in_a_batch_use_their_own_threshold_and_words() -> None:
    """Several thresholds, an index per element, ties on some elements: each resolved with its own bits."""
    cs = [Fraction(1, 3), Fraction(2, 7), Fraction(5, 9)]
    plan = Thresholds.of([Real.rational(c) for c in cs], 128)
    index = np.array([2, 0, 1, 0, 2], dtype=np.int64)
    firsts = [_tie_words(cs[2], 128), [0, 5], _tie_words(cs[1], 128), [MASK, MASK], _tie_words(cs[2], 128)]
    tails = [[0x0123456789ABCDEF], [1], [0xFEDCBA9876543210], [2], [MASK]]
    expected, scripted = [], []
    for c_index, first, tail in zip(index, firsts, tails, strict=True):
        answer, used = exact_below(cs[c_index], first[0] << 64 | first[1], 128, tail)
        expected.append(answer)
        scripted += tail[:used]  # the resolver reads further words element by element, in order
    assert len(scripted) == 3
    # Words are laid out as decide() expects: row 0 all first words, row 1 all second words.
    batch = np.array([[f[0] for f in firsts], [f[1] for f in firsts]], dtype=np.uint64)
    source = ScriptedSource(scripted)
    assert plan.decide(batch, source, index).tolist() == expected
    assert source.unread_words == 0


@pytest.mark.parametrize("width", [4, 64, 128])
def test_probability_one_is_representable(width: int) -> None:
    """``c = 1`` is stored clamped to ``2**width - 1``; the all-ones word then goes to the resolver: 1."""
    plan = Thresholds.of([Real.rational(1)], width)
    all_ones = [MASK] * words_for(width)
    assert plan.bernoulli(1, ScriptedSource(all_ones))[0]
    assert plan.decide_one(ScriptedSource(all_ones))


@SETTINGS
@given(more=st.lists(words, min_size=3, max_size=3))
def test_irrational_threshold_ties_at_four_bits(more: list[int]) -> None:
    """exp(-1/2) at 4 bits: the resolver must agree with a 1000-bit rational enclosure of it."""
    real = exp_neg(Fraction(1, 2))
    iv = real.interval(1000)
    lo, hi = (Fraction(*x.as_integer_ratio()) for x in (iv.lo, iv.hi))
    tie = real.floor_ceil(4)[0]
    answer_lo, used_lo = exact_below(lo, tie, 4, more)
    answer_hi, used_hi = exact_below(hi, tie, 4, more)
    assert (answer_lo, used_lo) == (answer_hi, used_hi)  # the enclosure is far tighter than 196 bits
    assert resolve_below(real, tie, 4, ScriptedSource(more[:used_lo])) == answer_lo


@pytest.mark.parametrize("width", [0, -1, 129, 256])
def test_unsupported_widths_are_refused(width: int) -> None:
    with pytest.raises(ValueError, match="width"):
        words_for(width)


# --- the thresholds the plans store are exact to the last bit ------------------------------------------

_D = decimal.Context(prec=150)


def floor_scaled(value: decimal.Decimal, width: int) -> int:
    """``floor(value * 2**width)`` from a 150-digit decimal (far more digits than any width here)."""
    return int(_D.multiply(value, _D.power(2, width)).to_integral_value(rounding=decimal.ROUND_FLOOR))


def _stored(value: decimal.Decimal, width: int) -> int:
    """The threshold a plan stores: the floor, clamped to ``2**width - 1``."""
    return min(floor_scaled(value, width), (1 << width) - 1)


def _exp_neg(x: Fraction) -> decimal.Decimal:
    return _D.exp(_D.divide(-decimal.Decimal(x.numerator), decimal.Decimal(x.denominator)))


def test_exp_thresholds_are_exact_to_the_last_bit() -> None:
    """``floor(exp(-x) * 2**64)``: a rounding of ``x`` to a float anywhere would shift it by ~100 units."""
    for x in (Fraction(1, 10), Fraction(7, 3), Fraction(1, 1000)):
        assert exp_neg(x).floor_ceil(64)[0] == floor_scaled(_exp_neg(x), 64)
        assert exp_neg(x).floor_ceil(200)[0] == floor_scaled(_exp_neg(x), 200)


def test_laplace_and_geometric_plan_thresholds_are_exact() -> None:
    plan = DiscreteLaplacePlan("0.1", width=64)
    q = _exp_neg(Fraction(10))
    assert plan.zero._pylows == [_stored(_D.divide(1 - q, 1 + q), 64)]
    geometric = GeometricPlan(ExpRatio(Fraction(1, 1000)))  # one splitting level of 2**9 values
    accept = geometric.levels[0].accept._pylows
    for r in (0, 1, 2, 100, len(accept) - 1):
        assert accept[r] == _stored(_exp_neg(Fraction(r, 1000)), 64), r
    tail = Fraction(1 << geometric.shift, 1000)  # the digits see the ratio q**(2**shift)
    for i, thresholds in enumerate(geometric.digit_thresholds):
        power = _exp_neg(tail * (1 << i))
        assert thresholds._pylows == [_stored(_D.divide(power, 1 + power), 64)], i


def test_gaussian_acceptance_table_is_exact() -> None:
    plan = DiscreteGaussianPlan(Fraction(10))
    table = plan.accept._pylows
    for y in (0, 1, 2, 3, 10, plan.table_size - 1):
        e = (y - plan.center) ** 2 / (2 * plan.variance)
        expected = _stored(_exp_neg(e), plan.width)
        assert table[y] == expected, y


@SETTINGS
@given(c=thresholds, u=words, widen=st.tuples(st.integers(0, 2), st.integers(0, 2)),
       more=st.lists(words, min_size=4, max_size=4))
def test_below_with_any_valid_window_is_exact(c: Fraction, u: int, widen: tuple[int, int], more: list[int]) -> None:
    """``below(u, lo, hi)`` answers ``[U < c]`` for any integers ``lo <= c * 2**64 <= hi``, reading more bits
    only when ``u`` falls inside the window, and then exactly as many as the exact answer needs."""
    floor = int(c * (1 << 64))
    ceil = -(-c.numerator * (1 << 64) // c.denominator)
    low, high = floor - widen[0], ceil + widen[1]
    expected, used = exact_below(c, u, 64, more)
    source = ScriptedSource(more)
    assert below(u, low, high, lambda: Real.rational(c), 64, source) == expected
    read = len(more) - source.unread_words
    assert read == (used if low <= u < high else 0)


def test_per_element_reals_resolve_each_tie_with_its_own_threshold() -> None:
    """``decide(..., real_of)``: ties are resolved against the real of the element, not of its table slot."""
    cs = [Fraction(1, 3), Fraction(2, 7)]
    plan = Thresholds([0, 0], lambda i: Real.rational(0), 64)  # floors 0: a zero word is a tie
    batch = np.zeros((1, 2), dtype=np.uint64)
    tails = [[0x0123456789ABCDEF], [MASK]]
    expected = [exact_below(c / 2**64, 0, 64, tail)[0] for c, tail in zip(cs, tails, strict=True)]
    source = ScriptedSource([t[0] for t in tails])
    got = plan.decide(batch, source, np.array([0, 1]), lambda e: Real.rational(cs[e] / 2**64))
    assert got.tolist() == expected == [True, False] and source.unread_words == 0


def test_leading_bits() -> None:
    assert leading_bits([0xF000_0000_0000_0001], 4) == 0xF
    assert leading_bits([5, 7], 128) == (5 << 64) | 7
