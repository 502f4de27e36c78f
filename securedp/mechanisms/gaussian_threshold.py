"""Gaussian thresholding: the private keys of a table priced in ``rho`` (zCDP), with a ``delta``.

**Mechanism.** After per-person bounding every person holds at most
``k = max_groups`` keys. A key's exact count ``c`` has cell sensitivity ``s``
(1 for its distinct persons, ``m = max_rows`` for its kept rows), and a key
that only one person holds has ``1 <= c <= s``. Each key gets ``c + Z`` with
``Z`` discrete Gaussian of variance parameter ``sigma**2`` (``P(Z = z)``
proportional to ``w(z) = exp(-z**2 / (2 sigma**2))``, drawn exactly by
:func:`~securedp.hazmat.samplers.discrete_gaussian`); the key is released
iff ``c + Z >= tau``, and then ``c + Z`` is released too, at no extra cost.
The plan takes ``sigma**2 = k s**2 / (2 rho)``, an exact rational: the law
``Noise.of(s, Cost.of(rho=rho), k)`` of :mod:`securedp.privacy.noise`, the
very law of a count released at ``rho``, so a table that releases the count
draws its noise once, thresholds it and releases the same noisy value (which
is then at least ``tau``: see the bias note of
:mod:`securedp.mechanisms.partition_selection`).

**Privacy: delta-approximate rho-zCDP** (Bun & Steinke 2016, "Concentrated
differential privacy", Def. 8.1: events ``E``, ``E'`` of probability at least
``1 - delta`` under the two neighbours such that the conditioned outputs obey
the ``rho``-zCDP Renyi bounds both ways). Let ``D'`` be ``D`` with one more
person (bounding chooses each person's keys and rows from that person's rows
alone, so nobody else's kept rows change). The keys both hold have counts
that differ by at most ``s`` on at most ``k`` keys: L2 sensitivity
``sqrt(k) s``, so their vector of noisy counts is ``k s**2 / (2 sigma**2) =
rho``-zCDP (Canonne, Kamath & Steinke 2020, Thm. 14), and thresholding them
is post-processing. A key only the added person holds has ``1 <= c <= s`` in
``D'`` and is released with probability ``P(Z >= tau - c) <= P(Z >= tau -
s)``; there are at most ``k`` of them, so the event ``E'`` that none is
released has ``P(E') >= 1 - k P(Z >= tau - s) >= 1 - delta``. Their noise is
independent of the shared keys' noise, so given ``E'`` the output under
``D'`` is the shared keys' thresholded noisy counts, as under ``D`` (with
``E`` the sure event): the definition holds.

**Tail bounds.** With ``S(t) = sum_{z >= t} w(z)`` and ``sum_z w(z) =
1 + 2 S(1)``, ``P(Z >= t) = S(t) / (1 + 2 S(1))`` for integers ``t >= 0``.
:func:`weight_tail` encloses ``S(t)``: ``L`` terms summed with MPFR rounding
down (lower bound) and then up (upper bound), each term from the last by the
exact recurrence ``w(z + 1) = w(z) r(z)``, ``r(z) = exp(-(2z + 1) / (2
sigma**2))``, ``r(z + 1) = r(z) exp(-1 / sigma**2)`` (positive factors, so
products of bounds rounded one way bound the true products that way); above
``M = t + L`` the geometric bound ``S(M) <= w(M) / (1 - r(M))`` holds because
``w(M + j) / w(M) = exp(-(2Mj + j**2) / (2 sigma**2)) <= r(M)**j`` (``j**2 >=
j``). ``L`` grows with the working precision, so the enclosure shrinks to the
true value. Then ``S_lo(t) / (1 + 2 S_hi(1)) <= P(Z >= t) <= S_hi(t) / (1 + 2
S_lo(1))`` (interval division).

**What is proven.** ``tau = s + t*`` with ``t*`` the smallest integer ``>= 0``
with ``k P(Z >= t*) <= delta``, found by doubling then bisection where every
comparison ``P(Z >= t) <= delta / k`` is decided exactly
(:func:`gaussian_tail_at_most`): ``P(Z >= tau - s) <= delta / k`` is proven
(the stated ``delta`` is an upper bound) and, when ``t* > 0``,
``P(Z >= tau - s - 1) > delta / k`` is proven (``tau`` is minimal). A release charges the smaller
``delta_spent``, ``k P(Z >= tau - s)`` rounded up, for which the proof above holds as well
(:mod:`securedp.mechanisms.threshold_delta`). Unlike the Laplace tail, ``P(Z >= t)`` is a ratio of
infinite series in the transcendental ``exp(-1 / (2 sigma**2))``, and no
theorem known to us rules out its equality with the rational ``delta / k``:
a comparison the enclosures cannot settle by ``MAX_PRECISION`` bits raises
``ArithmeticError`` (never a wrong threshold). Reference: ``rho = 1/2``,
``delta = 1e-9``, ``k = 1`` (``sigma**2 = 1``) gives ``tau = 8``.

The enclosures cost ``O(sigma)`` terms, so ``sigma**2`` is capped at
``MAX_VARIANCE``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import gmpy2

from securedp.hazmat.bits.default import resolve_source
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.interval import Interval, rounding_context
from securedp.hazmat.exact.search import least_holding
from securedp.mechanisms.partition_selection import (
    ThresholdSelection,
    check_parameters,
    check_sensitivity,
    decide,
    noisy_counts,
)
from securedp.mechanisms.threshold_delta import charged_delta
from securedp.privacy.noise import Law, Noise

MAX_VARIANCE = Fraction(1 << 24)
"""Largest ``sigma**2 = k s**2 / (2 rho)`` (``sigma = 4096``): the tail enclosures sum ``O(sigma)`` terms."""
MAX_PRECISION = 1 << 12
"""Working precision (bits) past which an undecided tail comparison raises ``ArithmeticError``."""


def _exp_neg(x: Fraction) -> Any:
    """``exp(-x)`` rounded in the current context's direction (the conversion of ``-x`` rounds the same way,
    and ``exp`` is increasing, so the result is a bound in that direction)."""
    return gmpy2.exp(gmpy2.mpfr(gmpy2.mpq(-x.numerator, x.denominator)))


def _partial_sum(t: int, a: Fraction, prec: int, rounding: Any, terms: int | None) -> tuple[Any, Any, Any, int]:
    """``sum_{t <= z < t + L} w(z)``, ``w(t + L)`` and ``r(t + L)`` rounded in direction ``rounding``, and ``L``.

    ``w(z) = exp(-a z**2)``. With ``terms=None``, ``L`` is the first count whose geometric tail bound is
    below ``2**-(prec/2)`` of the sum, or whose term no longer shrinks (rounded up, a term below the least
    positive number stays that number: the tail of a variance of ``10**-6`` at ``t = 10**4`` is
    ``exp(-10**14)``, and the loop never ended); a stopping rule only: any ``L`` gives valid bounds.
    """
    with rounding_context(prec, rounding):
        w, r, c = _exp_neg(a * t * t), _exp_neg(a * (2 * t + 1)), _exp_neg(2 * a)
        total, count = gmpy2.mpfr(0), 0
        while count != terms:
            if terms is None and gmpy2.mul_2exp(w, prec // 2) <= total * (1 - r):
                break
            shrunk = w * r
            if terms is None and count and shrunk >= w:
                break
            total, w, r, count = total + w, shrunk, r * c, count + 1
        return total, w, r, count


@functools.lru_cache(maxsize=256)
def weight_tail(t: int, variance: Fraction, prec: int) -> Interval:
    """An enclosure of ``S(t) = sum_{z >= t} exp(-z**2 / (2 variance))`` for an integer ``t >= 0``."""
    if t < 0:
        raise ValueError("weight_tail needs t >= 0")
    a = 1 / (2 * variance)
    high, w, r, terms = _partial_sum(t, a, prec, gmpy2.RoundUp, None)
    with rounding_context(prec, gmpy2.RoundUp):
        gap = -(r - 1)  # r - 1 rounded up, negated exactly: a lower bound of 1 - r(M) > 0
        high = high + w / gap
    low = _partial_sum(t, a, prec, gmpy2.RoundDown, terms)[0]
    return Interval(low, high, prec)


def gaussian_tail(t: int, variance: Fraction, prec: int) -> Interval:
    """An enclosure of ``P(Z >= t)`` for ``Z`` discrete Gaussian of ``variance``, integer ``t >= 0``."""
    return weight_tail(t, variance, prec) / (1 + 2 * weight_tail(1, variance, prec))


def gaussian_tail_at_most(t: int, variance: Fraction, bound: Fraction) -> bool:
    """Exactly ``P(Z >= t) <= bound`` (``ArithmeticError`` if undecided by ``MAX_PRECISION`` bits)."""
    return decide(lambda prec: gaussian_tail(t, variance, prec) - bound,
                  f"P(Z >= {t}) <= {bound} at variance {variance}", MAX_PRECISION)


@dataclass(frozen=True)
class GaussianThreshold:
    """Plan of Gaussian thresholding for one ``(rho, delta, max_groups)`` and cell ``sensitivity`` (see the
    module)."""

    rho: Fraction
    delta: Fraction
    max_groups: int
    variance: Fraction
    """``sigma**2 = k s**2 / (2 rho)`` of the discrete Gaussian noise on each key's count."""
    threshold: int
    sensitivity: int = 1
    """``s``: the most one person changes a key's count (1 for distinct persons, ``max_rows`` for rows)."""

    @property
    def noise(self) -> Noise:
        """The law of each key's noise: discrete Gaussian of variance ``k s**2 / (2 rho)`` (a count's, at ``rho``)."""
        return Noise(Law.GAUSSIAN, self.sensitivity, self.rho, self.max_groups)

    @property
    def delta_spent(self) -> Fraction:
        """The ``delta`` the threshold proves, ``k P(Z >= tau - s)`` rounded up, at most ``delta``
        (:func:`~securedp.mechanisms.threshold_delta.charged_delta`): what a release charges."""
        return charged_delta(self.delta, self.max_groups,
                             gaussian_tail(self.threshold - self.sensitivity, self.variance, 256))

    @property
    def delta_per_key(self) -> Fraction:
        """``delta_spent / k``: the proven bound on the probability that a key only one person holds is released."""
        return self.delta_spent / self.max_groups

    def select(self, persons: Any, rng: RandomSource | None = None) -> ThresholdSelection:
        """Noisy counts ``c + Z`` of the keys with counts ``c = persons[i] >= 1``, kept iff ``>= tau``."""
        return noisy_counts(persons, self.noise, self.threshold, resolve_source(rng))


