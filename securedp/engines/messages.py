"""Deprecated alias: the bounding rule moved to :mod:`securedp.bounding.messages` (securedp 0.2).

It sits below both the statistics and the engines, so that neither imports the other. Every name
still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import warnings
from typing import Any

from securedp.bounding import messages as _moved


def __getattr__(name: str) -> Any:
    value = getattr(_moved, name)
    warnings.warn(f"securedp.engines.messages.{name} is deprecated: use securedp.bounding.messages.{name}",
                  DeprecationWarning, stacklevel=2)
    return value
