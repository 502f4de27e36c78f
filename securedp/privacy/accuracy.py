"""Confidence intervals of the exact noise laws, bounded rigorously.

A release ``A + Z`` of an exact aggregate ``A`` (in lattice units) with integer
noise ``Z`` is reported with a half-width ``t`` such that
``P(|Z| <= t) >= 1 - alpha``: the interval ``[A + Z - t, A + Z + t]`` then
covers ``A`` with probability at least ``1 - alpha``, whatever ``A`` is. The
half-width depends only on the noise law and ``alpha`` (public), never on the
data.

* **Discrete Laplace** of scale ``b`` (``P(Z = k)`` proportional to
  ``q^|k|``, ``q = exp(-1/b)``): ``P(|Z| > t) = 2 q^(t+1) / (1 + q)``
  exactly. :func:`laplace_halfwidth` returns the *smallest* ``t`` with
  ``2 q^(t+1) / (1 + q) <= alpha``; the tail is evaluated with MPFR under
  directed rounding, and when an enclosure cannot decide between ``t - 1``
  and ``t`` the larger is kept, so the coverage statement is never wrong.
* **Discrete Gaussian** of variance parameter ``sigma^2``: Canonne, Kamath
  and Steinke (2020, Proposition 25) bound its tail by the continuous one,
  ``P(Z >= m) <= P(N(0, sigma^2) >= m - 1)``, so
  ``P(|Z| > t) <= erfc(t / (sigma sqrt 2))``. :func:`gaussian_halfwidth`
  returns the smallest ``t`` for which that bound (rounded up) is
  ``<= alpha``: coverage at least ``1 - alpha``, conservative by the bound.

``alpha`` is any rational in ``(0, 1)`` accepted by
:func:`~securedp.hazmat.exact.rational.to_rational` (``"0.05"`` is one
twentieth).
"""

from __future__ import annotations

from fractions import Fraction

import gmpy2

from securedp.hazmat.exact import bounds
from securedp.hazmat.exact.rational import positive_rational, to_rational
from securedp.hazmat.exact.search import least_holding

_PRECISION = 128


def check_alpha(alpha: object) -> Fraction:
    """``alpha`` as an exact rational in ``(0, 1)``, or ``ValueError`` naming it."""
    value = bounds.parameter(to_rational(alpha, "alpha"), "alpha")
    if not 0 < value < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    return value


def _mpq(value: Fraction) -> gmpy2.mpq:
    return gmpy2.mpq(value.numerator, value.denominator)


def _laplace_tail(scale: Fraction, t: int, rounding: int, bits: int) -> gmpy2.mpfr:
    """``2 q^(t+1) / (1 + q)`` with ``q = exp(-1/scale)``, rounded in the direction ``rounding``.

    The expression decreases in ``q`` through ``1 + q`` and increases through ``q^(t+1)``;
    ``exp(-(t+1)/scale) * 2 / (1 + q)`` is bounded by rounding each factor the safe way.
    """
    other = gmpy2.RoundDown if rounding == gmpy2.RoundUp else gmpy2.RoundUp
    with gmpy2.context(precision=bits, round=other, emin=gmpy2.get_emin_min()):
        denominator = 1 + gmpy2.exp(-_mpq(1 / scale))
    with gmpy2.context(precision=bits, round=rounding, emin=gmpy2.get_emin_min()):
        return 2 * gmpy2.exp(-_mpq(Fraction(t + 1) / scale)) / denominator


def laplace_halfwidth(scale: object, alpha: object) -> int:
    """The smallest ``t >= 0`` with ``P(|Z| > t) <= alpha`` for discrete Laplace ``Z`` of ``scale``."""
    b = positive_rational(scale, "scale")
    a = _mpq(check_alpha(alpha))
    # The closed form t = ceil(b ln(2 / (alpha (1 + q)))) - 1, evaluated with enough bits that its error is
    # below one unit, locates t; the directed tail tests below then settle it exactly.
    bits = _PRECISION + 2 * max(b.numerator.bit_length() - b.denominator.bit_length(), 0)
    with gmpy2.context(precision=bits, round=gmpy2.RoundToNearest, emin=gmpy2.get_emin_min()):
        q = gmpy2.exp(-_mpq(1 / b))
        guess = int(gmpy2.ceil(_mpq(b) * gmpy2.log(2 / (a * (1 + q))))) - 1
    t = max(guess, 0)
    while _laplace_tail(b, t, gmpy2.RoundUp, bits) > a:  # not yet proven small enough: widen
        t += 1
    while t > 0 and _laplace_tail(b, t - 1, gmpy2.RoundUp, bits) <= a:  # a narrower one is proven: narrow
        t -= 1
    return t


def _gaussian_bound(sigma2: Fraction, t: int) -> gmpy2.mpfr:
    """``erfc(t / sqrt(2 sigma^2))`` rounded up: an upper bound of ``P(|Z| > t)``."""
    with gmpy2.context(precision=_PRECISION, round=gmpy2.RoundDown, emin=gmpy2.get_emin_min()):
        x = t / gmpy2.sqrt(2 * _mpq(sigma2)) if t else gmpy2.mpfr(0)
    with gmpy2.context(precision=_PRECISION, round=gmpy2.RoundUp, emin=gmpy2.get_emin_min()):
        return gmpy2.erfc(x)


def gaussian_halfwidth(variance: object, alpha: object) -> int:
    """The smallest ``t >= 0`` whose Gaussian tail bound ``erfc(t / sqrt(2 sigma^2))`` is ``<= alpha``."""
    sigma2 = positive_rational(variance, "variance")
    a = _mpq(check_alpha(alpha))
    least = least_holding(lambda t: _gaussian_bound(sigma2, t) <= a, 0)  # the tail bound decreases in t
    assert least is not None  # no limit: the bound falls below any alpha > 0
    return least
