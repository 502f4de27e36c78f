"""The Apache Spark engine: per-person bounding and exact per-key integer aggregates, in the JVM.

It computes exactly what the aggregate/noise boundary says an engine
computes, and nothing else: lattice units of the value columns, per-person
contribution bounding, and per key the kept rows, distinct persons, sums of
units and (on request) sums of squared units. Only those per-key integers
reach the driver (a few numbers per key); raw rows never do. Noise,
partition selection, accounting and the audit record then run once on the
driver, with securedp's own samplers, exactly as for a Polars table.

**Same rows kept as in memory.** Bounding follows the rule of
:mod:`securedp.engines.polars.bounding`, with digests computed by Spark's ``sha2``
over the byte-identical messages of :mod:`securedp.bounding.digest`
(``hex(salt)`` then netstring fields; ``octet_length`` counts UTF-8 bytes as
the netstring does). Rows are chosen by ``row_number`` over windows ordered by
the digest, so the kept set depends on no partitioning and no row order. Rows
of one pair with the same digest have the same units, so whichever is kept,
every aggregate is the same.

**Exact integers.** Units are Spark ``long`` (``|u| < 2**63``, checked from
the public bounds before anything runs); every sum runs in
``decimal(38, 0)`` (exact below ``10**38``; with ANSI mode, which the engine
requires, an overflow raises instead of wrapping). Squares are summed in the
three parts of :mod:`securedp.engines.polars.bounding` (``u = h 2**32 + l``), each
below ``2**126`` per key, and combined in Python.

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

from securedp.bounding.digest import SALT_BYTES
from securedp.engines.polars.bounding import KeyAggregates, UnitCounts

if TYPE_CHECKING:  # pyspark is an optional dependency: ``pip install "securedp[spark]"``
    from pyspark.sql import Column, DataFrame

INT64_LIMIT = 1 << 63
_DECIMAL = "decimal(38,0)"
_INTEGRAL = ("tinyint", "smallint", "int", "bigint")
_SPLIT = 1 << 32

_REPLACEMENT = "\ufffd"
"""The character a lossy decoder writes for bytes it cannot decode (never part of an id or key)."""


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


def _text(frame: DataFrame, column: str) -> Column:
    """The canonical text of an id or key column (:func:`securedp.bounding.digest.canonical_text`)."""
    from pyspark.sql import functions as f

    dtype = frame.schema[column].dataType.simpleString()
    if dtype in _INTEGRAL:
        return f.col(column).cast("string")
    if dtype == "string":
        return f.col(column)
    raise TypeError(f"column {column!r} has Spark type {dtype}: ids and keys must be integers or strings")


def _digest(salt: bytes, texts: Sequence[Column]) -> Column:
    """Lowercase hex SHA-256 of ``hex(salt) || field(t1) || ...``: the bytes of :func:`digest.message`."""
    from pyspark.sql import functions as f

    if len(salt) != SALT_BYTES:
        raise ValueError(f"salt must be {SALT_BYTES} bytes")
    parts: list[Column] = [f.lit(salt.hex())]
    for text in texts:
        parts += [f.octet_length(text).cast("string"), f.lit(":"), text, f.lit(",")]
    return f.sha2(f.concat(*parts), 256)


def _pair_aggregates(units: Sequence[str], squares: bool) -> list[Column]:
    """Per (person, key) pair: rows, and per units column its sum (and the three parts of its squares).

    ``l = pmod(u, 2**32)`` and ``h = (u - l) div 2**32`` split ``u`` exactly (no double on the way).
    """
    from pyspark.sql import functions as f

    aggs = [f.count(f.lit(1)).alias("_rows")]
    for i, column in enumerate(units):
        aggs.append(f.sum(f.col(column).cast(_DECIMAL)).alias(f"_sum{i}"))
        if squares:
            u = _quoted(column)
            low = f.expr(f"CAST(pmod({u}, {_SPLIT}) AS {_DECIMAL})")
            high = f.expr(f"CAST(({u} - pmod({u}, {_SPLIT})) div {_SPLIT} AS {_DECIMAL})")
            aggs += [f.sum(high * high).alias(f"_hh{i}"), f.sum(high * low).alias(f"_hl{i}"),
                     f.sum(low * low).alias(f"_ll{i}")]
    return aggs


def _smallest(frame: DataFrame, by: list[str], digest: Column, limit: int) -> DataFrame:
    """The ``limit`` rows of each ``by`` group whose ``digest`` is smallest (ties: equal rows, any of them)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as f

    rank = f.row_number().over(Window.partitionBy(*by).orderBy(digest))
    return frame.withColumn("_rank", rank).filter(f.col("_rank") <= limit).drop("_rank")


