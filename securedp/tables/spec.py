"""What a grouped table releases per cell: the aggregations and their exact privacy maps.

Each aggregation names its output columns and, given the table's bounding
(``k = max_groups`` keys per person, ``m = max_rows`` rows per person and
key), states the sensitivities of the exact integer aggregates it adds noise
to. Adding or removing one person changes at most ``k`` cells, each by at
most the per-cell sensitivity below, so:

* L1 (discrete Laplace, ``epsilon``): ``k * cell``; the scale is
  ``k * cell / epsilon_a``;
* L2 (discrete Gaussian, ``rho``): ``sqrt(k) * cell``; the variance is
  ``k * cell**2 / (2 rho_a)``, an exact rational.

Per-cell sensitivities, in lattice units (``W = max(|lo_u|, |hi_u|, 1)``,
``h = max(half, 1)`` with the centre and ``half`` of
:mod:`securedp.mechanisms.moments`):

=============  ===================================================  ==============
aggregation    noisy integers per cell                              cell sensitivity
=============  ===================================================  ==============
``Count``      rows                                                 ``m``
``Persons``    distinct persons                                     ``1``
``Sum``        sum of units                                         ``m * W``
``Mean``       rows; centred sum (half of its budget each)          ``m``; ``m * h``
``Variance``   rows; centred sum; centred sum of squares (thirds)   ``m``; ``m h``; ``m h**2``
``Quantile``   exponential mechanism over the lattice per cell      ``m max(a, b-a)``
``TrimmedMean`` trim points ``a, b`` (two selections), then rows;   as ``Quantile``;
               centred sum of the records winsorized to ``[a, b]``  ``m``; ``m max(h_ab, 1)``
=============  ===================================================  ==============

A trimmed mean's centred-sum sensitivity ``h_ab`` is the half-width of the cell's *released* trim points
``[a, b]`` (:mod:`securedp.mechanisms.trimmed_mean`: the selections are DP outputs, so the mean's noise may
depend on them, by adaptive composition).

A quantile's sensitivity is that of its integer score ``g`` for ``q = a / b``
(:mod:`securedp.mechanisms.rank_utility`), whose law has rate
``epsilon_cell / (2 m max(a, b - a))`` (``epsilon_cell / m`` for ``q`` 0 or 1).

Quantiles spend ``epsilon_a / k`` per cell (a person is in at most ``k``
cells; each cell's selection is ``epsilon_a / k``-DP for ``m`` rows). In a
table priced in ``rho``, each cell's selection runs at the largest
``epsilon_cell = j / 2**32`` with ``k * epsilon_cell**2 / 8 <= rho_a``
(:func:`~securedp.mechanisms.quantile.selection_epsilon`): an ``epsilon``-DP
exponential mechanism is ``epsilon``-bounded range, hence ``epsilon**2 / 8``-zCDP (Cesar and Rogers 2021), and
the at most ``k`` cells one person changes compose to ``k * epsilon_cell**2 / 8``.

**One definition.** An aggregation here is a *request* (which column, which
bounds, which share of the budget); the statistic itself, its sensitivities,
noise and post-processing, is the one-column statistic of
:mod:`securedp.mechanisms` with ``max_groups = k``
(:meth:`definition`), so a one-column release is the one-cell table of the
same statistic. :attr:`reads` names what the engine computes for it:
``"keys"`` (rows and persons per key), ``"sums"`` (and sums of a value
column's units), ``"squares"`` (and of their squares) or ``"points"``
(counts per lattice point, for a selection).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

from securedp.deprecation import deprecated
from securedp.hazmat.exact.rational import format_rational, to_rational
from securedp.mechanisms import count, histogram, iqr, mean, quantile, sum, trimmed_mean, variance  # noqa: A004 - the module securedp.mechanisms.sum
from securedp.mechanisms.histogram import Bins, Categories, check_categories, check_edges, edge_lattice
from securedp.mechanisms.moments import ColumnStatistic
from securedp.mechanisms.quantile import default_lattice as quantile_lattice
from securedp.mechanisms.quantile import selection_epsilon
from securedp.mechanisms.rank_utility import DEFAULT_FALLBACK
from securedp.mechanisms.records import LatticeColumn, typed_lattice
from securedp.mechanisms.statistic import AdditiveStatistic
from securedp.privacy.cost import Cost

Definition = AdditiveStatistic | quantile.Quantiles | histogram.Histogram
"""A table cell's statistic: noisy integers (:class:`~securedp.mechanisms.statistic.AdditiveStatistic`), a
selection (:class:`~securedp.mechanisms.quantile.Quantiles`) or a histogram's noisy counts per label."""


@dataclass(frozen=True)
class Count:
    """The number of rows per cell, after bounding."""

    share: Any = None

    reads: ClassVar[str] = "keys"
    column = None

    @property
    def name(self) -> str:
        return "count"

    def definition(self, cost: Cost, k: int, m: int) -> Definition:
        """The statistic of each cell: :class:`securedp.mechanisms.count.Count` for ``k`` cells per person."""
        return count.Count(cost, m, max_groups=k)


