"""What a missing cell is, defined once for every reader of ids, keys and values.

A cell is **missing** when it is ``None``, pandas ``NA`` or ``NaT``, a float NaN (any width) or a
``Decimal`` NaN; it is **blank** when it is missing or a string of whitespace only. Neither is ever an
id or a key: a missing or blank id would merge every row without an id into one person.
"""

from __future__ import annotations

import decimal
from typing import Any

import numpy as np

_MISSING_TYPE_NAMES = frozenset({"NAType", "NaTType"})


def is_missing(value: Any) -> bool:
    """Whether ``value`` is ``None``, pandas ``NA``/``NaT``, a float NaN or a ``Decimal`` NaN."""
    if value is None or type(value).__name__ in _MISSING_TYPE_NAMES:
        return True
    if isinstance(value, (float, np.floating)):
        return bool(value != value)
    return isinstance(value, decimal.Decimal) and value.is_nan()


def is_blank(value: Any) -> bool:
    """Whether ``value`` is missing or a string of whitespace only."""
    return is_missing(value) or (isinstance(value, str) and not value.strip())