def _kept_pairs(frame: DataFrame, person: str, keys: Sequence[str], max_groups: int, salt: bytes,
                aggs: list[Column]) -> DataFrame:
    """The (person, key) pairs with ``aggs`` of their rows, after each person keeps at most ``max_groups`` keys."""
    from pyspark.sql import Window
    from pyspark.sql import functions as f

    pair_cols = [person, *keys]
    pairs = frame.groupBy(*pair_cols).agg(*aggs)
    if not keys:
        return pairs
    pairs = pairs.withColumn("_groups", f.count(f.lit(1)).over(Window.partitionBy(person)))
    crowded = f.col("_groups") > max_groups
    pair_ids = [_text(pairs, c) for c in pair_cols]
    chosen = _smallest(pairs.filter(crowded), [person], _digest(salt, pair_ids), max_groups)
    return pairs.filter(~crowded).unionByName(chosen).drop("_groups")


def bound_and_aggregate(
    frame: DataFrame,
    *,
    person: str,
    keys: Sequence[str],
    units: Sequence[str],
    max_groups: int,
    max_rows: int,
    salt: bytes,
    squares: bool = False,
) -> DataFrame:
    """Bound each person's contribution and aggregate the kept rows per key; a small Spark DataFrame.

    ``frame`` holds ``person``, ``keys`` and the integer ``units`` columns (no nulls: the caller has
    applied the missing-value policy). The result has the key columns, ``_persons``, ``_rows`` and per
    units column ``_sum<i>`` (and ``_hh<i>``, ``_hl<i>``, ``_ll<i>`` with ``squares``), all exact.
    """
    require_pyspark()
    from pyspark.sql import functions as f

    pair_cols = [person, *keys]
    ids = [_text(frame, c) for c in pair_cols]
    aggs = _pair_aggregates(units, squares)
    pairs = _kept_pairs(frame, person, keys, max_groups, salt, aggs)
    full = f.col("_rows") > max_rows
    if not units:
        pairs = pairs.withColumn("_rows", f.least(f.col("_rows"), f.lit(max_rows).cast("bigint")))
    else:
        rows = frame.join(pairs.filter(full).select(*pair_cols), on=pair_cols, how="left_semi")
        digest = _digest(salt, [*ids, *(f.col(u).cast("string") for u in units)])
        kept = _smallest(rows, pair_cols, digest, max_rows).groupBy(*pair_cols).agg(*aggs)
        pairs = pairs.filter(~full).unionByName(kept.select(*pairs.columns))
    sums = [f.sum(c).alias(c) for c in pairs.columns if c not in pair_cols]
    persons = f.count(f.lit(1)).alias("_persons")
    return pairs.groupBy(*keys).agg(persons, *sums) if keys else pairs.agg(persons, *sums)


def count_units(frame: DataFrame, *, person: str, keys: Sequence[str], units: str, max_groups: int,
                max_rows: int, salt: bytes) -> UnitCounts:
    """The rows :func:`bound_and_aggregate` keeps for ``units``, counted per key and lattice unit, collected.

    Only ``(key, unit, count)`` triples reach the driver (at most one per key and lattice point).
    """
    require_pyspark()
    from pyspark.sql import functions as f

    pair_cols = [person, *keys]
    ids = [_text(frame, c) for c in pair_cols]
    pairs = _kept_pairs(frame, person, keys, max_groups, salt, [f.count(f.lit(1)).alias("_rows")])
    full = f.col("_rows") > max_rows
    kept = frame.join(pairs.filter(~full).select(*pair_cols), on=pair_cols, how="left_semi")
    crowded = frame.join(pairs.filter(full).select(*pair_cols), on=pair_cols, how="left_semi")
    chosen = _smallest(crowded, pair_cols, _digest(salt, [*ids, f.col(units).cast("string")]), max_rows)
    counted = kept.unionByName(chosen).groupBy(*keys, units).agg(f.count(f.lit(1)).alias("_n"))
    rows = sorted((tuple(r[k] for k in keys), int(r[units]), int(r["_n"])) for r in counted.collect())
    import polars as pl

    key_rows: list[tuple[Any, ...]] = []
    points: list[list[int]] = []
    counts: list[list[int]] = []
    for key, unit, n in rows:
        if not key_rows or key_rows[-1] != key:
            key_rows.append(key)
            points.append([])
            counts.append([])
        points[-1].append(unit)
        counts[-1].append(n)
    if not keys:
        return UnitCounts(pl.DataFrame(), points or [[]], counts or [[]])
    return UnitCounts(pl.DataFrame(key_rows, schema=list(keys), orient="row"), points, counts)


