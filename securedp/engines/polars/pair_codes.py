"""One Int64 code per (person, key) pair, so that bounding groups, sorts and runs on a single integer column.

Grouping by one integer column is about twice as fast in Polars as grouping
by a person column and key columns, and sorting the pairs by their code puts
each person's pairs next to each other, so per-person counts and choices are
runs of one array instead of window functions.

**Codes.** Each column gets integer codes ``0 <= c < size``, one per distinct value:

* an integer column whose values span fewer than :data:`SPAN` integers:
  ``value - min`` (no pass over the data beyond its minimum and maximum);
* a text column whose values are known beforehand (public keys: every row's key is one of them):
  the position of the value among them (a cast to a Polars ``Enum`` of those texts, exact, about a
  third of the time of the next case);
* any other text column: a keyed 64-bit hash of each value (Polars ``hash``, its seed
  fresh from the OS for each call), the distinct hashes numbered by securedp's C extension
  ``_hash_codes`` (a radix partition by the top 8 bits, then a hash table per partition small
  enough for the cache, codes in order of first appearance: 0.35-0.37 s for 10**7 shuffled ids,
  where the join with the scatter back to row order took 0.81-0.94 s) or, where it is not built,
  by a join on UInt64 (codes in no particular order), *checked*: every
  value must equal the value its code decodes to (one gather and one comparison), so two texts
  sharing a hash can never share a code.
  If they do (for distinct texts about ``n**2 / 2**65``, for ``n`` distinct values,
  with an unpredictable seed), the column is coded as the next case instead. These
  codes are in no particular order (a join on strings costs 2 to 3 times as much);
* any other column (sparse or huge integers): the position of the value among
  the column's sorted distinct values (a join).

The key of a row is coded by mixed radix over its key columns,
``(c1 * size2 + c2) * size3 + ...``; if that would reach ``2**63 /
size(person)``, the key tuples are coded by their position among their
distinct tuples ordered by code instead. The pair code is ``person * keys +
key``, where ``keys`` is the smallest power of two above every key code, so that
a pair's person and key are a shift and a mask of its code (NumPy's ``//`` and
``%`` took 1.4 and 3 times as long over 10**7 pairs). Codes only group rows
inside the engine: which rows bounding keeps is decided by digests of the
values (:mod:`securedp.bounding.digest`), never by codes, and the keys of a
result are put in the order of their values by :meth:`PairCodes.in_key_order`.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from securedp.reading.collect import collect

SPAN = 1 << 31
"""Integer columns spanning fewer values than this are coded by subtraction, the rest by ranking."""

PAIR = "_pair"
_LIMIT = 1 << 63
_RADIX_LIMIT = _LIMIT
"""Pairs are coded by mixed radix below this (tests lower it to exercise the coding by tuple rank)."""
_SAFE = 1 << 62  # integers this small subtract in Int64 without overflow


@dataclass(frozen=True)
class ColumnCode:
    """Codes ``0 .. size - 1`` of one column: ``value - offset``, or the position in ``values`` (its
    distinct values, sorted unless the column is text, see the module)."""

    column: str
    dtype: pl.DataType
    size: int
    offset: int | None
    values: pl.Series | None

    def decode(self, codes: np.ndarray) -> pl.Series:
        """The column's values of ``codes`` (an int64 array)."""
        if self.values is not None:
            return self.values.gather(codes)
        assert self.offset is not None
        codes_128 = pl.Series(self.column, codes, dtype=pl.Int64).cast(pl.Int128)
        shifted: pl.Series = codes_128 + pl.Series([self.offset], dtype=pl.Int128)
        decoded: pl.Series = shifted.cast(self.dtype)
        return decoded


