"""Exact per-key integers when every row is its own person: the bounding rule keeps every row.

Without an id column each row is a person with one row in one key, so no person is over ``max_groups``
keys or ``max_rows >= 1`` rows in a key: the salted rule of :mod:`securedp.engines.polars.bounding`
keeps every row whatever the salt, and the aggregates are plain sums per key. This module computes
them directly (NumPy's exact integer sums without a group-by, one Polars group-by with one), in the
forms :mod:`~securedp.engines.polars.bounding` returns (keys sorted; without a group-by, one entry), and
a test compares both on random tables.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from securedp.engines.protocol import KeyAggregates, UnitCounts
from securedp.lattice import exact_sum, exact_sum_of_squares

_INT64 = 1 << 63


def _bound(units: np.ndarray) -> int:
    return max(abs(int(units.min())), abs(int(units.max()))) if units.size else 0


def counts(frame: pl.DataFrame, keys: Sequence[str]) -> KeyAggregates:
    """Rows (and persons, the same) per key of ``frame``."""
    if not keys:
        return KeyAggregates(pl.DataFrame(), [frame.height], [frame.height], None, None)
    table = frame.group_by(list(keys)).agg(pl.len().cast(pl.Int64).alias("_n")).sort(list(keys))
    rows = table["_n"].to_list()
    return KeyAggregates(table.select(list(keys)), rows, rows, None, None)


def column(frame: pl.DataFrame, keys: Sequence[str], units: str, squares: bool,
           public_bound: int | None = None) -> KeyAggregates:
    """Rows, persons, the exact sum of ``units`` and on request of their squares, per key of ``frame``.

    ``public_bound``: a bound on every ``|unit|`` known without reading them (the column's public bounds), used
    without a group-by instead of the values' own largest magnitude (two passes fewer; the sums are exact
    whichever bound is used)."""
    values = frame[units].to_numpy()
    if not keys:
        n = frame.height
        bound = _bound(values) if public_bound is None else public_bound
        return KeyAggregates(pl.DataFrame(), [n], [n], [exact_sum(values, bound)],
                             [exact_sum_of_squares(values, bound)] if squares else None)
    bound = _bound(values)
    u = pl.col(units).cast(pl.Int64)
    small = frame.height * bound < _INT64
    aggs = [pl.len().cast(pl.Int64).alias("_n"), (u if small else u.cast(pl.Int128)).sum().alias("_sum")]
    if squares:
        aggs.append((u.cast(pl.Int128) * u.cast(pl.Int128)).sum().alias("_sq"))
    table = frame.group_by(list(keys)).agg(aggs).sort(list(keys))
    rows = table["_n"].to_list()
    wide_squares = squares and frame.height * bound * bound >= 1 << 126
    squared = (_squares_by_key(frame, keys, units) if wide_squares else table["_sq"].to_list()) if squares else None
    return KeyAggregates(table.select(list(keys)), rows, rows, table["_sum"].to_list(), squared)


def _squares_by_key(frame: pl.DataFrame, keys: Sequence[str], units: str) -> list[int]:
    """Exact sums of squares per key (sorted) where even Int128 could overflow: Python integers."""
    table = frame.group_by(list(keys)).agg(pl.col(units)).sort(list(keys))
    return [sum(int(u) * int(u) for u in values) for values in table[units].to_list()]


def unit_counts(frame: pl.DataFrame, keys: Sequence[str], units: str) -> UnitCounts:
    """The distinct units of each key (ascending) and how many rows hold each."""
    if not keys:
        if frame.height == 0:
            return UnitCounts(pl.DataFrame(), [], [])
        points, how_many = distinct_counts(frame[units].to_numpy())
        return UnitCounts(pl.DataFrame(), [points], [how_many])  # arrays: 10**6 distinct points stay one array
    counted = frame.group_by([*keys, units]).agg(pl.len().cast(pl.Int64).alias("_n")).sort([*keys, units])
    lists = counted.group_by(list(keys), maintain_order=True).agg(pl.col(units), pl.col("_n"))
    return UnitCounts(lists.select(list(keys)), lists[units].to_list(), lists["_n"].to_list())


def distinct_counts(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of a 1-d integer array, ascending, and how many times each occurs: what
    ``np.unique(values, return_counts=True)`` returns, from one sorted copy and a mask of the first of each run
    (``np.unique`` also copies the values before sorting them, builds its mask twice and its counts from two
    more arrays). The counts are written over the sorted copy once the points are taken from it."""
    ordered = np.sort(values)
    n = ordered.size
    first = np.empty(n, dtype=bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    points = ordered[starts]
    counts = ordered[:starts.size]  # the sorted copy is read no more: the counts take its place
    np.subtract(starts[1:], starts[:-1], out=counts[:-1])
    counts[-1:] = n - starts[-1:]
    return points, counts
