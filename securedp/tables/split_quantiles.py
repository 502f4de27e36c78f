"""The table aggregation of several quantiles of one column, released by the recursive split.

:class:`Quantiles` is the aggregation behind ``securedp.quantiles`` of three or more levels
(:func:`securedp.tables.one_column.request`): one selection per depth of the split tree over each cell's
counts per lattice point (:mod:`securedp.mechanisms.quantile_split`), one output column per level.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from securedp.mechanisms.quantile import check_levels
from securedp.mechanisms.quantile_split import SplitQuantiles
from securedp.privacy.cost import Cost
from securedp.tables.aggregation import Definition, PointsAggregation


@dataclass(frozen=True)
class Quantiles(PointsAggregation):
    """Several quantiles (``qs``: two or more distinct levels) of a column per cell, by the recursive split
    (:mod:`securedp.mechanisms.quantile_split`): output columns ``<column>_quantiles_<i>``, ``i`` the level's
    index in ``qs``."""

    qs: tuple[Any, ...] = ()

    statistic = SplitQuantiles
    kind = "quantiles"

    def definition(self, cost: Cost, k: int, m: int) -> Definition:
        return SplitQuantiles(cost, self.lattice_column(m), check_levels(self.qs), max_groups=k,
                              fallback=self.fallback_probability)
