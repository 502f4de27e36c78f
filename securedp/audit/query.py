"""Deprecated alias: the query of a release moved to :mod:`securedp.tables.query` (securedp 0.2), one type for a
table and for one column: this module's ``Query(statistic, column, epsilon, ...)`` is
:meth:`securedp.tables.query.Query.of_column`.

Every name still resolves here for one release, with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

from typing import Any

from securedp.deprecation import deprecated, moved_module
from securedp.tables import query as _moved
from securedp.tables.spec import STATISTICS as _STATISTICS


class _ColumnQuery:
    """``securedp.audit.query.Query`` as it was called: the query of one statistic of one column."""

    def __new__(cls, statistic: str, column: str, epsilon: Any, *args: Any, **fields: Any) -> Any:
        return _moved.Query.of_column(statistic, column, epsilon, *args, **fields)

    from_json = staticmethod(_moved.Query.from_json)


_RENAMED: dict[str, tuple[str, Any]] = {
    "Query": ("securedp.tables.query.Query.of_column", _ColumnQuery),
    "STATISTICS": ("securedp.tables.spec.STATISTICS.commands", _STATISTICS.commands),
    "NEEDS_BOUNDS": ("securedp.tables.spec.STATISTICS.taking('bounds', commands=True)",
                     frozenset(_STATISTICS.taking("bounds", commands=True))),
}
_moved_name = moved_module("securedp.audit.query", _moved)


def __getattr__(name: str) -> Any:
    if name in _RENAMED:
        new, value = _RENAMED[name]
        deprecated(f"securedp.audit.query.{name}", new)
        return value
    return _moved_name(name)
