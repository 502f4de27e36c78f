"""Private partition selection: which data-derived keys of a grouped table may be released.

After per-person bounding every person holds at most ``k = max_groups`` keys. A key is released only
through one of the rules below, each ``(epsilon, delta)``-DP for the whole set of keys; each is
computed once per ``(epsilon, delta, k)`` (and cell sensitivity) into a plan, then applied to any
number of keys. Tables priced in ``rho`` threshold a discrete Gaussian count instead
(:mod:`securedp.mechanisms.gaussian_threshold`, which shares :func:`decide`, :func:`check_parameters`,
:func:`noisy_counts` and :class:`ThresholdSelection` with this module).

**Laplace thresholding of a count.** A key's exact count ``c`` is an integer of *cell sensitivity*
``s``: one person changes it by at most ``s``, and a key that only one person holds has ``1 <= c <=
s``. For the distinct persons of a key ``s = 1``; for its kept rows ``s = m = max_rows``. ``Z`` is
discrete Laplace of scale ``k s / epsilon`` (exact,
:func:`~securedp.hazmat.samplers.discrete_laplace`): the law
``Noise.of(s, Cost.of(epsilon), k)`` of :mod:`securedp.privacy.noise`, the very law of a count
released at ``epsilon``, so a table that releases the count draws its noise once, thresholds it, and
releases the same noisy value. ``q = exp(-epsilon / (k s))``. A key is kept iff ``c + Z >= tau``, and
then ``c + Z`` is released with it at no extra cost. For ``t >= 0``, ``P(Z >= t) = q**t / (1 + q)``
(the geometric tail ``(1 - q)/(1 + q) * q**j`` summed over ``j >= t``). ``tau = s + t*`` with ``t*``
the least integer ``t >= 0`` with ``P(Z >= t) <= delta / k``, so a key only one person holds is
kept with probability ``P(Z >= tau - c) <= P(Z >= t*) <= delta / k``. ``t*`` is
``max(0, ceil((k s / epsilon) ln(k / (delta (1 + q)))))``, estimated with outward-rounded MPFR bounds
and then *checked exactly* at ``t*`` and ``t* - 1`` (:func:`laplace_tail_at_most`): the stated
``delta / k`` is a proven bound, and ``tau`` is proven minimal for it (at ``tau - 1`` a one-person key
with ``c = s`` is kept with probability above ``delta / k``; for ``s > 1`` a key with fewer rows is kept
less often).

*Theorem.* The released keys and their noisy counts are ``(epsilon, delta)``-DP for adding or
removing one person, for every ``delta >= k P(Z >= tau - s)``, so for the ``delta`` the plan states, and
for the smaller ``delta_spent`` it charges (:mod:`securedp.mechanisms.threshold_delta`).

*Proof.* Let ``D'`` be ``D`` with one more person ``x``. Bounding chooses each person's keys and rows
from that person's rows alone, so every other person's kept rows are the same in ``D`` and ``D'``.
Let ``K`` be the keys present in ``D`` (present in ``D'`` too) and ``N`` those present in ``D'`` only:
``x`` holds each of them, so ``|N| <= k`` and each has ``1 <= c <= s`` in ``D'``. Write ``T(.)`` for
the thresholded noisy counts of the keys ``K`` and ``E`` for the event that no key of ``N`` is kept in
``D'``. (a) The counts of ``K`` in ``D`` and ``D'`` differ by at most ``s`` on the at most ``k`` keys
``x`` holds: L1 distance ``<= k s``, so their noisy counts are ``epsilon``-DP (the ratio of the two
laws of ``c + Z`` is ``exp(epsilon |delta c| / (k s))``, multiplied over keys), and ``T`` is
post-processing: ``P[T(D) in A] <= e^epsilon P[T(D') in A]`` and back, for every set ``A``. (b) The
noises are independent, so ``E`` is independent of ``T(D')``, and ``P(not E) <= sum_{N} P(Z >= tau -
c) <= k P(Z >= tau - s) <= delta``. The output ``M(D)`` is ``T(D)`` (keys of ``N`` are absent from
``D``), and ``M(D')`` is ``T(D')`` on ``E``. For a set ``S`` of outputs let ``S0`` be those that hold
no key of ``N``. Then ``P[M(D') in S] <= P[T(D') in S0] + P(not E) <= e^epsilon P[T(D) in S0] + delta
= e^epsilon P[M(D) in S0] + delta``; and with ``y = P[M(D) in S] = P[T(D) in S0]``,
``P[M(D') in S] >= P[T(D') in S0] P(E) >= e^-epsilon y (1 - delta)``, so ``e^epsilon P[M(D') in S] +
delta >= y (1 - delta) + delta >= y``. Both directions hold. The same bound holds per key:
``(epsilon / k, delta / k)`` for a key of ``x`` alone (``tests/privacy`` checks it exactly).

*Bias of a released count.* A released value is the noisy count that passed the threshold, so it is
at least ``tau``: given that a key is kept, ``c + Z`` overstates ``c`` on average (much when ``c`` is
near or below ``tau``, negligibly when ``c >> tau``). Its stated interval ``c + Z -/+ t`` is the
count's own (:mod:`securedp.mechanisms.count`): it covers ``c`` with probability ``1 - alpha`` over the
noise, before selection; conditioned on a key being kept its coverage can be lower for counts near
the threshold.

**Optimal rule** (Desfontaines, Voss, Gipson & Mandayam 2022, "Differentially
private partition selection", PoPETs, Thm. 1). Per key ``(e, d) = (epsilon/k,
delta/k)``; ``pi(0) = 0`` and
``pi(n) = min(e^e pi(n-1) + d, 1 - e^-e (1 - pi(n-1) - d), 1)``; a key with
``n`` persons is released with probability ``pi(n)``. This module releases
with the rational ``p(n)``: ``p(0) = 0`` and ``p(n)`` the largest multiple of
``2**-96`` that is at most the recursion applied to ``p(n - 1)`` (lower MPFR
bound, rounded down; ``p(n) = 1`` exactly once ``p(n-1) + d >= 1``).

*Proof that p is (e, d)-DP per key.* Write ``m(x) = min(e^e x + d,
1 - e^-e (1 - x - d), 1)``; ``p(n) <= m(p(n-1))``. (i) Released:
``p(n) <= e^e p(n-1) + d``, the first term. (ii) Dropped:
``p(n) <= 1 - e^-e (1 - p(n-1) - d)`` rearranges to
``1 - p(n-1) <= e^e (1 - p(n)) + d``. (iii) ``m(x) >= x`` for ``x`` in [0, 1]
(each term is), so ``p(n) >= p(n-1)`` (``p(n-1)`` is itself a multiple of
``2**-96`` below ``m(p(n-1))``; the code takes the maximum), and the two
reverse inequalities ``p(n-1) <= e^e p(n) + d`` and
``1 - p(n) <= e^e (1 - p(n-1)) + d`` follow from monotonicity. The code
re-checks (i) and (ii) for every ``n`` with exact comparisons
(:func:`at_most_exp_affine`). Composition over the at most ``k`` keys a
person touches gives ``(epsilon, delta)``. ``p <= pi`` by induction (``m`` is
increasing), so the rule is at most a ``2**-96`` rounding below the optimum.

A release is one exact ``bernoulli(p(n))`` per key, drawn the same way for
every key whatever its count, so the time of the selection does not depend on
the counts: two 64-bit words per key, read as a uniform 96-bit integer ``U``
(the first word's 64 bits, then the high 32 bits of the second), and the key
is kept iff ``U < p(n) * 2**96`` (an integer, since ``p(n)`` is a multiple of
``2**-96``), compared in one vectorised pass; a key with ``p(n) = 1`` draws
and compares its words like the others. Reference: ``epsilon = 1``, ``delta = 1e-9``, ``k = 1`` gives
``tau = 22``; ``p(n) >= 1/2`` from ``n = 21`` and ``p(n) = 1`` from ``n = 41``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import gmpy2
import numpy as np

from securedp.hazmat.bits.default import resolve_source
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact import bounds
from securedp.hazmat.exact.interval import Interval, floor_scaled, rounding_context
from securedp.hazmat.exact.rational import positive_rational, to_int, to_rational
from securedp.hazmat.samplers.geometric import MAX_SCALE, scale_range_error
from securedp.mechanisms.threshold_delta import charged_delta
from securedp.privacy.noise import Law, Noise

GRID_BITS = 96
"""``p(n)`` is a multiple of ``2**-GRID_BITS``."""
MAX_TABLE = 1 << 16
"""Largest table of the optimal rule (its length grows like ``2 ln(k/delta) k / epsilon``)."""
_START_PREC = 128
_MAX_PREC = 1 << 20


def check_parameters(budget: Any, delta: Any, max_groups: Any, name: str = "epsilon") -> tuple[Fraction, Fraction, int]:
    """``(budget, delta, k)`` as exact numbers: ``budget > 0`` (``epsilon``, or ``rho`` for the Gaussian
    rule, named ``name``), ``0 < delta < 1``, integer ``k >= 1``."""
    eps = bounds.parameter(positive_rational(budget, name), name)
    dlt = bounds.parameter(to_rational(delta, "delta"), "delta")
    if not 0 < dlt < 1:
        raise ValueError(f"delta must lie strictly between 0 and 1 for partition selection, got {dlt}")
    if isinstance(max_groups, (bool, np.bool_)):
        raise TypeError("max_groups must be an integer, not a bool")
    k = to_int(max_groups, "max_groups")
    if k < 1:
        raise ValueError(f"max_groups must be >= 1, got {k}")
    return eps, dlt, bounds.count(k, "max_groups")


def decide(bound: Callable[[int], Interval], what: str, max_prec: int = _MAX_PREC) -> bool:
    """``True`` iff the real bounded by ``bound(prec)`` (an :class:`Interval`) is ``<= 0``.

    Precision doubles until the sign is known; a real the bounds cannot separate from 0 by
    ``max_prec`` bits raises ``ArithmeticError`` (never a guess). The callers here prove their real
    non-zero, so that happens only if ``max_prec`` is too small.
    """
    prec = _START_PREC
    while prec <= max_prec:
        iv = bound(prec)
        if iv.hi <= 0:
            return True
        if iv.lo > 0:
            return False
        prec *= 2
    raise ArithmeticError(f"cannot decide {what}")


def at_most_exp_affine(a: Fraction, x: Fraction, b: Fraction, c: Fraction) -> bool:
    """Exactly ``a <= exp(x) * b + c`` for rationals (``x != 0`` makes ``exp(x)`` irrational, so
    with ``b != 0`` the right side is irrational and interval bounds decide; else it is rational)."""
    if b == 0 or x == 0:
        return a <= b + c if x == 0 else a <= c
    return decide(lambda prec: a - (Interval.exact(x, prec).exp() * b + c), f"{a} <= exp({x}) {b} + {c}")


def laplace_tail_at_most(t: int, x: Fraction, bound: Fraction) -> bool:
    """Exactly ``q**t / (1 + q) <= bound`` with ``q = exp(-x)``, integer ``t >= 0``, rationals ``x, bound > 0``.

    Equivalent to ``q**t - bound (1 + q) <= 0``: a non-zero polynomial in ``q`` with rational
    coefficients (its constant term ``-bound`` is non-zero at ``t >= 1``; at ``t = 0`` its ``q`` term
    is), hence non-zero at the transcendental ``q`` (Lindemann), so interval bounds decide.
    """
    def gap(prec: int) -> Interval:
        q = (-Interval.exact(x, prec)).exp()
        return q**t - (q + 1) * bound
    return decide(gap, f"q**{t}/(1+q) <= {bound}")


def _tail_estimate(x: Fraction, bound: Fraction) -> int:
    """``max(0, ceil(X))`` for an upper bound of ``X = ln(1 / (bound (1 + q))) / x``, from MPFR
    rounded outwards (``q`` low, every operation rounded up; ``ln`` and ``1/y`` move the right way). Its
    precision grows with ``1 / x``: the estimate is about ``1 / x`` steps, and the walk that proves the threshold
    from it is as long as its error (at ``x = 2**-170``, ``2**47`` steps at 128 bits)."""
    prec = _START_PREC + max(0, x.denominator.bit_length() - x.numerator.bit_length())
    q_lo = (-Interval.exact(x, prec)).exp().lo
    with rounding_context(prec, gmpy2.RoundDown):
        denominator = gmpy2.mpq(bound.numerator, bound.denominator) * (1 + q_lo)
    with rounding_context(prec, gmpy2.RoundUp):
        high = gmpy2.log(1 / denominator) / gmpy2.mpq(x.numerator, x.denominator)
        return max(0, int(gmpy2.ceil(high)))


def check_sensitivity(sensitivity: Any) -> int:
    """The cell sensitivity ``s`` of a thresholded count: an integer ``>= 1``."""
    if isinstance(sensitivity, (bool, np.bool_)):
        raise TypeError("sensitivity must be an integer, not a bool")
    s = to_int(sensitivity, "sensitivity")
    if s < 1:
        raise ValueError(f"sensitivity must be >= 1, got {s}")
    return s


@dataclass(frozen=True)
class ThresholdSelection:
    """What thresholding (Laplace or Gaussian) released: ``keep[i]`` for key ``i``, and its noisy count ``noisy[i]``
    (meaningful, and releasable, only where ``keep[i]``)."""

    keep: np.ndarray
    noisy: np.ndarray


def noisy_counts(counts: Any, noise: Noise, threshold: int, source: RandomSource) -> ThresholdSelection:
    """``c + Z`` for each key's count ``c`` (one batch of ``noise`` from ``source``), kept iff ``>= threshold``.

    The sums are exact: int64 while every noise value lies within ``2**62`` (counts stay below ``2**61``),
    else Python integers.
    """
    n = person_counts(counts)
    z = np.asarray(noise.draw(source, len(n)))
    if len(n) == 0:
        noisy = n
    elif z.dtype.kind == "i" and int(z.min()) > -(1 << 62) and int(z.max()) < 1 << 62:
        noisy = n + z
    else:
        noisy = n.astype(object) + z.astype(object)
    return ThresholdSelection(keep=np.asarray(noisy >= threshold, dtype=bool), noisy=noisy)


@dataclass(frozen=True)
class LaplaceThreshold:
    """Plan of Laplace thresholding for one ``(epsilon, delta, max_groups)`` and cell ``sensitivity`` (see the
    module)."""

    epsilon: Fraction
    delta: Fraction
    max_groups: int
    threshold: int
    sensitivity: int = 1
    """``s``: the most one person changes a key's count (1 for distinct persons, ``max_rows`` for rows)."""

    @property
    def noise(self) -> Noise:
        """The law of each key's noise: discrete Laplace of scale ``k s / epsilon`` (a count's, at ``epsilon``)."""
        return Noise(Law.LAPLACE, self.sensitivity, self.epsilon, self.max_groups)

    @property
    def scale(self) -> Fraction:
        """Scale ``k s / epsilon`` of the discrete Laplace noise on each key's count."""
        return self.noise.parameter

    @property
    def delta_spent(self) -> Fraction:
        """The ``delta`` the threshold proves, ``k P(Z >= tau - s)`` rounded up, at most ``delta``
        (:func:`~securedp.mechanisms.threshold_delta.charged_delta`): what a release charges."""
        q = (-Interval.exact(self.epsilon / (self.max_groups * self.sensitivity), _START_PREC)).exp()
        return charged_delta(self.delta, self.max_groups, q ** (self.threshold - self.sensitivity) / (q + 1))

    @property
    def delta_per_key(self) -> Fraction:
        """``delta_spent / k``: the proven bound on the probability that a key only one person holds is released."""
        return self.delta_spent / self.max_groups

    def select(self, persons: Any, rng: RandomSource | None = None) -> ThresholdSelection:
        """Noisy counts ``c + Z`` of the keys with counts ``c = persons[i] >= 1``, kept iff ``>= tau``."""
        return noisy_counts(persons, self.noise, self.threshold, resolve_source(rng))


