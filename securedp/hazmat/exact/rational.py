"""Exact conversion of user-supplied parameters to rationals.

Every parameter that shapes a distribution (a scale, a probability, an
epsilon, a bound) enters the library through :func:`to_rational`, which
returns a :class:`fractions.Fraction` equal to the value the caller *wrote*:

============================  ==================================================
input                         result
============================  ==================================================
``int``, NumPy integer,       that integer
gmpy2 ``mpz``
``Fraction``, gmpy2 ``mpq``   that rational
``decimal.Decimal``           its exact value (``Decimal("0.1")`` is 1/10)
``str``                       a decimal literal (``"0.1"``, ``"1e-3"``,
                              ``"-2.5"``) read as the exact decimal it spells,
                              or a ratio ``"num/den"`` of two integers
``float``, NumPy float        the exact binary value of the float
(float16 .. longdouble)       (a ``longdouble`` keeps all its bits):
                              ``0.1`` becomes 3602879701896397/36028797018963968,
                              *not* 1/10. Pass ``"0.1"`` to mean one tenth.
============================  ==================================================

``bool`` is refused (``True`` is not a scale), as are NaN, infinities,
complex numbers, ``None`` and anything else, with an error naming the
parameter. Conversion never rounds and never consults a float.

A float whose exact value differs from the shortest decimal that prints it
(``0.1``, ``1e-5``: almost every float written as a decimal) is converted
exactly all the same, with an :class:`InexactFloatWarning` naming the
parameter, its exact value and the string to pass instead (``"0.1"``).
Floats that are short dyadic rationals (``0.5``, ``0.25``, ``3.0``) convert
silently: they mean what they say.
"""

from __future__ import annotations

import decimal
import numbers
import re
import sys
import warnings
from fractions import Fraction
from typing import Any

import gmpy2
import numpy as np

Rational = int | Fraction | str | decimal.Decimal | float
"""What the public API accepts wherever an exact number is expected."""

_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_RATIO = re.compile(r"[+-]?\d+/\d+")
_MPZ = type(gmpy2.mpz(0))
_MPQ = type(gmpy2.mpq(0, 1))
_MPFR = type(gmpy2.mpfr(0))
# A decimal exponent beyond this is refused: "1e999999999" would otherwise
# allocate a gigantic integer.
_MAX_DECIMAL_EXPONENT = 10_000


class InexactFloatWarning(UserWarning):
    """A float parameter's exact binary value is not the decimal it prints as (``0.1`` is not one tenth)."""


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside securedp (the caller who wrote the float)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "securedp":
        frame, level = frame.f_back, level + 1  # type: ignore[assignment]
    return level


def _exact_float(value: float | np.floating[Any], name: str) -> Fraction:
    """The exact value of a finite float, warning when it differs from the decimal the float prints as."""
    num, den = value.as_integer_ratio()
    exact = Fraction(int(num), int(den))
    written = repr(float(value)) if isinstance(value, float) else str(value)  # the shortest round-trip decimal
    try:
        shown = _parse_string(written, name)
    except ValueError:  # a form the parser does not read (never for a finite float): no claim either way
        return exact
    if shown != exact:
        near = decimal.Context(prec=25).divide(decimal.Decimal(exact.numerator), decimal.Decimal(exact.denominator))
        warnings.warn(
            f"{name}={written} is a float: it is used exactly, as its binary value {near}..., not {written}; "
            f"pass the string {written!r} (or a Fraction) to mean the decimal",
            InexactFloatWarning, stacklevel=_caller_level())
    return exact


