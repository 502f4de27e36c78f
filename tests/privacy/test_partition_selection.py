"""Exact privacy of partition selection on one key (Laplace thresholding and the optimal rule).

A key held by ``n`` persons (``n = 0``: the key is absent, nothing is released)
has neighbour ``n + 1``; a key's count of cell sensitivity ``s`` (its rows, at
most ``s = max_rows`` per person) has neighbours ``c + j``, ``1 <= j <= s``
(``c = 0``: a key only the added person holds, ``1 <= c' <= s``). For every output set ``S`` the per-key guarantee is
``P[S | D] <= e^e P[S | D'] + d`` with ``(e, d) = (epsilon/k, delta/k)``,
both directions, checked here for ``n`` in 0..60 by rigorous interval
arithmetic written independently of the module (``e^e`` is irrational, so a
strict inequality is decided at some precision; rational sides are compared
as Fractions). For Laplace thresholding the outputs are "dropped" and
"released with noisy count c" (c >= tau): the count terms are compared
through their exponents of ``q`` (``P[c | n] = C q**|c - n|``), exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest

from securedp import ChaChaSource
from securedp.hazmat.exact.interval import Interval
from securedp.mechanisms.partition_selection import laplace_threshold, optimal_selection

CASES = [(1, "1e-9", 1), (1, "1e-9", 3), ("0.5", "1/1024", 1), ("2", "1/20", 2), ("0.1", "1e-6", 1)]
NS = range(61)
Bound = Callable[[int], Interval]


def at_most_zero(diff: Bound) -> bool:
    """Decide ``x <= 0`` for a real ``x`` bounded by ``diff(prec)``; an undecidable tie fails."""
    for prec in (128, 512, 2048, 8192):
        iv = diff(prec)
        if iv.hi <= 0:
            return True
        if iv.lo > 0:
            return False
    raise AssertionError("undecided comparison (an exact tie of an irrational bound?)")


def dp_holds(p_d: Bound, p_dp: Bound, e: Fraction, d: Fraction) -> bool:
    """``P[S | D] <= e^e P[S | D'] + d`` for probabilities given by bounds."""
    return at_most_zero(lambda prec: p_d(prec) - (Interval.exact(e, prec).exp() * p_dp(prec) + d))


def rational(p: Fraction) -> Bound:
    return lambda prec: Interval.exact(p, prec)


@pytest.mark.parametrize("epsilon, delta, k", CASES)
def test_optimal_rule_is_exactly_dp_per_key(epsilon, delta, k) -> None:
    plan = optimal_selection(epsilon, delta, k)
    e, d = plan.epsilon / k, plan.delta / k
    for n in NS:
        for a, b in ((n, n + 1), (n + 1, n)):
            pa, pb = plan.probability(a), plan.probability(b)
            assert pa.denominator & (pa.denominator - 1) == 0 and pa.denominator <= 2**96
            for ours, theirs in ((pa, pb), (1 - pa, 1 - pb)):  # released, dropped
                if theirs == 0:
                    assert ours <= d, (a, b)
                else:
                    assert dp_holds(rational(ours), rational(theirs), e, d), (a, b)
        assert plan.probability(n) <= plan.probability(n + 1)


def tail(t: int, x: Fraction) -> Bound:
    """P(Z >= t) for Z discrete Laplace with q = exp(-x): q**t/(1+q) for t >= 0, else 1 - P(Z >= 1 - t)."""
    def bound(prec: int) -> Interval:
        q = (-Interval.exact(x, prec)).exp()
        return q**t / (q + 1) if t >= 0 else 1 - q ** (1 - t) / (q + 1)
    return bound


def released(n: int, tau: int, x: Fraction) -> Bound:
    """P[released | n persons] (n = 0: the key is absent, never released)."""
    return rational(Fraction(0)) if n == 0 else tail(tau - n, x)


def dropped(n: int, tau: int, x: Fraction) -> Bound:
    rel = released(n, tau, x)
    return lambda prec: 1 - rel(prec)


def check_laplace_pair(n: int, m: int, tau: int, e: Fraction, d: Fraction, s: int = 1) -> None:
    """Key count ``n`` (dataset D) against ``m`` (neighbour D'), noise ``q = exp(-e / s)``: every output set
    obeys (e, d)."""
    x = e / s
    assert dp_holds(released(n, tau, x), released(m, tau, x), e, d)
    assert dp_holds(dropped(n, tau, x), dropped(m, tau, x), e, d)
    if n >= 1 and m >= 1:
        # P[count c | n] = C q**|c - n| for c >= tau and e^e = q**-s exactly, so a count's excess
        # P[c | n] - e^e P[c | m] is <= 0 iff |c - n| >= |c - m| - s. Beyond c = max(n, m) the
        # difference of exponents is constant: this range covers every count. The worst set is
        # then {dropped} or nothing, both checked above.
        for c in range(tau, max(n, m, tau) + 2):
            assert abs(c - n) >= abs(c - m) - s
    elif m == 0:
        # No count is possible under D': the worst set is every count (excess P[released | n]),
        # plus dropped only if its excess is positive (P[dropped | n] <= 1 < e^e: it is not).
        assert at_most_zero(lambda prec: released(n, tau, x)(prec) - d)


@pytest.mark.parametrize("epsilon, delta, k", CASES)
def test_laplace_thresholding_is_exactly_dp_per_key(epsilon, delta, k) -> None:
    plan = laplace_threshold(epsilon, delta, k)
    e, d = plan.epsilon / k, plan.delta / k
    for n in NS:
        check_laplace_pair(n, n + 1, plan.threshold, e, d)
        check_laplace_pair(n + 1, n, plan.threshold, e, d)


@pytest.mark.parametrize("epsilon, delta, k", CASES)
def test_threshold_is_minimal(epsilon, delta, k) -> None:
    plan = laplace_threshold(epsilon, delta, k)
    e, d = plan.epsilon / k, plan.delta / k
    def excess(t: int) -> Bound:
        return lambda prec: tail(t, e)(prec) - d
    assert at_most_zero(excess(plan.threshold - 1))
    if plan.threshold > 1:
        assert not at_most_zero(excess(plan.threshold - 2))


SENSITIVE = [(1, "1e-9", 1, 2), ("1/2", "1/1024", 1, 3), (2, "1/20", 2, 2), (1, "1e-6", 2, 4), (1, "1e-6", 2, 1)]


@pytest.mark.parametrize("epsilon, delta, k, s", SENSITIVE)
def test_thresholding_a_count_of_sensitivity_s_is_exactly_dp_per_key(epsilon, delta, k, s) -> None:
    plan = laplace_threshold(epsilon, delta, k, s)
    assert plan.scale == Fraction(k * s) / plan.epsilon and plan.sensitivity == s
    assert plan.delta_per_key == plan.delta_spent / k <= plan.delta / k  # the delta the threshold proves
    e, d = plan.epsilon / k, plan.delta_spent / k  # exactly DP at the smaller delta it charges
    for c in range(41):
        for j in range(1, s + 1):
            check_laplace_pair(c, c + j, plan.threshold, e, d, s)
            check_laplace_pair(c + j, c, plan.threshold, e, d, s)


@pytest.mark.parametrize("epsilon, delta, k, s", SENSITIVE)
def test_the_threshold_of_a_count_of_sensitivity_s_is_minimal(epsilon, delta, k, s) -> None:
    """``P(Z >= tau - s) <= delta / k``: a key one person holds, at most ``s`` rows, is bounded; one less fails."""
    plan = laplace_threshold(epsilon, delta, k, s)
    x, d = plan.epsilon / (k * s), plan.delta / k
    assert plan.threshold >= s
    assert at_most_zero(lambda prec: tail(plan.threshold - s, x)(prec) - d)
    if plan.threshold > s:
        assert not at_most_zero(lambda prec: tail(plan.threshold - s - 1, x)(prec) - d)


def test_a_threshold_of_a_count_of_rows_is_larger() -> None:
    """docs/benchmarks.md: epsilon 1, delta 1e-6, k = 2; persons (s = 1) threshold at 30 (as OpenDP's count);
    rows at most 4 per person: scale 8, threshold 4 + 112."""
    assert laplace_threshold(1, "1e-6", 2).threshold == 30
    assert laplace_threshold(1, "1e-6", 2, 1) is laplace_threshold(1, "1e-6", 2)  # cached, one plan
    assert laplace_threshold(1, "1e-6", 2, 4).threshold == 116


@pytest.mark.parametrize("sensitivity, error", [(0, ValueError), (True, TypeError), ("1.5", ValueError),
                                                (-2, ValueError)])
def test_a_bad_sensitivity_is_refused(sensitivity, error) -> None:
    with pytest.raises(error):
        laplace_threshold(1, "1e-9", 1, sensitivity)


def test_reference_points() -> None:
    assert laplace_threshold(1, "1e-9", 1).threshold == 22
    plan = optimal_selection(1, "1e-9", 1)
    assert plan.probability(20) < Fraction(1, 2) <= plan.probability(21)
    assert plan.probability(40) < 1 == plan.probability(41)
    assert plan.probability(0) == 0 and plan.probability(10**9) == 1


def test_seeded_selection_replays() -> None:
    counts = np.arange(1, 2000) % 70 + 1
    for plan in (laplace_threshold(1, "1e-9", 3), optimal_selection(1, "1e-9", 3)):
        a = plan.select(counts, ChaChaSource(bytes(32)))
        b = plan.select(counts, ChaChaSource(bytes(32)))
        ka = a if isinstance(a, np.ndarray) else a.keep
        kb = b if isinstance(b, np.ndarray) else b.keep
        assert np.array_equal(ka, kb) and 0 < ka.sum() < len(counts)


@pytest.mark.parametrize(
    "epsilon, delta, k, error",
    [(0, "1e-9", 1, ValueError), (1, 0, 1, ValueError), (1, 1, 1, ValueError), (1, "-1e-9", 1, ValueError),
     (1, "1e-9", 0, ValueError), (1, "1e-9", True, TypeError), (1, "1e-9", "1.5", ValueError),
     (1, None, 1, TypeError)],
)
def test_bad_parameters_are_refused(epsilon, delta, k, error) -> None:
    for build in (laplace_threshold, optimal_selection):
        with pytest.raises(error):
            build(epsilon, delta, k)


def test_bad_counts_are_refused() -> None:
    plan = optimal_selection(1, "1e-9", 1)
    with pytest.raises(ValueError, match="at least one person"):
        plan.select(np.array([3, 0]))
    with pytest.raises(TypeError):
        plan.select(np.array([1.5]))
