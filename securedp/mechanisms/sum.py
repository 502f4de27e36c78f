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

**Aggregate / noise** (:mod:`securedp.mechanisms.statistic`): step (1) is
:class:`SumAggregate` (rows kept, ``S`` in units); step (2) adds ``Z`` and
scales by ``step``, for one cell or every cell of a table (where a person
changes at most ``k = max_groups`` cells: the noise is calibrated to ``k Delta``,
:mod:`securedp.mechanisms.noise`), with the interval ``(S + Z -/+ t) * step``
at level ``1 - alpha`` in a table.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.lattice import exact_sum
from securedp.mechanisms.moments import LatticeStatistic
from securedp.mechanisms.noise import Noise
from securedp.mechanisms.statistic import (
    CellColumn,
    CellSums,
    IntegerSums,
    Pending,
    bounded,
    public_function,
    release_function,
)


@dataclass(frozen=True)
class SumAggregate(IntegerSums):
    """Step (1) of a sum: the rows kept and the exact integer sum ``S`` of their units."""

    rows: int
    sum_units: int


@dataclass(frozen=True)
class Sum(LatticeStatistic[SumAggregate]):
    """The bounded sum's definition: ``(S + Z) * step`` (see the module docstring)."""

    statistic = "sum"

    @property
    def noise(self) -> Noise:
        return Noise.of(self.max_contributions * max(self.column.bound, 1), self.cost, self.max_groups)

    @property
    def noises(self) -> tuple[Noise]:
        return (self.noise,)

    @property
    def parameters(self) -> dict[str, Any]:
        return {**self.column.parameters(), **self.noise.parameters()}

    def aggregate(self, data: Any, ids: Any = None) -> SumAggregate | Pending[SumAggregate]:
        return bounded(self.reduce, *self.column.units(data, ids))

    def reduce(self, units: np.ndarray) -> SumAggregate:
        """The aggregate of kept units."""
        return SumAggregate(int(units.size), exact_sum(units, self.column.bound))

    def exact_cells(self, sums: CellSums) -> list[list[int]]:
        assert sums.total is not None
        return [sums.total]

    def one_cell(self, aggregate: SumAggregate) -> list[list[int]]:
        return [[aggregate.sum_units]]  # the row count is committed to, not released

    def halfwidths(self, alpha: Fraction) -> dict[str, Fraction]:
        """``{"": t * step}``: the released interval is ``value -/+ t * step``."""
        return {"": self.noise.halfwidth(alpha) * self.column.lattice.step}

    def finish(self, noisy: list[list[int]], alpha: Fraction | None) -> CellColumn:
        values, step = noisy[0], self.column.lattice.step
        if alpha is None:
            return CellColumn(values, None, None, step, step)
        t = self.noise.halfwidth(alpha)
        return CellColumn.within(values, t, step, step)


prepare_sum = public_function(Sum.prepare, "prepare_sum",
                              """Validate and price a bounded sum; nothing is drawn until ``.execute(rng)``.""")
sum = release_function(  # noqa: A001 - the public name mirrors the statistic
    prepare_sum, "sum",
    """Release the sum of ``data`` clamped to ``bounds`` with ``epsilon``-DP (or ``rho``-zCDP); see the module \
docstring.""")
