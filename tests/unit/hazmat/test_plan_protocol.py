"""Every sampler plan satisfies the documented protocol of :mod:`securedp.hazmat.samplers.plan`."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from securedp import ChaChaSource
from securedp.hazmat.exact.interval import exp_neg
from securedp.hazmat.samplers import ExpCategorical, FloatGaps, Plan, SelectionPlan
from securedp.hazmat.samplers.bernoulli import BernoulliPlan, rational_plan
from securedp.hazmat.samplers.discrete_gaussian import DiscreteGaussianPlan
from securedp.hazmat.samplers.discrete_laplace import DiscreteLaplacePlan
from securedp.hazmat.samplers.geometric import ExpRatio, GeometricPlan, RationalRatio


def test_value_plans_are_plans():
    plans = [rational_plan(Fraction(1, 3)), rational_plan(Fraction(1)), BernoulliPlan(exp_neg(Fraction(2))),
             GeometricPlan(ExpRatio(Fraction(1, 10))), GeometricPlan(RationalRatio(Fraction(2, 3))),
             DiscreteLaplacePlan(7), DiscreteGaussianPlan(Fraction(9))]
    source = ChaChaSource(bytes([9]) * 32)
    for plan in plans:
        assert isinstance(plan, Plan)
        assert 0 <= plan.slow_path_bound < 2.0**-50
        values = plan.draw(5, source)
        assert values.shape == (5,)


def test_selection_plans_are_selection_plans():
    source = ChaChaSource(bytes([10]) * 32)
    for plan in (ExpCategorical(np.array([0, 3, 9]), Fraction(1)),
                 ExpCategorical(FloatGaps(np.array([0.5, -1.25, 3.0])), Fraction(1, 2))):
        assert isinstance(plan, SelectionPlan) and plan.slow_path_bound < 2.0**-60
        i, j = plan.draw(source)
        assert 0 <= i < 3 and j == 0
