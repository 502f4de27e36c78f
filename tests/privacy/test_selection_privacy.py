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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "statistical"))
from _selection_laws import exponential_law, permute_and_flip_law, quantile_law  # noqa: E402

_CTX = {"precision": 256, "emax": gmpy2.get_emax_max(), "emin": gmpy2.get_emin_min()}


def max_ratio(law_a, law_b) -> gmpy2.mpfr:
    with gmpy2.context(round=gmpy2.RoundUp, **_CTX):
        return max(max(a[1] / b[0], b[1] / a[0]) for a, b in zip(law_a, law_b))


def e_to(eps: Fraction) -> gmpy2.mpfr:
    """``e**eps`` rounded up, with the enclosure tolerance ``1 + 2**-240``."""
    with gmpy2.context(round=gmpy2.RoundUp, **_CTX):
        return gmpy2.exp(gmpy2.mpq(eps.numerator, eps.denominator)) * (1 + gmpy2.mpfr(2) ** -240)


def neighbours(domain, max_size):
    """Pairs (x, x + [v]) of multisets: add/remove one record."""
    for size in range(max_size):
        for x in itertools.combinations_with_replacement(domain, size):
            for v in domain:
                yield list(x), sorted(list(x) + [v])


def test_quantile_privacy_map_is_exact_on_a_tiny_domain():
    eps = Fraction(1)
    worst = gmpy2.mpfr(0)
    for q in (Fraction(0), Fraction(1, 3), Fraction(1, 2), Fraction(1)):
        for x, y in neighbours(range(4), 4):
            ratio = max_ratio(quantile_law(x, q, 0, 3, eps), quantile_law(y, q, 0, 3, eps))
            assert ratio <= e_to(eps), (q, x, y)
            worst = max(worst, ratio)
    assert worst > e_to(eps / 4)  # a large part of the budget is used: the check is not vacuous


def test_quantile_with_two_contributions_per_person():
    eps = Fraction(1, 2)
    for x in itertools.combinations_with_replacement(range(4), 2):
        for extra in itertools.combinations_with_replacement(range(4), 2):
            y = sorted(list(x) + list(extra))
            law_x = quantile_law(list(x), Fraction(1, 2), 0, 3, eps, sensitivity=2)
            law_y = quantile_law(y, Fraction(1, 2), 0, 3, eps, sensitivity=2)
            assert max_ratio(law_x, law_y) <= e_to(eps)


def score_neighbours(values, n, delta):
    for s in itertools.product(values, repeat=n):
        for d in itertools.product((-delta, 0, delta), repeat=n):
            yield s, tuple(a + b for a, b in zip(s, d)), d


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
    """Two candidates, discrete Laplace of scale 2/eps: P(0 wins) = P(Z1 - Z0 <= c0 - c1) exactly enclosed."""
    eps = Fraction(1)
    b = 2 / eps
    with gmpy2.context(round=gmpy2.RoundToNearest, **_CTX):
        q = gmpy2.exp(-1 / gmpy2.mpfr(b))
        pz = [(1 - q) / (1 + q) * q ** abs(k) for k in range(-400, 401)]
        # distribution of D = Z1 - Z0 (tails beyond +-400 carry < 1e-80)
        diff = {}
        for a in range(801):
            for c in range(801):
                diff[c - a] = diff.get(c - a, 0) + pz[a] * pz[c]

    def p_zero_wins(gap: int):
        with gmpy2.context(round=gmpy2.RoundToNearest, **_CTX):
            return sum(v for k, v in diff.items() if k <= gap)

    slack = gmpy2.mpfr("1e-60")
    for c0, c1 in itertools.product(range(-3, 4), repeat=2):
        for d0, d1 in itertools.product((-1, 0, 1), repeat=2):
            p, p2 = p_zero_wins(c0 - c1), p_zero_wins(c0 + d0 - c1 - d1)
            for a, a2 in ((p, p2), (1 - p, 1 - p2)):
                assert a <= e_to(eps) * a2 + slack
