"""Exact per-key integers of disjoint sets of persons, added: the results of the pieces of a table
(:mod:`securedp.engines.polars.pieces`) as one.

Every person's rows lie in one piece, and bounding chooses each person's rows from that person's rows
alone, so the rows kept in the pieces together are the rows kept in the whole table; rows, persons,
sums and sums of squares per key, and counts per key and lattice unit, are sums over the pieces. The keys
come out in the order of :meth:`~securedp.engines.polars.pair_codes.PairCodes.in_key_order` (ascending,
lexicographically over the key columns), the one order of every result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from securedp.engines.protocol import KeyAggregates, UnitCounts


def _groups(keys: Sequence[pl.DataFrame], entries: int) -> tuple[pl.DataFrame, list[list[int]]]:
    """The distinct keys of the pieces' key frames, ascending, and for each the positions it holds in the
    pieces' ``entries`` laid end to end."""
    if not keys[0].width:  # no group-by: one entry per piece, all of one key
        return pl.DataFrame(), [list(range(entries))]
    stacked = pl.concat(list(keys), how="vertical")
    grouped = (stacked.with_row_index("_at").group_by(stacked.columns, maintain_order=True).agg(pl.col("_at"))
               .sort(stacked.columns, maintain_order=True))
    return grouped.select(stacked.columns), grouped["_at"].to_list()


def _added(parts: Sequence[Sequence[int] | None], at: list[list[int]]) -> list[int] | None:
    if any(p is None for p in parts):
        return None
    flat: list[int] = [v for p in parts if p is not None for v in p]
    return [sum(flat[i] for i in group) for group in at]


def merged_aggregates(parts: Sequence[KeyAggregates]) -> KeyAggregates:
    """The aggregates of the union of the pieces' persons (see the module)."""
    if len(parts) == 1:
        return parts[0]
    keys, at = _groups([p.keys for p in parts], sum(len(p.rows) for p in parts))
    rows, persons = _added([p.rows for p in parts], at), _added([p.persons for p in parts], at)
    assert rows is not None and persons is not None
    return KeyAggregates(keys, rows, persons, _added([p.total for p in parts], at),
                         _added([p.total_squares for p in parts], at))


def merged_units(parts: Sequence[UnitCounts]) -> UnitCounts:
    """The counts per key and lattice unit of the union of the pieces' persons (see the module)."""
    if len(parts) == 1:
        return parts[0]
    keys, at = _groups([p.keys for p in parts], sum(len(p.points) for p in parts))
    points = [q for p in parts for q in p.points]
    counts = [c for p in parts for c in p.counts]
    merged_points, merged_counts = [], []
    for group in at:
        values, numbers = _added_counts([points[i] for i in group], [counts[i] for i in group])
        merged_points.append(values)
        merged_counts.append(numbers)
    return UnitCounts(keys, merged_points, merged_counts)


def _added_counts(points: list[Any], counts: list[Any]) -> tuple[list[int], list[int]]:
    """Distinct units ascending and their added counts, of one key's pieces."""
    if len(points) == 1:
        return list(np.asarray(points[0]).tolist()), list(np.asarray(counts[0]).tolist())
    total: dict[int, int] = {}
    for values, numbers in zip(points, counts, strict=True):
        for value, number in zip(np.asarray(values).tolist(), np.asarray(numbers).tolist(), strict=True):
            total[value] = total.get(value, 0) + number
    ordered = sorted(total)
    return ordered, [total[v] for v in ordered]
