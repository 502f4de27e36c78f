"""A per-person bound (``max_contributions``, ``max_groups``, ``max_rows``), read once for every release."""

from __future__ import annotations

from typing import Any

import numpy as np

from securedp.hazmat.exact import bounds
from securedp.hazmat.exact.rational import to_int


def positive_count(value: Any, name: str) -> int:
    """A per-person bound (``max_contributions``, ``max_groups``, ``max_rows``) as an int >= 1."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, not a bool")
    m = to_int(value, name)
    if m < 1:
        raise ValueError(f"{name} must be >= 1, got {m}")
    return bounds.count(m, name)
