"""The noise step of a grouped table: exact noise on every cell's integers, and its confidence interval.

Every noisy integer of a table is ``aggregate + Z`` with ``Z`` drawn for all
cells of one aggregate at once (one batch of the exact samplers, so set-up is
paid once and the time does not depend on the values). The noise law of an
aggregate is fixed by its sensitivity and its share of the budget:

* ``epsilon``: discrete Laplace of scale ``L1 / epsilon``;
* ``rho``: discrete Gaussian of variance ``L2**2 / (2 rho)``.

With ``k`` keys per person and a per-cell sensitivity ``s`` (units), ``L1 =
k s`` and ``L2**2 = k s**2`` (:mod:`securedp.tables.spec`). The confidence
half-width ``t`` of each noisy integer at level ``1 - alpha`` comes from
:mod:`securedp.mechanisms.accuracy`; it depends on the law and ``alpha`` only.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.samplers import discrete_gaussian, discrete_laplace
from securedp.mechanisms.accuracy import gaussian_halfwidth, laplace_halfwidth

_NEGLIGIBLE = Fraction(1, 1 << 64)


@dataclass(frozen=True)
class CellNoise:
    """The noise of one aggregate over all cells: ``k`` keys per person, cell sensitivity ``s`` (units)."""

    max_groups: int
    cell_sensitivity: int
    epsilon: Fraction | None
    rho: Fraction | None

    @property
    def mechanism(self) -> str:
        return "discrete_laplace" if self.epsilon is not None else "discrete_gaussian"

    @property
    def parameter(self) -> Fraction:
        """The Laplace scale ``k s / epsilon`` or the Gaussian variance ``k s**2 / (2 rho)``, in units."""
        k, s = self.max_groups, max(self.cell_sensitivity, 1)
        if self.epsilon is not None:
            return Fraction(k * s) / self.epsilon
        assert self.rho is not None
        return Fraction(k * s * s) / (2 * self.rho)

    def draw(self, cells: int, source: RandomSource) -> list[int]:
        """``cells`` independent draws as Python ints (one batch; ``tolist`` of an int64 array gives ints)."""
        if cells == 0:
            return []
        if self.epsilon is not None:
            values = discrete_laplace(self.parameter, size=cells, rng=source)
        else:
            values = discrete_gaussian(None, cells, variance=self.parameter, rng=source)
        array = np.asarray(values)
        return array.tolist() if array.dtype.kind == "i" else [int(v) for v in array.tolist()]  # int64 or exact

    def halfwidth(self, alpha: Fraction) -> int:
        """The half-width ``t`` (units) with ``P(|Z| <= t) >= 1 - alpha``."""
        if self.epsilon is not None:
            return laplace_halfwidth(self.parameter, alpha)
        return gaussian_halfwidth(self.parameter, alpha)

    def output_step(self, alpha: Fraction) -> Fraction | None:
        """The output step of an integer column noised by this law, from the public parameters alone.

        ``None`` (an ``Int64`` column) unless a value or an interval bound may pass ``2**62`` except with
        probability below ``2**-64`` (the half-width at ``min(alpha, 2**-64)`` reaches ``2**60``; true
        counts stay below ``2**61``): then ``1``, an exact ``Decimal(38, 0)`` column
        (:mod:`securedp.tables.frames`).
        """
        return None if self.halfwidth(min(alpha, _NEGLIGIBLE)) < 1 << 60 else Fraction(1)

    def record(self) -> dict[str, Any]:
        name = "scale_units" if self.epsilon is not None else "variance_units"
        return {"mechanism": self.mechanism, "cell_sensitivity_units": max(self.cell_sensitivity, 1),
                name: self.parameter}
