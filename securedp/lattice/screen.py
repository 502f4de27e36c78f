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

Fast paths (no Python loop): NumPy float and integer arrays, by the vectorised
passes of :mod:`securedp.lattice.arrays` (integer arithmetic, or a float quotient
whose rounding an error bound proves exact, the exact per-record screen deciding
within ``2**-45`` of a tie). Lists and object arrays whose
records are all Python ``int`` or all Python ``float``, with ``None`` (a nullable
column read exactly) become one int64 or float64 array first (``None`` is unusable,
like NaN; an int beyond int64 sends them back to the per-record path). Other lists
and object arrays go through one per-record function.
"""

from __future__ import annotations

import decimal
import functools
import math
import numbers
from collections.abc import Callable
from fractions import Fraction
from itertools import repeat
from typing import Any, cast

import numpy as np

from securedp.hazmat.exact.bounds import CELL_BITS, CELL_CHARS, cell_too_long
from securedp.lattice.arrays import INT64_MAX as INT64_MAX  # re-exported: the lattice's int64 limit
from securedp.lattice.arrays import float_array, int_array
from securedp.lattice.clamp import DECIMAL_RE, RATIO_RE, Clamp, text_decimal, text_integer
from securedp.lattice.columns import (
    as_records,
    first_row_record,
    is_row_type,
    rows_error,
)
from securedp.reading.cells import is_blank, shown

MISSING_POLICIES = ("raise", "drop", "impute")
def _whole_record(x: Any) -> bool:
    """Whether the record ``x`` is not a number holding a fraction: an integer, an integral float, ``Decimal``
    or rational, integral numeric text, or no number at all (the screen's verdict then stands)."""
    if isinstance(x, (int, np.integer)):
        return True
    if isinstance(x, (float, np.floating)):
        return not math.isfinite(x) or float(x).is_integer() if x == x else True  # float-ok: an exact test
    if isinstance(x, decimal.Decimal):
        return not x.is_finite() or x == x.to_integral_value()
    if isinstance(x, numbers.Rational):
        return x.denominator in (0, 1)
    if cell_too_long(x):
        return True  # unusable: the screen's verdict stands
    if isinstance(x, str):
        if DECIMAL_RE.fullmatch(x):
            value = text_decimal(x)
            return value == value.to_integral_value()
        m = RATIO_RE.fullmatch(x)
        if m is None:
            return True
        denominator = text_integer(m.group(2))
        return bool(denominator == 0 or text_integer(m.group(1)) % denominator == 0)
    return True


def not_whole(records: np.ndarray | list[Any]) -> np.ndarray:
    """The mask of the records that are numbers holding a fraction (see :func:`_whole_record`)."""
    if isinstance(records, np.ndarray) and records.dtype.kind in "iub":
        return np.zeros(records.shape, dtype=bool)
    if isinstance(records, np.ndarray) and records.dtype.kind == "f" and records.dtype.itemsize <= 8:
        x = records.astype(np.float64, copy=False)
        with np.errstate(invalid="ignore"):
            fraction: np.ndarray = np.isfinite(x) & (np.floor(x) != x)
        return fraction
    return np.fromiter((not _whole_record(x) for x in records), dtype=bool, count=len(records))


def unusable_reason(x: Any) -> str:
    """Why a record the screen refused is unusable, in the data holder's words: ``"blank cell"`` for every
    missing or empty cell (``None``, NaN, pandas ``NA``, empty or whitespace text), else what the cell is."""
    if cell_too_long(x):
        return f"a cell longer than {CELL_CHARS} characters or digits, not read"
    if is_blank(x):
        return "blank cell"
    if isinstance(x, (bool, np.bool_)):
        return f"a boolean ({x}), not a number"
    if isinstance(x, str):
        shown = x if len(x) <= 40 else x[:37] + "..."
        return f"not a number ({shown!r})"
    if isinstance(x, np.timedelta64):  # registered as an integer by NumPy, but a duration
        return "not a number (a timedelta64)"
    if isinstance(x, numbers.Rational):
        if x.denominator != 0:  # within the bounds, with a term too long to read
            return f"a ratio with a term of more than {CELL_BITS} bits, not read"
        return "a ratio with zero denominator"
    if is_row_type(type(x)):
        return f"a {type(x).__name__} (a row of a table, not one value)"
    return f"not a number (a {type(x).__name__})"


def unusable_error(place: str, record: Any, count: int, whole: bool = False) -> ValueError:
    """The data holder's error for a value column with ``count`` unusable records, ``record`` one of them at
    ``place`` (``"column 'income', line 72"``; ``"column 'income'"`` where rows have no place: a Spark table),
    in one wording for every reader and engine; ``whole``: the column is declared int."""
    cell = record.item() if isinstance(record, np.generic) and record.dtype.itemsize <= 8 else record
    reason = f"not a whole number ({shown(cell)}) in a column declared int" if whole and not_whole([record]).any() \
        else unusable_reason(record)
    return ValueError(f"{place}: {reason} ({count} unusable cell(s)); clean the data, or pass missing='drop' or "
                      "missing='impute' with fill=<number>")


@functools.lru_cache(maxsize=256)
def _clamp(step: Fraction, lo_u: int, hi_u: int) -> Clamp:
    """The :class:`Clamp` of a lattice and its bounds (30 us to build; built once per lattice and bounds, as every
    release checks its ``missing`` policy on no records before it screens its column, and a table screens
    each column). A ``Clamp`` is never modified."""
    return Clamp(step, lo_u, hi_u)


def screen_units(
    data: Any, step: Fraction, lo_u: int, hi_u: int, *, missing: str = "raise", fill: Any = None,
    refuse_rows: bool = True, where: Callable[[int], str] | None = None, whole: bool = False,
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
    clamp = _clamp(step, lo_u, hi_u)
    screen = clamp.record_function()
    fill_u = None
    if missing == "impute":
        fill_u = screen(fill)
        if fill_u is None:
            raise ValueError("missing='impute' needs fill= set to a number")
    elif fill is not None:
        raise ValueError("fill= is only used with missing='impute'")
    records = as_records(data)
    absent = None
    if isinstance(records, np.ma.MaskedArray):  # a numeric column with missing cells (reading.columns.value_column)
        absent, records = np.ma.getmaskarray(records), np.ma.getdata(records)
    units, bad = _units(records, clamp, screen, refuse_rows)
    if absent is not None:
        bad = absent if bad is None else bad | absent
    if whole:
        fraction = not_whole(records)
        if fraction.any():
            bad = fraction if bad is None else bad | fraction
    if bad is None or not bad.any():
        return units, None
    if refuse_rows:
        found = first_row_record(records, np.flatnonzero(bad))
        if found is not None:
            raise rows_error(records, found, place=None if where is None else where(found[0]))
    if missing == "raise":
        first = int(np.flatnonzero(bad)[0])
        record = None if absent is not None and absent[first] else records[first]  # a missing cell reads as None
        raise unusable_error(f"record {first}" if where is None else where(first), record, int(bad.sum()), whole)
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
            return float_array(records.astype(np.float64, copy=False), clamp, screen)
        if clamp.int64 and kind in "iu" and clamp.lo_i >= -INT64_MAX - 1 and clamp.hi_i <= INT64_MAX:
            return int_array(records, clamp), None
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
    units[floats], bad[floats] = float_array(column[floats].astype(np.float64), clamp, screen)
    ints = np.flatnonzero(kinds == _INT)
    values = column[ints]
    fits = ((values >= _INT64_RANGE[0]) & (values < _INT64_RANGE[1])).astype(bool)
    units[ints[fits]] = int_array(values[fits].astype(np.int64), clamp)
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
