"""The engines a table release runs step (1) on: Polars in memory, or Spark.

An engine is built from the caller's table and the query's public inputs,
validates the data before anything is drawn or charged (columns, id and key
cells, every aggregated value under the ``missing`` policy), and then, given
the release's secret salt, returns exact per-key integers
(:class:`~securedp.engines.bounding.KeyAggregates`, keys sorted):

* :meth:`Engine.counts`: rows and distinct persons per key after bounding;
* :meth:`Engine.column`: the same plus sums (and sums of squares) of one
  value column's lattice units, bounded on that column's usable rows.

Both engines keep the same rows (:mod:`securedp.engines.bounding`), so for
one salt their integers are identical; everything after step (1) is shared.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

import numpy as np
import polars as pl

from securedp.engines import bounding
from securedp.engines import spark as spark_engine
from securedp.lattice import screen_units
from securedp.tables.frames import ROW, exact_frame, read_table
from securedp.tables.keys import PublicKeys

PERSON = "_securedp_person"
UNITS = "_units"


@dataclass(frozen=True)
class ColumnSpec:
    """A value column on its public lattice: ``step`` and the snapped bounds ``[lo_u, hi_u]``."""

    column: str
    step: Fraction
    lo_u: int
    hi_u: int


class Engine(Protocol):
    """What a table release needs of an engine (see the module docstring)."""

    public: pl.DataFrame | None
    """The public keys in the types of the group columns (:meth:`~securedp.tables.keys.PublicKeys.typed`)."""

    def counts(self, salt: bytes) -> bounding.KeyAggregates: ...

    def column(self, index: int, salt: bytes, squares: bool) -> bounding.KeyAggregates: ...

    def unit_counts(self, index: int, salt: bytes) -> bounding.UnitCounts: ...

    def output(self, names: Sequence[str], rows: Sequence[Sequence[Any]],
               steps: Mapping[str, Fraction | None]) -> Any: ...


@dataclass(frozen=True)
class Bounds:
    """The per-person bounds and the grouping of one query."""

    group_by: list[str]
    max_groups: int
    max_rows: int
    analyst_facing: bool = False
    """Drop rows whose id or key is missing or blank instead of raising (no error depends on the data)."""
    drop_missing_keys: bool = False
    """Drop rows whose group key is missing or blank (``missing_keys="drop"``), in either mode."""


class PolarsEngine:
    """Step (1) in memory, on Polars (pandas, polars, pyarrow tables; CSV and Parquet files)."""

    def __init__(self, data: Any, id_column: str | None, bounds: Bounds, columns: Sequence[ColumnSpec],
                 public: PublicKeys | None, missing: str, fill: Any) -> None:
        frames = read_table(data, PERSON, id_column, bounds.group_by, [c.column for c in columns],
                            drop_bad_keys=bounds.analyst_facing, drop_missing_keys=bounds.drop_missing_keys)
        frame = frames.frame
        self.public = None if public is None else public.typed(frame.schema)  # rows or none: item 6 of issue 16
        if self.public is not None:
            untyped = [c for c in bounds.group_by if frame.schema[c] == pl.Null]  # no usable cell: the keys' type
            frame = frame.with_columns(pl.col(c).cast(self.public.schema[c]) for c in untyped)
            frame = frame.join(self.public, on=bounds.group_by, how="semi")
        untyped = [c for c in (PERSON, *bounds.group_by) if frame.schema[c] == pl.Null]  # no usable cell, no row
        frame = frame.with_columns(pl.col(c).cast(pl.Int64) for c in untyped)
        self.kind, self.bounds = frames.kind, bounds
        self.base = frame.select([PERSON, *bounds.group_by])
        rows = frame[ROW].to_numpy()
        self.columns = [self._screen(_take(frames.values[spec.column], rows), spec, missing, fill) for spec in columns]

    def _screen(self, records: np.ndarray | list[Any], spec: ColumnSpec, missing: str, fill: Any) -> pl.DataFrame:
        try:
            units, kept = screen_units(records, spec.step, spec.lo_u, spec.hi_u, missing=missing, fill=fill,
                                       refuse_rows=not self.bounds.analyst_facing)
        except (ValueError, TypeError) as error:  # the data holder's mode: name the column
            raise type(error)(f"column {spec.column!r}: {error}") from None
        rows = self.base if kept is None else self.base.filter(pl.Series(kept))
        return rows.with_columns(pl.Series(UNITS, np.asarray(units, dtype=np.int64)))

    def counts(self, salt: bytes) -> bounding.KeyAggregates:
        b = self.bounds
        return bounding.bound_and_aggregate(self.base, person=PERSON, keys=b.group_by, max_groups=b.max_groups,
                                            max_rows=b.max_rows, salt=salt)

    def column(self, index: int, salt: bytes, squares: bool) -> bounding.KeyAggregates:
        b = self.bounds
        return bounding.bound_and_aggregate(self.columns[index], person=PERSON, keys=b.group_by, units=UNITS,
                                            max_groups=b.max_groups, max_rows=b.max_rows, salt=salt,
                                            squares=squares)

    def unit_counts(self, index: int, salt: bytes) -> bounding.UnitCounts:
        b = self.bounds
        return bounding.bound_and_count_units(self.columns[index], person=PERSON, keys=b.group_by, units=UNITS,
                                              max_groups=b.max_groups, max_rows=b.max_rows, salt=salt)

    def output(self, names: Sequence[str], rows: Sequence[Sequence[Any]],
               steps: Mapping[str, Fraction | None]) -> Any:
        keys = {c: self.base.schema[c] for c in self.bounds.group_by}
        return exact_frame(names, rows, self.kind, keys, steps)


_SPARK_KEY_TYPES: dict[str, pl.DataType] = {
    "tinyint": pl.Int8(), "smallint": pl.Int16(), "int": pl.Int32(), "bigint": pl.Int64(), "string": pl.String()}
"""The Polars type whose values a Spark group column of each type holds exactly (others take no public key)."""


class SparkEngine:
    """Step (1) on Apache Spark (:mod:`securedp.engines.spark`); only per-key integers reach the driver."""

    def __init__(self, data: Any, id_column: str | None, bounds: Bounds, columns: Sequence[ColumnSpec],
                 public: PublicKeys | None, missing: str, fill: Any) -> None:
        from pyspark.sql import functions as f

        spark_engine.check_session(data)
        self.bounds, self.session = bounds, data.sparkSession
        needed = [*([id_column] if id_column else []), *bounds.group_by, *(c.column for c in columns)]
        absent = [c for c in dict.fromkeys(needed) if c not in data.columns]
        if absent:
            raise ValueError(f"column(s) {absent} are not in the table (it has {list(data.columns)})")
        person = f.col(id_column) if id_column else f.monotonically_increasing_id()
        frame = data.select(person.alias(PERSON), *bounds.group_by, *dict.fromkeys(c.column for c in columns))
        if bounds.analyst_facing:
            frame = spark_engine.drop_bad_keys(frame, [PERSON, *bounds.group_by])
        else:
            if bounds.drop_missing_keys:
                frame = spark_engine.drop_bad_keys(frame, bounds.group_by)
            spark_engine.check_keys(frame, [PERSON, *bounds.group_by], {PERSON: id_column or "row"})
        schema = frame.select(*bounds.group_by).schema
        self.public = None if public is None else public.typed(
            {c: _SPARK_KEY_TYPES.get(schema[c].dataType.simpleString(), pl.Null()) for c in bounds.group_by})
        if self.public is not None and bounds.group_by:
            keys = self.session.createDataFrame(self.public.rows(), schema=schema)
            frame = frame.join(keys, on=bounds.group_by, how="left_semi")
        self.base = frame.select(PERSON, *bounds.group_by)
        self.columns = [spark_engine.screened(frame, [PERSON, *bounds.group_by], spec.column,
                                              spark_engine.UnitSpec(spec.step, spec.lo_u, spec.hi_u), missing, fill)
                        for spec in columns]

    def _collect(self, frame: Any, salt: bytes, units: list[str], squares: bool) -> bounding.KeyAggregates:
        b = self.bounds
        result = spark_engine.bound_and_aggregate(frame, person=PERSON, keys=b.group_by, units=units,
                                                  max_groups=b.max_groups, max_rows=b.max_rows, salt=salt,
                                                  squares=squares)
        return spark_engine.key_aggregates(result, b.group_by, bool(units), squares)

    def counts(self, salt: bytes) -> bounding.KeyAggregates:
        return self._collect(self.base, salt, [], False)

    def column(self, index: int, salt: bytes, squares: bool) -> bounding.KeyAggregates:
        return self._collect(self.columns[index], salt, [UNITS], squares)

    def unit_counts(self, index: int, salt: bytes) -> bounding.UnitCounts:
        b = self.bounds
        return spark_engine.count_units(self.columns[index], person=PERSON, keys=b.group_by, units=UNITS,
                                        max_groups=b.max_groups, max_rows=b.max_rows, salt=salt)

    def output(self, names: Sequence[str], rows: Sequence[Sequence[Any]],
               steps: Mapping[str, Fraction | None]) -> Any:
        keys = {c: pl.String() if t == "string" else pl.Int64() for c, t in
                ((c, self.base.schema[c].dataType.simpleString()) for c in self.bounds.group_by)}
        frame = exact_frame(names, rows, "polars", keys, steps)
        return self.session.createDataFrame(frame.to_pandas(), schema=_spark_schema(frame, self.base.schema))


def _spark_schema(frame: pl.DataFrame, source: Any) -> Any:
    """The Spark schema of the released frame (explicit, so that a table with no cell keeps its types)."""
    from pyspark.sql import types

    fields = []
    for name, dtype in frame.schema.items():
        if name in source.fieldNames():
            kind = source[name].dataType
        elif isinstance(dtype, pl.Decimal):
            kind = types.DecimalType(38, dtype.scale or 0)
        elif dtype == pl.String:
            kind = types.StringType()
        else:
            kind = types.LongType()
        fields.append(types.StructField(name, kind, nullable=True))
    return types.StructType(fields)


def _take(records: np.ndarray | list[Any], rows: np.ndarray) -> np.ndarray | list[Any]:
    """The records at positions ``rows`` (a value column aligned with the rows the engine kept)."""
    if isinstance(records, np.ndarray):
        taken: np.ndarray = records[rows]
        return taken
    return [records[i] for i in rows.tolist()]


EngineKind = Callable[[Any, "str | None", Bounds, Sequence[ColumnSpec], "PublicKeys | None", str, Any], Engine]

ENGINES: list[tuple[str, Callable[[Any], bool], EngineKind]] = [
    ("spark", spark_engine.is_spark_frame, SparkEngine),
    ("polars", lambda _: True, PolarsEngine),
]
"""The engines, in the order they are asked: ``(name, accepts(data), engine class)``. A new engine adds
one entry (before the in-memory default, which accepts every table and file)."""


def engine_for(data: Any, id_column: str | None, bounds: Bounds, columns: Sequence[ColumnSpec],
               public: PublicKeys | None, missing: str, fill: Any) -> Engine:
    """The first engine of :data:`ENGINES` that accepts ``data`` (Spark for a Spark DataFrame, else Polars)."""
    kind = next(kind for _, accepts, kind in ENGINES if accepts(data))
    return kind(data, id_column, bounds, columns, public, missing, fill)
