"""Person ids and group keys: one rule for every input kind, decided by the column's declared type.

Every id and key column is read here, whatever holds it (a Polars, pandas or pyarrow column, a NumPy
array, a Python list, a CSV or Parquet file's column), into a typed Polars column and the mask of its
**unusable** cells. Which type a column has is read from its schema (public, like its name), never from
its cells, and each cell's verdict is a function of that cell alone: one person's id can neither refuse
a release nor change how another id reads.

=================================  ===========================================================================
declared type of the column        a cell is
=================================  ===========================================================================
integer (8 to 64 bits)             that integer; a missing cell is unusable
integer of 128 bits                its canonical decimal text (the column is text)
float, decimal                     a finite value holding an integer of magnitude below ``2**53`` is that
                                   integer (a float past ``2**53`` may be two ids rounded into one); any
                                   other value (NaN, a fraction, an infinity, a missing cell) is unusable
text (String, Categorical, Enum,   the text itself; unusable when blank or holding U+FFFD
pandas ``str``/``string``, Arrow   (:data:`securedp.reading.cells.UNUSABLE_TEXT`)
string, large string, dictionary)
object (pandas/NumPy ``object``,   cell by cell, and the column is text: an integer (not a bool) is its canonical
a Python list)                     decimal text; a float, ``Decimal`` or ``Fraction`` holding an integer
                                   exactly is that integer's text; a string is itself (unusable when blank or
                                   undecodable); anything else (a bool, bytes, a fraction, NaN, ``None``) is
                                   unusable
no type (every cell missing)       every cell unusable
anything else (bool, dates, ...)   refused, naming the column: a schema, not a cell, decides it
=================================  ===========================================================================

**Person ids are never negative integers.** ``pandas.factorize`` codes every missing id as ``-1``, and
one "person" of all the rows without an id would let one added person *replace* another's row where the
sensitivity allows only an addition; so an integer id below 0 (in any column type) is unusable, like a
blank one; a signed integer column of 128 bits (read as text) and one declared ``"text"`` are judged by their
integers too. Text is never read as a number: the text ``"-1"`` is a person. Group keys may be negative.

**Declared types** (``schema={"pid": "int"}``, ``--schema pid:int``) read a column as the caller says:
``"int"`` makes text cells that are an optional sign and decimal digits, within ``int64``, that integer
(``"07"`` and ``"7"`` one key) and every other cell unusable; ``"text"`` makes integer cells their
canonical decimal text. A person is the canonical text of their id either way
(:mod:`securedp.bounding.digest` hashes that text), so ``7`` and ``"7"`` are one person on every path.
"""

from __future__ import annotations

import decimal
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from securedp.hazmat.exact.bounds import decimal_too_long
from securedp.reading.cells import REPLACEMENT, UNUSABLE_TEXT, is_missing, is_unusable_text, shown
from securedp.reading.collect import collect
from securedp.reading.text import arrow_text, python_text

__all__ = ["DECLARED_TYPES", "KeyColumn", "key_column", "refused_type", "unusable_key"]

DECLARED_TYPES = ("int", "number", "text")
"""The types a caller may declare for a column (``schema=``): ``"number"`` only for value columns."""

_INT64 = 1 << 63
ID_BITS = 4096
"""An object cell's integer id or key is unusable from ``2**ID_BITS`` in magnitude (1,234 decimal digits): its text
is then written in time that does not grow with the value, and Python's limit on the digits of ``str(int)`` (4,300)
never decides a release. A ``Decimal`` is judged by its exponent before it is turned into an integer."""
_INTEGERS = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)
_CANONICAL_OR_SIGNED = r"^[+-]?[0-9]+$"


@dataclass(frozen=True)
class KeyColumn:
    """An id or key column read by the rule of the module docstring.

    ``values`` is an integer column (8 to 64 bits) or a text column, ``null`` where the cell is unusable
    (or a column of Polars type ``Null`` when no cell is usable); ``unusable`` marks those cells; and
    ``cell(i)`` gives the caller's own cell ``i`` (for the data holder's error messages).
    """

    values: pl.Series
    unusable: pl.Series
    cell: Callable[[int], Any]

    def refused(self, name: str, role: str, where: Callable[[int], str], first: int, count: int) -> ValueError:
        """The data holder's error for the unusable cell ``first`` (of ``count``): its place and what it holds
        (:func:`unusable_key`)."""
        return unusable_key(name, role, self.cell(first), count, where(first),
                            integers=self.values.dtype in _INTEGERS)


