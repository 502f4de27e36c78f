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
post-processing ``step * round(clamp(c + S~ / max(N~, 1), lo_u, hi_u))``
(rounded half to even, :func:`mean_units`): a lattice point in ``[lo, hi]``,
so the set of possible outputs is the lattice, whatever the data. In a table
each person changes at most ``k = max_groups`` cells (noise calibrated to
``k`` times the sensitivities, :mod:`securedp.privacy.noise`), and each
cell's interval at level ``1 - alpha`` comes from the two half-widths at
``alpha / 2`` each (a union bound).

**The mean's half-width in the column's units** depends on the cell's true row count ``n``, which is not
public, so it is stated *at* a count (:meth:`Mean.value_halfwidth`). With ``t_n``, ``t_s`` the two
half-widths at ``alpha / 2``, with probability at least ``1 - alpha`` both ``|N~ - n| <= t_n`` and
``|S~ - S| <= t_s``; then, if ``n - t_n >= 1``, ``d = N~ >= n - t_n`` and, as ``|S| <= n half``,

``|S~ / d - S / n| = |S (n - d) / (n d) + (S~ - S) / d| <= (half t_n + t_s) / (n - t_n)``;

clamping to ``[lo_u, hi_u]`` (which holds the true mean) moves the mean no further from it, and rounding
moves it by at most half a unit. So the released mean is within
``E(n) = step * ((half t_n + t_s) / (n - t_n) + 1/2)`` of the mean of the cell's kept (clamped) values,
and never further than ``hi - lo``: ``min(E(n), hi - lo)``, exact, non-increasing in ``n`` and in the
budget (``hi - lo`` when ``n - t_n < 1``). It bounds the noise's error only: the rows that bounding drops
and the values that clamping moves are the data holder's to judge (:func:`securedp.analyze_contributions`).
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
class Mean(LatticeStatistic):
    """The bounded mean's definition: two noisy moments, each at half the cost (see the module docstring)."""

    whole = False  # a mean of whole numbers is a fraction: the bounds' lattice

    statistic = "mean"

    @property
    def noises(self) -> tuple[Noise, Noise]:
        """The noise of the count and of the centred sum."""
        share = self.cost.split(2)
        _, half = centre(self.column)
        m, k = self.max_contributions, self.max_groups
        return Noise.of(m, share, k), Noise.of(m * max(half, 1), share, k)

    def exact_cells(self, sums: CellSums) -> list[list[int]]:
        assert sums.total is not None
        return [sums.rows, centred(centre(self.column)[0], sums.rows, sums.total)]

    def halfwidths(self, alpha: Fraction) -> dict[str, Fraction]:
        """The noisy count's and the noisy centred sum's half-widths at ``alpha / 2`` each (the interval of
        the mean is their corners' range, clamped to the bounds: :func:`mean_units`)."""
        count_noise, sum_noise = self.noises
        return {"count": Fraction(count_noise.halfwidth(alpha / 2)),
                "centred_sum": sum_noise.halfwidth(alpha / 2) * self.column.lattice.step}

    def value_halfwidth(self, alpha: Fraction, rows: int) -> Fraction:
        """The half-width of the released mean in the column's units at level ``1 - alpha``, in a cell that
        keeps ``rows`` rows: ``min(E(rows), hi - lo)`` of the module docstring, exact."""
        count_noise, sum_noise = self.noises
        column = self.column
        return mean_error(rows, count_noise.halfwidth(alpha / 2), sum_noise.halfwidth(alpha / 2),
                          centre(column)[1], column.hi_u - column.lo_u) * column.lattice.step

    def finish(self, noisy: list[list[int]], alpha: Fraction) -> CellColumn:
        count_noise, sum_noise = self.noises
        t_n, t_s = count_noise.halfwidth(alpha / 2), sum_noise.halfwidth(alpha / 2)
        column = self.column
        values, low, high = mean_units(noisy[0], noisy[1], centre(column)[0], column.lo_u, column.hi_u, t_n, t_s)
        step = column.lattice.step
        return CellColumn(values, low, high, step, step)

    def cell_record(self, alpha: Fraction) -> dict[str, Any]:
        return {**super().cell_record(alpha), **self.column_record(), "centre_units": centre(self.column)[0],
                "budget_split": "count 1/2, centred sum 1/2"}


def mean_units(counts: list[int], sums: list[int], c: int, lo_u: int, hi_u: int, t_n: int,
               t_s: int) -> tuple[list[int], list[int], list[int]]:
    """Each cell's mean and interval ends in units, from its noisy count ``N~`` and centred sum ``S~``.

    The mean is ``round(clamp(c + S~ / d, lo_u, hi_u))``, ``d = max(N~, 1)``, rounded half to even;
    the interval is ``[max(lo_u, floor(min K)), min(hi_u, ceil(max K))]`` over the corners
    ``K = c + s / d'``, ``s in {S~ - t_s, S~ + t_s}``, ``d' in {max(N~ - t_n, 1), N~ + t_n}`` (the
    whole bounds when ``N~ + t_n < 1``). All in integers (``t_n, t_s >= 0``): rounding half to even
    is monotone and the bounds are integers, so rounding the clamped mean is clamping
    ``round((c d + S~) / d)`` (:func:`round_half_even`, a ``divmod``). With ``1 <= d_lo <= d_hi``
    the least corner is ``s_lo / d_hi`` if ``s_lo >= 0`` else ``s_lo / d_lo``, the greatest
    ``s_hi / d_lo`` if ``s_hi >= 0`` else ``s_hi / d_hi``; floor and ceil commute with adding the
    integer ``c`` and are floor divisions (``ceil(a / b) = -(-a // b)``).
    """
    values, lows, highs = [], [], []
    for count, centred_sum in zip(counts, sums, strict=True):
        d = count if count > 1 else 1
        mean = round_half_even(c * d + centred_sum, d)
        values.append(lo_u if mean < lo_u else hi_u if mean > hi_u else mean)
        d_hi = count + t_n
        if d_hi < 1:
            lows.append(lo_u)
            highs.append(hi_u)
            continue
        d_lo = count - t_n if count - t_n > 1 else 1
        s_lo, s_hi = centred_sum - t_s, centred_sum + t_s
        low = c + (s_lo // d_hi if s_lo >= 0 else s_lo // d_lo)
        high = c - (-s_hi // d_lo if s_hi >= 0 else -s_hi // d_hi)
        lows.append(low if low > lo_u else lo_u)
        highs.append(high if high < hi_u else hi_u)
    return values, lows, highs


def mean_error(rows: int, t_n: int, t_s: int, half: int, width: int) -> Fraction:
    """In units: how far the mean :func:`mean_units` releases lies from the mean of ``rows`` values in
    bounds ``width`` units wide (``half`` their largest distance to the centre) when the count's and the
    centred sum's noises are at most ``t_n`` and ``t_s``: ``min((half t_n + t_s) / (rows - t_n) + 1/2,
    width)``, or ``width`` when ``rows - t_n < 1`` (the module docstring)."""
    error = ratio_error(rows, t_n, t_s, half)
    return Fraction(width) if error is None else min(error + Fraction(1, 2), Fraction(width))
