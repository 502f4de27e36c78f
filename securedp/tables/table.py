"""Grouped table releases: counts, sums, means and variances per group, exactly, over one table.

``prepare_table(data, group_by=[...], aggregations=[...], ...)`` validates
everything that can be checked before a draw (columns, key and id cells, the
values of every aggregated column under the ``missing`` policy, the budget
split) and prices the release; ``.execute(rng)`` then runs the two steps of
the aggregate/noise boundary:

1. **Exact aggregates, by an engine.** A secret 16-byte salt is drawn from the
   release's random source; every person is bounded to ``max_groups`` keys and
   ``max_rows`` rows per key by the SHA-256 rule of
   :mod:`securedp.engines.polars.bounding`, and every key gets exact integers (rows,
   distinct persons, sums and sums of squares of lattice units). Polars runs
   it in memory (pandas, polars and pyarrow tables, CSV and Parquet files);
   the same integers come from Spark for a Spark DataFrame
   (:mod:`securedp.engines.spark`).
2. **Noise, once, here.** Keys are the caller's public keys (every given key
   gets a cell, data keys outside the list are dropped before bounding) or
   private keys chosen by partition selection (:mod:`securedp.tables.pricing`
   chooses the rule). A table that releases a count (``Persons``, else
   ``Count``) selects them by default by thresholding that count: its noise
   is drawn once for every data key (discrete Laplace at ``epsilon``,
   :mod:`securedp.mechanisms.partition_selection`; discrete Gaussian at
   ``rho``, :mod:`securedp.mechanisms.gaussian_threshold`), a key is kept iff
   its noisy count reaches the threshold, and the count released for a kept
   key is that same noisy count (so it is at least the threshold: see the
   bias note there). Otherwise (no count, ``selection_share=``, or
   ``selection="laplace"``, ``"optimal"``, ``"gaussian"``) a separate
   selection on a noisy count of persons spends its own share; a threshold
   rule's noisy person count is then released for free
   (``selection_persons``). Every other aggregate of every kept cell gets
   exact noise (:mod:`securedp.privacy.noise`), calibrated as
   :mod:`securedp.tables.spec` states.

**Budget.** The total ``epsilon`` (or ``rho``) is split across the
aggregations (and a separate partition selection, ``1/2`` of the budget by
default, where there is one) in exact rational shares: an aggregation's
``share=`` fixes its fraction of the total, and the rest is divided equally
among those without one. :attr:`PreparedTable.shares` shows the split before
anything is drawn; the shares must add up to exactly 1. ``delta`` (private
keys only) goes wholly to partition selection, whose parameters (rule,
``delta``, threshold; for the rule ``"count"`` the count thresholded and
``delta_per_key``; for a separate Gaussian rule its ``rho`` and variance
``sigma**2``) are in the release's ``parameters``.

**Output.** A :class:`TableRelease` whose ``value`` holds the exact rows (key
values, then per aggregation its value and the bounds of its confidence
interval at level ``1 - alpha``) and whose :attr:`TableRelease.frame` is a
DataFrame of the caller's kind (pandas, polars or pyarrow; polars for a file).
Counts are ints, lattice values are exact ``Decimal`` (or ``"num/den"``
strings for a step with no finite decimal form), never rounded floats. The
interval of a count or sum covers the true aggregate with probability at least
``1 - alpha`` (exact noise law, directed rounding); a mean's interval holds
with probability at least ``1 - alpha`` by a union bound over its two noisy
moments (each at ``alpha / 2``); a variance carries none.

The privacy unit is the person of ``id_column``; without one, each row is a
person (and the release says so).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from securedp.bounding.digest import draw_salt
from securedp.hazmat.bits.source import RandomSource
from securedp.ledger.release import Execution, PreparedRelease, Release, encode_input
from securedp.mechanisms.gaussian_threshold import GaussianThreshold
from securedp.mechanisms.partition_selection import LaplaceThreshold
from securedp.mechanisms.record_rules import current_rules
from securedp.mechanisms.statistic import CellColumn, release_function
from securedp.privacy.accuracy import check_alpha
from securedp.privacy.noise import Law
from securedp.tables.cells import (
    Aggregates,
    Cells,
    cells_of,
    commitment_parts,
    noise_records,
    release_cells,
    threshold_cells,
)
from securedp.tables.checks import Reading, check_table, open_engine
from securedp.tables.notes import release_notes
from securedp.tables.plan import TablePlan
from securedp.tables.pricing import SELECTION_RULES as SELECTION_RULES  # re-exported: the rules' one list
from securedp.tables.pricing import PricedTable, TableParameters
from securedp.tables.spec import Aggregation, Count, Definition

if TYPE_CHECKING:
    from securedp.engines.protocol import Engine, KeyAggregates

GUARANTEE = "delta-approximate rho-zCDP (Bun and Steinke 2016, Def. 8.1)"
"""The guarantee a ``rho`` table with private keys records (Gaussian thresholding)."""


@dataclass(frozen=True)
class TableRelease(Release):
    """A released table: :attr:`value` is the tuple of exact rows, :attr:`labels` the column names."""

    output: Callable[[], Any] | None = field(default=None, compare=False, repr=False)
    """Builds :attr:`frame` (when it is first read: the exact rows and the record never wait for it)."""
    notes: tuple[str, ...] = field(default=(), compare=False)
    """Plain sentences on where the release will not be useful (:mod:`securedp.tables.notes`), read from
    the query and the released values alone."""
    delta: Fraction | None = None
    """The ``delta`` of partition selection (private keys), else ``None``."""

    @functools.cached_property
    def frame(self) -> Any:
        """The released table as a DataFrame of the caller's kind (pandas, Polars or pyarrow), built from the
        exact rows when first read; its types follow from the public parameters alone. A pandas frame's
        lattice values are ``object`` columns of exact ``decimal.Decimal`` (or ``"num/den"`` text): for
        plotting, :meth:`float_frame`."""
        return None if self.output is None else self.output()

    def float_frame(self) -> Any:
        """:attr:`frame` with every released number (counts, values, interval ends) as a ``float64`` column
        (a null cell as NaN or null), the key columns as they are: for plotting and display only, never for
        further exact work (a float rounds; :attr:`value` and :attr:`frame` are exact). The same kind of
        table as :attr:`frame`; a Spark frame's columns are cast to ``double`` by Spark (a ``"num/den"``
        cell, of a lattice such as ``"1/3"``, becomes null there)."""
        from securedp.engines.frames import with_floats

        keys = self.parameters.get("group_by") or ()
        names = [n for n in self.labels or () if n not in keys]
        columns = {n: [None if row[i] is None else float(row[i]) for row in self.value]  # float-ok: display only
                   for i, n in enumerate(self.labels or ()) if n in names}
        return with_floats(self.frame, columns)

@dataclass(frozen=True)
class PreparedTable(PreparedRelease):
    """A validated, priced table release; nothing is drawn until ``.execute(rng)``."""

    shares: dict[str, Fraction] = field(default_factory=dict, kw_only=True)
    """The exact fraction of the total budget each component receives."""
    cells: dict[str, Definition] = field(default_factory=dict, kw_only=True)
    """Each aggregation's statistic, by name (its laws and accuracy, for ``max_groups`` cells per person)."""
    plan: TablePlan | None = field(default=None, kw_only=True)
    """What the release will state, from the public parameters alone (:mod:`securedp.tables.plan`):
    each output's half-widths or rank error bound, and with private keys the threshold and release
    probabilities. Nothing is drawn or charged to compute it."""

    def execute(self, rng: Any = None) -> TableRelease:
        """Draw the table from ``rng`` (default: the system source): :meth:`PreparedRelease.execute`."""
        release = super().execute(rng)
        assert isinstance(release, TableRelease)
        return release


