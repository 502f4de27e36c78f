"""The geometric law, sampled exactly and in value-independent time.

**Law.** ``P(G = k) = (1 - q) * q**k`` for ``k = 0, 1, 2, ...``: the number of
failures before the first success. The ratio is given either as a scale,
``q = exp(-1/scale)`` (so ``P(G = k)`` is proportional to ``exp(-k/scale)``,
the parametrisation of :func:`~securedp.discrete_laplace`), or as a success
probability ``p`` with ``q = 1 - p``. Both are exact rationals.

**Algorithm.** Two classical facts about a geometric ``G`` with ratio ``q``:

1. *Splitting.* For any ``J >= 1``, ``G = R + J * H`` where ``R = G mod J``
   and ``H = G // J`` are independent, ``R`` has ``P(R = r)`` proportional
   to ``q**r`` on ``[0, J)``, and ``H`` is geometric with ratio ``q**J``.
   (The joint mass ``(1 - q) q**r (q**J)**h`` factorises.)
2. *Digits.* The binary digits of a geometric ``H`` with ratio ``Q`` are
   independent, digit ``i`` being 1 with probability
   ``Q**(2**i) / (1 + Q**(2**i))``, and ``H >> d`` is geometric with ratio
   ``Q**(2**d)`` (repeated splitting with ``J = 2``).

The plan applies (1) in *levels* while the scale is large: ``R`` is drawn by
proposing ``r`` uniformly from ``j`` fair bits (``J = 2**j``) and accepting
with probability ``q**r`` (rejection sampling; the number of proposals is
independent of the value accepted). When the remaining scale is small it
applies (2): ``d`` digits, then one comparison deciding whether
``H >> d`` is non-zero, an event of probability ``Q**(2**d) <= 2**-64``; in
that event ``H >> d = 1 + G'`` (memorylessness) with ``G'`` drawn by a
fresh plan. Every comparison is an exact fixed-width comparison
(:mod:`securedp.hazmat.samplers.decide`).

**Timing.** A draw makes the same comparisons whatever its value: a fixed
number of digit comparisons, and per level a number of proposals whose law
does not depend on the value accepted. The only value-dependent work is the
resolver and the ``H >> d != 0`` branch, whose probability per draw is bounded
by :attr:`GeometricPlan.slow_path_bound` (< 2**-60 for the default width).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import gmpy2
import numpy as np

from securedp.hazmat.bits.default import resolve_source
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.interval import Interval, Real, rounding_context
from securedp.hazmat.exact.rational import positive_rational, probability
from securedp.hazmat.samplers.decide import WORD_BITS, Thresholds
from securedp.hazmat.samplers.params import PlanCache, check_size, count_of, shaped
from securedp.hazmat.samplers.pool import pooled

# Levels split off at most 2**14 values at a time (a table of 16,384 thresholds).
_MAX_LEVEL_BITS = 14
# Below this scale the digits are cheaper than another level.
_MIN_LEVEL_SCALE = 16
# int64 holds every value below 2**62 with room to add; past this scale use Python ints.
_INT64_SCALE_LIMIT = 2**55


class Ratio:
    """A ratio ``q`` in (0, 1), with exact bounds on every power ``q**r``."""

    def power(self, r: int) -> Real:
        """The real ``q**r``."""
        raise NotImplementedError

    def raised(self, m: int) -> "Ratio":
        """The ratio ``q**m``."""
        raise NotImplementedError

    def scale_estimate(self) -> float:
        """Roughly ``1 / ln(1/q)``: used to plan the work, never to decide an outcome."""
        raise NotImplementedError


class ExpRatio(Ratio):
    """``q = exp(-rate)`` for a rational ``rate > 0`` (rate = 1/scale)."""

    def __init__(self, rate: Fraction) -> None:
        self.rate = rate

    def power(self, r: int) -> Real:
        rate = self.rate * r
        return Real(lambda prec: (-Interval.exact(rate, prec)).exp(), name=f"exp(-{rate})")

    def raised(self, m: int) -> "ExpRatio":
        return ExpRatio(self.rate * m)

    def scale_estimate(self) -> float:
        return float(1 / self.rate)  # float-ok: planning only


class RationalRatio(Ratio):
    """``q = base**exponent`` for a rational ``base`` in (0, 1)."""

    def __init__(self, base: Fraction, exponent: int = 1) -> None:
        self.base = base
        self.exponent = exponent

    def power(self, r: int) -> Real:
        if r == 0:
            return Real.rational(1)
        e = self.exponent * r
        if e <= 64:
            return Real.rational(self.base**e)
        return Real(lambda prec: Interval.exact(self.base, prec) ** e, name=f"({self.base})**{e}")

    def raised(self, m: int) -> "RationalRatio":
        return RationalRatio(self.base, self.exponent * m)

    def scale_estimate(self) -> float:
        with rounding_context(53, gmpy2.RoundToNearest):  # float-ok: planning only
            return float(-1 / (self.exponent * gmpy2.log(gmpy2.mpq(self.base.numerator, self.base.denominator))))


def _digit_probability(x: Interval) -> Interval:
    """``x / (1 + x)`` for ``x = Q**(2**i)``: the probability that digit ``i`` is 1."""
    return x / (1 + x)


def power_lows(ratio: Ratio, count: int, width: int) -> list[int]:
    """``floor(q**r * 2**width)`` for ``r = 0 .. count-1``, by iterated products.

    Products of directed-rounded bounds stay rigorous; the working precision
    covers the ``log2(count)`` bits they can lose. An entry whose bounds are
    not within one unit is recomputed on its own at higher precision.
    """
    prec = width + 40 + max(count, 1).bit_length()
    q = ratio.power(1).interval(prec)
    lows: list[int] = []
    highs: list[int] = []
    with rounding_context(prec, gmpy2.RoundDown):
        x = gmpy2.mpfr(1)
        for _ in range(count):
            lows.append(int(gmpy2.floor(gmpy2.mul_2exp(x, width))))
            x = x * q.lo
    with rounding_context(prec, gmpy2.RoundUp):
        x = gmpy2.mpfr(1)
        for _ in range(count):
            highs.append(int(gmpy2.ceil(gmpy2.mul_2exp(x, width))))
            x = x * q.hi
    for r in range(count):
        if highs[r] - lows[r] > 1:
            lows[r] = ratio.power(r).floor_ceil(width)[0]
    return lows


class _Level:
    """One splitting level: ``R`` uniform on ``[0, 2**bits)``, accepted with probability ``q**R``.

    The acceptance table is built on first use, so that a plan can be
    inspected (comparisons per draw, slow-path bound) without paying for it.
    """

    def __init__(self, ratio: Ratio, bits: int, shift: int, width: int) -> None:
        self.bits = bits
        self.shift = shift
        self._ratio = ratio
        self._width = width
        self._accept: Thresholds | None = None
        size = 1 << bits
        # Acceptance probability sum_r q**r / J, bounded below for the slow-path bound.
        q = ratio.scale_estimate()
        self.acceptance = -math.expm1(-size / q) / (size * -math.expm1(-1 / q))  # float-ok: planning only

    @property
    def accept(self) -> Thresholds:
        """Thresholds ``floor(q**r * 2**width)`` for ``r < 2**bits``."""
        if self._accept is None:
            self._accept = Thresholds(power_lows(self._ratio, 1 << self.bits, self._width), self._ratio.power, self._width)
        return self._accept

    def draw(self, n: int, source: RandomSource) -> np.ndarray:
        out = np.empty(n, dtype=np.int64)
        todo = np.arange(n)
        shift = np.uint64(WORD_BITS - self.bits)
        while todo.size:
            m = todo.size
            proposals = (source.words(m) >> shift).astype(np.int64)
            keep = self.accept.bernoulli(m, source, proposals)
            out[todo[keep]] = proposals[keep]
            todo = todo[~keep]
        return out


class GeometricPlan:
    """Everything needed to draw from one geometric law, computed once."""

    def __init__(self, ratio: Ratio, width: int = WORD_BITS) -> None:
        self.ratio = ratio
        self.width = width
        self.levels: list[_Level] = []
        shift = 0
        scale = ratio.scale_estimate()
        while scale >= _MIN_LEVEL_SCALE:
            bits = min(_MAX_LEVEL_BITS, int(math.log2(scale)))  # float-ok: planning only
            self.levels.append(_Level(ratio, bits, shift, width))
            ratio = ratio.raised(1 << bits)
            shift += bits
            scale /= 1 << bits
        self.shift = shift
        self.tail_ratio = ratio
        digits = 0
        while ratio.power(1 << digits).floor_ceil(64)[1] > 1:  # until Q**(2**d) <= 2**-64
            digits += 1
        self.digits = digits
        digit_reals = [self._digit_real(i) for i in range(digits)]
        self.digit_thresholds = [Thresholds.of([r], width) for r in digit_reals]
        self.top = Thresholds.of([ratio.power(1 << digits)], width)
        self.int64 = scale * (1 << shift) < _INT64_SCALE_LIMIT
        comparisons = sum(1 / level.acceptance for level in self.levels) + digits + 1
        self.comparisons_per_draw = comparisons
        self.slow_path_bound = comparisons * 2.0 ** -width  # float-ok: a documented bound, not a decision

    def _digit_real(self, i: int) -> Real:
        power = self.tail_ratio.power(1 << i)
        return Real(lambda prec: _digit_probability(power.interval(prec)), name=f"digit {i}")

    def draw(self, n: int, source: RandomSource) -> np.ndarray:
        """``n`` independent draws (int64, or object when the scale is astronomically large)."""
        total = np.zeros(n, dtype=np.int64)
        for level in self.levels:
            total |= level.draw(n, source) << np.int64(level.shift)
        high = np.zeros(n, dtype=np.int64)
        for i, thresholds in enumerate(self.digit_thresholds):
            high |= thresholds.bernoulli(n, source).astype(np.int64) << np.int64(i)
        top = self.top.bernoulli(n, source)
        if not self.int64:
            total = total.astype(object)
            high = high.astype(object)
        result = total + (high << self.shift) if self.int64 else total + high * (1 << self.shift)
        if top.any():
            result = self._add_top(result, top, source)
        return result

    def _add_top(self, result: np.ndarray, top: np.ndarray, source: RandomSource) -> np.ndarray:
        """The event ``H >> d != 0`` (probability <= 2**-64): ``H >> d = 1 + G'``."""
        step = 1 << (self.shift + self.digits)
        tail = GeometricPlan(self.tail_ratio.raised(1 << self.digits), self.width)
        extra = {int(e): step * (1 + int(tail.draw(1, source)[0])) for e in np.flatnonzero(top)}
        if any(int(result[e]) + v >= 2**62 for e, v in extra.items()) and result.dtype != object:
            result = result.astype(object)
        for e, v in extra.items():
            result[e] = int(result[e]) + v
        return result


