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

import dataclasses
import functools
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.mechanisms.contributions import analyst_facing, data_policy
from securedp.mechanisms.data_phase import reading_data
from securedp.mechanisms.gaussian_threshold import GaussianThreshold
from securedp.mechanisms.partition_selection import (
    LaplaceThreshold,
)
from securedp.mechanisms.records import check_missing_policy
from securedp.mechanisms.release import Execution, PreparedRelease, Release, encode_input
from securedp.mechanisms.statistic import CellColumn, release_function
from securedp.mechanisms.threshold_delta import asked_delta
from securedp.privacy.noise import Law
from securedp.reading.types import declared_schema, integer_columns
from securedp.tables.cells import (
    Aggregates,
    Column,
    cells_of,
    commitment_parts,
    noise_records,
    release_cells,
    threshold_cells,
)
from securedp.tables.notes import plan_notes, release_notes
from securedp.tables.plan import TablePlan
from securedp.tables.pricing import SELECTION_RULES as SELECTION_RULES  # re-exported: the rules' one list
from securedp.tables.pricing import aggregation_list, price_table
from securedp.tables.spec import Aggregation, ColumnAggregation, Count, Definition

if TYPE_CHECKING:  # the engines load Polars (and Spark) only when a table is prepared
    from securedp.engines.protocol import ColumnSpec

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


