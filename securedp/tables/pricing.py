"""A table query priced from its public parameters alone: shares, statistics, partition selection.

:func:`price_table` validates everything a table release takes that is not data (the cost, the
bounds per person, the aggregations and their shares of the budget, the keys' mode, the partition
selection rule and its threshold) and returns a :class:`PricedTable`. :func:`securedp.tables.table.prepare_table`
prices its query with it before it reads a row, and :func:`securedp.tables.plan.plan_table` and the
epsilon planner use it without any data at all.

**Private keys.** A table with private keys selects them by one of :data:`SELECTION_RULES`:

* ``"count"`` (the default when the table releases a count): the keys are selected by thresholding the
  count the table releases (its :class:`~securedp.tables.spec.Persons` if it has one, else its
  :class:`~securedp.tables.spec.Count`): the count's noise is drawn once, at the count's whole share,
  and a key is kept iff its noisy count reaches the threshold ``tau``
  (:func:`~securedp.mechanisms.partition_selection.laplace_threshold` at ``epsilon``,
  :func:`~securedp.mechanisms.gaussian_threshold.gaussian_threshold` at ``rho``, with the count's
  cell sensitivity); the released count of a kept key is the noisy count that passed. No budget goes
  to a separate selection;
* ``"laplace"``, ``"optimal"`` (``epsilon``) and ``"gaussian"`` (``rho``): a separate selection on a
  noisy count of each key's distinct persons at its own share ``selection_share`` of the budget
  (``1/2`` by default). This is the default of a table that releases no count, or of one given
  ``selection_share=``.

**Budget.** The total ``epsilon`` (or ``rho``) is split across the aggregations (and a separate
partition selection, ``selection_share``) in exact rational shares: an aggregation's ``share=`` fixes
its fraction of the total, and the rest is divided equally among those without one; the shares must
add up to exactly 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from securedp.bounding.contributions import positive_count
from securedp.engines.protocol import group_columns
from securedp.hazmat.exact.rational import to_rational
from securedp.mechanisms import count
from securedp.mechanisms.gaussian_threshold import GaussianThreshold, gaussian_threshold
from securedp.mechanisms.partition_selection import (
    LaplaceThreshold,
    laplace_threshold,
    optimal_selection,
)
from securedp.privacy.accuracy import check_alpha
from securedp.privacy.cost import Cost
from securedp.privacy.noise import Law, Noise
from securedp.reading.columns import check_ordered
from securedp.tables.cells import CellNoise, Column, definitions
from securedp.tables.plan import Selection, TablePlan, selection_plan, table_plan
from securedp.tables.spec import Aggregation, ColumnAggregation, Count, Definition, Histogram, Persons

SELECTION_RULES = ("count", "laplace", "optimal", "gaussian")
"""Partition selection rules: ``"count"`` thresholds the count the table releases (either currency); the
others select on a separate count of persons, ``"laplace"`` and ``"optimal"`` priced in ``epsilon``,
``"gaussian"`` in ``rho``."""

@dataclass(frozen=True)
class PricedTable:
    """A table query's public parameters, validated and priced (see the module docstring)."""

    cost: Cost
    k: int
    m: int
    alpha: Fraction
    group_by: list[str]
    aggregations: list[Aggregation]
    private: bool
    rule: str | None
    delta: Fraction | None
    shares: dict[str, Fraction]
    columns: list[Column]
    defined: dict[str, Definition]
    selection: Selection | None
    selection_noise: Noise | None
    """The law of a separate threshold selection's noisy person counts (``selection_persons``), else ``None``."""
    thresholded: str | None = None
    """Rule ``"count"``: the name of the aggregation whose released count selects the keys."""

    @property
    def delta_charged(self) -> Fraction | None:
        """The ``delta`` the release charges: a thresholding plan's ``delta_spent`` (what its threshold proves,
        :mod:`securedp.mechanisms.threshold_delta`), else the ``delta`` asked (the optimal rule spends it)."""
        if isinstance(self.selection, (LaplaceThreshold, GaussianThreshold)):
            return self.selection.delta_spent
        return self.delta

    @property
    def cell_noise(self) -> CellNoise:
        """The public side of the release's noise step (:func:`~securedp.tables.cells.release_cells`)."""
        return CellNoise(self.group_by, self.columns, self.aggregations, self.defined, self.alpha,
                         self.selection_noise)

    def per_person_selection(self) -> Selection | None:
        """Rule ``"count"`` on a count of rows (cell sensitivity ``max_rows > 1``): the separate selection on
        distinct persons (sensitivity 1) the table could name instead, at the default share 1/2 of the budget
        (``selection="optimal"`` in epsilon, ``"gaussian"`` in rho), as :func:`price_table` would plan it; else
        ``None``. From the public parameters alone: the plan states it where it needs fewer persons
        (:attr:`~securedp.tables.plan.SelectionPlan.cheaper`)."""
        counted = self.selection
        if (self.rule != "count" or self.delta is None or not isinstance(counted, (LaplaceThreshold, GaussianThreshold))
                or counted.sensitivity <= 1):
            return None
        half = self.cost.share(Fraction(1, 2))
        try:
            if half.epsilon is not None:
                return optimal_selection(half.epsilon, self.delta, self.k)
            assert half.rho is not None  # a cost is priced in exactly one currency
            return gaussian_threshold(half.rho, self.delta, self.k)
        except ValueError:  # no threshold at that budget: nothing cheaper to name
            return None

    def plan(self) -> TablePlan:
        """What the release will state before it draws (:mod:`securedp.tables.plan`)."""
        charged = self.delta_charged
        selected = (None if self.selection is None or self.rule is None or charged is None
                    else selection_plan(self.rule, self.selection, charged, counted=self.thresholded,
                                        cheaper=self.per_person_selection()))
        return table_plan(self.aggregations, self.defined, self.alpha, self.cost.epsilon, self.cost.rho,
                          self.shares, selected)


