"""``securedp release --dry-run`` of a table with ``COLUMN:auto`` bounds: the plan before anything is drawn.

The bounds of an auto column are a release of their own (:func:`securedp.cli.table_command.release_table` charges
and logs one per column, at ``--auto-epsilon``, before the table), so their values are unknown before the run.
The plan states what does not depend on them, exactly as a plan with public bounds states it (the cost, the
count's and the persons' half-widths, the selection of private keys), the bounds releases' own cost and the cost
of the whole run, and names each output whose accuracy waits for its bounds.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from typing import Any

from securedp.cli.pipeline import Failure
from securedp.hazmat.exact.rational import display_rational, positive_rational
from securedp.tables.query import Query as TableQuery


def auto_cost(args: argparse.Namespace, query: TableQuery) -> Any:
    """The exact epsilon of one auto column's bounds release (``--auto-epsilon``), refused when not given."""
    auto = [a for a in query.aggregations if a.auto]
    if args.auto_epsilon is None:
        raise Failure(f"--{auto[0].kind} {auto[0].column}:auto chooses its bounds privately, a release of its own: "
                      "give its cost with --auto-epsilon E (charged once per auto column, before the table)")
    return positive_rational(args.auto_epsilon, "--auto-epsilon")


def auto_dry_run(args: argparse.Namespace, query: TableQuery, data: Callable[[], Any], rows: list[int],
                 placeholder: TableQuery) -> list[str]:
    """The dry run's lines for ``query`` with auto columns (``placeholder``: the query with stand-in bounds,
    :func:`securedp.cli.table_command.placeholder_bounds`); ``rows``: the row counts a mean's width is stated at."""
    if args.target:
        raise Failure("--target plans from public bounds: give COLUMN:LO,HI for the auto columns")
    epsilon = auto_cost(args, query)
    columns = list(dict.fromkeys(a.column for a in query.aggregations if a.auto and a.column is not None))
    waiting = [stand_in.build().name for a, stand_in in zip(query.aggregations, placeholder.aggregations, strict=True)
               if a.auto]
    plan = placeholder.prepare_table(data()).plan  # the columns and cells, read and checked as the table reads them
    assert plan is not None
    known = dataclasses.replace(plan, outputs=[o for o in plan.outputs if o.name not in waiting])
    bounds_cost = epsilon * len(columns)
    if query.epsilon is not None:
        whole = f"the whole run costs epsilon {display_rational(bounds_cost + query.epsilon)}"
    else:
        whole = f"the whole run costs epsilon {display_rational(bounds_cost)} and the table's rho"
    lines = known.lines(rows)
    lines.insert(1, f"bounds   {', '.join(columns)}: chosen privately before the table, a release of its own per "
                    f"column at epsilon {display_rational(epsilon)} (--auto-epsilon), charged and logged; {whole}")
    for name in waiting:
        lines.append(f"  {name}: its accuracy depends on the bounds chosen (stated once they are, in the run's "
                     "record; give COLUMN:LO,HI to plan it now)")
    return ["table: dry run, nothing drawn, nothing charged, no audit record", *(f"  {line}" for line in lines)]
