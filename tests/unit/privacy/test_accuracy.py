"""Confidence half-widths of the noise laws: proven coverage, minimal for Laplace, checked from the definitions."""

from __future__ import annotations

from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from scipy import stats

from securedp import ChaChaSource
from securedp.hazmat.samplers import discrete_gaussian, discrete_laplace
from securedp.privacy.accuracy import gaussian_halfwidth, laplace_halfwidth

ALPHAS = [Fraction(1, 2), Fraction(1, 20), Fraction(1, 1000), Fraction(1, 10**9)]


def tail_from_pmf(weight, t: int, reach: int) -> gmpy2.mpfr:
    """P(|Z| > t) by summing the (unnormalised) pmf over |k| <= reach, at 300 bits."""
    with gmpy2.context(precision=300):
        total = weight(0) + 2 * sum(weight(k) for k in range(1, reach))
        outside = 2 * sum(weight(k) for k in range(t + 1, reach))
        return outside / total


@pytest.mark.parametrize("scale", [Fraction(1, 3), Fraction(1), Fraction(5, 2), Fraction(40)])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_laplace_halfwidth_is_the_smallest_that_covers(scale, alpha):
    t = laplace_halfwidth(scale, alpha)
    with gmpy2.context(precision=300):
        q = gmpy2.exp(-1 / gmpy2.mpq(scale.numerator, scale.denominator))
    reach = int(scale * 400) + 50
    weight = lambda k: q**k
    a = gmpy2.mpq(alpha.numerator, alpha.denominator)
    assert tail_from_pmf(weight, t, reach) <= a
    assert t == 0 or tail_from_pmf(weight, t - 1, reach) > a


@pytest.mark.parametrize("variance", [Fraction(1, 4), Fraction(1), Fraction(10), Fraction(900)])
@pytest.mark.parametrize("alpha", ALPHAS)
def test_gaussian_halfwidth_covers(variance, alpha):
    t = gaussian_halfwidth(variance, alpha)
    v = gmpy2.mpq(variance.numerator, variance.denominator)
    weight = lambda k: gmpy2.exp(-gmpy2.mpfr(k * k) / (2 * v))
    reach = int(gmpy2.sqrt(v) * 60) + 50
    a = gmpy2.mpq(alpha.numerator, alpha.denominator)
    assert tail_from_pmf(weight, t, reach) <= a
    # conservative only by the Canonne-Kamath-Steinke tail bound: never more than a few units wider
    assert t <= 2 or tail_from_pmf(weight, t - 3, reach) > a


@pytest.mark.parametrize("draw, halfwidth, parameter", [
    (discrete_laplace, laplace_halfwidth, Fraction(7, 2)),
    (lambda v, **kw: discrete_gaussian(variance=v, **kw), gaussian_halfwidth, Fraction(30)),
])
def test_coverage_of_drawn_noise(draw, halfwidth, parameter):
    """Seeded draws: the interval misses at most at rate alpha (one-sided binomial test at 1e-6)."""
    alpha = Fraction(1, 10)
    t = halfwidth(parameter, alpha)
    values = np.asarray(draw(parameter, size=40000, rng=ChaChaSource(bytes([9]) * 32)))
    misses = int((np.abs(values) > t).sum())
    assert stats.binomtest(misses, 40000, float(alpha), alternative="greater").pvalue > 1e-6


def test_huge_and_tiny_scales_are_fast_and_sane():
    assert laplace_halfwidth(2**256, "0.05") > 2**257
    assert laplace_halfwidth(Fraction(1, 2**60), "0.05") == 0
    assert gaussian_halfwidth(2**200, "0.05") > 2**100


@pytest.mark.parametrize("alpha", [0, 1, "1.5", -1, float("nan"), "abc", None])
def test_bad_alpha_is_refused(alpha):
    with pytest.raises((ValueError, TypeError), match="alpha"):
        laplace_halfwidth(1, alpha)
