"""The first 64 bits of SHA-256 of many messages ``prefix || middle || tail``, by the CPU's SHA instructions.

A bounding pass orders each person's groups (or a pair's rows) by the digests of
:mod:`securedp.bounding.digest`; almost always the leading 64 bits decide. This module computes those
leading bits for messages made of a constant ``prefix`` (``hex(salt)``), one of a table of ``middles``
and one of a table of ``tails``, chosen per message by index, without building the messages as Polars
strings or writing their digests in hexadecimal, which cost polars-hash about 150 ns a message
(8.9 million messages: 2.05 s there, 0.55 s here, on 2 cores; ``docs/benchmarks.md``).

The work is done by the C extension ``securedp.bounding._sha256_heads`` (built when securedp is
installed, where a C compiler is found), with the x86 SHA extensions (SHA-NI). It is an *optional*
speed-up: where it was not built, or the CPU lacks the instructions, :func:`heads` returns ``None`` and
the caller computes the same digests with polars-hash or :mod:`hashlib`. The extension checks every
index and offset before it reads a byte, and is tested against :mod:`hashlib` on messages of every
length across the block boundaries (``tests/unit/bounding/test_heads.py``). A message's hashing time
depends on its length only, as for any SHA-256.
"""

from __future__ import annotations

import itertools
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa


def _extension() -> Any:
    """The C extension if it was built and this CPU has its instructions, else None."""
    try:
        from securedp.bounding import _sha256_heads
    except ImportError:  # pragma: no cover - depends on the installation
        return None
    return _sha256_heads if _sha256_heads.available() else None


_EXTENSION = _extension()

PARALLEL_FROM = 1 << 16
"""From this many messages on, the work is split over the machine's cores (the extension releases the GIL)."""


def available() -> bool:
    """Whether :func:`heads` computes (the extension is built and the CPU has the SHA extensions)."""
    return _EXTENSION is not None


def _table(texts: pl.Series) -> tuple[Any, np.ndarray]:
    """The UTF-8 bytes of ``texts`` (no nulls) as one buffer, and the ``len + 1`` int64 offsets of each text in it."""
    if texts.has_nulls():
        raise ValueError("a message part is missing")
    array = texts.cast(pl.String).to_arrow().cast(pa.large_string())  # to_arrow rechunks: one array
    _, offset_buffer, data = array.buffers()
    offsets = np.frombuffer(offset_buffer, dtype=np.int64)[array.offset:array.offset + len(array) + 1]
    return (memoryview(b"") if data is None else memoryview(data)), np.require(offsets, np.int64, ["C", "A"])


def heads(prefix: bytes, middles: pl.Series, middle_of: np.ndarray, tails: pl.Series,
          tail_of: np.ndarray) -> np.ndarray | None:
    """The first 64 bits (big-endian, ``uint64``) of SHA-256 of ``prefix || middles[middle_of[i]] ||
    tails[tail_of[i]]`` (UTF-8) for each ``i``, or ``None`` where the extension is not available.

    Raises ``IndexError`` if an index is outside its table, ``ValueError`` if the index arrays differ in length,
    ``TypeError`` if they are not integers.
    """
    if _EXTENSION is None:
        return None
    mid_of, end_of = (np.asarray(indices) for indices in (middle_of, tail_of))
    if any(indices.size and indices.dtype.kind not in "iu" for indices in (mid_of, end_of)):
        raise TypeError("the indices must be integers")  # a float index was truncated to an integer
    # native, aligned, contiguous int64 (the extension refuses anything else)
    mid_of, end_of = np.require(mid_of, np.int64, ["C", "A"]), np.require(end_of, np.int64, ["C", "A"])
    if mid_of.shape != end_of.shape or mid_of.ndim != 1:
        raise ValueError("give one middle and one tail index per message")
    mid_data, mid_offsets = _table(middles)
    tail_data, tail_offsets = _table(tails)
    out = np.empty(mid_of.size, dtype=np.uint64)

    def part(at: slice) -> None:
        _EXTENSION.heads(prefix, mid_data, mid_offsets, mid_of[at], tail_data, tail_offsets, end_of[at], out[at])

    workers = min(os.cpu_count() or 1, 8) if out.size >= PARALLEL_FROM else 1
    if workers == 1:
        part(slice(0, out.size))
        return out
    cuts = np.linspace(0, out.size, workers + 1).astype(int)
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(part, [slice(a, b) for a, b in itertools.pairwise(cuts)]))
    return out
