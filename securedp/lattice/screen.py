"""Screening, clamping and rounding of records onto lattice units.

For bounds ``[lo_u, hi_u]`` (in units of ``step``) each record ``x`` becomes
``round_half_even(clamp(x, lo_u * step, hi_u * step) / step)``, computed
exactly. The order matters: a record is **clamped before any expensive
conversion**. Its magnitude is first read from its size (``int.bit_length``,
a Fraction's term lengths, a Decimal's adjusted exponent, a float compared
with precomputed float bounds), so ``10**400``, ``float('inf')``,
``Decimal('1e999999')`` or ``Fraction(10**5000, 3)`` is recognised as out of
range in constant time and clamped, never converted, and ``Decimal('1e-999999')``
is recognised as rounding to zero. Screening never raises on a number.

Accepted records: ``int``, ``float``, ``Fraction`` (and other
``numbers.Rational``), ``Decimal``, gmpy2 ``mpz``/``mpq``, NumPy integers
and floats, and numeric strings (a decimal literal such as ``"2.5"`` or
``"1e-3"``, or a ratio ``"1/3"``, read exactly). Infinities are clamped.

*Unusable* records are ``None``, NaN (float, NumPy or Decimal), pandas
``NA``/``NaT``, ``bool``, non-numeric strings and any other object. With
``missing="raise"`` (default) they raise :class:`ValueError` before anything
is drawn or charged; ``missing="drop"`` removes them; ``missing="impute"``
replaces each by the public constant ``fill`` (which is then clamped like
any record). Which records are unusable is decided record by record.

**One column** (:mod:`securedp.lattice.columns`): a table or an array that
is not 1-D raises, never flattened; so does a record that is itself a row,
except with ``refuse_rows=False`` (analyst-facing sessions: it is unusable).

Fast paths (no Python loop): NumPy float arrays (for a power-of-two step
``x * 2**k`` is exact; for a step ``2**-k n / d`` with odd ``d < 2**10``, such
as ``0.01`` or ``1/3``, each float's significand and exponent are read from its
bits and divided in integer arithmetic, ties to even, by blocks: no float
operation decides a unit; for any other step the float quotient is used unless
it lies within ``2**-45 * (1 + |y|)`` of a tie, where the exact quotient of the
float's integer ratio decides) and NumPy integer arrays (integer arithmetic:
clip, scale, round-divide in place, a shift for a power-of-two step), by blocks
that stay in the CPU cache. Lists and object arrays whose records are all Python
``int`` or all Python ``float``, with ``None`` (a nullable column read exactly)
become one int64 or float64 array first (``None`` is unusable, like NaN; an int
beyond int64 sends them back to the per-record path). Other lists and object
arrays go through one per-record function.
"""

from __future__ import annotations

import decimal
import math
import numbers
import re
from collections.abc import Callable
from fractions import Fraction
from itertools import repeat
from typing import Any, cast

import gmpy2
import numpy as np

from securedp.hazmat.exact.kernels import round_half_even
from securedp.lattice.columns import (
    as_records,
    first_row_record,
    is_row_type,
    rows_error,
)

