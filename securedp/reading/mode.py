"""Who reads the errors: the data holder (default) or an analyst (an analyst-facing session).

The mode is context-local (a :class:`~contextvars.ContextVar`), set around a preparation by
:func:`analyst_facing_scope` (:meth:`securedp.Session._prepare`, the command's ``--analyst-facing``) and
read by every reader that must not raise on the data's values in that mode (:mod:`securedp.reading`,
:mod:`securedp.bounding.contributions`, :mod:`securedp.tables`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_ANALYST_FACING: ContextVar[bool] = ContextVar("securedp_analyst_facing", default=False)


def analyst_facing() -> bool:
    """Whether the current preparation runs for an analyst-facing session (no error may depend on the data)."""
    return _ANALYST_FACING.get()


@contextlib.contextmanager
def analyst_facing_scope(enabled: bool = True) -> Iterator[None]:
    """Run the enclosed preparation with data-dependent errors withheld (``enabled``) or shown."""
    token = _ANALYST_FACING.set(bool(enabled))
    try:
        yield
    finally:
        _ANALYST_FACING.reset(token)
