"""Clamping and rounding of one record onto lattice units, exactly: :class:`Clamp` (see
:mod:`securedp.lattice.screen` for the rule, the accepted records and the fast paths).

For bounds ``[lo_u, hi_u]`` (in units of ``step``) a record ``x`` becomes
``round_half_even(clamp(x, lo_u * step, hi_u * step) / step)``. A record is clamped before any expensive
conversion: its magnitude is read from its size first, so a huge or tiny record costs constant time. A record
is also judged by its length before it is read (:mod:`securedp.hazmat.exact.bounds`): text of more than
``CELL_CHARS`` characters, a ``Decimal`` of more than ``CELL_CHARS`` digits, and a rational within the bounds
with a term of more than ``CELL_BITS`` bits are unusable, so no record costs time that grows with its digits.
"""

from __future__ import annotations

import decimal
import math
import numbers
import re
import unicodedata
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import gmpy2
import numpy as np

from securedp.hazmat.exact.bounds import CELL_BITS, CELL_CHARS, cell_too_long
from securedp.hazmat.exact.kernels import round_half_even
from securedp.lattice.arrays import INT64_MAX, TIE_TOLERANCE, float_lattice_constants

_FLOAT_EXACT = 1 << 53
_APPROX_LIMIT = 1 << 50
DECIMAL_RE = re.compile(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*")
RATIO_RE = re.compile(r"\s*([+-]?\d+)\s*/\s*(\d+)\s*")
_MPZ = type(gmpy2.mpz(0))
_MPQ = type(gmpy2.mpq(0, 1))
_EXPONENT_DIGITS = 15
"""Numeric text whose exponent has more significant digits than this is read with the exponent ``+/- 10**15``."""


def text_integer(text: str) -> gmpy2.mpz:
    """The integer of a signed run of decimal digits (ASCII or any Unicode decimal digits, as :data:`RATIO_RE`
    matches them), by gmpy2: Python's ``int`` refuses more than 4,300 digits."""
    ascii_text = text if text.isascii() else "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c
                                                     for c in text)
    return gmpy2.mpz(ascii_text)


def text_decimal(text: str) -> decimal.Decimal:
    """The ``Decimal`` of numeric text matching :data:`DECIMAL_RE`, for screening: exact, except that an exponent
    of more than 15 significant digits (which ``Decimal`` refuses past about ``10**18``) becomes ``+/- 10**15``.
    That changes no verdict: a text shorter than ``10**15`` characters is then beyond every bound, or a nonzero
    value below every lattice step (not whole), or zero, exactly as it was."""
    stripped = text.strip()
    mantissa, e, exponent = stripped.replace("E", "e").partition("e")
    if e:
        sign = exponent[:1] if exponent[:1] in "+-" else ""
        digits = exponent[len(sign):]
        first = next((i for i, c in enumerate(digits) if unicodedata.digit(c) != 0), len(digits))
        if len(digits) - first > _EXPONENT_DIGITS:
            return decimal.Decimal(f"{mantissa}e{sign or '+'}1{'0' * _EXPONENT_DIGITS}")
    return decimal.Decimal(stripped)


def _float_ceil(q: Fraction) -> float:
    """The smallest float >= q (``inf`` if none)."""
    try:
        f = float(q)  # float-ok: correctly rounded, then corrected exactly below
    except OverflowError:
        return math.inf if q > 0 else -1.7976931348623157e308
    if math.isinf(f):
        return f if f > 0 else -1.7976931348623157e308
    if Fraction(f) < q:
        f = math.nextafter(f, math.inf)
    return f


def _float_floor(q: Fraction) -> float:
    """The largest float <= q (``-inf`` if none)."""
    return -_float_ceil(-q)


