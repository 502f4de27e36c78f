"""Conservative conversions between pure DP, zCDP and (epsilon, delta)-DP, with directed rounding.

* **pure -> zCDP**: an ``epsilon``-DP release is ``rho``-zCDP for ``rho`` =
  :func:`~securedp.privacy.pure_zcdp.pure_zcdp` (the sharp bound valid for every ``epsilon``-DP release,
  certified from above; ``epsilon**2 / 2`` of Bun & Steinke 2016, Prop. 1.4, below ``epsilon = 1/2``);
  an ``epsilon``-DP exponential mechanism is moreover ``epsilon``-bounded range, hence ``rho``-zCDP for the sharp
  bounded-range bound, certified from above and at most ``epsilon**2 / 8`` (:func:`bounded_range_to_zcdp`).
* **zCDP -> (epsilon, delta)** (Canonne, Kamath & Steinke 2020, "The Discrete Gaussian for Differential
  Privacy", Prop. 12 with Def. of zCDP as (``alpha``, ``alpha rho``)-RDP for all ``alpha > 1``, i.e. their
  Corollary 13): for *every* ``alpha > 1``, ``rho``-zCDP implies (``eps(alpha)``, ``delta``)-DP with
  ``eps(alpha) = alpha rho + (ln(1/delta) - ln(alpha)) / (alpha - 1) + ln(1 - 1/alpha)``. Any ``alpha``
  gives a valid epsilon, so :func:`zcdp_to_approx_dp` picks a near-optimal rational ``alpha`` in floating
  point, then evaluates ``eps(alpha)`` by interval arithmetic at 256 bits and returns the *upper* end (exact
  rational), or Bun & Steinke's ``rho + 2 sqrt(rho ln(1/delta))`` (Prop. 1.3, also rounded up) when that is
  smaller (it never is by more than rounding, but the smaller of two valid bounds is valid).
  OpenDP 0.16 (``make_zCDP_to_approxDP``, its ``cks20`` module) computes the same infimum.
* **(epsilon, delta) -> zCDP budget**: the largest ``rho`` whose conversion above is at most ``epsilon``.
  For a fixed ``alpha``, ``eps(alpha) <= epsilon`` iff ``rho <= (epsilon - c(alpha)) / alpha`` with
  ``c(alpha) = (ln(1/delta) - ln(alpha)) / (alpha - 1) + ln(1 - 1/alpha)``; :func:`approx_dp_to_zcdp` picks
  a near-optimal ``alpha`` and returns the *lower* end of that quotient (rounded down to a dyadic of 256
  significant bits, less a relative ``2**-40`` so that converting back at the forward ``alpha`` stays
  within ``epsilon``), or the Bun-Steinke ``rho = epsilon**2 / (sqrt(L + epsilon) + sqrt(L))**2``
  (``L = ln(1/delta)``, denominator rounded up) when that is larger: never above the true value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import gmpy2

from securedp.hazmat.exact.interval import Interval
from securedp.hazmat.exact.rational import positive_rational, probability
from securedp.privacy.bounded_range_zcdp import bounded_range_zcdp
from securedp.privacy.pure_zcdp import pure_zcdp

PRECISION = 256
_MARGIN = Fraction(1, 1 << 40)


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
    """The zCDP of a pure ``epsilon``-DP release (:func:`~securedp.privacy.pure_zcdp.pure_zcdp`: at most
    ``epsilon**2 / 2``, certified from above)."""
    return pure_zcdp(positive_rational(epsilon, "epsilon"))


def bounded_range_to_zcdp(epsilon: Any) -> Fraction:
    """The zCDP of an ``epsilon``-bounded-range release (:func:`~securedp.privacy.bounded_range_zcdp.
    bounded_range_zcdp`: the sharp bound certified from above, at most ``epsilon**2 / 8``, Cesar & Rogers 2021,
    Lemma 3.2); an ``epsilon``-DP exponential mechanism is ``epsilon``-bounded range (Durfee & Rogers 2019,
    Lemma 3.1): see :mod:`securedp.mechanisms.exponential`."""
    return bounded_range_zcdp(positive_rational(epsilon, "epsilon"))


def _golden(f: Callable[[float], float], lo: float = -60.0, hi: float = 60.0) -> float:
    """The argmin of a unimodal ``f`` on ``[lo, hi]`` by golden-section search (floating point: it only picks the
    ``alpha`` at which the exact bound is then evaluated, so its error costs tightness, never validity)."""
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(160):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    return (a + b) / 2


def _cks_offset(log_inv: float, t: float) -> float:
    """``c(alpha) = (L - ln alpha) / (alpha - 1) + ln(1 - 1/alpha)`` at ``alpha = 1 + e**t`` (floating point)."""
    x = math.exp(t)  # float-ok: only picks alpha
    return (log_inv - math.log1p(x)) / x + t - math.log1p(x)  # float-ok: only picks alpha


def _cks_alpha(objective: Callable[[float], float]) -> Fraction | None:
    """The rational ``alpha = 1 + e**t`` at the floating-point argmin of ``objective(t)``, or ``None`` when the
    floating-point search overflows (then only the Bun-Steinke bound is used)."""
    try:
        t = _golden(objective)
        return 1 + Fraction(math.exp(t))  # float-ok: only picks alpha
    except (OverflowError, ValueError, ZeroDivisionError):
        return None


def _near_optimal_alpha(amount: Fraction, delta: Fraction,
                        objective: Callable[[float, float, float], float]) -> Fraction | None:
    """The rational ``alpha`` minimising ``objective(t, amount, ln(1/delta))`` over ``alpha = 1 + e**t`` in
    floating point, or ``None`` when ``amount`` or ``1/delta`` does not fit a float (then Bun-Steinke alone)."""
    try:
        amount_f, log_inv = _as_float(amount), math.log(_as_float(1 / delta))  # float-ok: only picks alpha
    except OverflowError:
        return None
    return _cks_alpha(lambda t: objective(t, amount_f, log_inv))


def _cks_offset_interval(alpha: Fraction, delta: Fraction) -> Interval:
    """An interval holding ``c(alpha)`` exactly (directed rounding)."""
    log_inv = Interval.exact(1 / delta, PRECISION).log()
    log_alpha = Interval.exact(alpha, PRECISION).log()
    return (log_inv - log_alpha) / Interval.exact(alpha - 1, PRECISION) + Interval.exact(
        (alpha - 1) / alpha, PRECISION).log()


def _as_float(x: Fraction) -> float:
    value = float(x)
    if not math.isfinite(value) or value <= 0:
        raise OverflowError
    return value


def _bun_steinke_epsilon(r: Fraction, d: Fraction) -> Fraction:
    """An upper bound on ``rho + 2 sqrt(rho ln(1/delta))`` (Bun & Steinke 2016, Prop. 1.3)."""
    log_inv = _log_inverse_up(d)
    with _up():
        q = gmpy2.mpq(r.numerator, r.denominator)
        root = gmpy2.sqrt(gmpy2.mpfr(q) * log_inv)
        total = gmpy2.mpfr(q) + 2 * root
    return _exact(total)


def zcdp_to_approx_dp(rho: Any, delta: Any) -> Fraction:
    """An upper bound on ``inf_{alpha > 1} eps(alpha)`` (module docstring): ``rho``-zCDP gives (this,
    ``delta``)-DP."""
    r = positive_rational(rho, "rho")
    d = _delta(delta)
    bound = _bun_steinke_epsilon(r, d)
    alpha = _near_optimal_alpha(r, d, lambda t, rf, log_inv: (1 + math.exp(t)) * rf  # float-ok: only picks alpha
                                + _cks_offset(log_inv, t))
    if alpha is None:
        return bound
    cks = Interval.exact(alpha * r, PRECISION) + _cks_offset_interval(alpha, d)
    return min(bound, cks.upper)


def _bun_steinke_rho(eps: Fraction, d: Fraction) -> Fraction:
    """A lower bound on ``epsilon**2 / (sqrt(L + epsilon) + sqrt(L))**2``, ``L = ln(1/delta)``."""
    log_inv = _log_inverse_up(d)
    with _up():
        e = gmpy2.mpq(eps.numerator, eps.denominator)
        den = (gmpy2.sqrt(log_inv + gmpy2.mpfr(e)) + gmpy2.sqrt(log_inv)) ** 2
    return eps * eps / _exact(den)


def _round_down(exact: Fraction) -> Fraction:
    shift = PRECISION - (exact.numerator.bit_length() - exact.denominator.bit_length())
    if shift <= 0:
        return Fraction(exact.numerator // exact.denominator)
    return Fraction((exact.numerator << shift) // exact.denominator, 1 << shift)


def approx_dp_to_zcdp(epsilon: Any, delta: Any) -> Fraction:
    """A lower bound on the largest ``rho`` with ``rho``-zCDP implying (``epsilon``, ``delta``)-DP (module
    docstring)."""
    eps = positive_rational(epsilon, "epsilon")
    d = _delta(delta)
    best = _bun_steinke_rho(eps, d)
    alpha = _near_optimal_alpha(eps, d, lambda t, ef, log_inv: -(ef - _cks_offset(log_inv, t))
                                / (1 + math.exp(t)))  # float-ok: only picks alpha
    if alpha is not None:
        cks = ((Interval.exact(eps, PRECISION) - _cks_offset_interval(alpha, d)) / Interval.exact(
            alpha, PRECISION)).lower * (1 - _MARGIN)
        best = max(best, cks)
    return _round_down(best)
