"""Private count of rows (and, in a table, of distinct persons).

**Privacy map.** Adding or removing one person changes the number of rows
kept by at most ``m = max_contributions``: sensitivity ``m``. The release is
``n + Z`` with ``Z`` discrete Laplace of scale ``m / epsilon``
(``epsilon``-DP) or discrete Gaussian of variance ``m**2 / (2 rho)``
(``rho``-zCDP); in a table each person changes at most ``k = max_groups``
cells, and the noise is calibrated to that (:mod:`securedp.mechanisms.noise`).
Rows are counted whatever they hold (``None`` and NaN count as rows). The
noisy count is not clamped, so it can be negative. A table's
:class:`Persons` counts distinct persons per cell: sensitivity 1.

``data`` is one column: a table (DataFrame), a 2-D array or a list of
row tuples is refused, never flattened into ``rows * columns`` "rows"
(:func:`securedp.lattice.columns.as_records`). With ``ids``, a row whose
person id is blank raises; in an analyst-facing session it is not counted.
Each person counts ``min(rows, m)``: which of their rows are kept does not
change the count, so a count draws no salt (unlike the other statistics
with ``ids``, :mod:`securedp.mechanisms.contributions`).

**Aggregate / noise** (:mod:`securedp.mechanisms.statistic`): step (1) is
:class:`CountAggregate` (the rows kept); step (2) adds the noise to it, for
one cell or for every cell of a table (:class:`~securedp.mechanisms.statistic.AdditiveStatistic`),
with the interval ``n + Z -/+ t`` at level ``1 - alpha`` in a table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from securedp.lattice.columns import as_records
from securedp.mechanisms.contributions import bound_rows, check_max_contributions, refuse_rows
from securedp.mechanisms.noise import Cost, Noise, privacy_cost
from securedp.mechanisms.release import PreparedRelease
from securedp.mechanisms.statistic import AdditiveStatistic, CellColumn, CellSums, public_function, release_function


@dataclass(frozen=True)
class CountAggregate:
    """Step (1) of a count: the number of rows kept after contribution bounding."""

    rows: int


@dataclass(frozen=True)
class Count(AdditiveStatistic[CountAggregate]):
    """The count's definition: ``rows + Z``, cell sensitivity ``max_contributions`` (see the module docstring)."""

    statistic = "count"
    cost: Cost
    max_contributions: int
    max_groups: int = field(default=1, kw_only=True)

    @classmethod
    def prepare(
        cls, data: Any, *, epsilon: Any = None, rho: Any = None, max_contributions: Any = 1, ids: Any = None
    ) -> PreparedRelease:
        cost = privacy_cost(epsilon, rho)
        return cls(cost, check_max_contributions(max_contributions)).prepare_data(data, ids)

    @property
    def noise(self) -> Noise:
        return Noise.of(self.max_contributions, self.cost, self.max_groups)

    @property
    def noises(self) -> tuple[Noise]:
        return (self.noise,)

    @property
    def parameters(self) -> dict[str, Any]:
        return {"lattice_step": 1, **self.noise.parameters()}

    def aggregate(self, data: Any, ids: Any = None) -> CountAggregate:
        records = as_records(data)
        refuse_rows(records)
        n = len(records)
        rule = bound_rows(n, ids, self.max_contributions)
        return CountAggregate(n if rule is None else rule.kept_rows)

    def exact_cells(self, sums: CellSums) -> list[list[int]]:
        return [sums.rows]

    def halfwidths(self, alpha: Fraction) -> dict[str, Fraction]:
        """``{"": t}``: the released interval is ``value -/+ t``."""
        return {"": Fraction(self.noise.halfwidth(alpha))}

    def finish(self, noisy: list[list[int]], alpha: Fraction | None) -> CellColumn:
        values = noisy[0]
        if alpha is None:
            return CellColumn(values, None, None, None, None)
        t = self.noise.halfwidth(alpha)
        return CellColumn.within(values, t, None, self.noise.output_step(alpha))


@dataclass(frozen=True)
class Persons(Count):
    """The distinct persons of a table's cell: ``persons + Z``, cell sensitivity 1 (one person, one cell)."""

    statistic = "persons"

    @property
    def noise(self) -> Noise:
        return Noise.of(1, self.cost, self.max_groups)

    def exact_cells(self, sums: CellSums) -> list[list[int]]:
        return [sums.persons]


prepare_count = public_function(Count.prepare, "prepare_count",
                                """Validate and price a count; nothing is drawn until ``.execute(rng)``.""")
count = release_function(prepare_count, "count", """Release the number of rows of ``data`` with ``epsilon``-DP \
(or ``rho``-zCDP); see the module docstring.""")
