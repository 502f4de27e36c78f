"""Private interquartile range: the 3/4-quantile minus the 1/4-quantile, each selected exactly.

**Definition.** The two quartiles are the quantiles ``1/4`` and ``3/4`` of
:mod:`securedp.mechanisms.quantile` (the exact exponential mechanism over the
lattice points of the public bounds, utility ``-|#{x < y} - q n|``,
sensitivity ``m = max_contributions``), each at half the cost: ``epsilon / 2``
(basic composition: the pair is ``epsilon``-DP), or with ``rho`` each at the
largest ``epsilon = j / 2**32`` with ``epsilon**2 / 2 <= rho / 2``
(:func:`~securedp.mechanisms.quantile.selection_epsilon`). The release is the
post-processing ``max(Q3 - Q1, 0)``: the two selections are independent, so the
drawn upper quartile can fall below the drawn lower one, and the range is then 0.
It is a point of the lattice in ``[0, hi - lo]``, whatever the data.

In a table (``securedp.tables.IQR``) each cell selects both quartiles from its
own counts per lattice point, at the cell epsilon for ``k = max_groups`` cells
per person, as every table quantile does.

**Accuracy.** Each quartile's rank error is at most
:func:`~securedp.mechanisms.quantile.rank_error_bound` with probability
``1 - alpha`` each; the range then lies between the values at ranks
``n/4 -/+ r`` and ``3n/4 -/+ r``.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any, ClassVar

from securedp.hazmat.bits.source import RandomSource
from securedp.mechanisms.quantile import Quantiles, SortedUnits
from securedp.mechanisms.records import LatticeColumn, exact_value
from securedp.mechanisms.release import PreparedRelease
from securedp.mechanisms.statistic import public_function, release_function

QUARTILES = (Fraction(1, 4), Fraction(3, 4))


class InterquartileRange(Quantiles):
    """The interquartile range's definition: :class:`Quantiles` at ``1/4`` and ``3/4``, released as their
    clamped difference (see the module docstring)."""

    statistic: ClassVar[str] = "iqr"
    input_name = "quantiles"
    single: ClassVar[bool] = True

    @classmethod
    def prepare_range(cls, data: Any, *, bounds: Any = None, epsilon: Any = None, rho: Any = None,
                      max_contributions: Any = 1, ids: Any = None, lattice: Any = None, missing: str = "raise",
                      fill: Any = None) -> PreparedRelease:
        return cls.prepare(data, QUARTILES, bounds=bounds, epsilon=epsilon, rho=rho,
                           max_contributions=max_contributions, ids=ids, lattice=lattice, missing=missing, fill=fill)

    @classmethod
    def of(cls, cost: Any, column: LatticeColumn, max_groups: int = 1) -> InterquartileRange:
        """The range of a table cell: both quartiles on ``column`` at ``cost``, ``max_groups`` cells per person."""
        return cls(cost, column, QUARTILES, max_groups=max_groups)

    @property
    def parameters(self) -> dict[str, Any]:
        levels = {name: value for name, value in super().parameters.items() if name != "q"}  # two levels: qs
        return {**levels, "released": "max(Q3 - Q1, 0)"}

    def cell_record(self, alpha: Fraction) -> dict[str, Any]:
        return {**super().cell_record(alpha), "q": list(self.levels), "released": "max(Q3 - Q1, 0)"}

    def sampler(self, aggregate: SortedUnits) -> Callable[[RandomSource], Any]:
        quartiles = self.points_sampler(aggregate)

        def draw(source: RandomSource) -> Any:
            low, high = quartiles(source)
            return exact_value(max(high - low, 0) * self.column.lattice.step)

        return draw


prepare_iqr = public_function(
    InterquartileRange.prepare_range, "prepare_iqr",
    """Validate and price the interquartile range (both quartiles at half the cost); nothing is drawn yet.""")
iqr = release_function(prepare_iqr, "iqr", """The interquartile range ``max(Q3 - Q1, 0)`` as an exact lattice \
value; see the module docstring.""")
