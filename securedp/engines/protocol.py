"""What a table release needs of an engine: the protocol, the query's bounds and value columns.

An engine is built from the caller's table and the query's public inputs,
validates the data before anything is drawn or charged (columns, id and key
cells, every aggregated value under the ``missing`` policy), and then, given
the release's secret salt, returns exact per-key integers
(:class:`KeyAggregates`, keys sorted):

* :meth:`Engine.counts`: rows and distinct persons per key after bounding;
* :meth:`Engine.column`: the same plus sums (and sums of squares) of one
  value column's lattice units, bounded on that column's usable rows;
* :meth:`Engine.unit_counts`: each key's counts per lattice point (selections);
* :meth:`Engine.output`: the released rows as a table of the caller's kind.

Every engine keeps the same rows (the salted SHA-256 rule of :mod:`securedp.bounding`),
so for one salt their integers are identical; everything after step (1) is shared.
Each engine lives in its own folder (:mod:`securedp.engines.polars`,
:mod:`securedp.engines.spark`) and is chosen by :mod:`securedp.engines.registry`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

import polars as pl

from securedp.engines.polars.bounding import KeyAggregates as KeyAggregates  # the interchange types
from securedp.engines.polars.bounding import UnitCounts as UnitCounts

PERSON = "_securedp_person"
UNITS = "_units"


@dataclass(frozen=True)
class ColumnSpec:
    """A value column on its public lattice: ``step`` and the snapped bounds ``[lo_u, hi_u]``."""

    column: str
    step: Fraction
    lo_u: int
    hi_u: int
    squares: bool = False
    """Some aggregation of the column needs the sums of squared units (a variance)."""


class Engine(Protocol):
    """What a table release needs of an engine (see the module docstring)."""

    public: pl.DataFrame | None
    """The public keys in the types of the group columns (:meth:`~securedp.engines.keys.PublicKeys.typed`)."""

    def counts(self, salt: bytes) -> KeyAggregates: ...

    def column(self, index: int, salt: bytes, squares: bool) -> KeyAggregates: ...

    def unit_counts(self, index: int, salt: bytes) -> UnitCounts: ...

    def output(self, names: Sequence[str], rows: Sequence[Sequence[Any]],
               steps: Mapping[str, Fraction | None]) -> Any: ...


@dataclass(frozen=True)
class Bounds:
    """The per-person bounds and the grouping of one query."""

    group_by: list[str]
    max_groups: int
    max_rows: int
    analyst_facing: bool = False
    """Drop rows whose id or key is missing or blank instead of raising (no error depends on the data)."""
    drop_missing_keys: bool = False
    """Drop rows whose group key is missing or blank (``missing_keys="drop"``), in either mode."""
