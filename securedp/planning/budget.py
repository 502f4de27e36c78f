"""The least budget that meets a target accuracy, and the largest bound a budget affords, exactly.

A table's accuracy is stated before anything is read (:attr:`PreparedTable.plan
<securedp.tables.table.PreparedTable.plan>`, from :func:`securedp.tables.pricing.price_table`), so it
can be searched without the data. A **target** names an output and the half-width it may have at
level ``1 - alpha``, in the column's own units:

* ``"count"``, ``"income_sum"``: the half-width of the released interval (``value -/+`` it);
* ``"age_mean"``, ``"age_variance"``: the half-width of the released mean (variance) in the column's units
  (squared) in a cell that keeps ``cell_rows`` rows (default :data:`CELL_ROWS`): the error depends on the
  cell's true count, which is private, so the target holds at that count and at any larger one
  (:meth:`~securedp.mechanisms.mean.Mean.value_halfwidth`);
* ``"age_mean.count"``, ``"age_mean.centred_sum"`` (and a variance's moments): one noisy integer of a
  mean or variance;
* ``"age_median"``: the rank error bound, in rows;
* ``"keys"`` (private keys): the persons a key needs for a 1/2 chance of release (``"keys.95"``: for a
  19/20 chance), the least ``n`` the plan proves (:attr:`~securedp.tables.plan.SelectionPlan.needed`;
  rows when a count of rows selects the keys).

Every stated half-width is non-increasing in the budget (a scale ``k s / epsilon``, a variance
``k s**2 / (2 rho)``, a rank bound ``ln(|Y| / alpha) / (rate b)`` with ``rate`` proportional to the cell's
epsilon, each rounded outward, and a mean's ``(half t_n + t_s) / (n - t_n)`` with them) and non-decreasing
in ``max_rows`` and ``max_groups`` (the sensitivities grow with them), and so are the persons a key needs
(its threshold ``s + t*`` falls as the noise shrinks), so
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

from securedp.bounding.limits import positive_count
from securedp.hazmat.exact.rational import display_rational, positive_rational
from securedp.hazmat.exact.search import least_holding
from securedp.tables.plan import TablePlan
from securedp.tables.pricing import TableParameters, price_table

CELL_ROWS = 1000
"""The row count of a cell at which a target on a mean or a variance is planned unless one is given."""


@dataclass(frozen=True)
class BudgetPlan:
    """The least grid point meeting every target, with the plan there and one grid step below."""

    currency: str
    amount: Fraction
    grid: Fraction
    plan: TablePlan
    below: TablePlan | None
    """The plan at ``amount - grid`` (it misses a target), or ``None`` when ``amount`` is the first point."""
    cell_rows: int = CELL_ROWS
    """The row count of a cell at which the targets on a mean or a variance hold."""


@dataclass(frozen=True)
class BoundPlan:
    """The largest ``max_rows`` (or ``max_groups``) meeting every target at the given budget."""

    bound: str
    value: int
    plan: TablePlan
    above: TablePlan | None
    """The plan at ``value + 1``, which misses a target; ``None`` when ``value`` is the search's limit."""
    cell_rows: int = CELL_ROWS
    """The row count of a cell at which the targets on a mean or a variance hold."""


def stated(plan: TablePlan, target: str, cell_rows: int = CELL_ROWS) -> Fraction:
    """The half-width (or rank error bound) ``plan`` states for ``target`` (see the module docstring); a
    mean's or a variance's own in a cell of ``cell_rows`` rows."""
    name, _, part = target.partition(".")
    if name == "keys":
        levels = {"": Fraction(1, 2), "95": Fraction(19, 20)}
        if plan.selection is None or part not in levels:
            raise ValueError(f"target {target!r}: " + ("the keys are public: no key needs persons"
                                                        if plan.selection is None else "name keys or keys.95"))
        return Fraction(plan.selection.needed[levels[part]])
    for output in plan.outputs:
        if output.name == name:
            if output.rank_error_bound is not None:
                return Fraction(output.rank_error_bound)
            if part == "" and output.value_halfwidth is not None:
                return output.value_halfwidth(cell_rows)
            if part in output.halfwidths:
                return output.halfwidths[part]
            raise ValueError(f"target {target!r}: {name} has no {part!r}; it states {name} and "
                             f"{', '.join(f'{name}.{k}' for k in output.halfwidths)}")
    raise ValueError(f"target {target!r}: no output named {name!r} (the table has "
                     f"{[o.name for o in plan.outputs]})")