@functools.lru_cache(maxsize=64)
def _laplace_plan(eps: Fraction, dlt: Fraction, k: int, s: int) -> LaplaceThreshold:
    x, per_key = eps / (k * s), dlt / k
    if x * MAX_SCALE < 1:  # the noise could not be drawn: refused before its threshold is planned
        raise scale_range_error("the selection's noise scale max_groups * sensitivity / epsilon", 1 / x)
    # From the estimate, walk to the least t >= 0 with P(Z >= t) <= delta/k, every step an exact
    # decision; P(Z >= t) decreases in t, so the walk ends at the minimum, proven both ways.
    t = _tail_estimate(x, per_key)
    while t > 0 and laplace_tail_at_most(t - 1, x, per_key):
        t -= 1
    while not laplace_tail_at_most(t, x, per_key):
        t += 1
    return LaplaceThreshold(eps, dlt, k, s + t, s)


def laplace_threshold(epsilon: Any, delta: Any, max_groups: Any = 1, sensitivity: Any = 1) -> LaplaceThreshold:
    """The (cached) plan of Laplace thresholding of a count of cell ``sensitivity`` (1: distinct persons); its
    ``threshold`` is proven minimal and sufficient."""
    return _laplace_plan(*check_parameters(epsilon, delta, max_groups), check_sensitivity(sensitivity))


