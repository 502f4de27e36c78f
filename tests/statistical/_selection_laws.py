"""Exact reference laws of the selection mechanisms, computed from their definitions (not from the library).

Weights are gmpy2 ``mpfr`` numbers at 256 bits with directed rounding: every probability is
enclosed in ``[lo, hi]``. Used by the statistical tests (expected counts) and the privacy tests
(exact log-ratio bounds).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction

import gmpy2

PREC = 256
_CTX = {"precision": PREC, "emax": gmpy2.get_emax_max(), "emin": gmpy2.get_emin_min()}


def _exp(x: Fraction, rounding) -> gmpy2.mpfr:
    with gmpy2.context(round=rounding, **_CTX):
        return gmpy2.exp(gmpy2.mpq(x.numerator, x.denominator))


def _normalise(lows, highs) -> list[tuple[gmpy2.mpfr, gmpy2.mpfr]]:
    with gmpy2.context(round=gmpy2.RoundUp, **_CTX):
        s_hi = sum(highs, gmpy2.mpfr(0))
    with gmpy2.context(round=gmpy2.RoundDown, **_CTX):
        s_lo = sum(lows, gmpy2.mpfr(0))
        p_lo = [lo / s_hi for lo in lows]
    with gmpy2.context(round=gmpy2.RoundUp, **_CTX):
        p_hi = [hi / s_lo for hi in highs]
    return list(zip(p_lo, p_hi, strict=True))


def exponential_law(scores: Sequence[Fraction], coefficient: Fraction, multiplicity=None):
    """Enclosures of ``P(i)`` proportional to ``m_i exp(coefficient * (s_i - max s))``."""
    top = max(scores)
    m = multiplicity or [1] * len(scores)
    lows = [k * _exp(coefficient * (s - top), gmpy2.RoundDown) for k, s in zip(m, scores, strict=True)]
    highs = [k * _exp(coefficient * (s - top), gmpy2.RoundUp) for k, s in zip(m, scores, strict=True)]
    return _normalise(lows, highs)


def quantile_score(data: Sequence[int], q: Fraction, y: int, margin: float = 0) -> int:
    """``g(y) = b dist(q n, [L + min(q k, c), E - min((1 - q) k, c)])`` for ``q = a / b``, ``L = #{x < y}``,
    ``E = #{x <= y}``, ``k = E - L`` and the tie margin ``c = margin`` (rows; ``math.inf``: a block at the one rank
    ``L + q k``), from its definition in exact rationals; ``c = 0`` is ``max(0, b L - a n, a n - b E)``."""
    n = len(data)
    below, through = sum(1 for x in data if x < y), sum(1 for x in data if x <= y)
    tied = through - below
    lo, hi = below + min(q * tied, margin), through - min((1 - q) * tied, margin)
    distance = max(Fraction(0), lo - q * n, q * n - hi)
    assert lo <= hi and (distance * q.denominator).denominator == 1
    return int(distance * q.denominator)


def quantile_margin(q: Fraction, epsilon: Fraction, m: int = 1) -> int:
    """The tie margin of the quantile's law: ``ceil(1 / (rate b))`` rows, 0 for ``q`` 0 or 1."""
    return 0 if q in (0, 1) else math.ceil(1 / (quantile_rate(q, epsilon, m) * q.denominator))


def quantile_rate(q: Fraction, epsilon: Fraction, m: int = 1) -> Fraction:
    """The rate of the quantile's law: ``epsilon / (2 m max(a, b - a))``, or ``epsilon / m`` for ``q`` 0 or 1."""
    sensitivity = m * max(q.numerator, q.denominator - q.numerator)
    return epsilon / (sensitivity if q in (0, 1) else 2 * sensitivity)


FALLBACK = Fraction(3, 4)
"""The default fallback probability of a quantile (restated here, not imported: the reference is the definition)."""


def quantile_law(data: Sequence[int], q: Fraction, lo: int, hi: int, epsilon: Fraction, sensitivity: int = 1,
                 fallback: Fraction = FALLBACK, separate: bool = False, flip: bool = False, ties: bool = True):
    """``flip``: the same scores drawn by permute-and-flip (:func:`flip_quantile_law`). Else ``P(y)`` for every
    integer ``y`` in ``[lo, hi]`` (``sensitivity``: the rows one person contributes, ``m``):
    proportional to ``exp(-rate g(y))``, plus ``W exp(-rate h)`` at the fallback point ``f`` (the integer nearest
    ``lo + q (hi - lo)``, halves up), with ``W = floor(N p / (1 - p))`` for ``N`` candidates and the fallback
    probability ``p``, and ``h = max(a, b - a) n``. ``separate``: the fallback is an outcome of its own, listed
    last (the mechanism before its post-processing, ``fallback -> f``). ``ties``: the score's tie margin is the
    rule's (:func:`quantile_margin`), else 0 (the score before securedp 0.4)."""
    margin = quantile_margin(q, epsilon, sensitivity) if ties else 0
    scores = [-Fraction(quantile_score(data, q, y, margin)) for y in range(lo, hi + 1)]
    rate = quantile_rate(q, epsilon, sensitivity)
    weight = (hi - lo + 1) * fallback.numerator // (fallback.denominator - fallback.numerator)
    if flip:
        return flip_quantile_law(data, q, lo, hi, rate, weight, margin)
    if weight == 0:
        return exponential_law(scores, rate)
    h = max(q.numerator, q.denominator - q.numerator) * len(data)
    if separate:
        return exponential_law([*scores, -Fraction(h)], rate, [1] * len(scores) + [weight])
    point = lo + (2 * q.numerator * (hi - lo) + q.denominator) // (2 * q.denominator) - lo
    top = max(scores)
    lows = [_exp(rate * (s - top), gmpy2.RoundDown) for s in scores]
    highs = [_exp(rate * (s - top), gmpy2.RoundUp) for s in scores]
    with gmpy2.context(round=gmpy2.RoundDown, **_CTX):
        lows[point] += weight * _exp(rate * (-h - top), gmpy2.RoundDown)
    with gmpy2.context(round=gmpy2.RoundUp, **_CTX):
        highs[point] += weight * _exp(rate * (-h - top), gmpy2.RoundUp)
    return _normalise(lows, highs)


