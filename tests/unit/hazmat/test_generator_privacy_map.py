"""``SecureGenerator.epsilon_of`` / ``rho_of`` against an exact enumeration of snapped neighbours (defect 5)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from securedp import SecureGenerator
from securedp.hazmat.generator import _snap


def _worst_steps(sensitivity: Fraction, scale) -> int:
    """Most lattice steps between snap(a) and snap(a + d), |d| <= sensitivity, over a grid of a and d.

    The grid's grain divides the sensitivity and half a step, so it holds every tie."""
    step = SecureGenerator.lattice(scale)
    k = step.numerator.bit_length() - 1 if step.denominator == 1 else -(step.denominator.bit_length() - 1)
    worst = 0
    grain = step / (4 * (sensitivity / step).denominator)  # sensitivity and every half-step tie are multiples
    span = int(sensitivity / grain)
    for i in range(int(2 * step / grain)):
        a = i * grain
        for j in range(span + 1):
            b = a + j * grain
            worst = max(worst, abs(int(_snap(b, k)) - int(_snap(a, k))))
    return worst


@pytest.mark.parametrize("sensitivity, scale", [(1, 5000), (3, 5000), (2, 5000), ("2.5", 5000), (1, 1), ("1/3", 9000)])
def test_epsilon_of_is_the_exact_worst_case(sensitivity, scale):
    s = Fraction(sensitivity)
    steps = _worst_steps(s, scale)
    step = SecureGenerator.lattice(scale)
    assert SecureGenerator.epsilon_of(sensitivity, scale) == steps * step / Fraction(scale)
    assert SecureGenerator.rho_of(sensitivity, scale) == (steps * step / Fraction(scale)) ** 2 / 2


def test_odd_step_count_reported_in_issue():
    assert SecureGenerator.epsilon_of(1, 5000) == Fraction(1, 2500)
    assert SecureGenerator.rho_of(1, 5000) == Fraction(1, 2 * 2500**2)
