"""The one way securedp retires a name: it keeps working for one more release, with a warning naming its
replacement.

:func:`deprecated` warns (a :class:`DeprecationWarning` pointing at the caller's line); :func:`moved_module`
is the ``__getattr__`` of a module whose names moved, so that each of them still resolves, with that warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any


def deprecated(old: str, use: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated and will be removed in the next release; ``use`` says what replaces it.
    ``stacklevel`` 3 names the line that called the function calling this one."""
    warnings.warn(f"{old} is deprecated and will be removed in the next release: use {use}", DeprecationWarning,
                  stacklevel=stacklevel)


def moved_module(old: str, new: ModuleType) -> Callable[[str], Any]:
    """The module ``__getattr__`` of module ``old``, whose names moved to ``new``: ``old.name`` is ``new.name``,
    with a warning (an unknown name raises :class:`AttributeError` as ``new`` does)."""

    def __getattr__(name: str) -> Any:  # noqa: N807 - a module's __getattr__
        value = getattr(new, name)
        deprecated(f"{old}.{name}", f"{new.__name__}.{name}")
        return value

    return __getattr__
