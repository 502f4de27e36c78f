"""Exact numeric kernels shared by the samplers and the lattice: each defined once, here.

* :func:`round_half_even`: a rational rounded to the nearest integer, ties to
  even, in integer arithmetic.
* :func:`directed_products` (with :func:`scaled_bounds`): the running products ``a_0, a_0 f_0, a_0 f_0 f_1,
  ...`` of interval factors in fixed point, the lower ends rounded toward
  -inf and the upper ends toward +inf. A product of lower (upper) bounds of
  non-negative numbers, rounded down (up), is a lower (upper) bound of the
  product, so every entry is a rigorous enclosure (the powers ``q**r`` of the
  geometric levels, the slot weights ``exp(-rate * g)`` of the selections,
  the discrete Gaussian's acceptances).
* :func:`tabulated_floors`: ``floor(c_k * 2**width)`` from such enclosures,
  recomputing on its own any entry whose enclosure is not within one unit.
* :func:`dyadic_power`, :func:`dyadic_digit`: ``base**e * 2**k`` and
  ``n**e / (n**e + d**e) * 2**k`` when they are integers (thresholds that are
  exact dyadic rationals, which interval bounds can never collapse onto).
* :func:`exp_neg_window`: integers ``lo <= exp(-x) * 2**(e + 64) <= hi`` by a
  fixed sequence of MPFR operations (the same work for every ``x >= 0``).

The exact number types themselves live next door: :func:`~securedp.hazmat.exact.rational.to_rational`
is the one parser of user-supplied numbers, and :func:`~securedp.hazmat.exact.interval.exp_neg`
the one real ``exp(-x) * 2**shift`` the resolvers read bits of.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from fractions import Fraction
from itertools import islice
from typing import Any

import gmpy2

from securedp.hazmat.exact.interval import Interval, Real, ceil_scaled, floor_scaled, rounding_context

WORD_BITS = 64
WINDOW_PREC = 2 * WORD_BITS
"""Working precision of :func:`exp_neg_window`: ``hi - lo <= 2`` for every ``e <= 2**20``."""


def round_half_even(num: int, den: int) -> int:
    """``num / den`` (``den > 0``) rounded to the nearest integer, ties to even, exactly."""
    q, r = divmod(num, den)
    twice = 2 * r
    if twice > den or (twice == den and q & 1):
        q += 1
    return q


def scaled_bounds(x: Interval, bits: int) -> tuple[int, int]:
    """Integers ``lo <= x * 2**bits <= hi`` from an interval (its ends floored and ceiled)."""
    return floor_scaled(x.lo, bits, x.prec), ceil_scaled(x.hi, bits, x.prec)


def directed_products(start: tuple[int, int], factors: Iterable[tuple[int, int]], count: int,
                      bits: int) -> tuple[list[int], list[int]]:
    """Integers ``lo_k <= a_k * 2**bits <= hi_k`` for ``a_k = a * f_0 * ... * f_(k-1)``, ``k < count``.

    ``start`` and each factor are integer bounds ``(lo, hi)`` on a non-negative
    real times ``2**bits`` (:func:`scaled_bounds`). Fixed-point products of
    directed-rounded bounds: ``lo_(k+1) = floor(lo_k * F_lo / 2**bits)`` never
    exceeds ``a_(k+1) * 2**bits`` when ``F_lo <= f_k * 2**bits``, and
    symmetrically for the upper ends, so every entry is rigorous; each step
    loses at most one unit, so ``bits`` should cover the ``log2(count)`` bits
    the products can lose on top of the precision wanted. ``factors`` must
    yield at least ``count - 1`` pairs.
    """
    lo, hi = start
    lows: list[int] = []
    highs: list[int] = []
    for f_lo, f_hi in islice(factors, max(count - 1, 0)):
        lows.append(lo)
        highs.append(hi)
        lo = (lo * f_lo) >> bits
        hi = -(-(hi * f_hi) >> bits)
    if count:
        lows.append(lo)
        highs.append(hi)
    return lows, highs


def tabulated_floors(lows: list[int], highs: list[int], bits: int, width: int,
                     exact: Callable[[int], Real]) -> list[int]:
    """``floor(c_k * 2**width)`` for reals with ``lows[k] <= c_k * 2**bits <= highs[k]`` (``bits >= width``).

    An entry whose scaled enclosure spans more than one unit is recomputed from
    ``exact(k)`` (:meth:`Real.floor_ceil`), so every floor is rigorous.
    """
    drop = bits - width
    out = []
    for k, (lo, hi) in enumerate(zip(lows, highs, strict=True)):
        low = lo >> drop
        out.append(low if -(-hi >> drop) - low <= 1 else exact(k).floor_ceil(width)[0])
    return out


def dyadic_power(base: Fraction, e: int, k: int) -> int | None:
    """``base**e * 2**k`` when it is an integer, else ``None`` (``base`` in lowest terms)."""
    d = base.denominator
    if d & (d - 1):  # an odd factor of d**e never cancels against n**e
        return None
    j = d.bit_length() - 1
    if j * e > k:
        return None
    power: int = base.numerator**e
    return power << (k - j * e)


def dyadic_digit(n: int, d: int, e: int, k: int) -> int | None:
    """``n**e / (n**e + d**e) * 2**k`` when it is an integer, else ``None`` (``n / d`` in lowest terms)."""
    if e % 2 == 0:
        return None  # odd squares are 1 mod 8: n**e + d**e is 2 mod 8 or odd, and > 2
    top: int = n**e
    den: int = top + d**e  # coprime to n**e
    j = den.bit_length() - 1
    if den & (den - 1) or j > k:
        return None
    return top << (k - j)


def _e_bounds() -> tuple[Any, Any]:
    with rounding_context(WINDOW_PREC + 8, gmpy2.RoundDown):
        low = gmpy2.exp(gmpy2.mpfr(1))
    with rounding_context(WINDOW_PREC + 8, gmpy2.RoundUp):
        high = gmpy2.exp(gmpy2.mpfr(1))
    return low, high


_E_LO, _E_HI = _e_bounds()


def exp_neg_window(x: Any, e: int) -> tuple[int, int]:
    """Integers ``lo <= exp(-x) * 2**(e + 64) <= hi`` for a rational ``x >= 0`` (an mpq, Fraction or int).

    Computed as ``exp(-(x + 1)) * e`` with directed rounding at
    :data:`WINDOW_PREC` bits: the argument of ``exp`` is always ``>= 1``, so the
    same MPFR operations run whatever ``x`` (the selections' exponent groups
    rely on that for value-independent time).
    """
    with rounding_context(WINDOW_PREC, gmpy2.RoundDown):
        y_down = gmpy2.mpfr(x) + 1
    with rounding_context(WINDOW_PREC, gmpy2.RoundUp):
        y_up = gmpy2.mpfr(x) + 1
        high = gmpy2.ceil(gmpy2.mul_2exp(gmpy2.exp(-y_down) * _E_HI, e + WORD_BITS))
    with rounding_context(WINDOW_PREC, gmpy2.RoundDown):
        low = gmpy2.floor(gmpy2.mul_2exp(gmpy2.exp(-y_up) * _E_LO, e + WORD_BITS))
    return int(low), int(high)


def inverse_ln2_low() -> Fraction:
    """A rational ``L <= 1 / ln 2`` with ``L * ln 2 > 1 - 2**-250`` (MPFR at 256 bits, directed rounding)."""
    with rounding_context(256, gmpy2.RoundUp):
        ln2_up = gmpy2.log(2)
    with rounding_context(256, gmpy2.RoundDown):
        low = 1 / ln2_up
    return Fraction(*low.as_integer_ratio())