def check_keys(frame: DataFrame, columns: Sequence[str], labels: dict[str, str]) -> None:
    """Refuse ids and keys that are not integers or strings, or that are missing or blank (one Spark job).

    The error names the column (``labels`` renames internal ones), never a row or a count.
    """
    from pyspark.sql import functions as f

    texts = [_text(frame, c) for c in columns]
    checks = [f.max(t.isNull().cast("int")).alias(f"null{i}") for i, t in enumerate(texts)]
    checks += [f.max(((f.trim(t) == f.lit("")) | t.contains(_REPLACEMENT)).cast("int")).alias(f"blank{i}")
               for i, t in enumerate(texts)]
    found = frame.agg(*checks).first()
    for i, column in enumerate(columns):
        name = labels.get(column, column)
        if found is not None and found[f"null{i}"]:
            raise ValueError(f"column {name!r} has missing values")
        if found is not None and found[f"blank{i}"]:
            raise ValueError(f"column {name!r} has blank values, or text a decoder could not read (U+FFFD)")


def drop_bad_keys(frame: DataFrame, columns: Sequence[str]) -> DataFrame:
    """``frame`` without the rows whose id or key is missing, blank or undecodable (analyst-facing: nothing raises).

    Spark's CSV reader writes U+FFFD for bytes its encoding cannot decode, so two distinct ids could read
    alike: a cell holding U+FFFD is no id or key (:mod:`securedp.reading.files` states the rule).
    """
    from pyspark.sql import functions as f

    for column in columns:
        text = _text(frame, column)
        frame = frame.filter(text.isNotNull() & (f.trim(text) != f.lit("")) & ~text.contains(_REPLACEMENT))
    return frame


def screened(frame: DataFrame, keep: Sequence[str], column: str, spec: UnitSpec, missing: str,
             fill: Any) -> DataFrame:
    """``keep`` plus the units of ``column`` as ``_units``, unusable records handled by ``missing``.

    ``"raise"`` runs one job and raises if any record is unusable; ``"drop"`` filters them out;
    ``"impute"`` uses the units of the public ``fill``, screened by the in-memory rule.
    """
    from pyspark.sql import functions as f

    from securedp.lattice import screen_units

    units = lattice_units(frame, column, spec)
    with_units = frame.select(*keep, units.alias("_units"))
    if missing == "drop":
        return with_units.filter(f.col("_units").isNotNull())
    if missing == "impute":
        fill_u = int(screen_units(np.array([fill], dtype=object), spec.step, spec.lo_u, spec.hi_u)[0][0])
        return with_units.withColumn("_units", f.coalesce(f.col("_units"), f.lit(fill_u).cast("bigint")))
    if missing != "raise":
        raise ValueError(f"missing must be 'raise', 'drop' or 'impute', got {missing!r}")
    if with_units.filter(f.col("_units").isNull()).limit(1).count():
        raise ValueError(f"column {column!r} has unusable records (missing, NaN or not a number); clean the "
                         "data, or pass missing='drop' or missing='impute' with fill=<number>")
    return with_units


def key_aggregates(result: DataFrame, keys: Sequence[str], units: bool, squares: bool) -> KeyAggregates:
    """The per-key result of :func:`bound_and_aggregate`, collected and sorted by key like the Polars engine."""
    import polars as pl

    rows = sorted((tuple(r[k] for k in keys), r.asDict()) for r in result.collect())
    if not keys and rows and rows[0][1]["_rows"] is None:  # no rows at all: Spark's global aggregate is null
        rows = []
    def ints(name: str) -> list[int]:
        return [int(d[name]) for _, d in rows]

    total = ints("_sum0") if units else None
    total_squares = None
    if units and squares:
        total_squares = [(int(d["_hh0"]) << 64) + (int(d["_hl0"]) << 33) + int(d["_ll0"]) for _, d in rows]
    return KeyAggregates(keys=pl.DataFrame([k for k, _ in rows], schema=list(keys), orient="row"),
                         rows=ints("_rows"), persons=ints("_persons"), total=total, total_squares=total_squares)
