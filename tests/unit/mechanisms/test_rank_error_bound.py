"""The rank error bound ``r`` a quantile states holds for the release, the fallback point included.

For each case the exact law (``_selection_laws.quantile_law``: 256-bit enclosures, the fallback merged into
the value it releases) puts at most ``alpha`` on the values whose rank error ``g(y) / b`` exceeds the ``r`` of
``prepared.accuracy(alpha)``. No sampling: the check is exact, so it fails only if the bound is wrong. Control:
``r`` over the candidates alone (a draft's bound, before review) is broken by a cell of tied records that
releases the fallback point about 15 % of the time at ``alpha = 1/20``.
"""

from __future__ import annotations

import itertools
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import securedp
from securedp.mechanisms.rank_utility import fallback_weight, rank_error_bound

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "statistical"))
from _selection_laws import quantile_law, quantile_score


def _tail(data: list[int], q: Fraction, lo: int, hi: int, epsilon: Fraction, fallback: Fraction, r: int):
    """An upper bound on the probability that the release's rank error exceeds ``r``."""
    law = quantile_law(data, q, lo, hi, epsilon, fallback=fallback)
    return sum((high for y, (_, high) in zip(range(lo, hi + 1), law, strict=True)
                if quantile_score(data, q, y) > r * q.denominator), 0)


def _stated(data: list[int], q: Fraction, lo: int, hi: int, epsilon: Fraction, fallback: Fraction,
            alpha: Fraction) -> int:
    prepared = securedp.prepare_quantile(data, q, bounds=(lo, hi), lattice=1, epsilon=epsilon, fallback=fallback)
    (r,) = prepared.accuracy(alpha).values()
    return int(r)


TIED = [0] * 201
"""201 equal records at the bottom of (0, 1000): at epsilon 1/10 every other candidate scores the fallback's h."""

CASES = [
    *[(data, q, 0, 12, epsilon, fallback, alpha)
      for data, q, epsilon, fallback, alpha in itertools.product(
          ([], [3], [2, 2, 9], [0, 1, 5, 5, 5, 7, 12, 12]), (Fraction(1, 2), Fraction(1, 4), Fraction(9, 10),
                                                              Fraction(0), Fraction(1)),
          (Fraction(1, 10), Fraction(1), Fraction(3)), (Fraction(0), Fraction(3, 4), Fraction(99, 100)),
          (Fraction(1, 20), Fraction(1, 3)))],
    (TIED, Fraction(1, 2), 0, 1000, Fraction(1, 10), Fraction(3, 4), Fraction(1, 20)),
]


@pytest.mark.parametrize("data, q, lo, hi, epsilon, fallback, alpha", CASES)
def test_the_stated_rank_error_bound_holds_with_the_fallback(data, q, lo, hi, epsilon, fallback, alpha) -> None:
    r = _stated(data, q, lo, hi, epsilon, fallback, alpha)
    assert _tail(data, q, lo, hi, epsilon, fallback, r) <= alpha


def test_control_the_bound_over_the_candidates_alone_fails_where_the_fallback_is_often_drawn() -> None:
    q, epsilon, fallback, alpha = Fraction(1, 2), Fraction(1, 10), Fraction(3, 4), Fraction(1, 20)
    candidates = 1001
    rank_rate = epsilon / 2 * q.denominator  # the rate epsilon / (2 m max(a, b - a)), m = 1, times b
    draft = rank_error_bound(rank_rate, candidates, alpha)
    stated = _stated(TIED, q, 0, 1000, epsilon, fallback, alpha)
    margin = 10  # the tie margin ceil(1 / rank_rate)
    assert stated == rank_error_bound(rank_rate, candidates + fallback_weight(fallback, candidates), alpha) + margin
    assert stated > draft
    assert _tail(TIED, q, 0, 1000, epsilon, fallback, draft) > Fraction(1, 10) > alpha


def test_accuracy_reads_alpha_as_every_other_parameter_and_refuses_a_level_outside_0_1() -> None:
    """``prepared.accuracy("1/20")`` is ``accuracy(Fraction(1, 20))`` (it raised AttributeError on a text)."""
    prepared = securedp.prepare_median([1, 2, 3], bounds=(0, 8), lattice=1, epsilon=1)
    assert prepared.accuracy("1/20") == prepared.accuracy("0.05") == prepared.accuracy(Fraction(1, 20))
    for bad, error in (("0", ValueError), (1, ValueError), ("x", ValueError), (None, TypeError)):
        with pytest.raises(error, match="alpha"):
            prepared.accuracy(bad)
