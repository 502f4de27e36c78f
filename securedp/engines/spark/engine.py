"""The Spark engine: step (1) of a table release on Apache Spark; only per-key integers reach the driver."""

from __future__ import annotations

import dataclasses
import functools
import operator
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import polars as pl

from securedp.engines.frames import exact_frame
from securedp.engines.keys import PublicKeys
from securedp.engines.protocol import PERSON, UNITS, Bounds, ColumnSpec, KeyAggregates, UnitCounts, key_names
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
        absent = [c for c in needed_columns(id_column, bounds, columns) if c not in data.columns]
        if absent:
            raise ValueError(f"column(s) {absent} are not in the table (it has {list(data.columns)})")
        # The group columns take the engine's own names (``_securedp_key0`` ...), as in memory: see key_names.
        names = key_names(bounds.group_by)
        self.group_names = list(bounds.group_by)
        frame = self._read(data, id_column, bounds, names, columns, missing, fill)
        self.bounds = bounds = dataclasses.replace(bounds, group_by=list(names.values()))
        schema = frame.select(*bounds.group_by).schema
        self.public = None if public is None else public.typed(
            {c: _SPARK_KEY_TYPES.get(schema[k].dataType.simpleString(), pl.Null()) for c, k in names.items()}
        ).rename(names)
        if self.public is not None and bounds.group_by:
            keys = self.session.createDataFrame(self.public.rows(), schema=schema)
            frame = frame.join(f.broadcast(keys), on=bounds.group_by, how="left_semi")  # no shuffle of the rows
        self.frame, self.same_rows, self.specs = frame, missing != "drop", list(columns)
        self._all: dict[bytes, list[Any]] = {}

    @staticmethod
    def refuse(columns: Sequence[ColumnSpec]) -> None:
        """Refuse, before any data is read, what this engine does not compute: a histogram's counts."""
        if any(spec.derivation is not None for spec in columns):
            raise ValueError("the Spark engine computes no histogram: release it from a pandas, Polars or pyarrow "
                             "table or a file (the in-memory engine), or count each category with a table")

    def _read(self, data: Any, id_column: str | None, bounds: Bounds, names: Mapping[str, str],
              columns: Sequence[ColumnSpec], missing: str, fill: Any) -> Any:
        """``data`` as the person, the group keys (under ``names``) and each value column's units, read by the
        in-memory rules
        (:func:`~securedp.engines.spark.functions.key_cells`, the lattice screen): rows with an unusable id or
        key dropped (analyst-facing; a group key with ``drop_missing_keys``) or refused, with unusable values
        (``missing="raise"``), in one check job and the in-memory reader's words."""
        from pyspark.sql import functions as f

        declared = bounds.schema
        roles = [(c, "group_by") for c in bounds.group_by] + ([(id_column, "id")] if id_column else [])
        read = {c: spark_engine.key_cells(data, c, role, declared.get(c)) for c, role in roles}
        person = read[id_column] if id_column else f.monotonically_increasing_id()
        self.units = [f"{UNITS}{i}" for i in range(len(columns))]
        units = [spark_engine.units_column(data, spec.column, spark_engine.UnitSpec(spec.step, spec.lo_u, spec.hi_u,
                                                                                    spec.whole),
                                           missing, fill, not bounds.analyst_facing).alias(name)
                 for spec, name in zip(columns, self.units, strict=True)]
        raw = {c: f"{_RAW}{i}" for i, c in enumerate(needed_columns(id_column, bounds, columns))}
        frame = data.select(person.alias(PERSON), *(read[c].alias(names[c]) for c in bounds.group_by), *units,
                            *(f.col(spark_engine.quoted(c)).alias(name) for c, name in raw.items()))
        named = {**names, **({id_column: PERSON} if id_column else {})}  # each read column's name in ``frame``
        dropped = [named[c] for c, role in roles
                   if bounds.analyst_facing or (bounds.drop_missing_keys and role == "group_by")]
        if dropped:  # a rule of each row alone: its own id or key is unusable
            frame = frame.filter(functools.reduce(operator.and_, (f.col(c).isNotNull() for c in dropped)))
        text_columns = {c: data.schema[c].dataType.simpleString() == "string" and declared.get(c) != "int"
                        for c, _ in roles}
        keys = [spark_engine.KeyCheck(named[c], raw[c], c, role, not text_columns[c])
                for c, role in roles if named[c] not in dropped]
        values = [spark_engine.ValueCheck(name, raw[spec.column], spec.column, spec.whole)
                  for spec, name in zip(columns, self.units, strict=True)] if missing == "raise" else []
        spark_engine.check_cells(frame, keys, values)
        return frame.select(PERSON, *names.values(), *self.units)

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
        types = {c: self.frame.schema[k].dataType for c, k in zip(self.group_names, self.bounds.group_by, strict=True)}
        keys = {c: pl.String() if t.simpleString() == "string" else pl.Int64() for c, t in types.items()}
        frame = exact_frame(names, rows, "polars", keys, steps)
        return self.session.createDataFrame(frame.to_pandas(), schema=_spark_schema(frame, types))


_RAW = "_securedp_cell"
"""The columns holding the caller's own cells while they are checked (named in the data holder's errors)."""


def needed_columns(id_column: str | None, bounds: Bounds, columns: Sequence[ColumnSpec]) -> list[str]:
    """The caller's columns a table reads: the id, the group keys and the value columns, once each."""
    return list(dict.fromkeys([*([id_column] if id_column else []), *bounds.group_by, *(c.column for c in columns)]))


def _spark_schema(frame: pl.DataFrame, key_types: Mapping[str, Any]) -> Any:
    """The Spark schema of the released frame (explicit, so that a table with no cell keeps its types); a group
    column keeps its Spark type (``key_types``)."""
    from pyspark.sql import types

    fields = []
    for name, dtype in frame.schema.items():
        if name in key_types:
            kind = key_types[name]
        elif isinstance(dtype, pl.Decimal):
            kind = types.DecimalType(38, dtype.scale or 0)
        elif dtype == pl.String:
            kind = types.StringType()
        else:
            kind = types.LongType()
        fields.append(types.StructField(name, kind, nullable=True))
    return types.StructType(fields)
