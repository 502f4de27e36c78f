"""The Apache Spark engine's functions: lattice units of every Spark type, and the checks of ids, keys and values.

The engine computes exactly what the aggregate/noise boundary says an engine
computes, and nothing else: lattice units of the value columns, per-person
contribution bounding (:mod:`securedp.engines.spark.bounding`, the in-memory
rule), and per key the kept rows, distinct persons, sums of units and (on
request) sums of squared units. Only those per-key integers reach the driver
(a few numbers per key); raw rows never do. Noise, partition selection,
accounting and the audit record then run once on the driver, with securedp's
own samplers, exactly as for a Polars table.

**Exact integers.** Units are Spark ``long`` (``|u| < 2**63``, checked from
the public bounds before anything runs).

**Lattice units per Spark type** (:func:`lattice_units`), always
``round_half_even(clamp(x, lo, hi) / step)`` exactly:

* ``byte``, ``short``, ``int``, ``long``: integer arithmetic in the JVM
  (``pmod`` and exact ``div``; ``decimal(38, 0)`` when ``bound * den`` could
  pass ``2**62``);
* ``float``, ``double``, ``decimal``, ``string``: an Arrow ``pandas_udf``
  running securedp's own screening (:func:`securedp.lattice.screen_units`), so
  the rule is the in-memory rule by construction. A cast of a double to
  decimal, or ``bround`` of a double, would round the double's shortest
  decimal string (0.005 at step 0.01 gives 0 units; exactly it is 1), and
  Spark sorts NaN above +infinity, so a native clamp would turn NaN into the
  upper bound: neither is used. NaN, nulls and non-numeric strings are
  unusable records (the release's ``missing`` policy decides), infinities
  clamp.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from securedp.engines.spark.bounding import text
from securedp.reading.cells import UNUSABLE_TEXT

if TYPE_CHECKING:  # pyspark is an optional dependency: ``pip install "securedp[spark]"``
    from pyspark.sql import Column, DataFrame

INT64_LIMIT = 1 << 63
_INTEGRAL = ("tinyint", "smallint", "int", "bigint")



def require_pyspark() -> None:
    """Raise a clear ImportError where pyspark is missing (the engine's only optional dependency)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError('the Spark engine needs pyspark: pip install "securedp[spark]"') from None


def is_spark_frame(data: Any) -> bool:
    """True for a ``pyspark.sql.DataFrame`` (classic or Connect), without importing pyspark."""
    return any(c.__module__.startswith("pyspark.sql") and c.__name__ == "DataFrame" for c in type(data).__mro__)


def check_session(frame: DataFrame) -> None:
    """Refuse a session with ANSI mode off: sums would wrap silently instead of raising on overflow."""
    ansi = frame.sparkSession.conf.get("spark.sql.ansi.enabled", "true")
    if str(ansi).lower() != "true":
        raise ValueError("the Spark engine needs spark.sql.ansi.enabled=true (without it, integer overflow wraps)")


@dataclass(frozen=True)
class UnitSpec:
    """A value column's public lattice: ``step`` and the snapped bounds ``[lo_u, hi_u]`` in units."""

    step: Fraction
    lo_u: int
    hi_u: int

    def __post_init__(self) -> None:
        if max(abs(self.lo_u), abs(self.hi_u)) >= INT64_LIMIT:
            raise ValueError("the bounds reach 2**63 lattice units: choose a coarser lattice for a table release")


def lattice_units(frame: DataFrame, column: str, spec: UnitSpec) -> Column:
    """The units of ``column`` as a nullable ``long`` column (null: an unusable record)."""
    require_pyspark()
    dtype = frame.schema[column].dataType.simpleString()
    if dtype in _INTEGRAL:
        return _integral_units(column, spec)
    if dtype in ("float", "double", "string") or dtype.startswith("decimal"):
        from pyspark.sql import functions as f

        return _screened_units(spec)(f.col(column))
    raise TypeError(f"column {column!r} has Spark type {dtype}: value columns must be numbers or numeric strings")


def _quoted(column: str) -> str:
    return "`" + column.replace("`", "``") + "`"


def _integral_units(column: str, spec: UnitSpec) -> Column:
    """``round_half_even(clamp(x) * den / num)`` for an integer ``x``, exactly, as one SQL expression.

    ``r = pmod(s, num)`` is the remainder in ``[0, num)`` and ``(s - r) div num`` an exact division, so
    the quotient is the floor; it moves up when ``2 r > num``, or ``2 r = num`` and the floor is odd.
    Arithmetic is ``bigint`` when ``|s| < 2**62``, else ``decimal(38, 0)``; ANSI mode raises on overflow.
    """
    num, den = spec.step.numerator, spec.step.denominator
    lo_i = -((-spec.lo_u * num) // den)  # the integer records below ceil(lo_u * step) clamp to lo_u
    hi_i = (spec.hi_u * num) // den
    kind = "BIGINT" if max(abs(lo_i), abs(hi_i)) * den < (1 << 62) and num < (1 << 61) else "DECIMAL(38,0)"
    x = f"CAST({_quoted(column)} AS BIGINT)"
    s = f"(CAST(LEAST(GREATEST({x}, {lo_i}), {hi_i}) AS {kind}) * CAST({den} AS {kind}))"
    if num == 1:
        inside = s
    else:
        r = f"pmod({s}, CAST({num} AS {kind}))"
        q = f"(({s} - {r}) div {num})"
        inside = f"({q} + CASE WHEN 2 * {r} > {num} OR (2 * {r} = {num} AND pmod({q}, 2) = 1) THEN 1 ELSE 0 END)"
    sql = (f"CASE WHEN {x} IS NULL THEN NULL WHEN {x} < {lo_i} THEN CAST({spec.lo_u} AS BIGINT) "
           f"WHEN {x} > {hi_i} THEN CAST({spec.hi_u} AS BIGINT) ELSE CAST({inside} AS BIGINT) END")
    from pyspark.sql import functions as f

    return f.expr(sql)


def _screened_units(spec: UnitSpec) -> Callable[[Column], Column]:
    """A scalar pandas UDF mapping a column to units with securedp's screening (null where unusable)."""
    import pandas as pd
    from pyspark.sql.pandas.functions import pandas_udf
    from pyspark.util import PythonEvalType

    step, lo_u, hi_u = spec.step, spec.lo_u, spec.hi_u

    def units(values: pd.Series) -> pd.Series:
        from securedp.lattice import screen_units

        records = values.to_numpy(dtype=object) if values.dtype == object else values.to_numpy()
        kept_units, kept = screen_units(records, step, lo_u, hi_u, missing="drop", refuse_rows=False)
        out = pd.array(np.zeros(len(values), dtype=np.int64), dtype="Int64")
        if kept is None:
            out[:] = np.asarray(kept_units, dtype=np.int64)
        else:
            out[kept] = np.asarray(kept_units, dtype=np.int64)
            out[~kept] = pd.NA
        return pd.Series(out)

    udf = pandas_udf(units, "bigint", PythonEvalType.SQL_SCALAR_PANDAS_UDF)  # a Series-to-Series scalar UDF
    return cast("Callable[[Column], Column]", udf)


def check_cells(frame: DataFrame, keys: Sequence[str], labels: dict[str, str],
                values: Sequence[tuple[str, str]] = ()) -> None:
    """Refuse missing or blank ids and keys, and unusable value records, in **one** Spark job.

    ``keys``: the id and key columns (each an integer or string column); ``values``: pairs
    ``(units column, column name)`` whose null units (a missing, NaN or non-numeric record) are
    refused. The first failing column raises, ids and keys before values, naming the column as
    ``labels`` gives it (``"id column 'pid'"``: the in-memory reader's words,
    :func:`securedp.engines.frames.read_table`), never a row or a count.
    """
    from pyspark.sql import functions as f

    texts = [text(frame, c) for c in keys]
    checks = [f.max(f.col(c).isNull().cast("int")).alias(f"null{i}") for i, c in enumerate(keys)]
    checks += [f.max(t.rlike(UNUSABLE_TEXT).cast("int")).alias(f"blank{i}")
               if frame.schema[c].dataType.simpleString() == "string" else f.lit(0).alias(f"blank{i}")
               for i, (c, t) in enumerate(zip(keys, texts, strict=True))]  # an integer is never blank
    checks += [f.max(f.col(units).isNull().cast("int")).alias(f"value{i}") for i, (units, _) in enumerate(values)]
    if not checks:
        return
    found = frame.agg(*checks).first()
    if found is None:
        return
    for i, column in enumerate(keys):
        if found[f"null{i}"] or found[f"blank{i}"]:
            raise ValueError(f"{labels.get(column, f'column {column!r}')} has missing, blank or non-integral values")
    for i, (_, column) in enumerate(values):
        if found[f"value{i}"]:
            raise ValueError(f"column {column!r} has unusable records (missing, NaN or not a number); clean the "
                             "data, or pass missing='drop' or missing='impute' with fill=<number>")


def drop_bad_keys(frame: DataFrame, columns: Sequence[str]) -> DataFrame:
    """``frame`` without the rows whose id or key is missing, blank or undecodable (analyst-facing: nothing raises).

    Spark's CSV reader writes U+FFFD for bytes its encoding cannot decode, so two distinct ids could read
    alike: a cell holding U+FFFD is no id or key. Blank and undecodable are
    :data:`securedp.reading.cells.UNUSABLE_TEXT`'s, as in every engine (not Spark's ``trim``, which strips
    spaces only).
    """
    for column in columns:
        cell = text(frame, column)
        frame = frame.filter(cell.isNotNull() & ~cell.rlike(UNUSABLE_TEXT))
    return frame


def units_column(frame: DataFrame, column: str, spec: UnitSpec, missing: str, fill: Any) -> Column:
    """The units of ``column`` (null where unusable), with the public ``fill``'s units in their place
    under ``missing="impute"`` (screened by the in-memory rule); ``"raise"`` and ``"drop"`` keep the
    nulls for :func:`check_cells` to refuse or for the engine to filter, column by column."""
    from pyspark.sql import functions as f

    from securedp.lattice import screen_units

    if missing not in ("raise", "drop", "impute"):
        raise ValueError(f"missing must be 'raise', 'drop' or 'impute', got {missing!r}")
    units = lattice_units(frame, column, spec)
    if missing == "impute":
        fill_u = int(screen_units(np.array([fill], dtype=object), spec.step, spec.lo_u, spec.hi_u)[0][0])
        return f.coalesce(units, f.lit(fill_u).cast("bigint"))
    return units


def read_file(path: str, delimiter: str, encoding: str) -> DataFrame:
    """The command's file as a Spark DataFrame (the standard Spark configuration): Parquet as stored; a CSV
    with every cell as text, as the in-memory reader reads one (no type inferred from the data), quoted fields
    by RFC 4180 (a doubled quote inside quotes is one quote, a quoted field may span lines)."""
    from pyspark.sql import SparkSession

    reader = SparkSession.builder.appName("securedp").getOrCreate().read
    if path.lower().endswith((".parquet", ".pq")):
        return reader.parquet(path)
    return (reader.option("header", True).option("sep", delimiter).option("inferSchema", False)
            .option("encoding", encoding).option("quote", '"').option("escape", '"').option("multiLine", True)
            .option("mode", "PERMISSIVE").csv(path))
