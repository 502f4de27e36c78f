"""Deprecated alias: securedp.tables.engines moved to :mod:`securedp.engines.registry` (securedp 0.2).

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import warnings
from typing import Any

from securedp.engines import registry as _moved


def __getattr__(name: str) -> Any:
    value = getattr(_moved, name)
    warnings.warn(f"securedp.tables.engines.{name} is deprecated: use securedp.engines.registry.{name}",
                  DeprecationWarning, stacklevel=2)
    return value
