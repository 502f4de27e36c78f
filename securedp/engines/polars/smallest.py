"""Which rows or groups a person keeps: those whose salted SHA-256 digests are smallest (Polars).

The bounding pass of :mod:`securedp.engines.polars.bounding` hands this module the runs to choose in (a
person's pairs, a pair's rows), sorted; here each run's ``limit`` elements with the smallest digests are
found exactly: one sort of UInt64 keys (the run in the top bits, the digest's leading bits below), and the
full digests only when two different messages of a run share a key. The messages are those of
:mod:`securedp.bounding.digest` (each netstring field built once per distinct value).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import polars as pl

from securedp.bounding.digest import canonical_text, field, message_digests, message_heads
from securedp.bounding.heads import heads as cpu_heads
from securedp.bounding.messages import run_keys, run_starts, salt_text
from securedp.engines.polars.pair_codes import PAIR, PairCodes
from securedp.reading.collect import collect


def smallest_rows(rows: pl.DataFrame, salt: bytes, codes: PairCodes, units: list[str],
                   limit: int) -> tuple[pl.DataFrame, list[np.ndarray]]:
    """The rows sorted by pair (:data:`PAIR`, every pair with more than ``limit`` rows) and, for each
    column of ``units``, the mask of the ``limit`` rows of each pair whose row digests over the pair's
    person and key columns (decoded by ``codes``) and that column are smallest.

    The rows are sorted, and the fields of each pair's prefix written, once for all the columns; each
    column's digests are its own (its units end the message)."""
    rows = rows.sort(PAIR)
    pairs = rows[PAIR].to_numpy()
    starts = run_starts(pairs)
    run = np.repeat(np.arange(starts.size), np.diff(np.append(starts, rows.height)))
    prefixes = _field_texts(codes.pair_frame(pairs[starts]))
    masks = []
    for column in units:
        values = rows.get_column(column)
        distinct, where = _distinct(values.cast(pl.Int64).to_numpy())
        heads, digests = _heads(salt, prefixes, run, _field_texts(pl.Series(values.name, distinct).cast(values.dtype)),
                                where)
        masks.append(smallest_in_runs(run, starts, heads, digests, limit, where))
    return rows, masks


def _distinct(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values covering ``values`` and each value's index among them: a range when the span is small
    (no sort), else the sorted distinct values."""
    if values.size and int(values.max()) - int(values.min()) < max(2 * values.size, 1 << 16):
        low = int(values.min())
        return np.arange(low, int(values.max()) + 1, dtype=np.int64), values - low
    return np.unique(values, return_inverse=True)


def _heads(salt: bytes, prefixes: pl.Series, prefix_of: np.ndarray, tails: pl.Series,
           tail_of: np.ndarray) -> tuple[pl.Series, Callable[[], pl.Series]]:
    """Digest heads of the messages ``hex(salt) || prefixes[prefix_of[i]] || tails[tail_of[i]]``
    (netstring fields built once per distinct value), and a function giving their full hex digests.

    The heads come from the CPU's SHA instructions (:mod:`securedp.bounding.heads`) where securedp's C
    extension is built, else from polars-hash, the messages gathered inside one streaming query so that
    each morsel's are built in parallel: the same bytes, so the same heads."""
    def messages() -> tuple[pl.DataFrame, pl.Expr]:
        """The indices as a frame and the message as a Polars expression over it (for polars-hash)."""
        text = pl.concat_str([pl.lit(salt_text(salt)), pl.lit(prefixes).gather(pl.col("_prefix")),
                              pl.lit(tails).gather(pl.col("_tail"))])
        return pl.DataFrame({"_prefix": prefix_of, "_tail": tail_of}), text

    by_cpu = cpu_heads(salt_text(salt).encode("utf-8"), prefixes, prefix_of, tails, tail_of)
    leading = message_heads(*messages()) if by_cpu is None else pl.Series("_head", by_cpu)
    return leading, lambda: message_digests(*messages())


def _field_texts(values: pl.Series | pl.DataFrame) -> pl.Series:
    """``field(v1) || field(v2) || ...`` of each row of the given column(s) (the netstrings of
    :mod:`securedp.bounding.digest`), as one String Series."""
    frame = values.to_frame() if isinstance(values, pl.Series) else values
    parts = [part for c in frame.columns for part in field(canonical_text(c, frame.schema[c]))]
    return collect(frame.lazy().select(pl.concat_str(parts).alias("_fields")), frame.height).to_series()


def group_heads(codes: PairCodes, pairs: np.ndarray, key_codes: np.ndarray, run: np.ndarray, starts: np.ndarray,
                 salt: bytes) -> tuple[pl.Series, Callable[[], pl.Series]]:
    """The digest heads of the group messages of coded ``pairs`` (sorted; ``key_codes`` their
    ``pair % keys``; ``run[i]`` the index of pair ``i``'s person among ``starts``; at least one key
    column), and a function giving their full hex digests: ``hex(salt) || field(person) || field(key
    columns)``, exactly :func:`message`'s."""
    distinct, where = _distinct(key_codes)
    return _heads(salt, _field_texts(codes.persons(pairs[starts])), run,
                  _field_texts(codes.key_frame(distinct)), where)


def smallest_in_runs(run: np.ndarray, starts: np.ndarray, heads: pl.Series, digests: Callable[[], pl.Series],
                      limit: int, tails: np.ndarray) -> np.ndarray:
    """Mask of the ``limit`` elements of each run whose digests are smallest; ``run`` (``0 .. R - 1``)
    is sorted, run ``r`` starts at ``starts[r]`` and has more than ``limit`` elements; ``tails[i]``
    identifies the rest of element ``i``'s message (two elements of one run with equal tails have one
    message, hence one digest).

    One UInt64 key per element, the run index in the top bits and the digest's leading bits
    (``heads``) below, so sorting the keys sorts each run by digest in place; an element is kept if
    its key is at most its run's ``limit``-th smallest. Equal keys of equal messages (a person's
    rows with equal units) are interchangeable: the first ``limit`` of the sorted run are kept, ties
    by position (every aggregate is the same whichever is kept). Only if two *different* messages of
    one run share a key does the order come from the full digests (``digests()``), so the choice is exact.
    """
    key = run_keys(run, heads.to_numpy())
    ordered = pl.Series(key).sort().to_numpy()  # Polars sorts on every core: 4x NumPy's time here
    sizes = np.diff(np.append(starts, run.size))
    if np.any(ordered[1:] == ordered[:-1]):
        order = np.argsort(key, kind="stable")
        keys, rest = key[order], tails[order]
        tied = keys[1:] == keys[:-1]
        if not np.any(tied & (rest[1:] != rest[:-1])):  # only equal messages tie: rank within the run
            kept_sorted = np.arange(run.size) - np.repeat(starts, sizes) < limit  # runs keep their blocks
            kept_equal: np.ndarray = np.empty(run.size, dtype=bool)
            kept_equal[order] = kept_sorted
            return kept_equal
        frame = pl.DataFrame({"_run": run, "_digest": digests()}).with_row_index("_at")
        key = frame.sort(["_run", "_digest"])["_at"].to_numpy().argsort().astype(np.uint64)
        ordered = np.arange(run.size, dtype=np.uint64)
    kept: np.ndarray = key <= np.repeat(ordered[starts + limit - 1], sizes)
    return kept