def _targets(targets: Mapping[str, Any]) -> dict[str, Fraction]:
    if not targets:
        raise ValueError("give at least one target, e.g. {'count': 50}")
    return {name: positive_rational(width, f"target {name}") for name, width in targets.items()}


def meets(plan: TablePlan, targets: Mapping[str, Fraction], cell_rows: int = CELL_ROWS) -> bool:
    """Whether every target's stated half-width is at most its width."""
    return all(stated(plan, name, cell_rows) <= width for name, width in targets.items())


def least_budget(targets: Mapping[str, Any], *, currency: str = "epsilon", grid: Any = "1/100",
                 most: Any = 100, cell_rows: Any = CELL_ROWS, **query: Any) -> BudgetPlan:
    """The smallest ``epsilon`` (or ``rho``) ``j * grid``, up to ``most``, at which the table ``query``
    (the public arguments of :func:`~securedp.prepare_table`, without its cost) states every target, a
    mean's or a variance's in a cell of ``cell_rows`` rows.

    Raises if no grid point up to ``most`` meets them. Reads no data, draws nothing, charges nothing.
    """
    rows = positive_count(cell_rows, "cell_rows")
    if currency not in ("epsilon", "rho"):
        raise ValueError(f"currency must be 'epsilon' or 'rho', got {currency!r}")
    if "epsilon" in query or "rho" in query:
        raise TypeError("the planner chooses the budget: give the query without epsilon= or rho=")
    wanted, step = _targets(targets), positive_rational(grid, "grid")
    ceiling = positive_rational(most, "most")
    limit = int(ceiling / step)
    plans: dict[int, TablePlan] = {}

    def plan_at(j: int) -> TablePlan:
        if j not in plans:
            cost: dict[str, Any] = {"epsilon": j * step} if currency == "epsilon" else {"rho": j * step}
            plans[j] = _plan(query, cost)
        return plans[j]

    for name in wanted:  # an unknown target is refused before the search
        stated(plan_at(max(limit, 1)), name, rows)
    j = least_holding(lambda i: meets(plan_at(i), wanted, rows), 1, limit)
    if j is None:
        raise ValueError(f"no {currency} up to {display_rational(ceiling)} on the grid "
                         f"{display_rational(step)} meets every target; relax a target, or raise the most you "
                         "would spend")
    return BudgetPlan(currency, j * step, step, plan_at(j), plan_at(j - 1) if j > 1 else None, rows)


def largest_bound(targets: Mapping[str, Any], *, bound: str = "max_rows", limit: int = 10_000,
                  cell_rows: Any = CELL_ROWS, **query: Any) -> BoundPlan:
    """The largest ``max_rows`` (or ``max_groups``), up to ``limit``, at which the table ``query`` (with its
    budget) states every target, a mean's or a variance's in a cell of ``cell_rows`` rows. Raises if even 1
    misses one. Reads no data."""
    rows = positive_count(cell_rows, "cell_rows")
    if bound not in ("max_rows", "max_groups"):
        raise ValueError(f"bound must be 'max_rows' or 'max_groups', got {bound!r}")
    if bound in query:
        raise TypeError(f"the planner chooses {bound}: give the query without it")
    wanted = _targets(targets)
    plans: dict[int, TablePlan] = {}

    def plan_at(value: int) -> TablePlan:
        if value not in plans:
            bounds: dict[str, Any] = {"max_rows": value} if bound == "max_rows" else {"max_groups": value}
            plans[value] = _plan(query, bounds)
        return plans[value]

    if not meets(plan_at(1), wanted, rows):
        raise ValueError(f"even {bound}=1 misses a target at this budget: relax a target or spend more")
    # the least value that misses, searched on value - 1 so that the predicate is "misses"
    first_miss = least_holding(lambda i: not meets(plan_at(i + 1), wanted, rows), 1, limit)
    if first_miss is None:
        return BoundPlan(bound, limit, plan_at(limit), None, rows)
    return BoundPlan(bound, first_miss, plan_at(first_miss), plan_at(first_miss + 1), rows)


def _plan(query: dict[str, Any], chosen: dict[str, Any]) -> TablePlan:
    """The plan of the table ``query`` (the public arguments of :func:`~securedp.tables.pricing.price_table`,
    its ``typed_steps`` among them if given: :func:`securedp.reading.types.typed_steps`) with the planner's ``chosen``
    cost or bound."""
    public = {name: value for name, value in query.items() if name != "typed_steps"}
    return price_table(TableParameters(**public, **chosen), query.get("typed_steps")).plan()
