"""A release described as data, so that the command can run it and replay can re-run it: one type for both.

A :class:`Query` holds every public input of :func:`securedp.tables.prepare_table` exactly: the group
columns, the public keys (or none: private keys), the aggregations (:class:`AggregationQuery`: kind,
column, bounds, lattice, share, level, trim, fallback, a histogram's bins or categories), the id column and
per-person bounds, the privacy parameters (``epsilon`` or ``rho``, and ``delta`` for private keys), the
selection rule, the confidence level, the missing-value policy and the declared types. A release of one
column (``securedp release --column --stat``) is the same query with no group column and one aggregation,
whose one cell is the value (:attr:`Query.one_column`, :func:`securedp.tables.one_column.one_cell`).

``to_json`` writes it under ``"query"`` in the audit record, in one of two shapes, told apart by
``"statistic"`` (rationals as ``"num/den"`` strings; these are the shapes of every record written so far,
byte for byte):

* a table: ``{"statistic": "table", "group_by": [...], "aggregations": [...], ...}``;
* one column: ``{"statistic": NAME, "column": ..., "epsilon" or "rho", "bounds", "q", "bins",
  "categories", "max_contributions", "id_column", ...}`` (the optional fields only when set, several quantiles'
  levels ``"qs"`` last).

:meth:`Query.from_json` reads both back; :meth:`Query.prepare` re-runs it on the same file. Which options
a statistic of one column takes is its signature's (:data:`securedp.tables.spec.STATISTICS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, cast

from securedp.hazmat.exact.rational import format_rational, to_int, to_rational
from securedp.ledger.release import PreparedRelease, jsonable
from securedp.privacy.cost import Cost, Currency
from securedp.reading.delimited import MissingColumns
from securedp.reading.files import TableFile, column_names
from securedp.reading.types import declared_schema
from securedp.tables.column_query import ColumnFields, column_check, read_column, read_levels
from securedp.tables.one_column import one_cell, request
from securedp.tables.spec import KINDS, Aggregation
from securedp.tables.table import PreparedTable, prepare_table

OPTIONS = ("bounds", "q", "qs", "bins", "categories", "trim", "fallback", "lattice")
"""An aggregation's fields that are a statistic's own parameters (its signature's), when set."""


def _text(value: Fraction) -> str:
    return format_rational(value)


def _rational(value: Any, name: str) -> Fraction | None:
    return None if value is None else to_rational(value, name)


@dataclass(frozen=True)
class AggregationQuery:
    """One aggregation: ``kind`` (a statistic of :data:`~securedp.tables.spec.STATISTICS`), its column, bounds,
    lattice, share, (quantile) level ``q``, trim level ``trim``, fallback probability and a histogram's
    ``bins`` or ``categories`` (of one column)."""

    kind: str
    column: str | None = None
    bounds: tuple[Fraction, Fraction] | None = None
    lattice: Fraction | None = None
    share: Fraction | None = None
    q: Fraction | None = None
    auto: bool = False
    """``COLUMN:auto``: the bounds are chosen privately before the table (the command replaces this query by
    one with the chosen bounds, which is what the audit log records)."""
    trim: Fraction | None = None
    """The trim level of a statistic that takes one (``--trim``; ``None``: its default). Recorded when given."""
    fallback: Fraction | None = None
    """A selection's fallback probability (``--fallback``; ``None``: its default). Recorded when given; a replay
    gives a query without it the one its record states (:mod:`securedp.audit.replay`)."""
    bins: tuple[Fraction, ...] | None = field(default=None, kw_only=True)
    """A histogram's bin edges (``--bins``; one column only)."""
    categories: tuple[str, ...] | None = field(default=None, kw_only=True)
    """A histogram's categories, compared with the cells verbatim (``--categories``; one column only)."""
    qs: tuple[Fraction, ...] | None = field(default=None, kw_only=True)
    """Several quantiles' levels (``--quantiles COLUMN:Q1,Q2,...:LO,HI``, ``--levels``), recorded when given."""

    def build(self) -> Aggregation:
        if self.kind not in KINDS:
            raise ValueError(f"unknown aggregation {self.kind!r} (choose from {', '.join(KINDS)})")
        try:
            made = KINDS[self.kind].build(self.column, self.bounds, self.lattice, self.share, self.q, self.trim,
                                          self.fallback, qs=self.qs)
            return cast("Aggregation", made)
        except ValueError as error:
            raise ValueError(f"{self.kind} {error}") from None

    def options(self) -> dict[str, Any]:
        """The statistic's own options that are set (:data:`OPTIONS`)."""
        return {name: getattr(self, name) for name in OPTIONS if getattr(self, name) is not None}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.column is not None:
            out["column"] = self.column
        if self.bounds is not None:
            out["bounds"] = [jsonable(b) for b in self.bounds]
        for name in ("lattice", "share", "q", "trim", "fallback"):
            if getattr(self, name) is not None:
                out[name] = jsonable(getattr(self, name))
        if self.qs is not None:
            out["qs"] = [jsonable(q) for q in self.qs]
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AggregationQuery:
        bounds = data.get("bounds")
        pair = None
        if bounds is not None:
            if not isinstance(bounds, list) or len(bounds) != 2:
                raise ValueError("an aggregation's bounds must be [lo, hi]")
            pair = (to_rational(bounds[0], "bounds"), to_rational(bounds[1], "bounds"))
        return cls(str(data["kind"]), data.get("column"), pair, _rational(data.get("lattice"), "lattice"),
                   _rational(data.get("share"), "share"), _rational(data.get("q"), "q"),
                   trim=_rational(data.get("trim"), "trim"), fallback=_rational(data.get("fallback"), "fallback"),
                   qs=read_levels(data.get("qs")))


@dataclass(frozen=True)
class Query:
    """Every public input of one release, a table or one column (see the module docstring)."""

    group_by: tuple[str, ...]
    aggregations: tuple[AggregationQuery, ...]
    epsilon: Fraction | None = None
    rho: Fraction | None = None
    delta: Fraction | None = None
    keys: tuple[tuple[Any, ...], ...] | None = None
    id_column: str | None = None
    max_groups: int = 1
    max_rows: int = 1
    selection: str | None = None
    """The partition selection rule; None: the default (:mod:`securedp.tables.pricing`: ``"count"`` when the
    table releases a count, else Laplace for epsilon, Gaussian for rho)."""
    alpha: Fraction = Fraction(1, 20)
    missing: str = "raise"
    fill: Fraction | None = None
    delimiter: str = ","
    missing_keys: str = "raise"
    """``"drop"``: rows whose group key is missing or blank are dropped (recorded when not ``"raise"``)."""
    encoding: str = "utf-8"
    """The CSV file's declared encoding (:func:`securedp.reading.files.read_file`); recorded when not UTF-8."""
    schema: tuple[tuple[str, str], ...] = ()
    """Declared column types (``--schema hours:int``), as ``(column, type)`` pairs; recorded when given."""
    analyst_facing: bool = False
    """The release ran in an analyst-facing session (``--analyst-facing``); recorded when true."""
    memory_budget: int | None = None
    """The bytes the release may hold in memory (``--memory-budget``; ``None``: the default). Not recorded: it
    changes no released value, only how a file is read (:mod:`securedp.engines.polars.pieces`)."""
    one_column: bool = False
    """A release of one column (``--column --stat``): no group column, one aggregation whose kind is the
    statistic, ``max_rows`` its ``max_contributions``; the release's value is its one cell."""

    @classmethod
    def of_column(cls, statistic: str, column: str, epsilon: Fraction | None, *args: Any, **fields: Any) -> Query:
        """The query of one statistic of one column (``securedp release --column --stat``), from the fields of a
        column's record (:class:`~securedp.tables.column_query.ColumnFields`: ``bounds``, ``q``, ``bins``,
        ``categories``, ``max_contributions``, ``id_column``, ``rho``, ``encoding``, ``lattice``, ``missing``,
        ``fill``, ``schema``, ``analyst_facing``, ``trim``, ``fallback``, ``qs``, in this order), unchecked
        (:meth:`check`)."""
        asked = ColumnFields(*args, **fields)
        aggregation = AggregationQuery(statistic, column, asked.bounds, asked.lattice, None, asked.q, trim=asked.trim,
                                       fallback=asked.fallback, bins=asked.bins, categories=asked.categories,
                                       qs=asked.qs)
        return cls((), (aggregation,), epsilon=epsilon, rho=asked.rho, id_column=asked.id_column,
                   max_rows=asked.max_contributions, missing=asked.missing, fill=asked.fill, encoding=asked.encoding,
                   schema=asked.schema, analyst_facing=asked.analyst_facing, one_column=True)

    @property
    def statistic(self) -> str:
        """``"table"``, or the statistic of one column."""
        return self.aggregations[0].kind if self.one_column else "table"

    @property
    def cell(self) -> AggregationQuery:
        """The one aggregation of a release of one column."""
        if not self.one_column:
            raise ValueError("a table query has no one cell: its aggregations are in .aggregations")
        return self.aggregations[0]

    def __getattr__(self, name: str) -> Any:  # a column query's statistic options: query.bounds, query.q ...
        if name in (*OPTIONS, "column") and self.one_column:
            return getattr(self.aggregations[0], name)
        if name == "max_contributions" and self.one_column:
            return self.max_rows
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def currency(self) -> Currency:
        """What this query's privacy cost is counted in: epsilon or rho."""
        return Currency.EPSILON if self.epsilon is not None else Currency.RHO

    @property
    def cost(self) -> Fraction:
        """The exact privacy cost in :attr:`currency`."""
        return Cost.of(self.epsilon, self.rho).amount

    def check(self) -> Query:
        """Return ``self`` if the inputs fit the statistic (of one column), else raise :class:`ValueError`."""
        if self.one_column:
            column_check(self.cell.kind, self.cell.options(), self.epsilon, self.rho, self.missing, self.fill)
        return self

    def columns(self) -> list[str]:
        """The columns this query reads: the id column, the group columns and the aggregated columns."""
        named = (getattr(a.build(), "column", None) for a in self.aggregations)
        return list(dict.fromkeys([*([self.id_column] if self.id_column else []), *self.group_by,
                                   *(c for c in named if isinstance(c, str))]))

    def public(self) -> dict[str, Any]:
        """The query's public arguments of :func:`~securedp.tables.pricing.price_table` (no data, no cost)."""
        return {"group_by": list(self.group_by), "aggregations": [a.build() for a in self.aggregations],
                "keys": None if self.keys is None else list(self.keys), "max_groups": self.max_groups,
                "max_rows": self.max_rows, "delta": self.delta, "selection": self.selection, "alpha": self.alpha}

    def prepare(self, data: Any) -> PreparedRelease:
        """The priced, not yet drawn, release of this query on ``data`` (a table or a file path, read with this
        query's delimiter and encoding, only the needed columns): a :class:`~securedp.tables.table.PreparedTable`,
        or for one column the release of its one cell."""
        return self._one_cell(data) if self.one_column else self.prepare_table(data)

    def prepare_table(self, data: Any) -> PreparedTable:
        """The priced, not yet drawn, table release of this query (of a table) on ``data``."""
        aggregations = [a.build() for a in self.aggregations]
        if isinstance(data, (str, Path)):  # only the columns the query names are read, when the data is read
            data = TableFile(data, self.delimiter, self.encoding)
        return prepare_table(
            data, group_by=list(self.group_by), aggregations=aggregations,
            keys=None if self.keys is None else list(self.keys), id_column=self.id_column,
            max_groups=self.max_groups, max_rows=self.max_rows, epsilon=self.epsilon, rho=self.rho,
            delta=self.delta, selection=self.selection, alpha=self.alpha, missing=self.missing, fill=self.fill,
            missing_keys=self.missing_keys, schema=dict(self.schema) or None, memory_budget=self.memory_budget,
        )

    def _one_cell(self, data: Any) -> PreparedRelease:
        cell = self.cell
        if cell.kind == "count" and isinstance(data, (str, Path)) and Path(data).is_file():  # a count reads no
            names = column_names(data, encoding=self.encoding)  # cell of its column: the header must hold it
            if cell.column not in names:
                raise MissingColumns([str(cell.column)], names)
        table = TableFile(data, encoding=self.encoding) if isinstance(data, (str, Path)) else data
        one, aggregations = request(cell.kind, str(cell.column), **cell.options())
        return one_cell(one, aggregations, table, self.id_column, epsilon=self.epsilon, rho=self.rho,
                        max_contributions=self.max_rows, missing=self.missing, fill=self.fill,
                        schema=dict(self.schema) or None)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (rationals as ``"num/den"`` strings) in the shape of its kind; see :meth:`from_json`."""
        if self.one_column:
            return self._column_json()
        out: dict[str, Any] = {
            "statistic": "table", "group_by": list(self.group_by),
            "aggregations": [a.to_json() for a in self.aggregations],
            "epsilon": jsonable(self.epsilon), "rho": jsonable(self.rho), "delta": jsonable(self.delta),
            "keys": None if self.keys is None else [list(k) for k in self.keys],
            "id_column": self.id_column, "max_groups": self.max_groups, "max_rows": self.max_rows,
            "selection": self.selection, "alpha": jsonable(self.alpha), "missing": self.missing,
            "fill": jsonable(self.fill),
        }
        optional = {"delimiter": ",", "encoding": "utf-8", "missing_keys": "raise"}
        out.update({name: getattr(self, name) for name, usual in optional.items() if getattr(self, name) != usual})
        if self.schema:
            out["schema"] = dict(self.schema)
        if self.analyst_facing:
            out["analyst_facing"] = True
        return out

    def _column_json(self) -> dict[str, Any]:
        """The record of a release of one column (see the module docstring); the cost appears as ``"epsilon"`` or as
        ``"rho"``, whichever is set (never both)."""
        cell = self.cell
        cost = {"epsilon": _text(self.epsilon)} if self.epsilon is not None else {"rho": _text(self.rho)}  # type: ignore[arg-type]
        return {
            "statistic": cell.kind,
            "column": cell.column,
            **cost,
            "bounds": None if cell.bounds is None else [_text(b) for b in cell.bounds],
            "q": None if cell.q is None else _text(cell.q),
            "bins": None if cell.bins is None else [_text(b) for b in cell.bins],
            "categories": None if cell.categories is None else list(cell.categories),
            "max_contributions": self.max_rows,
            "id_column": self.id_column,
            **({"encoding": self.encoding} if self.encoding != "utf-8" else {}),
            **({"lattice": _text(cell.lattice)} if cell.lattice is not None else {}),
            **({"missing": self.missing} if self.missing != "raise" else {}),
            **({"fill": _text(self.fill)} if self.fill is not None else {}),
            **({"schema": dict(self.schema)} if self.schema else {}),
            **({"analyst_facing": True} if self.analyst_facing else {}),
            **({"trim": _text(cell.trim)} if cell.trim is not None else {}),
            **({"fallback": _text(cell.fallback)} if cell.fallback is not None else {}),
            **({"qs": [_text(q) for q in cell.qs]} if cell.qs is not None else {}),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Query:
        """A query from its record, in either shape (a one-column query is checked); :class:`ValueError` if it is
        malformed."""
        if data.get("statistic") != "table":
            return cls.of_column(**read_column(data)).check()
        aggregations = data.get("aggregations")
        if not isinstance(aggregations, list):
            raise ValueError("a table query lists its aggregations")
        keys = data.get("keys")
        return cls(
            group_by=tuple(data.get("group_by") or ()),
            aggregations=tuple(AggregationQuery.from_json(a) for a in aggregations),
            epsilon=_rational(data.get("epsilon"), "epsilon"), rho=_rational(data.get("rho"), "rho"),
            delta=_rational(data.get("delta"), "delta"),
            keys=None if keys is None else tuple(tuple(k) for k in keys),
            id_column=data.get("id_column"), max_groups=to_int(data.get("max_groups", 1), "max_groups"),
            max_rows=to_int(data.get("max_rows", 1), "max_rows"),
            selection=None if data.get("selection") is None else str(data["selection"]),
            alpha=to_rational(data.get("alpha", "1/20"), "alpha"), missing=str(data.get("missing", "raise")),
            fill=_rational(data.get("fill"), "fill"), delimiter=str(data.get("delimiter", ",")),
            encoding=str(data.get("encoding", "utf-8")), missing_keys=str(data.get("missing_keys", "raise")),
            schema=tuple(declared_schema(data.get("schema")).items()),
            analyst_facing=data.get("analyst_facing") is True,
        )