def prepare_table(
    data: Any,
    *,
    group_by: Sequence[str] = (),
    aggregations: Sequence[Aggregation] = (Count(),),
    keys: Any = None,
    id_column: str | None = None,
    max_groups: Any = 1,
    max_rows: Any = 1,
    epsilon: Any = None,
    rho: Any = None,
    delta: Any = None,
    selection: str | None = None,
    selection_share: Any = None,
    alpha: Any = "0.05",
    missing: str = "raise",
    fill: Any = None,
    missing_keys: str = "raise",
    schema: Any = None,
    memory_budget: Any = None,
) -> PreparedTable:
    """Validate and price a grouped table release; see the module docstring.

    ``selection`` (private keys): ``"count"`` (the default when the table releases a count and no
    ``selection_share`` is given: the released count selects the keys), or a separate selection at
    ``selection_share`` (default ``1/2``): ``"laplace"`` (the default otherwise, with ``epsilon``),
    ``"optimal"``, or ``"gaussian"`` (the default otherwise, and the only separate rule, with ``rho``).

    ``missing_keys``: ``"raise"`` (default: a missing or blank group key is refused for the data holder,
    dropped in an analyst-facing session) or ``"drop"`` (the rows whose group key is missing or blank
    are dropped, in either mode, by a rule of each row alone; a missing person id is still refused).

    ``schema``: the declared type of some columns, ``{"hours": "int", "pid": "text"}``
    (:func:`securedp.reading.types.declared_schema`): how their cells are read, whatever the table's own
    types (a CSV file's cells are text: ``"int"`` keeps whole numbers whole, on step 1 by default).

    ``memory_budget``: the memory a release from a CSV or Parquet file may take, in bytes or as text such as
    ``"4GiB"`` (default 4 GiB); a file that does not fit is read and bounded in parts of its persons
    (:mod:`securedp.engines.polars.pieces`), with the same release for the same seed.
    """
    parameters = TableParameters(group_by=group_by, aggregations=aggregations, keys=keys, max_groups=max_groups,
                                 max_rows=max_rows, epsilon=epsilon, rho=rho, delta=delta, selection=selection,
                                 selection_share=selection_share, alpha=alpha)
    reading = Reading(id_column=id_column, missing=missing, fill=fill, missing_keys=missing_keys, schema=schema,
                      memory_budget=memory_budget)
    checked = check_table(data, parameters, reading)
    engine, same_rows = open_engine(data, checked)
    priced = checked.priced
    route = TableRoute(priced, engine, same_rows, id_column, checked.stated)
    return PreparedTable("table", priced.cost.epsilon, priced.cost.rho, route, delta=priced.delta_charged,
                         shares=priced.shares, cells=dict(priced.defined), plan=checked.stated)