@dataclass(frozen=True)
class Persons:
    """The number of distinct persons per cell, after bounding."""

    share: Any = None

    reads: ClassVar[str] = "keys"
    column = None

    @property
    def name(self) -> str:
        return "persons"

    def definition(self, cost: Cost, k: int, m: int) -> Definition:
        """The statistic of each cell: :class:`securedp.mechanisms.count.Persons` (sensitivity 1)."""
        return count.Persons(cost, m, max_groups=k)


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
    """The statistic of each cell (:meth:`definition` builds it); its ``whole`` says whether an integer column keeps
    step 1."""

    @property
    def name(self) -> str:
        return f"{self.column}_{self.kind}"

    def typed(self, integer: bool) -> ColumnAggregation:
        """This aggregation with its lattice fixed by the column's declared type: step 1 for an ``integer``
        column without a lattice (:func:`~securedp.mechanisms.records.typed_lattice`), else itself."""
        lattice = typed_lattice(self.lattice, self.bounds, integer and self.statistic.whole)
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
class Sum(ColumnAggregation):
    """The sum of a column per cell."""

    statistic = sum.Sum
    kind = "sum"

    def definition(self, cost: Cost, k: int, m: int) -> Definition:
        lattice = self.lattice_column(m)
        return sum.Sum(cost, lattice, max_groups=k)


@dataclass(frozen=True)
class Mean(ColumnAggregation):
    """The mean of a column per cell (noisy centred sum over noisy count, clamped to the bounds)."""

    statistic = mean.Mean
    kind = "mean"

    def definition(self, cost: Cost, k: int, m: int) -> Definition:
        lattice = self.lattice_column(m)
        return mean.Mean(cost, lattice, max_groups=k)


@dataclass(frozen=True)
class Variance(ColumnAggregation):
    """The population variance of a column per cell (three noisy moments)."""

    statistic = variance.Variance
    kind = "variance"
    reads = "squares"

    def definition(self, cost: Cost, k: int, m: int) -> Definition:
        lattice = self.lattice_column(m)
        return variance.Variance(cost, lattice, max_groups=k)


@dataclass(frozen=True)
class PointsAggregation(ColumnAggregation):
    """An aggregation that selects from each cell's counts per lattice point (a quantile, the interquartile
    range, the trimmed mean's trim points), on the quantiles' fine default lattice, with a fallback point
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


@dataclass(frozen=True)
class Quantile(PointsAggregation):
    """The ``q``-quantile of a column per cell, by the exact exponential mechanism over the lattice."""

    q: Any = Fraction(1, 2)

    statistic = quantile.Quantile
    kind = "quantile"

    @property
    def name(self) -> str:
        q = to_rational(self.q, "q")
        return f"{self.column}_median" if q == Fraction(1, 2) else f"{self.column}_q{_level_text(q)}"

    def definition(self, cost: Cost, k: int, m: int) -> Definition:
        level = to_rational(self.q, "q")
        statistic = quantile.Median if level == Fraction(1, 2) else quantile.Quantile
        return statistic(cost, self.lattice_column(m), (level,), max_groups=k, fallback=self.fallback_probability)


@dataclass(frozen=True)
class IQR(PointsAggregation):
    """The interquartile range of a column per cell: both quartiles selected exactly, released as
    ``max(Q3 - Q1, 0)`` (:mod:`securedp.mechanisms.iqr`)."""

    statistic = iqr.InterquartileRange
    kind = "iqr"

    def definition(self, cost: Cost, k: int, m: int) -> Definition:
        return iqr.InterquartileRange(cost, self.lattice_column(m), max_groups=k, fallback=self.fallback_probability)


@dataclass(frozen=True)
class TrimmedMean(PointsAggregation):
    """The trimmed (winsorized) mean of a column per cell: the ``trim`` and ``1 - trim`` quantiles selected
    exactly at ``selection_share`` of the cost, then the bounded mean of the records clamped between them,
    released with the trim points as ``_low`` / ``_high`` (:mod:`securedp.mechanisms.trimmed_mean`)."""

    trim: Any = trimmed_mean.DEFAULT_TRIM
    selection_share: Any = trimmed_mean.DEFAULT_SELECTION_SHARE

    statistic = trimmed_mean.TrimmedMean
    kind = "trimmed_mean"

    def definition(self, cost: Cost, k: int, m: int) -> Definition:
        return trimmed_mean.TrimmedMean(cost, self.lattice_column(m), trim=self.trim,
                                        selection_share=self.selection_share, max_groups=k,
                                        fallback=self.fallback_probability)


def _level_text(q: Fraction) -> str:
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


@dataclass(frozen=True)
class Histogram(ColumnAggregation):
    """The counts of a column's records in declared ``categories`` or ``bins`` (edges), one noisy count each
    (:mod:`securedp.mechanisms.histogram`): output columns ``<column>_histogram_<i>`` (with intervals) per
    label ``i``; the labels are in the release's parameters."""

    bounds: tuple[Any, Any] | str = (0, 0)
    """Unused: a histogram's range is its categories or bins."""
    categories: Any = None
    bins: Any = None
    unknown: str = "raise"

    kind = "histogram"
    reads = "bins"

    def derivation(self) -> Categories | Bins:
        """How each record becomes the index of its category or bin (checked: public arguments only)."""
        if (self.categories is None) == (self.bins is None):
            raise TypeError("give exactly one of categories= (declared labels) or bins= (edges)")
        if self.unknown not in histogram.UNKNOWN_POLICIES:
            raise ValueError(f"unknown must be one of {histogram.UNKNOWN_POLICIES}, got {self.unknown!r}")
        if self.categories is not None:
            if self.lattice is not None:
                raise ValueError("lattice= applies to bins, not to categories")
            return Categories(check_categories(self.categories), self.unknown)
        edges = check_edges(self.bins)
        return Bins(edges, edge_lattice(edges, self.lattice))

    def typed(self, integer: bool) -> ColumnAggregation:  # noqa: ARG002 - the bins fix the lattice
        return self

    def lattice_column(self, m: int = 1) -> LatticeColumn:
        """The canonical integers' range: the label indices ``0 .. K - 1`` on step 1."""
        labels = len(self.derivation().labels)
        return LatticeColumn.of(bounds=(0, labels - 1), lattice=1, max_contributions=m)

    def definition(self, cost: Cost, k: int, m: int) -> Definition:
        return histogram.Histogram(cost, m, self.derivation(), max_groups=k)


