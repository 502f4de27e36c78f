"""Report-noisy-max's public noise lattice (issue 8: the lattice no longer depends on the scores).

0.1 put the noise on the scores' common unit, so ``[1e-300, 0.5]`` asked for a scale of about 2**1050
units and raised: a data-dependent error, and neighbours under different noise laws. The lattice is now
``sensitivity / 4096`` whatever the scores; these tests pin that, and the two facts the privacy map uses:
snapping is exact and keeps the sensitivity at 4096 steps.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import securedp
from securedp import ChaChaSource
from securedp.lattice import round_half_even
from securedp.mechanisms.scores import parse_scores

STEPS = 4096
rationals = st.fractions(min_value=-(10**30), max_value=10**30, max_denominator=10**12)
sensitivities = st.sampled_from([Fraction(1), Fraction(1, 3), Fraction(2) ** -40, Fraction(10**20), Fraction(7, 10)])


def exact_snap(values, step: Fraction) -> list[int]:
    return [round_half_even((Fraction(v) / step).numerator, (Fraction(v) / step).denominator) for v in values]


@settings(max_examples=300, deadline=None)
@given(rationals, st.fractions(min_value=-1, max_value=1, max_denominator=10**6), sensitivities)
def test_snapping_keeps_the_sensitivity(s, t, sens):
    """|s - s'| <= sensitivity implies |c - c'| <= 4096 steps, and snapping is monotone."""
    moved = s + t * sens
    c, c_moved = parse_scores([s, moved]).snapped(sens / STEPS)
    assert abs(int(c_moved) - int(c)) <= STEPS
    assert (int(c_moved) - int(c)) * (moved - s) >= 0


def test_the_sensitivity_bound_is_tight_and_the_check_can_fail():
    """Half-step ties round to even: shifting by the full sensitivity moves by exactly 4096, an odd count could not."""
    step = Fraction(1, STEPS)
    c = parse_scores([Fraction(1, 2 * STEPS), Fraction(1, 2 * STEPS) + 1]).snapped(step)
    assert list(c) == [0, STEPS]
    # With an odd number of steps per sensitivity the same shift moves one step more: what 4096 avoids.
    odd = Fraction(1, STEPS + 1)
    c = parse_scores([odd / 2, odd / 2 + 1]).snapped(odd)
    assert int(c[1]) - int(c[0]) == STEPS + 2


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=8),
       st.sampled_from([Fraction(1, STEPS), Fraction(2) ** -1060, Fraction(2) ** 900, Fraction(1, 3 * STEPS)]))
def test_float_scores_snap_exactly(values, step):
    """The ldexp/rint route for floats agrees with exact rational rounding (subnormals and 1e308 included)."""
    snapped = parse_scores(np.array(values)).snapped(step)
    assert [int(v) for v in snapped] == exact_snap(values, step)


@pytest.mark.parametrize("scores", [[1e-300, 0.5], [1e-5, 1.0], np.array([5e-324, 1.7e308]),
                                    [Fraction(1, 10**400), 1], [2**400, -(2**400)], np.longdouble([1, "1e-4000"])])
def test_noise_law_does_not_depend_on_the_scores(scores):
    r = securedp.report_noisy_max(scores, epsilon="1/2", sensitivity=3, rng=ChaChaSource(bytes(32)))
    assert r.parameters["noise_scale"] == Fraction(12)  # 2 * sensitivity / epsilon, for every score set
    assert r.value in (0, 1)


def test_analyst_facing_session_selects_on_extreme_scores():
    session = securedp.Session(epsilon=1, analyst_facing=True, rng=ChaChaSource(bytes(32)))
    assert session.report_noisy_max([1e-300, 0.5], epsilon="1/2", sensitivity=1).value in (0, 1)
    assert session.spent == Fraction(1, 2)


def test_an_epsilon_out_of_range_is_refused_before_any_draw():
    session = securedp.Session(epsilon=1)
    with pytest.raises(ValueError, match="2\\*\\*256"):
        session.report_noisy_max([0, 1], epsilon="1e-400", sensitivity=1)
    assert session.spent == 0