def _engine_specs(columns: list[Column], schema: dict[str, str]) -> list[ColumnSpec]:
    from securedp.engines.protocol import ColumnSpec

    squares = {c.index for c in columns if c.aggregation.reads == "squares"}
    specs: dict[int, ColumnSpec] = {}
    for c in columns:
        specs.setdefault(c.index, ColumnSpec(c.aggregation.column, c.step, c.lo_u, c.hi_u, c.index in squares,
                                             schema.get(c.aggregation.column) == "int", c.derivation))
    return [specs[i] for i in range(len(specs))]


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
    from securedp.engines.polars.pieces import memory_budget as budget_bytes
    from securedp.engines.protocol import drops_missing_keys

    drop_keys = drops_missing_keys(missing_keys)
    budget = budget_bytes(memory_budget)
    declared = declared_schema(schema)
    aggregations = aggregation_list(aggregations)
    texts = [a.column for a in aggregations if isinstance(a, ColumnAggregation) and declared.get(a.column) == "text"]
    if texts:
        raise ValueError(f"column {texts[0]!r} is declared 'text' in schema=: an aggregated column holds numbers "
                         "('int' or 'number')")
    priced = price_table(group_by=group_by, aggregations=aggregations, keys=keys, max_groups=max_groups,
                         max_rows=max_rows, epsilon=epsilon, rho=rho, delta=delta, selection=selection,
                         selection_share=selection_share, alpha=alpha,
                         integer_columns=integer_columns(data, [a.column for a in aggregations
                                                                if isinstance(a, ColumnAggregation)], declared))
    if id_column == "":
        raise ValueError("id_column='' names no column: give the person column a name, or leave id_column out "
                         "(each row is then its own person)")
    if id_column is not None and id_column in priced.group_by:
        raise ValueError(f"id_column {id_column!r} is also a group_by column: each person would be their own "
                         "group; group by another column")
    from securedp.engines.protocol import refuse_reserved
    refuse_reserved([*priced.group_by, *([id_column] if id_column is not None else []),
                     *(a.column for a in priced.aggregations if isinstance(a, ColumnAggregation))])
    cost, k, m, level, group_by = priced.cost, priced.k, priced.m, priced.alpha, priced.group_by
    aggregations, private, rule, dlt, shares = (priced.aggregations, priced.private, priced.rule,
                                                priced.delta_charged, priced.shares)
    columns, defined, plan, selection_noise = priced.columns, priced.defined, priced.selection, priced.selection_noise
    thresholded = priced.thresholded
    from securedp.bounding.digest import draw_salt
    from securedp.engines.keys import public_keys
    from securedp.engines.protocol import Bounds
    from securedp.engines.registry import check_engine, engine_for

    public = public_keys(keys, group_by) if not private and group_by else None
    stated = dataclasses.replace(priced.plan(), notes=tuple(plan_notes(id_column)))
    mean_bounds = {c.aggregation.name: (c.lo_u * c.step, c.hi_u * c.step) for c in columns}

    for c in columns:
        check_missing_policy(c.step, c.lo_u, c.hi_u, missing, fill)
    specs = _engine_specs(columns, declared)
    check_engine(data, specs)
    reading_data()  # every public input is checked above; the table is read from here on
    missing = data_policy(missing)[0]  # analyst-facing: "raise" acts as "drop"
    bounds = Bounds(group_by, k, m, analyst_facing(), drop_keys, declared, budget)
    engine = engine_for(data, id_column, bounds, specs, public, missing, fill)
    same_rows = bool(specs) and specs[0].keeps_every_row("drop" if analyst_facing() else missing)

    def execution(source: RandomSource) -> Execution:
        """One execution: the salt first, then step (1), selection and noise; its own input commitment."""
        salt = draw_salt(source)
        aggregates = Aggregates(engine, columns, salt, same_rows=same_rows)
        counted = aggregates.counts
        committed = commitment_parts("", counted)
        cells = cells_of(counted, engine.public, group_by)
        extra: dict[str, list[Any]] = {}
        given: dict[str, CellColumn] = {}
        if plan is not None and thresholded is not None:
            assert isinstance(plan, (LaplaceThreshold, GaussianThreshold))  # the rule "count" thresholds
            keep, given[thresholded] = threshold_cells(defined[thresholded], plan, cells, counted, source, level)
            cells = cells.subset(np.flatnonzero(keep))
        elif plan is not None:
            persons = np.array([counted.persons[i] for i in cells.index], dtype=np.int64)
            if isinstance(plan, (LaplaceThreshold, GaussianThreshold)):
                chosen = plan.select(persons, source)
                keep = chosen.keep
                extra["persons"] = [int(v) for v in np.asarray(chosen.noisy)[keep]]
            else:
                keep = plan.select(persons, source)
            cells = cells.subset(np.flatnonzero(keep))
        names, rows, steps = release_cells(cells, counted, aggregates, columns, aggregations, defined,
                                           selection_noise, level, source, extra, group_by, committed, given)
        parameters: dict[str, Any] = {
            "group_by": list(group_by), "keys": "private" if private else "public", "max_groups": k,
            "max_rows": m, "privacy_unit": id_column or "row", "alpha": level, "shares": dict(shares),
            "salt_commitment": hashlib.sha256(salt).hexdigest(),
        }
        if plan is not None and rule is not None:
            parameters["selection"] = rule
            parameters["delta"] = dlt
            if isinstance(plan, (LaplaceThreshold, GaussianThreshold)) and not asked_delta():
                parameters["delta_asked"] = plan.delta  # the threshold's; it charges the delta it proves
            if isinstance(plan, (LaplaceThreshold, GaussianThreshold)):
                parameters["threshold"] = plan.threshold
            if thresholded is not None:
                assert isinstance(plan, (LaplaceThreshold, GaussianThreshold))  # the rule "count" thresholds
                parameters.update(selection_count=thresholded, delta_per_key=plan.delta_per_key)
            if isinstance(plan, GaussianThreshold):
                parameters.update({} if thresholded is not None else
                                  {"selection_rho": plan.rho, "selection_variance": plan.variance})
                parameters["guarantee"] = GUARANTEE
        parameters.update(noise_records(columns, aggregations, defined, level))
        notes = (*stated.notes, *release_notes(stated, names, rows, group_by, mean_bounds, dlt))
        release = TableRelease(value=tuple(rows), statistic="table", mechanism=Law.of(cost.currency).value,
                               parameters=parameters, epsilon=cost.epsilon, rho=cost.rho, max_contributions=k * m,
                               labels=tuple(names), source=source.describe(),
                               output=lambda: engine.output(names, rows, steps), delta=dlt, notes=notes)
        return Execution(release, lambda: encode_input("table", committed))

    return PreparedTable("table", cost.epsilon, cost.rho, lambda source: execution(source).release, None,
                         delta=dlt, shares=shares, cells=dict(defined), plan=stated, execution=execution)


TABLE_DOC = """Release a grouped table: :func:`prepare_table`, then ``.execute(rng)``.

``rng`` is the random source (default: the system CSPRNG; a :class:`~securedp.ChaChaSource` replays).
"""
table = release_function(prepare_table, "table", TABLE_DOC, TableRelease)
