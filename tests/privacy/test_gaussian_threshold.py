"""Gaussian thresholding (rho tables with private keys): its tail enclosure, threshold and privacy map.

Every check here recomputes the discrete-Gaussian law independently of the
module: each weight ``exp(-z**2 / (2 sigma**2))`` evaluated on its own (no
recurrence) by MPFR at ``BITS`` bits, summed over ``|z| <= t + 60 sigma + 60``
(the rest is below ``exp(-1800)`` of the sum). Its error is below ``2**-900``
relative, far below every margin asserted, so a comparison with it decides
as an exact one would.
"""

from __future__ import annotations

from fractions import Fraction

import gmpy2
import pytest

from securedp.hazmat.exact.interval import Interval
from securedp.mechanisms.gaussian_threshold import MAX_VARIANCE, gaussian_tail, gaussian_threshold, weight_tail

BITS = 1024
VARIANCES = [Fraction(1, 200), Fraction(1, 2), Fraction(1), Fraction(10), Fraction(500), Fraction(4000)]
CASES = [("1/2", "1e-9", 1), (1, "1e-9", 1), ("1/20", "1/20", 1), ("1/10", "1e-6", 3), ("0.01", "1e-9", 10),
         (100, "1e-9", 1), (1, "9/10", 1), ("1/200", "1/20", 1)]


def weights(variance: Fraction, t: int) -> tuple[gmpy2.mpfr, gmpy2.mpfr]:
    """``(sum_{z >= t} w(z), sum_z w(z))`` by direct summation at ``BITS`` bits."""
    sigma = int(gmpy2.isqrt(int(variance) + 1)) + 1
    top = abs(t) + 60 * sigma + 60
    with gmpy2.context(precision=BITS):
        a = gmpy2.mpq(variance.denominator, 2 * variance.numerator)
        w = [gmpy2.exp(-a * z * z) for z in range(top + 1)]
        total = w[0] + 2 * gmpy2.fsum(w[1:])
        tail = gmpy2.fsum(w[t:]) if t >= 0 else total - gmpy2.fsum(w[1 - t:])
    return tail, total


def direct_tail(variance: Fraction, t: int) -> gmpy2.mpfr:
    """``P(Z >= t)`` by direct summation."""
    tail, total = weights(variance, t)
    with gmpy2.context(precision=BITS):
        return tail / total


def encloses(iv: Interval, exact: gmpy2.mpfr, tightness: int = 40) -> bool:
    """``iv`` contains ``exact`` and is narrower than ``2**-tightness`` of it."""
    with gmpy2.context(precision=BITS):
        return bool(iv.lo <= exact <= iv.hi and iv.hi - iv.lo <= exact * gmpy2.mpfr(2) ** -tightness)


def sides(variance: Fraction) -> list[int]:
    sigma = int(gmpy2.isqrt(int(variance))) + 1
    return sorted({0, 1, 2, sigma, 3 * sigma, 6 * sigma, 10 * sigma + 3})


@pytest.mark.parametrize("variance", VARIANCES)
def test_tail_enclosure_contains_the_direct_sum_and_is_tight(variance: Fraction) -> None:
    for t in sides(variance):
        exact = direct_tail(variance, t)
        for prec in (128, 256):
            assert encloses(gaussian_tail(t, variance, prec), exact), (variance, t, prec)
        assert encloses(weight_tail(t, variance, 256), weights(variance, t)[0], 100), (variance, t)


@pytest.mark.parametrize("variance", [Fraction(1, 2), Fraction(10), Fraction(500)])
def test_the_enclosure_check_rejects_bounds_off_by_a_factor(variance: Fraction) -> None:
    """Controls: the same check fails for an enclosure scaled by 1 + 2**-30, for the wrong normaliser
    ``1 + S(1)`` and for a tail cut off without its geometric bound."""
    t = sides(variance)[3]
    exact = direct_tail(variance, t)
    iv = gaussian_tail(t, variance, 128)
    factor = Interval.exact(1 + Fraction(1, 2**30), 128)
    assert not encloses(iv * factor, exact) and not encloses(iv / factor, exact)
    wrong_normaliser = weight_tail(t, variance, 128) / (1 + weight_tail(1, variance, 128))
    assert not encloses(wrong_normaliser, exact)
    cut = weight_tail(t, variance, 128) - weight_tail(t + 1 + int(gmpy2.isqrt(int(variance))), variance, 128)
    assert not encloses(cut / (1 + 2 * weight_tail(1, variance, 128)), exact)


