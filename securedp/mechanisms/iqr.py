"""Private interquartile range: the 3/4-quantile minus the 1/4-quantile, each selected exactly.

**Definition.** The two quartiles are the quantiles ``1/4`` and ``3/4`` of
:mod:`securedp.mechanisms.quantile` (the exact exponential mechanism over the
lattice points of the public bounds, score
``g(y) = max(0, 4 L + min(a k, 4 c) - a n, a n - 4 E + min((4 - a) k, 4 c))`` for ``q = a / 4`` and the tie
margin ``c``,
sensitivity ``3 m`` for ``m = max_contributions``, rate
``epsilon / (2 * 3 m)``: :mod:`securedp.mechanisms.rank_utility`), each at
half the cost: ``epsilon / 2``
(basic composition: the pair is ``epsilon``-DP), or with ``rho`` each at the
``epsilon = j / 2**32`` whose sharp bounded-range zCDP is at most ``rho / 2``
(:func:`~securedp.mechanisms.selection_price.selection_epsilon`). The release is the
post-processing ``max(Q3 - Q1, 0)``: the two selections are independent, so the
drawn upper quartile can fall below the drawn lower one, and the range is then 0.
It is a point of the lattice in ``[0, hi - lo]``, whatever the data.

In a table (``securedp.tables.IQR``) each cell selects both quartiles from its
own counts per lattice point, at the cell epsilon for ``k = max_groups`` cells
per person, as every table quantile does.

**Accuracy.** Each quartile's rank error is at most the recorded
``rank_error_bound`` ``r`` (:func:`~securedp.mechanisms.rank_utility.rank_error_bound`)
with probability at least ``1 - alpha``; with probability at least
``1 - 2 alpha`` (a union bound) both are, and the range then lies between the
differences of the values at ranks ``3n/4 -/+ r`` and ``n/4 -/+ r`` (clamped at 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from securedp.mechanisms.quantile import Quantiles
from securedp.mechanisms.records import exact_value

QUARTILES = (Fraction(1, 4), Fraction(3, 4))


@dataclass(frozen=True)
class InterquartileRange(Quantiles):
    """The interquartile range's definition: :class:`Quantiles` at ``1/4`` and ``3/4``, released as their
    clamped difference (see the module docstring)."""

    statistic: ClassVar[str] = "iqr"
    single: ClassVar[bool] = True
    levels: tuple[Fraction, ...] = QUARTILES

    def cell_record(self, alpha: Fraction) -> dict[str, Any]:
        return {**super().cell_record(alpha), "q": list(self.levels), "released": "max(Q3 - Q1, 0)"}

    def value(self, points: tuple[int, ...]) -> Any:
        low, high = points
        return exact_value(max(high - low, 0) * self.column.lattice.step)
