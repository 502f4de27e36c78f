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

import decimal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any, cast

import numpy as np

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
    """A value column's public lattice: ``step`` and the snapped bounds ``[lo_u, hi_u]`` in units; ``whole``:
    the column is declared int (``schema=``), so a record holding a fraction is unusable."""

    step: Fraction
    lo_u: int
    hi_u: int
    whole: bool = False

    def __post_init__(self) -> None:
        if max(abs(self.lo_u), abs(self.hi_u)) >= INT64_LIMIT:
            raise ValueError("the bounds reach 2**63 lattice units: choose a coarser lattice for a table release")


def lattice_units(frame: DataFrame, column: str, spec: UnitSpec, refuse_types: bool = True) -> Column:
    """The units of ``column`` as a nullable ``long`` column (null: an unusable record). A boolean column is
    refused, as in memory (:func:`securedp.lattice.screen_units`), or with ``refuse_types`` off (analyst-facing)
    all unusable; a column of another type (dates, binary ...) is refused."""
    require_pyspark()
    from pyspark.sql import functions as f

    dtype = frame.schema[column].dataType.simpleString()
    if dtype in _INTEGRAL:
        return _integral_units(column, spec)
    if dtype in ("float", "double", "string") or dtype.startswith("decimal"):
        return _screened_units(spec)(f.col(quoted(column)))
    if dtype == "boolean" and not refuse_types:
        return f.lit(None).cast("bigint")
    raise TypeError(f"column {column!r}: data must be numeric, not bool" if dtype == "boolean" else
                    f"column {column!r}: data must be real numbers, not {dtype}")


def quoted(column: str) -> str:
    """``column`` as a Spark SQL identifier (backquoted: any name, dots and backquotes included)."""
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
    x = f"CAST({quoted(column)} AS BIGINT)"
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

    step, lo_u, hi_u, whole = spec.step, spec.lo_u, spec.hi_u, spec.whole

    def units(values: pd.Series) -> pd.Series:
        from securedp.lattice import screen_units

        records = values.to_numpy(dtype=object) if values.dtype == object else values.to_numpy()
        kept_units, kept = screen_units(records, step, lo_u, hi_u, missing="drop", refuse_rows=False, whole=whole)
        out = pd.array(np.zeros(len(values), dtype=np.int64), dtype="Int64")
        if kept is None:
            out[:] = np.asarray(kept_units, dtype=np.int64)
        else:
            out[kept] = np.asarray(kept_units, dtype=np.int64)
            out[~kept] = pd.NA
        return pd.Series(out)

    udf = pandas_udf(units, "bigint", PythonEvalType.SQL_SCALAR_PANDAS_UDF)  # a Series-to-Series scalar UDF
    return cast("Callable[[Column], Column]", udf)


def key_cells(frame: DataFrame, column: str, role: str, declared: str | None = None) -> Column:
    """The id or key column ``column`` read by the one rule of :mod:`securedp.reading.keys`, from its Spark type
    and its declared type: an integer column is itself, a text column its text, a float column's integral
    values of magnitude below ``2**53`` and a decimal column's integral values within 64 bits are those
    integers (``bigint``); ``declared="int"`` makes text of an optional sign and digits within 64 bits that
    integer, ``"text"`` makes integers their text; person ids are never negative integers. Null where the
    cell is unusable (missing, blank or undecodable text, a fraction, an infinity, NaN, a negative id); a
    column of another type (boolean, dates ...) is refused by :func:`securedp.reading.keys.refused_type`."""
    from pyspark.sql import functions as f

    from securedp.reading.keys import refused_type

    dtype = frame.schema[column].dataType.simpleString()
    raw = f.col(quoted(column))
    if dtype in _INTEGRAL:
        value = raw
    elif dtype == "string" and declared == "int":
        value = f.when(raw.rlike(r"^[+-]?[0-9]+$"), f.regexp_replace(raw, r"^[+]", "").try_cast("bigint"))
    elif dtype == "string":
        value = f.when(~raw.rlike(UNUSABLE_TEXT), raw)
    elif dtype in ("float", "double"):
        value = f.when(~f.isnan(raw) & (f.abs(raw) < float(1 << 53)) & (raw == f.floor(raw)), raw.cast("bigint"))
    elif dtype.startswith("decimal"):
        value = f.when((raw >= f.lit(decimal.Decimal(-INT64_LIMIT))) & (raw < f.lit(decimal.Decimal(INT64_LIMIT)))
                       & (raw == f.floor(raw)), raw.cast("bigint"))
    else:
        raise refused_type(column, role, dtype)
    integral = dtype != "string" or declared == "int"
    if integral and declared == "text":
        return value.cast("string")
    return f.when(value >= 0, value) if integral and role == "id" else value


