"""The statistics of one numeric column on the lattice: their shared definition, and centred moments.

:class:`ColumnStatistic` is the definition of every statistic of one value column clamped to public
bounds on a lattice (sum, mean, variance, quantiles): a cost, a
:class:`~securedp.mechanisms.records.LatticeColumn` (lattice, bounds, ``m`` rows per person in a cell)
and ``k = max_groups`` cells per person. :class:`LatticeStatistic` is the additive ones' (sum, mean,
variance), whose exact cells are a few integer sums of the kept units.

Mean and variance centre the units at the public lattice point ``c = floor((lo_u + hi_u) / 2)`` so that
one record moves the centred sum by at most ``half = max(hi_u - c, c - lo_u)`` units, about half of what
the uncentred sum allows. The shares of the budget and the sensitivities are stated in
:mod:`securedp.mechanisms.mean` and :mod:`securedp.mechanisms.variance`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from securedp.mechanisms.records import LatticeColumn
from securedp.mechanisms.statistic import AdditiveStatistic, CellStatistic
from securedp.privacy.cost import Cost


@dataclass(frozen=True)
class ColumnStatistic(CellStatistic):
    """A statistic of one numeric column clamped to public ``bounds`` on a lattice (``column``)."""

    whole: ClassVar[bool] = True
    """Its answer is a value of the column's lattice that a typed column keeps on its grid (a sum, a quantile):
    a column without a lattice whose type declares a grid takes it, step 1 for integers and ``10**-s`` for a
    decimal of scale ``s`` (:func:`~securedp.mechanisms.records.typed_lattice`). False for a mean or a variance,
    whose answers are fractions of the data's grid (a proportion of 0/1 values): they keep the bounds' rule."""

    cost: Cost
    column: LatticeColumn
    max_contributions: int = field(init=False)
    max_groups: int = field(default=1, kw_only=True)
    """The cells one person can change: 1 for a one-column release, ``max_groups`` in a table."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_contributions", self.column.max_contributions)

    def column_record(self) -> dict[str, Any]:
        """The column's public reading, as a release records it: its lattice step and bounds in units."""
        return {"lattice_step": self.column.lattice.step, "bounds_units": [self.column.lo_u, self.column.hi_u]}


@dataclass(frozen=True)
class LatticeStatistic(ColumnStatistic, AdditiveStatistic):
    """Sum, mean and variance: additive statistics of one lattice column."""


def centre(column: LatticeColumn) -> tuple[int, int]:
    """``(c, half)``: the centre in units and the largest ``|u - c|`` of a clamped record."""
    return centre_of_bounds(column.lo_u, column.hi_u)


def centre_of_bounds(lo_u: int, hi_u: int) -> tuple[int, int]:
    """``(c, half)`` for bounds ``[lo_u, hi_u]`` in units: ``c = floor((lo_u + hi_u) / 2)``."""
    c = (lo_u + hi_u) // 2
    return c, max(hi_u - c, c - lo_u)


def centred(c: int, rows: list[int], total: list[int]) -> list[int]:
    """Each cell's centred sum ``sum(u - c) = S - c N`` from its row count ``N`` and sum of units ``S``."""
    return [s - c * x for s, x in zip(total, rows, strict=True)]


def ratio_error(rows: int, t_count: int, t_sum: int, largest: int) -> Fraction | None:
    """A bound of ``|S~ / d - S / n|`` for ``n = rows``, ``d = max(N~, 1)``, whenever ``|N~ - n| <= t_count``,
    ``|S~ - S| <= t_sum`` and ``|S| <= n * largest``: ``(largest * t_count + t_sum) / (n - t_count)``, or
    ``None`` when ``n - t_count < 1`` (then ``d`` may be 1 and nothing bounds the ratio).

    Proof: ``d = N~ >= n - t_count >= 1``, and ``S~ / d - S / n = S (n - d) / (n d) + (S~ - S) / d``, whose
    terms are at most ``largest * t_count / d`` and ``t_sum / d`` in absolute value. The bound is attained
    (``S = n * largest``, ``N~ = n - t_count``, ``S~ = S + t_sum``).
    """
    if rows - t_count < 1:
        return None
    return Fraction(largest * t_count + t_sum, rows - t_count)
