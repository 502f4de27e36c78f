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

**The variance's half-width in the column's units squared** is stated at a row count ``n``
(:meth:`Variance.value_halfwidth`), as the mean's is (:mod:`securedp.mechanisms.mean`). With ``t_n``,
``t_1``, ``t_2`` the three half-widths at ``alpha / 3`` each (a union bound), ``h = half`` and
``e_j = (h**j t_n + t_j) / (n - t_n)`` (:func:`~securedp.mechanisms.moments.ratio_error`: ``|S1| <= n h``,
``0 <= S2 <= n h**2``), with probability at least ``1 - alpha`` the moments ``a = S2 / n`` and
``b = S1 / n`` are estimated within ``e_2`` and ``e_1``, so the variance ``a - b**2`` within
``e_2 + e_1 (2 h + e_1)`` (``|b~**2 - b**2| = |b~ - b| |b~ + b|``, ``|b| <= h``). Rounding half to even is
monotone, so the release is ``round(clamp(x, 0, W))``, ``W = ((hi_u - lo_u) / 2)**2``, which holds the
true variance: the error grows by at most half a unit. Both lie in ``[0, max(W, round(W))]``, which caps
it. So ``step**2 * min(e_2 + e_1 (2 h + e_1) + 1/2, max(W, round(W)))``, exact (the cap alone when
``n - t_n < 1``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from securedp.hazmat.exact.kernels import round_half_even
from securedp.mechanisms.moments import LatticeStatistic, centre, centred, ratio_error
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

    def value_halfwidth(self, alpha: Fraction, rows: int) -> Fraction:
        """The half-width of the released variance in the column's units squared at level ``1 - alpha``, in
        a cell that keeps ``rows`` rows (the module docstring), exact."""
        column, third = self.column, alpha / 3
        t_n, t_1, t_2 = (noise.halfwidth(third) for noise in self.noises)
        return variance_error(rows, t_n, t_1, t_2, centre(column)[1], column.hi_u - column.lo_u) * \
            column.lattice.step**2

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


def variance_error(rows: int, t_n: int, t_1: int, t_2: int, half: int, width: int) -> Fraction:
    """In units of ``step**2``: how far the variance :func:`variance_units` releases lies from the variance
    of ``rows`` values in bounds ``width`` units wide (``half`` their largest distance to the centre) when
    the noises of the count and the two centred moments are at most ``t_n``, ``t_1``, ``t_2``:
    ``min(e_2 + e_1 (2 half + e_1) + 1/2, cap)``, ``cap = max(W, round(W))``, ``W = width**2 / 4`` (the
    module docstring); ``cap`` when ``rows - t_n < 1``."""
    cap = max(Fraction(width * width, 4), Fraction(round_half_even(width * width, 4)))
    e1, e2 = ratio_error(rows, t_n, t_1, half), ratio_error(rows, t_n, t_2, half * half)
    if e1 is None or e2 is None:
        return cap
    return min(e2 + e1 * (2 * half + e1) + Fraction(1, 2), cap)