_ROLE_WORDS = {"id": ("id", "fill in or remove those rows"),
               "group_by": ("group key", "fill in or remove those rows, or pass missing_keys='drop'")}


def unusable_key(name: str, role: str, cell: Any, count: int, place: str | None, integers: bool = False
                 ) -> ValueError:
    """The data holder's error for an id or key column with ``count`` unusable cells, ``cell`` one of them, in
    one wording for every reader and engine: ``column 'pid', line 72: blank id (3 row(s) without a usable id);
    ...``. ``place`` is where ``cell`` stands (``None`` where rows have no place: a Spark table);
    ``integers``: the column reads as integers (a text cell there is no integer of a column declared int)."""
    what, hint = _ROLE_WORDS[role]
    if isinstance(cell, np.generic):
        cell = cell.item()
    if too_large(cell):
        said = (f"{what} {shown(cell)} is too large (an integer id or key is below 2**{ID_BITS} in magnitude: cast "
                "the column to text)")
    elif is_missing(cell) or (isinstance(cell, str) and is_unusable_text(cell) and REPLACEMENT not in cell):
        said = f"blank {what}"
    elif isinstance(cell, str) and integers:
        said = f"{what} {shown(cell)} is not an integer (the column is declared int)"
    elif isinstance(cell, str):
        said = f"{what} {shown(cell)} holds bytes that are not valid text"
    elif isinstance(cell, (float, decimal.Decimal)) and not math.isfinite(cell):
        said = f"{what} {shown(cell)} is not a finite number"
    elif role == "id" and isinstance(cell, (int, float, decimal.Decimal)) and not isinstance(cell, bool) \
            and cell < 0 and cell == int(cell):
        said = (f"negative {what} {shown(cell)} (pandas.factorize codes a missing id as -1; a person id is an "
                "integer >= 0 or text)")
    elif isinstance(cell, (float, decimal.Decimal, numbers.Rational)) and not isinstance(cell, bool):
        fraction = cell.normalize() if isinstance(cell, decimal.Decimal) else cell  # Spark's decimal(38, 18): 2.5
        said = f"{what} {shown(fraction)} is not a whole number" if cell != math.floor(cell) else (
            f"{what} {shown(cell)} is too large to be read exactly (a float id or key is below 2**53 in magnitude, a "
            "decimal one within 64 bits: cast the column to integers or text)")
    else:
        said = f"{what} {shown(cell)} is neither an integer nor text (a {type(cell).__name__})"
    at = "" if place is None else f", {place}"
    return ValueError(f"column {name!r}{at}: {said} ({count} row(s) without a usable {what}); {hint}")


def too_large(cell: Any) -> bool:
    """Whether an integer-valued cell (an int, NumPy integer, ``Fraction`` or ``Decimal`` holding an integer) is
    ``2**ID_BITS`` or more in magnitude: judged by its bits, a ``Decimal`` by its exponent before it is turned into
    an integer (``Decimal("5E+999999999")`` would be a billion digits); a ``Decimal`` whose coefficient has more than
    :data:`~securedp.hazmat.exact.bounds.CELL_CHARS` digits (``1.000...``, a million zeros) is too long to read,
    whatever its value (turning it into an integer takes time quadratic in its digits)."""
    if isinstance(cell, decimal.Decimal):
        if not cell.is_finite():
            return False
        if cell.adjusted() >= ID_BITS or decimal_too_long(cell):  # by its length before any conversion
            return True
        if cell.adjusted() < 0:  # below 1 in magnitude (``1E-999999999`` would be a billion-digit denominator)
            return False
        numerator, denominator = cell.as_integer_ratio()
        return denominator == 1 and abs(numerator).bit_length() > ID_BITS
    if isinstance(cell, numbers.Rational) and not isinstance(cell, (bool, np.bool_, np.timedelta64)):
        return cell.denominator == 1 and abs(int(cell.numerator)).bit_length() > ID_BITS
    return False


def refused_type(name: str, role: str, dtype: Any) -> TypeError:
    """The error for an id or key column whose declared type holds no integer or text (a schema decides it)."""
    return TypeError(f"{role} column {name!r} has type {dtype}: an id or key column holds integers or text "
                     "(cast it to integers or strings)")


