"""Per-person contribution bounding for grouped tables, and exact per-key integer aggregates (Polars).

**Rule.** After bounding, each person keeps rows in at most ``max_groups``
groups (keys) and at most ``max_rows`` rows in each kept group:

* a person with more than ``max_groups`` groups keeps the ``max_groups``
  groups whose *group digests* are smallest;
* a kept (person, group) with more than ``max_rows`` rows keeps the
  ``max_rows`` rows whose *row digests* are smallest (rows with equal units
  have equal digests and are interchangeable: every aggregate is the same
  whichever of them is kept).

Digests are SHA-256 of a secret salt and the canonical encoding of the
person, the key and the row's lattice units (:mod:`securedp.engines.digest`),
so the choice for a person depends only on that person's own rows and the
salt, never on row order or on other persons, and an engine computing the
same digests (Spark ``sha2``, DuckDB ``sha256``) keeps the same rows. Digests
are computed only where a choice is made (persons over ``max_groups`` groups,
pairs over ``max_rows`` rows): elsewhere every row is kept under any order,
so the kept set equals the one that hashing everything would give.

**Aggregates** (:class:`KeyAggregates`), per key with at least one kept row,
as Python ints: rows, distinct persons, sum of units and, on request, sum of
squared units. Sums run in Int128: with ``|u| < 2**63`` and fewer than
``2**63`` rows, ``|sum u| < 2**126``; squares are summed in three parts of
``u = h 2**32 + l`` (``0 <= l < 2**32``): ``sum h**2``, ``sum h l`` and
``sum l**2``, each below ``2**126``, and combined exactly in Python as
``(sum h**2) 2**64 + (sum h l) 2**33 + sum l**2``. With ``max_rows`` and
``max_groups`` these are the inputs of L1 sensitivity
``max_groups * max_rows * width`` the table release adds noise to.

Input: a Polars DataFrame or LazyFrame; pandas DataFrames and pyarrow Tables
are converted to Polars through Arrow. Ids and keys are integers or
non-blank strings (categoricals are read as their strings), units integers;
nulls and blanks are refused with an error naming the column, before any
budget is spent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from securedp.engines.digest import canonical_text, digest_heads, hex_digests
from securedp.mechanisms.contributions import positive_count

_UNITS = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32)
_PARTS = ["_hh", "_hl", "_ll"]


@dataclass(frozen=True)
class KeyAggregates:
    """Exact aggregates of the bounded rows, one entry per key, keys sorted.

    ``keys`` holds the key columns (no columns, and one entry in each list,
    when the table has no group-by). ``total`` and ``total_squares`` are
    ``None`` when no units column was given or squares were not asked for.
    """

    keys: pl.DataFrame
    rows: list[int]
    persons: list[int]
    total: list[int] | None
    total_squares: list[int] | None


def to_polars(data: Any) -> pl.DataFrame:
    """A Polars DataFrame from Polars (eager or lazy), pandas (via Arrow) or pyarrow input.

    A pandas column of ``np.longdouble`` (which Arrow cannot hold) becomes exact ``"num/den"``
    strings of its binary values, which the lattice screening reads exactly.
    """
    if isinstance(data, pl.LazyFrame):
        return data.collect()
    if isinstance(data, pl.DataFrame):
        return data
    kind = type(data).__module__.split(".")[0]
    if kind == "pandas" and type(data).__name__ == "DataFrame":
        wide = [c for c in data.columns if data[c].dtype.kind == "f" and data[c].dtype.itemsize > 8]
        if wide:
            data = data.assign(**{str(c): data[c].map(_exact_text) for c in wide})
        return pl.from_pandas(data)
    if kind == "pyarrow" and type(data).__name__ == "Table":
        frame = pl.from_arrow(data)
        assert isinstance(frame, pl.DataFrame)
        return frame
    raise TypeError(f"a table must be a polars, pandas or pyarrow table, not {type(data).__name__}")


def _exact_text(x: Any) -> str | None:
    """``"num/den"`` of a NumPy float exactly; ``None`` for NaN; ``"±1e999999"`` for an infinity
    (beyond any bound, so it clamps as the infinity would)."""
    if np.isnan(x):
        return None
    if np.isinf(x):
        return "1e999999" if x > 0 else "-1e999999"
    n, d = x.as_integer_ratio()
    return f"{n}/{d}"


def _checked(data: Any, person: str, keys: Sequence[str], units: str | None) -> pl.DataFrame:
    """The needed columns, categoricals as strings; raises on missing columns, bad types, nulls, blanks."""
    frame = to_polars(data)
    columns = [person, *keys, *([units] if units is not None else [])]
    if len(set(columns)) != len(columns):
        raise ValueError(f"columns must be distinct: {columns}")
    for column in columns:
        if column not in frame.columns:
            raise ValueError(f"column {column!r} is not in the table")
    frame = frame.select(columns).with_columns(
        pl.col(c).cast(pl.String) for c in columns if isinstance(frame.schema[c], (pl.Categorical, pl.Enum))
    )
    for column in columns:
        dtype = frame.schema[column]
        if column == units:
            if dtype not in _UNITS:
                raise TypeError(f"units column {units!r} must hold integer lattice units (int64 at most), not {dtype}")
        else:
            canonical_text(column, dtype)
    nulls = frame.null_count().row(0)
    for column, count in zip(columns, nulls, strict=True):
        if count:
            raise ValueError(f"column {column!r} has missing values")
    for column in columns:
        if frame.schema[column] == pl.String and frame.select((pl.col(column).str.strip_chars() == "").any()).item():
            raise ValueError(f"column {column!r} has blank values")
    return frame


def _smallest(frame: pl.DataFrame, by: list[str], salt: bytes, fields: list[str], limit: int) -> pl.DataFrame:
    """The ``limit`` rows of each ``by`` group whose digest of ``fields`` is smallest.

    A narrow frame (``by``, digest head, row index) is sorted by ``by`` and the digest's first 64
    bits; only if two rows of one group share them (probability about ``2**-64`` per pair of rows)
    is it re-sorted by the full digest, so the order is exact. The kept rows are then gathered.
    """
    index = pl.int_range(pl.len(), dtype=pl.get_index_type()).alias("_index")
    order = _collect(frame.lazy().select(*by, digest_heads(frame, salt, fields), index).sort([*by, "_head"]))
    same_group = pl.all_horizontal(pl.col(c) == pl.col(c).shift(1) for c in by).fill_null(False)
    if order.select((same_group & (pl.col("_head") == pl.col("_head").shift(1))).any()).item():
        order = frame.select(*by, hex_digests(frame, salt, fields), index).sort([*by, "_digest"])
    start = pl.when(~same_group).then(pl.int_range(pl.len())).forward_fill()
    return frame[order.filter(pl.int_range(pl.len()) - start < limit)["_index"]]


def _collect(query: pl.LazyFrame) -> pl.DataFrame:
    """Run a query on Polars' streaming engine (less memory and CPU here than the in-memory one)."""
    return query.collect(engine="streaming")


