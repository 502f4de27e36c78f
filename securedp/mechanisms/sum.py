"""Private bounded sum on a fixed-point lattice.

Each record is screened, clamped to ``bounds=(lo, hi)`` (snapped inward onto
the lattice) and rounded to units ``u`` in ``[lo_u, hi_u]`` (see
:mod:`securedp.lattice`); the exact integer sum ``S`` of the units is taken.

**Privacy map.** Adding or removing one person (at most
``m = max_contributions`` rows) changes ``S`` by at most
``Delta = m * max(|lo_u|, |hi_u|, 1)`` units (rounding is included, because
the rounded units never leave ``[lo_u, hi_u]``). The release is
``(S + Z) * step`` with ``Z`` discrete Laplace of scale ``Delta / epsilon``
(``epsilon``-DP) or discrete Gaussian of variance ``Delta**2 / (2 rho)``
(``rho``-zCDP). The output is a multiple of ``step``, whatever the data.

In a table a person changes at most ``k = max_groups`` cells: the noise is calibrated to ``k Delta``
(:mod:`securedp.privacy.noise`). The interval is ``(S + Z -/+ t) * step`` at level ``1 - alpha``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from securedp.mechanisms.moments import LatticeStatistic
from securedp.mechanisms.statistic import CellColumn, CellSums
from securedp.privacy.noise import Noise


@dataclass(frozen=True)
class Sum(LatticeStatistic):
    """The bounded sum's definition: ``(S + Z) * step`` (see the module docstring)."""

    statistic = "sum"

    @property
    def noise(self) -> Noise:
        return Noise.of(self.max_contributions * max(self.column.bound, 1), self.cost, self.max_groups)

    @property
    def noises(self) -> tuple[Noise]:
        return (self.noise,)

    def exact_cells(self, sums: CellSums) -> list[list[int]]:
        assert sums.total is not None
        return [sums.total]

    def halfwidths(self, alpha: Fraction) -> dict[str, Fraction]:
        """``{"": t * step}``: the released interval is ``value -/+ t * step``."""
        return {"": self.noise.halfwidth(alpha) * self.column.lattice.step}

    def finish(self, noisy: list[list[int]], alpha: Fraction) -> CellColumn:
        step = self.column.lattice.step
        return CellColumn.within(noisy[0], self.noise.halfwidth(alpha), step, step)

    def cell_record(self, alpha: Fraction) -> dict[str, Any]:
        return {**super().cell_record(alpha), **self.column_record()}
