"""The engines, by the data they accept: a new engine adds one entry here and its own folder.

:func:`engine_for` asks each engine of :data:`ENGINES` in order whether it accepts the caller's data
(Spark for a Spark DataFrame), and the in-memory Polars engine takes every other table and file. The
command's ``--engine`` choices are the entries' names, and each entry says how the command hands it a file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from securedp.engines.keys import PublicKeys
from securedp.engines.polars.pieces import memory_engine
from securedp.engines.protocol import Bounds, ColumnSpec, Engine
from securedp.engines.spark.engine import SparkEngine
from securedp.engines.spark.functions import is_spark_frame
from securedp.engines.spark.functions import read_file as spark_file
from securedp.reading.files import TableFile

EngineKind = Callable[[Any, "str | None", Bounds, Sequence[ColumnSpec], "PublicKeys | None", str, Any], Engine]


@dataclass(frozen=True)
class EngineEntry:
    """One engine: its name (the command's ``--engine``), which data it accepts, its class, and how the command
    opens a file for it (``open_file(path, delimiter, encoding)``)."""

    name: str
    accepts: Callable[[Any], bool]
    kind: EngineKind
    open_file: Callable[[str, str, str], Any]


ENGINES: tuple[EngineEntry, ...] = (
    EngineEntry("spark", is_spark_frame, SparkEngine, spark_file),
    EngineEntry("memory", lambda _: True, memory_engine, lambda path, delimiter, encoding: TableFile(
        path, delimiter=delimiter, encoding=encoding)),
)
"""The engines, in the order they are asked. A new engine adds one entry (before the in-memory default,
which accepts every table and file)."""

DEFAULT = "memory"
"""The command's engine when ``--engine`` is not given."""


def engine_names() -> list[str]:
    """The engines' names, the default first: the command's ``--engine`` choices."""
    return sorted((entry.name for entry in ENGINES), key=lambda name: name != DEFAULT)


def engine_named(name: str) -> EngineEntry:
    """The engine called ``name`` (one of :func:`engine_names`)."""
    return next(entry for entry in ENGINES if entry.name == name)


def check_engine(data: Any, columns: Sequence[ColumnSpec]) -> None:
    """Refuse, before the data is read, a query that the engine taking ``data`` does not compute (public: the
    kind of table and the query; an engine states it with a ``refuse(columns)`` static method)."""
    kind = next(entry.kind for entry in ENGINES if entry.accepts(data))
    refuse = getattr(kind, "refuse", None)
    if refuse is not None:
        refuse(columns)


def engine_for(data: Any, id_column: str | None, bounds: Bounds, columns: Sequence[ColumnSpec],
               public: PublicKeys | None, missing: str, fill: Any) -> Engine:
    """The first engine of :data:`ENGINES` that accepts ``data`` (Spark for a Spark DataFrame, else Polars)."""
    kind = next(entry.kind for entry in ENGINES if entry.accepts(data))
    return kind(data, id_column, bounds, columns, public, missing, fill)
