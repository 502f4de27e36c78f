"""Counts of small non-negative integers, in a time that does not follow how often each one repeats.

A selection sampler counts its entries per group (:mod:`securedp.hazmat.samplers.categorical`):
every entry's slot or envelope exponent, ``0 <= v < size``. ``np.bincount`` adds one to
``count[v]`` entry after entry, and when most entries share a value (the far slot, tied scores)
each increment waits for the previous one: 10**5 equal values took 2.5 times as long as 10**5
spread ones, so the set-up time told how the scores were spread.

:class:`Tally` spreads consecutive entries over ``lanes`` counters per value (entry ``i`` adds to
counter ``v * lanes + i % lanes``), so no increment waits for the one before whatever the values,
and sums the lanes at the end. It keeps each block's counts, so that a point of a group is looked
for in one block instead of all of them. The counts are exact: integers in int64, and weights
(integers) summed in float64 while every partial sum stays below ``2**53``, which the caller checks.
"""

from __future__ import annotations

import threading

import numpy as np

from securedp.hazmat.samplers.envelope import BLOCK

LANES = 8
"""Counters per value while ``size * LANES <= 2**16`` (8 was as fast as 16, and 2.5 times faster than 1
on equal values); fewer for more values, down to one."""

_LANE_OF = np.arange(BLOCK, dtype=np.intp) % LANES
"""Each entry's lane."""

_BUFFERS = threading.local()
"""Each thread's index buffer (``BLOCK`` intp values, 256 KB), made once and reused: ``np.bincount`` takes an
intp index without copying it, and a buffer made afresh per block or per call was served from freshly mapped
pages (one process in three mapped and unmapped such a copy at every call: its set-up took 1.5 times as
long), where a reused one is not."""


def _index_buffer() -> np.ndarray:
    buffer: np.ndarray | None = getattr(_BUFFERS, "index", None)
    if buffer is None:
        buffer = _BUFFERS.index = np.empty(BLOCK, dtype=np.intp)
    return buffer

PER_BLOCK_LIMIT = 1 << 12
"""Tallies of at most this many values keep each block's counts (a few KB a block)."""


class Tally:
    """Running counts (or sums of weights) of the integers ``0 <= v < size``, added by blocks of
    :data:`~securedp.hazmat.samplers.envelope.BLOCK` values (the last one may be shorter)."""

    def __init__(self, size: int, weighted: bool = False) -> None:
        self.size = size
        self.lanes = max(1, min(LANES, (1 << 16) // size))
        self._sums = np.zeros(size * self.lanes, dtype=np.float64 if weighted else np.int64)
        self._lane_of = _LANE_OF if self.lanes == LANES else _LANE_OF % self.lanes
        self.per_block: list[np.ndarray] | None = [] if size <= PER_BLOCK_LIMIT else None
        """Each block's counts of every value (``None`` for a large ``size``)."""

    def add(self, values: np.ndarray, weights: np.ndarray | None = None) -> None:
        """Count the next block of integers ``values`` (each in ``[0, size)``), or add their ``weights`` (an int64,
        float64 or object array of integers: an object array, from a range wider than int64, is cast to int64,
        exactly, since its sum is below ``2**53``; ``np.bincount`` refuses object weights)."""
        if weights is not None and weights.dtype == object:
            weights = weights.astype(np.int64)
        index = _index_buffer()[:len(values)]
        np.multiply(values, self.lanes, out=index, dtype=np.intp, casting="unsafe")  # in intp: exact, any dtype
        index += self._lane_of[:len(values)]
        block: np.ndarray = np.bincount(index, weights, minlength=len(self._sums))
        self._sums += block
        if self.per_block is not None:
            self.per_block.append(block.reshape(self.size, self.lanes).sum(axis=1))

    def add_sums(self, sums: np.ndarray) -> None:
        """Add a block already counted: ``sums[v]``, the block's count (or sum of weights) of each value ``v`` (int64,
        from a pass that spread its counters as :meth:`add` does: the envelope's C kernel)."""
        self._sums.reshape(self.size, self.lanes)[:, 0] += sums
        if self.per_block is not None:
            self.per_block.append(sums)

    def counts(self) -> list[int]:
        """The count (or the sum of weights) of every value ``0 .. size-1``."""
        counts: list[int] = self._sums.reshape(self.size, self.lanes).sum(axis=1).astype(np.int64).tolist()
        return counts
