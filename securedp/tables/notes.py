"""When a table will not be useful, said plainly: before the draw from the query, after it from the release.

Each note is a sentence for the person who asked, never an error: the release is made (or planned)
as asked. Notes before the draw (:func:`plan_notes`) read only the public query; notes after it
(:func:`release_notes`) read only what was released (noisy values and their stated bounds), so they
are post-processing and reveal nothing more than the release itself:

* the privacy unit is one row (no ``id_column``): a person with several rows is protected only for
  one of them;
* a quantile's rank error bound (at level ``1 - alpha``) is at least the cell's noisy size: the
  selection there is mostly noise;
* a mean's interval spans the whole public bounds: the cell says nothing the bounds did not;
* with private keys, ``delta`` is not small against ``1 / n`` for the released total ``n``: a common
  rule of thumb asks ``delta`` to be far below ``1 / n``, so that no single person is likely exposed.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from securedp.tables.plan import TablePlan


def plan_notes(id_column: str | None) -> list[str]:
    """The notes a query earns before anything is read."""
    if id_column is None:
        return ["the privacy unit is one row (no id column): a person with several rows is protected "
                "for one of them only; name the person column to protect whole persons"]
    return []


def release_notes(plan: TablePlan, names: Sequence[str], rows: Sequence[Sequence[Any]], group_by: Sequence[str],
                  bounds: dict[str, tuple[Fraction, Fraction]], delta: Fraction | None) -> list[str]:
    """The notes of a released table, from its released rows alone (see the module docstring)."""
    position = {name: i for i, name in enumerate(names)}
    size = position.get("count", position.get("selection_persons"))
    notes: list[str] = []

    def cell(row: Sequence[Any]) -> str:
        return ", ".join(f"{c}={row[position[c]]}" for c in group_by) or "the table"

    for output in plan.outputs:
        if output.rank_error_bound is not None and size is not None:
            thin = [row for row in rows if output.rank_error_bound >= row[size]]
            if thin:
                notes.append(f"{output.name}: the rank error bound ({output.rank_error_bound} rows at level "
                             f"1 - {plan.alpha}) is at least the noisy size of {len(thin)} cell(s), first "
                             f"{cell(thin[0])}: the selection there is mostly noise")
        low, high = position.get(f"{output.name}_low"), position.get(f"{output.name}_high")
        if output.statistic == "mean" and low is not None and high is not None and output.name in bounds:
            lo, hi = bounds[output.name]
            wide = [row for row in rows if row[low] <= lo and row[high] >= hi]
            if wide:
                notes.append(f"{output.name}: the interval spans the whole bounds [{lo}, {hi}] in {len(wide)} "
                             f"cell(s), first {cell(wide[0])}: those means say nothing the bounds did not")
    if delta is not None and size is not None:
        total = sum(max(int(row[size]), 0) for row in rows)
        if total > 0 and delta * total >= Fraction(1, 100):
            notes.append(f"delta {delta} is not small against 1/n for the released total n = {total} "
                         "(delta * n >= 1/100): consider a smaller --delta")
    return notes
