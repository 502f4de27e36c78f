"""Private bounded (population) variance from three noisy moments.

Records become units ``u`` in ``[lo_u, hi_u]`` exactly as for
:mod:`securedp.mechanisms.sum`; ``c`` and ``half`` are as in
:mod:`securedp.mechanisms.moments`, ``m = max_contributions`` and
``h = max(half, 1)``:

* noisy count ``N~ = N + Z1``: sensitivity ``m``;
* noisy centred sum ``S1~ = sum(u - c) + Z2``: sensitivity ``m * h``;
* noisy centred sum of squares ``S2~ = sum((u - c)**2) + Z3``: sensitivity ``m * h**2``;

each costing ``epsilon / 3`` (Laplace scale ``sensitivity / (epsilon / 3)``)
or ``rho / 3`` (Gaussian variance ``sensitivity**2 / (2 * rho / 3)``), so
the total is exactly the declared budget (basic composition). The release
is the post-processing ``step**2 * clamp(S2~ / n - (S1~ / n)**2, 0, ((hi_u - lo_u) / 2)**2)``
with ``n = max(N~, 1)`` (the clamp bound is the largest variance of data in
``[lo, hi]``), an exact Fraction.

**Aggregate / noise** (:mod:`securedp.mechanisms.statistic`): step (1) is
:class:`VarianceAggregate` (``N`` and the two centred sums, integers); step
(2), :meth:`Variance.noise_step`, draws the three noises and post-processes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.mechanisms.moments import LatticeStatistic, centre, centred_sums, clamp_fraction
from securedp.mechanisms.noise import Noise, split
from securedp.mechanisms.records import exact_value
from securedp.mechanisms.statistic import IntegerSums, Pending, bounded, public_function, release_function


@dataclass(frozen=True)
class VarianceAggregate(IntegerSums):
    """Step (1) of a variance: ``N``, ``sum(u - c)`` and ``sum((u - c)**2)`` over the kept units, exactly."""

    rows: int
    centred_sum_units: int
    centred_sum_of_squares_units: int


@dataclass(frozen=True)
class Variance(LatticeStatistic[VarianceAggregate]):
    """The bounded variance's definition: three noisy moments, each at a third of the cost (module docstring)."""

    statistic = "variance"

    @property
    def noises(self) -> tuple[Noise, Noise, Noise]:
        """The noise of the count, the centred sum and the centred sum of squares."""
        share = split(self.cost, 3)
        m, h = self.max_contributions, max(centre(self.column)[1], 1)
        return Noise(m, *share), Noise(m * h, *share), Noise(m * h * h, *share)

    @property
    def parameters(self) -> dict[str, Any]:
        count_noise, sum_noise, square_noise = self.noises
        return {
            **self.column.parameters(),
            "centre_units": centre(self.column)[0],
            "budget_split": "count 1/3, centred sum 1/3, centred sum of squares 1/3",
            **count_noise.parameters("count_"),
            **sum_noise.parameters("sum_"),
            **square_noise.parameters("sum_of_squares_"),
        }

    def aggregate(self, data: Any, ids: Any = None) -> VarianceAggregate | Pending[VarianceAggregate]:
        return bounded(self.reduce, *self.column.units(data, ids))

    def reduce(self, units: np.ndarray) -> VarianceAggregate:
        """The aggregate of kept units."""
        s1, s2 = centred_sums(units, *centre(self.column))
        return VarianceAggregate(int(units.size), s1, s2)

    def sampler(self, aggregate: VarianceAggregate) -> Callable[[RandomSource], Any]:
        count_noise, sum_noise, square_noise = self.noises
        top = Fraction(self.column.hi_u - self.column.lo_u, 2) ** 2
        step = self.column.lattice.step

        def draw(source: RandomSource) -> Any:
            noisy_n = max(aggregate.rows + count_noise.draw(source), 1)
            noisy_s1 = aggregate.centred_sum_units + sum_noise.draw(source)
            noisy_s2 = aggregate.centred_sum_of_squares_units + square_noise.draw(source)
            var_u = clamp_fraction(Fraction(noisy_s2, noisy_n) - Fraction(noisy_s1, noisy_n) ** 2, 0, top)
            return exact_value(var_u * step**2)

        return draw


prepare_variance = public_function(
    Variance.prepare, "prepare_variance",
    """Validate and price a bounded variance; nothing is drawn until ``.execute(rng)``.""")
variance = release_function(prepare_variance, "variance", """Release the population variance of ``data`` clamped \
to ``bounds``; see the module docstring.""")
