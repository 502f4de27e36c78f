"""One column, never a table: how a release recognises the column it reads.

A release reads ONE column: a table or a 2-D array is refused, never
flattened (flattening a 4 x 3 table gives 12 "rows" for 4 people, and a
count whose sensitivity is wrong). Tables are recognised by duck typing,
without importing pandas, polars or pyarrow: a Mapping; an object with
``columns``, ``column_names`` or ``num_columns`` (pandas and polars
DataFrames, pyarrow Tables and RecordBatches); anything whose ``ndim`` is
not 1 or whose ``shape`` is not a 1-tuple (NumPy arrays, 2-D memoryviews,
NumPy scalars). A plain list is a column unless its records are rows
themselves (lists, tuples, dicts, sets, arrays): see :func:`first_row_record`.
"""

from __future__ import annotations

import collections.abc
from typing import Any

import numpy as np

from securedp.reading.columns import column_values, refuse_non_column


class NotOneColumnError(TypeError, ValueError):
    """A table, a 2-D array or a list of rows was given where one column is read.

    A :class:`TypeError` (the wrong kind of object) and a :class:`ValueError`
    (a list whose records are not numbers), so either ``except`` catches it.
    """


_TABLE_ATTRIBUTES = ("columns", "column_names", "num_columns")
_SCALAR_SEQUENCES = (str, bytes, bytearray)
_ROW_TYPES = (list, tuple, dict, set, frozenset, memoryview, np.ndarray,
              collections.abc.Sequence, collections.abc.Mapping, collections.abc.Set)
ONE_COLUMN_HINT = ("pass a single column instead (e.g. df[\"col\"], series, or arr[:, j]); "
                   "for statistics per group use the grouped-table API, securedp.table (securedp.tables)")


def is_row_type(t: type) -> bool:
    """Whether a record of type ``t`` is itself a row of values (a sequence, mapping, set or array)."""
    return issubclass(t, _ROW_TYPES) and not issubclass(t, _SCALAR_SEQUENCES)


def _columns_of(data: Any) -> str:
    """`` with k columns`` from a 2-D ``shape`` (never the number of rows, which is private), or ``""``."""
    shape = getattr(data, "shape", None)
    if isinstance(shape, tuple) and len(shape) == 2 and isinstance(shape[1], (int, np.integer)):
        return f" with {int(shape[1])} columns"
    return ""


def _not_one_column(data: Any) -> str | None:
    """What ``data`` is when it is not one column (a table, a 2-D or 0-D array), else ``None``.

    The description never depends on the number of rows.
    """
    if isinstance(data, collections.abc.Mapping):
        return f"a mapping ({type(data).__name__}), like a table of columns"
    for attribute in _TABLE_ATTRIBUTES:
        if getattr(type(data), attribute, None) is not None:  # class level: a Series label is no column
            return f"a table ({type(data).__name__}{_columns_of(data)})"
    ndim = getattr(data, "ndim", None)
    if isinstance(ndim, (int, np.integer)) and not isinstance(ndim, (bool, np.bool_)) and ndim != 1:
        if ndim == 0:
            return f"a single value ({type(data).__name__})"
        return f"a {int(ndim)}-D {type(data).__name__}{_columns_of(data)}"
    shape = getattr(data, "shape", None)
    if isinstance(shape, tuple) and len(shape) != 1:
        return f"a {len(shape)}-D {type(data).__name__}{_columns_of(data)}"
    return None


def check_one_column(data: Any, name: str = "data", hint: str = ONE_COLUMN_HINT) -> None:
    """Raise :class:`NotOneColumnError` if ``data`` is a table or not 1-D, judging by its type and shape only.

    No record is read, so a release can check this before it starts reading
    its data (:mod:`securedp.bounding.data_phase`); the message never
    depends on the number of rows or on a value.
    """
    what = _not_one_column(data)
    if what is not None:
        raise NotOneColumnError(f"{name} must be one column, not {what}; {hint}")
    refuse_non_column(data, name)


def as_records(data: Any, name: str = "data", hint: str = ONE_COLUMN_HINT) -> np.ndarray | list[Any]:
    """``data`` as a 1-D NumPy array or a list of records, read exactly by
    :func:`securedp.reading.columns.column_values` (one rule per column kind:
    a nullable integer column never passes through ``float64``).

    A table or an array that is not 1-D raises :class:`TypeError` naming
    ``name`` and saying what to pass instead (``hint``; the error is a
    :class:`NotOneColumnError`, also a :class:`ValueError`); it is never
    flattened. Whether the records are themselves rows is checked by
    :func:`first_row_record`, not here.
    """
    check_one_column(data, name, hint)
    if not isinstance(data, np.ndarray) and getattr(data, "to_numpy", None) is None and (
            isinstance(data, (str, bytes)) or not hasattr(data, "__iter__")):
        raise TypeError(f"{name} must be an iterable of records, not {type(data).__name__}")
    records = column_values(data)
    if isinstance(records, np.ndarray) and records.ndim != 1:
        raise NotOneColumnError(f"{name} must be one column, not a {records.ndim}-D {type(data).__name__}; {hint}")
    return records


def first_row_record(records: np.ndarray | list[Any], rows: np.ndarray | None = None) -> tuple[int, int] | None:
    """``(index, count)`` of the records that are themselves rows (lists, tuples, arrays ...), or ``None``.

    Only the positions ``rows`` (all if None) are looked at. NumPy arrays of
    a non-object dtype hold no such record.
    """
    if isinstance(records, np.ndarray) and records.dtype != object:
        return None
    positions: Any = range(len(records)) if rows is None else rows.tolist()
    values = records if rows is None else [records[i] for i in positions]
    row_types = {t for t in set(map(type, values)) if is_row_type(t)}
    if not row_types:
        return None
    hits = [i for i, x in zip(positions, values, strict=True)
            if type(x) in row_types and not (isinstance(x, np.ndarray) and x.ndim == 0)]
    return (hits[0], len(hits)) if hits else None


def rows_error(records: Any, found: tuple[int, int], name: str = "data", place: str | None = None) -> NotOneColumnError:
    """The data holder's error for records that are rows: ``name`` looks like a table, not one column.

    ``place`` says where the first such record stands (``"column 'data', row 2"``), else ``record i``."""
    first, count = found
    where = f"{name} record {first}" if place is None else place
    return NotOneColumnError(
        f"{where}: a {type(records[first]).__name__}, not a number: {name} looks like rows of "
        f"a table ({count} such record(s)), not one column; {ONE_COLUMN_HINT}"
    )


_PLURALS = {"list": "lists", "tuple": "tuples", "dict": "structs (mappings)", "ndarray": "arrays", "set": "sets"}


def nested_column_error(column: str, records: Any, found: tuple[int, int], place: str) -> NotOneColumnError:
    """The data holder's error for a value column of a table whose cells are themselves rows (a Parquet
    list or struct column): ``column 'x' holds lists, not numbers``, with how many and where the first is
    (``place``: ``"row 3"``, ``"line 5"``)."""
    first, count = found
    kind = type(records[first]).__name__
    return NotOneColumnError(f"column {column!r} holds {_PLURALS.get(kind, kind + ' values')}, not numbers "
                             f"({count} such cell(s), the first at {place}): a value column holds one number per row")