@dataclass(frozen=True)
class TableRoute:
    """The :class:`~securedp.ledger.release.Route` of a table: one execution draws the salt first, then the
    engine bounds and aggregates (step 1), partition selection keeps the private keys, and the noise step
    releases every cell (step 2); each execution commits to its own input."""

    priced: PricedTable
    engine: Engine
    same_rows: bool
    """Every value column keeps every row: the counts come from the first column's pass."""
    id_column: str | None
    stated: TablePlan

    def execution(self, source: RandomSource) -> Execution:
        priced, engine = self.priced, self.engine
        salt = draw_salt(source)
        aggregates = Aggregates(engine, priced.columns, salt, same_rows=self.same_rows)
        counted = aggregates.counts
        cells, given, persons = self._select(cells_of(counted, engine.public, priced.group_by), counted, source)
        released = release_cells(priced.cell_noise, cells, aggregates, source, persons=persons, given=given)
        names, rows, steps = released.names, released.rows, released.steps
        mean_bounds = {c.aggregation.name: (c.lo_u * c.step, c.hi_u * c.step) for c in priced.columns}
        notes = (*self.stated.notes,
                 *release_notes(self.stated, names, rows, priced.group_by, mean_bounds, priced.delta_charged))
        release = TableRelease(value=tuple(rows), statistic="table", mechanism=Law.of(priced.cost.currency).value,
                               parameters=self._parameters(salt), epsilon=priced.cost.epsilon, rho=priced.cost.rho,
                               max_contributions=priced.k * priced.m, labels=tuple(names), source=source.describe(),
                               output=functools.partial(engine.output, names, rows, steps),
                               delta=priced.delta_charged, notes=notes)
        committed = {**commitment_parts("", counted), **released.committed}
        return Execution(release, functools.partial(encode_input, "table", committed))

    def _select(self, cells: Cells, counted: KeyAggregates, source: RandomSource
                ) -> tuple[Cells, dict[str, CellColumn], list[int] | None]:
        """The cells partition selection keeps (all of them with public keys), the count released by the rule
        ``"count"`` (by name), and a separate threshold selection's noisy person counts of the kept keys."""
        plan, priced = self.priced.selection, self.priced
        if plan is None:
            return cells, {}, None
        if priced.thresholded is not None:
            assert isinstance(plan, (LaplaceThreshold, GaussianThreshold))  # the rule "count" thresholds
            keep, column = threshold_cells(priced.defined[priced.thresholded], plan, cells, counted, source,
                                           priced.alpha)
            return cells.subset(np.flatnonzero(keep)), {priced.thresholded: column}, None
        persons = np.array([counted.persons[i] for i in cells.index], dtype=np.int64)
        if isinstance(plan, (LaplaceThreshold, GaussianThreshold)):
            chosen = plan.select(persons, source)
            noisy = [int(v) for v in np.asarray(chosen.noisy)[chosen.keep]]
            return cells.subset(np.flatnonzero(chosen.keep)), {}, noisy
        return cells.subset(np.flatnonzero(plan.select(persons, source))), {}, None

    def _parameters(self, salt: bytes) -> dict[str, Any]:
        """The release's recorded parameters: the query's, the salt's commitment, the selection's, the noise's."""
        priced, plan, rule = self.priced, self.priced.selection, self.priced.rule
        parameters: dict[str, Any] = {
            "group_by": list(priced.group_by), "keys": "private" if priced.private else "public",
            "max_groups": priced.k, "max_rows": priced.m, "privacy_unit": self.id_column or "row",
            "alpha": priced.alpha, "shares": dict(priced.shares), "salt_commitment": hashlib.sha256(salt).hexdigest(),
        }
        if plan is not None and rule is not None:
            parameters["selection"] = rule
            parameters["delta"] = priced.delta_charged
            if isinstance(plan, (LaplaceThreshold, GaussianThreshold)) and not current_rules().charges_asked_delta:
                parameters["delta_asked"] = plan.delta  # the threshold's; it charges the delta it proves
            if isinstance(plan, (LaplaceThreshold, GaussianThreshold)):
                parameters["threshold"] = plan.threshold
            if priced.thresholded is not None:
                assert isinstance(plan, (LaplaceThreshold, GaussianThreshold))  # the rule "count" thresholds
                parameters.update(selection_count=priced.thresholded, delta_per_key=plan.delta_per_key)
            if isinstance(plan, GaussianThreshold):
                parameters.update({} if priced.thresholded is not None else
                                  {"selection_rho": plan.rho, "selection_variance": plan.variance})
                parameters["guarantee"] = GUARANTEE
        parameters.update(noise_records(priced.columns, priced.aggregations, priced.defined, priced.alpha))
        return parameters