class Clamp:
    """Precomputed constants for clamping to ``[lo_u, hi_u]`` units of ``step``.

    For a float ``x`` and a rational bound ``b``: ``x < b`` iff
    ``x < ceil_float(b)``, and ``x > b`` iff ``x > floor_float(b)``, so the
    float comparisons below are exact.
    """

    def __init__(self, step: Fraction, lo_u: int, hi_u: int) -> None:
        self.step, self.lo_u, self.hi_u = step, lo_u, hi_u
        self.num, self.den = step.numerator, step.denominator
        self.lo_v, self.hi_v = lo_u * step, hi_u * step
        self.lo_f, self.hi_f = _float_ceil(self.lo_v), _float_floor(self.hi_v)
        self.lo_i, self.hi_i = math.ceil(self.lo_v), math.floor(self.hi_v)
        self.zero_u = min(max(0, lo_u), hi_u)  # what any |x| < step / 2 becomes
        self.bound_u = max(abs(lo_u), abs(hi_u))
        self.int64 = self.bound_u <= INT64_MAX
        binary = self.num & (self.num - 1) == 0 and self.den & (self.den - 1) == 0
        near = abs(self.den.bit_length() - self.num.bit_length()) < 1000
        self.mult = self.den / self.num if near else math.inf  # float-ok: screening multiplier, exact near ties
        self.exact_mult = (binary and math.isfinite(self.mult) and self.bound_u <= _FLOAT_EXACT
                           and Fraction(self.lo_f) == self.lo_v and Fraction(self.hi_f) == self.hi_v)
        self.approx_ok = math.isfinite(self.mult) and self.bound_u < _APPROX_LIMIT
        self.float_lattice = float_lattice_constants(step, max(abs(self.lo_v), abs(self.hi_v)))
        # |x| >= 2**big_bits means x lies beyond both bounds; |x| <= 2**tiny_bits means |x| < step / 2.
        biggest = max(abs(self.lo_v), abs(self.hi_v), step)
        self.big_bits = biggest.numerator.bit_length() - biggest.denominator.bit_length() + 1
        half = step / 2
        self.tiny_bits = half.numerator.bit_length() - half.denominator.bit_length() - 2
        self.big_dec = len(str(math.ceil(biggest)))  # 10**big_dec > biggest
        self.tiny_dec = -len(str(math.ceil(1 / half))) - 1  # 10**(tiny_dec + 1) < step / 2

    # -- exact rounding of an in-range rational ------------------------------
    def rational_units(self, n: int, d: int) -> int:
        """Units of the rational ``n / d`` (``d > 0``), clamped then rounded exactly."""
        if n * self.lo_v.denominator < self.lo_v.numerator * d:
            return self.lo_u
        if n * self.hi_v.denominator > self.hi_v.numerator * d:
            return self.hi_u
        return round_half_even(n * self.den, d * self.num)

    def record_function(self) -> Callable[[Any], int | None]:
        """The per-record screen: a record's clamped units, or ``None`` if it is unusable.

        One reader per kind of record (:func:`_float_units`, :func:`_int_units`, :func:`_fraction_units`,
        :func:`_decimal_units`, :func:`_text_units`), each holding its constants as locals (the hot path),
        chosen by the record's type.
        """
        lo_u, hi_u = self.lo_u, self.hi_u
        of_float, of_int, of_fraction = _float_units(self), _int_units(self), _fraction_units(self)
        of_decimal = _decimal_units(self)
        of_string = _text_units(self, of_decimal, of_fraction)

        def screen(x: Any) -> int | None:
            t = type(x)
            if t is float:
                return of_float(x)
            if t is int:
                return of_int(x)
            if t is Fraction:
                return of_fraction(x.numerator, x.denominator)
            if t is bool or x is None:
                return None
            if t is decimal.Decimal:
                return of_decimal(x)
            if t is str:
                return of_string(x)
            if isinstance(x, np.floating):
                if np.isnan(x):
                    return None
                if x.dtype.itemsize <= 8:
                    return of_float(float(x))  # float-ok: widening to float64 is exact
                if np.isinf(x):
                    return hi_u if x > 0 else lo_u
                return of_fraction(*(int(v) for v in x.as_integer_ratio()))
            if isinstance(x, np.timedelta64):  # a subclass of np.integer, but a duration: no number
                return None
            if isinstance(x, (np.integer, _MPZ)):
                return of_int(int(x))
            if isinstance(x, np.bool_):
                return None
            if isinstance(x, _MPQ):
                return of_fraction(int(x.numerator), int(x.denominator))
            if isinstance(x, numbers.Rational):
                return of_fraction(int(x.numerator), int(x.denominator))
            if isinstance(x, float):  # float subclasses
                return of_float(float(x))  # float-ok: exact, same value
            if isinstance(x, int):  # int subclasses other than bool
                return of_int(int(x))
            return None

        return screen


