"""Releases of one column: each is the one-cell table of that column, by the one route of every release.

``securedp.sum(data, bounds=(0, 100), epsilon=1, ids=ids)`` is
``securedp.table({"data": data, "ids": ids}, aggregations=[Sum("data", (0, 100))], id_column="ids",
max_rows=max_contributions, epsilon=1)`` with its one cell as the value: the same reader (ids and values
cell by cell, :mod:`securedp.reading`), the same bounding (each person keeps ``max_contributions`` rows,
chosen by the salted rule of :mod:`securedp.bounding`), the same noise, the same random bits and the same
record. So a one-column release and the one-cell table of the same data and seed are the same bytes,
and replaying either re-derives the other.

``data`` is one column of any kind (a list, a NumPy array, a pandas, Polars or pyarrow column); a table
or a 2-D array is refused, never flattened (:func:`securedp.lattice.columns.check_one_column`). ``ids``
(optional) holds one person id per row, read by the one rule of ids and keys
(:mod:`securedp.reading.keys`); without it every row is its own person and ``max_contributions`` is the
caller's promise. The release's ``value`` is the cell's exact value (an ``int`` when it is whole, else a
``Fraction``; a tuple for several quantiles or a histogram), its ``statistic`` the function's name, and
its ``parameters`` the table's (:mod:`securedp.tables.table`): the cell's laws under the aggregation's
name (``"data_sum"``), the bounds per person, the salt commitment.

Each ``prepare_<name>`` validates every public argument, reads the column (refusing a bad record for
the data holder, dropping it in an analyst-facing session) and prices the release; ``.execute(rng)``
draws it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from securedp.bounding.contributions import check_max_contributions
from securedp.bounding.data_phase import check_shape
from securedp.lattice.columns import ONE_COLUMN_HINT, NotOneColumnError
from securedp.ledger.release import PreparedRelease
from securedp.ledger.release_record import bounded_range
from securedp.mechanisms.statistic import check_call, release_function
from securedp.tables.registry import OneCell, Statistic
from securedp.tables.spec import STATISTICS, Aggregation
from securedp.tables.table import CellRoute, prepare_table

if TYPE_CHECKING:  # each statistic's prepare_NAME and NAME as a static checker sees them (made below at run time)
    from securedp.tables.signatures import *  # noqa: F403 - generated from STATISTICS; see that file

__all__ = ["DATA", "IDS", "POINTS", "OneCell", "column_table", "one_cell", "request"]  # and every statistic's
# prepare_NAME and NAME (from securedp.tables.spec.STATISTICS)

DATA, IDS = "data", "ids"
"""The names of the one-column table's columns: the data, and the person ids."""
COMMON = frozenset({"data", "ids", "epsilon", "rho", "max_contributions", "missing", "fill"})
"""The parameters every release of one column may take: the rest are the statistic's options."""
POINTS = STATISTICS.taking("fallback")
"""The statistics that select lattice points, each with a fallback point (``fallback=``)."""


def request(statistic: str, column: str, **options: Any) -> tuple[OneCell, list[Aggregation]]:
    """The table aggregations releasing ``statistic`` of ``column`` in one cell, and how that cell becomes the
    release's value: the one definition of each statistic of one column (the functions below, the command's
    ``--column --stat``, and their replay all ask here). ``options`` are the statistic's own parameters (its
    signature's, :data:`~securedp.tables.registry.STATISTICS`), ``bounds``, ``lattice``, a quantile's ``q``,
    a selection's ``fallback`` ..."""
    entry = STATISTICS.get(statistic)
    if entry is None or entry.signature is None:
        raise ValueError(f"unknown statistic {statistic!r}")
    refused = sorted(options.keys() - set(entry.parameters()))
    if refused:
        takers = ", ".join(STATISTICS.taking(refused[0]))
        said = f"the selections ({takers})" if refused[0] == "fallback" else takers or "no statistic"
        raise ValueError(f"{refused[0]}= applies to {said}, not to a {statistic}")
    return entry.cells(statistic, column, **options)