class OneCellView(Protocol):
    """How the one cell of a table becomes a release of one column (:class:`securedp.tables.one_column.OneCell`)."""

    @property
    def statistic(self) -> str: ...

    @property
    def labels(self) -> tuple[Any, ...] | None: ...

    def value(self, table: Release) -> Any:
        """The release's value, read from the table's one row."""
        ...


@dataclass(frozen=True)
class CellRoute:
    """The :class:`~securedp.ledger.release.Route` of a one-column release: the one-cell ``table``'s
    execution, its one cell released as ``cell`` says, by ``mechanism`` (the same bytes and input)."""

    table: PreparedTable
    cell: OneCellView
    mechanism: str

    def execution(self, source: RandomSource) -> Execution:
        done = self.table.executed(source)
        released = done.release
        release = Release(value=self.cell.value(released), statistic=self.cell.statistic, mechanism=self.mechanism,
                          parameters=released.parameters, epsilon=released.epsilon, rho=released.rho,
                          max_contributions=released.max_contributions, labels=self.cell.labels,
                          source=released.source)
        return Execution(release, done.input_bytes)

    def accuracy(self, alpha: Any) -> dict[str, Fraction]:
        """The half-width of each noisy part at level ``1 - alpha`` (``"1/20"``, a Fraction, an int or a float,
        read exactly, in (0, 1)): :meth:`~securedp.mechanisms.statistic.Statistic.accuracy` of the cell."""
        level = check_alpha(alpha)
        stated: dict[str, Fraction] = {}
        for definition in self.table.cells.values():
            stated.update(definition.accuracy(level))
        return stated


TABLE_DOC = """Release a grouped table: :func:`prepare_table`, then ``.execute(rng)``.

``rng`` is the random source (default: the system CSPRNG; a :class:`~securedp.ChaChaSource` replays).
"""
table = release_function(prepare_table, "table", TABLE_DOC, TableRelease)
