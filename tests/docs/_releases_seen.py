"""Watch every release the project's examples make, and check each one bounds a person's rows correctly.

:func:`watching` records the data, the ``ids`` and ``max_contributions`` of
every statistic's release (count, sum, mean, variance, histogram, median,
quantile, quantiles) at the one place all of them pass through,
:func:`securedp.tables.one_column.one_cell` (every one-column release is the one-cell table of its
column). Whatever path an example takes (the module functions, a ``Session``, the command's ``Query``),
the release is seen there.

:func:`unsafe` checks a recorded call against the shipped example dataset,
whose people have up to four rows: a release over a column of that dataset
is correct only if its ``ids`` put all rows of each person under one id
(the library then enforces ``max_contributions``), or, without ``ids``, if
``max_contributions`` is at least the largest number of rows one person has.
Data that is not a column of the example dataset has one row per person by
construction of the examples, so it is not judged here.

Grouped tables are watched where every table release builds its in-memory
engine (:class:`securedp.engines.registry.PolarsEngine`): a table of the
example dataset is correct only if its ``id_column`` is the dataset's person
column (the library then bounds each person's groups and rows); without it,
each row would count as a person.
"""

from __future__ import annotations

import contextlib
import csv
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np

from securedp.cli.example_data import PATH as EXAMPLE
from securedp.engines.polars.engine import PolarsEngine
from securedp.reading.files import TableFile
from securedp.tables import one_column, query

TABLE = "prepare_table"


@dataclass(frozen=True)
class Seen:
    """One release call: which function, its data, ids and declared max_contributions."""

    function: str
    data: Any
    ids: Any
    max_contributions: Any


@lru_cache(maxsize=1)
def _example() -> tuple[dict[str, list[object]], list[str], int]:
    """The example dataset: normalized columns, the person id of each row, and the most rows of one person."""
    with open(EXAMPLE, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    columns = {name: [_normal(row[name]) for row in rows] for name in rows[0]}
    persons = [row["person_id"] for row in rows]
    return columns, persons, max(Counter(persons).values())


def example_max_rows_per_person() -> int:
    """The largest number of rows one person has in the shipped example dataset, counted from the file."""
    return _example()[2]


def _normal(value: object) -> object:
    """A value compared across types: any number as an exact Fraction (from its text), anything else as text."""
    text = str(value)
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        return text


def _as_list(data: Any) -> list[object] | None:
    """``data`` as a list, when that can be done without consuming it (None for an iterator)."""
    if callable(getattr(data, "to_numpy", None)):
        data = data.to_numpy()
    if isinstance(data, np.ndarray):
        return data.reshape(-1).tolist()
    if isinstance(data, (list, tuple)):
        return list(data)
    return None


def unsafe(seen: Seen) -> str | None:
    """Why the release ``seen`` does not bound the contribution of a person of the example data, or None."""
    if seen.function == TABLE:
        return _unsafe_table(seen)
    values = _as_list(seen.data)
    columns, persons, most = _example()
    if values is None or len(values) != len(persons):
        return None
    normal = [_normal(v) for v in values]
    matched = [name for name, column in columns.items() if column == normal]
    if not matched:
        return None
    where = f"{seen.function} over example column {matched[0]!r}"
    if seen.ids is None:
        declared = int(seen.max_contributions)
        if declared < most:
            return (
                f"{where} declares max_contributions {declared} without ids, but one person has {most} rows: "
                "pass the person ids (ids= / --id-column person_id) or declare at least that many"
            )
        return None
    ids = _as_list(seen.ids)
    if ids is None or len(ids) != len(persons):
        return f"{where}: ids cannot be matched to the rows"
    id_of: dict[str, object] = {}
    for person, pid in zip(persons, ids, strict=True):
        if id_of.setdefault(person, pid) != pid:
            return f"{where}: the rows of person {person} carry different ids, so they are not bounded together"
    return None


def _unsafe_table(seen: Seen) -> str | None:
    """A table (``seen.data`` its frame, ``seen.ids`` its id column) over the example dataset must name its
    person column."""
    columns, persons, most = _example()
    frame = seen.data
    names = set(getattr(frame, "columns", ()))
    if not names or not names <= set(columns) or len(frame) != len(persons):  # files are read for the needed columns
        return None
    if seen.ids != "person_id":
        return (f"a table of the example data with id_column {seen.ids!r} counts each row as a person, but one "
                f"person has {most} rows: pass id_column='person_id' (--id-column person_id)")
    return None


@contextlib.contextmanager
def watching() -> Iterator[list[Seen]]:
    """Record every release prepared inside the ``with`` block (the list is filled as they happen).

    Every release of one column, whatever path it takes (a module function, a ``Session`` method, the
    command's ``Query``), is built by :func:`securedp.tables.one_column.one_cell`, and every table's rows
    reach the in-memory engine: those two places are watched.
    """
    seen: list[Seen] = []
    inside_one_cell: list[Any] = []
    original = one_column.one_cell
    engine = PolarsEngine.__init__

    def watched(cell: Any, aggregations: Any, table: Any, id_column: Any, **options: Any) -> Any:
        if isinstance(table, dict):  # a column given to a function: the data and the ids as given
            data, ids = table[one_column.DATA], table.get(one_column.IDS)
        else:  # a file's column (the command): its cells, and its id column's
            frame = table.read(None).frame if isinstance(table, TableFile) else table.frame
            data = frame[next(a.column for a in aggregations if getattr(a, "column", None))] if any(
                getattr(a, "column", None) for a in aggregations) else frame[frame.columns[0]]
            ids = None if id_column is None else frame[id_column]
        seen.append(Seen(f"prepare_{cell.statistic}", data, ids, options["max_contributions"]))
        inside_one_cell.append(cell)
        try:
            return original(cell, aggregations, table, id_column, **options)
        finally:
            inside_one_cell.pop()

    def watched_table(self: PolarsEngine, data: Any, id_column: str | None, *args: Any, **kwargs: Any) -> None:
        if not inside_one_cell:  # a one-column release's table is seen above, with its data and ids
            seen.append(Seen(TABLE, data.read(None) if isinstance(data, TableFile) else data, id_column, None))
        engine(self, data, id_column, *args, **kwargs)

    one_column.one_cell = query.one_cell = watched  # type: ignore[assignment]
    PolarsEngine.__init__ = watched_table  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        one_column.one_cell = query.one_cell = original  # type: ignore[assignment]
        PolarsEngine.__init__ = engine  # type: ignore[method-assign]
