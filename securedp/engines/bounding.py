"""Deprecated alias: securedp.engines.bounding moved to :mod:`securedp.engines.polars.bounding` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import warnings
from typing import Any

from securedp.engines.polars import bounding as _moved


def __getattr__(name: str) -> Any:
    value = getattr(_moved, name)
    warnings.warn(f"securedp.engines.bounding.{name} is deprecated: use securedp.engines.polars.bounding.{name}",
                  DeprecationWarning, stacklevel=2)
    return value
