"""Deprecated alias: securedp.tables.keys moved to :mod:`securedp.engines.keys` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import warnings
from typing import Any

from securedp.engines import keys as _moved


def __getattr__(name: str) -> Any:
    value = getattr(_moved, name)
    warnings.warn(f"securedp.tables.keys.{name} is deprecated: use securedp.engines.keys.{name}",
                  DeprecationWarning, stacklevel=2)
    return value