def _float_units(c: Clamp) -> Callable[[float], int | None]:
    """The units of a float record (``None`` for NaN): exact comparisons with the float bounds, then a float
    product when it is exact or far from a tie, else exact rounding of its integer ratio."""
    lo_u, hi_u, lo_f, hi_f, den, num, mult = c.lo_u, c.hi_u, c.lo_f, c.hi_f, c.den, c.num, c.mult
    exact_mult, approx_ok = c.exact_mult, c.approx_ok

    def of_float(x: float) -> int | None:
        if x != x:
            return None
        if x < lo_f:
            return lo_u
        if x > hi_f:
            return hi_u
        if exact_mult:
            return round(x * mult)
        if approx_ok:
            y = x * mult
            r = round(y)
            if abs(abs(y - r) - 0.5) > TIE_TOLERANCE * (1.0 + abs(y)):
                return r
        n, d = x.as_integer_ratio()
        return round_half_even(n * den, d * num)

    return of_float


def _int_units(c: Clamp) -> Callable[[int], int]:
    """The units of an integer record."""
    lo_u, hi_u, lo_i, hi_i, den, num = c.lo_u, c.hi_u, c.lo_i, c.hi_i, c.den, c.num

    def of_int(x: int) -> int:
        if x < lo_i:
            return lo_u
        if x > hi_i:
            return hi_u
        return x * den if num == 1 else round_half_even(x * den, num)

    return of_int


def _fraction_units(c: Clamp) -> Callable[[int, int], int | None]:
    """The units of a rational record ``n / d`` (``None`` for ``d == 0``, or for terms over ``CELL_BITS`` bits
    within the bounds), judged by its size first."""
    lo_u, hi_u, zero_u, big_bits, tiny_bits = c.lo_u, c.hi_u, c.zero_u, c.big_bits, c.tiny_bits
    rational_units = c.rational_units

    def of_fraction(n: int, d: int) -> int | None:
        if d <= 0:
            if d == 0:
                return None
            n, d = -n, -d
        if n == 0:
            return zero_u
        e = abs(n).bit_length() - d.bit_length()  # 2**(e-1) < |x| < 2**(e+1)
        if e - 1 >= big_bits:
            return hi_u if n > 0 else lo_u
        if e + 1 <= tiny_bits:
            return zero_u
        if max(abs(n).bit_length(), d.bit_length()) > CELL_BITS:  # within the bounds, but too long to read
            return None
        return rational_units(n, d)

    return of_fraction


def _decimal_units(c: Clamp) -> Callable[[decimal.Decimal], int | None]:
    """The units of a ``Decimal`` record (``None`` for NaN or one too long), judged by its exponent first."""
    lo_u, hi_u, zero_u, big_dec, tiny_dec = c.lo_u, c.hi_u, c.zero_u, c.big_dec, c.tiny_dec
    rational_units = c.rational_units

    def of_decimal(x: decimal.Decimal) -> int | None:
        if x.is_nan() or cell_too_long(x):
            return None
        if x.is_infinite():
            return hi_u if x > 0 else lo_u
        if x.is_zero():
            return zero_u
        a = x.adjusted()  # 10**a <= |x| < 10**(a+1)
        if a >= big_dec:
            return hi_u if x > 0 else lo_u
        if a + 1 <= tiny_dec:
            return zero_u
        n, d = x.as_integer_ratio()
        return rational_units(n, d)

    return of_decimal


def _text_units(c: Clamp, of_decimal: Callable[[decimal.Decimal], int | None],
                of_fraction: Callable[[int, int], int | None]) -> Callable[[str], int | None]:
    """The units of a text record: decimal text (read by ``of_decimal``) or a ratio ``n/d`` (by ``of_fraction``,
    judged by its digits first); ``None`` for any other text, or text over ``CELL_CHARS`` characters."""
    lo_u, hi_u, zero_u, big_dec, tiny_dec = c.lo_u, c.hi_u, c.zero_u, c.big_dec, c.tiny_dec

    def of_string(s: str) -> int | None:
        if len(s) > CELL_CHARS:  # judged by its length before it is read
            return None
        if DECIMAL_RE.fullmatch(s):
            return of_decimal(text_decimal(s))
        m = RATIO_RE.fullmatch(s)
        if m is None:
            return None
        n, d = decimal.Decimal(m.group(1)), decimal.Decimal(m.group(2))
        if d.is_zero():
            return None
        if n.is_zero():
            return zero_u
        a = n.adjusted() - d.adjusted()  # 10**(a-1) < |x| < 10**(a+1)
        if a - 1 >= big_dec:
            return hi_u if n > 0 else lo_u
        if a + 1 <= tiny_dec:
            return zero_u
        nn, nd = n.as_integer_ratio()
        dn, _ = d.as_integer_ratio()
        return of_fraction(nn, nd * dn)

    return of_string