def column_table(data: Any, ids: Any, hint: str = ONE_COLUMN_HINT) -> tuple[dict[str, Any], str | None]:
    """The table of one column: ``{"data": data, "ids": ids}`` (``ids`` optional) and its id column; a table or
    a 2-D array given as ``data`` (or ``ids``) is refused, never flattened."""
    check_shape([("data", data, hint), ("ids", ids, ONE_COLUMN_HINT)])
    return {DATA: data, **({IDS: ids} if ids is not None else {})}, (IDS if ids is not None else None)


def one_cell(cell: OneCell, aggregations: Sequence[Aggregation], table: Any, id_column: str | None, *,
             epsilon: Any, rho: Any, max_contributions: Any, missing: str = "raise", fill: Any = None,
             schema: Any = None) -> PreparedRelease:
    """The release of one column: the table ``table`` (with ``id_column``, or each row a person) released with
    no group-by and ``max_rows = max_contributions``, its one cell returned as :class:`OneCell` says (see the
    module docstring)."""
    m = check_max_contributions(max_contributions)
    prepared = prepare_table(table, aggregations=list(aggregations), id_column=id_column, max_rows=m,
                             epsilon=epsilon, rho=rho, missing=missing, fill=fill, schema=schema)
    definition = next(iter(prepared.cells.values()))
    route = CellRoute(prepared, cell, definition.mechanism)
    return PreparedRelease(cell.statistic, prepared.epsilon, prepared.rho, route, accuracy=route.accuracy,
                           value_halfwidth=definition.value_halfwidth,
                           bounded_range=bounded_range(cell.statistic, definition.mechanism))


def _release(statistic: str, data: Any, ids: Any, *, epsilon: Any, rho: Any, max_contributions: Any,
             missing: str = "raise", fill: Any = None, hint: str = ONE_COLUMN_HINT, **asked: Any) -> PreparedRelease:
    table, id_column = column_table(data, ids, hint)
    cell, aggregations = request(statistic, DATA, **asked)
    try:
        return one_cell(cell, aggregations, table, id_column, epsilon=epsilon, rho=rho,
                        max_contributions=max_contributions, missing=missing, fill=fill)
    except NotOneColumnError as error:  # records that are rows: a Python caller passed a table as a column
        said = str(error).replace(f"column {DATA!r}", "data", 1)
        raise NotOneColumnError(f"{said}; data looks like rows of a table, not one column: {hint}") from None


def prepare_function(entry: Statistic) -> Callable[..., PreparedRelease]:
    """``prepare_NAME`` of a statistic: its signature's parameters, validated and priced as the one-cell table of
    the column (nothing is drawn until ``.execute(rng)``)."""
    assert entry.signature is not None
    signature = inspect.signature(entry.signature)

    def prepare(*args: Any, **kwargs: Any) -> PreparedRelease:
        check_call(signature, f"prepare_{entry.name}", args, kwargs)
        given = signature.bind(*args, **kwargs)
        given.apply_defaults()
        asked = dict(given.arguments)
        common = {name: asked.pop(name) for name in COMMON if name in asked}
        hint = entry.hint(asked) or ONE_COLUMN_HINT
        return _release(entry.name, common.pop("data"), common.pop("ids", None), hint=hint, **common, **asked)

    prepare.__name__ = prepare.__qualname__ = f"prepare_{entry.name}"
    prepare.__module__ = __name__
    prepare.__doc__ = entry.signature.__doc__
    prepare.__signature__ = signature.replace(return_annotation="PreparedRelease")  # type: ignore[attr-defined]
    return prepare


def _publish(entry: Statistic) -> None:
    """Give a statistic of one column its ``prepare_NAME`` and ``NAME`` here."""
    if entry.signature is None:
        return
    prepare = prepare_function(entry)
    globals()[prepare.__name__] = prepare
    globals()[entry.name] = release_function(prepare, entry.name, entry.doc)


def __getattr__(name: str) -> Callable[..., Any]:
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


STATISTICS.subscribe(_publish)
