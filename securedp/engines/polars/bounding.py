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
person, the key and the row's lattice units (:mod:`securedp.bounding.digest`),
so the choice for a person depends only on that person's own rows and the
salt, never on row order or on other persons, and an engine computing the
same digests (Spark ``sha2``, DuckDB ``sha256``) keeps the same rows. Digests
are computed only where a choice is made (persons over ``max_groups`` groups,
pairs over ``max_rows`` rows): elsewhere every row is kept under any order,
so the kept set equals the one that hashing everything would give.

**Aggregates** (:class:`KeyAggregates`), per key with at least one kept row,
as Python ints: rows, distinct persons, sum of units and, on request, sum of
squared units. When ``rows * max |u|`` (and ``rows * max |u|**2`` for
squares) is below ``2**63`` no partial sum can overflow and sums run in
Int64; otherwise in Int128: with ``|u| < 2**63`` and fewer than ``2**63``
rows, ``|sum u| < 2**126``, and squares are summed in three parts of
``u = h 2**32 + l`` (``0 <= l < 2**32``): ``sum h**2``, ``sum h l`` and
``sum l**2``, each below ``2**126``, and combined exactly in Python as
``(sum h**2) 2**64 + (sum h l) 2**33 + sum l**2``. With ``max_rows`` and
``max_groups`` these are the inputs of L1 sensitivity
``max_groups * max_rows * width`` the table release adds noise to.

**How** (none of it changes which rows are kept): each row's (person, key)
pair gets one Int64 code (:mod:`securedp.engines.polars.pair_codes`); rows are
sorted by it and aggregated per pair, so each person's pairs are one run.
Only persons with more than ``max_groups`` pairs are hashed, each
person's and each key's netstring built once; a person's ``max_groups``
smallest digests are found with one sort of UInt64 keys (run index over the
digest's leading bits), falling back to full digests on a shared key.

Input: a Polars DataFrame or LazyFrame; pandas DataFrames and pyarrow Tables
are converted to Polars through Arrow. Ids and keys are integers or strings
(categoricals are read as their strings), units integers; a null or a wrong
type is refused with an error naming the column. Which texts are no id or key
(blank, undecodable: :data:`securedp.reading.cells.UNUSABLE_TEXT`) is decided
once, by the table reader (:func:`securedp.engines.frames.read_table`, which
refuses them before any budget is spent, or drops their rows in an
analyst-facing session), as for the Spark engine; a caller of this module
directly reads its table through it first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from securedp.bounding.digest import canonical_text
from securedp.bounding.limits import positive_count
from securedp.bounding.messages import run_starts
from securedp.engines.polars.pair_codes import PAIR, PairCodes, code_pairs
from securedp.engines.polars.smallest import group_heads, smallest_in_runs, smallest_rows
from securedp.engines.protocol import KeyAggregates, UnitCounts

_UNITS = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32)
_PARTS = ["_hh", "_hl", "_ll"]
_INT64 = 1 << 63


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


def _checked(data: Any, person: str, keys: Sequence[str], units: Sequence[str]) -> pl.DataFrame:
    """The needed columns, categoricals as strings; raises on missing columns, bad types and nulls (blank
    and undecodable texts are the reader's to refuse: see the module)."""
    frame = to_polars(data)
    columns = [person, *keys, *units]
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
        if column in units:
            if dtype not in _UNITS:
                raise TypeError(f"units column {column!r} must hold integer lattice units (int64 at most), not {dtype}")
        else:
            canonical_text(column, dtype)
    nulls = frame.null_count().row(0)
    for column, count in zip(columns, nulls, strict=True):
        if count:
            raise ValueError(f"column {column!r} has missing values")
    return frame


def _collect(query: pl.LazyFrame) -> pl.DataFrame:
    """Run a query on Polars' streaming engine (less memory and CPU here than the in-memory one)."""
    return query.collect(engine="streaming")


