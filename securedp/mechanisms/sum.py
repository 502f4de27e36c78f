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
:class:`SumAggregate` (rows kept, ``S`` in units); step (2),
:meth:`Sum.noise_step`, adds ``Z`` and scales by ``step``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.lattice import exact_sum
from securedp.mechanisms.moments import LatticeStatistic
from securedp.mechanisms.noise import Noise
from securedp.mechanisms.records import exact_value
from securedp.mechanisms.statistic import IntegerSums, Pending, bounded, public_function, release_function


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
        return Noise(self.max_contributions * max(self.column.bound, 1), *self.cost)

    @property
    def parameters(self) -> dict[str, Any]:
        return {**self.column.parameters(), **self.noise.parameters()}

    def aggregate(self, data: Any, ids: Any = None) -> SumAggregate | Pending[SumAggregate]:
        return bounded(self.reduce, *self.column.units(data, ids))

    def reduce(self, units: np.ndarray) -> SumAggregate:
        """The aggregate of kept units."""
        return SumAggregate(int(units.size), exact_sum(units, self.column.bound))

    def sampler(self, aggregate: SumAggregate) -> Callable[[RandomSource], Any]:
        noise, lattice = self.noise, self.column.lattice
        return lambda source: exact_value(lattice.value(aggregate.sum_units + noise.draw(source)))


prepare_sum = public_function(Sum.prepare, "prepare_sum",
                              """Validate and price a bounded sum; nothing is drawn until ``.execute(rng)``.""")
sum = release_function(  # noqa: A001 - the public name mirrors the statistic
    prepare_sum, "sum",
    """Release the sum of ``data`` clamped to ``bounds`` with ``epsilon``-DP (or ``rho``-zCDP); see the module \
docstring.""")
