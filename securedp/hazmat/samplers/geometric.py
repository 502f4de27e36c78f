"""The geometric law, sampled exactly and in value-independent time.

**Law.** ``P(G = k) = (1 - q) * q**k`` for ``k = 0, 1, 2, ...``: the number of
failures before the first success. The ratio is given either as a scale,
``q = exp(-1/scale)`` (so ``P(G = k)`` is proportional to ``exp(-k/scale)``,
the parametrisation of :func:`~securedp.hazmat.samplers.discrete_laplace`), or as a success
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

**Range and dtype.** Values are assembled from disjoint bit fields in 64-bit
words, so nothing overflows at any scale; the result is ``int64`` exactly when
the plan's bit count ``shift + digits`` is at most 62 (an integer decision, no
float involved), else Python ints. Scales above :data:`MAX_SCALE` (``2**256``)
are refused at once. Rational ratios (``q = 1 - p``) can make a threshold an
exact dyadic rational (``p = 2/3`` makes digit 0 exactly ``1/4``); those
thresholds are compared exactly (:class:`~securedp.hazmat.exact.Real`'s
``dyadic`` hook), never by intervals that cannot collapse onto them.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import repeat
from typing import Any

import gmpy2
import numpy as np

from securedp.hazmat.bits.default import resolve_source
from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.interval import Interval, Real, describe, exp_neg, rounding_context
from securedp.hazmat.exact.kernels import (
    directed_products,
    dyadic_digit,
    dyadic_power,
    scaled_bounds,
    tabulated_floors,
)
from securedp.hazmat.exact.rational import positive_rational, probability
from securedp.hazmat.samplers.decide import WORD_BITS, Thresholds
from securedp.hazmat.samplers.params import PlanCache, check_size, count_of, shaped
from securedp.hazmat.samplers.pool import pooled

# Levels split off at most 2**14 values at a time (a table of 16,384 thresholds).
_MAX_LEVEL_BITS = 14
# Below this scale the digits are cheaper than another level.
_MIN_LEVEL_SCALE = 16
# Plans whose values (outside the top event) all lie below 2**_INT64_BITS give int64 arrays: room
# to add 1 (discrete Laplace) or a small offset without overflow.
_INT64_BITS = 62
# The largest scale (in units) the geometric, discrete Laplace and discrete Gaussian samplers
# accept: set-up grows with log2(scale) (a 16,384-entry table per 14 bits) and so does every draw.
MAX_SCALE = 2**256
MAX_SCALE_TEXT = "2**256"
# Below 2**-30 a 53-bit rounding of 1 - p loses p's low bits (all of them below 2**-53, where the
# old estimate became infinite): use log1p of p itself. Above it the historical estimate is kept,
# so that the plans (hence seeded outputs) of such p never change.
_SMALL_P = Fraction(1, 2**30)


def magnitude_text(q: Fraction) -> str:
    """``"about 2**k"`` for a positive rational: a size that is safe to print whatever its terms."""
    return f"about 2**{q.numerator.bit_length() - q.denominator.bit_length()}"


def scale_range_error(name: str, value: Fraction) -> ValueError:
    """The one-line refusal of a scale beyond :data:`MAX_SCALE`."""
    return ValueError(
        f"{name} must be at most {MAX_SCALE_TEXT} integer units (for a release, sensitivity / epsilon in "
        f"lattice units: use a larger epsilon or a coarser lattice), got {magnitude_text(value)}"
    )


class Ratio:
    """A ratio ``q`` in (0, 1), with exact bounds on every power ``q**r``."""

    def power(self, r: int) -> Real:
        """The real ``q**r``."""
        raise NotImplementedError

    def digit(self, i: int) -> Real:
        """The real ``q**(2**i) / (1 + q**(2**i))``: the probability that digit ``i`` is 1."""
        power = self.power(1 << i)
        return Real(lambda prec: _digit_probability(power.interval(prec)), name=f"digit {i}")

    def raised(self, m: int) -> Ratio:
        """The ratio ``q**m``."""
        raise NotImplementedError

    def scale_estimate(self) -> float:
        """Roughly ``1 / ln(1/q)``: used to plan the work, never to decide an outcome.

        Finite and >= 0 for every ratio whose scale is at most :data:`MAX_SCALE`.
        """
        raise NotImplementedError

    def scale_at_most(self, bound: int) -> bool:
        """Exactly whether ``1 / ln(1/q) <= bound`` is guaranteed (a sufficient test)."""
        raise NotImplementedError


class ExpRatio(Ratio):
    """``q = exp(-rate)`` for a rational ``rate > 0`` (rate = 1/scale)."""

    def __init__(self, rate: Fraction) -> None:
        self.rate = rate

    def power(self, r: int) -> Real:
        return exp_neg(self.rate * r)

    def raised(self, m: int) -> ExpRatio:
        return ExpRatio(self.rate * m)

    def scale_estimate(self) -> float:
        if self.rate * MAX_SCALE < 1:  # would overflow a float past 2**1024; refused by scale_at_most
            return float(MAX_SCALE)  # float-ok: planning only
        return float(1 / self.rate)  # float-ok: planning only (an underflow to 0.0 plans no level)

    def scale_at_most(self, bound: int) -> bool:
        return self.rate * bound >= 1


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
        base = self.base
        extra = e.bit_length() + 8  # the e-th power multiplies the base's relative error by e
        return Real(lambda prec: Interval.exact(base, prec + extra) ** e, name=f"({describe(base)})**{e}",
                    dyadic=lambda k: dyadic_power(base, e, k))

    def digit(self, i: int) -> Real:
        e = self.exponent << i
        n, d = self.base.numerator, self.base.denominator
        if e <= 64:  # exactly n**e / (n**e + d**e): may be dyadic (q = 1/3 gives 1/4), so keep it exact
            return Real.rational(Fraction(n**e, n**e + d**e))
        power = self.power(1 << i)
        # n**e / (n**e + d**e) in lowest terms; for even e (e is a power of two here) the denominator
        # is never a power of two (odd squares are 1 mod 8, so n**e + d**e is 2 mod 8 or odd, and > 2).
        return Real(lambda prec: _digit_probability(power.interval(prec)), name=f"digit {i}",
                    dyadic=lambda k: dyadic_digit(n, d, e, k))

    def raised(self, m: int) -> RationalRatio:
        return RationalRatio(self.base, self.exponent * m)

    def scale_estimate(self) -> float:
        p = 1 - self.base
        if p >= _SMALL_P:
            with rounding_context(53, gmpy2.RoundToNearest):  # float-ok: planning only
                return float(-1 / (self.exponent * gmpy2.log(gmpy2.mpq(self.base.numerator, self.base.denominator))))
        with rounding_context(53, gmpy2.RoundToNearest):  # float-ok: planning only
            return float(-1 / (self.exponent * gmpy2.log1p(-gmpy2.mpq(p.numerator, p.denominator))))

    def scale_at_most(self, bound: int) -> bool:
        # ln(1/q) = -exponent * ln(base) >= exponent * (1 - base).
        return self.exponent * (1 - self.base) * bound >= 1


def _digit_probability(x: Interval) -> Interval:
    """``x / (1 + x)`` for ``x = Q**(2**i)``: the probability that digit ``i`` is 1."""
    return x / (1 + x)


def power_lows(ratio: Ratio, count: int, width: int) -> list[int]:
    """``floor(q**r * 2**width)`` for ``r = 0 .. count-1``, by iterated products.

    :func:`~securedp.hazmat.exact.kernels.directed_products` of ``q`` in fixed
    point, covering the ``log2(count)`` bits the products can lose;
    an entry whose bounds are not within one unit is recomputed on its own
    (:func:`~securedp.hazmat.exact.kernels.tabulated_floors`).
    """
    prec = width + 40 + max(count, 1).bit_length()
    q = ratio.power(1).interval(prec)
    lows, highs = directed_products((1 << prec, 1 << prec), repeat(scaled_bounds(q, prec)), count, prec)
    return tabulated_floors(lows, highs, prec, width, ratio.power)


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
            lows = power_lows(self._ratio, 1 << self.bits, self._width)
            self._accept = Thresholds(lows, self._ratio.power, self._width)
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


def _put(words: list[np.ndarray], values: np.ndarray, shift: int, bits: int) -> None:
    """OR ``values`` (uint64, each below ``2**bits``) into the bit string ``words`` at bit ``shift``."""
    j, offset = divmod(shift, 64)
    words[j] |= values << np.uint64(offset)
    if offset + bits > 64:
        words[j + 1] |= values >> np.uint64(64 - offset)


class GeometricPlan:
    """Everything needed to draw from one geometric law, computed once.

    A value is assembled from disjoint bit fields (each level's ``R`` at its
    shift, then the digits) in 64-bit words, so no field can overflow
    whatever its position. ``value_bits = shift + digits`` bounds every value
    outside the top event (``value < 2**value_bits``); ``int64`` is exactly
    ``value_bits <= 62``, decided from these integers and never from a float.
    """

    def __init__(self, ratio: Ratio, width: int = WORD_BITS) -> None:
        if not ratio.scale_at_most(MAX_SCALE):
            raise ValueError(f"the geometric scale must be at most {MAX_SCALE_TEXT}")
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
        self.digit_thresholds = [Thresholds.of([ratio.digit(i)], width) for i in range(digits)]
        self.top = Thresholds.of([ratio.power(1 << digits)], width)
        self.value_bits = shift + digits
        self.int64 = self.value_bits <= _INT64_BITS
        self._nwords = max(1, -(-self.value_bits // 64))
        comparisons = sum(1 / level.acceptance for level in self.levels) + digits + 1
        self.comparisons_per_draw = comparisons
        self.slow_path_bound = comparisons * 2.0 ** -width  # float-ok: a documented bound, not a decision

    def draw(self, n: int, source: RandomSource) -> np.ndarray:
        """``n`` independent draws: int64 when :attr:`int64`, else an object array of Python ints."""
        words = [np.zeros(n, dtype=np.uint64) for _ in range(self._nwords)]
        for level in self.levels:
            _put(words, level.draw(n, source).astype(np.uint64), level.shift, level.bits)
        for i, thresholds in enumerate(self.digit_thresholds):
            _put(words, thresholds.bernoulli(n, source).astype(np.uint64), self.shift + i, 1)
        top = self.top.bernoulli(n, source)
        if self.int64:
            result = words[0].view(np.int64)
        else:
            result = words[0].astype(object)
            for j in range(1, self._nwords):
                result += words[j].astype(object) << (64 * j)
        if top.any():
            result = self._add_top(result, top, source)
        return result

    def _add_top(self, result: np.ndarray, top: np.ndarray, source: RandomSource) -> np.ndarray:
        """The event ``H >> d != 0`` (probability <= 2**-64): ``H >> d = 1 + G'``.

        Python ints throughout; an int64 result becomes an object array when a
        value would reach ``2**62`` (so that callers may still add to it).
        """
        step = 1 << (self.shift + self.digits)
        tail = GeometricPlan(self.tail_ratio.raised(1 << self.digits), self.width)
        extra = {int(e): step * (1 + int(tail.draw(1, source)[0])) for e in np.flatnonzero(top)}
        if result.dtype != object and any(int(result[e]) + v >= 2**_INT64_BITS for e, v in extra.items()):
            result = result.astype(object)
        for e, v in extra.items():
            result[e] = int(result[e]) + v
        return result


class _AlwaysZero:
    """``p = 1``: no failure ever happens, so every draw is 0 (and consumes no randomness)."""

    slow_path_bound = 0.0
    comparisons_per_draw = 0.0
    int64 = True

    def draw(self, n: int, source: RandomSource) -> np.ndarray:  # noqa: ARG002 - the Plan protocol
        return np.zeros(n, dtype=np.int64)


def _build_plan(scale: Any, p: Any) -> GeometricPlan | _AlwaysZero:
    if (scale is None) == (p is None):
        raise TypeError("geometric takes exactly one of scale or p")
    if scale is not None:
        value = positive_rational(scale, "scale")
        if value > MAX_SCALE:
            raise scale_range_error("scale", value)
        return GeometricPlan(ExpRatio(1 / value))
    prob = probability(p, "p")
    if prob == 0:
        raise ValueError("p must be > 0")
    if prob == 1:
        return _AlwaysZero()
    if prob * MAX_SCALE < 1:
        raise ValueError(f"p must be at least 2**-256 (a scale of at most {MAX_SCALE_TEXT}), "
                         f"got {magnitude_text(prob)}")
    return GeometricPlan(RationalRatio(1 - prob))


_PLANS: PlanCache[GeometricPlan | _AlwaysZero] = PlanCache(_build_plan)


def geometric(scale: Any = None, size: Any = None, *, p: Any = None, rng: RandomSource | None = None) -> Any:
    """Draw from the geometric law on ``{0, 1, 2, ...}``, exactly.

    ``P(G = k) = (1 - q) * q**k`` with ``q = exp(-1/scale)`` when ``scale`` is
    given, or ``q = 1 - p`` when the success probability ``p`` is given
    (keyword only): the number of failures before the first success. Exactly
    one of ``scale`` (a rational > 0) or ``p`` (a rational in (0, 1]) must be
    given. Returns an ``int`` when ``size`` is ``None``, else an array of
    that shape: ``int64`` when every value the plan assembles is below
    ``2**62`` (always for a scale below ``2**56``), else an object array of
    Python ints (always from ``2**57``; the scale of ``p`` is ``1/ln(1/(1-p))``,
    about ``1/p``). The scale must be at most ``2**256`` and ``p`` at least
    ``2**-256`` (else ``ValueError`` at once): set-up and every draw grow with
    ``log2(scale)``. NumPy's ``Generator.geometric`` counts trials
    instead (support from 1): it is ``1 + geometric(p=p)``.
    """
    plan = _PLANS.get(scale, p)
    n = check_size(size)
    source = resolve_source(rng)
    if n is None:
        return pooled(source, plan, plan.draw)
    return shaped(plan.draw(count_of(n), source), n)
