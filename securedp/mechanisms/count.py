"""Private count of rows (and, in a table, of distinct persons).

**Privacy map.** Adding or removing one person changes the number of rows
kept by at most ``m = max_contributions``: sensitivity ``m``. The release is
``n + Z`` with ``Z`` discrete Laplace of scale ``m / epsilon``
(``epsilon``-DP) or discrete Gaussian of variance ``m**2 / (2 rho)``
(``rho``-zCDP); in a table each person changes at most ``k = max_groups``
cells, and the noise is calibrated to that (:mod:`securedp.privacy.noise`).
Rows are counted whatever they hold (``None`` and NaN count as rows). The
noisy count is not clamped, so it can be negative. A table's
:class:`Persons` counts distinct persons per cell: sensitivity 1.

Each person counts ``min(rows, m)`` in a cell, whichever of their rows are kept. The released
interval is ``n + Z -/+ t`` at level ``1 - alpha`` (:mod:`securedp.privacy.accuracy`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from securedp.mechanisms.statistic import AdditiveStatistic, CellColumn, CellSums
from securedp.privacy.cost import Cost
from securedp.privacy.noise import Noise


@dataclass(frozen=True)
class Count(AdditiveStatistic):
    """The count's definition: ``rows + Z``, cell sensitivity ``max_contributions`` (see the module docstring)."""

    statistic = "count"
    cost: Cost
    max_contributions: int
    max_groups: int = field(default=1, kw_only=True)

    @property
    def noise(self) -> Noise:
        return Noise.of(self.max_contributions, self.cost, self.max_groups)

    @property
    def noises(self) -> tuple[Noise]:
        return (self.noise,)

    def exact_cells(self, sums: CellSums) -> list[list[int]]:
        return [sums.rows]

    def halfwidths(self, alpha: Fraction) -> dict[str, Fraction]:
        """``{"": t}``: the released interval is ``value -/+ t``."""
        return {"": Fraction(self.noise.halfwidth(alpha))}

    def finish(self, noisy: list[list[int]], alpha: Fraction) -> CellColumn:
        t = self.noise.halfwidth(alpha)
        return CellColumn.within(noisy[0], t, None, self.noise.output_step(alpha))


@dataclass(frozen=True)
class Persons(Count):
    """The distinct persons of a table's cell: ``persons + Z``, cell sensitivity 1 (one person, one cell)."""

    statistic = "persons"

    @property
    def noise(self) -> Noise:
        return Noise.of(1, self.cost, self.max_groups)

    def exact_cells(self, sums: CellSums) -> list[list[int]]:
        return [sums.persons]


__all__ = ["Count", "Persons"]