def aggregation_list(aggregations: Any) -> list[Aggregation]:
    """``aggregations`` as a list: a sequence of at least one aggregation (one given alone is refused in words,
    naming the list it should have been)."""
    if isinstance(aggregations, (Count, Persons, ColumnAggregation)):
        raise TypeError(f"aggregations must be a list of aggregations, not one: aggregations=[{aggregations!r}]")
    check_ordered(aggregations, "aggregations", f"a list of aggregations, not {type(aggregations).__name__}")
    listed = list(aggregations)
    if not listed:
        raise ValueError("give at least one aggregation")
    for a in listed:
        if not isinstance(a, (Count, Persons, ColumnAggregation)):
            raise TypeError(f"not an aggregation: {a!r}")
    return listed


@dataclass(frozen=True)
class TableParameters:
    """The public parameters of a table query, as given (the arguments of
    :func:`~securedp.tables.table.prepare_table` that are neither data nor how it is read); checked by
    :func:`price_table`."""

    group_by: Sequence[str] | str = ()
    aggregations: Sequence[Aggregation] = (Count(),)
    keys: Any = None
    max_groups: Any = 1
    max_rows: Any = 1
    epsilon: Any = None
    rho: Any = None
    delta: Any = None
    selection: str | None = None
    selection_share: Any = None
    alpha: Any = "0.05"


def price_table(parameters: TableParameters, typed_steps: Mapping[str, Fraction] | None = None) -> PricedTable:
    """Validate and price a table query's public ``parameters`` (the arguments of
    :func:`~securedp.tables.table.prepare_table` that are not data); raises before anything is read.

    ``typed_steps``: the grid each value column's declared type states (1 for integers, ``10**-s`` for a decimal
    of scale ``s``: :func:`securedp.reading.types.typed_steps`, read from the table's schema); an aggregation of
    one without a lattice takes that step (:func:`~securedp.mechanisms.records.typed_lattice`), as the
    one-column release of the same column does."""
    p = parameters
    group_by, keys, selection, selection_share, delta = p.group_by, p.keys, p.selection, p.selection_share, p.delta
    cost = Cost.of(p.epsilon, p.rho)
    k, m = positive_count(p.max_groups, "max_groups"), positive_count(p.max_rows, "max_rows")
    level = check_alpha(p.alpha)
    group_by = group_columns(group_by)
    aggregations = aggregation_list(p.aggregations)
    twice = sorted({c for c in group_by if group_by.count(c) > 1}, key=str)
    if twice:
        raise ValueError(f"group_by names column(s) {twice} more than once: name each group column once")
    steps = dict(typed_steps or {})
    aggregations = [a.typed(steps.get(a.column)) if isinstance(a, ColumnAggregation) else a
                    for a in aggregations]
    if keys is not None and not group_by:
        raise ValueError("keys= lists the public values of the group_by columns; without group_by there is one "
                         "cell and no key: drop keys=, or give group_by=")
    private = keys is None and bool(group_by)  # without group_by: one cell, always released
    if selection is not None and selection not in SELECTION_RULES:
        raise ValueError(f"selection must be one of {SELECTION_RULES}, got {selection!r}")
    counted = threshold_count(aggregations)
    rule = _selection_rule(selection, cost, counted, selection_share is not None) if private else None
    dlt = None
    if private:
        if delta is None:
            raise ValueError("private keys need delta= (partition selection is (epsilon, delta)-DP, or "
                             "delta-approximate rho-zCDP); or pass the public keys with keys=")
        dlt = to_rational(delta, "delta")
    elif delta is not None:
        raise ValueError("delta= is only used to select private keys; with public keys= the release is pure")
    shares = _shares(aggregations, private and rule != "count", selection_share)

    def part(name: str) -> Cost:
        return cost.share(shares[name])

    defined = definitions(aggregations, part, k, m)
    plan: Selection | None = None
    noise = None
    if private and dlt is not None and rule == "count":
        assert counted is not None  # _selection_rule: the count rule needs a count
        plan = _count_threshold(defined[counted.name], dlt, k)
    elif private and dlt is not None:
        chosen = part("partition_selection")
        noise = Noise.of(1, chosen, k)
        plan = (gaussian_threshold(chosen.rho, dlt, k) if rule == "gaussian"
                else laplace_threshold(chosen.epsilon, dlt, k) if rule == "laplace"
                else optimal_selection(chosen.epsilon, dlt, k))
    return PricedTable(cost, k, m, level, group_by, aggregations, private, rule, dlt, shares,
                       _columns(aggregations), defined, plan, noise,
                       counted.name if rule == "count" and counted is not None else None)


