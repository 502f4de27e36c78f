"""Planning a release: how to bound each person's contributions, and which clamping bounds to use.

* :func:`analyze_contributions` (:mod:`securedp.planning.contributions`): the distribution of groups per
  person and of rows per (person, group), and for candidate ``(max_groups, max_rows)`` pairs the rows and
  persons kept by the bounding of :func:`securedp.prepare_table` and the predicted error per cell; with
  ``epsilon=`` the same report from a differentially private contribution histogram.
* :func:`private_bounds` (:mod:`securedp.planning.bounds`): clamping bounds chosen privately from one column.
* :func:`least_budget` and :func:`largest_bound` (:mod:`securedp.planning.budget`): the least epsilon (or
  rho) on a rational grid that meets target half-widths, and the largest ``max_rows``/``max_groups`` a
  budget affords, from the public parameters alone.

The package sits beside :mod:`securedp.session` (layer 5): it prepares releases with the mechanisms and
the tables' reader below it, and charges them to a :class:`securedp.Session` when given one.
"""

from securedp.planning.auto import auto_bounds
from securedp.planning.bounds import prepare_private_bounds, private_bounds
from securedp.planning.budget import BoundPlan, BudgetPlan, largest_bound, least_budget
from securedp.planning.contributions import (
    Candidate,
    ContributionReport,
    ReportPlan,
    analyze_contributions,
    prepare_contribution_histogram,
)

__all__ = [
    "BoundPlan",
    "BudgetPlan",
    "Candidate",
    "ContributionReport",
    "ReportPlan",
    "analyze_contributions",
    "auto_bounds",
    "largest_bound",
    "least_budget",
    "prepare_contribution_histogram",
    "prepare_private_bounds",
    "private_bounds",
]
