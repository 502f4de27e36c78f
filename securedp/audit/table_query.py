"""A grouped table release described as data, so that the command can run it and replay can re-run it.

A :class:`TableQuery` holds every public input of
:func:`securedp.tables.prepare_table` exactly: the group columns, the public
keys (or none: private keys), the aggregations (kind, column, bounds, lattice,
share), the id column and per-person bounds, the privacy parameters
(``epsilon`` or ``rho``, and ``delta`` for private keys), the selection rule,
the confidence level and the missing-value policy. ``to_json`` writes it
under ``"query"`` in the audit record (rationals as ``"num/den"`` strings);
``from_json`` reads it back, and :meth:`TableQuery.prepare` re-runs it on the
same table file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from securedp.accounting.schema import Currency
from securedp.hazmat.exact.rational import display_rational, to_int, to_rational
from securedp.mechanisms.release import jsonable
from securedp.reading.files import TableFile
from securedp.reading.types import declared_schema
from securedp.tables import prepare_table
from securedp.tables.spec import KINDS, Aggregation
from securedp.tables.table import PreparedTable


def _rational(value: Any, name: str) -> Fraction | None:
    return None if value is None else to_rational(value, name)


@dataclass(frozen=True)
class AggregationQuery:
    """One aggregation: ``kind`` (a name of :data:`~securedp.tables.spec.KINDS`), its column, bounds,
    lattice, share, (quantile) level ``q`` and (trimmed mean) ``trim``."""

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
    """A trimmed mean's trim level (``--trim``; ``None``: its default). Recorded when given."""
    fallback: Fraction | None = None
    """A selection's fallback probability (``--fallback``; ``None``: its default). Recorded when given; a replay
    gives a query without it the one its record states (:mod:`securedp.audit.replay`)."""

    def build(self) -> Aggregation:
        if self.kind not in KINDS:
            raise ValueError(f"unknown aggregation {self.kind!r} (choose from {', '.join(KINDS)})")
        try:
            return KINDS[self.kind].build(self.column, self.bounds, self.lattice, self.share, self.q, self.trim,
                                          self.fallback)
        except ValueError as error:
            raise ValueError(f"{self.kind} {error}") from None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.column is not None:
            out["column"] = self.column
        if self.bounds is not None:
            out["bounds"] = [jsonable(b) for b in self.bounds]
        if self.lattice is not None:
            out["lattice"] = jsonable(self.lattice)
        if self.share is not None:
            out["share"] = jsonable(self.share)
        if self.q is not None:
            out["q"] = jsonable(self.q)
        if self.trim is not None:
            out["trim"] = jsonable(self.trim)
        if self.fallback is not None:
            out["fallback"] = jsonable(self.fallback)
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
                   trim=_rational(data.get("trim"), "trim"), fallback=_rational(data.get("fallback"), "fallback"))


@dataclass(frozen=True)
class TableQuery:
    """Every public input of one table release (see the module docstring)."""

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

    statistic = "table"

    @property
    def currency(self) -> Currency:
        return Currency.EPSILON if self.epsilon is not None else Currency.RHO

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

    def prepare(self, data: Any) -> PreparedTable:
        """The priced, not yet drawn, table release of this query on ``data`` (a table or a file path).

        A CSV file is read with this query's :attr:`delimiter`.
        """
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

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "statistic": "table", "group_by": list(self.group_by),
            "aggregations": [a.to_json() for a in self.aggregations],
            "epsilon": jsonable(self.epsilon), "rho": jsonable(self.rho), "delta": jsonable(self.delta),
            "keys": None if self.keys is None else [list(k) for k in self.keys],
            "id_column": self.id_column, "max_groups": self.max_groups, "max_rows": self.max_rows,
            "selection": self.selection, "alpha": jsonable(self.alpha), "missing": self.missing,
            "fill": jsonable(self.fill),
        }
        if self.delimiter != ",":
            out["delimiter"] = self.delimiter
        if self.encoding != "utf-8":
            out["encoding"] = self.encoding
        if self.missing_keys != "raise":
            out["missing_keys"] = self.missing_keys
        if self.schema:
            out["schema"] = dict(self.schema)
        if self.analyst_facing:
            out["analyst_facing"] = True
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TableQuery:
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
            max_rows=to_int(data.get("max_rows", 1), "max_rows"), selection=_rule(data.get("selection")),
            alpha=to_rational(data.get("alpha", "1/20"), "alpha"), missing=str(data.get("missing", "raise")),
            fill=_rational(data.get("fill"), "fill"), delimiter=str(data.get("delimiter", ",")),
            encoding=str(data.get("encoding", "utf-8")), missing_keys=str(data.get("missing_keys", "raise")),
            schema=tuple(declared_schema(data.get("schema")).items()),
            analyst_facing=data.get("analyst_facing") is True,
        )