@dataclass(frozen=True)
class OptimalSelection:
    """Plan of the optimal rule: ``probabilities[n] = p(n)`` for ``n < len``, and ``p(n) = 1`` beyond."""

    epsilon: Fraction
    delta: Fraction
    max_groups: int
    probabilities: tuple[Fraction, ...]

    def probability(self, n: int) -> Fraction:
        """``p(n)``, the exact probability that a key with ``n`` persons is released."""
        return self.probabilities[n] if n < len(self.probabilities) else Fraction(1)

    def select(self, persons: Any, rng: RandomSource | None = None) -> np.ndarray:
        """``keep[i]`` drawn as ``bernoulli(p(persons[i]))``: the same two words and comparison for every key.

        Key ``i`` reads words ``2i`` and ``2i + 1`` of one batch (see the module docstring), so a seeded
        source replays and the work is the same whatever the counts (no key is skipped when ``p = 1``).
        """
        n = person_counts(persons)
        source = resolve_source(rng)
        high, low = self._thresholds
        index = np.minimum(n, len(self.probabilities))  # the last entry stands for p = 1
        words = source.words(2 * len(n)).reshape(-1, 2)
        u_high, u_low = words[:, 0], words[:, 1] >> np.uint64(32)
        t_high, t_low = high[index], low[index]
        return np.asarray((u_high < t_high) | ((u_high == t_high) & (u_low < t_low)), dtype=bool)

    @functools.cached_property
    def _thresholds(self) -> tuple[np.ndarray, np.ndarray]:
        """``p(n) * 2**96`` split into its high 64 and low 32 bits, for ``n < len`` and then ``p = 1``.

        ``p = 1`` is written as ``2**96 - 1`` with the comparison ``U <= 2**96 - 1``, i.e. the high part
        ``2**64 - 1`` and a low part of ``2**32`` that no 32-bit ``u_low`` reaches: always kept.
        """
        scaled = [p.numerator << (GRID_BITS - p.denominator.bit_length() + 1) for p in self.probabilities]
        assert all(Fraction(c, 1 << GRID_BITS) == p for c, p in zip(scaled, self.probabilities, strict=True))
        high = [c >> 32 for c in scaled] + [(1 << 64) - 1]
        low = [c & 0xFFFFFFFF for c in scaled] + [1 << 32]
        return np.array(high, dtype=np.uint64), np.array(low, dtype=np.uint64)


