"""The probability that a draw leaves the fixed-time fast path is below 2**-60.

Each plan counts the comparisons a draw makes (expected rejection rounds
included) and multiplies by the per-comparison probability ``2**-width`` of
reaching the resolver. The bound is what the timing claim rests on, so it is
checked over the whole supported parameter range, 1/1000 to 10**12.
"""

from fractions import Fraction

import pytest

from securedp.hazmat.samplers.discrete_gaussian import DiscreteGaussianPlan
from securedp.hazmat.samplers.discrete_laplace import DiscreteLaplacePlan
from securedp.hazmat.samplers.geometric import ExpRatio, GeometricPlan, RationalRatio

LIMIT = 2.0**-60

SCALES = [Fraction(1, 1000), Fraction(3, 10), 1, Fraction(7, 3), 10, 15, 17, 100, 1000, 33000, 10**6, 3 * 10**8, 10**12]


@pytest.mark.parametrize("scale", SCALES, ids=str)
def test_discrete_laplace_bound(scale):
    plan = DiscreteLaplacePlan(scale)
    assert 0 < plan.slow_path_bound <= LIMIT


@pytest.mark.parametrize("scale", SCALES, ids=str)
def test_geometric_bound(scale):
    assert GeometricPlan(ExpRatio(1 / Fraction(scale))).slow_path_bound <= LIMIT


@pytest.mark.parametrize("q", [Fraction(1, 2), Fraction(999, 1000), Fraction(1, 10**6)], ids=str)
def test_geometric_rational_ratio_bound(q):
    assert GeometricPlan(RationalRatio(q)).slow_path_bound <= LIMIT


@pytest.mark.parametrize("sigma", [Fraction(1, 1000), Fraction(1, 10), 1, 3, 10, 100, 1000, 10**4], ids=str)
def test_discrete_gaussian_bound(sigma):
    plan = DiscreteGaussianPlan(Fraction(sigma) ** 2)
    assert 0 < plan.slow_path_bound <= LIMIT


def test_narrow_width_is_counted():
    """The bound honestly grows when a test forces narrow comparisons."""
    assert DiscreteLaplacePlan(10, width=4).slow_path_bound > 0.1
