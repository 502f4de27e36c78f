"""Pools of pre-drawn values that serve scalar draws at the cost of a list pop.

A scalar call such as ``discrete_laplace(10)`` takes the next value from a
pool that belongs to the random source and to the sampler's parameters; the
pool is refilled with a vectorised batch of ``POOL_BLOCK`` draws when empty.
Refills happen every ``POOL_BLOCK`` calls whatever the values drawn, so they
tell an observer of running time nothing about the noise (the "offline noise"
mitigation of Jin et al., S&P 2022). The source empties its pools when its
own buffer must be forgotten (after ``fork()``), so a child process never
reuses its parent's noise.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from securedp.hazmat.bits.source import RandomSource

POOL_BLOCK = 1024


def pooled(source: RandomSource, key: Any, refill: Callable[[int, RandomSource], np.ndarray]) -> Any:
    """The next pre-drawn value for ``key`` from ``source``'s pools, refilling when empty."""
    pool = source.pools.get(key)
    while True:
        if pool:
            try:
                return pool.pop()
            except IndexError:  # emptied by another thread between the test and the pop
                pass
        pool = refill(POOL_BLOCK, source).tolist()
        pool.reverse()
        source.pools[key] = pool
