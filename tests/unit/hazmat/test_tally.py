"""The lane counter of the selection samplers' set-up (:mod:`securedp.hazmat.samplers.tally`).

Its counts must equal ``np.bincount``'s exactly, for every size (16-bit and wide indexes, 8 lanes down
to one), with and without weights, and each block's counts must add up to the whole.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from securedp.hazmat.samplers.envelope import BLOCK
from securedp.hazmat.samplers.tally import LANES, PER_BLOCK_LIMIT, Tally


def _tally(values: np.ndarray, size: int, weights: np.ndarray | None) -> Tally:
    tally = Tally(size, weighted=weights is not None)
    for start in range(0, len(values), BLOCK):
        tally.add(values[start:start + BLOCK], None if weights is None else weights[start:start + BLOCK])
    return tally


@settings(max_examples=60, deadline=None)
@given(size=st.sampled_from([1, 2, 129, 4096, 8193, 20000, 65536, 65537]), n=st.integers(0, 3 * BLOCK + 5),
       weighted=st.booleans(), tied=st.booleans(), seed=st.integers(0, 2**32 - 1),
       dtype=st.sampled_from([np.uint8, np.int32, np.int64]))
def test_counts_equal_bincount(size: int, n: int, weighted: bool, tied: bool, seed: int, dtype: type) -> None:
    if dtype is np.uint8 and size > 256:
        size = 256
    rng = np.random.default_rng(seed)  # test data only
    values = (np.full(n, size - 1) if tied else rng.integers(0, size, n)).astype(dtype)
    weights = rng.integers(0, 2**20, n).astype(np.float64) if weighted else None
    tally = _tally(values, size, weights)
    expected = np.bincount(values.astype(np.intp), weights, minlength=size).astype(np.int64)
    assert tally.counts() == expected.tolist()
    if tally.per_block is not None:
        assert len(tally.per_block) == -(-n // BLOCK)
        assert (sum(tally.per_block, np.zeros(size)) == expected).all()


@pytest.mark.parametrize(("size", "lanes", "per_block"), [
    (1, LANES, True), (129, LANES, True), (PER_BLOCK_LIMIT, LANES, True), (PER_BLOCK_LIMIT + 1, LANES, False),
    (8192, LANES, False), (8193, 7, False), (1 << 15, 2, False), (1 << 16, 1, False), ((1 << 16) + 1, 1, False)])
def test_lanes_and_block_counts_follow_the_size_only(size: int, lanes: int, per_block: bool) -> None:
    tally = Tally(size)
    assert tally.lanes == lanes and (tally.per_block is not None) == per_block


def test_absent_entries_far_below_the_smallest_gap_count_nothing_and_are_never_drawn() -> None:
    """An entry with count 0 may have any gap, below ``-2**31`` too: its slot is clipped in int64 before it is
    written as int32 (a wrapped slot would have fallen outside the tally)."""
    from fractions import Fraction

    from securedp import ChaChaSource
    from securedp.hazmat.samplers.categorical import ExpCategorical

    gaps = np.array([-(2**32 - 30000), 3, 0, -(2**40), 7, 2**40], dtype=np.int64)  # -(2**32 - 30000) wraps to 30000
    counts = np.array([0, 2, 1, 0, 1, 3])
    plan = ExpCategorical(gaps, Fraction(1, 3), counts)
    assert plan.slot_of[0] == plan.slot_of[3] == -1
    source = ChaChaSource(bytes(32))
    assert {plan.draw(source)[0] for _ in range(200)} <= {1, 2, 4, 5}
