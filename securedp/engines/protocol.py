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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Protocol

from securedp.lattice import screen_units
from securedp.lattice.bins import Categories, Derivation
from securedp.reading.columns import refuse_unordered

if TYPE_CHECKING:  # the interchange types name the frames engines hand over; no engine or frame library runs here
    import numpy as np
    import polars as pl

RESERVED = "_securedp_"
"""The prefix of the engines' own column names; a table's columns may not start with it
(:func:`refuse_reserved`)."""
PERSON = "_securedp_person"
KEY = "_securedp_key"
"""Group column ``i`` is named ``KEY + str(i)`` inside an engine (:func:`key_names`)."""
UNITS = "_units"


def key_names(group_by: Sequence[str]) -> dict[str, str]:
    """Each group column's name inside an engine: no column an engine adds (``_units``, ``_n``, ``_rows`` ...)
    can then share a name with one of the caller's."""
    return {c: f"{KEY}{i}" for i, c in enumerate(group_by)}


def group_columns(group_by: Any) -> list[Any]:
    """The group columns of ``group_by``: one name, or a sequence of names in the order the release's key columns
    take (a set, which has no order, is refused)."""
    if isinstance(group_by, str):
        return [group_by]
    refuse_unordered(group_by, "group_by")
    return list(group_by)


def refuse_reserved(columns: Sequence[Any]) -> None:
    """Refuse column names that start with :data:`RESERVED`, from the names alone (before any data is read)."""
    reserved = [c for c in dict.fromkeys(columns) if isinstance(c, str) and c.startswith(RESERVED)]
    if reserved:
        raise ValueError(f"column name(s) {reserved} start with {RESERVED!r}, the prefix of securedp's own columns: "
                         "rename them")


@dataclass(frozen=True)
class KeyAggregates:
    """Exact aggregates of the bounded rows, one entry per key, keys sorted.

    ``keys`` holds the key columns (no columns, and one entry in each list,
    when the table has no group-by). ``total`` and ``total_squares`` are
    ``None`` when no units column was given or squares were not asked for.
    """

    keys: pl.DataFrame
    rows: list[int]
    persons: list[int]
    total: list[int] | None
    total_squares: list[int] | None


@dataclass(frozen=True)
class UnitCounts:
    """Per key (sorted, as in :class:`KeyAggregates`), the distinct units of its kept rows, ascending,
    and how many kept rows hold each: what an exponential mechanism over the lattice needs."""

    keys: pl.DataFrame
    points: Sequence[Sequence[int] | np.ndarray]
    """Per key, its distinct units: a list, or an int64 or object array."""
    counts: Sequence[Sequence[int] | np.ndarray]


@dataclass(frozen=True)
class ColumnSpec:
    """A value column on its public lattice: ``step`` and the snapped bounds ``[lo_u, hi_u]``."""

    column: str
    step: Fraction
    lo_u: int
    hi_u: int
    squares: bool = False
    """Some aggregation of the column needs the sums of squared units (a variance)."""
    whole: bool = False
    """The column is declared ``"int"`` (``schema=``): a record holding a fraction is unusable."""
    derivation: Derivation | None = None
    """A histogram's rule turning each record into the index of its category or bin (its canonical integer),
    or ``None``: the record's lattice units."""

    @property
    def labels(self) -> bool:
        """The records are compared with declared labels (a histogram's categories): read as they are, text as
        text (:func:`securedp.engines.frames.read_table`)."""
        return isinstance(self.derivation, Categories)

    def keeps_every_row(self, missing: str) -> bool:
        """Whether reading the column keeps every row whatever the data (so that every such column of a
        table keeps the same rows): decided by public choices only, ``missing`` (``"drop"`` in an
        analyst-facing session, where ``"raise"`` acts as it) and a histogram's ``unknown`` policy."""
        if missing == "drop":
            return False
        unknown = getattr(self.derivation, "unknown", "raise")
        return bool(unknown == "raise")

    def units(self, records: Any, missing: str, fill: Any, refuse_rows: bool,
              where: Callable[[int], str] | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """``(canonical integer of each kept record, mask of the records kept or None)``: the lattice screen
        (:func:`securedp.lattice.screen_units`), or the histogram's :attr:`derivation`. Every engine reads a
        value column through this one function (Spark in a pandas UDF)."""
        if self.derivation is not None:
            return self.derivation.units(records, missing=missing, fill=fill, refuse_rows=refuse_rows, where=where,
                                         whole=self.whole)
        return screen_units(records, self.step, self.lo_u, self.hi_u, missing=missing, fill=fill,
                            refuse_rows=refuse_rows, where=where, whole=self.whole)


class Engine(Protocol):
    """What a table release needs of an engine (see the module docstring)."""

    public: pl.DataFrame | None
    """The public keys in the types of the group columns (:meth:`~securedp.engines.keys.PublicKeys.typed`)."""

    def counts(self, salt: bytes) -> KeyAggregates: ...

    def column(self, index: int, salt: bytes, squares: bool) -> KeyAggregates: ...

    def unit_counts(self, index: int, salt: bytes) -> UnitCounts: ...

    def output(self, names: Sequence[str], rows: Sequence[Sequence[Any]],
               steps: Mapping[str, Fraction | None]) -> Any: ...


MISSING_KEYS = ("raise", "drop")
"""What a reader does with a row whose group key is missing or blank: refuse it naming the first (``"raise"``,
the default; dropped in an analyst-facing session) or drop it (``"drop"``, in either mode). One option for every
reader of group keys (``prepare_table``, ``analyze_contributions``, the CLI's ``--missing-keys``)."""


def drops_missing_keys(missing_keys: Any) -> bool:
    """Whether ``missing_keys`` (one of :data:`MISSING_KEYS`) drops the rows of a missing or blank group key."""
    if missing_keys not in MISSING_KEYS:
        raise ValueError(f"missing_keys must be 'raise' or 'drop', got {missing_keys!r}")
    return bool(missing_keys == "drop")


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
    schema: Mapping[str, str] = field(default_factory=dict)
    """The caller's declared column types (``schema=``: ``"int"``, ``"number"`` or ``"text"``)."""
    memory_budget: int | None = None
    """The bytes a release from a file may hold in memory (``None``: the default,
    :data:`securedp.engines.polars.pieces.DEFAULT_BUDGET`); a file that does not fit is read in parts
    (:mod:`securedp.engines.polars.pieces`)."""
