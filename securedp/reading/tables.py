"""A table of any kind, seen column by column: the needed columns as the caller holds them, and where each row is.

:func:`table_source` is where every table a release reads is opened, whatever its kind: a pandas
DataFrame, a Polars DataFrame or LazyFrame, a pyarrow Table, a CSV or Parquet file (a path, or a
:class:`~securedp.reading.files.FileTable` already read), or a mapping of column names to columns (a
one-column release's data and ids). Only the needed columns are taken, each **as the caller's own
column object** (never converted as a whole table: a column the release does not name can hold
anything), and the readers of ids and keys (:mod:`securedp.reading.keys`) and of values
(:mod:`securedp.reading.columns`) read them cell by cell. :meth:`Source.where` says where a row stands,
in the words a person would look for it: ``line 72`` of a CSV file, ``row 70`` of anything else.
"""

from __future__ import annotations

import collections.abc
import pathlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from securedp.reading.columns import column_values, refuse_non_column
from securedp.reading.delimited import MissingColumns
from securedp.reading.files import FileTable, TableFile, read_file

__all__ = ["Source", "column_names", "is_table", "table_source"]


def _row(i: int) -> str:
    return f"row {i}"


@dataclass(frozen=True)
class Source:
    """The needed columns of a table as the caller holds them, its number of rows, and the kind of table to
    answer in (``"pandas"``, ``"pyarrow"`` or ``"polars"``: a file, a mapping and Polars input answer in Polars)."""

    columns: dict[str, Any]
    height: int
    kind: str
    where: Callable[[int], str] = _row
    """Where row ``i`` stands in the caller's table: ``"line 72"`` of a CSV file, else ``"row 70"``."""


def column_names(data: Any) -> list[Any]:
    """The column names of a pandas, Polars or pyarrow table, or of a mapping of column names to columns."""
    import polars as pl

    if isinstance(data, collections.abc.Mapping):
        return list(data)
    if isinstance(data, pl.LazyFrame):
        return list(data.collect_schema().names())
    names = getattr(data, "column_names", None)  # pyarrow
    return list(names if names is not None else data.columns)


def _table_module(data: Any) -> str | None:
    """``"pandas"``, ``"polars"`` or ``"pyarrow"`` for a table of that library (or a subclass of one), else ``None``."""
    for kind in type(data).__mro__:
        module = kind.__module__.split(".")[0]
        if module in ("pandas", "polars", "pyarrow") and kind.__name__ in ("DataFrame", "LazyFrame", "Table"):
            return module
    return None


def is_table(data: Any) -> bool:
    """Whether ``data`` is a pandas, Polars or pyarrow table (a DataFrame, LazyFrame or Table, or a subclass)."""
    return _table_module(data) is not None


def table_source(data: Any, columns: Sequence[str]) -> Source:
    """The ``columns`` of ``data`` (see the module docstring); a column the table lacks raises
    :class:`ValueError` naming it (:class:`~securedp.reading.delimited.MissingColumns` for a file), a kind that
    is no table :class:`TypeError`."""
    import polars as pl

    wanted = list(dict.fromkeys(columns))
    if isinstance(data, (str, pathlib.Path)):
        data = read_file(data, wanted)
    if isinstance(data, TableFile):
        data = data.read(wanted)
    if isinstance(data, FileTable):
        frame = data.frame
        absent = [c for c in wanted if c not in frame.columns]
        if absent:
            raise MissingColumns(absent, list(frame.columns))
        return Source({c: frame[c] for c in wanted}, data.height, "polars", data.where)
    if isinstance(data, collections.abc.Mapping):
        absent = [c for c in wanted if c not in data]
        if absent:
            raise ValueError(str(MissingColumns(absent, list(data))))
        for c, column in data.items():
            refuse_non_column(column, f"column {c!r}")
        every = {c: column if isinstance(column, collections.abc.Sized) else column_values(column)
                 for c, column in data.items()}  # an iterator is read once, here
        heights = {len(column) for column in every.values()}
        if len(heights) > 1:
            raise ValueError("the columns have different lengths: give one entry per row in each")
        return Source({c: every[c] for c in wanted}, heights.pop() if heights else 0, "polars")
    module = _table_module(data)
    if module is None:
        raise TypeError(f"a table must be a polars, pandas or pyarrow table or a CSV or Parquet path, not "
                        f"{type(data).__name__}")
    names = column_names(data)
    absent = [c for c in wanted if c not in names]
    if absent:
        raise ValueError(str(MissingColumns(absent, names)))
    if isinstance(data, pl.LazyFrame):
        data = data.select(wanted).collect() if wanted else data.select(pl.len()).collect()
        height = data.height if wanted else int(data.item())
        return Source({c: data[c] for c in wanted}, height, "polars")
    if module == "pyarrow":
        return Source({c: data.column(c) for c in wanted}, data.num_rows, "pyarrow")
    if module == "pandas":
        return Source({c: data[c] for c in wanted}, len(data), "pandas")
    return Source({c: data[c] for c in wanted}, data.height, "polars")
