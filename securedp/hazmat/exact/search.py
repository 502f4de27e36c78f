"""The least integer at which a monotone predicate holds: an exponential search, then a bisection.

:func:`least_holding` is the one search of the project's exact planners (the Gaussian threshold of
partition selection, the budget and contribution planners): each predicate is an exact check (a
proven tail bound, a stated half-width), so the integer it returns is proven to hold and the one
before it proven not to.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["least_holding"]


def least_holding(holds: Callable[[int], bool], first: int, limit: int | None = None) -> int | None:
    """The least ``n`` in ``first .. limit`` (no upper end when ``limit`` is None) with ``holds(n)``.

    ``holds`` must be monotone on that range (false, then true from some ``n`` on). Returns ``None``
    when ``holds(limit)`` is false. ``holds`` is evaluated ``O(log(n - first + 1))`` times: at
    ``first, first + 1, first + 3, first + 7, ...`` (capped at ``limit``) until it holds, then by
    bisection between the last point that failed and the first that held. When it returns ``n > first``,
    ``holds(n - 1)`` was evaluated and is false.
    """
    if limit is not None and limit < first:
        return None
    low, high = first - 1, first  # invariant: holds(low) is false (or low = first - 1); holds(high) is unknown
    while not holds(high):
        if limit is not None and high >= limit:
            return None
        low, high = high, 2 * high - first + 1
        if limit is not None:
            high = min(high, limit)
    while high - low > 1:  # invariant: holds(high), and low = first - 1 or not holds(low)
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle
    return high
