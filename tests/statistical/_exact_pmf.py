"""Exact reference laws and a goodness-of-fit test, for the statistical tests.

The reference laws are computed *independently of the library under test*:
rationals where the law is rational, otherwise gmpy2 ``mpfr`` numbers under
directed rounding (:class:`Bounds` below; the library's own ``Interval`` is
deliberately not used, so that a bug there cannot hide a bug in a sampler).
Every probability is a rigorous enclosure ``[lo, hi]`` of the true value, at
:data:`PREC` bits; only when the expected counts are handed to SciPy are the
(tiny) enclosures collapsed to floats.

:func:`gof_pvalue` is a G-test over bins with expected count >= 5 (tails
pooled), Bonferroni-combined with two extreme-value checks (no sample may
land where the law puts essentially no mass).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import gmpy2
import numpy as np
from scipy import stats

PREC = 192
"""Working precision (bits) of every reference computation."""

MIN_EXPECTED = 5.0
"""Smallest expected count allowed in a G-test bin."""

_CTX = {"precision": PREC, "emax": gmpy2.get_emax_max(), "emin": gmpy2.get_emin_min()}


def _down() -> Any:
    return gmpy2.context(round=gmpy2.RoundDown, **_CTX)


def _up() -> Any:
    return gmpy2.context(round=gmpy2.RoundUp, **_CTX)


def _mpq(q: Fraction | int) -> Any:
    q = Fraction(q)
    return gmpy2.mpq(q.numerator, q.denominator)


class Bounds:
    """A rigorous enclosure ``lo <= x <= hi`` of a non-negative real ``x``."""

    __slots__ = ("hi", "lo")

    def __init__(self, lo: Any, hi: Any) -> None:
        assert 0 <= lo <= hi, (lo, hi)
        self.lo = lo
        self.hi = hi

    @classmethod
    def exact(cls, q: Fraction | int) -> Bounds:
        with _down():
            lo = gmpy2.mpfr(_mpq(q))
        with _up():
            hi = gmpy2.mpfr(_mpq(q))
        return cls(lo, hi)

    @classmethod
    def exp_neg(cls, x: Fraction | int) -> Bounds:
        """``exp(-x)`` for a rational ``x >= 0``."""
        with _up():
            xhi = gmpy2.mpfr(_mpq(x))
        with _down():
            xlo = gmpy2.mpfr(_mpq(x))
            lo = gmpy2.exp(-xhi)
        with _up():
            hi = gmpy2.exp(-xlo)
        return cls(lo, hi)

    def __add__(self, other: Bounds) -> Bounds:
        with _down():
            lo = self.lo + other.lo
        with _up():
            hi = self.hi + other.hi
        return Bounds(lo, hi)

    def __sub__(self, other: Bounds) -> Bounds:
        """Difference, clamped at 0 (every quantity here is a probability or a mass)."""
        with _down():
            lo = max(self.lo - other.hi, gmpy2.mpfr(0))
        with _up():
            hi = self.hi - other.lo
        return Bounds(lo, max(hi, lo))

    def __mul__(self, other: Bounds) -> Bounds:
        with _down():
            lo = self.lo * other.lo
        with _up():
            hi = self.hi * other.hi
        return Bounds(lo, hi)

    def __truediv__(self, other: Bounds) -> Bounds:
        assert other.lo > 0
        with _down():
            lo = self.lo / other.hi
        with _up():
            hi = self.hi / other.lo
        return Bounds(lo, hi)

    def __pow__(self, k: int) -> Bounds:
        with _down():
            lo = self.lo**k
        with _up():
            hi = self.hi**k
        return Bounds(lo, hi)

    def complement(self) -> Bounds:
        """``1 - x`` for ``x`` in [0, 1]."""
        return ONE - self

    def __float__(self) -> float:
        return float((self.lo + self.hi) / 2)

    def __repr__(self) -> str:
        return f"Bounds({float(self.lo):.17g}, {float(self.hi):.17g})"


ZERO = Bounds.exact(0)
ONE = Bounds.exact(1)


class Law(ABC):
    """A law on the integers, known through rigorous bounds on its CDF."""

    name: str

    @abstractmethod
    def cdf(self, k: int) -> Bounds:
        """``P(X <= k)``."""

    def pmf(self, k: int) -> Bounds:
        """``P(X = k)``."""
        return self.cdf(k) - self.cdf(k - 1)

    def mass(self, a: int | None, b: int | None) -> Bounds:
        """``P(a < X <= b)``; ``None`` stands for -infinity / +infinity."""
        upper = ONE if b is None else self.cdf(b)
        lower = ZERO if a is None else self.cdf(a)
        return upper - lower

    def search_range(self) -> tuple[int, int]:
        """Integers ``lo, hi`` with ``P(X < lo)`` and ``P(X > hi)`` below 1e-30 (for quantiles)."""
        lo, hi = -1, 1
        while float(self.cdf(lo)) > 1e-30:
            lo *= 2
        while float(self.cdf(hi)) < 1 - 1e-30:
            hi *= 2
        return lo, hi

    def quantile(self, level: float) -> int:
        """The smallest integer ``k`` with ``P(X <= k) >= level`` (approximately: bins only)."""
        lo, hi = self.search_range()
        while lo < hi:
            mid = (lo + hi) // 2
            if float(self.cdf(mid)) >= level:
                hi = mid
            else:
                lo = mid + 1
        return lo

    def __repr__(self) -> str:
        return self.name


class Uniform(Law):
    """Uniform on ``{0, ..., n-1}``: exact rationals."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.name = f"Uniform({n})"

    def cdf(self, k: int) -> Bounds:
        return Bounds.exact(Fraction(min(max(k + 1, 0), self.n), self.n))