@functools.lru_cache(maxsize=64)
def _optimal_plan(eps: Fraction, dlt: Fraction, k: int) -> OptimalSelection:
    e, d = eps / k, dlt / k
    # p(n) <= e**e p(n-1) + d, so p(N) = 1 needs N >= ln(1 + e/d) / e: a table certain to pass MAX_TABLE is
    # refused at once (building it took minutes at epsilon/max_groups = 1e-6).
    with rounding_context(_START_PREC, gmpy2.RoundDown):
        least = gmpy2.log1p(gmpy2.mpq(e.numerator, e.denominator) / gmpy2.mpq(d.numerator, d.denominator))
        least = least / gmpy2.mpq(e.numerator, e.denominator) if least > 0 else least
    if least > MAX_TABLE:
        raise _too_small(e)
    one = 1 << GRID_BITS
    table = [Fraction(0)]
    while table[-1] < 1:
        prev = table[-1]
        if prev + d >= 1:
            nxt = Fraction(1)
        else:
            iv_up = Interval.exact(e, _START_PREC).exp() * prev + d
            iv_down = 1 - (Interval.exact(-e, _START_PREC).exp() * (1 - prev - d))
            low = min(iv_up.lo, iv_down.lo)
            nxt = max(prev, Fraction(floor_scaled(low, GRID_BITS, _START_PREC), one))
        if not (at_most_exp_affine(nxt, e, prev, d) and at_most_exp_affine(1 - prev, e, 1 - nxt, d)):
            raise ArithmeticError(f"p({len(table)}) violates the DP inequalities")
        table.append(nxt)
        if len(table) > MAX_TABLE:
            raise _too_small(e)
    return OptimalSelection(eps, dlt, k, tuple(table[:-1]))


def _too_small(e: Fraction) -> ValueError:
    return ValueError(f"epsilon/max_groups = {e} is too small for the optimal rule (more than {MAX_TABLE} "
                      "steps); use Laplace thresholding")


def optimal_selection(epsilon: Any, delta: Any, max_groups: Any = 1) -> OptimalSelection:
    """The (cached) plan of the optimal rule, each ``p(n)`` checked exactly against both DP inequalities."""
    return _optimal_plan(*check_parameters(epsilon, delta, max_groups))


def person_counts(persons: Any) -> np.ndarray:
    """Each key's count (distinct persons, or rows) as an int64 array; every key present in the data has at
    least one person, and one row."""
    n = np.asarray(persons)
    if n.ndim != 1 or not np.issubdtype(n.dtype, np.integer):
        raise TypeError("persons must be a 1-D array of integer person counts")
    n = n.astype(np.int64)
    if len(n) and n.min() < 1:
        raise ValueError("every key present in the data has at least one person")
    return n
