"""Deprecated alias: the digests of the bounding rule moved to :mod:`securedp.bounding.digest` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import warnings
from typing import Any

from securedp.bounding import digest as _moved


def __getattr__(name: str) -> Any:
    value = getattr(_moved, name)
    warnings.warn(f"securedp.engines.digest.{name} is deprecated: use securedp.bounding.digest.{name}",
                  DeprecationWarning, stacklevel=2)
    return value
