"""The Spark engine: step (1) of a table release on Apache Spark; only per-key integers reach the driver."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import polars as pl

from securedp.engines.frames import exact_frame
from securedp.engines.keys import PublicKeys
from securedp.engines.protocol import PERSON, UNITS, Bounds, ColumnSpec, KeyAggregates, UnitCounts
from securedp.engines.spark import functions as spark_engine

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

    def _collect(self, frame: Any, salt: bytes, units: list[str], squares: bool) -> KeyAggregates:
        b = self.bounds
        result = spark_engine.bound_and_aggregate(frame, person=PERSON, keys=b.group_by, units=units,
                                                  max_groups=b.max_groups, max_rows=b.max_rows, salt=salt,
                                                  squares=squares)
        return spark_engine.key_aggregates(result, b.group_by, bool(units), squares)

    def counts(self, salt: bytes) -> KeyAggregates:
        return self._collect(self.base, salt, [], False)

    def column(self, index: int, salt: bytes, squares: bool) -> KeyAggregates:
        return self._collect(self.columns[index], salt, [UNITS], squares)

    def unit_counts(self, index: int, salt: bytes) -> UnitCounts:
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