def delta_of(plan_variance: Fraction, k: int, t: int) -> gmpy2.mpfr:
    """``k P(Z >= t)``: the probability bound of releasing a key only the added person holds."""
    with gmpy2.context(precision=BITS):
        return k * direct_tail(plan_variance, t)


def proven_minimal(variance: Fraction, k: int, delta: Fraction, tau: int) -> bool:
    """``tau`` is the least integer >= 1 with ``k P(Z >= tau - 1) <= delta`` (margins far above the error)."""
    d = gmpy2.mpq(delta.numerator, delta.denominator)
    with gmpy2.context(precision=BITS):
        margin = d * gmpy2.mpfr(2) ** -800
        fits = delta_of(variance, k, tau - 1) <= d - margin
        tighter = tau == 1 or delta_of(variance, k, tau - 2) > d + margin
    return bool(fits and tighter)


@pytest.mark.parametrize("rho, delta, k", CASES)
def test_threshold_is_sufficient_and_minimal(rho, delta, k) -> None:
    plan = gaussian_threshold(rho, delta, k)
    assert plan.variance == Fraction(k) / (2 * plan.rho)
    assert plan.threshold >= 1
    assert proven_minimal(plan.variance, k, plan.delta, plan.threshold)
    # controls: one more or one less is not the minimal sufficient threshold
    assert not proven_minimal(plan.variance, k, plan.delta, plan.threshold + 1)
    assert plan.threshold == 1 or not proven_minimal(plan.variance, k, plan.delta, plan.threshold - 1)


def renyi(p: list[gmpy2.mpfr], q: list[gmpy2.mpfr], alpha: int) -> gmpy2.mpfr:
    with gmpy2.context(precision=BITS):
        return gmpy2.log(gmpy2.fsum([a**alpha * b ** (1 - alpha) for a, b in zip(p, q, strict=True)])) / (alpha - 1)


def outputs(variance: Fraction, n: int, tau: int, top: int) -> list[gmpy2.mpfr]:
    """Law of one key's output with ``n >= 1`` persons: dropped, then released with count ``c`` for
    ``tau <= c < top`` (the rest of the mass, beyond ``top``, is below ``exp(-1800)``)."""
    tail, total = weights(variance, tau - n)
    with gmpy2.context(precision=BITS):
        a = gmpy2.mpq(variance.denominator, 2 * variance.numerator)
        counts = [gmpy2.exp(-a * (c - n) ** 2) / total for c in range(tau, top)]
        return [1 - tail / total, *counts]


@pytest.mark.parametrize("rho, delta, k", [("1/2", "1e-9", 1), ("1/20", "1/20", 1), ("1/10", "1e-6", 3)])
def test_a_key_both_neighbours_hold_costs_at_most_rho_over_k(rho, delta, k) -> None:
    """Renyi divergences of one key's output (dropped, or released with its noisy count) at ``n`` and
    ``n + 1`` persons, both ways: at most ``alpha rho / k`` (the discrete Gaussian's own, ``alpha / (2
    sigma**2)``, is an upper bound by post-processing); ``k`` such keys give ``rho``."""
    plan = gaussian_threshold(rho, delta, k)
    sigma = int(gmpy2.isqrt(int(plan.variance))) + 1
    for n in range(1, plan.threshold + 4 * sigma):
        top = max(n, plan.threshold) + 60 * sigma + 60
        p, q = outputs(plan.variance, n, plan.threshold, top), outputs(plan.variance, n + 1, plan.threshold, top)
        for alpha in (2, 5, 20):
            with gmpy2.context(precision=BITS):
                bound = gmpy2.mpq(alpha * plan.rho.numerator, k * plan.rho.denominator) * (1 + gmpy2.mpfr(2) ** -700)
            assert renyi(p, q, alpha) <= bound and renyi(q, p, alpha) <= bound, (n, alpha)