def _pair_aggregates(frame: pl.DataFrame, units: str | None, squares: bool, suffix: str = "") -> list[pl.Expr]:
    """Per pair: rows (``_rows``), and with ``units`` the sum (``_sum``) and on request the sum of
    squares (``_sq``, or its three parts ``_hh``, ``_hl``, ``_ll``), exact; ``suffix`` ends the names
    of the sums (not of ``_rows``).

    Sums run in Int64 when ``rows * max |u|`` (``* max |u|`` again for squares) is below ``2**63``
    for the whole frame, so that no partial sum (of a pair, or later of a key) can overflow;
    otherwise in Int128, squares in three parts (see the module).
    """
    aggs = [pl.len().cast(pl.Int64).alias("_rows")]
    if units is None:
        return aggs
    u = pl.col(units).cast(pl.Int64)
    low, high = frame.select(pl.col(units).min().alias("lo"), pl.col(units).max().alias("hi")).row(0)
    widest = max(abs(low or 0), abs(high or 0))
    small = frame.height * widest < _INT64
    aggs.append((u if small else u.cast(pl.Int128)).sum().alias(f"_sum{suffix}"))
    if squares and frame.height * widest * widest < _INT64:
        aggs.append((u * u).sum().alias(f"_sq{suffix}"))
    elif squares:
        h = u.floordiv(1 << 32)
        lo = (u - h * (1 << 32)).cast(pl.Int128)
        aggs += [(h * h).cast(pl.Int128).sum().alias(f"_hh{suffix}"), (h * lo).sum().alias(f"_hl{suffix}"),
                 (lo * lo).sum().alias(f"_ll{suffix}")]
    return aggs


def _kept_pairs(frame: pl.DataFrame, person: str, keys: list[str], units: list[str], k: int, salt: bytes,
                aggs: list[pl.Expr], known: pl.DataFrame | None) -> tuple[pl.DataFrame, pl.LazyFrame, PairCodes]:
    """The coded (person, key) pairs (:mod:`securedp.engines.polars.pair_codes`), sorted, with ``aggs`` of
    their rows, after each person keeps at most ``k`` keys; also the coded rows and the codes."""
    frame, pair, codes = code_pairs(frame, person, keys, known)
    coded = frame.lazy().select(pair, *units)  # ids and keys are read back from their codes
    pairs = coded.sort(PAIR).group_by(PAIR, maintain_order=True).agg(aggs).collect()
    if keys and pairs.height:
        pair_codes = pairs[PAIR].to_numpy()
        starts = run_starts(codes.person_codes(pair_codes))
        sizes = np.diff(np.append(starts, pair_codes.size))
        crowded = np.repeat(sizes > k, sizes)
        if crowded.any():
            chosen_sizes = sizes[sizes > k]
            run = np.repeat(np.arange(chosen_sizes.size), chosen_sizes)
            candidates = pair_codes[crowded]
            first = np.cumsum(chosen_sizes) - chosen_sizes
            key_codes = codes.key_codes(candidates)
            heads, digests = group_heads(codes, candidates, key_codes, run, first, salt)
            keep = ~crowded
            keep[crowded] = smallest_in_runs(run, first, heads, digests, k, key_codes)
            pairs = pairs.filter(pl.Series(keep))
    return pairs, coded, codes


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
    known_keys: pl.DataFrame | None = None,
) -> KeyAggregates:
    """Bound every person's contribution (see the module) and aggregate the kept rows per key, exactly.

    ``known_keys``: the public keys (a frame of the key columns), when every row's key is one of them; text
    key columns are then coded by their position among them (:mod:`securedp.engines.polars.pair_codes`),
    which changes no result.
    """
    if units is None:
        k, m = positive_count(max_groups, "max_groups"), positive_count(max_rows, "max_rows")
        keys = list(keys)
        frame = _checked(data, person, keys, [])
        pairs, _, codes = _kept_pairs(frame, person, keys, [], k, salt, _pair_aggregates(frame, None, False),
                                      known_keys)
        pairs = pairs.with_columns(pl.min_horizontal("_rows", pl.lit(m, pl.Int64)).alias("_rows"))
        return _per_key(pairs, codes, ["_rows"])
    return bound_and_aggregate_columns(data, person=person, keys=keys, units=[units], max_groups=max_groups,
                                       max_rows=max_rows, salt=salt, squares=[squares], known_keys=known_keys)[0]