def _pair_aggregates(units: str | None, squares: bool) -> list[pl.Expr]:
    aggs = [pl.len().cast(pl.Int64).alias("_rows")]
    if units is None:
        return aggs
    u = pl.col(units).cast(pl.Int64)
    aggs.append(u.cast(pl.Int128).sum().alias("_sum"))
    if squares:
        h = u.floordiv(1 << 32)
        low = (u - h * (1 << 32)).cast(pl.Int128)
        aggs += [(h * h).cast(pl.Int128).sum().alias("_hh"), (h * low).sum().alias("_hl"),
                 (low * low).sum().alias("_ll")]
    return aggs


def _kept_pairs(frame: pl.DataFrame, person: str, keys: list[str], k: int, salt: bytes,
                aggs: list[pl.Expr]) -> pl.DataFrame:
    """The (person, key) pairs with ``aggs`` of their rows, after each person keeps at most ``k`` keys."""
    pair_cols = [person, *keys]
    query = frame.lazy().group_by(pair_cols).agg(aggs)
    if keys:
        crowded = pl.col("_crowded")
        marked = _collect(query.with_columns((pl.len().over(person) > k).alias("_crowded")))
        chosen = _smallest(marked.filter(crowded).drop("_crowded"), [person], salt, pair_cols, k)
        query = pl.concat([marked.lazy().filter(~crowded).drop("_crowded"), chosen.lazy()])
    return _collect(query)