class Bernoulli(Law):
    """``P(1) = p``: built from an exact ``1 - p`` (rational) or its bounds."""

    def __init__(self, p_zero: Bounds, name: str) -> None:
        self.p_zero = p_zero
        self.name = name

    @classmethod
    def rational(cls, p: Fraction) -> Bernoulli:
        return cls(Bounds.exact(1 - p), f"Bernoulli({p})")

    @classmethod
    def exp_neg(cls, x: Fraction) -> Bernoulli:
        """``P(1) = exp(-x)``."""
        return cls(Bounds.exp_neg(x).complement(), f"Bernoulli(exp(-{x}))")

    def cdf(self, k: int) -> Bounds:
        if k < 0:
            return ZERO
        return self.p_zero if k == 0 else ONE


class Geometric(Law):
    """``P(k) = (1 - q) q**k`` on ``k >= 0``; ``P(X <= k) = 1 - q**(k+1)``."""

    def __init__(self, scale: Fraction | None = None, p: Fraction | None = None) -> None:
        assert (scale is None) != (p is None)
        self.scale = scale
        self.q = None if p is None else Bounds.exact(1 - p)
        self.name = f"Geometric(scale={scale})" if p is None else f"Geometric(p={p})"

    def _q_power(self, m: int) -> Bounds:
        if self.q is None:
            return Bounds.exp_neg(Fraction(m) / self.scale)
        return self.q**m

    def cdf(self, k: int) -> Bounds:
        if k < 0:
            return ZERO
        return self._q_power(k + 1).complement()

    def pmf(self, k: int) -> Bounds:
        if k < 0:
            return ZERO
        return self._q_power(k) * self._q_power(1).complement()


class DiscreteLaplace(Law):
    """``P(k) = (1 - q)/(1 + q) q**|k|``, ``q = exp(-1/scale)``.

    ``P(X <= k) = q**-k / (1 + q)`` for ``k < 0`` and ``1 - q**(k+1) / (1 + q)``
    for ``k >= 0`` (geometric series).
    """

    def __init__(self, scale: Fraction) -> None:
        self.scale = Fraction(scale)
        self.q = Bounds.exp_neg(1 / self.scale)
        self.one_plus_q = ONE + self.q
        self.name = f"DiscreteLaplace({self.scale})"

    def cdf(self, k: int) -> Bounds:
        if k < 0:
            return Bounds.exp_neg(Fraction(-k) / self.scale) / self.one_plus_q
        return (Bounds.exp_neg(Fraction(k + 1) / self.scale) / self.one_plus_q).complement()

    def pmf(self, k: int) -> Bounds:
        return self.q.complement() / self.one_plus_q * Bounds.exp_neg(Fraction(abs(k)) / self.scale)


