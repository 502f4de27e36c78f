"""Issue 28.1: a mean's and a variance's half-width in the column's units, stated at a row count.

The bounds (:func:`securedp.mechanisms.mean.mean_error`, :func:`securedp.mechanisms.variance.variance_error`)
are checked exhaustively on small cases against the post-processing the release runs (every data set of a
few values on a small lattice, every noise within the stated half-widths), and end to end: seeded
releases at a known row count fall outside the stated half-width no more often than ``alpha`` allows.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from scipy.stats import binom

import securedp
from securedp.mechanisms.mean import mean_error, mean_units
from securedp.mechanisms.moments import centre_of_bounds, ratio_error
from securedp.mechanisms.variance import variance_error, variance_units
from securedp.planning.budget import least_budget, stated
from securedp.tables import Count, Mean, Variance


def _datasets(n: int, lo: int, hi: int) -> set[tuple[int, int]]:
    """Every ``(sum, sum of squares)`` of ``n`` integers in ``[lo, hi]``."""
    return {(sum(v), sum(x * x for x in v)) for v in itertools.combinations_with_replacement(range(lo, hi + 1), n)}


@pytest.mark.parametrize(("lo", "hi", "t_n", "t_s"), [(0, 6, 1, 3), (0, 7, 2, 5), (-3, 4, 1, 0), (2, 2, 1, 1)])
def test_the_mean_is_within_its_stated_error_for_every_data_and_noise_within_the_half_widths(
        lo: int, hi: int, t_n: int, t_s: int) -> None:
    c, half = centre_of_bounds(lo, hi)
    worst = Fraction(0)
    for n in range(1, 7):
        bound = mean_error(n, t_n, t_s, half, hi - lo)
        for total, _ in _datasets(n, lo, hi):
            truth = Fraction(total, n)
            for z_n, z_s in itertools.product(range(-t_n, t_n + 1), range(-t_s, t_s + 1)):
                released = mean_units([n + z_n], [total - c * n + z_s], c, lo, hi, t_n, t_s)[0][0]
                error = abs(released - truth)
                assert error <= bound, (n, total, z_n, z_s)
                worst = max(worst, error / bound if bound else Fraction(0))
    assert worst > Fraction(1, 2) or hi == lo  # the bound is not idly loose (nothing to err by when hi == lo)


@pytest.mark.parametrize(("lo", "hi", "t_n", "t_1", "t_2"), [(0, 4, 1, 2, 3), (0, 3, 1, 1, 4), (-2, 3, 2, 1, 1)])
def test_the_variance_is_within_its_stated_error_for_every_data_and_noise_within_the_half_widths(
        lo: int, hi: int, t_n: int, t_1: int, t_2: int) -> None:
    c, half = centre_of_bounds(lo, hi)
    for n in range(1, 6):
        bound = variance_error(n, t_n, t_1, t_2, half, hi - lo)
        for total, squares in _datasets(n, lo, hi):
            s1, s2 = total - c * n, squares - 2 * c * total + c * c * n  # centred, as Variance.exact_cells
            truth = Fraction(s2, n) - Fraction(s1, n) ** 2
            for z in itertools.product(range(-t_n, t_n + 1), range(-t_1, t_1 + 1), range(-t_2, t_2 + 1)):
                released = variance_units([n + z[0]], [s1 + z[1]], [s2 + z[2]], hi - lo)[0]
                assert abs(released - truth) <= bound, (n, total, squares, z)


def test_the_ratio_bound_is_attained() -> None:
    n, t_n, t_s, largest = 50, 7, 11, 9
    total = n * largest
    reached = abs(Fraction(total + t_s, n - t_n) - Fraction(total, n))
    assert ratio_error(n, t_n, t_s, largest) == reached
    assert ratio_error(t_n, t_n, t_s, largest) is None  # n - t_n < 1: nothing bounds the ratio


def test_the_stated_half_width_falls_with_the_count_and_is_in_the_column_units() -> None:
    prepared = securedp.prepare_mean(list(range(10)), bounds=(0, 1000), epsilon=1)
    at = prepared.value_halfwidth
    assert at is not None
    widths = [at(Fraction(1, 20), n) for n in (10, 100, 1000, 10_000)]
    assert widths[0] == 1000  # a handful of rows: the whole range
    assert widths == sorted(widths, reverse=True) and widths[-1] < widths[-2] < 1000
    assert securedp.prepare_sum([1], bounds=(0, 1), epsilon=1).value_halfwidth(Fraction(1, 20), 10) is None


@pytest.mark.parametrize("statistic", ["mean", "variance"])
def test_seeded_releases_at_a_known_count_fall_within_the_stated_half_width(statistic: str) -> None:
    """End to end: 300 seeded releases of 400 values, all at the lower bound (where the count's noise errs
    most); the stated half-width holds with probability at least 1 - alpha, so more misses than the binomial
    quantile at 1e-6 would show a wrong statement (a mean's 95th percentile error is about half of it)."""
    data = [0] * 400
    prepare = securedp.prepare_mean if statistic == "mean" else securedp.prepare_variance
    prepared = prepare(data, bounds=(0, 100), epsilon=2)
    alpha = Fraction(1, 20)
    width = prepared.value_halfwidth(alpha, len(data))
    assert width is not None and width < (1 if statistic == "mean" else 250)
    misses = sum(abs(prepared.execute(securedp.ChaChaSource(i.to_bytes(32, "big"))).value) > width
                 for i in range(300))
    assert misses <= binom.isf(1e-6, 300, float(alpha))


def test_a_target_on_a_mean_is_planned_at_the_stated_count() -> None:
    query = {"aggregations": [Count(), Mean("income", (0, 200_000))], "keys": ["a"], "group_by": ["g"]}
    found = least_budget({"income_mean": 2000}, cell_rows=10_000, most=10, **query)
    assert found.cell_rows == 10_000 and stated(found.plan, "income_mean", 10_000) <= 2000
    assert found.below is not None and stated(found.below, "income_mean", 10_000) > 2000
    fewer = least_budget({"income_mean": 2000}, cell_rows=1000, most=10, **query)
    assert fewer.amount > found.amount  # fewer rows, more noise to overcome
    assert stated(found.plan, "income_mean.count") == found.plan.outputs[1].halfwidths["count"]  # parts stay
    with pytest.raises(ValueError, match=r"income_mean\.count, income_mean\.centred_sum"):
        least_budget({"income_mean.bogus": 1}, **query)


def test_a_target_on_a_variance_is_planned_too() -> None:
    query = {"aggregations": [Variance("age", (0, 100))], "keys": ["a"], "group_by": ["g"]}
    found = least_budget({"age_variance": 50}, cell_rows=5000, most=10, **query)
    assert stated(found.plan, "age_variance", 5000) <= 50 < stated(found.below, "age_variance", 5000)
