"""The command's text of a grouped table release: ``--sum COLUMN:LO,HI[:STEP]`` read as an aggregation, and the
lines that describe a table query. The query itself moved to :mod:`securedp.tables.query` (securedp 0.2): its
old names here (``TableQuery``, now :class:`~securedp.tables.query.Query`; ``AggregationQuery``) still resolve
for one release, with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from securedp.deprecation import deprecated, moved_module
from securedp.hazmat.exact.bounds import levels
from securedp.hazmat.exact.rational import display_rational, to_rational
from securedp.tables import query as _moved
from securedp.tables.query import AggregationQuery, Query
from securedp.tables.spec import KINDS

_moved_name = moved_module("securedp.audit.table_query", _moved)


def __getattr__(name: str) -> Any:
    if name == "TableQuery":
        deprecated("securedp.audit.table_query.TableQuery", "securedp.tables.query.Query")
        return Query
    return _moved_name(name)


def parse_aggregation(kind: str, text: str | None) -> AggregationQuery:
    """``--sum income:0,200000[:0.01]`` as an :class:`AggregationQuery` (``COLUMN:LO,HI[:STEP]``).

    A quantile names its level first: ``--quantile age:0.9:0,120[:STEP]``; several quantiles their levels, each
    once and increasing: ``--quantiles age:0.1,0.5,0.9:0,120[:STEP]`` (counted against
    :data:`~securedp.hazmat.exact.bounds.MAX_LEVELS` before any is read).
    """
    if text is None:
        return AggregationQuery(kind)
    q, qs, takes = None, None, KINDS[kind].takes
    if takes in ("level", "levels"):
        column, _, rest = text.partition(":")
        level, _, tail = rest.partition(":")
        if not level or "" in level.split(","):
            shape = "COLUMN:Q:LO,HI[:STEP]" if takes == "level" else "COLUMN:Q1,Q2,...:LO,HI[:STEP]"
            raise ValueError(f"--{kind}: expected {shape}, got {text!r}")
        if takes == "level":
            q = to_rational(level, "--quantile level")
        else:
            levels(level.count(",") + 1, f"--{kind}")
            qs = tuple(to_rational(each, f"--{kind} level") for each in level.split(","))
        text = f"{column}:{tail}"
    parts = text.split(":")
    if len(parts) == 2 and parts[1] == "auto" and parts[0]:
        return AggregationQuery(kind, parts[0], None, None, None, q, auto=True, qs=qs)
    if len(parts) not in (2, 3) or not parts[0]:
        raise ValueError(f"--{kind}: expected COLUMN:LO,HI[:STEP], got {text!r}")
    bounds = parts[1].split(",")
    if len(bounds) != 2:
        raise ValueError(f"--{kind}: expected bounds LO,HI, got {parts[1]!r}")
    lattice = to_rational(parts[2], f"--{kind} step") if len(parts) == 3 else None
    pair = (to_rational(bounds[0], f"--{kind}"), to_rational(bounds[1], f"--{kind}"))
    return AggregationQuery(kind, parts[0], pair, lattice, None, q, qs=qs)


def selection_line(query: Query, parameters: Mapping[str, Any], released: int) -> str | None:
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


def describe(query: Query) -> Sequence[str]:
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
