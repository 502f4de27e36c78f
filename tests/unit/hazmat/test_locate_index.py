"""The selection sampler's location index names the same entry as a full cumulative count.

A plan locates point ``p`` of group ``G`` by one cumulative count over every entry on its first
draw and through a :class:`LocateIndex` (built on the second draw) afterwards; seeded outputs
depend on the two agreeing for every group and every point, with and without counts.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from securedp import ChaChaSource
from securedp.hazmat.samplers.categorical import ExpCategorical, LocateIndex
from securedp.hazmat.samplers.envelope import FloatGaps


def _cases() -> list[tuple[np.ndarray | FloatGaps, Fraction, np.ndarray | None]]:
    rng = np.random.default_rng(5)  # test data only
    return [
        (rng.integers(0, 40, 300), Fraction(1, 2), None),  # slots
        (rng.integers(0, 40, 300), Fraction(1, 2), rng.integers(0, 4, 300)),  # slots with counts (some 0)
        (rng.integers(0, 10**9, 300), Fraction(1, 10**5), None),  # exponent groups
        (rng.integers(0, 10**9, 300), Fraction(1, 10**5), rng.integers(0, 3, 300)),
        (np.array([0, 2**300, 5, 2**70], dtype=object), Fraction(1, 2**64), np.array([1, 2**80, 0, 3], dtype=object)),
        (FloatGaps(rng.normal(size=200)), Fraction(7, 3), None),
    ]


@pytest.mark.parametrize("case", range(6))
def test_index_agrees_with_the_cumulative_count_everywhere(case):
    gaps, rate, counts = _cases()[case]
    plan = ExpCategorical(gaps, rate, counts)
    counts = plan.counts  # the points of each entry: the caller's counts, or the tight envelope's (exponent groups)
    index = LocateIndex(plan.slot_of, plan.counts, len(plan.ends))
    for group in range(len(plan.ends)):
        members = plan.slot_of == group
        points = int(members.sum()) if counts is None else int(sum(int(c) for c in counts[members]))
        for position in {0, points // 3, points // 2, points - 1} if points else ():
            expected = plan._locate(group, position)
            assert index.locate(group, position) == expected
            i, j = expected
            assert plan.slot_of[i] == group and 0 <= j < (1 if counts is None else counts[i])


def test_index_is_built_on_the_second_draw_and_draws_are_unchanged():
    gaps = np.arange(2000, dtype=np.int64) % 17
    source_a, source_b = ChaChaSource(bytes([3]) * 32), ChaChaSource(bytes([3]) * 32)
    reused = ExpCategorical(gaps, Fraction(1, 3))
    draws = [reused.draw(source_a) for _ in range(50)]
    assert reused._index is not None
    fresh = [ExpCategorical(gaps, Fraction(1, 3)).draw(source_b) for _ in range(50)]
    assert draws == fresh
