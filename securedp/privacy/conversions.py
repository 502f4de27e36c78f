"""Conservative conversions between pure DP, zCDP and (epsilon, delta)-DP, with directed rounding.

* **pure -> zCDP** (Bun & Steinke 2016, Prop. 1.4): ``epsilon``-DP implies
  ``rho``-zCDP with ``rho = epsilon**2 / 2``, exactly.
* **zCDP -> (epsilon, delta)** (Bun & Steinke 2016, Prop. 1.3): ``rho``-zCDP
  implies ``(rho + 2 * sqrt(rho * ln(1/delta)), delta)``-DP. The epsilon is
  computed in MPFR with every operation rounded *up* and returned as the
  exact rational value of the result, so it is never below the true value.
* **(epsilon, delta) -> zCDP budget**: the largest ``rho`` whose conversion
  above is at most ``epsilon``: ``rho = (sqrt(L + epsilon) - sqrt(L))**2
  = epsilon**2 / (sqrt(L + epsilon) + sqrt(L))**2`` with ``L = ln(1/delta)``;
  the denominator is rounded *up* and the quotient *down* (to a multiple of
  ``2**-PRECISION`` scaled by its magnitude), so the ``rho`` returned is
  never above the true value.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import gmpy2

from securedp.hazmat.exact.rational import positive_rational, probability

PRECISION = 256


def _delta(delta: Any) -> Fraction:
    d = probability(delta, "delta")
    if not 0 < d < 1:
        raise ValueError("delta must lie strictly between 0 and 1")
    return d


def _up() -> Any:
    return gmpy2.context(precision=PRECISION, round=gmpy2.RoundUp)


def _exact(x: Any) -> Fraction:
    n, d = x.as_integer_ratio()
    return Fraction(int(n), int(d))


def _log_inverse_up(delta: Fraction) -> Any:
    with _up():
        return gmpy2.log(gmpy2.mpq(delta.denominator, delta.numerator))


def pure_to_zcdp(epsilon: Any) -> Fraction:
    """``rho = epsilon**2 / 2`` (exact)."""
    eps = positive_rational(epsilon, "epsilon")
    return eps * eps / 2


def zcdp_to_approx_dp(rho: Any, delta: Any) -> Fraction:
    """An upper bound on ``rho + 2 sqrt(rho ln(1/delta))``: ``rho``-zCDP gives (this, ``delta``)-DP."""
    r = positive_rational(rho, "rho")
    d = _delta(delta)
    log_inv = _log_inverse_up(d)
    with _up():
        q = gmpy2.mpq(r.numerator, r.denominator)
        root = gmpy2.sqrt(gmpy2.mpfr(q) * log_inv)
        total = gmpy2.mpfr(q) + 2 * root
    return _exact(total)


def approx_dp_to_zcdp(epsilon: Any, delta: Any) -> Fraction:
    """A lower bound on the largest ``rho`` with ``rho``-zCDP implying (``epsilon``, ``delta``)-DP."""
    eps = positive_rational(epsilon, "epsilon")
    d = _delta(delta)
    log_inv = _log_inverse_up(d)
    with _up():
        e = gmpy2.mpq(eps.numerator, eps.denominator)
        den = (gmpy2.sqrt(log_inv + gmpy2.mpfr(e)) + gmpy2.sqrt(log_inv)) ** 2
    exact = eps * eps / _exact(den)
    shift = PRECISION - (exact.numerator.bit_length() - exact.denominator.bit_length())
    if shift <= 0:
        return Fraction(exact.numerator // exact.denominator)
    return Fraction((exact.numerator << shift) // exact.denominator, 1 << shift)