def quantile_cell_epsilon(epsilon: Fraction | None, rho: Fraction | None, k: int) -> Fraction:
    """Deprecated: :func:`securedp.mechanisms.quantile.selection_epsilon` of ``Cost(epsilon, rho)`` and ``k``."""
    deprecated("quantile_cell_epsilon", "securedp.mechanisms.quantile.selection_epsilon")
    return selection_epsilon(Cost.of(epsilon, rho), k)


def Median(column: str, bounds: tuple[Any, Any] | str, lattice: Any = None,  # noqa: N802
           share: Any = None, *, fallback: Any = None) -> Quantile:
    """The median of a column per cell: :class:`Quantile` with ``q = 1/2``."""
    return Quantile(column, bounds, lattice, share, Fraction(1, 2), fallback=fallback)


Aggregation = Count | Persons | ColumnAggregation
"""An aggregation: a count of rows or persons, or an aggregation of one value column."""


@dataclass(frozen=True)
class Kind:
    """How the command line and a recorded query name an aggregation: its constructor and what it takes.

    ``takes`` is ``"nothing"`` (``--count``), ``"column"`` (``--sum COLUMN:LO,HI[:STEP]``) or ``"level"``
    (``--quantile COLUMN:Q:LO,HI[:STEP]``); :func:`build` makes the aggregation.
    """

    takes: str
    make: Callable[..., Aggregation]
    options: frozenset[str] = frozenset()
    """The keyword options it takes besides its level (a trimmed mean's ``trim``: ``--trim``)."""

    def build(self, column: str | None = None, bounds: tuple[Any, Any] | None = None, lattice: Any = None,
              share: Any = None, q: Any = None, trim: Any = None, fallback: Any = None) -> Aggregation:
        options = {name: value for name, value in (("trim", trim), ("fallback", fallback)) if value is not None}
        if "trim" in options.keys() - self.options:
            raise ValueError("takes no trim level (--trim is a trimmed mean's)")
        if "fallback" in options.keys() - self.options:
            raise ValueError("takes no fallback (--fallback is a selection's: median, quantile, iqr, trimmed mean)")
        if self.takes == "nothing":
            return self.make(share)
        if column is None or bounds is None:
            raise ValueError("needs a column and bounds (COLUMN:LO,HI)")
        if self.takes == "level":
            if q is None:
                raise ValueError("needs its level (COLUMN:Q:LO,HI)")
            return self.make(column, bounds, lattice, share, q, **options)
        return self.make(column, bounds, lattice, share, **options)


SELECTED = frozenset({"fallback"})
"""The option every selection takes: its fallback probability (``--fallback``)."""
KINDS: dict[str, Kind] = {
    "count": Kind("nothing", Count), "persons": Kind("nothing", Persons), "sum": Kind("column", Sum),
    "mean": Kind("column", Mean), "variance": Kind("column", Variance),
    "median": Kind("column", Median, SELECTED), "quantile": Kind("level", Quantile, SELECTED),
    "iqr": Kind("column", IQR, SELECTED), "trimmed_mean": Kind("column", TrimmedMean, SELECTED | {"trim"}),
}
"""Every aggregation by its name on the command line (``--NAME``) and in recorded queries: the one list
the command's options, the query parser and replay read."""
