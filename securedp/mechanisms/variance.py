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
is the post-processing ``step**2 * round(clamp(S2~ / n - (S1~ / n)**2, 0, ((hi_u - lo_u) / 2)**2))``
with ``n = max(N~, 1)`` (the clamp bound is the largest variance of data in
``[lo, hi]``), rounded half to even (:func:`variance_units`): a point of the
lattice of ``step**2``, whatever the data. In a table each person changes at
most ``k = max_groups`` cells (noise calibrated to ``k`` times the
sensitivities, :mod:`securedp.privacy.noise`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from securedp.hazmat.exact.kernels import round_half_even
from securedp.mechanisms.moments import LatticeStatistic, centre, centred
from securedp.mechanisms.statistic import CellColumn, CellSums
from securedp.privacy.noise import Noise


@dataclass(frozen=True)
class Variance(LatticeStatistic):
    """The bounded variance's definition: three noisy moments, each at a third of the cost (module docstring)."""

    whole = False  # a variance of whole numbers is a fraction: the bounds' lattice

    statistic = "variance"

    @property
    def noises(self) -> tuple[Noise, Noise, Noise]:
        """The noise of the count, the centred sum and the centred sum of squares."""
        share = self.cost.split(3)
        m, h, k = self.max_contributions, max(centre(self.column)[1], 1), self.max_groups
        return Noise.of(m, share, k), Noise.of(m * h, share, k), Noise.of(m * h * h, share, k)

    def exact_cells(self, sums: CellSums) -> list[list[int]]:
        """``N``, ``sum(u - c) = S - c N`` and ``sum((u - c)**2) = Q - 2 c S + c**2 N`` per cell."""
        rows, total, squares = sums.rows, sums.total, sums.squares
        assert total is not None and squares is not None
        c = centre(self.column)[0]
        return [rows, centred(c, rows, total),
                [q - 2 * c * s + c * c * x for q, s, x in zip(squares, total, rows, strict=True)]]

    def halfwidths(self, alpha: Fraction) -> dict[str, Fraction]:
        """Each noisy moment's half-width at ``alpha`` (the variance itself states no interval)."""
        step = self.column.lattice.step
        count_noise, sum_noise, square_noise = self.noises
        return {"count": Fraction(count_noise.halfwidth(alpha)), "centred_sum": sum_noise.halfwidth(alpha) * step,
                "centred_sum_of_squares": square_noise.halfwidth(alpha) * step**2}

    def finish(self, noisy: list[list[int]], alpha: Fraction) -> CellColumn:  # noqa: ARG002 - no interval
        """The variances, without intervals (none is stated for a variance)."""
        column = self.column
        values = variance_units(noisy[0], noisy[1], noisy[2], column.hi_u - column.lo_u)
        step = column.lattice.step ** 2
        return CellColumn(values, None, None, step, step)

    def cell_record(self, alpha: Fraction) -> dict[str, Any]:
        return {**super().cell_record(alpha), **self.column_record(), "centre_units": centre(self.column)[0],
                "budget_split": "count 1/3, centred sum 1/3, centred sum of squares 1/3"}


def variance_units(counts: list[int], s1: list[int], s2: list[int], width: int) -> list[int]:
    """Each cell's variance in units of ``step**2``: ``round(clamp(S2~ / d - (S1~ / d)**2, 0, (width / 2)**2))``.

    ``d = max(N~, 1)``, rounded half to even. In integers: the variance is ``(S2~ d - S1~**2) / d**2``,
    and rounding half to even is monotone, so rounding the clamped value is clamping the rounded one
    to ``[0, round(width**2 / 4)]``.
    """
    top = round_half_even(width * width, 4)
    out = []
    for count, first, second in zip(counts, s1, s2, strict=True):
        d = count if count > 1 else 1
        v = round_half_even(second * d - first * first, d * d)
        out.append(0 if v < 0 else top if v > top else v)
    return out
