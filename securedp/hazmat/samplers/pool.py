"""Pools of pre-drawn values that serve scalar draws at the cost of a list pop.

A scalar call such as ``discrete_laplace(10)`` takes the next value from a
pool that belongs to the random source and to the sampler's parameters; the
pool is refilled with a vectorised batch of ``POOL_BLOCK`` draws when empty.
Refills happen every ``POOL_BLOCK`` calls whatever the values drawn, so they
tell an observer of running time nothing about the noise (the "offline noise"
mitigation of Jin et al., S&P 2022). The source empties its pools when its
own buffer must be forgotten (after ``fork()``), so a child process never
reuses its parent's noise.

**Bounded memory.** The pools of one source live in a :class:`PoolRegistry`,
a least-recently-used map capped at ``POOL_CAP_BYTES`` (16 MiB) of pre-drawn
values, each counted at ``VALUE_BYTES`` (an upper estimate of a list slot
plus a small Python int). When a refill would pass the cap, the pools used
least recently are dropped whole. Dropping pre-drawn values is harmless for
exactness: every value is an independent draw, and a discarded pool is simply
never served. A process drawing at thousands of scales therefore holds at
most ``POOL_CAP_BYTES // (VALUE_BYTES * POOL_BLOCK)`` pools (256). Which pool
is evicted depends only on the order of the calls, never on the values.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource, note_draw

POOL_BLOCK = 1024
"""Values drawn per refill."""
POOL_CAP_BYTES = 16 * 2**20
"""Most memory (estimated) the pools of one source may hold."""
VALUE_BYTES = 64
"""Estimated bytes per pooled value: a list slot and a Python int (values past 2**62 may take more)."""


class PoolRegistry:
    """The pools of one source: least-recently-used, at most ``cap_bytes`` of estimated memory."""

    def __init__(self, cap_bytes: int = POOL_CAP_BYTES) -> None:
        self.cap_values = max(POOL_BLOCK, cap_bytes // VALUE_BYTES)
        self._pools: OrderedDict[Any, list[Any]] = OrderedDict()
        self._values = 0  # values held at the last refill of each pool (an upper bound)
        self._sizes: dict[Any, int] = {}
        self._lock = threading.Lock()

    def take(self, key: Any) -> list[Any] | None:
        """The pool for ``key`` (marked most recently used), or ``None``."""
        with self._lock:
            pool = self._pools.get(key)
            if pool is not None:
                self._pools.move_to_end(key)
            return pool

    def put(self, key: Any, pool: list[Any]) -> None:
        """Install a freshly filled pool, evicting the least recently used past the cap."""
        with self._lock:
            self._values -= self._sizes.pop(key, 0)
            self._pools.pop(key, None)
            while self._pools and self._values + len(pool) > self.cap_values:
                old, _ = self._pools.popitem(last=False)
                self._values -= self._sizes.pop(old)
            self._pools[key] = pool
            self._sizes[key] = len(pool)
            self._values += len(pool)

    def clear(self) -> None:
        """Forget every pool (after ``fork()``)."""
        with self._lock:
            self._pools.clear()
            self._sizes.clear()
            self._values = 0

    @property
    def held_bytes(self) -> int:
        """Estimated memory held: values installed by refills times ``VALUE_BYTES``."""
        return self._values * VALUE_BYTES

    def __len__(self) -> int:
        return len(self._pools)


def registry(source: RandomSource) -> PoolRegistry:
    """The bounded pool registry of ``source`` (installed on first use)."""
    pools = source.pools
    if not isinstance(pools, PoolRegistry):
        with source._lock:
            if not isinstance(source.pools, PoolRegistry):
                source.pools = PoolRegistry()
            pools = source.pools
    assert isinstance(pools, PoolRegistry)
    return pools


def pooled(source: RandomSource, key: Any, refill: Callable[[int, RandomSource], np.ndarray]) -> Any:
    """The next pre-drawn value for ``key`` from ``source``'s pools, refilling when empty.

    Taking a value consumes randomness (:func:`~securedp.hazmat.bits.source.note_draw`) even when no
    byte is read now: the value was drawn earlier, and this release is the first to see it.
    """
    pools = registry(source)
    pool = pools.take(key)
    while True:
        if pool:
            try:
                value = pool.pop()
            except IndexError:  # emptied by another thread between the test and the pop
                pass
            else:
                note_draw()
                return value
        pool = refill(POOL_BLOCK, source).tolist()
        pool.reverse()
        pools.put(key, pool)