def bound_and_aggregate_columns(
    data: Any,
    *,
    person: str,
    keys: Sequence[str] = (),
    units: Sequence[str],
    max_groups: Any,
    max_rows: Any,
    salt: bytes,
    squares: Sequence[bool] | None = None,
    known_keys: pl.DataFrame | None = None,
) -> list[KeyAggregates]:
    """:func:`bound_and_aggregate` of each column of ``units`` (``squares[i]``: with the sums of squares),
    in one pass over rows every column shares (no value dropped); ``known_keys`` as there.

    Each column's result is the one :func:`bound_and_aggregate` gives for it alone: which pairs a
    person keeps depends on the group digests only, so the pairs are coded, aggregated and chosen
    once; each column then keeps, of each pair over ``max_rows``, the rows its own row digests
    choose, the rows of those pairs gathered and sorted once for all the columns.
    """
    k, m = positive_count(max_groups, "max_groups"), positive_count(max_rows, "max_rows")
    keys, units = list(keys), list(units)
    wanted = [False] * len(units) if squares is None else list(squares)
    if len(wanted) != len(units) or not units:
        raise ValueError("give at least one units column, and one squares flag per units column")
    frame = _checked(data, person, keys, units)
    per_column = [_pair_aggregates(frame, u, sq, f"_{i}")[1:] for i, (u, sq) in enumerate(zip(units, wanted,
                                                                                                strict=True))]
    counted = pl.len().cast(pl.Int64).alias("_rows")
    pairs, coded, codes = _kept_pairs(frame, person, keys, units, k, salt,
                                       [counted, *(a for c in per_column for a in c)], known_keys)
    full = pl.col("_rows") > m
    names = [[a.meta.output_name() for a in aggs] for aggs in per_column]
    if pairs.select(full.any()).item():
        rows = _collect(coded.join(pairs.lazy().filter(full).select(PAIR), on=PAIR, how="semi"))
        rows, masks = smallest_rows(rows, salt, codes, units, m)
        light = pairs.filter(~full)
        chosen = [rows.filter(pl.Series(mask)).group_by(PAIR).agg([counted, *aggs])
                  for mask, aggs in zip(masks, per_column, strict=True)]
        column_pairs = [pl.concat([light.select(PAIR, "_rows", *n), c.select(PAIR, "_rows", *n)])
                        for n, c in zip(names, chosen, strict=True)]
    else:
        column_pairs = [pairs.select(PAIR, "_rows", *n) for n in names]
    results = []
    for i, (n, column) in enumerate(zip(names, column_pairs, strict=True)):
        plain = [name.removesuffix(f"_{i}") for name in n]
        results.append(_per_key(column.rename(dict(zip(n, plain, strict=True))), codes, ["_rows", *plain]))
    return results


def bound_and_count_units(
    data: Any, *, person: str, keys: Sequence[str] = (), units: str, max_groups: Any, max_rows: Any, salt: bytes,
    known_keys: pl.DataFrame | None = None,
) -> UnitCounts:
    """Bound every person's contribution (the same rows as :func:`bound_and_aggregate` keeps for
    ``units``) and count the kept rows per key and lattice unit; ``known_keys`` as there."""
    k, m = positive_count(max_groups, "max_groups"), positive_count(max_rows, "max_rows")
    keys = list(keys)
    frame = _checked(data, person, keys, [units])
    pairs, coded, codes = _kept_pairs(frame, person, keys, [units], k, salt,
                                       [pl.len().cast(pl.Int64).alias("_rows")], known_keys)
    full = pl.col("_rows") > m
    kept = _collect(coded.join(pairs.lazy().filter(~full).select(PAIR), on=PAIR, how="semi").select(PAIR, units))
    if pairs.select(full.any()).item():
        rows = _collect(coded.join(pairs.lazy().filter(full).select(PAIR), on=PAIR, how="semi"))
        rows, (mask,) = smallest_rows(rows, salt, codes, [units], m)
        kept = pl.concat([kept, rows.filter(pl.Series(mask)).select(PAIR, units)])
    key = codes.key_expr()
    counted = _collect(kept.lazy().group_by(key, units).agg(pl.len().cast(pl.Int64).alias("_n")).sort("_key", units))
    lists = counted.group_by("_key", maintain_order=True).agg(pl.col(units), pl.col("_n"))
    key_frame = pl.DataFrame()
    if keys:
        key_frame, lists = codes.in_key_order(lists["_key"].to_numpy(), lists)
    return UnitCounts(key_frame, lists[units].to_list(), lists["_n"].to_list())


def _per_key(pairs: pl.DataFrame, codes: PairCodes, value_cols: list[str]) -> KeyAggregates:
    sums = [pl.col(c).sum() for c in value_cols]
    persons = pl.len().cast(pl.Int64).alias("_persons")
    if codes.key_columns:
        key = codes.key_expr()
        table = _collect(pairs.lazy().group_by(key).agg([persons, *sums]))
        key_frame, table = codes.in_key_order(table["_key"].to_numpy(), table)
    else:
        table, key_frame = _collect(pairs.lazy().select([persons, *sums])), pl.DataFrame()
    total = table["_sum"].to_list() if "_sum" in value_cols else None
    squares = table["_sq"].to_list() if "_sq" in value_cols else None
    if "_hh" in value_cols:
        squares = [(hh << 64) + (hl << 33) + ll for hh, hl, ll in table.select(_PARTS).iter_rows()]
    return KeyAggregates(
        keys=key_frame, rows=table["_rows"].to_list(), persons=table["_persons"].to_list(),
        total=total, total_squares=squares,
    )
