"""Tables in and out: reading the caller's table into Polars, and writing exact results back in its kind.

**In.** A pandas DataFrame, a Polars DataFrame or LazyFrame, a pyarrow
Table, or a path to a CSV (UTF-8, with or without BOM) or Parquet file. Only
the columns a release needs are read. Person ids and group keys must be
integers or non-blank strings (categoricals are read as their strings); a
missing, NaN or blank id or key, or a float key, raises ``ValueError`` or
``TypeError`` naming the column before anything is drawn or charged. Without
an id column every row is its own person.

**Out.** :func:`exact_frame` builds the released table. **Every column's type
follows from the release's public parameters alone**, never from the values
drawn, so the schema of a release says nothing about its data and building it
never fails on a released value:

* an integer column (counts, persons) is ``Int64``, or ``Decimal(38, 0)`` when
  its noise may reach ``2**61`` (decided from the noise law, which then gives it
  the step ``1``: :meth:`securedp.mechanisms.noise.Noise.output_step`);
* a lattice column whose step has a finite decimal form with ``p <= 38``
  places (every step ``2**-a 5**-b`` times an integer) is ``Decimal(38, p)``;
* a lattice column whose step has more than 38 decimal places (``0.1`` given
  as a float has 55) is exact decimal text, and one whose step has no finite
  decimal form (``1/3``) is exact ``"num/den"`` text.

A value that does not fit its fixed-width column (beyond ``10**38`` digits, or
``int64``: possible only past ``2**64`` rows or on noise events of probability
below ``2**-64``) is a null cell there; the release's ``value`` always holds it
exactly. The frame is converted to the caller's kind: pandas (``Decimal``
objects), pyarrow (``decimal128``) or Polars (for Polars input and for files).
"""

from __future__ import annotations

import pathlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from securedp.engines.polars.bounding import to_polars
from securedp.hazmat.exact.rational import format_rational
from securedp.reading.cells import UNUSABLE_TEXT, is_blank
from securedp.reading.columns import column_values
from securedp.reading.files import read_file
from securedp.reading.text import arrow_text, python_text

_KEY_TYPES = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64, pl.String)
_INT64 = 1 << 63
_DIGITS38 = 10**38


ROW = "_securedp_row"
"""The column of a read table holding each row's position in the caller's table."""


@dataclass(frozen=True)
class Frames:
    """The caller's table as Polars (``frame``), and the kind to answer in (pandas, polars or pyarrow).

    ``values`` (from :func:`read_table`): each value column's records, read exactly from the caller's
    own column (:func:`securedp.reading.columns.column_values`) and indexed by source row: row ``i``
    of ``frame`` holds the records at position ``frame[ROW][i]``.
    """

    frame: pl.DataFrame
    kind: str
    values: Mapping[str, np.ndarray | list[Any]] = field(default_factory=dict)


def _kind(data: Any) -> str:
    module = type(data).__module__.split(".")[0]
    return {"pandas": "pandas", "pyarrow": "pyarrow"}.get(module, "polars")


def _names(data: Any) -> list[Any]:
    if isinstance(data, pl.LazyFrame):
        return list(data.collect_schema().names())
    names = getattr(data, "column_names", None)  # pyarrow
    return list(names if names is not None else data.columns)


def _split(data: Any, keys: Sequence[str], values: Sequence[str]) -> tuple[pl.DataFrame, dict[str, Any], int]:
    """An in-memory table's ``keys`` as Polars (only those columns are converted), its ``values`` as exact
    records read from its own columns, and its number of rows."""
    names = _names(data)
    absent = [c for c in dict.fromkeys([*keys, *values]) if c not in names]
    if absent:
        raise ValueError(f"column(s) {absent} are not in the table (it has {names})")
    if isinstance(data, pl.LazyFrame):
        data = data.select(list(dict.fromkeys([*keys, *values]))).collect()
    module = type(data).__module__.split(".")[0]
    if module == "pyarrow":  # Arrow text is checked (Polars would take invalid UTF-8 as it is)
        frame = to_polars(pa.table({c: arrow_text(data.column(c)) for c in keys}) if keys else data.select([]))
        return frame, {c: column_values(data.column(c)) for c in values}, data.num_rows
    if module == "pandas":
        frame = pl.DataFrame([_pandas_key_series(data[c], c) for c in keys]) if keys else pl.DataFrame()
        return frame, {c: column_values(data[c]) for c in values}, len(data)
    if not isinstance(data, pl.DataFrame):
        raise TypeError(f"a table must be a polars, pandas or pyarrow table, not {type(data).__name__}")
    return data.select(list(keys)), {c: column_values(data[c]) for c in values}, data.height