def test_reference_points() -> None:
    plan = gaussian_threshold("1/2", "1e-9", 1)
    assert (plan.variance, plan.threshold) == (1, 8)
    assert gaussian_threshold(1, "9/10", 1).threshold == 1  # P(Z >= 0) < 9/10 already
    assert gaussian_threshold("1/2", "1e-9", 1) is plan  # cached


@pytest.mark.parametrize(
    "rho, delta, k, error",
    [(0, "1e-9", 1, ValueError), (1, 0, 1, ValueError), (1, 1, 1, ValueError), (1, "1.5", 1, ValueError),
     (1, "1e-9", 0, ValueError), (1, "1e-9", True, TypeError), (1, None, 1, TypeError),
     (Fraction(1, 2 * MAX_VARIANCE) / 2, "1e-9", 1, ValueError)],
)
def test_bad_parameters_are_refused(rho, delta, k, error) -> None:
    with pytest.raises(error):
        gaussian_threshold(rho, delta, k)


@pytest.mark.parametrize("t", [1, 10])
def test_the_tails_of_a_tiny_variance_are_enclosed(t: int) -> None:
    """The tails of the variance of rho 10**6 (``exp(-10**6)``, ``exp(-10**8)``): valid and tight enclosures (the
    tail beyond the least positive number is checked in a subprocess below: the old code never ended there)."""
    variance = Fraction(1, 2 * 10**6)
    tail = weight_tail(t, variance, 128)
    assert 0 <= tail.lo <= tail.hi and tail.hi > 0
    if t == 1:  # exp(-10**6) (and exp(-4 * 10**6) after it ...) is representable: the enclosure is tight
        with gmpy2.context(precision=256, round=gmpy2.RoundDown):
            below = gmpy2.exp(gmpy2.mpfr(-10**6))  # S(1) >= its first term
        with gmpy2.context(precision=256, round=gmpy2.RoundUp):
            above = gmpy2.exp(gmpy2.mpfr(-10**6)) * (1 + gmpy2.mpfr(2) ** -100)  # the rest is below 2**-100 of it
        assert tail.lo <= above and below <= tail.hi and tail.hi - tail.lo <= below * gmpy2.mpfr(2) ** -60


def test_a_table_at_a_huge_rho_is_planned_and_released_at_once() -> None:
    """At rho 10**6 the tail at 10**4 is about exp(-10**14): rounded up, each term stayed the least positive number
    and the sum never ended (a fourth review: a table at rho 10**6 hung while it was planned); and the plan's
    release probabilities (tails of exp(-10**12)) are widened outward below 2**-4096 instead of turned into
    rationals of 10**12 bits. Run in a subprocess: the old code hung."""
    import subprocess
    import sys

    code = ("import securedp\n"
            "from fractions import Fraction\n"
            "from securedp.mechanisms.gaussian_threshold import weight_tail\n"
            "tail = weight_tail(10_000, Fraction(1, 2 * 10**6), 128)\n"  # exp(-10**14): below every mpfr number
            "assert 0 <= tail.lo <= tail.hi and tail.hi > 0\n"
            "from securedp import ChaChaSource\n"
            "from securedp.tables import Count\n"
            "data = {'g': [f'k{i % 20}' for i in range(2000)], 'pid': list(range(2000))}\n"
            "r = securedp.table(data, group_by=['g'], id_column='pid', aggregations=[Count()], rho=10**6, "
            "delta='1e-6', rng=ChaChaSource(bytes(32)))\n"
            "print(sorted(r.frame['count'].to_list()))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == str([100] * 20)  # noise of variance 1/(2 * 10**6) is 0 but with tiny probability