def _text_values(series: pl.Series, cell: Callable[[int], Any] | None = None) -> KeyColumn:
    """A text column: each text itself, unusable when missing, blank or undecodable; ``cell`` shows a cell in an
    error (the text's own by default; a 128-bit integer column's, its integer)."""
    text = pl.col("_text")
    verdicts = collect(series.alias("_text").to_frame().lazy().select(
        (text.is_null() | text.str.contains(UNUSABLE_TEXT)).fill_null(True)), series.len())
    unusable = verdicts.to_series().alias(series.name)
    return KeyColumn(series.set(unusable, None) if unusable.any() else series, unusable, cell or series.__getitem__)


_FLOAT_EXACT = 2.0**53


def _integral_values(series: pl.Series) -> KeyColumn:
    """A float column: integral finite values of magnitude below ``2**53`` are those integers, the rest unusable."""
    x = series.cast(pl.Float64)
    usable = (x.is_not_null() & x.is_not_nan() & (x == x.floor()) & (x.abs() < _FLOAT_EXACT)).fill_null(False)
    values = pl.select(pl.when(usable).then(x.cast(pl.Int64, strict=False))).to_series().alias(series.name)
    return KeyColumn(values, ~usable, series.__getitem__)


def _decimal_values(series: pl.Series) -> KeyColumn:
    """A decimal column: integral values within ``int64`` are those integers (exactly), the rest unusable."""
    cells = series.to_list()
    ints = [None if c is None or not c.is_finite() or c != c.to_integral_value() or not -_INT64 <= int(c) < _INT64
            else int(c) for c in cells]
    values = pl.Series(series.name, ints, dtype=pl.Int64)
    return KeyColumn(values, values.is_null(), cells.__getitem__)


def _cell_text(cell: Any) -> str | None:
    """An object cell as an id or key's text, or ``None`` when it is unusable (the object rule)."""
    if isinstance(cell, (bool, np.bool_, np.timedelta64)):  # a timedelta64 is an np.integer, but no integer id
        return None
    if too_large(cell):
        return None
    if isinstance(cell, (int, np.integer)):
        return str(int(cell))
    if isinstance(cell, str):
        return None if is_unusable_text(cell) else python_text(cell)
    if is_missing(cell):
        return None
    if isinstance(cell, decimal.Decimal) and cell.is_finite() and cell.adjusted() < 0:
        return "0" if cell.is_zero() else None  # below 1 in magnitude: 0 or a fraction, judged by its exponent
    if isinstance(cell, (float, np.floating, decimal.Decimal)):
        try:
            numerator, denominator = cell.as_integer_ratio()  # exact, for every float width and for Decimal
        except (OverflowError, ValueError):  # infinities
            return None
        if isinstance(cell, (float, np.floating)) and abs(numerator) >= 1 << 53:
            return None  # two ids may have been rounded into this float
        return str(numerator) if denominator == 1 else None
    if isinstance(cell, numbers.Rational):
        return str(cell.numerator) if cell.denominator == 1 else None
    return None


def _object_values(cells: list[Any], name: str) -> KeyColumn:
    texts = [_cell_text(c) for c in cells]
    values = pl.Series(name, texts, dtype=pl.String)
    return KeyColumn(values, values.is_null(), cells.__getitem__)


def _cells_or_series(column: Any, name: str, role: str) -> pl.Series | list[Any]:
    """A typed column as Polars, or an object column as its cells (by the caller's own column type)."""
    if isinstance(column, pl.Series):
        return column.alias(name)
    module = type(column).__module__.split(".")[0]
    if module == "pandas":
        dtype = column.dtype
        if dtype.kind == "O" or str(dtype).startswith(("str", "string")):  # object, text, categorical: by cell
            # the cells as they are: each is judged by the object rule (pandas' own missing-value test, na_value=,
            # raises on a signalling NaN, ``Decimal("sNaN")``)
            return list(column.to_numpy(dtype=object))
        if dtype.kind == "b":
            raise refused_type(name, role, dtype)
        import pyarrow as pa

        try:
            return _cells_or_series(pa.chunked_array([pa.Array.from_pandas(column)]), name, role)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            raise refused_type(name, role, dtype) from None
    if module == "pyarrow":
        import pyarrow as pa

        kind = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
        if pa.types.is_decimal(kind) and not pa.types.is_decimal128(kind):  # Polars panics on decimal256
            if kind.precision > 38:
                return column.to_pylist()  # type: ignore[no-any-return]  # by cell
            column = column.cast(pa.decimal128(kind.precision, kind.scale))  # exact: every value fits
        text = arrow_text(column)
        try:
            read = pl.from_arrow(text)
        except (pl.exceptions.PolarsError, pl.exceptions.PanicException, pa.ArrowException):
            raise refused_type(name, role, column.type) from None  # a type Polars cannot take (by the type only)
        assert isinstance(read, pl.Series)
        return read.alias(name)
    if isinstance(column, np.ndarray):
        if column.dtype.kind in "iuf":
            return pl.Series(name, column)
        if column.dtype.kind in "OUS":
            return column.tolist() if column.dtype.kind == "O" else list(column)
        raise refused_type(name, role, column.dtype)
    return column if isinstance(column, list) else list(column)


