"""A table query checked before anything is drawn: its public parameters priced, how its data is read, and
the engine that reads it (the steps of :func:`securedp.tables.table.prepare_table`, in the order it takes them).

:func:`check_table` refuses what can be refused from the query and the table's schema alone, before a row is
read (:func:`~securedp.bounding.data_phase.reading_data` marks the line); :func:`open_engine` then hands the
table to its engine (:mod:`securedp.engines.registry`), validated but not yet bounded: that waits for the salt
each execution draws first.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from securedp.bounding.contributions import analyst_facing, data_policy
from securedp.bounding.data_phase import reading_data
from securedp.mechanisms.records import check_missing_policy
from securedp.reading.types import declared_schema, typed_steps
from securedp.tables.cells import Column
from securedp.tables.notes import plan_notes
from securedp.tables.plan import TablePlan
from securedp.tables.pricing import PricedTable, TableParameters, aggregation_list, price_table
from securedp.tables.spec import ColumnAggregation

if TYPE_CHECKING:  # the engines load Polars (and Spark) only when a table is prepared
    from securedp.engines.keys import PublicKeys
    from securedp.engines.protocol import ColumnSpec, Engine


@dataclass(frozen=True)
class Reading:
    """How a table's data is read: its person column, the missing-value policies of values and keys, the
    declared types of columns and the memory a file may take (see :func:`~securedp.tables.table.prepare_table`)."""

    id_column: str | None = None
    missing: str = "raise"
    fill: Any = None
    missing_keys: str = "raise"
    schema: Any = None
    memory_budget: Any = None


@dataclass(frozen=True)
class CheckedTable:
    """A table query whose every public input is checked and priced; nothing read yet."""

    priced: PricedTable
    reading: Reading
    declared: dict[str, str]
    """The declared type of some columns (:func:`~securedp.reading.types.declared_schema`)."""
    drop_keys: bool
    memory: int
    """The memory budget, in bytes."""
    specs: list[ColumnSpec]
    public: PublicKeys | None
    """The public keys, or ``None`` (private keys, or no group-by)."""
    stated: TablePlan


def check_table(data: Any, parameters: TableParameters, reading: Reading) -> CheckedTable:
    """Every check of a table query that reads no row, in order: the reading policies, the declared schema,
    the price (:func:`~securedp.tables.pricing.price_table`), the names, the public keys and each column's
    missing-value policy, then the table's columns and types against its engine."""
    from securedp.engines.keys import public_keys
    from securedp.engines.polars.pieces import memory_budget
    from securedp.engines.protocol import drops_missing_keys, refuse_reserved
    from securedp.engines.registry import check_engine

    drop_keys = drops_missing_keys(reading.missing_keys)
    memory = memory_budget(reading.memory_budget)
    declared = declared_schema(reading.schema)
    aggregations = aggregation_list(parameters.aggregations)
    texts = [a.column for a in aggregations if isinstance(a, ColumnAggregation) and declared.get(a.column) == "text"]
    if texts:
        raise ValueError(f"column {texts[0]!r} is declared 'text' in schema=: an aggregated column holds numbers "
                         "('int' or 'number')")
    valued = [a.column for a in aggregations if isinstance(a, ColumnAggregation)]
    priced = price_table(dataclasses.replace(parameters, aggregations=aggregations),
                         typed_steps(data, valued, declared))
    id_column = reading.id_column
    if id_column == "":
        raise ValueError("id_column='' names no column: give the person column a name, or leave id_column out "
                         "(each row is then its own person)")
    if id_column is not None and id_column in priced.group_by:
        raise ValueError(f"id_column {id_column!r} is also a group_by column: each person would be their own "
                         "group; group by another column")
    refuse_reserved([*priced.group_by, *([id_column] if id_column is not None else []),
                     *(a.column for a in priced.aggregations if isinstance(a, ColumnAggregation))])
    public = public_keys(parameters.keys, priced.group_by) if not priced.private and priced.group_by else None
    stated = dataclasses.replace(priced.plan(), notes=tuple(plan_notes(id_column)))
    for c in priced.columns:
        check_missing_policy(c.step, c.lo_u, c.hi_u, reading.missing, reading.fill)
    specs = _engine_specs(priced.columns, declared)
    check_engine(data, specs)
    return CheckedTable(priced, reading, declared, drop_keys, memory, specs, public, stated)


def open_engine(data: Any, checked: CheckedTable) -> tuple[Engine, bool]:
    """The table read from here on: its engine (validated, not yet bounded) and whether every value column
    keeps every row (then the row and person counts come from the first column's pass)."""
    from securedp.engines.protocol import Bounds
    from securedp.engines.registry import engine_for

    reading_data()  # every public input is checked above; the table is read from here on
    priced, reading, specs = checked.priced, checked.reading, checked.specs
    missing = data_policy(reading.missing)[0]  # analyst-facing: "raise" acts as "drop"
    bounds = Bounds(priced.group_by, priced.k, priced.m, analyst_facing(), checked.drop_keys, checked.declared,
                    checked.memory)
    engine = engine_for(data, reading.id_column, bounds, specs, checked.public, missing, reading.fill)
    same_rows = bool(specs) and specs[0].keeps_every_row("drop" if analyst_facing() else missing)
    return engine, same_rows


def _engine_specs(columns: list[Column], schema: dict[str, str]) -> list[ColumnSpec]:
    from securedp.engines.protocol import ColumnSpec

    squares = {c.index for c in columns if c.aggregation.reads == "squares"}
    specs: dict[int, ColumnSpec] = {}
    for c in columns:
        specs.setdefault(c.index, ColumnSpec(c.aggregation.column, c.step, c.lo_u, c.hi_u, c.index in squares,
                                             schema.get(c.aggregation.column) == "int", c.derivation))
    return [specs[i] for i in range(len(specs))]
