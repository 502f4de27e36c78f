"""The statistics of one numeric column on the lattice (sum, mean, variance): one signature, centred moments.

:class:`LatticeStatistic` is their shared definition: its ``prepare``
classmethod is the one signature of ``prepare_sum``, ``prepare_mean`` and
``prepare_variance``; its public inputs are a cost and a
:class:`~securedp.mechanisms.records.LatticeColumn`; step (1) of each is a
few exact integer sums of the kept units (:mod:`securedp.mechanisms.statistic`).

Mean and variance centre the units at the public lattice point
``c = floor((lo_u + hi_u) / 2)`` so that one record moves the centred sum by
at most ``half = max(hi_u - c, c - lo_u)`` units, about half of what the
uncentred sum allows. The shares of the budget and the sensitivities are
stated in :mod:`securedp.mechanisms.mean` and :mod:`securedp.mechanisms.variance`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import numpy as np

from securedp.lattice import exact_sum, exact_sum_of_squares
from securedp.lattice.screen import INT64_MAX
from securedp.mechanisms.noise import Cost, privacy_cost
from securedp.mechanisms.records import LatticeColumn
from securedp.mechanisms.release import PreparedRelease
from securedp.mechanisms.statistic import AdditiveStatistic, Statistic
from securedp.reading.types import integer_typed

A = TypeVar("A")


@dataclass(frozen=True)
class ColumnStatistic(Statistic[A]):
    """A statistic of one numeric column clamped to public ``bounds`` on a lattice (``column``)."""

    whole: ClassVar[bool] = True
    """Its answer is a value of the column's lattice that an integer column keeps whole (a sum, a quantile):
    an integer-typed column without a lattice takes step 1 (:func:`~securedp.mechanisms.records.typed_lattice`).
    False for a mean or a variance, whose answers are fractions of whole data (a proportion of 0/1 values):
    they keep the bounds' rule."""

    cost: Cost
    column: LatticeColumn
    max_contributions: int = field(init=False)
    max_groups: int = field(default=1, kw_only=True)
    """The cells one person can change: 1 for a one-column release, ``max_groups`` in a table."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_contributions", self.column.max_contributions)


@dataclass(frozen=True)
class LatticeStatistic(ColumnStatistic[A], AdditiveStatistic[A]):
    """Sum, mean and variance: their one signature, priced in ``epsilon`` or ``rho``."""

    @classmethod
    def prepare(cls, data: Any, *, bounds: Any = None, epsilon: Any = None, rho: Any = None, max_contributions: Any = 1,
                ids: Any = None, lattice: Any = None, missing: str = "raise", fill: Any = None) -> PreparedRelease:
        cost = privacy_cost(epsilon, rho)
        column = LatticeColumn.of(bounds=bounds, lattice=lattice, max_contributions=max_contributions,
                                  missing=missing, fill=fill, integer=cls.whole and integer_typed(data))
        return cls(cost, column).prepare_data(data, ids)


def centre(column: LatticeColumn) -> tuple[int, int]:
    """``(c, half)``: the centre in units and the largest ``|u - c|`` of a clamped record."""
    return centre_of_bounds(column.lo_u, column.hi_u)


def centre_of_bounds(lo_u: int, hi_u: int) -> tuple[int, int]:
    """``(c, half)`` for bounds ``[lo_u, hi_u]`` in units: ``c = floor((lo_u + hi_u) / 2)``."""
    c = (lo_u + hi_u) // 2
    return c, max(hi_u - c, c - lo_u)


def centred_units(units: np.ndarray, c: int, half: int) -> np.ndarray:
    """``units - c`` exactly (int64 when ``|u - c| <= half`` fits, else Python ints)."""
    if units.dtype == object or half > INT64_MAX:
        return np.array([int(u) - c for u in units] or [], dtype=object)
    shifted: np.ndarray = units - np.int64(c)
    return shifted


def centred_sums(units: np.ndarray, c: int, half: int) -> tuple[int, int]:
    """``(sum(u - c), sum((u - c)**2))`` over the kept units, exactly."""
    shifted = centred_units(units, c, half)
    return exact_sum(shifted, half), exact_sum_of_squares(shifted, half)


def centred(c: int, rows: list[int], total: list[int]) -> list[int]:
    """Each cell's centred sum ``sum(u - c) = S - c N`` from its row count ``N`` and sum of units ``S``."""
    return [s - c * x for s, x in zip(total, rows, strict=True)]
