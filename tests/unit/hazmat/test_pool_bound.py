"""Pools of pre-drawn scalar values stay within their documented memory cap."""

from __future__ import annotations

from fractions import Fraction

import securedp
from securedp import ChaChaSource
from securedp.hazmat import samplers
from securedp.hazmat.samplers.pool import POOL_BLOCK, POOL_CAP_BYTES, PoolRegistry, registry


def test_memory_stays_flat_when_drawing_at_many_scales():
    source = ChaChaSource(bytes([3]) * 32)
    for i in range(1, 1200):
        samplers.discrete_laplace(Fraction(i, 7), rng=source)
    pools = registry(source)
    assert pools.held_bytes <= POOL_CAP_BYTES
    assert len(pools) <= POOL_CAP_BYTES // (64 * POOL_BLOCK)
    assert len(pools) >= 200  # the cap is used, not a tiny cache


def test_eviction_is_least_recently_used():
    reg = PoolRegistry(cap_bytes=3 * POOL_BLOCK * 64)
    for key in "abc":
        reg.put(key, [0] * POOL_BLOCK)
    assert reg.take("a") is not None  # "a" is now the most recently used
    reg.put("d", [0] * POOL_BLOCK)
    assert reg.take("b") is None and reg.take("a") is not None and reg.take("d") is not None


def test_draws_after_eviction_keep_the_law():
    """Scalar draws while pools are constantly evicted still follow the exact law of P(X = 0)."""
    source = ChaChaSource(bytes([4]) * 32)
    source.pools = PoolRegistry(cap_bytes=POOL_BLOCK * 64)  # room for one pool: every switch evicts
    zeros = 0
    n = 6000
    for i in range(n):
        zeros += samplers.discrete_laplace(1, rng=source) == 0 if i % 2 else 0
        samplers.discrete_laplace(2, rng=source)
    # P(X = 0) = (1 - e^-1) / (1 + e^-1) = 0.46211...; 3000 draws; a 1e-6 binomial band.
    from scipy import stats

    p0 = 0.46211715726000974
    assert stats.binomtest(int(zeros), n // 2, p0).pvalue > 1e-6


def test_fork_clears_the_registry():
    source = securedp.SystemSource()
    samplers.discrete_laplace(5, rng=source)
    assert len(registry(source)) == 1
    source._forget()
    assert len(registry(source)) == 0
