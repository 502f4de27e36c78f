"""Privacy maps of the selection mechanisms, checked exactly on tiny domains.

For every pair of neighbouring inputs in a small domain the full output law is
computed from the mechanism's definition with 256-bit directed rounding
(``tests/statistical/_selection_laws.py``) and the largest log-ratio is bounded
*above*: ``max_y hi(P[y | x]) / lo(P[y | x'])`` must not exceed ``e**epsilon``
(times ``1 + 2**-240``, the width of the enclosures: permute-and-flip attains
``e**epsilon`` exactly, so an upper bound of its ratio sits a few ulps above).
The statistical tests check that the samplers follow these very laws.
"""

from __future__ import annotations

import itertools
import sys
from fractions import Fraction
from pathlib import Path

import gmpy2
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "statistical"))
from _selection_laws import (
    exponential_law,
    noisy_max_pair_law,
    permute_and_flip_law,
    quantile_law,
    quantile_rate,
    quantile_score,
)

_CTX = {"precision": 256, "emax": gmpy2.get_emax_max(), "emin": gmpy2.get_emin_min()}


def max_ratio(law_a, law_b) -> gmpy2.mpfr:
    with gmpy2.context(round=gmpy2.RoundUp, **_CTX):
        return max(max(a[1] / b[0], b[1] / a[0]) for a, b in zip(law_a, law_b, strict=True))


def e_to(eps: Fraction) -> gmpy2.mpfr:
    """``e**eps`` rounded up, with the enclosure tolerance ``1 + 2**-240``."""
    with gmpy2.context(round=gmpy2.RoundUp, **_CTX):
        return gmpy2.exp(gmpy2.mpq(eps.numerator, eps.denominator)) * (1 + gmpy2.mpfr(2) ** -240)


def neighbours(domain, max_size):
    """Pairs (x, x + [v]) of multisets: add/remove one record."""
    for size in range(max_size):
        for x in itertools.combinations_with_replacement(domain, size):
            for v in domain:
                yield list(x), sorted([*x, v])


LEVELS = (Fraction(0), Fraction(1, 3), Fraction(1, 2), Fraction(2, 3), Fraction(1), Fraction(3, 10),
          Fraction(9, 10))


def people(domain, m):
    """Every person of at most ``m`` rows (a multiset of 1 to ``m`` values of ``domain``)."""
    for size in range(1, m + 1):
        yield from itertools.combinations_with_replacement(domain, size)


@pytest.mark.parametrize("fallback, spent", [
    (Fraction(0), (Fraction(9, 10), Fraction(2, 5))),  # the plain exponential mechanism
    (Fraction(3, 4), (Fraction(17, 20), Fraction(9, 20))),  # the default fallback point, an outcome of its own
    (Fraction(99, 100), (Fraction(19, 20), Fraction(1, 2))),  # a fallback outweighing the lattice 99 to 1: the
])                                                            # atom makes the bound nearly tight (0.9957 measured)
def test_quantile_privacy_map_is_exact_on_a_tiny_domain(fallback, spent):
    """Every dataset of up to 3 rows on 4 candidates and every person of up to ``m`` rows added: the law at the
    stated rate (``epsilon / (2 m max(a, b - a))``, ``epsilon / m`` for ``q`` 0 or 1), with the fallback point of
    weight ``W`` and score ``h = max(a, b - a) n`` as an outcome of its own (its release as ``f`` is
    post-processing), loses at most epsilon."""
    eps = Fraction(1)
    for q in LEVELS:
        for m in (1, 2, 3):
            worst = gmpy2.mpfr(0)
            for size in range(4):
                for x in itertools.combinations_with_replacement(range(4), size):
                    law_x = quantile_law(list(x), q, 0, 3, eps, sensitivity=m, fallback=fallback, separate=True)
                    for person in people(range(4), m):
                        y = sorted(x + person)
                        law_y = quantile_law(y, q, 0, 3, eps, sensitivity=m, fallback=fallback, separate=True)
                        ratio = max_ratio(law_x, law_y)
                        assert ratio <= e_to(eps), (q, m, x, person)
                        worst = max(worst, ratio)
            # not vacuous: the rate spends much of epsilon (the monotone levels nearly all of it)
            assert worst > e_to(eps * (spent[0] if q in (0, 1) else spent[1])), (q, m, worst)


