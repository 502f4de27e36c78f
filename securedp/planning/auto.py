"""``bounds="auto"``: a table's clamping bounds chosen privately from the data, each a release of its own.

A table aggregation of a value column (``Sum``, ``Mean``, ``Variance``, ``Quantile``, ``IQR``) may be
given ``bounds="auto"``. The bounds are then chosen by :func:`securedp.planning.private_bounds` (the
noisy magnitude histogram by default), one release per distinct column, each at ``epsilon`` and each
charged to the session (and recorded in its audit log) like any release, **before** the table is
prepared; the table is then the usual release with those bounds, which its own record states. So the
whole costs ``epsilon`` per auto column plus the table's own budget (basic composition), and a seeded
replay re-derives the bounds first and the table after, from their records.

A person's rows are bounded for the choice as for the table: with ``id_column``, at most
``max_groups * max_rows`` rows per person (every row a person keeps in the table), chosen by the
salted rule; without it each row is a person.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from securedp.hazmat.bits.source import RandomSource
from securedp.ledger.release import Release
from securedp.planning.bounds import BoundsMethod, prepare_column_bounds
from securedp.session.session import Session
from securedp.tables.checks import Reading
from securedp.tables.spec import Aggregation, ColumnAggregation

AUTO = "auto"


def is_auto(aggregation: Aggregation) -> bool:
    """Whether ``aggregation`` asks for its bounds to be chosen privately."""
    return isinstance(aggregation, ColumnAggregation) and isinstance(aggregation.bounds, str) and \
        aggregation.bounds == AUTO


def auto_bounds(data: Any, aggregations: Sequence[Aggregation], *, epsilon: Any, id_column: str | None = None,
                max_groups: int = 1, max_rows: int = 1, session: Session | None = None,
                rng: RandomSource | None = None, method: str = "histogram", missing: str = "raise", fill: Any = None,
                schema: Any = None) -> tuple[list[Aggregation], list[Release]]:
    """``aggregations`` with every ``bounds="auto"`` replaced by bounds chosen privately from ``data``, and
    the bounds releases (one per distinct column, each at ``epsilon``, charged to ``session``).

    ``data`` is the table the release will read (a DataFrame, or a CSV or Parquet path): each bounds
    release reads its column and the ids through the one reader, as the table will (give the table's
    ``missing``, ``fill`` and ``schema``), and with ``session``
    it is prepared and charged in the session's mode, behind its error boundary (an analyst-facing session
    sees no data-dependent error). Without an auto aggregation, nothing is read or drawn and the list is
    returned as it is.
    """
    if session is not None and rng is not None:
        raise ValueError("give session= (its source draws) or rng=, not both")
    chosen: dict[str, tuple[Any, Any]] = {}
    releases: list[Release] = []
    rows = max_groups * max_rows if id_column is not None else 1
    for a in aggregations:
        if not is_auto(a):
            continue
        assert isinstance(a, ColumnAggregation)
        if a.column not in chosen:
            how, reading = BoundsMethod(method), Reading(id_column=id_column, missing=missing, fill=fill, schema=schema)
            options = {"epsilon": epsilon, "max_contributions": rows}
            if session is not None:
                release = session.release(session.prepare(prepare_column_bounds, data, a.column, how, reading,
                                                          **options))
            else:
                release = prepare_column_bounds(data, a.column, how, reading, **options).execute(rng)
            chosen[a.column] = release.value
            releases.append(release)
    return [_with_bounds(a, chosen) for a in aggregations], releases


def _with_bounds(aggregation: Aggregation, chosen: dict[str, tuple[Any, Any]]) -> Aggregation:
    if isinstance(aggregation, ColumnAggregation) and is_auto(aggregation):
        return dataclasses.replace(aggregation, bounds=chosen[aggregation.column])
    return aggregation
