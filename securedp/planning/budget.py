"""The least budget that meets a target accuracy, and the largest bound a budget affords, exactly.

A table's accuracy is stated before anything is read (:attr:`PreparedTable.plan
<securedp.tables.table.PreparedTable.plan>`, from :func:`securedp.tables.pricing.price_table`), so it
can be searched without the data. A **target** names an output and the half-width it may have at
level ``1 - alpha``, in the column's own units:

* ``"count"``, ``"income_sum"``: the half-width of the released interval (``value -/+`` it);
* ``"age_mean.count"``, ``"age_mean.centred_sum"`` (and a variance's moments): one noisy integer of a
  mean or variance (the mean's own interval depends on the true count, so it is not a public number);
* ``"age_median"``: the rank error bound, in rows.

Every stated half-width is non-increasing in the budget (a scale ``k s / epsilon``, a variance
``k s**2 / (2 rho)``, a rank bound ``ln(|Y| / alpha) / (rate b)`` with ``rate`` proportional to the cell's
epsilon, each rounded outward) and non-decreasing in ``max_rows`` and ``max_groups`` (the sensitivities
grow with them), so
:func:`least_budget` finds the smallest point ``j * grid`` of a stated rational grid that meets every
target by exact comparisons (doubling, then bisection), and returns the plan there and the plan one grid
step below, which misses a target: the proof both ways. :func:`largest_bound` does the same for the
largest ``max_rows`` (or ``max_groups``) a given budget affords.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from securedp.hazmat.exact.rational import positive_rational
from securedp.hazmat.exact.search import least_holding
from securedp.tables.plan import TablePlan
from securedp.tables.pricing import price_table


@dataclass(frozen=True)
class BudgetPlan:
    """The least grid point meeting every target, with the plan there and one grid step below."""

    currency: str
    amount: Fraction
    grid: Fraction
    plan: TablePlan
    below: TablePlan | None
    """The plan at ``amount - grid`` (it misses a target), or ``None`` when ``amount`` is the first point."""


@dataclass(frozen=True)
class BoundPlan:
    """The largest ``max_rows`` (or ``max_groups``) meeting every target at the given budget."""

    bound: str
    value: int
    plan: TablePlan
    above: TablePlan | None
    """The plan at ``value + 1``, which misses a target; ``None`` when ``value`` is the search's limit."""


def stated(plan: TablePlan, target: str) -> Fraction:
    """The half-width (or rank error bound) ``plan`` states for ``target`` (see the module docstring)."""
    name, _, part = target.partition(".")
    for output in plan.outputs:
        if output.name == name:
            if output.rank_error_bound is not None:
                return Fraction(output.rank_error_bound)
            if part in output.halfwidths:
                return output.halfwidths[part]
            raise ValueError(f"target {target!r}: {name} states {sorted(k or name for k in output.halfwidths)}; "
                             f"name one as {name}.PART" if part == "" else f"{name} has no {part!r}")
    raise ValueError(f"target {target!r}: no output named {name!r} (the table has "
                     f"{[o.name for o in plan.outputs]})")


def _targets(targets: Mapping[str, Any]) -> dict[str, Fraction]:
    if not targets:
        raise ValueError("give at least one target, e.g. {'count': 50}")
    return {name: positive_rational(width, f"target {name}") for name, width in targets.items()}


def meets(plan: TablePlan, targets: Mapping[str, Fraction]) -> bool:
    """Whether every target's stated half-width is at most its width."""
    return all(stated(plan, name) <= width for name, width in targets.items())


def least_budget(targets: Mapping[str, Any], *, currency: str = "epsilon", grid: Any = "1/100",
                 most: Any = 100, **query: Any) -> BudgetPlan:
    """The smallest ``epsilon`` (or ``rho``) ``j * grid``, up to ``most``, at which the table ``query``
    (the public arguments of :func:`~securedp.prepare_table`, without its cost) states every target.

    Raises if no grid point up to ``most`` meets them. Reads no data, draws nothing, charges nothing.
    """
    if currency not in ("epsilon", "rho"):
        raise ValueError(f"currency must be 'epsilon' or 'rho', got {currency!r}")
    if "epsilon" in query or "rho" in query:
        raise TypeError("the planner chooses the budget: give the query without epsilon= or rho=")
    wanted, step = _targets(targets), positive_rational(grid, "grid")
    limit = int(positive_rational(most, "most") / step)
    plans: dict[int, TablePlan] = {}

    def plan_at(j: int) -> TablePlan:
        if j not in plans:
            cost: dict[str, Any] = {"epsilon": j * step} if currency == "epsilon" else {"rho": j * step}
            plans[j] = price_table(**query, **cost).plan()
        return plans[j]

    stated(plan_at(max(limit, 1)), next(iter(wanted)))  # an unknown target is refused before the search
    j = least_holding(lambda i: meets(plan_at(i), wanted), 1, limit)
    if j is None:
        raise ValueError(f"no {currency} up to {most} on the grid {step} meets every target; relax a target, "
                         "or raise the most you would spend")
    return BudgetPlan(currency, j * step, step, plan_at(j), plan_at(j - 1) if j > 1 else None)


def largest_bound(targets: Mapping[str, Any], *, bound: str = "max_rows", limit: int = 10_000,
                  **query: Any) -> BoundPlan:
    """The largest ``max_rows`` (or ``max_groups``), up to ``limit``, at which the table ``query`` (with its
    budget) states every target. Raises if even 1 misses one. Reads no data."""
    if bound not in ("max_rows", "max_groups"):
        raise ValueError(f"bound must be 'max_rows' or 'max_groups', got {bound!r}")
    if bound in query:
        raise TypeError(f"the planner chooses {bound}: give the query without it")
    wanted = _targets(targets)
    plans: dict[int, TablePlan] = {}

    def plan_at(value: int) -> TablePlan:
        if value not in plans:
            bounds: dict[str, Any] = {"max_rows": value} if bound == "max_rows" else {"max_groups": value}
            plans[value] = price_table(**query, **bounds).plan()
        return plans[value]

    if not meets(plan_at(1), wanted):
        raise ValueError(f"even {bound}=1 misses a target at this budget: relax a target or spend more")
    # the least value that misses, searched on value - 1 so that the predicate is "misses"
    first_miss = least_holding(lambda i: not meets(plan_at(i + 1), wanted), 1, limit)
    if first_miss is None:
        return BoundPlan(bound, limit, plan_at(limit), None)
    return BoundPlan(bound, first_miss, plan_at(first_miss), plan_at(first_miss + 1))
