"""Row positions come from one shared, read-only array up to 2**24 rows (a fresh ``np.arange`` of 10**6
positions took 0.25 ms of a 2 ms sum), and are fresh beyond."""

from __future__ import annotations

import numpy as np
import pytest

from securedp.engines import frames
from securedp.engines.frames import row_positions


@pytest.mark.parametrize("height", [0, 1, 7, 1000, 10**5 + 3])
def test_positions_are_the_range_read_only_and_shared(height: int) -> None:
    positions = row_positions(height)
    assert positions.dtype == np.uint32 and np.array_equal(positions, np.arange(height))
    assert not positions.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        positions[:1] = 5
    if height:
        assert np.shares_memory(positions, row_positions(height))


def test_a_larger_table_grows_the_shared_array_and_an_earlier_view_stays_valid(monkeypatch: pytest.MonkeyPatch
                                                                                ) -> None:
    monkeypatch.setattr(frames, "_shared_positions", np.arange(0, dtype=np.uint32)[:0])
    small = row_positions(10)
    large = row_positions(1000)
    assert np.array_equal(small, np.arange(10)) and np.array_equal(large, np.arange(1000))
    assert len(frames._shared_positions) >= 1000


def test_beyond_the_limit_positions_are_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frames, "_SHARED_POSITIONS_LIMIT", 100)
    positions = row_positions(101)
    assert positions.flags.writeable and np.array_equal(positions, np.arange(101))