def bound_and_aggregate(
    data: Any,
    *,
    person: str,
    keys: Sequence[str] = (),
    units: str | None = None,
    max_groups: Any,
    max_rows: Any,
    salt: bytes,
    squares: bool = False,
) -> KeyAggregates:
    """Bound every person's contribution (see the module) and aggregate the kept rows per key, exactly."""
    k, m = positive_count(max_groups, "max_groups"), positive_count(max_rows, "max_rows")
    keys = list(keys)
    frame = _checked(data, person, keys, units)
    pair_cols = [person, *keys]
    aggs = _pair_aggregates(units, squares)
    value_cols = [a.meta.output_name() for a in aggs]
    pairs = _kept_pairs(frame, person, keys, k, salt, aggs)
    full = pl.col("_rows") > m
    if units is None:
        pairs = pairs.with_columns(pl.min_horizontal("_rows", pl.lit(m, pl.Int64)).alias("_rows"))
    elif pairs.select(full.any()).item():
        rows = frame.join(pairs.filter(full).select(pair_cols), on=pair_cols, how="semi")
        chosen = _smallest(rows, pair_cols, salt, [*pair_cols, units], m).group_by(pair_cols).agg(aggs)
        pairs = pl.concat([pairs.filter(~full), chosen.select(pairs.columns)])
    return _per_key(pairs, keys, value_cols)


@dataclass(frozen=True)
class UnitCounts:
    """Per key (sorted, as in :class:`KeyAggregates`), the distinct units of its kept rows, ascending,
    and how many kept rows hold each: what an exponential mechanism over the lattice needs."""

    keys: pl.DataFrame
    points: list[list[int]]
    counts: list[list[int]]


def bound_and_count_units(
    data: Any, *, person: str, keys: Sequence[str] = (), units: str, max_groups: Any, max_rows: Any, salt: bytes,
) -> UnitCounts:
    """Bound every person's contribution (the same rows as :func:`bound_and_aggregate` keeps for
    ``units``) and count the kept rows per key and lattice unit."""
    k, m = positive_count(max_groups, "max_groups"), positive_count(max_rows, "max_rows")
    keys = list(keys)
    frame = _checked(data, person, keys, units)
    pair_cols = [person, *keys]
    pairs = _kept_pairs(frame, person, keys, k, salt, [pl.len().cast(pl.Int64).alias("_rows")])
    full = pl.col("_rows") > m
    kept = frame.join(pairs.filter(~full).select(pair_cols), on=pair_cols, how="semi")
    if pairs.select(full.any()).item():
        rows = frame.join(pairs.filter(full).select(pair_cols), on=pair_cols, how="semi")
        kept = pl.concat([kept, _smallest(rows, pair_cols, salt, [*pair_cols, units], m)])
    counted = kept.lazy().group_by([*keys, units]).agg(pl.len().cast(pl.Int64).alias("_n")).sort([*keys, units])
    if not keys:
        table = _collect(counted)
        return UnitCounts(pl.DataFrame(), [table[units].to_list()], [table["_n"].to_list()])
    lists = _collect(counted.group_by(keys, maintain_order=True).agg(pl.col(units), pl.col("_n")))
    return UnitCounts(lists.select(keys), lists[units].to_list(), lists["_n"].to_list())


def _per_key(pairs: pl.DataFrame, keys: list[str], value_cols: list[str]) -> KeyAggregates:
    sums = [pl.col(c).sum() for c in value_cols]
    persons = pl.len().cast(pl.Int64).alias("_persons")
    query = pairs.lazy().group_by(keys).agg([persons, *sums]).sort(keys) if keys else pairs.lazy().select(
        [persons, *sums])
    table = _collect(query)
    total = table["_sum"].to_list() if "_sum" in value_cols else None
    squares = None
    if "_hh" in value_cols:
        squares = [(hh << 64) + (hl << 33) + ll for hh, hl, ll in table.select(_PARTS).iter_rows()]
    return KeyAggregates(
        keys=table.select(keys), rows=table["_rows"].to_list(), persons=table["_persons"].to_list(),
        total=total, total_squares=squares,
    )