def _pandas_key_series(series: Any, name: str) -> pl.Series:
    """A pandas id or key column as a Polars column, decided cell by cell for an object or text column.

    Missing and blank cells are unusable whatever the others hold (they never decide the column's
    type); the usable cells are all integers (an ``Int64`` column) or text (a ``String`` column; an
    integer among text cells is its canonical decimal text, so ``7`` and ``"7"`` are one person or key,
    as the row digests, which hash that text, already treat them).
    """
    if series.dtype.kind != "O" and not str(series.dtype).startswith(("str", "string")):
        return to_polars(series.to_frame(name))[name]  # a typed column (NumPy, nullable, Arrow): its own type
    cells = series.to_numpy(dtype=object, na_value=None).tolist()
    usable = [c for c in cells if not is_blank(c)]
    if usable and all(isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_)) for c in usable):
        ints = [int(c) for c in usable]
        dtype = pl.Int64 if min(ints) >= -_INT64 and max(ints) < _INT64 else pl.UInt64 if min(ints) >= 0 else None
        if dtype is None or max(ints) >= 1 << 64:
            raise TypeError(f"column {name!r} holds integers beyond 64 bits: an id or key column holds 64-bit "
                            "integers or text")
        return pl.Series(name, [None if is_blank(c) else int(c) for c in cells], dtype=dtype)
    if all(isinstance(c, str) or (isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_)))
           for c in usable):  # text, or integers and text: each cell is its canonical text (7 and "7" are one)
        return pl.Series(name, [None if is_blank(c) else python_text(c) if isinstance(c, str) else str(int(c))
                                for c in cells],
                         dtype=pl.String)
    raise TypeError(f"column {name!r} holds values that are neither integers nor text: an id or key column "
                    "holds integers or text")


def read_source(path: str | pathlib.Path, columns: Sequence[str] | None, delimiter: str = ",",
                encoding: str = "utf-8") -> Frames:
    """The needed ``columns`` (all if ``None``) of the CSV or Parquet file at ``path``, read by
    :func:`securedp.reading.files.read_file`, as Polars (tables read from a file answer in Polars)."""
    return Frames(read_file(path, columns, delimiter=delimiter, encoding=encoding), "polars")


def _key_expr(frame: pl.DataFrame, column: str, role: str) -> tuple[pl.Expr, pl.Expr]:
    """The column as an id or key (categoricals as strings) and the mask of its unusable cells.

    A float column holds integer ids or keys with missing values (pandas makes ``float64`` of an integer
    column with one missing value, and of an empty column): each finite integral value within int64 is
    that integer, anything else is an unusable cell, so one person's missing id never changes how the
    others read. Such a column without any usable cell has no type of its own (``Null``): public keys
    then give it theirs.
    """
    dtype = frame.schema[column]
    expr = pl.col(column)
    if isinstance(dtype, (pl.Categorical, pl.Enum)):
        expr, dtype = expr.cast(pl.String), pl.String()
    if dtype.is_float() or dtype == pl.Null:
        usable = (expr.is_not_null() & expr.is_not_nan() & (expr == expr.floor()) & (expr.abs() < 2.0**63)
                  ).fill_null(False) if dtype != pl.Null else expr.is_not_null()
        if not frame.select(usable.any()).item():
            return expr.cast(pl.Null).alias(column), ~usable
        return pl.when(usable).then(expr.cast(pl.Int64, strict=False)).alias(column), ~usable
    if dtype not in _KEY_TYPES:
        raise TypeError(f"{role} column {column!r} has type {dtype}: cast it to integers or strings")
    bad = expr.is_null()
    if dtype == pl.String:  # blank, or holding U+FFFD (undecodable bytes): no id or key (securedp.reading.cells)
        bad = bad | expr.str.contains(UNUSABLE_TEXT)
    return expr.alias(column), bad