def to_rational(value: Any, name: str) -> Fraction:
    """Return ``value`` as an exact :class:`~fractions.Fraction`.

    Raises :class:`TypeError` for values of a type that is not a number
    (including ``bool`` and ``None``) and :class:`ValueError` for NaN,
    infinities and malformed strings; both messages name ``name``.
    """
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a number, not a bool")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (_MPZ, np.integer)):
        return Fraction(int(value))
    if isinstance(value, _MPQ):
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, str):
        return _parse_string(value, name)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise ValueError(f"{name} must be finite, got {value!r}")
        _check_decimal_exponent(value.as_tuple().exponent, name)
        return Fraction(value)
    if isinstance(value, (float, np.floating, _MPFR)):
        finite = gmpy2.is_finite(value) if isinstance(value, _MPFR) else bool(np.isfinite(value))
        if not finite:
            raise ValueError(f"{name} must be finite, got {value!r}")
        if isinstance(value, _MPFR):
            q = value.as_integer_ratio()
            return Fraction(int(q[0]), int(q[1]))
        # Exact for every NumPy float, longdouble included (never via float64).
        return _exact_float(value, name)
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    raise TypeError(
        f"{name} must be an int, Fraction, decimal string, Decimal or float; "
        f"got {type(value).__name__}"
    )


def _check_decimal_exponent(exponent: Any, name: str) -> None:
    if isinstance(exponent, int) and abs(exponent) > _MAX_DECIMAL_EXPONENT:
        raise ValueError(f"{name}: decimal exponent {exponent} is out of range")


def _parse_string(text: str, name: str) -> Fraction:
    s = text.strip()
    if _RATIO.fullmatch(s):
        num, den = s.split("/")
        if int(den) == 0:
            raise ValueError(f"{name}: zero denominator in {text!r}")
        return Fraction(int(num), int(den))
    if _DECIMAL.fullmatch(s):
        d = decimal.Decimal(s)
        _check_decimal_exponent(d.as_tuple().exponent, name)
        return Fraction(d)
    raise ValueError(
        f"{name} must be a decimal number such as '0.1' or a ratio such as '1/3'; got {text!r}"
    )


def positive_rational(value: Any, name: str) -> Fraction:
    """:func:`to_rational`, then require the result to be > 0."""
    q = to_rational(value, name)
    if q <= 0:
        raise ValueError(f"{name} must be > 0, got {_shown(q)}")
    return q


def nonnegative_rational(value: Any, name: str) -> Fraction:
    """:func:`to_rational`, then require the result to be >= 0."""
    q = to_rational(value, name)
    if q < 0:
        raise ValueError(f"{name} must be >= 0, got {_shown(q)}")
    return q


def probability(value: Any, name: str) -> Fraction:
    """:func:`to_rational`, then require the result to lie in [0, 1]."""
    q = to_rational(value, name)
    if not 0 <= q <= 1:
        raise ValueError(f"{name} must lie in [0, 1], got {_shown(q)}")
    return q


def to_int(value: Any, name: str) -> int:
    """Return ``value`` as an ``int``; it must be integral (``3``, ``"3"``, ``3.0``)."""
    q = to_rational(value, name)
    if q.denominator != 1:
        raise ValueError(f"{name} must be an integer, got {_shown(q)}")
    return q.numerator


def _shown(q: Fraction) -> str:
    """A rational for an error message: exact when short, else its size (``str`` of an int past
    4,300 digits raises, which would replace the intended error with an unrelated one)."""
    if max(q.numerator.bit_length(), q.denominator.bit_length()) <= 1024:
        return format_rational(q)
    sign = "-" if q < 0 else ""
    return f"{sign}a rational of about 2**{abs(q.numerator).bit_length() - q.denominator.bit_length()}"


def format_rational(q: Fraction) -> str:
    """The canonical text of a rational: ``"3"`` or ``"1/10"`` (used in records)."""
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


_PLAIN = (Fraction(1, 10**6), Fraction(10**15))
"""Magnitudes printed in plain decimal notation for reading; others in scientific form."""


def rounded(q: Fraction, digits: int = 6) -> tuple[str, bool]:
    """``q`` rounded to ``digits`` significant digits (half to even) for reading: plain decimal notation for a
    magnitude in ``[1e-6, 1e15)`` (or zero), else scientific (``"1e+400"``); and whether that is exactly ``q``."""
    with decimal.localcontext() as ctx:
        ctx.Emax, ctx.Emin, ctx.prec = decimal.MAX_EMAX, decimal.MIN_EMIN, digits
        shown = (decimal.Decimal(q.numerator) / decimal.Decimal(q.denominator)).normalize()
    plain = q == 0 or _PLAIN[0] <= abs(q) < _PLAIN[1]
    return (f"{shown:f}" if plain else f"{shown:e}"), Fraction(shown) == q


