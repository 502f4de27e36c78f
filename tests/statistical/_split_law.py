"""The exact joint law of the recursive split's outputs, from its definition (small instances only).

Kaplan, Schnapp and Stemmer 2022, as :mod:`securedp.mechanisms.quantile_split` states it, restated here
without the library's code, on a doubled lattice: a record ``x`` is two half-rows at ``2x - 1`` and ``2x + 1``,
a candidate ``y`` is ``2y``, so no half-row is ever a candidate. The sorted levels' middle one (index
``m // 2``) is selected by one quantile's law (:func:`_selection_laws.quantile_law`: score, rate, fallback,
here over the even points ``2y`` only, the half-rows counted as ``2m`` rows per person) at its rescaled level
over the candidates ``[c_lo, c_hi]`` and the part's half-rows; the levels below it recurse on the half-rows
under ``2y`` over ``[c_lo, y]``, those above on the half-rows over ``2y`` over ``[y, c_hi]``, every depth at
``epsilon / D``, ``D = ceil(log2(m + 1))``. The joint law is the product of the conditional laws
(enclosures multiplied with directed rounding).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import gmpy2
from _selection_laws import _CTX, FALLBACK, _exp, _normalise, quantile_rate, quantile_score


def half_row_law(halves: Sequence[int], q: Fraction, lo: int, hi: int, epsilon: Fraction, m: int,
                  fallback: Fraction) -> list[tuple]:
    """One selection over the candidates ``2y``, ``lo <= y <= hi``, of the half-rows ``halves`` (odd points):
    ``P(y) ~ exp(-rate g(2y))`` with one quantile's score and rate for ``2m`` rows per person, plus the fallback's
    ``W exp(-rate h)`` at ``f`` (the integer nearest ``lo + q (hi - lo)``, halves up), ``W = floor(N p / (1 - p))``
    for ``N`` candidates, ``h = max(a, b - a) len(halves)``."""
    rate = quantile_rate(q, epsilon, 2 * m)
    exponents = [-rate * quantile_score(halves, q, 2 * y) for y in range(lo, hi + 1)]
    weight = (hi - lo + 1) * fallback.numerator // (fallback.denominator - fallback.numerator)
    lows = [_exp(e, gmpy2.RoundDown) for e in exponents]
    highs = [_exp(e, gmpy2.RoundUp) for e in exponents]
    if weight:
        h = -rate * max(q.numerator, q.denominator - q.numerator) * len(halves)
        point = (2 * q.numerator * (hi - lo) + q.denominator) // (2 * q.denominator)
        with gmpy2.context(round=gmpy2.RoundDown, **_CTX):
            lows[point] += weight * _exp(h, gmpy2.RoundDown)
        with gmpy2.context(round=gmpy2.RoundUp, **_CTX):
            highs[point] += weight * _exp(h, gmpy2.RoundUp)
    return _normalise(lows, highs)


def split_law(data: Sequence[int], levels: Sequence[Fraction], lo: int, hi: int, epsilon: Fraction,
              m: int = 1, fallback: Fraction = FALLBACK) -> dict[tuple[int, ...], tuple]:
    """``{outputs in the order of sorted levels: (lo, hi) enclosure of their probability}`` over every outcome
    of positive probability."""
    ordered = sorted(levels)
    depth_epsilon = epsilon / len(ordered).bit_length()

    def law(part: list[int], qs: list[Fraction], q_lo: Fraction, q_hi: Fraction, c_lo: int, c_hi: int) -> dict:
        if not qs:
            return {(): (gmpy2.mpfr(1), gmpy2.mpfr(1))}
        i = len(qs) // 2
        q = (qs[i] - q_lo) / (q_hi - q_lo)
        out: dict[tuple[int, ...], tuple] = {}
        for k, (p_lo, p_hi) in enumerate(half_row_law(part, q, c_lo, c_hi, depth_epsilon, m, fallback)):
            y = c_lo + k
            left = law([h for h in part if h < 2 * y], qs[:i], q_lo, qs[i], c_lo, y)
            right = law([h for h in part if h > 2 * y], qs[i + 1:], qs[i], q_hi, y, c_hi)
            for a, (a_lo, a_hi) in left.items():
                for b, (b_lo, b_hi) in right.items():
                    with gmpy2.context(round=gmpy2.RoundDown, **_CTX):
                        low = p_lo * a_lo * b_lo
                    with gmpy2.context(round=gmpy2.RoundUp, **_CTX):
                        high = p_hi * a_hi * b_hi
                    out[(*a, y, *b)] = (low, high)
        return out

    halves = sorted([2 * x - 1 for x in data] + [2 * x + 1 for x in data])
    return law(halves, ordered, Fraction(0), Fraction(1), lo, hi)