def _rule(value: Any) -> str | None:
    return None if value is None else str(value)


def parse_aggregation(kind: str, text: str | None) -> AggregationQuery:
    """``--sum income:0,200000[:0.01]`` as an :class:`AggregationQuery` (``COLUMN:LO,HI[:STEP]``).

    A quantile names its level first: ``--quantile age:0.9:0,120[:STEP]``.
    """
    if text is None:
        return AggregationQuery(kind)
    q = None
    if KINDS[kind].takes == "level":
        column, _, rest = text.partition(":")
        level, _, tail = rest.partition(":")
        if not level:
            raise ValueError(f"--quantile: expected COLUMN:Q:LO,HI[:STEP], got {text!r}")
        q, text = to_rational(level, "--quantile level"), f"{column}:{tail}"
    parts = text.split(":")
    if len(parts) == 2 and parts[1] == "auto" and parts[0]:
        return AggregationQuery(kind, parts[0], None, None, None, q, auto=True)
    if len(parts) not in (2, 3) or not parts[0]:
        raise ValueError(f"--{kind}: expected COLUMN:LO,HI[:STEP], got {text!r}")
    bounds = parts[1].split(",")
    if len(bounds) != 2:
        raise ValueError(f"--{kind}: expected bounds LO,HI, got {parts[1]!r}")
    lattice = to_rational(parts[2], f"--{kind} step") if len(parts) == 3 else None
    pair = (to_rational(bounds[0], f"--{kind}"), to_rational(bounds[1], f"--{kind}"))
    return AggregationQuery(kind, parts[0], pair, lattice, None, q)


def selection_line(query: TableQuery, parameters: Mapping[str, Any], released: int) -> str | None:
    """What a table with private keys did to its keys, from the query and the released record alone: the rule,
    the threshold a key had to reach, the keys released, the interval level (``None`` for public keys). How many
    keys were withheld is not stated: that number is a count of the data's keys, and is not private."""
    if query.keys is not None:
        return None
    rule, threshold, counted = parameters.get("selection"), parameters.get("threshold"), parameters.get(
        "selection_count")
    reached = ("" if threshold is None else f"each reached the threshold {display_rational(threshold)} in its noisy "
               f"{counted or 'count of persons'} (selection: {rule}); ")
    level = display_rational(1 - query.alpha)
    return (f"keys     private: {released} released; {reached}a key below the threshold is withheld, and how many "
            f"were is not shown (that count is not private); intervals at level {level}")


def describe(query: TableQuery) -> Sequence[str]:
    """A short description of the query, one line per fact, for the command's text output."""
    cost = (f"epsilon {display_rational(query.epsilon)}" if query.epsilon is not None
            else f"rho {display_rational(query.rho) if query.rho is not None else '?'}")
    if query.delta is not None:
        cost += f", delta {display_rational(query.delta)}"
    counts = any(a.kind in ("count", "persons") for a in query.aggregations)
    rule = query.selection or ("count" if counts else "laplace" if query.epsilon is not None else "gaussian")
    keys = f"private (partition selection: {rule})" if query.keys is None else "public"
    unit = (f"privacy unit: the person of column {query.id_column!r}, at most {query.max_groups} group(s) x "
            f"{query.max_rows} row(s) each" if query.id_column is not None
            else "privacy unit: one row (no --id-column: every row counts as a different person)")
    return [f"group by {', '.join(query.group_by) or '(none)'}; keys {keys}", f"cost {cost}; {unit}"]