def _power(d: gmpy2.mpfr, k: int) -> list:
    """The coefficients of ``(1 - t d)**k`` in ``t``, lowest first (binomial)."""
    out, term = [], gmpy2.mpfr(1)
    for r in range(k + 1):
        out.append(term)
        term = term * (-d) * (k - r) / (r + 1)
    return out


def _times(u: list, v: list) -> list:
    out = [gmpy2.mpfr(0)] * (len(u) + len(v) - 1)
    for i, a in enumerate(u):
        for j, b in enumerate(v):
            out[i + j] += a * b
    return out


def flip_quantile_law(data: Sequence[int], q: Fraction, lo: int, hi: int, rate: Fraction, weight: int,
                      margin: int = 0):
    """``P(y)`` of permute-and-flip over every integer ``y`` in ``[lo, hi]`` (a coin ``exp(-rate (g(y) - g*))`` each,
    ``g*`` the least score, at tie margin ``margin``) and ``weight`` coins ``exp(-rate (h - g*))`` releasing the
    fallback point: candidate ``i`` wins with probability
    ``p_i * integral_0^1 prod_{j != i} (1 - t p_j) dt`` (its coin heads, every candidate with a smaller uniform key
    tails). The coins are rounded at 256 bits and the polynomial expanded at 4,096 (its alternating binomial
    coefficients cancel by up to one bit per coin); enclosed in a relative ``2**-150``, far above both."""
    scores = [quantile_score(data, q, y, margin) for y in range(lo, hi + 1)]
    h = max(q.numerator, q.denominator - q.numerator) * len(data)
    top = min(scores)
    coins = [_exp(-rate * (g - top), gmpy2.RoundToNearest) for g in scores]
    atom = _exp(-rate * (h - top), gmpy2.RoundToNearest)
    multiset: dict = {}
    for c, k in [*((c, 1) for c in coins), (atom, weight)]:
        multiset[c] = multiset.get(c, 0) + k
    with gmpy2.context(precision=4096):
        won = {}
        for c in multiset:
            poly = [gmpy2.mpfr(1)]
            for d, k in sorted(multiset.items(), key=lambda item: -item[1]):
                poly = _times(poly, _power(d, k - (d == c)))
            won[c] = c * sum(u / (i + 1) for i, u in enumerate(poly))
        law = [won[c] for c in coins]
        point = (2 * q.numerator * (hi - lo) + q.denominator) // (2 * q.denominator)
        if weight:
            law[point] += weight * won[atom]
        slack = gmpy2.mpfr(2) ** -150
        return [(gmpy2.mpfr(p * (1 - slack), PREC), gmpy2.mpfr(p * (1 + slack), PREC)) for p in law]


def permute_and_flip_law(scores: Sequence[Fraction], coefficient: Fraction):
    """``P(i)`` of permute-and-flip by enumerating every order (small n only)."""
    top = max(scores)
    p = [(_exp(coefficient * (s - top), gmpy2.RoundDown), _exp(coefficient * (s - top), gmpy2.RoundUp))
         for s in scores]
    n = len(scores)
    orders = list(itertools.permutations(range(n)))
    result = []
    for i in range(n):
        bounds = []
        for rounding, end in ((gmpy2.RoundDown, 0), (gmpy2.RoundUp, 1)):
            with gmpy2.context(round=rounding, **_CTX):
                total = gmpy2.mpfr(0)
                for order in orders:
                    term = gmpy2.mpfr(1)
                    for j in order:
                        if j == i:
                            term *= p[i][end]
                            break
                        term *= 1 - p[j][1 - end]
                    total += term
                bounds.append(total / len(orders))
        result.append(tuple(bounds))
    return result


def noisy_max_pair_law(gap: int, scale: Fraction) -> tuple[gmpy2.mpfr, gmpy2.mpfr]:
    """Enclosure of ``P(Z0 - Z1 >= gap)`` for i.i.d. discrete Laplace ``Z`` of ``scale``, from the closed form.

    With ``q = exp(-1/scale)``, ``c = (1-q)/(1+q)`` and ``A = (1+q^2)/(1-q^2)``, the difference
    ``D = Z0 - Z1`` has ``P(D = d) = c^2 q^|d| (A + |d|)``, so for ``g >= 1``
    ``P(D >= g) = c^2 q^g (A/(1-q) + g/(1-q) + q/(1-q)^2)``; ``P(D >= g) = 1 - P(D >= 1 - g)``
    for ``g <= 0`` (``D`` is symmetric). Evaluated at 256 bits; the ``2**-200`` margin covers the
    rounding of these few dozen operations on numbers in ``[0, 1]``.
    """
    if gap <= 0:
        lo, hi = noisy_max_pair_law(1 - gap, scale)
        return 1 - hi, 1 - lo
    with gmpy2.context(round=gmpy2.RoundToNearest, **_CTX):
        q = gmpy2.exp(-gmpy2.mpq(scale.denominator, scale.numerator))
        c = (1 - q) / (1 + q)
        a = (1 + q * q) / (1 - q * q)
        value = c * c * q**gap * ((a + gap) / (1 - q) + q / (1 - q) ** 2)
        margin = gmpy2.mpfr(2) ** -200
        return value - margin, value + margin