def round_up(q: Fraction, digits: int) -> Fraction:
    """``q > 0`` rounded up to ``digits`` significant digits, exactly (a bound stays a bound)."""
    e = len(str(q.numerator)) - len(str(q.denominator)) - digits + 1  # within one of the exponent sought
    while q / Fraction(10) ** e >= 10**digits:
        e += 1
    while q / Fraction(10) ** e < 10 ** (digits - 1):
        e -= 1
    scaled = q / Fraction(10) ** e
    return -(-scaled.numerator // scaled.denominator) * Fraction(10) ** e


def display_rational(q: Fraction, *, fraction: bool = False) -> str:
    """A rational for a person to read (never for a record, which keeps :func:`format_rational`).

    * Exact when short: a number of at most 15 significant digits with a finite decimal expansion and a
      magnitude in ``[1e-6, 1e15)`` (or zero) is that decimal: ``"3"``, ``"0.1"``, ``"0.25"``; with
      ``fraction``, followed by its fraction when the denominator is not a power of ten (a budget a person
      may type again: ``"1.88 (47/25)"``).
    * Otherwise :func:`rounded` to 6 significant digits, after ``"≈ "`` unless that is exact, and followed
      by the fraction when it is short (both terms of at most 6 digits): ``"≈ 0.333333 (1/3)"``,
      ``"1e+400"``, ``"≈ 1.23457e+20"``.
    """
    text, exact = rounded(q, 15)
    if exact and "e" not in text:
        return text + (f" ({format_rational(q)})" if fraction and not _power_of_ten(q.denominator) else "")
    text, exact = rounded(q, 6)
    short = len(str(abs(q.numerator))) <= 6 and len(str(q.denominator)) <= 6
    return ("" if exact else "≈ ") + text + (f" ({format_rational(q)})" if short and not exact else "")


def _power_of_ten(d: int) -> bool:
    """Whether ``d`` is ``10**k``, ``k >= 0``."""
    while d % 10 == 0:
        d //= 10
    return d == 1


def to_mpq(q: Fraction) -> Any:
    """The gmpy2 ``mpq`` equal to ``q`` (for arithmetic inside samplers)."""
    return gmpy2.mpq(q.numerator, q.denominator)


_MAX_DECIMALS = 40
"""Longest exact decimal expansion printed; a longer one is printed as ``num/den``."""


def exact_text(value: Any) -> str:
    """A rational as a person would write it, exactly.

    Integers as ``3`` or ``-12``; a rational whose decimal expansion is
    finite (its reduced denominator is ``2**a * 5**b``, as on every decimal
    or binary lattice) as that expansion, ``0.25`` or ``-1.5``, with no
    trailing zeros and at most :data:`_MAX_DECIMALS` digits after the point;
    any other rational as ``num/den`` (``1/3``). Other values (labels) as
    ``str``. Never rounds.
    """
    if isinstance(value, bool) or not isinstance(value, (int, Fraction)):
        return str(value)
    q = Fraction(value)
    if q.denominator == 1:
        return str(q.numerator)
    twos, fives, rest = _split_denominator(q.denominator)
    digits = max(twos, fives)
    if rest != 1 or digits > _MAX_DECIMALS:
        return format_rational(q)
    scaled = abs(q.numerator) * 10**digits // q.denominator  # exact: the denominator divides 10**digits
    whole, frac = divmod(scaled, 10**digits)
    sign = "-" if q < 0 else ""
    return f"{sign}{whole}.{str(frac).rjust(digits, '0').rstrip('0')}"


def _split_denominator(d: int) -> tuple[int, int, int]:
    """``(a, b, r)`` with ``d == 2**a * 5**b * r`` and ``r`` prime to 10."""
    twos = (d & -d).bit_length() - 1
    d >>= twos
    fives = 0
    while d % 5 == 0:
        d //= 5
        fives += 1
    return twos, fives, d