def _typed(series: pl.Series, name: str, role: str) -> KeyColumn:
    dtype = series.dtype
    if isinstance(dtype, (pl.Categorical, pl.Enum)):
        return _text_values(series.cast(pl.String))
    if dtype == pl.String:
        return _text_values(series)
    if dtype in _INTEGERS:
        return KeyColumn(series, series.is_null(), series.__getitem__)
    if dtype in (pl.Int128, pl.UInt128):
        return _text_values(series.cast(pl.String), series.__getitem__)
    if dtype.is_float():
        return _integral_values(series)
    if isinstance(dtype, pl.Decimal):
        return _decimal_values(series)
    if dtype == pl.Null:
        return KeyColumn(series, pl.Series(name, [True] * series.len(), dtype=pl.Boolean), series.__getitem__)
    raise refused_type(name, role, dtype)


def _declared_int(read: KeyColumn, name: str) -> KeyColumn:
    """``schema={name: "int"}``: text cells of an optional sign and digits within ``int64`` are integers."""
    values = read.values
    if values.dtype in _INTEGERS or values.dtype == pl.Null:
        return read
    text = values.cast(pl.String)
    digits = text.str.contains(_CANONICAL_OR_SIGNED).fill_null(False)
    numbers_ = pl.select(pl.when(digits).then(text.str.strip_prefix("+").cast(pl.Int64, strict=False))
                         ).to_series().alias(name)
    return KeyColumn(numbers_, numbers_.is_null(), read.cell)


def _declared_text(read: KeyColumn) -> KeyColumn:
    """``schema={name: "text"}``: integer cells are their canonical decimal text."""
    if read.values.dtype in _INTEGERS:
        return KeyColumn(read.values.cast(pl.String), read.unusable, read.cell)
    return read


def _nonnegative(read: KeyColumn, given: pl.Series | list[Any]) -> KeyColumn:
    """Person ids: an integer below 0 (an integer cell, or an integral number, in any column) is unusable: judged on
    the column as given when its type is a signed integer (128 bits included, whose cells are read as text, and
    whatever the declared type), else on the integers read."""
    values = read.values
    if isinstance(given, pl.Series) and given.dtype.is_signed_integer():
        negative = (given < 0).fill_null(False)
    elif values.dtype in _INTEGERS and values.dtype.is_signed_integer():
        negative = (values < 0).fill_null(False)
    elif isinstance(given, list) and values.dtype == pl.String:
        negative = pl.Series([isinstance(c, (int, np.integer, float, np.floating, decimal.Decimal, numbers.Rational))
                              and not isinstance(c, (bool, np.bool_)) and t is not None and t.startswith("-")
                              for c, t in zip(given, values.to_list(), strict=True)], dtype=pl.Boolean)
    else:
        return read
    if not negative.any():
        return read
    return KeyColumn(values.set(negative, None), read.unusable | negative, read.cell)


def key_column(column: Any, name: str, role: str, declared: str | None = None) -> KeyColumn:
    """The id or key column ``column`` (any input kind) read by the rule of the module docstring.

    ``role`` is ``"id"`` (person ids: never negative integers) or ``"group_by"``; ``declared`` is the
    caller's declared type (``"int"``, ``"text"`` or ``None``). Only the column's type can raise
    (:class:`TypeError`); a cell never does.
    """
    if declared not in (None, "int", "text"):
        raise ValueError(f"{role} column {name!r} is declared {declared!r}: an id or key column is 'int' or 'text'")
    given = _cells_or_series(column, name, role)
    read = _object_values(given, name) if isinstance(given, list) else _typed(given, name, role)
    if declared == "int":
        read = _declared_int(read, name)
    elif declared == "text":
        read = _declared_text(read)
    return _nonnegative(read, given) if role == "id" else read