@dataclass(frozen=True)
class PairCodes:
    """How a frame's (person, key) pairs were coded: ``pair = person_code * keys + key_code``, ``keys`` a
    power of two above every key code."""

    person: ColumnCode
    key_columns: list[ColumnCode]
    key_values: pl.DataFrame | None
    """The sorted distinct key tuples when keys are coded by position (else None: mixed radix)."""
    keys: int

    def person_codes(self, pairs: np.ndarray) -> np.ndarray:
        """The person code of each pair code (``pair // keys``, by a shift)."""
        shifted: np.ndarray = pairs >> (self.keys.bit_length() - 1)
        return shifted

    def key_codes(self, pairs: np.ndarray) -> np.ndarray:
        """The key code of each pair code (``pair % keys``, by a mask)."""
        masked: np.ndarray = pairs & (self.keys - 1)
        return masked

    def key_expr(self) -> pl.Expr:
        """The key code of the column :data:`PAIR` (``pair % keys``), named ``_key``."""
        return (pl.col(PAIR) & (self.keys - 1)).alias("_key")

    def persons(self, pairs: np.ndarray) -> pl.Series:
        """The person ids of pair codes."""
        return self.person.decode(self.person_codes(pairs))

    def key_frame(self, key_codes: np.ndarray) -> pl.DataFrame:
        """The key columns of key codes (:meth:`key_codes`)."""
        if self.key_values is not None:
            return self.key_values.select(pl.exclude("_tuple"))[key_codes]
        columns, rest = [], key_codes
        for code in reversed(self.key_columns):
            columns.append(code.decode(rest % code.size))
            rest = rest // code.size
        return pl.DataFrame(list(reversed(columns)))

    def pair_frame(self, pairs: np.ndarray) -> pl.DataFrame:
        """The person and key columns of pair codes."""
        persons = self.persons(pairs).to_frame()
        return pl.concat([persons, self.key_frame(self.key_codes(pairs))], how="horizontal") if self.key_columns \
            else persons

    def in_key_order(self, key_codes: np.ndarray, table: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
        """The key columns of ``key_codes`` (distinct) and ``table`` (one row per code, aligned), both
        reordered so that the keys are ascending (lexicographically over the key columns)."""
        frame = self.key_frame(key_codes)
        order = frame.with_row_index("_at").sort(frame.columns, maintain_order=True)["_at"]
        return frame[order], table[order]


def _column_code(frame: pl.DataFrame, column: str, known: pl.Series | None = None
                 ) -> tuple[pl.DataFrame, ColumnCode, pl.Expr]:
    """The column's code expression (on the returned frame) and how to decode codes; ``known``: values
    the column's values are among (public keys), or None."""
    dtype = frame.schema[column]
    name = f"_code_{column}"
    if dtype == pl.String and known is not None and frame.height and not frame.get_column(column).has_nulls():
        texts = known.drop_nulls().unique(maintain_order=True)
        codes = frame.get_column(column).cast(pl.Enum(texts)).to_physical().cast(pl.Int64)  # strict: never a guess
        return frame.with_columns(codes.alias(name)), ColumnCode(column, dtype, max(len(texts), 1), None, texts), \
            pl.col(name)
    if dtype.is_integer() and frame.height:
        low, high = frame.select(pl.col(column).min().alias("lo"), pl.col(column).max().alias("hi")).row(0)
        if high - low < SPAN:
            safe = low >= -_SAFE and high <= _SAFE
            code = (pl.col(column).cast(pl.Int64) - low if safe
                    else (pl.col(column).cast(pl.Int128) - low).cast(pl.Int64))
            return frame, ColumnCode(column, dtype, high - low + 1, low, None), code
    if dtype == pl.String and frame.height:
        hashed = _hashed_codes(frame.get_column(column), secrets.randbits(64))
        if hashed is not None:
            codes, values = hashed
            return frame.with_columns(codes.alias(name)), ColumnCode(column, dtype, len(values), None, values), \
                pl.col(name)
    values = frame.get_column(column).unique().sort()
    table = pl.DataFrame([values, pl.int_range(len(values), dtype=pl.Int64, eager=True).alias(name)])
    coded = frame.join(table, on=column, how="left")
    return coded, ColumnCode(column, dtype, max(len(values), 1), None, values), pl.col(name)


def keyed_hash(column: pl.Expr, seed: int) -> pl.Expr:
    """A 64-bit hash of each value, keyed by ``seed`` (Polars ``hash``; tests replace it to force collisions)."""
    return column.hash(seed)


def _extension() -> Any:
    """The C extension numbering hashes (:mod:`securedp.engines.polars._hash_codes`), or None where it was not
    built."""
    try:
        from securedp.engines.polars import _hash_codes
    except ImportError:  # pragma: no cover - depends on the installation
        return None
    return _hash_codes


_EXTENSION = _extension()


def dense_codes(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """A code ``0 .. d - 1`` of each ``uint64`` hash (equal hashes, equal codes; codes in order of first
    appearance) and the first row holding each code, by the C extension (a radix partition and small hash tables:
    0.35-0.37 s on 10**7 shuffled hashes, against 0.81-0.94 s for the join of :func:`_joined_codes`); None where
    it was not built."""
    if _EXTENSION is None:
        return None
    flat = np.require(hashes, np.uint64, ["C_CONTIGUOUS", "ALIGNED"])  # the extension refuses misaligned buffers
    codes, first = np.empty(flat.size, dtype=np.int64), np.empty(flat.size, dtype=np.int64)
    distinct = _EXTENSION.codes(flat, codes, first)
    return codes, first[:distinct]


def _joined_codes(hashes: pl.LazyFrame, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """What :func:`dense_codes` computes, by Polars: the distinct hashes numbered (in no particular order) and
    joined back."""
    hashes = hashes.with_row_index("_at")
    distinct = hashes.unique("_hash", keep="any").with_row_index("_code")  # "_at": a row holding each hash
    coded = hashes.join(distinct.select("_hash", "_code"), on="_hash", how="inner")  # rows in any order
    # One query plan: Polars computes ``distinct`` once for both results (a common subplan). Were it computed
    # twice, in two orders, the check of the caller would fail and it would rank instead: never a wrong code.
    joined, at = pl.collect_all([coded.select("_at", "_code"), distinct.select("_at")])
    positions = np.empty(rows, dtype=np.int64)
    positions[joined["_at"].to_numpy()] = joined["_code"].to_numpy()  # back in row order
    return positions, at.to_series().to_numpy().astype(np.int64)


def _hashed_codes(column: pl.Series, seed: int) -> tuple[pl.Series, pl.Series] | None:
    """Int64 codes of a text column by :func:`keyed_hash` and its distinct values in code order, or
    None if two distinct values share a hash (see the module)."""
    hashes = column.to_frame().lazy().select(keyed_hash(pl.col(column.name), seed).alias("_hash"))
    coded = dense_codes(collect(hashes, column.len()).to_series().to_numpy()) if _EXTENSION is not None else None
    positions, at = coded if coded is not None else _joined_codes(hashes, column.len())
    codes, values = pl.Series("_code", positions), column.gather(at)
    decodes = (pl.lit(values).gather(pl.col("_code")) == pl.col("_value")).all()
    if not collect(pl.DataFrame([column.alias("_value"), codes]).lazy().select(decodes), column.len()).item():
        return None
    return codes, values


def code_pairs(frame: pl.DataFrame, person: str, keys: Sequence[str], known: pl.DataFrame | None = None
               ) -> tuple[pl.DataFrame, pl.Expr, PairCodes]:
    """The Int64 expression :data:`PAIR` coding each row's (person, key) pair (see the module), on the returned
    frame (``frame``, with code columns joined for the columns coded by rank). ``known``: the public keys (a
    column per key column), when every row's key is one of them."""
    frame, person_code, person_expr = _column_code(frame, person)
    key_codes, exprs = [], []
    for column in keys:
        frame, code, expr = _column_code(frame, column, None if known is None else known.get_column(column))
        key_codes.append(code)
        exprs.append(expr)
    radix = int(np.prod([c.size for c in key_codes], dtype=object)) if key_codes else 1
    key_values = None
    key = pl.lit(0, pl.Int64)
    if _power_above(radix) * person_code.size < _RADIX_LIMIT:
        for code, expr in zip(key_codes, exprs, strict=True):
            key = key * code.size + expr
    else:  # many wide key columns: code the distinct tuples by their sorted position
        tuples = frame.select(*keys, *[e.alias(f"_k{i}") for i, e in enumerate(exprs)])
        order = [f"_k{i}" for i in range(len(exprs))]
        key_values = tuples.unique(order).sort(order).drop(order)  # in the order of the codes
        key_values = key_values.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("_tuple"))
        frame = frame.join(key_values, on=list(keys), how="left")
        key, radix = pl.col("_tuple"), max(key_values.height, 1)
        if _power_above(radix) * person_code.size >= _LIMIT:
            raise ValueError("too many distinct persons and keys to code their pairs in 63 bits")
    codes = PairCodes(person_code, key_codes, key_values, _power_above(radix))
    return frame, (person_expr * codes.keys + key).alias(PAIR), codes


def _power_above(radix: int) -> int:
    """The smallest power of two ``>= radix`` (key codes are ``0 .. radix - 1``)."""
    return 1 << max(radix - 1, 0).bit_length()