class DiscreteGaussian(Law):
    """``P(k) = exp(-k**2 / 2v) / Z``, normalised with a rigorous tail bound.

    With ``w(k) = exp(-k**2 / 2v)`` and a cut ``K``, the ratio
    ``w(k+1)/w(k) = exp(-(2k+1)/2v)`` decreases in ``k``, so
    ``sum_{k > K} w(k) <= w(K+1) / (1 - exp(-(2K+3)/2v))`` and
    ``Z`` lies in ``[S, S + 2 * tail]`` where ``S = sum_{|k| <= K} w(k)``.
    The CDF is exact to within these bounds for ``|k| <= K``.
    """

    def __init__(self, variance: Fraction) -> None:
        self.variance = Fraction(variance)
        sigma = math.sqrt(self.variance)
        self.cut = math.ceil(15 * sigma) + 10
        two_v = 2 * self.variance
        weights = [Bounds.exp_neg(Fraction(k * k) / two_v) for k in range(self.cut + 2)]
        tail = weights[self.cut + 1] / Bounds.exp_neg(Fraction(2 * self.cut + 3) / two_v).complement()
        total = weights[0]
        for w in weights[1 : self.cut + 1]:
            total = total + w + w
        self.z = Bounds(total.lo, (total + tail + tail).hi)
        self.weights = weights[: self.cut + 1]
        # cumulative[i] = sum of w(k) for -cut <= k <= i - cut - 1 (i = 0 .. 2*cut+1).
        self.cumulative = [ZERO]
        for k in range(-self.cut, self.cut + 1):
            self.cumulative.append(self.cumulative[-1] + self.weights[abs(k)])
        # Mass below -cut (and above +cut) is at most tail / Z.
        self.tail_mass = tail / self.z
        self.name = f"DiscreteGaussian(variance={self.variance})"

    def cdf(self, k: int) -> Bounds:
        if k < -self.cut:
            return Bounds(gmpy2.mpfr(0), self.tail_mass.hi)
        if k >= self.cut:
            return Bounds((ONE - self.tail_mass).lo, gmpy2.mpfr(1))
        inner = self.cumulative[k + self.cut + 1] / self.z
        return Bounds(inner.lo, (inner + self.tail_mass).hi)

    def search_range(self) -> tuple[int, int]:
        return -self.cut, self.cut


def _edges(law: Law, n: int, max_integer_bins: int, quantile_bins: int) -> list[int]:
    """Upper edges of candidate bins ``(e[i-1], e[i]]`` (the last bin is open above)."""
    first = law.quantile(MIN_EXPECTED / n)
    last = law.quantile(1 - MIN_EXPECTED / n)
    if last - first <= max_integer_bins:
        return list(range(first - 1, last + 1))
    levels = {j / quantile_bins for j in range(1, quantile_bins)}
    tail = MIN_EXPECTED
    while tail / n < 1 / quantile_bins:  # finer bins in both tails, where errors hide
        levels.update((tail / n, 1 - tail / n))
        tail *= 4
    return sorted({law.quantile(level) for level in levels})


def _pooled_bins(law: Law, edges: Sequence[int], n: int) -> tuple[list[int], list[float]]:
    """Merge adjacent candidate bins until each expects >= MIN_EXPECTED samples."""
    uppers: list[int | None] = [*edges, None]
    kept_edges: list[int] = []
    probs: list[float] = []
    start: int | None = None
    for upper in uppers:
        mass = law.mass(start, upper)
        if float(mass) * n >= MIN_EXPECTED and upper is not None:
            kept_edges.append(upper)
            probs.append(float(mass))
            start = upper
    remainder = float(law.mass(start, None))
    if probs:
        if remainder * n >= MIN_EXPECTED:
            probs.append(remainder)
        else:  # right tail too thin: pool it into the last bin
            kept_edges.pop()
            probs[-1] += remainder
    else:
        probs = [remainder]
    return kept_edges, probs


def gof_pvalue(samples: Any, law: Law, *, max_integer_bins: int = 400, quantile_bins: int = 64) -> float:
    """A p-value for "``samples`` are i.i.d. draws from ``law``".

    Bins: one per integer when the bulk of the law spans at most
    ``max_integer_bins`` integers, else ``quantile_bins`` equal-probability
    ranges plus finer ranges in both tails (edges chosen from the exact CDF);
    adjacent bins are merged until each expects at least 5 samples, the tails
    pooled. Three tests, Bonferroni-combined (``3 * min p``): the G-test on
    those bins, and for the smallest and the largest sample the bound
    ``n * P(X <= min)`` resp. ``n * P(X >= max)`` on the chance that any of
    ``n`` draws reaches that far (this catches impossible values that pooling
    would hide). The result is a valid p-value: under the null it is
    <= alpha with probability <= alpha.
    """
    values = np.asarray(samples).ravel()
    n = values.size
    assert n > 0
    edges, probs = _pooled_bins(law, _edges(law, n, max_integer_bins, quantile_bins), n)
    observed = np.bincount(np.searchsorted(np.array(edges, dtype=object), values.astype(object)).astype(np.int64),
                           minlength=len(probs))
    if len(probs) > 1:
        expected = np.array(probs) * n
        expected *= n / expected.sum()  # remove float rounding of the exact masses
        p_g = float(stats.power_divergence(observed, expected, lambda_="log-likelihood").pvalue)
    else:
        p_g = 1.0  # a single bin carries no information; the extreme-value checks still apply
    low, high = int(values.min()), int(values.max())
    p_low = min(1.0, n * float(law.cdf(low).hi))
    p_high = min(1.0, n * float(law.cdf(high - 1).complement().hi))
    return min(1.0, 3 * min(p_g, p_low, p_high))
