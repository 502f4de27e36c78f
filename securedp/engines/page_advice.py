"""NumPy's huge-page advice, switched off while an engine works on a whole table.

On Linux NumPy marks every array of 4 MiB or more ``madvise(MADV_HUGEPAGE)``.
Where ``/sys/kernel/mm/transparent_hugepage/defrag`` is ``madvise`` (the
default of most distributions) a page fault in such memory, when no huge
page is free, makes the kernel compact memory synchronously before it
returns, and the mark outlives the array (numpy/numpy#31590). A table's
bounding pass allocates dozens of arrays of ``10**7`` entries right after
Polars has freed as much: measured on 10**7-row tables, each NumPy pass took
0.02 to 0.2 s depending on that state, and whole tables of text ids took 0.5
to 0.9 s longer with the advice than without it (never measurably shorter;
``docs/benchmarks.md``). :func:`without_huge_page_advice` turns the advice off
for the duration of the call it wraps and restores the caller's setting after.

Only where memory comes from changes: no value, no choice of rows and no
result depends on it. The switch is NumPy's own
(``numpy._core.multiarray._set_madvise_hugepage``, the setting its
``NUMPY_MADVISE_HUGEPAGE`` environment variable chooses at start-up); where a
NumPy lacks it, this does nothing. Nested and concurrent calls share one
count, so the caller's setting comes back when the last of them returns.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])


def _numpy_switch() -> Callable[[bool], bool] | None:
    """NumPy's setter of the advice (it returns the previous setting), or None."""
    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            module = __import__(name, fromlist=["_set_madvise_hugepage"])
        except ImportError:
            continue
        setter = getattr(module, "_set_madvise_hugepage", None)
        if callable(setter):
            return setter  # type: ignore[no-any-return]
    return None


_SWITCH = _numpy_switch()
_lock = threading.Lock()
_active = 0
_saved = False


def _enter() -> None:
    global _active, _saved
    with _lock:
        if _active == 0 and _SWITCH is not None:
            _saved = bool(_SWITCH(False))
        _active += 1


def _leave() -> None:
    global _active
    with _lock:
        _active -= 1
        if _active == 0 and _SWITCH is not None:
            _SWITCH(_saved)


def without_huge_page_advice(function: _F) -> _F:
    """``function``, run with NumPy's huge-page advice off (see the module)."""

    @functools.wraps(function)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        _enter()
        try:
            return function(*args, **kwargs)
        finally:
            _leave()

    return wrapped  # type: ignore[return-value]