def read_table(data: Any, person: str, id_column: str | None, group_by: Sequence[str],
               values: Sequence[str] = (), drop_bad_keys: bool = False, drop_missing_keys: bool = False) -> Frames:
    """The table with a person column named ``person``, checked group columns, and the value columns' records.

    Only the id and group columns are converted to Polars; each value column is read exactly from the
    caller's own column (:class:`Frames`), so a column the release does not name is never converted
    and a value column holding ``10**400``, a ``Fraction`` or a stray string reaches the lattice screen
    as it is.

    A missing or blank id or key raises naming its column, or with ``drop_bad_keys`` (analyst-facing
    sessions) drops its row, so that no error depends on the data; ``drop_missing_keys`` (the caller's
    ``missing_keys="drop"``) drops the rows whose group key is missing or blank, in either mode.
    """
    keys = list(dict.fromkeys([*([id_column] if id_column else []), *group_by]))
    values = list(dict.fromkeys(values))
    if isinstance(data, (str, pathlib.Path)):
        source = read_source(data, [*keys, *values])
        frame, records, kind = source.frame, {c: column_values(source.frame[c]) for c in values}, source.kind
        frame, height = frame.select(keys), frame.height
    else:
        frame, records, height = _split(data, keys, values)
        kind = _kind(data)
    frame = frame.with_columns(pl.int_range(height, dtype=pl.Int64).alias(ROW)) if keys else pl.DataFrame(
        {ROW: np.arange(height, dtype=np.int64)})
    roles = [(c, "group_by") for c in group_by] + ([(id_column, "id")] if id_column is not None else [])
    checked = [(c, *_key_expr(frame, c, role), role) for c, role in roles]
    dropped = [bad for c, _, bad, role in checked if drop_bad_keys or (drop_missing_keys and role == "group_by")]
    if dropped:  # a rule of each row alone: its own id or key is unusable
        frame = frame.filter(~pl.any_horizontal(dropped))
    found = frame.select(bad.any() for _, _, bad, _ in checked).row(0) if checked else ()
    for (column, _, _, role), unusable in zip(checked, found, strict=True):  # one pass, every column at once
        if unusable:
            raise ValueError(f"{role} column {column!r} has missing, blank or non-integral values")
    exprs = [expr for c, expr, _, _ in checked if c in group_by]
    if id_column is not None:
        exprs.append(next(expr for c, expr, _, role in checked if role == "id").alias(person))
    else:  # each row is its own person: its position in the caller's table, whatever rows are dropped
        exprs.append(pl.col(ROW).alias(person))
    return Frames(frame.select([*exprs, ROW]), kind, records)


def _decimal_places(step: Fraction) -> int | None:
    """The decimal places of multiples of ``step``, or None if they have no finite decimal form."""
    d, twos, fives = step.denominator, 0, 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    return max(twos, fives) if d == 1 else None


def _decimal_series(name: str, scaled: list[int | None], places: int) -> pl.Series:
    """An exact ``Decimal(38, places)`` column whose values are ``scaled[i] / 10**places`` (``None``: null).

    Each ``|scaled[i]| < 10**38`` is written as the 128-bit little-endian two's-complement integer
    Arrow's ``decimal128`` stores (from int64 words with their sign extension when all fit), so no
    value passes through a decimal context (which would round it).
    """
    nulls = [v is None for v in scaled]
    words = [0 if v is None else v for v in scaled]
    try:
        low = np.array(words, dtype="<i8")
    except OverflowError:  # some value needs more than 64 bits
        data = b"".join([v.to_bytes(16, "little", signed=True) for v in words])
    else:
        data = np.stack([low, low >> 63], axis=1).tobytes()
    validity = None
    if any(nulls):
        validity = pa.py_buffer(np.packbits(~np.array(nulls, dtype=bool), bitorder="little").tobytes())
    array = pa.Array.from_buffers(pa.decimal128(38, places), len(scaled), [validity, pa.py_buffer(data)],
                                  null_count=sum(nulls))
    return pl.Series(name, array)


def _decimal_text(value: Fraction | int, places: int) -> str:
    """``value`` (a multiple of ``10**-places``) as exact decimal text: ``-0.0125``."""
    scaled = value.numerator * 10**places // value.denominator
    sign, digits = ("-" if scaled < 0 else ""), str(abs(scaled)).rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}" if places else f"{sign}{digits}"


def _exact_series(name: str, values: list[Any], step: Fraction | None) -> pl.Series:
    """One value column, exactly, typed by ``step`` alone (see the module docstring).

    ``values`` are ints or Fractions (multiples of ``step`` if given; ``None``: an int64 column).
    """
    if step is None:
        return pl.Series(name, [v if -_INT64 <= v < _INT64 else None for v in values], dtype=pl.Int64)
    places = _decimal_places(step)
    if places is None:  # no finite decimal form (1/3): exact "num/den" text
        return pl.Series(name, [format_rational(Fraction(v)) for v in values], dtype=pl.String)
    if places > 38:
        return pl.Series(name, [_decimal_text(v, places) for v in values], dtype=pl.String)
    scale = 10**places
    scaled = [v.numerator * scale // v.denominator for v in values]
    return _decimal_series(name, [v if abs(v) < _DIGITS38 else None for v in scaled], places)


def exact_frame(names: Sequence[str], rows: Sequence[Sequence[Any]], kind: str,
                keys: Mapping[str, pl.DataType], steps: Mapping[str, Fraction | None]) -> Any:
    """The released rows as a DataFrame of ``kind``: key columns of the given types, values exact.

    A value column on a lattice of ``steps[name]`` is ``Decimal`` with the step's decimal places (the
    same type whatever the values, even with no row); ``None`` marks an integer column.
    """
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in names]
    series = []
    for i, name in enumerate(names):
        values = list(columns[i])
        series.append(pl.Series(name, values, dtype=keys[name]) if name in keys
                      else _exact_series(name, values, steps.get(name)))
    frame = pl.DataFrame(series)
    if kind == "pandas":
        return frame.to_pandas()
    if kind == "pyarrow":
        return frame.to_arrow()
    return frame
