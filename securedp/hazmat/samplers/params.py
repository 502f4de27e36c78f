"""Shared argument handling for the samplers: ``size`` and per-parameter plan caches."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

import numpy as np

P = TypeVar("P")

_CACHE_LIMIT = 512


class PlanCache(Generic[P]):
    """Maps a raw parameter (as the caller wrote it) to the plan built for it.

    A repeated parameter never repays its set-up cost. The key includes the
    type, so ``1``, ``1.0`` and ``True`` (which hash alike) stay distinct;
    unhashable or unequal-to-itself parameters (NaN) are parsed every time,
    and parsing then raises the right error.
    """

    def __init__(self, build: Callable[..., P]) -> None:
        self._build = build
        self._plans: dict[Hashable, P] = {}

    def get(self, *raw: Any) -> P:
        key = tuple((type(r), r) for r in raw)
        try:
            return self._plans[key]
        except (KeyError, TypeError):
            pass
        plan = self._build(*raw)
        try:
            if len(self._plans) >= _CACHE_LIMIT:
                self._plans.clear()
            self._plans[key] = plan
        except TypeError:
            pass
        return plan


def check_size(size: Any) -> int | tuple[int, ...] | None:
    """Validate ``size``: ``None``, a non-negative int, or a tuple of them."""
    if size is None:
        return None
    if isinstance(size, (bool, np.bool_)):
        raise TypeError("size must be None, an int or a tuple of ints, not a bool")
    if isinstance(size, (int, np.integer)):
        if size < 0:
            raise ValueError(f"size must be >= 0, got {size}")
        return int(size)
    if isinstance(size, tuple) and all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in size):
        if any(s < 0 for s in size):
            raise ValueError(f"size must be non-negative, got {size}")
        return tuple(int(s) for s in size)
    raise TypeError(f"size must be None, an int or a tuple of ints, got {size!r}")


def count_of(size: int | tuple[int, ...]) -> int:
    """Number of values a checked ``size`` asks for."""
    return size if isinstance(size, int) else int(np.prod(size, dtype=object))


def shaped(values: np.ndarray, size: int | tuple[int, ...]) -> np.ndarray:
    """``values`` (flat) reshaped to ``size``."""
    return values.reshape(size if isinstance(size, tuple) else (size,))
