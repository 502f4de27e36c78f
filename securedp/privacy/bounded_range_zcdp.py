"""The zCDP of an ``epsilon``-bounded-range release (an exponential mechanism): the least ``rho`` valid for every
such release, certified from above.

**Bounded range.** A release is ``epsilon``-bounded range (Durfee & Rogers 2019) when, for any neighbouring inputs
with output laws ``P`` and ``Q``, its privacy loss ``ln(P(y) / Q(y))`` takes values in an interval of width
``epsilon``; an ``epsilon``-DP exponential mechanism is (:mod:`securedp.mechanisms.exponential`). Cesar & Rogers
(2021, "Bounding, concentrating, and truncating", Lemma 3.2) bound its zCDP by ``epsilon**2 / 8`` (Hoeffding's
lemma); the least valid bound is lower, x1.014 at ``epsilon = 1``, x1.054 at 2, x1.20 at 4.

**The bound** (the two-point argument of Bun & Steinke 2016, Prop. 3.3, on an interval of width ``epsilon``; the
tight zCDP of the worst bounded-range mechanism is also derived by Harrison & Manurangsi 2025, "Exact zCDP
characterizations for fundamental differentially private mechanisms", arXiv:2510.25746). The likelihood ratio
``R = P / Q`` lies in ``[u, u e^eps]`` for some ``u`` and has mean 1 under ``Q``, so ``e^-eps <= u <= 1``. For
``alpha > 1``, ``v -> v**alpha`` lies below its chord on that interval, so ``E_Q[R**alpha]`` is at most the value
of the two-point law on its ends with mean 1, which puts ``q = (1 - u) / (u (e^eps - 1))`` on ``u e^eps``:

    ``M(u) = u**alpha + q u**alpha (e^(alpha eps) - 1) = u**(alpha - 1) (c - (c - 1) u)``,
    ``c = (e^(alpha eps) - 1) / (e^eps - 1)``.

``c > alpha`` (``x -> e^(x eps)`` is strictly convex, so above its chord through ``x = 0`` and ``x = 1``
at ``x = alpha``), and ``log M = (alpha - 1) ln u + ln(c - (c - 1) u)`` is strictly concave in ``u``,
greatest where ``(alpha - 1) / u = (c - 1) / (c - (c - 1) u)``, at ``u* = (alpha - 1) c / (alpha (c - 1)) < 1``,
where ``c - (c - 1) u* = c / alpha``. So every ``epsilon``-bounded-range release satisfies (``alpha``,
``e(alpha)``)-Rényi DP with

    ``e(alpha) = ln(c / alpha) / (alpha - 1) + ln((alpha - 1) c / (alpha (c - 1)))``

(both orders of ``P`` and ``Q``: the reversed loss also lies in an interval of width ``epsilon``), and no smaller
function is valid for all of them: ``u*`` lies in ``(e^-eps, 1)`` (``M = 1`` at both ends and ``log M`` is
concave), and the two-point law there is the law of an exponential mechanism selecting one of two candidates
whose scores move apart by the whole sensitivity (up to its score grid; ``tests/unit/privacy/
test_bounded_range_zcdp.py`` enumerates such instances). ``e`` is the supremum of Rényi divergences of one order
``alpha``, each non-decreasing in ``alpha`` (van Erven & Harremoës 2014, Theorem 3), so it is non-decreasing, and
``e(alpha) <= epsilon`` (the loss is at most ``epsilon`` in absolute value). The release is ``rho*``-zCDP with
``rho* = sup_{alpha > 1} e(alpha) / alpha``, measured at ``alpha -> 1`` (the Kullback-Leibler bound
``eps / (1 - e^-eps) - 1 - ln(eps / (1 - e^-eps))`` of Cesar & Rogers): 0.1233 at ``epsilon = 1``, 0.4745 at 2.

**Equal shares.** ``rho*(epsilon) >= D rho*(epsilon / D)``: the product of ``D`` copies of an
``epsilon / D``-bounded-range pair of laws is an ``epsilon``-bounded-range pair (the losses add) with ``D`` times
its Rényi divergence at every order. So a release made of ``D`` selections at ``epsilon / D`` each, even chosen
adaptively (the recursive quantile split's depths: zCDP composes), is charged no less than it loses by
``rho*(epsilon)``, as one ``epsilon``-bounded-range release is.

**The certificate** is :func:`~securedp.privacy.pure_zcdp.certified_sup`'s, the one of pure releases: ``(1, inf)``
covered by intervals on which ``e(b) / a`` bounds ``e(alpha) / alpha``, every ``e(b)`` computed by interval
arithmetic with directed rounding (:class:`~securedp.hazmat.exact.interval.Interval`), the largest bound rounded up
to 40 significant bits: never below ``rho*``, above it by a factor below ``1 + 2.5 * 10**-4`` (measured at
``epsilon`` 3/4 to 1024 against the Kullback-Leibler value). :func:`bounded_range_zcdp` returns the smaller of it
and ``epsilon**2 / 8``; below ``epsilon = 3/4`` it returns ``epsilon**2 / 8`` itself (within x1.008 of ``rho*``),
and above 1024 the exact ``min(epsilon**2 / 8, epsilon)`` (within x1.008: ``rho* > epsilon - 1 - ln(epsilon)``). The
charge is a dyadic rational of at most 40 significant bits (denominator at most ``2**44`` from ``epsilon = 3/4``),
or the exact ``epsilon**2 / 8`` of a bounded parameter. It depends on ``epsilon`` alone (public) and is computed
once per value.

**The inverse.** :func:`bounded_range_epsilon` gives a rho-priced selection the ``epsilon = j / grid`` at which it
runs, with ``bounded_range_zcdp(j / grid) <= rho``: below ``3/4`` the largest ``j`` with ``(j / grid)**2 / 8 <=
rho``; above, ``j = floor(grid eps_KL(rho) (1 - 2**-10)**i)`` for the least ``i >= 1`` whose certified charge fits
(never below the ``epsilon**2 / 8`` one), where ``eps_KL(rho)`` inverts the Kullback-Leibler bound by bisection in
correctly rounded MPFR arithmetic (the same ``j`` on every machine): about ``2**-10`` below the largest
``epsilon``, so the selection's sharp zCDP is within x1.003 of ``rho`` (tested), for one certificate per ``rho``.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import gmpy2

from securedp.hazmat.exact.interval import Interval, rounding_context
from securedp.privacy.pure_zcdp import certified_sup

_PRECISION = 256
CERTIFIED_FROM = Fraction(3, 4)
"""Below this ``epsilon`` the charge is ``epsilon**2 / 8`` (within x1.008 of the sharp bound)."""
CERTIFIED_UP_TO = Fraction(1024)
"""Above this ``epsilon`` the charge is ``min(epsilon**2 / 8, epsilon)``, exact (within x1.008 of the sharp bound)."""


@functools.lru_cache(maxsize=8)
def _of_epsilon(epsilon: Fraction) -> tuple[Interval, Interval, Interval]:
    """``epsilon``, ``e^eps`` and ``e^eps - 1`` as intervals: computed once for the certificate's hundreds of
    orders (the same operations, so the same ends, as computing them for each)."""
    eps = Interval.exact(epsilon, _PRECISION)
    e_eps = eps.exp()
    return eps, e_eps, e_eps - 1


def renyi_upper(epsilon: Fraction, alpha: Fraction) -> Interval:
    """An interval holding ``e(alpha)``, the Rényi DP of order ``alpha > 1`` of any ``epsilon``-bounded-range
    release (module docstring)."""
    eps, e_eps, e_eps_less_one = _of_epsilon(epsilon)
    a = Interval.exact(alpha, _PRECISION)
    a_less_one = Interval.exact(alpha - 1, _PRECISION)
    c = ((eps * a).exp() - 1) / e_eps_less_one
    c_less_one = e_eps * ((eps * a_less_one).exp() - 1) / e_eps_less_one  # c - 1, without cancellation
    return (c / a).log() / a_less_one + (a_less_one * c / (a * c_less_one)).log()


@functools.lru_cache(maxsize=1024)
def bounded_range_zcdp(epsilon: Fraction) -> Fraction:
    """A certified upper bound of ``sup_{alpha > 1} e(alpha) / alpha`` (module docstring), never above
    ``epsilon**2 / 8``: the zCDP charged to an ``epsilon``-bounded-range release."""
    eighth = epsilon * epsilon / 8
    if epsilon < CERTIFIED_FROM:
        return eighth
    if epsilon > CERTIFIED_UP_TO:
        return min(eighth, epsilon)
    return min(eighth, certified_sup(epsilon, renyi_upper))


def _kl_bound(epsilon: gmpy2.mpfr) -> gmpy2.mpfr:
    """``rho*`` at ``alpha -> 1`` (module docstring), in the current context: only to bracket the inverse."""
    ratio = epsilon / -gmpy2.expm1(-epsilon)
    return ratio - 1 - gmpy2.log(ratio)


def _near_inverse(rho: Fraction) -> Fraction:
    """The ``epsilon`` at which the Kullback-Leibler bound is ``rho``, by bisection in correctly rounded MPFR
    arithmetic at 128 bits (deterministic; it only guides :func:`bounded_range_epsilon`)."""
    with rounding_context(128, gmpy2.RoundToNearest):
        target = gmpy2.mpfr(gmpy2.mpq(rho.numerator, rho.denominator))
        lo, hi = gmpy2.mpfr(0), 2 * gmpy2.sqrt(2 * target) + 4 * target + 8  # KL(hi) > rho
        for _ in range(160):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _kl_bound(mid) <= target else (lo, mid)
        n, d = hi.as_integer_ratio()
    return Fraction(int(n), int(d))


_MARGIN = 1 - Fraction(1, 1 << 10)


@functools.lru_cache(maxsize=1024)
def bounded_range_epsilon(rho: Fraction, grid: int) -> int:
    """The ``j`` of the ``epsilon = j / grid`` at which an exponential mechanism charged ``rho`` (zCDP) runs:
    ``bounded_range_zcdp(j / grid) <= rho`` (module docstring, "The inverse")."""
    low = math.isqrt((8 * rho.numerator * grid * grid) // rho.denominator)  # epsilon**2 / 8 <= rho: it fits
    if Fraction(low + 1, grid) < CERTIFIED_FROM:
        return low  # the charge is epsilon**2 / 8 up to there: low is the largest
    j = math.floor(_near_inverse(rho) * grid * _MARGIN)
    while j > low and bounded_range_zcdp(Fraction(j, grid)) > rho:
        j = math.floor(j * _MARGIN)
    return max(j, low)
