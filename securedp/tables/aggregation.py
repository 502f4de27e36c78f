"""The base classes of a table's aggregations: one value column clamped to public bounds on a lattice, and the
selections among its lattice points. The aggregations themselves, one per statistic, are in
:mod:`securedp.tables.spec`; see there for their privacy maps."""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from securedp.deprecation import deprecated
from securedp.hazmat.exact.rational import format_rational
from securedp.mechanisms import histogram, quantile
from securedp.mechanisms.moments import ColumnStatistic
from securedp.mechanisms.quantile import default_lattice as quantile_lattice
from securedp.mechanisms.rank_utility import DEFAULT_FALLBACK
from securedp.mechanisms.records import LatticeColumn, typed_lattice
from securedp.mechanisms.selection_price import selection_epsilon
from securedp.mechanisms.statistic import AdditiveStatistic
from securedp.privacy.cost import Cost

Definition = AdditiveStatistic | quantile.Quantiles | histogram.Histogram
"""A table cell's statistic: noisy integers (:class:`~securedp.mechanisms.statistic.AdditiveStatistic`), a
selection (:class:`~securedp.mechanisms.quantile.Quantiles`) or a histogram's noisy counts per label."""


@dataclass(frozen=True)
class ColumnAggregation(ABC):
    """An aggregation of one numeric column clamped to public ``bounds`` on a lattice."""

    column: str
    bounds: tuple[Any, Any] | str
    """Public ``(lo, hi)``, or ``"auto"``: chosen privately first (:func:`securedp.planning.auto_bounds`)."""
    lattice: Any = None
    share: Any = None

    kind: ClassVar[str] = ""
    reads: ClassVar[str] = "sums"
    statistic: ClassVar[type[ColumnStatistic]]
    """The statistic of each cell (:meth:`definition` builds it); its ``whole`` says whether a typed column keeps its
    declared grid (step 1 for integers, ``10**-s`` for decimals)."""

    @property
    def name(self) -> str:
        return f"{self.column}_{self.kind}"

    def typed(self, step: Fraction | None) -> ColumnAggregation:
        """This aggregation with its lattice fixed by the column's declared type: the grid ``step`` it declares
        (1 for integers, ``10**-s`` for decimals) for a column without a lattice
        (:func:`~securedp.mechanisms.records.typed_lattice`), else itself."""
        lattice = typed_lattice(self.lattice, self.bounds, step if self.statistic.whole else None)
        return self if lattice is self.lattice else dataclasses.replace(self, lattice=lattice)

    def lattice_column(self, m: int = 1) -> LatticeColumn:
        """The public lattice and bounds of the column, by the rule of the one-column release of the same kind."""
        if isinstance(self.bounds, str) and self.bounds == "auto":
            raise ValueError(f"{self.name}: bounds='auto' are chosen by a release of their own, charged before the "
                             "table: securedp.planning.auto_bounds(data, aggregations, epsilon=..., session=...) "
                             "returns the aggregations with their bounds (the command: --auto-epsilon)")
        return LatticeColumn.of(bounds=self.bounds, lattice=self.lattice, max_contributions=m,
                                default=self.default_lattice())

    def lattice_of(self) -> tuple[Any, int, int]:
        """Deprecated: ``(lattice, lo_u, hi_u)`` of :meth:`lattice_column`."""
        deprecated("lattice_of()", "lattice_column()")
        column = self.lattice_column()
        return column.lattice, column.lo_u, column.hi_u

    def default_lattice(self) -> Callable[[Any, Any], Any] | None:
        """The rule choosing a lattice when none is given (None: the rule of sums and means)."""
        return None

    @abstractmethod
    def definition(self, cost: Cost, k: int, m: int) -> Definition:
        """The statistic of each cell, on the column's lattice with ``m`` rows and ``k`` cells per person."""




@dataclass(frozen=True)
class PointsAggregation(ColumnAggregation):
    """An aggregation that selects from each cell's counts per lattice point (a quantile, the interquartile
    range, the trim points of a mean between them), on the quantiles' fine default lattice, with a fallback point
    (``fallback`` its probability in a cell without records, :mod:`securedp.mechanisms.rank_utility`; ``None``:
    3/4; 0: none)."""

    fallback: Any = field(default=None, kw_only=True)

    reads = "points"

    @property
    def fallback_probability(self) -> Any:
        """``fallback``, or its default when ``None`` (the statistic checks it: :class:`~securedp.mechanisms.
        quantile.Quantiles`)."""
        return DEFAULT_FALLBACK if self.fallback is None else self.fallback

    def default_lattice(self) -> Callable[[Any, Any], Any] | None:
        return quantile_lattice


def quantile_cell_epsilon(epsilon: Fraction | None, rho: Fraction | None, k: int) -> Fraction:
    """Deprecated: :func:`securedp.mechanisms.selection_price.selection_epsilon` of ``Cost(epsilon, rho)`` and ``k``."""
    deprecated("quantile_cell_epsilon", "securedp.mechanisms.selection_price.selection_epsilon")
    return selection_epsilon(Cost.of(epsilon, rho), k)


def level_text(q: Fraction) -> str:
    """A quantile level as a column name writes it: its exact decimal (``0.9``, ``0.25``), else ``num/den``."""
    d = q.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    if d != 1:
        return format_rational(q)
    places = 0
    while (q * 10**places).denominator != 1:
        places += 1
    digits = str((q * 10**places).numerator).rjust(places + 1, "0")
    return digits if places == 0 else f"{digits[:-places]}.{digits[-places:]}"