@functools.lru_cache(maxsize=64)
def _gaussian_plan(rho: Fraction, dlt: Fraction, k: int, s: int) -> GaussianThreshold:
    variance = Fraction(k * s * s) / (2 * rho)
    if variance > MAX_VARIANCE:
        raise ValueError(f"Gaussian thresholding needs sigma**2 = max_groups * s**2 / (2 rho) <= {MAX_VARIANCE}, "
                         f"got {variance}: give the thresholded count more rho or lower max_groups (or max_rows)")
    per_key = dlt / k

    def fits(t: int) -> bool:
        return gaussian_tail_at_most(t, variance, per_key)

    least = least_holding(fits, 0)  # P(Z >= t) decreases in t: fits is monotone, and holds for some t
    assert least is not None  # no limit: the search ends where the tail bound holds
    plan = GaussianThreshold(rho, dlt, k, variance, s + least, s)
    assert plan.noise.parameter == variance  # one law: the count's
    return plan


def gaussian_threshold(rho: Any, delta: Any, max_groups: Any = 1, sensitivity: Any = 1) -> GaussianThreshold:
    """The (cached) plan of Gaussian thresholding of a count of cell ``sensitivity`` (1: distinct persons); its
    ``threshold`` is proven sufficient and minimal."""
    return _gaussian_plan(*check_parameters(rho, delta, max_groups, "rho"), check_sensitivity(sensitivity))
