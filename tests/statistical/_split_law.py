"""The exact joint law of the recursive split's outputs, from its definition (small instances only).

Kaplan, Schnapp and Stemmer 2022, as :mod:`securedp.mechanisms.quantile_split` states it, restated here
without the library's code: the sorted levels' middle one (index ``m // 2``) is selected by one quantile's
law (:func:`_selection_laws.quantile_law`: score, rate, fallback) at its rescaled level over the candidates
``[c_lo, c_hi]`` and the part's records; the levels below it recurse on the records ``<= y`` over
``[c_lo, y]``, those above on the records ``> y`` over ``[y, c_hi]``, every depth at ``epsilon / D``,
``D = ceil(log2(m + 1))``. The joint law is the product of the conditional laws (enclosures multiplied
with directed rounding).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import gmpy2
from _selection_laws import _CTX, FALLBACK, quantile_law


def split_law(data: Sequence[int], levels: Sequence[Fraction], lo: int, hi: int, epsilon: Fraction,
              sensitivity: int = 1, fallback: Fraction = FALLBACK) -> dict[tuple[int, ...], tuple]:
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
        for k, (p_lo, p_hi) in enumerate(quantile_law(part, q, c_lo, c_hi, depth_epsilon, sensitivity, fallback)):
            y = c_lo + k
            left = law([x for x in part if x <= y], qs[:i], q_lo, qs[i], c_lo, y)
            right = law([x for x in part if x > y], qs[i + 1:], qs[i], q_hi, y, c_hi)
            for a, (a_lo, a_hi) in left.items():
                for b, (b_lo, b_hi) in right.items():
                    with gmpy2.context(round=gmpy2.RoundDown, **_CTX):
                        low = p_lo * a_lo * b_lo
                    with gmpy2.context(round=gmpy2.RoundUp, **_CTX):
                        high = p_hi * a_hi * b_hi
                    out[(*a, y, *b)] = (low, high)
        return out

    return law(list(data), ordered, Fraction(0), Fraction(1), lo, hi)
