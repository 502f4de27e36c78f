"""The zCDP of a pure ``epsilon``-DP release: the least ``rho`` valid for every such release, certified from above.

**The bound.** Every ``epsilon``-DP mechanism satisfies (``alpha``, ``e(alpha)``)-Rényi DP for every ``alpha > 1``,

    ``e(alpha) = epsilon - log((1 + exp(-epsilon)) / (1 + exp(-(2 alpha - 1) epsilon))) / (alpha - 1)``,

and no smaller function is valid for all of them: randomized response (``Bernoulli(e^eps / (e^eps + 1))`` against
``Bernoulli(1 / (e^eps + 1))``) attains it (Steinke 2024, "Sharp RDP & zCDP from pure DP", differentialprivacy.org,
Theorem 4). The proof is Bun & Steinke's (2016, Prop. 3.3): the likelihood ratio ``Z`` of two neighbouring
output laws lies in ``[e^-eps, e^eps]`` and has mean 1 under the second, so by convexity of ``v -> v**alpha``
``E[Z**alpha]`` is at most that of the two-point law on the ends with mean 1, which is the expression above.
So the release is ``rho*``-zCDP with ``rho* = sup_{alpha > 1} e(alpha) / alpha`` (zCDP is RDP ``alpha rho`` at
every ``alpha``), below Bun & Steinke's ``epsilon**2 / 2`` (Prop. 1.4): x1.021 at ``epsilon = 1/2``, x1.082 at
1, x1.31 at 2, x2.07 at 4. A discrete Laplace release whose sensitivity is one unit (a count, scale
``1 / epsilon``) *is* randomized response on its privacy loss (``+epsilon`` on ``z <= 0``, ``-epsilon`` on
``z >= 1``, with the same two probabilities), so for it ``rho*`` is the exact zCDP, not only a bound.

**The certificate.** ``e`` is non-decreasing in ``alpha`` (Rényi divergences are: van Erven & Harremoës 2014,
Theorem 3), so ``e(alpha) / alpha <= e(b) / a`` on ``[a, b]``, ``e(alpha) <= e(a_1)`` on ``(1, a_1]`` and
``e(alpha) / alpha <= epsilon / a`` on ``[a, inf)``. :func:`certified_sup` covers ``(1, inf)`` by such intervals
(``a_1 = 1 + 2**-20``, then each step as long as keeps its bound under the best bound so far, down to a ratio of
``1 + 2**-12``, until ``epsilon / a`` is under it) and returns the largest bound, every ``e(b)`` computed by
interval arithmetic with directed rounding (:class:`~securedp.hazmat.exact.interval.Interval`), rounded up to
40 significant bits: never below ``rho*``, above it by a factor below ``1 + 2**-12`` (measured: below
``1 + 3 * 10**-4`` at ``epsilon`` 3/4 to 1000). Below ``epsilon = 3/4`` it returns ``epsilon**2 / 2`` itself,
within x1.047 of ``rho*`` (x1.021 at 1/2). It depends on ``epsilon`` alone (a public parameter) and is
computed once per value. The same cover certifies the bound of bounded-range releases, whose ``e`` has the same two
properties (:mod:`securedp.privacy.bounded_range_zcdp`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from fractions import Fraction

from securedp.hazmat.exact.interval import Interval

_PRECISION = 256
_FIRST = Fraction(1) + Fraction(1, 1 << 20)
_FINEST = Fraction(1) + Fraction(1, 1 << 12)
_KEPT_BITS = 40
_GRID = 1 << 30
CERTIFIED_FROM = Fraction(3, 4)
"""Below this ``epsilon`` the charge is ``epsilon**2 / 2`` (within x1.047 of the sharp bound)."""


@functools.lru_cache(maxsize=8)
def _of_epsilon(epsilon: Fraction) -> tuple[Interval, Interval]:
    """``epsilon`` and ``1 + e^-eps`` as intervals: computed once for the certificate's many orders (the same
    operations, so the same ends, as computing them for each)."""
    eps = Interval.exact(epsilon, _PRECISION)
    return eps, (-eps).exp() + 1


def renyi_upper(epsilon: Fraction, alpha: Fraction) -> Interval:
    """An interval holding ``e(alpha)``, the Rényi DP of order ``alpha > 1`` of any ``epsilon``-DP release."""
    eps, num = _of_epsilon(epsilon)
    den = (-(eps * (2 * alpha - 1))).exp() + 1
    return eps - (num / den).log() / Interval.exact(alpha - 1, _PRECISION)


def _round_up(x: Fraction) -> Fraction:
    shift = _KEPT_BITS - (x.numerator.bit_length() - x.denominator.bit_length())
    if shift >= 0:
        return Fraction(-((-x.numerator << shift) // x.denominator), 1 << shift)
    return Fraction(-(-x.numerator // (x.denominator << -shift)) << -shift)


def certified_sup(epsilon: Fraction, renyi: Callable[[Fraction, Fraction], Interval]) -> Fraction:
    """A certified upper bound of ``sup_{alpha > 1} e(alpha) / alpha`` for a non-decreasing ``e`` with
    ``e(alpha) <= epsilon`` and ``e(alpha)`` inside ``renyi(epsilon, alpha)``, by the cover of ``(1, inf)`` of the
    module docstring, rounded up to :data:`_KEPT_BITS` significant bits (also used by
    :mod:`securedp.privacy.bounded_range_zcdp`)."""
    best = renyi(epsilon, _FIRST).upper  # bounds e(alpha) / alpha on (1, a_1]
    a, ratio = _FIRST, Fraction(2)
    while epsilon / a > best:
        ratio = min(Fraction(2), 2 * ratio - 1)  # try twice the last step's length first
        while True:
            b = Fraction(int(a * ratio * _GRID), _GRID)  # a point of the grid 2**-30, above a
            bound = renyi(epsilon, b).upper / a
            if bound <= best or ratio <= _FINEST:
                break
            ratio = 1 + (ratio - 1) / 2
        best, a = max(best, bound), b
    return _round_up(best)


@functools.lru_cache(maxsize=256)
def pure_zcdp(epsilon: Fraction) -> Fraction:
    """A certified upper bound of ``sup_{alpha > 1} e(alpha) / alpha`` (module docstring), never above
    ``epsilon**2 / 2``: the zCDP charged to a pure ``epsilon``-DP release."""
    classic = epsilon * epsilon / 2
    if epsilon < CERTIFIED_FROM:
        return classic
    return min(classic, certified_sup(epsilon, renyi_upper))
