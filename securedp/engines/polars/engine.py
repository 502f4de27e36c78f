"""The in-memory engine: step (1) of a table release on Polars (pandas, polars, pyarrow tables; CSV and Parquet)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import polars as pl

from securedp.engines.frames import ROW, exact_frame, read_table
from securedp.engines.keys import PublicKeys
from securedp.engines.page_advice import without_huge_page_advice
from securedp.engines.polars import bounding, rowwise
from securedp.engines.protocol import PERSON, UNITS, Bounds, ColumnSpec, KeyAggregates, UnitCounts, key_names
from securedp.lattice.columns import NotOneColumnError, first_row_record, nested_column_error


class PolarsEngine:
    """Step (1) in memory, on Polars (pandas, polars, pyarrow tables; CSV and Parquet files).

    Unless values may be dropped (``missing="drop"``, a public choice), every value column keeps the rows
    of the table: the first :meth:`column` call bounds and aggregates all of them in one pass
    (:func:`~securedp.engines.polars.bounding.bound_and_aggregate_columns`), the others read its result.
    Without an id column every row is its own person, whom no bound can cut: the integers are then plain
    sums per key (:mod:`securedp.engines.polars.rowwise`), the same the bounding pass would give, and the
    same for every salt: they are computed once and kept for every later execution.

    Reading and every pass over the table run with NumPy's huge-page advice off
    (:mod:`securedp.engines.page_advice`): a speed setting only.
    """

    @without_huge_page_advice
    def __init__(self, data: Any, id_column: str | None, bounds: Bounds, columns: Sequence[ColumnSpec],
                 public: PublicKeys | None, missing: str, fill: Any) -> None:
        frames = read_table(data, PERSON, id_column, bounds.group_by, [c.column for c in columns],
                            drop_bad_keys=bounds.analyst_facing, drop_missing_keys=bounds.drop_missing_keys,
                            schema=bounds.schema, labels=[c.column for c in columns if c.labels])
        # The group columns take the engine's own names (``_securedp_key0`` ...): see key_names.
        names = key_names(bounds.group_by)
        self.group_names = list(bounds.group_by)
        frame = pl.DataFrame({names.get(s.name, s.name): s for s in frames.frame.get_columns()})  # no copy
        self.public = None if public is None else public.typed(frames.frame.schema).rename(names)  # item 6 of issue 16
        bounds = dataclasses.replace(bounds, group_by=list(names.values()))
        if self.public is not None:
            untyped = [c for c in bounds.group_by if frame.schema[c] == pl.Null]  # no usable cell: the keys' type
            if untyped:
                frame = frame.with_columns(pl.col(c).cast(self.public.schema[c]) for c in untyped)
            frame = _with_public_keys(frame, self.public)
        untyped = [c for c in (PERSON, *bounds.group_by) if frame.schema[c] == pl.Null]  # no usable cell, no row
        if untyped:
            frame = frame.with_columns(pl.col(c).cast(pl.Int64) for c in untyped)
        self.kind, self.bounds = frames.kind, bounds
        self.rowwise = id_column is None
        self.base = pl.DataFrame([frame.get_column(c) for c in (PERSON, *bounds.group_by)])  # no copy, no query plan
        rows = frame[ROW].to_numpy()
        self.specs = list(columns)
        self.where = frames.where
        self.columns = [self._screen(_take(frames.values[spec.column], rows), rows, spec, missing, fill)
                        for spec in columns]
        analyst = bounds.analyst_facing  # a histogram's unknown="raise" drops there: no error depends on the data
        self._shared = [i for i, spec in enumerate(columns) if spec.keeps_every_row("drop" if analyst else missing)]
        self._all: dict[bytes, dict[int, KeyAggregates]] = {}
        # Without an id column the results do not depend on the salt: each is computed on first use and kept.
        self._rowwise_sums: dict[tuple[int, bool], KeyAggregates] = {}  # (column index or -1 for counts, squares)
        self._rowwise_units: dict[int, UnitCounts] = {}

    def _screen(self, records: np.ndarray | list[Any], rows: np.ndarray, spec: ColumnSpec, missing: str,
                fill: Any) -> pl.DataFrame:
        def where(i: int) -> str:
            return f"column {spec.column!r}, {self.where(int(rows[i]))}"

        try:
            units, kept = spec.units(records, missing, fill, not self.bounds.analyst_facing, where)
        except NotOneColumnError:  # a list or struct column: say so in the table's words (no Python advice)
            found = first_row_record(records)
            assert found is not None  # the screen refuses a record only when one is a row
            raise nested_column_error(spec.column, records, found, self.where(int(rows[found[0]]))) from None
        except TypeError as error:  # a column type the lattice refuses (bool): name the column
            raise TypeError(f"column {spec.column!r}: {error}") from None
        kept_rows = self.base if kept is None else self.base.filter(pl.Series(kept))
        return kept_rows.hstack([pl.Series(UNITS, np.asarray(units, dtype=np.int64))])  # base has no UNITS column

    @without_huge_page_advice
    def counts(self, salt: bytes) -> KeyAggregates:
        b = self.bounds
        if self.rowwise:
            if (-1, False) not in self._rowwise_sums:
                self._rowwise_sums[(-1, False)] = rowwise.counts(self.base, b.group_by)
            return self._rowwise_sums[(-1, False)]
        return bounding.bound_and_aggregate(self.base, person=PERSON, keys=b.group_by, max_groups=b.max_groups,
                                            max_rows=b.max_rows, salt=salt, known_keys=self.public)

    @without_huge_page_advice
    def column(self, index: int, salt: bytes, squares: bool) -> KeyAggregates:
        b = self.bounds
        if self.rowwise:
            spec = self.specs[index]  # screened units lie in [lo_u, hi_u]; a histogram's are indices
            bound = max(abs(spec.lo_u), abs(spec.hi_u)) if spec.derivation is None else None
            if (index, squares) not in self._rowwise_sums:
                self._rowwise_sums[(index, squares)] = rowwise.column(self.columns[index], b.group_by, UNITS,
                                                                      squares, bound)
            return self._rowwise_sums[(index, squares)]
        if index in self._shared and squares <= self.specs[index].squares:
            if salt not in self._all:  # one pass for every column of the shared rows
                names = [f"{UNITS}{i}" for i in self._shared]
                frame = self.base.with_columns(self.columns[i][UNITS].alias(n) for i, n in zip(self._shared, names,
                                                                                               strict=True))
                results = bounding.bound_and_aggregate_columns(
                    frame, person=PERSON, keys=b.group_by, units=names, max_groups=b.max_groups, max_rows=b.max_rows,
                    salt=salt, squares=[self.specs[i].squares for i in self._shared], known_keys=self.public)
                self._all = {salt: dict(zip(self._shared, results, strict=True))}
            result = self._all[salt][index]
            if squares or result.total_squares is None:
                return result
            return dataclasses.replace(result, total_squares=None)
        return bounding.bound_and_aggregate(self.columns[index], person=PERSON, keys=b.group_by, units=UNITS,
                                            max_groups=b.max_groups, max_rows=b.max_rows, salt=salt,
                                            squares=squares, known_keys=self.public)

    @without_huge_page_advice
    def unit_counts(self, index: int, salt: bytes) -> UnitCounts:
        b = self.bounds
        if self.rowwise:
            if index not in self._rowwise_units:
                self._rowwise_units[index] = rowwise.unit_counts(self.columns[index], b.group_by, UNITS)
            return self._rowwise_units[index]
        return bounding.bound_and_count_units(self.columns[index], person=PERSON, keys=b.group_by, units=UNITS,
                                              max_groups=b.max_groups, max_rows=b.max_rows, salt=salt,
                                              known_keys=self.public)

    def output(self, names: Sequence[str], rows: Sequence[Sequence[Any]],
               steps: Mapping[str, Fraction | None]) -> Any:
        keys = {c: self.base.schema[k] for c, k in zip(self.group_names, self.bounds.group_by, strict=True)}
        return exact_frame(names, rows, self.kind, keys, steps)


def _with_public_keys(frame: pl.DataFrame, public: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``frame`` whose key (the columns of ``public``) is one of the rows of ``public``, by a set
    lookup of the key tuples (a semi-join took 2 to 3 times as long for one text column, as long for two);
    of one key column, by a lookup of its values (nulls equal, as in a tuple: 0.04 s against 0.09 s for
    10**7 texts)."""
    if public.width == 1:
        column = public.columns[0]
        return frame.filter(pl.col(column).is_in(public.get_column(column).implode(), nulls_equal=True))
    key = pl.struct(public.columns)
    return frame.filter(key.is_in(public.select(key).to_series().implode()))


def _take(records: np.ndarray | list[Any], rows: np.ndarray) -> np.ndarray | list[Any]:
    """The records at positions ``rows`` (a value column aligned with the rows the engine kept). The positions
    ascend (filters keep the order), so as many positions as records are every record: no copy then."""
    if len(rows) == len(records):
        return records
    if isinstance(records, np.ndarray):
        taken: np.ndarray = records[rows]
        return taken
    return [records[i] for i in rows.tolist()]