def test_a_fallback_scored_below_the_worst_loses_more_than_epsilon():
    """The fallback's score ``h = max(a, b - a) n`` moves with the data: the same atom scored 0 in every dataset
    (a public point of fixed weight) is a base measure too and keeps the bound, but scored ``2 h`` (twice the
    sensitivity) it does not: the check above can fail."""
    eps, q, weight = Fraction(1), Fraction(1, 2), 12

    def law(data):
        scores = [-Fraction(quantile_score(data, q, y)) for y in range(4)]
        return exponential_law([*scores, -Fraction(2 * len(data))], quantile_rate(q, eps), [1] * 4 + [weight])

    assert any(max_ratio(law(list(x)), law(sorted((*x, v)))) > e_to(eps)
               for size in range(4) for x in itertools.combinations_with_replacement(range(4), size) for v in range(4))


def test_the_factor_two_is_needed_below_monotone_levels():
    """At ``q = 1/2`` the rate ``epsilon / m`` (the monotone levels' rate, twice the stated one) loses more than
    epsilon on some neighbour: the check above can fail."""
    eps = Fraction(1)
    assert any(max_ratio(quantile_law(list(x), Fraction(1, 2), 0, 3, 2 * eps, fallback=Fraction(0)),
                         quantile_law(sorted((*x, v)), Fraction(1, 2), 0, 3, 2 * eps, fallback=Fraction(0))) > e_to(eps)
               for size in range(4) for x in itertools.combinations_with_replacement(range(4), size) for v in range(4))


def score_neighbours(values, n, delta):
    for s in itertools.product(values, repeat=n):
        for d in itertools.product((-delta, 0, delta), repeat=n):
            yield s, tuple(a + b for a, b in zip(s, d, strict=True)), d


def test_exponential_mechanism_privacy_map():
    eps = Fraction(1)
    for s, t, d in score_neighbours(range(3), 3, 1):
        assert max_ratio(exponential_law([Fraction(v) for v in s], eps / 2),
                         exponential_law([Fraction(v) for v in t], eps / 2)) <= e_to(eps)
        if all(x >= 0 for x in d) or all(x <= 0 for x in d):  # monotonic neighbours
            assert max_ratio(exponential_law([Fraction(v) for v in s], eps),
                             exponential_law([Fraction(v) for v in t], eps)) <= e_to(eps)


def test_permute_and_flip_privacy_map():
    eps = Fraction(1)
    for s, t, _ in score_neighbours(range(3), 3, 1):
        assert max_ratio(permute_and_flip_law([Fraction(v) for v in s], eps / 2),
                         permute_and_flip_law([Fraction(v) for v in t], eps / 2)) <= e_to(eps)


def test_report_noisy_max_privacy_map():
    """Two candidates on the public lattice of sensitivity/4096: scale 2*4096/eps units, neighbours move
    each snapped score by at most 4096 steps (snapping keeps the sensitivity, see the unit tests), so the
    gap c1 - c0 moves by at most 8192. Both outcomes' probabilities must stay within e**eps exactly."""
    eps = Fraction(1)
    scale = Fraction(2 * 4096) / eps
    for gap in range(-40000, 40001, 1999):
        for shift in (-8192, -4097, -1, 0, 1, 4096, 8192):
            lo, hi = noisy_max_pair_law(gap, scale)
            lo2, hi2 = noisy_max_pair_law(gap + shift, scale)
            with gmpy2.context(round=gmpy2.RoundUp, **_CTX):
                assert hi <= e_to(eps) * lo2 and (1 - lo) <= e_to(eps) * (1 - hi2)
                assert hi2 <= e_to(eps) * lo and (1 - lo2) <= e_to(eps) * (1 - hi)
    # control: with half that scale (the monotonic one) the same pairs of gaps violate the bound, so the check can fail
    lo, hi = noisy_max_pair_law(40000, scale / 2)
    lo2, hi2 = noisy_max_pair_law(40000 + 8192, scale / 2)
    with gmpy2.context(round=gmpy2.RoundDown, **_CTX):
        assert lo > e_to(eps) * hi2