class _AlwaysZero:
    """``p = 1``: no failure ever happens, so every draw is 0 (and consumes no randomness)."""

    slow_path_bound = 0.0
    comparisons_per_draw = 0.0
    int64 = True

    def draw(self, n: int, source: RandomSource) -> np.ndarray:
        return np.zeros(n, dtype=np.int64)


def _build_plan(scale: Any, p: Any) -> GeometricPlan | _AlwaysZero:
    if (scale is None) == (p is None):
        raise TypeError("geometric takes exactly one of scale or p")
    if scale is not None:
        return GeometricPlan(ExpRatio(1 / positive_rational(scale, "scale")))
    prob = probability(p, "p")
    if prob == 0:
        raise ValueError("p must be > 0")
    if prob == 1:
        return _AlwaysZero()
    return GeometricPlan(RationalRatio(1 - prob))


_PLANS: PlanCache[GeometricPlan | _AlwaysZero] = PlanCache(_build_plan)


def geometric(scale: Any = None, size: Any = None, *, p: Any = None, rng: RandomSource | None = None) -> Any:
    """Draw from the geometric law on ``{0, 1, 2, ...}``, exactly.

    ``P(G = k) = (1 - q) * q**k`` with ``q = exp(-1/scale)`` when ``scale`` is
    given, or ``q = 1 - p`` when the success probability ``p`` is given
    (keyword only): the number of failures before the first success. Exactly
    one of ``scale`` (a rational > 0) or ``p`` (a rational in (0, 1]) must be
    given. Returns an ``int`` when ``size`` is ``None``, else an ``int64``
    array of that shape (an object array of Python ints for a scale of
    2**55 or more, where values may exceed int64). ``numpy.random.Generator.geometric`` counts trials
    instead (support from 1): it is ``1 + geometric(p=p)``.
    """
    plan = _PLANS.get(scale, p)
    n = check_size(size)
    source = resolve_source(rng)
    if n is None:
        return pooled(source, plan, plan.draw)
    return shaped(plan.draw(count_of(n), source), n)
