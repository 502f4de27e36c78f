"""Private bounded mean from two noisy moments.

Records become units ``u`` in ``[lo_u, hi_u]`` exactly as for
:mod:`securedp.mechanisms.sum`. With the public centre ``c`` and
``half = max(hi_u - c, c - lo_u)`` (:mod:`securedp.mechanisms.moments`):

* noisy count ``N~ = N + Z1``: sensitivity ``m``, cost ``epsilon / 2``;
* noisy centred sum ``S~ = sum(u - c) + Z2``: sensitivity ``m * max(half, 1)``,
  cost ``epsilon / 2``;

(``m = max_contributions``; Laplace scales ``sensitivity / (epsilon / 2)``,
or with ``rho`` Gaussian variances ``sensitivity**2 / (2 * rho / 2)``). By
basic composition the pair is ``epsilon``-DP (``rho``-zCDP): the total
charged is exactly the declared budget. The released mean is the
post-processing ``step * clamp(c + S~ / max(N~, 1), lo_u, hi_u)``, an exact
Fraction in ``[lo, hi]``; the set of possible outputs does not depend on the data.

**Aggregate / noise** (:mod:`securedp.mechanisms.statistic`): step (1) is
:class:`MeanAggregate` (``N`` and the centred sum, integers); step (2),
:meth:`Mean.noise_step`, draws both noises and post-processes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.lattice import exact_sum
from securedp.mechanisms.moments import LatticeStatistic, centre, centred_units, clamp_fraction
from securedp.mechanisms.noise import Noise, split
from securedp.mechanisms.records import exact_value
from securedp.mechanisms.statistic import IntegerSums, Pending, bounded, public_function, release_function


@dataclass(frozen=True)
class MeanAggregate(IntegerSums):
    """Step (1) of a mean: the rows kept ``N`` and the exact centred sum ``sum(u - c)`` of their units."""

    rows: int
    centred_sum_units: int


@dataclass(frozen=True)
class Mean(LatticeStatistic[MeanAggregate]):
    """The bounded mean's definition: two noisy moments, each at half the cost (see the module docstring)."""

    statistic = "mean"

    @property
    def noises(self) -> tuple[Noise, Noise]:
        """The noise of the count and of the centred sum."""
        share = split(self.cost, 2)
        _, half = centre(self.column)
        return Noise(self.max_contributions, *share), Noise(self.max_contributions * max(half, 1), *share)

    @property
    def parameters(self) -> dict[str, Any]:
        count_noise, sum_noise = self.noises
        return {
            **self.column.parameters(),
            "centre_units": centre(self.column)[0],
            "budget_split": "count 1/2, centred sum 1/2",
            **count_noise.parameters("count_"),
            **sum_noise.parameters("sum_"),
        }

    def aggregate(self, data: Any, ids: Any = None) -> MeanAggregate | Pending[MeanAggregate]:
        return bounded(self.reduce, *self.column.units(data, ids))

    def reduce(self, units: np.ndarray) -> MeanAggregate:
        """The aggregate of kept units."""
        c, half = centre(self.column)
        return MeanAggregate(int(units.size), exact_sum(centred_units(units, c, half), half))

    def sampler(self, aggregate: MeanAggregate) -> Callable[[RandomSource], Any]:
        count_noise, sum_noise = self.noises
        column, c = self.column, centre(self.column)[0]

        def draw(source: RandomSource) -> Any:
            noisy_n = aggregate.rows + count_noise.draw(source)
            noisy_s = aggregate.centred_sum_units + sum_noise.draw(source)
            mean_u = clamp_fraction(c + Fraction(noisy_s, max(noisy_n, 1)), column.lo_u, column.hi_u)
            return exact_value(mean_u * column.lattice.step)

        return draw


prepare_mean = public_function(Mean.prepare, "prepare_mean",
                               """Validate and price a bounded mean; nothing is drawn until ``.execute(rng)``.""")
mean = release_function(prepare_mean, "mean", """Release the mean of ``data`` clamped to ``bounds``; see the module \
docstring for the privacy map.""")