def threshold_count(aggregations: Sequence[Aggregation]) -> Count | Persons | None:
    """The count whose release selects private keys under the rule ``"count"``: the first
    :class:`~securedp.tables.spec.Persons` (cell sensitivity 1), else the first
    :class:`~securedp.tables.spec.Count` (sensitivity ``max_rows``), else ``None``."""
    persons = [a for a in aggregations if isinstance(a, Persons)]
    counts = [a for a in aggregations if isinstance(a, Count)]
    return (persons or counts or [None])[0]


def _count_threshold(definition: Definition, delta: Fraction, k: int) -> LaplaceThreshold | GaussianThreshold:
    """The threshold plan of the released count ``definition``: its own noise law, so one draw serves both."""
    assert isinstance(definition, count.Count)  # Count and Persons define count.Count (or its subclass)
    noise = definition.noise
    try:
        plan = (laplace_threshold(noise.amount, delta, k, noise.sensitivity) if noise.law is Law.LAPLACE
                else gaussian_threshold(noise.amount, delta, k, noise.sensitivity))
    except ValueError as error:
        raise ValueError(f"thresholding the released {definition.statistic}: {error}; or select the keys on a "
                         "separate count of persons (selection='laplace' or 'gaussian')") from None
    assert plan.noise == noise  # one law: the released count's
    return plan


def _shares(aggregations: Sequence[Aggregation], private: bool, selection_share: Any) -> dict[str, Fraction]:
    given: dict[str, Fraction | None] = {}
    if private:
        given["partition_selection"] = (Fraction(1, 2) if selection_share is None
                                        else to_rational(selection_share, "selection_share"))
    for a in aggregations:
        if a.name in given:
            raise ValueError(f"two aggregations are both named {a.name!r}")
        given[a.name] = None if a.share is None else to_rational(a.share, f"{a.name} share")
    fixed = sum((v for v in given.values() if v is not None), Fraction(0))
    free = [n for n, v in given.items() if v is None]
    if any(v is not None and not 0 < v <= 1 for v in given.values()):
        raise ValueError("every share must lie in (0, 1]")
    if free and fixed >= 1:
        raise ValueError(f"the given shares already add up to {fixed}: nothing is left for {free}")
    shares = {n: (v if v is not None else (1 - fixed) / len(free)) for n, v in given.items()}
    if sum(shares.values()) != 1:
        raise ValueError(f"the shares must add up to exactly 1, not {sum(shares.values())}")
    return shares


def _columns(aggregations: Sequence[Aggregation]) -> list[Column]:
    """The value-column aggregations; those on the same column, lattice and bounds share one engine column."""
    columns: list[Column] = []
    specs: dict[tuple[Any, ...], int] = {}
    for a in aggregations:
        if isinstance(a, ColumnAggregation):
            lattice = a.lattice_column()
            step, lo_u, hi_u = lattice.lattice.step, lattice.lo_u, lattice.hi_u
            if max(abs(lo_u), abs(hi_u)) >= 1 << 62:
                raise ValueError(f"{a.name}: the bounds reach 2**62 lattice units; choose a coarser lattice")
            derivation = a.derivation() if isinstance(a, Histogram) else None
            index = specs.setdefault((a.column, step, lo_u, hi_u, derivation), len(specs))
            columns.append(Column(a, step, lo_u, hi_u, index, derivation))
    return columns


def _selection_rule(selection: str | None, cost: Cost, counted: Aggregation | None, share_given: bool) -> str:
    """The partition selection rule of a table with private keys: the given one, if the table allows it; by
    default ``"count"`` when the table releases a count and no ``selection_share`` is given, else the
    separate rule of the currency."""
    if selection == "count":
        if counted is None:
            raise ValueError("selection='count' thresholds the count the table releases: add Count() or Persons() "
                             "to the aggregations, or select on a separate count (selection='laplace', 'optimal' "
                             "or 'gaussian')")
        if share_given:
            raise ValueError("selection='count' spends no separate share on selection: drop selection_share=, or "
                             "select on a separate count (selection='laplace', 'optimal' or 'gaussian')")
        return "count"
    if selection is None and counted is not None and not share_given:
        return "count"
    if cost.epsilon is None:
        if selection not in (None, "gaussian"):
            raise ValueError(f"selection={selection!r} is priced in epsilon; a rho table selects its private keys "
                             "by Gaussian thresholding (selection='gaussian', its default)")
        return "gaussian"
    if selection == "gaussian":
        raise ValueError("selection='gaussian' is priced in rho (zCDP); an epsilon table selects its private keys "
                         "with 'laplace' (the default) or 'optimal'")
    return selection or "laplace"
