"""The engines, by the data they accept: a new engine adds one entry here and its own folder.

:func:`engine_for` asks each engine of :data:`ENGINES` in order whether it accepts the caller's data
(Spark for a Spark DataFrame), and the in-memory Polars engine takes every other table and file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from securedp.engines.keys import PublicKeys
from securedp.engines.polars.engine import PolarsEngine
from securedp.engines.protocol import Bounds, ColumnSpec, Engine
from securedp.engines.spark.engine import SparkEngine
from securedp.engines.spark.functions import is_spark_frame

EngineKind = Callable[[Any, "str | None", Bounds, Sequence[ColumnSpec], "PublicKeys | None", str, Any], Engine]

ENGINES: list[tuple[str, Callable[[Any], bool], EngineKind]] = [
    ("spark", is_spark_frame, SparkEngine),
    ("polars", lambda _: True, PolarsEngine),
]
"""The engines, in the order they are asked: ``(name, accepts(data), engine class)``. A new engine adds
one entry (before the in-memory default, which accepts every table and file)."""


def check_engine(data: Any, columns: Sequence[ColumnSpec]) -> None:
    """Refuse, before the data is read, a query that the engine taking ``data`` does not compute (public: the
    kind of table and the query; an engine states it with a ``refuse(columns)`` static method)."""
    kind = next(kind for _, accepts, kind in ENGINES if accepts(data))
    refuse = getattr(kind, "refuse", None)
    if refuse is not None:
        refuse(columns)


def engine_for(data: Any, id_column: str | None, bounds: Bounds, columns: Sequence[ColumnSpec],
               public: PublicKeys | None, missing: str, fill: Any) -> Engine:
    """The first engine of :data:`ENGINES` that accepts ``data`` (Spark for a Spark DataFrame, else Polars)."""
    kind = next(kind for _, accepts, kind in ENGINES if accepts(data))
    return kind(data, id_column, bounds, columns, public, missing, fill)
