"""Exact integer sums of clamped units, independent of order.

Units are integers, so their sum is exact and the same multiset in any order
gives the identical sum. ``int64`` arrays are summed in chunks small enough
that the worst case allowed by the public bound cannot overflow:
``chunk * bound <= 2**63 - 1``; the chunk totals are added as Python ints.
Object arrays (units beyond int64) are summed as Python ints.
"""

from __future__ import annotations

import numpy as np

from securedp.lattice.screen import INT64_MAX


def exact_sum(units: np.ndarray, bound: int) -> int:
    """``sum(units)`` exactly, given ``|u| <= bound`` for every element (``bound`` is public)."""
    if units.dtype == object or bound > INT64_MAX:
        return int(sum(int(u) for u in units))
    chunk = max(1, INT64_MAX // max(bound, 1))
    if units.size <= chunk:
        return int(units.sum(dtype=np.int64))
    return sum(int(units[i : i + chunk].sum(dtype=np.int64)) for i in range(0, units.size, chunk))


def exact_sum_of_squares(units: np.ndarray, bound: int) -> int:
    """``sum(u * u for u in units)`` exactly, given ``|u| <= bound``."""
    if units.dtype == object or bound * bound > INT64_MAX:
        return int(sum(int(u) * int(u) for u in units))
    return exact_sum(units * units, bound * bound)
