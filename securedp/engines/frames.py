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
  the step ``1``: :meth:`securedp.privacy.noise.Noise.output_step`);
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

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa

from securedp.hazmat.exact.rational import format_rational
from securedp.reading.columns import column_values, value_column
from securedp.reading.keys import key_column
from securedp.reading.tables import table_source

_INT64 = 1 << 63
_DIGITS38 = 10**38


ROW = "_securedp_row"
"""The column of a read table holding each row's position in the caller's table."""


@dataclass(frozen=True)
class Frames:
    """The caller's table as Polars (``frame``), and the kind to answer in (pandas, polars or pyarrow).

    ``frame`` holds the id (as ``person``) and group columns read by the one rule of
    :mod:`securedp.reading.keys`, and :data:`ROW`: each row's position in the caller's table.
    ``values`` (from :func:`read_table`): each value column's records, read exactly from the caller's
    own column (:func:`securedp.reading.columns.value_column`) and indexed by source row: row ``i``
    of ``frame`` holds the records at position ``frame[ROW][i]``. ``where(position)`` says where a
    source row stands (``"line 72"`` of a CSV file, ``"row 70"`` of anything else).
    """

    frame: pl.DataFrame
    kind: str
    values: Mapping[str, np.ndarray | list[Any]] = field(default_factory=dict)
    where: Callable[[int], str] = field(default=lambda i: f"row {i}")


_SHARED_POSITIONS_LIMIT = 1 << 24
"""Tables of at most this many rows read their row positions from one shared array (64 MB at the most)."""
_shared_positions: np.ndarray = np.arange(0, dtype=np.uint32)
_shared_positions.setflags(write=False)


def row_positions(height: int) -> np.ndarray:
    """The row positions ``0 .. height - 1``: ``uint32`` below ``2**32`` rows (half the memory), else ``int64``.

    Up to :data:`_SHARED_POSITIONS_LIMIT` rows they are a read-only view of one shared array, grown by doubling
    and never written: a fresh ``np.arange`` of 10**6 positions took 0.25 ms, most of it the kernel mapping
    its pages, against 4 us for the view.
    """
    global _shared_positions
    if height > _SHARED_POSITIONS_LIMIT:
        return np.arange(height, dtype=np.uint32 if height <= 1 << 32 else np.int64)
    if height > len(_shared_positions):
        grown = np.arange(min(max(height, 2 * len(_shared_positions)), _SHARED_POSITIONS_LIMIT), dtype=np.uint32)
        grown.setflags(write=False)
        _shared_positions = grown  # a view handed out before still holds the old array
    return _shared_positions[:height]


def read_table(data: Any, person: str, id_column: str | None, group_by: Sequence[str],
               values: Sequence[str] = (), drop_bad_keys: bool = False, drop_missing_keys: bool = False,
               schema: Mapping[str, str] | None = None, labels: Collection[str] = ()) -> Frames:
    """The table with a person column named ``person``, checked group columns, and the value columns' records.

    Every column is taken as the caller holds it (:func:`securedp.reading.tables.table_source`): ids and
    keys are read by the one rule of :mod:`securedp.reading.keys` (by the column's declared type, or
    ``schema[column]``), and each value column exactly from the caller's own column, so a column the release
    does not name is never converted and a value column holding ``10**400``, a ``Fraction`` or a stray
    string reaches the lattice screen as it is. A column in ``labels`` (a histogram's declared categories)
    is read as its records (:func:`~securedp.reading.columns.column_values`): text stays text, whatever the
    other cells hold, where a value column of integer text is read as those integers.

    An unusable id or key raises naming its column and the place of the first (``line 72``), or with
    ``drop_bad_keys`` (analyst-facing sessions) drops its row, so that no error depends on the data;
    ``drop_missing_keys`` (the caller's ``missing_keys="drop"``) drops the rows whose group key is
    unusable, in either mode.
    """
    declared = dict(schema or {})
    keys = list(dict.fromkeys([*([id_column] if id_column else []), *group_by]))
    values = list(dict.fromkeys(values))
    source = table_source(data, [*keys, *values])
    roles = [(c, "group_by") for c in group_by] + ([(id_column, "id")] if id_column is not None else [])
    read = {c: key_column(source.columns[c], c, role, declared.get(c)) for c, role in roles}
    # Frames are built from a mapping of names: from a list, Polars names a column called "" "column_0".
    frame = pl.DataFrame({**{c: read[c].values for c, _ in roles}, ROW: pl.Series(ROW, row_positions(source.height))})
    dropped = [read[c].unusable for c, role in roles if drop_bad_keys or (drop_missing_keys and role == "group_by")]
    if dropped:  # a rule of each row alone: its own id or key is unusable
        frame = frame.filter(~pl.any_horizontal(dropped))
    for column, role in roles:
        if column in {c for c, r in roles if drop_bad_keys or (drop_missing_keys and r == "group_by")}:
            continue
        unusable = read[column].unusable
        if unusable.any():
            count = int(unusable.sum())
            raise read[column].refused(column, role, source.where, int(unusable.arg_true()[0]), count)
    # The person is the id column or, without one, each row's position in the caller's table (whatever rows
    # are dropped). The frame is built from the columns themselves (no copy; a select's query plan took 0.1 ms).
    columns = {c: frame.get_column(c) for c in group_by}
    columns[person] = frame.get_column(id_column if id_column is not None else ROW)
    records = {c: (column_values if c in labels else value_column)(source.columns[c]) for c in values}
    return Frames(pl.DataFrame({**columns, ROW: frame.get_column(ROW)}), source.kind, records, source.where)


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


def with_floats(frame: Any, columns: Mapping[str, Sequence[float | None]]) -> Any:
    """``frame`` (pandas, Polars, pyarrow or Spark) with each column of ``columns`` replaced by those floats
    (``None``: null, NaN in pandas) as ``float64``: a view for plotting (:meth:`TableRelease.float_frame
    <securedp.tables.table.TableRelease.float_frame>`). A Spark frame's columns are cast to ``double`` instead."""
    module = type(frame).__module__.partition(".")[0]
    if module == "pyspark":
        from pyspark.sql import functions

        return frame.select(*(functions.col(c).cast("double").alias(c) if c in columns else functions.col(c)
                              for c in frame.columns))
    if module == "pandas":
        return frame.assign(**{c: np.array([np.nan if v is None else v for v in values], dtype=np.float64)
                               for c, values in columns.items()})
    polars = frame if isinstance(frame, pl.DataFrame) else pl.from_arrow(frame)
    assert isinstance(polars, pl.DataFrame)
    floats = polars.with_columns(pl.Series(c, values, dtype=pl.Float64) for c, values in columns.items())
    return floats if isinstance(frame, pl.DataFrame) else floats.to_arrow()
