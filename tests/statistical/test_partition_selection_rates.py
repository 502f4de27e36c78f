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
from securedp.mechanisms.gaussian_threshold import gaussian_tail, gaussian_threshold
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


def test_gaussian_one_person_key_rate() -> None:
    """``rho = 1/200`` (``sigma**2 = 100``) puts ``P(Z >= tau - 1)`` close below ``delta``; the neighbouring
    laws ``P(Z >= tau - 2)`` and ``P(Z >= tau)`` differ by about 20 standard errors and must be rejected
    (controls: the test can tell a threshold off by one)."""
    plan = gaussian_threshold(Fraction(1, 200), DELTA, 1)
    assert plan.variance == 100

    def law(t: int) -> Fraction:
        return Fraction(*gaussian_tail(t, plan.variance, 256).lo.as_integer_ratio())  # within 2**-200 of exact

    selection = plan.select(np.ones(N, dtype=np.int64), seeded("gaussian-1"))
    released = int(selection.keep.sum())
    check_rate(released, N, law(plan.threshold - 1))
    for wrong in (law(plan.threshold - 2), law(plan.threshold)):
        assert stats.binomtest(released, N, float(wrong)).pvalue < ALPHA  # float-ok: test statistic only
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


def test_optimal_rule_does_the_same_work_for_every_count() -> None:
    """Item 16.11: no key is skipped when p(n) = 1 or 0; every key reads two words and one comparison."""
    plan = optimal_selection(EPSILON, DELTA, 1)
    served = []
    for counts in ([1] * 50, [10**6] * 50, list(range(1, 51)), [len(plan.probabilities) - 1] * 50):
        source = seeded("optimal-work")
        plan.select(np.array(counts, dtype=np.int64), source)
        served.append(source.bytes_served)
    assert served == [16 * 50] * 4
