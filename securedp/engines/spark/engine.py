"""The Spark engine: step (1) of a table release on Apache Spark; only per-key integers reach the driver."""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import polars as pl

from securedp.engines.frames import exact_frame
from securedp.engines.keys import PublicKeys
from securedp.engines.protocol import PERSON, UNITS, Bounds, ColumnSpec, KeyAggregates, UnitCounts
from securedp.engines.spark import bounding as spark_bounding
from securedp.engines.spark import functions as spark_engine
from securedp.engines.spark.bounding import collected_aggregates

_SPARK_KEY_TYPES: dict[str, pl.DataType] = {
    "tinyint": pl.Int8(), "smallint": pl.Int16(), "int": pl.Int32(), "bigint": pl.Int64(), "string": pl.String()}
"""The Polars type whose values a Spark group column of each type holds exactly (others take no public key)."""


class SparkEngine:
    """Step (1) on Apache Spark (:mod:`securedp.engines.spark`); only per-key integers reach the driver.

    **Jobs.** Preparing runs one job over the rows: every id, key and (``missing="raise"``) value check
    at once (:func:`~securedp.engines.spark.functions.check_cells`). A release then runs one bounding
    job for the counts and every value column together when no value is dropped (every column keeps
    the same rows: the first :meth:`column` call computes all of them, the others read its result),
    else one per value column; each quantile column adds one job for its counts per lattice point.
    """

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
        checked = [] if bounds.analyst_facing else [PERSON, *bounds.group_by]
        if bounds.analyst_facing:
            frame = spark_engine.drop_bad_keys(frame, [PERSON, *bounds.group_by])
        elif bounds.drop_missing_keys:
            frame = spark_engine.drop_bad_keys(frame, bounds.group_by)
        self.units = [f"{UNITS}{i}" for i in range(len(columns))]
        frame = frame.select(PERSON, *bounds.group_by, *(
            spark_engine.units_column(frame, spec.column, spark_engine.UnitSpec(spec.step, spec.lo_u, spec.hi_u),
                                      missing, fill).alias(name) for spec, name in zip(columns, self.units,
                                                                                     strict=True)))
        refused = list(zip(self.units, (c.column for c in columns), strict=True)) if missing == "raise" else []
        labels = {PERSON: f"id column {id_column or 'row'!r}", **{c: f"group_by column {c!r}" for c in bounds.group_by}}
        spark_engine.check_cells(frame, checked, labels, refused)
        schema = frame.select(*bounds.group_by).schema
        self.public = None if public is None else public.typed(
            {c: _SPARK_KEY_TYPES.get(schema[c].dataType.simpleString(), pl.Null()) for c in bounds.group_by})
        if self.public is not None and bounds.group_by:
            keys = self.session.createDataFrame(self.public.rows(), schema=schema)
            frame = frame.join(f.broadcast(keys), on=bounds.group_by, how="left_semi")  # no shuffle of the rows
        self.frame, self.same_rows, self.specs = frame, missing != "drop", list(columns)
        self._all: dict[bytes, list[Any]] = {}

    def _aggregate(self, salt: bytes, indices: list[int]) -> list[Any]:
        """Bound and aggregate the value columns ``indices`` (with the squares their specs ask for) in one
        job; the collected rows, a column's sums under its position in ``indices``."""
        b = self.bounds
        units = [self.units[i] for i in indices]
        frame = self.frame if self.same_rows else self.frame.filter(
            functools.reduce(operator.and_, (self.frame[u].isNotNull() for u in units)))
        result = spark_bounding.bound_and_aggregate(
            frame.select(PERSON, *b.group_by, *units), person=PERSON, keys=b.group_by, units=units,
            max_groups=b.max_groups, max_rows=b.max_rows, salt=salt, squares=[self.specs[i].squares for i in indices],
            bounds=[max(abs(self.specs[i].lo_u), abs(self.specs[i].hi_u)) for i in indices])
        rows: list[Any] = result.collect()
        return rows

    def counts(self, salt: bytes) -> KeyAggregates:
        b = self.bounds
        result = spark_bounding.bound_and_aggregate(self.frame.select(PERSON, *b.group_by), person=PERSON,
                                                  keys=b.group_by, units=[], max_groups=b.max_groups,
                                                  max_rows=b.max_rows, salt=salt)
        return spark_bounding.key_aggregates(result, b.group_by, None, False)

    def column(self, index: int, salt: bytes, squares: bool) -> KeyAggregates:
        if squares and not self.specs[index].squares:
            raise ValueError(f"the squares of column {self.specs[index].column!r} were not asked for (ColumnSpec)")
        if not self.same_rows:  # each column's usable rows: a job of its own
            rows = self._aggregate(salt, [index])
            return collected_aggregates(rows, self.bounds.group_by, 0, squares)
        if salt not in self._all:  # every column keeps the same rows: one job for all of them
            self._all = {salt: self._aggregate(salt, list(range(len(self.units))))}
        return collected_aggregates(self._all[salt], self.bounds.group_by, index, squares)

    def unit_counts(self, index: int, salt: bytes) -> UnitCounts:
        b, units = self.bounds, self.units[index]
        frame = self.frame if self.same_rows else self.frame.filter(self.frame[units].isNotNull())
        return spark_bounding.count_units(frame.select(PERSON, *b.group_by, units), person=PERSON, keys=b.group_by,
                                        units=units, max_groups=b.max_groups, max_rows=b.max_rows, salt=salt)

    def output(self, names: Sequence[str], rows: Sequence[Sequence[Any]],
               steps: Mapping[str, Fraction | None]) -> Any:
        keys = {c: pl.String() if t == "string" else pl.Int64() for c, t in
                ((c, self.frame.schema[c].dataType.simpleString()) for c in self.bounds.group_by)}
        frame = exact_frame(names, rows, "polars", keys, steps)
        return self.session.createDataFrame(frame.to_pandas(), schema=_spark_schema(frame, self.frame.schema))


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
