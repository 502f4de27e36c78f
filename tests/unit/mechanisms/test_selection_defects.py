"""Regressions from the adversarial review of 0.1: selection inputs and the default quantile lattice."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import securedp
from securedp import ChaChaSource
from securedp.mechanisms.quantile import default_lattice as _default_lattice


def test_median_on_unit_bounds_is_not_rounded_to_an_end():
    """0.1 used step 1 for bounds (0, 1): every median was 0 or 1. The default is now 2**-20 there."""
    data = [0.2, 0.3, 0.31, 0.4, 0.5] * 40
    source = ChaChaSource(bytes([21]) * 32)
    values = {securedp.prepare_median(data, bounds=(0, 1), epsilon=2).execute(source).value for _ in range(20)}
    assert not values <= {0, 1}
    assert all(Fraction(v) * 2**20 == int(Fraction(v) * 2**20) for v in values)
    assert all(Fraction("0.2") < v < Fraction("0.4") for v in values)  # the median 0.31, within a few ranks


@pytest.mark.parametrize("bounds, step", [((0, 1), Fraction(1, 2**20)), ((0, 10), Fraction(1, 2**17)),
                                          ((0, 120), Fraction(1, 2**14)), ((0, 2**20), Fraction(1)),
                                          ((0, "0.5"), Fraction(1, 2**21))])
def test_default_quantile_lattice_depends_on_the_bounds_only(bounds, step):
    assert _default_lattice(None, bounds).step == step


@pytest.mark.skipif(np.finfo(np.longdouble).nmant <= 52, reason="longdouble is float64 here")
def test_longdouble_scores_keep_a_difference_of_one_sensitivity():
    """0.1 rounded longdouble scores to float64: 2**60 and 2**60 + 1 became equal."""
    big = np.longdouble(2) ** 60
    scores = np.array([big, big + 1], dtype=np.longdouble)
    assert float(scores[0]) == float(scores[1])  # the trap: equal as doubles
    prepared = securedp.prepare_exponential_mechanism(scores, epsilon=20, sensitivity=1)
    source = ChaChaSource(bytes([22]) * 32)
    wins = sum(prepared.execute(source).value for _ in range(400))
    # exact P(select 1) = 1 / (1 + e**-10) > 0.99995: at most a few losses in 400
    assert wins >= 395
