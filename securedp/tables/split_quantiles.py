"""The table aggregation of several quantiles of one column, released by the recursive split.

:class:`QuantilesBySplit` is the table aggregation of the statistic ``quantiles`` of three or more levels
(``securedp.quantiles``, ``--stat quantiles --levels``, a table's ``--quantiles COLUMN:Q1,Q2,...:LO,HI``; the
split is chosen in :func:`securedp.tables.spec._levels`): one selection per depth of the split tree over each
cell's counts per lattice point (:mod:`securedp.mechanisms.quantile_split`), one output column per level. (Its
name is its own: :class:`securedp.mechanisms.quantile.Quantiles` is the definition of separate selections.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from securedp.mechanisms.quantile import check_levels
from securedp.mechanisms.quantile_split import SplitQuantiles
from securedp.privacy.cost import Cost
from securedp.tables.aggregation import Definition, PointsAggregation


@dataclass(frozen=True)
class QuantilesBySplit(PointsAggregation):
    """Several quantiles (``qs``: two or more distinct levels) of a column per cell, by the recursive split
    (:mod:`securedp.mechanisms.quantile_split`): output columns ``<column>_quantiles_<i>``, ``i`` the level's
    index in ``qs``; each level's rank error bound is in its record (``rank_error_bounds``, in the order of
    ``qs``)."""

    qs: tuple[Any, ...] = ()

    statistic = SplitQuantiles
    kind = "quantiles"

    def definition(self, cost: Cost, k: int, m: int) -> Definition:
        return SplitQuantiles(cost, self.lattice_column(m), check_levels(self.qs), max_groups=k,
                              fallback=self.fallback_probability)
