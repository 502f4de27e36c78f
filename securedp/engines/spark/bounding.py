"""Per-person bounding and exact per-key aggregates on Spark: one shuffle by person, one sort, windows.

The rule is :mod:`securedp.engines.polars.bounding`'s, with the digests of :mod:`securedp.bounding.digest`
computed by Spark's ``sha2`` over the byte-identical messages (``hex(salt)`` then netstring fields;
``octet_length`` counts UTF-8 bytes as the netstring does):

1. a person with more than ``max_groups`` (person, key) pairs keeps the ``max_groups`` pairs whose
   *pair digest* ``H(salt, person, key)`` is smallest (``dense_rank`` over the person's rows ordered
   by it: distinct pairs have distinct digests);
2. a kept pair with more than ``max_rows`` rows keeps, for each value column ``u``, the ``max_rows``
   rows whose *row digest* ``H(salt, person, key, u)`` is smallest (``row_number`` over the pair's
   rows ordered by it; rows with equal digests have equal units, so whichever is kept, every
   aggregate is the same).

So the kept set depends on no partitioning and no row order, and equals the in-memory engine's.
**One pass**: the rows are shuffled once by person and sorted once within partitions by
``(person, pair digest, row digest of the first column)``, which every window of steps 1 and 2 (and
the per-pair group-by after them) reads without another exchange; each further value column adds one
sort, no shuffle. Only the per-key aggregate is shuffled again (a few numbers per pair). Sums run in
``decimal(38, 0)`` (exact below ``10**38``; ANSI mode raises on overflow); squares in the three parts
``h*h``, ``h*l``, ``l*l`` of ``u = h 2**32 + l``, combined in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from securedp.bounding.digest import SALT_BYTES
from securedp.engines.protocol import KeyAggregates, UnitCounts

if TYPE_CHECKING:  # pyspark is an optional dependency: ``pip install "securedp[spark]"``
    from pyspark.sql import Column, DataFrame

_DECIMAL = "decimal(38,0)"
_INTEGRAL = ("tinyint", "smallint", "int", "bigint")
_SPLIT = 1 << 32
_PAIR_DIGEST = "_pair_digest"


def text(frame: DataFrame, column: str) -> Column:
    """The canonical text of an id or key column (:func:`securedp.bounding.digest.canonical_text`)."""
    from pyspark.sql import functions as f

    dtype = frame.schema[column].dataType.simpleString()
    if dtype in _INTEGRAL:
        return f.col(column).cast("string")
    if dtype == "string":
        return f.col(column)
    raise TypeError(f"column {column!r} has Spark type {dtype}: ids and keys must be integers or strings")


def digest(salt: bytes, texts: Sequence[Column]) -> Column:
    """Lowercase hex SHA-256 of ``hex(salt) || field(t1) || ...``: the bytes of :func:`digest.message`."""
    from pyspark.sql import functions as f

    if len(salt) != SALT_BYTES:
        raise ValueError(f"salt must be {SALT_BYTES} bytes")
    parts: list[Column] = [f.lit(salt.hex())]
    for t in texts:
        parts += [f.octet_length(t).cast("string"), f.lit(":"), t, f.lit(",")]
    return f.sha2(f.concat(*parts), 256)


def _row_digest(i: int) -> str:
    return f"_row_digest{i}"


def kept_rows(frame: DataFrame, *, person: str, keys: Sequence[str], units: Sequence[str], max_groups: int,
              max_rows: int, salt: bytes) -> DataFrame:
    """The rows of the pairs each person keeps, with a boolean ``_kept<i>`` per value column ``units[i]``
    (its row is among the pair's ``max_rows`` kept for that column) and, without value columns, ``_kept``.

    ``frame`` holds ``person``, ``keys`` and the integer ``units`` (no nulls: the missing-value policy
    is applied before). One shuffle by person and one sort per value column (see the module docstring).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as f

    ids = [text(frame, c) for c in [person, *keys]]
    rows = frame.withColumn(_PAIR_DIGEST, digest(salt, ids))
    for i, u in enumerate(units):
        rows = rows.withColumn(_row_digest(i), digest(salt, [*ids, f.col(u).cast("string")]))
    first = [_row_digest(0)] if units else []
    rows = rows.repartition(person).sortWithinPartitions(person, _PAIR_DIGEST, *first)
    if keys:
        rank = f.dense_rank().over(Window.partitionBy(person).orderBy(_PAIR_DIGEST))
        rows = rows.withColumn("_group_rank", rank).filter(f.col("_group_rank") <= max_groups).drop("_group_rank")
    pair = Window.partitionBy(person, _PAIR_DIGEST)
    if not units:
        return rows.withColumn("_kept", f.row_number().over(pair.orderBy(_PAIR_DIGEST)) <= max_rows)
    for i in range(len(units)):
        rows = rows.withColumn(f"_kept{i}", f.row_number().over(pair.orderBy(_row_digest(i))) <= max_rows)
    return rows


def _pair_aggregates(units: Sequence[str], squares: Sequence[bool], wide: Sequence[bool]) -> list[Column]:
    """Per kept pair: its kept rows and, per value column, the sum of its kept units (and the three parts
    of their squares). ``l = pmod(u, 2**32)`` and ``h = (u - l) div 2**32`` split ``u`` exactly. A pair's
    sum runs in ``bigint`` unless the column is ``wide`` (``max_rows`` units could pass ``2**62``)."""
    from pyspark.sql import functions as f

    kept = f.col("_kept0") if units else f.col("_kept")
    aggs = [f.sum(kept.cast("bigint")).alias("_rows")]
    for i, column in enumerate(units):
        on = f.col(f"_kept{i}")
        summed = f.col(column).cast(_DECIMAL) if wide[i] else f.col(column)
        aggs.append(f.sum(f.when(on, summed)).cast(_DECIMAL).alias(f"_sum{i}"))
        if squares[i]:
            u = "`" + column.replace("`", "``") + "`"
            low = f.when(on, f.expr(f"CAST(pmod({u}, {_SPLIT}) AS {_DECIMAL})"))
            high = f.when(on, f.expr(f"CAST(({u} - pmod({u}, {_SPLIT})) div {_SPLIT} AS {_DECIMAL})"))
            aggs += [f.sum(high * high).alias(f"_hh{i}"), f.sum(high * low).alias(f"_hl{i}"),
                     f.sum(low * low).alias(f"_ll{i}")]
    return aggs


def bound_and_aggregate(
    frame: DataFrame,
    *,
    person: str,
    keys: Sequence[str],
    units: Sequence[str],
    max_groups: int,
    max_rows: int,
    salt: bytes,
    squares: bool | Sequence[bool] = False,
    bounds: Sequence[int] | None = None,
) -> DataFrame:
    """Bound each person's contribution and aggregate the kept rows per key; a small Spark DataFrame.

    ``frame`` holds ``person``, ``keys`` and the integer ``units`` columns (no nulls: the caller has
    applied the missing-value policy; every value column then has the same usable rows). The result has
    the key columns, ``_persons``, ``_rows`` and per units column ``_sum<i>`` (and ``_hh<i>``,
    ``_hl<i>``, ``_ll<i>`` where ``squares`` asks, one flag for all or one per column), all exact.
    ``bounds``: the largest ``|u|`` of each units column (public), letting a pair's sum of at most
    ``max_rows`` units run in ``bigint`` when it stays below ``2**62``; unknown: ``decimal(38, 0)``.
    """
    from pyspark.sql import functions as f

    wanted = [squares] * len(units) if isinstance(squares, bool) else list(squares)
    wide = [True] * len(units) if bounds is None else [b * max_rows >= 1 << 62 for b in bounds]
    rows = kept_rows(frame, person=person, keys=keys, units=units, max_groups=max_groups, max_rows=max_rows,
                     salt=salt)
    pairs = rows.groupBy(person, *keys).agg(*_pair_aggregates(units, wanted, wide))
    sums = [f.sum(c).alias(c) for c in pairs.columns if c not in (person, *keys)]
    persons = f.count(f.lit(1)).alias("_persons")
    return pairs.groupBy(*keys).agg(persons, *sums) if keys else pairs.agg(persons, *sums)


def count_units(frame: DataFrame, *, person: str, keys: Sequence[str], units: str, max_groups: int,
                max_rows: int, salt: bytes) -> UnitCounts:
    """The rows :func:`bound_and_aggregate` keeps for ``units``, counted per key and lattice unit, collected.

    Only ``(key, unit, count)`` triples reach the driver (at most one per key and lattice point).
    """
    from pyspark.sql import functions as f

    rows = kept_rows(frame, person=person, keys=keys, units=[units], max_groups=max_groups, max_rows=max_rows,
                     salt=salt)
    counted = rows.filter(f.col("_kept0")).groupBy(*keys, units).agg(f.count(f.lit(1)).alias("_n"))
    triples = sorted((tuple(r[k] for k in keys), int(r[units]), int(r["_n"])) for r in counted.collect())
    import polars as pl

    key_rows: list[tuple[Any, ...]] = []
    points: list[list[int]] = []
    counts: list[list[int]] = []
    for key, unit, n in triples:
        if not key_rows or key_rows[-1] != key:
            key_rows.append(key)
            points.append([])
            counts.append([])
        points[-1].append(unit)
        counts[-1].append(n)
    if not keys:
        return UnitCounts(pl.DataFrame(), points or [[]], counts or [[]])
    return UnitCounts(pl.DataFrame(key_rows, schema=list(keys), orient="row"), points, counts)


def key_aggregates(result: DataFrame, keys: Sequence[str], column: int | None, squares: bool) -> KeyAggregates:
    """The per-key result of :func:`bound_and_aggregate` (value column ``column``, or none), collected and
    sorted by key like the Polars engine."""
    return collected_aggregates(result.collect(), keys, column, squares)


def collected_aggregates(collected: Sequence[Any], keys: Sequence[str], column: int | None,
                         squares: bool) -> KeyAggregates:
    """:func:`key_aggregates` of rows already collected (one job may serve several columns)."""
    import polars as pl

    rows = sorted((tuple(r[k] for k in keys), r.asDict()) for r in collected)
    if not keys and rows and rows[0][1]["_rows"] is None:  # no rows at all: Spark's global aggregate is null
        rows = []

    def ints(name: str) -> list[int]:
        return [int(d[name]) for _, d in rows]

    total = ints(f"_sum{column}") if column is not None else None
    total_squares = None
    if column is not None and squares:
        i = column
        total_squares = [(int(d[f"_hh{i}"]) << 64) + (int(d[f"_hl{i}"]) << 33) + int(d[f"_ll{i}"]) for _, d in rows]
    return KeyAggregates(keys=pl.DataFrame([k for k, _ in rows], schema=list(keys), orient="row"),
                         rows=ints("_rows"), persons=ints("_persons"), total=total, total_squares=total_squares)