MISSING_POLICIES = ("raise", "drop", "impute")
INT64_MAX = (1 << 63) - 1
_FLOAT_EXACT = 1 << 53
_APPROX_LIMIT = 1 << 50
_TIE_TOLERANCE = 2.0**-45  # float-ok: only decides which records get the exact check
_DECIMAL_RE = re.compile(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*")
_RATIO_RE = re.compile(r"\s*([+-]?\d+)\s*/\s*(\d+)\s*")
_MPZ = type(gmpy2.mpz(0))
_MPQ = type(gmpy2.mpq(0, 1))
_MISSING_TYPE_NAMES = frozenset({"NAType", "NaTType"})


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
        self.float_lattice = _float_lattice_constants(step, max(abs(self.lo_v), abs(self.hi_v)))
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
        """The per-record screen: a record's clamped units, or ``None`` if it is unusable."""
        lo_u, hi_u, lo_f, hi_f, lo_i, hi_i = self.lo_u, self.hi_u, self.lo_f, self.hi_f, self.lo_i, self.hi_i
        den, num, mult, zero_u = self.den, self.num, self.mult, self.zero_u
        exact_mult, approx_ok = self.exact_mult, self.approx_ok
        big_bits, tiny_bits, big_dec, tiny_dec = self.big_bits, self.tiny_bits, self.big_dec, self.tiny_dec
        rational_units = self.rational_units

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
                if abs(abs(y - r) - 0.5) > _TIE_TOLERANCE * (1.0 + abs(y)):
                    return r
            n, d = x.as_integer_ratio()
            return round_half_even(n * den, d * num)

        def of_int(x: int) -> int:
            if x < lo_i:
                return lo_u
            if x > hi_i:
                return hi_u
            return x * den if num == 1 else round_half_even(x * den, num)

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
            return rational_units(n, d)

        def of_decimal(x: decimal.Decimal) -> int | None:
            if x.is_nan():
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

        def of_string(s: str) -> int | None:
            if _DECIMAL_RE.fullmatch(s):
                return of_decimal(decimal.Decimal(s.strip()))
            m = _RATIO_RE.fullmatch(s)
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


def unusable_reason(x: Any) -> str:
    """Why a record the screen refused is unusable (for the data holder's error messages)."""
    if x is None:
        return "None"
    if type(x).__name__ in _MISSING_TYPE_NAMES:
        return "missing (pandas NA)"
    if isinstance(x, (bool, np.bool_)):
        return "a bool"
    if isinstance(x, str):
        return "a non-numeric string"
    if isinstance(x, (float, np.floating, decimal.Decimal)):
        return "NaN"
    if isinstance(x, numbers.Rational):
        return "a ratio with zero denominator"
    if is_row_type(type(x)):
        return f"a {type(x).__name__} (a row of a table, not one value)"
    return f"not a number (a {type(x).__name__})"


def screen_units(
    data: Any, step: Fraction, lo_u: int, hi_u: int, *, missing: str = "raise", fill: Any = None,
    refuse_rows: bool = True,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Clamped, rounded units of every usable record, and the mask of records kept.

    The mask is ``None`` when every record is kept (always so unless
    ``missing="drop"``). See the module docstring for the rules. With
    ``refuse_rows`` (default) a record that is itself a row (a list, tuple,
    array ...) raises :class:`TypeError` whatever ``missing`` says: ``data``
    is then a table, not a column. Without it such a record is unusable like
    any other (an analyst-facing session, whose errors must not depend on
    the data). Error messages name the first offending record and count
    them: they are for the data holder.
    """
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {MISSING_POLICIES}, got {missing!r}")
    clamp = Clamp(step, lo_u, hi_u)
    screen = clamp.record_function()
    fill_u = None
    if missing == "impute":
        fill_u = screen(fill)
        if fill_u is None:
            raise ValueError("missing='impute' needs fill= set to a number")
    elif fill is not None:
        raise ValueError("fill= is only used with missing='impute'")
    records = as_records(data)
    units, bad = _units(records, clamp, screen, refuse_rows)
    if bad is None or not bad.any():
        return units, None
    if refuse_rows:
        found = first_row_record(records, np.flatnonzero(bad))
        if found is not None:
            raise rows_error(records, found)
    if missing == "raise":
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"record {first} is {unusable_reason(records[first])} ({int(bad.sum())} unusable record(s)); "
            "clean the data, or pass missing='drop' or missing='impute' with fill=<number>"
        )
    if missing == "drop":
        keep = ~bad
        return units[keep], keep
    units[bad] = fill_u
    return units, None


def _units(records: Any, clamp: Clamp, screen: Callable[[Any], int | None],
           refuse_types: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """Units and the mask of unusable records; a bool array is refused (``refuse_types``) or all unusable."""
    dtype = np.int64 if clamp.int64 else object
    if isinstance(records, np.ndarray):
        kind = records.dtype.kind
        if kind == "b" and not refuse_types:  # analyst-facing: a bool is unusable, as in an object column
            return np.zeros(records.shape, dtype=dtype), np.ones(records.shape, dtype=bool)
        if kind == "b":
            raise TypeError("data must be numeric, not bool")
        if kind in "cmMV":
            raise TypeError(f"data must be real numbers, not {records.dtype}")
        if clamp.int64 and kind == "f" and records.dtype.itemsize <= 8:
            return _float_array(records.astype(np.float64, copy=False), clamp, screen)
        if clamp.int64 and kind in "iu" and clamp.lo_i >= -INT64_MAX - 1 and clamp.hi_i <= INT64_MAX:
            return _int_array(records, clamp), None
        if kind != "O":
            records = records.tolist()  # string and long-double arrays: per record
    fast = _python_numbers(records, clamp, screen)
    if fast is not None:
        return fast
    screened = list(map(screen, records))
    values: list[int]
    if None in screened:
        bad = np.fromiter((v is None for v in screened), dtype=bool, count=len(screened))
        values = [0 if v is None else v for v in screened]
    else:
        bad = None
        values = cast("list[int]", screened)  # no None in it
    return np.fromiter(values, dtype=dtype, count=len(values)) if dtype is np.int64 else _object(values), bad


_PLAIN, _INT, _NONE, _OTHER = 0, 1, 2, 3
_KINDS: dict[type, int] = {float: _PLAIN, np.float64: _PLAIN, np.float32: _PLAIN, int: _INT, np.int64: _INT,
                           np.int32: _INT, type(None): _NONE}
_INT64_RANGE = (-(1 << 63), 1 << 63)


_BALANCE = 10**400
"""The record :func:`_python_numbers` screens when no record needs the exact screen (an absurd int)."""


def _python_numbers(records: Any, clamp: Clamp,
                    screen: Callable[[Any], int | None]) -> tuple[np.ndarray, np.ndarray | None] | None:
    """Python records screened by kind, with work proportional to each kind's count: Python ``float`` as one
    float64 array, Python ``int`` within int64 as one int64 array, ``None`` unusable, and every other record
    (an int beyond int64, a ``Fraction``, a ``Decimal``, text, a ``bool`` ...) by the exact per-record screen;
    ``None`` when the units do not fit int64 (then every record is screened one by one).

    This is the shape of a nullable integer or float column read exactly (pandas ``Int64``/``Float64``
    with a missing value, pyarrow, Polars with a null). The cost of a record depends on its own kind only,
    never on the others: one absurd record (``10**400``) costs one exact screen, not a slower path for the
    whole column, so a release's running time does not tell whether the data holds one.
    """
    if not (clamp.int64 and clamp.lo_i >= -INT64_MAX - 1 and clamp.hi_i <= INT64_MAX) or len(records) == 0:
        return None
    n = len(records)
    kinds = np.fromiter(map(_KINDS.get, map(type, records), repeat(_OTHER, n)), dtype=np.int8, count=n)
    column = records if isinstance(records, np.ndarray) else np.fromiter(records, dtype=object, count=n)
    units = np.zeros(n, dtype=np.int64)
    bad = kinds == _NONE
    # Every kind's pass runs, empty or not, and the exact screen runs at least once (on a fixed absurd
    # record when no record needs it): the fixed costs do not tell whether the column holds one int or
    # one absurd record among floats. Only the count of each kind moves the time.
    floats = np.flatnonzero(kinds == _PLAIN)
    units[floats], bad[floats] = _float_array(column[floats].astype(np.float64), clamp, screen)
    ints = np.flatnonzero(kinds == _INT)
    values = column[ints]
    fits = ((values >= _INT64_RANGE[0]) & (values < _INT64_RANGE[1])).astype(bool)
    units[ints[fits]] = _int_array(values[fits].astype(np.int64), clamp)
    kinds[ints[~fits]] = _OTHER  # beyond int64: exact, one by one
    others = np.flatnonzero(kinds == _OTHER).tolist()
    for i in others:
        unit = screen(column[i])
        if unit is None:
            bad[i] = True
        else:
            units[i] = unit
    if not others:
        screen(_BALANCE)  # the one exact screen a single absurd record would have cost; its result is unused
    return units, (bad if bad.any() else None)


def _object(values: list[int]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


_FLOAT_BLOCK = 1 << 16
"""Elements per block of :func:`_float_units` (its dozen temporaries of a block stay in the L2 cache)."""
_ODD_LIMIT = 1 << 10
"""The odd part of the step's denominator must be below this for :func:`_float_units` (``m d < 2**63``)."""


def _float_lattice_constants(step: Fraction, biggest: Fraction) -> tuple[int, int, int, bool] | None:
    """``(d, n, shift, left)`` with ``step = 2**-shift n / d`` (``d``, ``n`` odd) when :func:`_float_units`
    applies: ``d < 2**10`` (so ``m d < 2**63`` for a 53-bit significand ``m``) and every in-bounds float's
    ``|x| d 2**shift`` below ``2**62``; else ``None``. ``left``: some float within ``biggest`` has
    ``|x| 2**shift >= 2**53``, so its significand is shifted left (``t > 0`` in :func:`_float_units`)."""
    num, den = step.numerator, step.denominator
    twos_den = (den & -den).bit_length() - 1
    twos_num = (num & -num).bit_length() - 1
    d, n = den >> twos_den, num >> twos_num
    shift = twos_den - twos_num
    if d >= _ODD_LIMIT or n > INT64_MAX // 2 or biggest * d * Fraction(2) ** shift >= 1 << 62:
        return None
    return d, n, shift, biggest * Fraction(2) ** shift >= 1 << 53


def _float_units(x: np.ndarray, constants: tuple[int, int, int, bool], out: np.ndarray) -> None:
    """``out = round_half_even(x / step)`` for finite float64 ``x`` within the bounds, in integer arithmetic.

    A float is ``(-1)**sign m 2**e`` exactly, ``m`` and ``e`` read from its bits (``m < 2**53``), so with
    ``step = 2**-shift n / d``, ``x / step = m d 2**(e + shift) / n``: the integer ``P = m d`` (below
    ``2**63``) shifted by ``t = e + shift`` and divided by ``n``. For ``t >= 0``, ``q = (P << t) // n``
    with remainder ``r``; for ``t = -s < 0``, ``P = a 2**s + b`` (``0 <= b < 2**s``), ``q = a // n``,
    ``r = a - q n``, and the remainder of the whole division is ``r 2**s + b``: it is more than half of
    ``n 2**s`` when ``2 r > n``, or ``2 r = n`` and ``b > 0``, or ``2 r = n - 1`` and ``b > 2**(s-1)``;
    exactly half when ``2 r = n`` and ``b = 0`` or ``2 r = n - 1`` and ``b = 2**(s-1)`` (a tie: to even).
    For ``s >= 64`` (``P < 2**63 <= 2**(s-1)``) the quotient rounds to 0. No float operation decides a unit.
    """
    d, n, shift, left = constants
    bits = x.view(np.uint64)
    exponent = (bits >> np.uint64(52)) & np.uint64(0x7FF)
    p = bits & np.uint64((1 << 52) - 1)
    p |= (exponent != 0).view(np.uint8).astype(np.uint64) << np.uint64(52)
    if d != 1:
        p *= np.uint64(d)
    t = np.maximum(exponent, np.uint64(1)).view(np.int64) - (1075 - shift)  # a subnormal: exponent 0, 2**-1074
    s = np.clip(t, -63, 0)
    np.negative(s, out=s)
    s = s.view(np.uint64)
    mask = (np.uint64(1) << s) - np.uint64(1)
    half = mask - (mask >> np.uint64(1))  # 2**(s-1), or 0 for s = 0
    a = p >> s
    if left:  # some float in the bounds has t > 0
        a <<= np.clip(t, 0, 63).view(np.uint64)
    b = p & mask
    if n == 1:  # the quotient is a, the remainder b (of 2**s): up past half, ties to even
        up = (b > half) | ((b == half) & (b != 0) & ((a & np.uint64(1)) != 0))
        q = a
    else:
        q = a // np.uint64(n)
        twice = (a - q * np.uint64(n)) << np.uint64(1)
        at_n = twice == np.uint64(n)
        below_n = twice == np.uint64(n - 1)
        up = (twice > np.uint64(n)) | (at_n & (b > 0)) | (below_n & (b > half))
        tie = (at_n & (b == 0)) | (below_n & (b == half) & (b != 0))
        up |= tie & ((q & np.uint64(1)) != 0)
    q += up.view(np.uint8)
    q[t < -63] = 0
    units = q.view(np.int64)
    np.negative(units, out=units, where=(bits >> np.uint64(63)).view(np.int64) != 0)
    out[...] = units


def _float_array(x: np.ndarray, clamp: Clamp, screen: Callable[[Any], int | None]) -> tuple[np.ndarray, np.ndarray]:
    bad = np.isnan(x)
    if not clamp.exact_mult and clamp.float_lattice is not None:  # any other step: integers, by blocks
        units = np.empty(x.shape, dtype=np.int64)
        y = np.empty(min(x.size, _FLOAT_BLOCK), dtype=np.float64)
        for start in range(0, x.size, _FLOAT_BLOCK):
            end = min(start + _FLOAT_BLOCK, x.size)
            block = y[:end - start]
            np.clip(x[start:end], clamp.lo_f, clamp.hi_f, out=block)  # exact: comparisons only
            np.copyto(block, 0.0, where=bad[start:end])
            _float_units(block, clamp.float_lattice, units[start:end])
            units[start:end][x[start:end] < clamp.lo_f] = clamp.lo_u
            units[start:end][x[start:end] > clamp.hi_f] = clamp.hi_u
        return units, bad
    if clamp.exact_mult:  # the snapped bounds are floats and x * 2**k is exact: clip, scale, round by blocks
        units = np.empty(x.shape, dtype=np.int64)
        y = np.empty(min(x.size, _BLOCK), dtype=np.float64)
        for start in range(0, x.size, _BLOCK):
            end = min(start + _BLOCK, x.size)
            block = y[:end - start]
            np.clip(x[start:end], clamp.lo_f, clamp.hi_f, out=block)  # NaN stays NaN, set to 0 below
            block *= clamp.mult
            np.rint(block, out=block)
            np.copyto(block, 0.0, where=bad[start:end])
            units[start:end] = block  # integral floats of magnitude <= 2**53: converted exactly
        return units, bad
    below = x < clamp.lo_f
    above = x > clamp.hi_f
    inside = ~(below | above | bad)
    y = np.where(inside, x, 0.0) * clamp.mult if math.isfinite(clamp.mult) else np.zeros_like(x)
    rounded = np.rint(y)
    check = np.empty(0, dtype=np.intp)
    if not clamp.exact_mult:
        if clamp.approx_ok:
            near_tie = np.abs(np.abs(y - rounded) - 0.5) <= _TIE_TOLERANCE * (1.0 + np.abs(y))
            check = np.flatnonzero(inside & near_tie)
        else:
            check = np.flatnonzero(inside)
    units = rounded.astype(np.int64)
    if not clamp.exact_mult:
        for i in check:
            unit = screen(float(x[i]))  # float-ok: x[i] is already a float64
            assert unit is not None  # x[i] is inside [lo_f, hi_f], so not NaN: the screen accepts it
            units[i] = unit
    units[below] = clamp.lo_u
    units[above] = clamp.hi_u
    units[bad] = 0
    return units, bad


def _int_array(x: np.ndarray, clamp: Clamp) -> np.ndarray:
    """Units of an integer array in two or three vectorised passes: clip to ``[lo_i, hi_i]``, scale, round.

    A record below ``lo_i`` (so below ``lo_v``) gets ``lo_u`` and one above ``hi_i`` gets ``hi_u``;
    clipping it to ``lo_i`` (``hi_i``) gives the same units whenever ``lo_i`` (``hi_i``) itself rounds
    to ``lo_u`` (``hi_u``), and otherwise a mask puts them back. Division by a power of two is a shift.
    """
    lo_c, hi_c = clamp.lo_i, clamp.hi_i  # within int64 (checked by the caller)
    if lo_c > hi_c:  # no integer in [lo_v, hi_v]: every record is below or above
        sides: np.ndarray = np.where(x < lo_c, np.int64(clamp.lo_u), np.int64(clamp.hi_u))
        return sides
    clipped: np.ndarray
    if x.dtype.kind == "u":
        if hi_c < 0:
            return np.full(x.shape, clamp.hi_u, dtype=np.int64)
        clipped = np.minimum(x, np.uint64(hi_c)).astype(np.int64)
        np.maximum(clipped, lo_c, out=clipped)
    else:
        clipped = np.clip(x.astype(np.int64, copy=False), lo_c, hi_c)
    num, den = clamp.num, clamp.den
    worst = max(abs(lo_c), abs(hi_c))
    if num <= INT64_MAX and worst * den <= INT64_MAX // 2 and den <= INT64_MAX:
        units = clipped
        if den != 1:
            units *= den
        if num != 1:
            _round_divide(units, num)
    else:
        units = np.fromiter((clamp.rational_units(int(v), 1) for v in clipped), dtype=np.int64, count=clipped.size)
    if clamp.rational_units(lo_c, 1) != clamp.lo_u:
        units[x < lo_c] = clamp.lo_u
    if clamp.rational_units(hi_c, 1) != clamp.hi_u:
        units[x > hi_c] = clamp.hi_u
    return units


_BLOCK = 1 << 14
"""Elements per block of the in-place passes: the temporaries of a block stay in the CPU cache."""


def _round_divide(n: np.ndarray, num: int) -> None:
    """``n = round_half_even(n / num)`` in place, exactly (int64 ``n`` with ``|n| + num <= 2**63 - 1``).

    A power of two ``2**k`` is a shift: ``floor((n + 2**(k-1) - 1 + bit k of n) / 2**k)``. Otherwise
    ``q = floor(n / num)``, ``r = n - q num``, plus one when ``2 r > num`` or ``2 r == num`` and ``q`` is odd.
    """
    t = np.empty(min(n.size, _BLOCK), dtype=np.int64)
    if num & (num - 1) == 0:
        k, half = num.bit_length() - 1, num // 2 - 1
        for start in range(0, n.size, _BLOCK):
            block, odd = n[start:start + _BLOCK], t[:min(_BLOCK, n.size - start)]
            np.right_shift(block, k, out=odd)
            odd &= 1
            odd += half
            block += odd
            block >>= k
        return
    for start in range(0, n.size, _BLOCK):
        block, q = n[start:start + _BLOCK], t[:min(_BLOCK, n.size - start)]
        np.floor_divide(block, num, out=q)
        block -= q * num  # the remainder r
        block *= 2
        up = (block > num) | ((block == num) & (q % 2 == 1))
        np.add(q, up, out=block)
