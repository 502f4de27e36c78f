"""Empirical release rates of partition selection against their exact laws.

A key held by one person must appear with probability at most ``delta``
(per key ``delta / k``): with a large ``delta = 1/20`` the rate is measurable.
Fixed ChaCha seeds, binomial tests at ``ALPHA = 1e-6``: a correct rule fails
with probability below 1e-6 per assertion, and the seeds make it deterministic.
"""

from __future__ import annotations

import hashlib
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from securedp import ChaChaSource
from securedp.hazmat.exact.interval import Interval
from securedp.mechanisms.partition_selection import laplace_threshold, optimal_selection

ALPHA = 1e-6
N = 200_000
EPSILON, DELTA = 1, Fraction(1, 20)


def seeded(label: str) -> ChaChaSource:
    return ChaChaSource(hashlib.sha256(b"partition-" + label.encode()).digest())


def check_rate(released: int, trials: int, p: Fraction) -> None:
    assert stats.binomtest(released, trials, float(p)).pvalue > ALPHA  # float-ok: test statistic only
    assert stats.binomtest(released, trials, float(DELTA), alternative="greater").pvalue > ALPHA


def test_laplace_one_person_key_rate() -> None:
    plan = laplace_threshold(EPSILON, DELTA, 1)
    q = (-Interval.exact(Fraction(EPSILON), 256)).exp()
    p1 = q ** (plan.threshold - 1) / (q + 1)
    law = Fraction(*p1.lo.as_integer_ratio())  # 2**-256 from the exact value: far below the test's resolution
    selection = plan.select(np.ones(N, dtype=np.int64), seeded("laplace-1"))
    check_rate(int(selection.keep.sum()), N, law)
    assert np.all(selection.noisy[selection.keep] >= plan.threshold)
    assert np.all(selection.noisy[~selection.keep] < plan.threshold)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_optimal_rule_matches_its_law(n: int) -> None:
    plan = optimal_selection(EPSILON, DELTA, 1)
    keep = plan.select(np.full(N, n, dtype=np.int64), seeded(f"optimal-{n}"))
    p = plan.probability(n)
    assert 0 < p < 1
    if n == 1:
        check_rate(int(keep.sum()), N, p)
    else:
        assert stats.binomtest(int(keep.sum()), N, float(p)).pvalue > ALPHA  # float-ok: test statistic only