@dataclass(frozen=True)
class KeyCheck:
    """An id or key column to check: ``read`` (:func:`key_cells`, null where unusable) and ``raw`` (the cell),
    columns of the checked frame; ``name`` and ``role`` (``"id"``, ``"group_by"``) as the caller gave them;
    ``integers``: the column reads as integers."""

    read: str
    raw: str
    name: str
    role: str
    integers: bool


@dataclass(frozen=True)
class ValueCheck:
    """A value column to check: ``units`` (null where unusable) and ``raw``, columns of the checked frame;
    ``name`` as the caller gave it; ``whole``: declared int."""

    units: str
    raw: str
    name: str
    whole: bool


def check_cells(frame: DataFrame, keys: Sequence[KeyCheck] = (), values: Sequence[ValueCheck] = ()) -> None:
    """Refuse unusable ids, keys and values in **one** Spark job, in the in-memory reader's words.

    The first failing column raises, keys before values, with the error of
    :func:`securedp.reading.keys.unusable_key` or :func:`securedp.lattice.screen.unusable_error`: the
    column, what one unusable cell holds and how many there are, but no row (a Spark table's rows have no
    order to name one by): a blank cell if there is one, else the least of the others.
    """
    from pyspark.sql import functions as f

    from securedp.lattice.screen import unusable_error
    from securedp.reading.keys import unusable_key

    checks = []
    for i, key in enumerate(keys):
        bad, raw = f.col(key.read).isNull(), f.col(key.raw)
        checks += [f.sum(bad.cast("int")).alias(f"key{i}"), f.max((bad & raw.isNull()).cast("int")).alias(f"null{i}"),
                   f.min(f.when(bad & raw.isNotNull(), raw)).alias(f"cell{i}")]
    for i, value in enumerate(values):
        bad, blank = f.col(value.units).isNull(), _blank(frame, value.raw)
        checks += [f.sum(bad.cast("int")).alias(f"value{i}"), f.max((bad & blank).cast("int")).alias(f"blank{i}"),
                   f.min(f.when(bad & ~blank, f.col(value.raw))).alias(f"record{i}")]
    if not checks:
        return
    found = frame.agg(*checks).first()
    if found is None:
        return
    for i, key in enumerate(keys):
        if found[f"key{i}"]:
            cell = None if found[f"null{i}"] else found[f"cell{i}"]
            raise unusable_key(key.name, key.role, cell, int(found[f"key{i}"]), None, key.integers)
    for i, value in enumerate(values):
        if found[f"value{i}"]:
            record = None if found[f"blank{i}"] else found[f"record{i}"]
            raise unusable_error(f"column {value.name!r}", record, int(found[f"value{i}"]), value.whole)


def _blank(frame: DataFrame, column: str) -> Column:
    """Whether a value cell is blank (:func:`securedp.reading.cells.is_blank`): missing, NaN, or text of
    whitespace only."""
    from pyspark.sql import functions as f

    from securedp.reading.cells import WHITESPACE

    dtype = frame.schema[column].dataType.simpleString()
    cell = f.col(quoted(column))
    if dtype in ("float", "double"):
        return cell.isNull() | f.isnan(cell)
    if dtype == "string":
        return cell.isNull() | cell.rlike(f"^[{WHITESPACE}]*$")
    return cell.isNull()


def units_column(frame: DataFrame, column: str, spec: UnitSpec, missing: str, fill: Any,
                 refuse_types: bool = True) -> Column:
    """The units of ``column`` (null where unusable), with the public ``fill``'s units in their place
    under ``missing="impute"`` (screened by the in-memory rule); ``"raise"`` and ``"drop"`` keep the
    nulls for :func:`check_cells` to refuse or for the engine to filter, column by column."""
    from pyspark.sql import functions as f

    from securedp.lattice import screen_units

    if missing not in ("raise", "drop", "impute"):
        raise ValueError(f"missing must be 'raise', 'drop' or 'impute', got {missing!r}")
    units = lattice_units(frame, column, spec, refuse_types)
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
