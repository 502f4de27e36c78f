"""``SecureGenerator.uniform`` / ``exponential`` / ``from_seed`` against their exact laws (fixed seeds, alpha 1e-6)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from securedp import ChaChaSource, SecureGenerator

ALPHA = 1e-6


def test_from_seed_is_the_seeded_stream():
    a = SecureGenerator.from_seed(bytes([5]) * 32).laplace(0, 1, size=20)
    b = SecureGenerator(ChaChaSource(bytes([5]) * 32)).laplace(0, 1, size=20)
    assert np.array_equal(a, b)


def test_uniform_is_uniform_over_sixteen_equal_bins():
    x = SecureGenerator.from_seed(bytes([6]) * 32).uniform(-1, 3, size=64000)
    assert x.min() >= -1 and x.max() < 3
    counts = np.histogram(x, bins=16, range=(-1, 3))[0]
    assert stats.chisquare(counts).pvalue > ALPHA


def test_uniform_points_lie_on_the_declared_lattice():
    x = SecureGenerator.from_seed(bytes([7]) * 32).uniform(0, "0.75", size=2000)
    step = Fraction(1, 2**53)  # floor(log2(0.75)) - 52 = -53
    assert all((Fraction(float(v)) / step).denominator == 1 for v in x)
    assert all(0 <= Fraction(float(v)) < Fraction(3, 4) for v in x)


def test_uniform_refuses_an_empty_range():
    with pytest.raises(ValueError, match="high"):
        SecureGenerator().uniform(1, 1)


@pytest.mark.parametrize("scale", [1, "0.01", 1000])
def test_exponential_tail_is_exact_at_lattice_points(scale):
    g = SecureGenerator.from_seed(bytes([8]) * 32)
    s = float(Fraction(scale))
    x = g.exponential(scale, size=40000)
    assert x.min() >= 0
    edges = [0, 0.25 * s, 0.5 * s, s, 2 * s, 4 * s, math.inf]  # all lattice points: P(X >= t) = exp(-t/scale)
    counts = np.array([np.sum((x >= a) & (x < b)) for a, b in itertools.pairwise(edges)])
    probs = np.array([math.exp(-a / s) - (math.exp(-b / s) if b < math.inf else 0)
                      for a, b in itertools.pairwise(edges)])
    assert stats.chisquare(counts, probs * len(x)).pvalue > ALPHA


def test_exponential_scalar_and_lattice():
    g = SecureGenerator.from_seed(bytes([9]) * 32)
    v = g.exponential(3)
    assert isinstance(v, float) and v >= 0
    assert (Fraction(v) / SecureGenerator.lattice(3)).denominator == 1
