"""Private trimmed (winsorized) mean: two private trim points, then a bounded mean between them, exactly.

**Definition.** For a trim ``p`` (a rational, ``0 < p < 1/2``; default ``1/10``: a tenth off each side)
each cell releases, in this order:

1. the trim points ``a`` and ``b``: the quantiles ``p`` and ``1 - p`` of the cell's records, each selected
   exactly as a :class:`~securedp.mechanisms.quantile.Quantile` cell selects (the exponential mechanism
   over every lattice point of the public bounds, the score and law of
   :mod:`securedp.mechanisms.rank_utility`, from the same counts per lattice point), each at half of
   the *selection share* ``s`` of the cost (``s = selection_share``, default ``1/2``). The two draws are
   independent, so ``b < a`` can happen; then both are set to ``a`` (post-processing);
2. from the same counts per point, exactly: the row count ``n`` and the sum of the records *winsorized*
   into ``[a, b]`` (every record ``u`` counts as ``clamp(u, a, b)``), centred at
   ``c = floor((a_u + b_u) / 2)`` (lattice units);
3. the mean of :mod:`securedp.mechanisms.mean` over the bounds ``[a, b]``: noisy count (cell
   sensitivity ``m``) and noisy centred winsorized sum (cell sensitivity ``m * max(h, 1)``,
   ``h = max(b_u - c, c - a_u)``), each at half of the rest ``1 - s`` of the cost, released as
   ``round(clamp(c + S~ / max(N~, 1), a_u, b_u))`` (:func:`~securedp.mechanisms.mean.mean_units`): a
   lattice point in ``[a, b]``.

The cell's ``_low`` and ``_high`` are ``a`` and ``b`` themselves: the trim points, released (a
post-processing of step 1), and an interval that holds both the value and the winsorized mean it
estimates, surely. The noise's own half-width is stated before the draw (:meth:`TrimmedMean.value_halfwidth`).

**Privacy map** (``m = max_contributions`` rows per person in a cell, ``k = max_groups`` cells per person).
Step 1 is the quantiles' selection at ``s * cost``: each level's is ``epsilon_sel / 2``-DP per person over
its ``k`` cells (``epsilon / k`` per cell; priced in ``rho``, each runs at a ``j / 2**32`` whose sharp
bounded-range zCDP, ``k`` times, is at most ``s rho / 2``:
:func:`~securedp.mechanisms.selection_price.selection_epsilon`). Given the released ``(a, b)`` of every cell, step 2
is a fixed function of the data whose count moves by at most ``m`` and whose centred sum by at most ``m * h`` per cell
when one person is added or removed (a winsorized record lies in ``[a_u, b_u]``, so ``|clamp(u, a, b) - c| <= h``), so
step 3's two noises (:class:`~securedp.privacy.noise.Noise`, calibrated to those sensitivities and ``k`` cells) are
``(1 - s) epsilon``-DP (``(1 - s) rho``-zCDP) for every value of ``(a, b)``. The sensitivity depends on the data only
through ``(a, b)``, which are outputs of a DP mechanism: by adaptive sequential composition (Dwork and Roth 2014, Thm.
3.16; for zCDP Bun and Steinke 2016, Lemma 2.3) the release is ``epsilon_sel + epsilon_mean = epsilon``-DP
(``rho``-zCDP): the total charged is exactly the declared budget.

**Accuracy.** Each trim point's rank error is at most the recorded ``rank_error_bound`` ``r``
(:func:`~securedp.mechanisms.rank_utility.rank_error_bound`) with probability at least ``1 - alpha``:
``a`` lies between the values at ranks ``p n -/+ r``, ``b`` between those at ``(1 - p) n -/+ r``. Given
``[a, b]``, the released value is within the mean's ``E(n)`` (:mod:`securedp.mechanisms.mean`) of the
winsorized mean of the cell's ``n`` kept rows with probability at least ``1 - alpha``; as ``[a, b]`` is not
public before the draw, :meth:`TrimmedMean.value_halfwidth` states it for the widest ``[a, b]``, the
bounds (``E`` grows with the width of ``[a, b]``): the half-width of a :class:`~securedp.mechanisms.mean.Mean`
on the bounds at the cost ``(1 - s) epsilon``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact import bounds
from securedp.hazmat.exact.rational import to_rational
from securedp.mechanisms.mean import mean_error, mean_units
from securedp.mechanisms.moments import centre, centre_of_bounds
from securedp.mechanisms.quantile import Quantiles
from securedp.mechanisms.selection_price import selection_epsilon
from securedp.mechanisms.statistic import CellColumn
from securedp.privacy.cost import Cost
from securedp.privacy.noise import Noise

DEFAULT_TRIM = Fraction(1, 10)
"""The share of the records cut from each side by default."""
DEFAULT_SELECTION_SHARE = Fraction(1, 2)
"""The share of the cost spent on the two trim points by default (the rest on the mean)."""


def check_trim(trim: Any) -> Fraction:
    """``trim`` as an exact rational with ``0 < trim < 1/2``."""
    p = bounds.parameter(to_rational(trim, "trim"), "trim")
    if not 0 < p < Fraction(1, 2):
        raise ValueError(f"trim must be a rational with 0 < trim < 1/2 (the share cut from each side), got {p}")
    return p


def check_selection_share(share: Any) -> Fraction:
    """``selection_share`` as an exact rational with ``0 < share < 1``."""
    s = bounds.parameter(to_rational(share, "selection_share"), "selection_share")
    if not 0 < s < 1:
        raise ValueError(f"selection_share must be a rational with 0 < selection_share < 1, got {s}")
    return s


def winsorized(points: Sequence[int] | np.ndarray, counts: Sequence[int] | np.ndarray, a: int,
               b: int) -> tuple[int, int]:
    """``(n, sum(clamp(u, a, b)))`` of the records held ``counts[j]`` times at ``points[j]`` (units, ascending),
    exactly (Python integers): the records below ``a`` count ``a`` each, those above ``b`` count ``b``."""
    at = np.asarray(points)
    held = [int(c) for c in np.asarray(counts).tolist()]
    i, j = int(np.searchsorted(at, a, side="left")), int(np.searchsorted(at, b, side="right"))
    inner = at[i:j].tolist()
    total = a * sum(held[:i]) + b * sum(held[j:]) + sum(int(u) * c for u, c in zip(inner, held[i:j], strict=True))
    return sum(held), total


@dataclass(frozen=True)
class TrimmedMean(Quantiles):
    """The trimmed mean's definition: :class:`Quantiles` at ``trim`` and ``1 - trim`` (the trim points), then
    the bounded mean of the records winsorized between them (see the module docstring)."""

    statistic = "trimmed_mean"
    record_words: ClassVar[Mapping[str, str]] = {  # the report's words for the fields this record adds
        "trim": "the share of the records cut from each side: the trimmed mean's trim points are its quantiles trim "
                "and 1 - trim",
        "winsorized_sum_noise": "the law of the noisy sum of records clamped into the cell's trim points [a, b]: its "
                                "sensitivity grows with b - a, so its parameter is stated per unit of max(h, 1)",
    }
    single = True
    whole = False  # a mean of whole numbers is a fraction
    levels: tuple[Fraction, ...] = field(init=False, default=())
    trim: Any = field(default=DEFAULT_TRIM, kw_only=True)
    selection_share: Any = field(default=DEFAULT_SELECTION_SHARE, kw_only=True)

    def __post_init__(self) -> None:
        p = check_trim(self.trim)
        object.__setattr__(self, "trim", p)
        object.__setattr__(self, "selection_share", check_selection_share(self.selection_share))
        object.__setattr__(self, "levels", (p, 1 - p))
        super().__post_init__()

    @property
    def selection_cost(self) -> Cost:
        """The cost of the two trim points: ``selection_share`` of the cost."""
        return self.cost.share(self.selection_share)

    @property
    def mean_cost(self) -> Cost:
        """The cost of the mean between them: the rest."""
        return self.cost.share(1 - self.selection_share)

    @property
    def share(self) -> Fraction:
        """The ``epsilon`` of each trim point's selection in each cell: half the selection cost."""
        return selection_epsilon(self.selection_cost.split(2), self.max_groups)

    @property
    def mechanism(self) -> str:
        return f"{self.selection}, then {self.count_noise.mechanism}"

    @property
    def count_noise(self) -> Noise:
        """The noise of the count: sensitivity ``m``, half the mean's cost."""
        return Noise.of(self.max_contributions, self.mean_cost.split(2), self.max_groups)

    def sum_noise(self, a: int, b: int) -> Noise:
        """The noise of the centred winsorized sum of a cell whose trim points are ``[a, b]`` (units)."""
        _, half = centre_of_bounds(a, b)
        return Noise.of(self.max_contributions * max(half, 1), self.mean_cost.split(2), self.max_groups)

    def value_halfwidth(self, alpha: Fraction, rows: int) -> Fraction:
        """The half-width of the released value at level ``1 - alpha`` around the winsorized mean of a cell of
        ``rows`` rows, whatever its trim points: the mean's ``min(E(rows), hi - lo)`` for ``[a, b]`` the bounds
        (the widest; see the module docstring), exact."""
        column = self.column
        t_n = self.count_noise.halfwidth(alpha / 2)
        t_s = self.sum_noise(column.lo_u, column.hi_u).halfwidth(alpha / 2)
        return mean_error(rows, t_n, t_s, centre(column)[1], column.hi_u - column.lo_u) * column.lattice.step

    def cell_record(self, alpha: Fraction) -> dict[str, Any]:
        """The trim points' selection (as a quantile cell records it, at both levels), the count's noise, the
        centred sum's law as a function of the cell's released ``[a, b]`` and how the cost is split."""
        sum_law = self.sum_noise(0, 1)  # sensitivity m: the law's parameter per unit of max(h, 1)
        return {**super().cell_record(alpha), "q": list(self.levels), "trim": self.trim,
                "noise": [self.count_noise.record()],
                "winsorized_sum_noise": {
                    "mechanism": sum_law.mechanism,
                    "cell_sensitivity_units": "m * max(h, 1), h = max(b_u - c, c - a_u), c = floor((a_u + b_u) / 2)",
                    f"{sum_law.law.parameter_name}_at_h_1": sum_law.parameter},
                "budget_split": f"trim points {self.selection_share} (half each), count and winsorized sum "
                                f"{1 - self.selection_share} (half each)",
                "released": "round(clamp(c + S~ / max(N~, 1), a_u, b_u)); _low and _high: the trim points a and b"}

    def release_points(self, points: Sequence[Sequence[int] | np.ndarray],
                       counts: Sequence[Sequence[int] | np.ndarray], source: RandomSource,
                       alpha: Fraction) -> CellColumn:  # noqa: ARG002 - its interval is [a, b], surely
        """Each cell's trimmed mean (units) with its trim points as ``_low`` / ``_high``: per cell, the two
        selections, then the count's and the winsorized sum's noises (see the module docstring)."""
        values, lows, highs = [], [], []
        count_noise = self.count_noise
        for cell_points, cell_counts in zip(points, counts, strict=True):
            a, b = self.cell_points(cell_points, cell_counts)(source)
            b = max(a, b)
            n, total = winsorized(cell_points, cell_counts, a, b)
            c, _ = centre_of_bounds(a, b)
            noisy_n = n + count_noise.draw(source)
            noisy_s = total - c * n + self.sum_noise(a, b).draw(source)
            value, _, _ = mean_units([noisy_n], [noisy_s], c, a, b, 0, 0)
            values.append(value[0])
            lows.append(a)
            highs.append(b)
        step = self.column.lattice.step
        return CellColumn(values, lows, highs, step, step)
