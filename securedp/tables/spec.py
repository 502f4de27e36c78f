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

Quantiles spend ``epsilon_a / k`` per cell (a person is in at most ``k`` cells; each cell's selection is ``epsilon_a
/ k``-DP for ``m`` rows). In a table priced in ``rho``, each cell's selection runs at an ``epsilon_cell = j /
2**32`` with ``k * rho(epsilon_cell) <= rho_a`` (:func:`~securedp.mechanisms.selection_price.selection_epsilon`): an
``epsilon``-DP exponential mechanism is ``epsilon``-bounded range, hence ``rho(epsilon)``-zCDP for the certified
sharp bound ``rho`` (:mod:`securedp.privacy.bounded_range_zcdp`, at most ``epsilon**2 / 8``), and the at most ``k``
cells one person changes compose to ``k * rho(epsilon_cell)``. Several quantiles by the recursive split
(:class:`~securedp.tables.split_quantiles.QuantilesBySplit`, three or more levels) run each of their ``D =
ceil(log2(levels + 1))`` depths at that rule's ``epsilon_cell`` for ``epsilon_a / D`` (or ``rho_a / D``): the parts
of one depth hold disjoint records (:mod:`securedp.mechanisms.quantile_split`).

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

from securedp.hazmat.exact.rational import probability, to_rational
from securedp.lattice.columns import ONE_COLUMN_HINT
from securedp.mechanisms import count, histogram, iqr, mean, quantile, sum, trimmed_mean, variance  # noqa: A004 - the module securedp.mechanisms.sum
from securedp.mechanisms.histogram import Bins, Categories, check_categories, check_edges, edge_lattice
from securedp.mechanisms.quantile import check_levels
from securedp.mechanisms.quantile_split import split_depths
from securedp.mechanisms.records import LatticeColumn
from securedp.privacy.cost import Cost
from securedp.tables.aggregation import ColumnAggregation as ColumnAggregation  # the aggregations' bases, here too
from securedp.tables.aggregation import Definition as Definition
from securedp.tables.aggregation import PointsAggregation as PointsAggregation
from securedp.tables.aggregation import level_text
from securedp.tables.aggregation import quantile_cell_epsilon as quantile_cell_epsilon  # the old path
from securedp.tables.registry import STATISTICS as STATISTICS  # the one list, filled below
from securedp.tables.registry import Kind, OneCell, Statistic
from securedp.tables.split_quantiles import QuantilesBySplit


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
class Quantile(PointsAggregation):
    """The ``q``-quantile of a column per cell, by the exact exponential mechanism over the lattice."""

    q: Any = Fraction(1, 2)

    statistic = quantile.Quantile
    kind = "quantile"

    @property
    def name(self) -> str:
        q = to_rational(self.q, "q")
        return f"{self.column}_median" if q == Fraction(1, 2) else f"{self.column}_q{level_text(q)}"

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

    def typed(self, step: Fraction | None) -> ColumnAggregation:  # noqa: ARG002 - the bins fix the lattice
        return self

    def lattice_column(self, m: int = 1) -> LatticeColumn:
        """The canonical integers' range: the label indices ``0 .. K - 1`` on step 1."""
        labels = len(self.derivation().labels)
        return LatticeColumn.of(bounds=(0, labels - 1), lattice=1, max_contributions=m)

    def definition(self, cost: Cost, k: int, m: int) -> Definition:
        return histogram.Histogram(cost, m, self.derivation(), max_groups=k)


def Median(column: str, bounds: tuple[Any, Any] | str, lattice: Any = None,  # noqa: N802
           share: Any = None, *, fallback: Any = None) -> Quantile:
    """The median of a column per cell: :class:`Quantile` with ``q = 1/2``."""
    return Quantile(column, bounds, lattice, share, Fraction(1, 2), fallback=fallback)


Aggregation = Count | Persons | ColumnAggregation
"""An aggregation: a count of rows or persons, or an aggregation of one value column."""


# The one-column releases' signatures: the parameters (and docstring) of each ``prepare_NAME``.
def _count(data: Any, *, epsilon: Any = None, rho: Any = None, max_contributions: Any = 1, ids: Any = None) -> None:
    """Validate and price a count of the rows of ``data`` (whatever they hold); nothing is drawn until
    ``.execute(rng)``. See :mod:`securedp.mechanisms.count`."""


def _sum(data: Any, *, bounds: Any = None, epsilon: Any = None, rho: Any = None, max_contributions: Any = 1,
         ids: Any = None, lattice: Any = None, missing: str = "raise", fill: Any = None) -> None:
    """Validate and price a bounded sum; nothing is drawn until ``.execute(rng)``. See
    :mod:`securedp.mechanisms.sum`."""


def _mean(data: Any, *, bounds: Any = None, epsilon: Any = None, rho: Any = None, max_contributions: Any = 1,
          ids: Any = None, lattice: Any = None, missing: str = "raise", fill: Any = None) -> None:
    """Validate and price a bounded mean; nothing is drawn until ``.execute(rng)``. See
    :mod:`securedp.mechanisms.mean`."""


def _variance(data: Any, *, bounds: Any = None, epsilon: Any = None, rho: Any = None, max_contributions: Any = 1,
              ids: Any = None, lattice: Any = None, missing: str = "raise", fill: Any = None) -> None:
    """Validate and price a bounded (population) variance; nothing is drawn until ``.execute(rng)``. See
    :mod:`securedp.mechanisms.variance`."""


def _median(data: Any, /, *, bounds: Any = None, epsilon: Any = None, rho: Any = None, max_contributions: Any = 1,
            ids: Any = None, lattice: Any = None, missing: str = "raise", fill: Any = None,
            fallback: Any = None) -> None:
    """Validate and price the median (the quantile 1/2); nothing is drawn yet. ``fallback``: the probability
    that a cell without records releases the middle of the bounds (default 3/4; 0: none;
    :mod:`securedp.mechanisms.rank_utility`)."""


def _quantile(data: Any, q: Any, /, *, bounds: Any = None, epsilon: Any = None, rho: Any = None,
              max_contributions: Any = 1, ids: Any = None, lattice: Any = None, missing: str = "raise",
              fill: Any = None, fallback: Any = None) -> None:
    """Validate and price one quantile ``q`` (a rational in [0, 1]); nothing is drawn yet. ``fallback``: the
    probability that a cell without records releases the fallback point ``lo + q (hi - lo)`` (default 3/4; 0:
    none; :mod:`securedp.mechanisms.rank_utility`)."""


def _quantiles(data: Any, qs: Sequence[Any], *, bounds: Any = None, epsilon: Any = None, rho: Any = None,
               max_contributions: Any = 1, ids: Any = None, lattice: Any = None, missing: str = "raise",
               fill: Any = None, fallback: Any = None) -> None:
    """Validate and price several quantiles: three or more by the recursive split (``epsilon / ceil(log2(len(qs)
    + 1))`` per depth, :mod:`securedp.mechanisms.quantile_split`), else ``epsilon / len(qs)`` each, by the exact
    exponential mechanism; nothing is drawn yet. The value is a tuple in the order of ``qs`` (each level once, at
    most :data:`~securedp.hazmat.exact.bounds.MAX_LEVELS`); each level's rank error bound is in the record."""


def _histogram(data: Any, *, categories: Any = None, bins: Any = None, epsilon: Any = None, rho: Any = None,
               max_contributions: Any = 1, ids: Any = None, unknown: str = "raise", lattice: Any = None,
               missing: str = "raise", fill: Any = None) -> None:
    """Validate and price a histogram over declared ``categories`` or ``bins`` (edges): one noisy count each,
    one cost for all; nothing is drawn yet. See :mod:`securedp.mechanisms.histogram`."""


def _iqr(data: Any, *, bounds: Any = None, epsilon: Any = None, rho: Any = None, max_contributions: Any = 1,
         ids: Any = None, lattice: Any = None, missing: str = "raise", fill: Any = None, fallback: Any = None) -> None:
    """Validate and price the interquartile range (both quartiles at half the cost); nothing is drawn yet.
    See :mod:`securedp.mechanisms.iqr`."""


def _trimmed_mean(data: Any, *, bounds: Any = None, epsilon: Any = None, rho: Any = None, max_contributions: Any = 1,
                  ids: Any = None, trim: Any = trimmed_mean.DEFAULT_TRIM,
                  selection_share: Any = trimmed_mean.DEFAULT_SELECTION_SHARE, lattice: Any = None,
                  missing: str = "raise", fill: Any = None, fallback: Any = None) -> None:
    """Validate and price a trimmed (winsorized) mean: the ``trim`` and ``1 - trim`` quantiles at
    ``selection_share`` of the cost, then the bounded mean of the records clamped between them; nothing is drawn
    yet. See :mod:`securedp.mechanisms.trimmed_mean`."""


def _levels(name: str, column: str, *, q: Any = None, qs: Any = None, bounds: Any = None, lattice: Any = None,
            fallback: Any = None) -> tuple[OneCell, list[Aggregation]]:
    """A quantile's (``q``) or several quantiles' (``qs``) aggregations, each level once."""
    levels = check_levels((probability(q, "q"),) if name == "quantile" else qs)
    if len(set(levels)) != len(levels):
        raise ValueError("qs repeats a level: each quantile level is released once")
    if name == "quantiles" and split_depths(len(levels)) < len(levels):  # fewer selections' worth: the split
        split = QuantilesBySplit(column, bounds, lattice, qs=levels, fallback=fallback)
        return OneCell(name, tuple(f"{split.name}_{i}" for i in range(len(levels))), False, levels), [split]
    share = Fraction(1, len(levels)) if len(levels) > 1 else None
    made = [Quantile(column, bounds, lattice, share, level, fallback=fallback) for level in levels]
    single = name == "quantile"
    return OneCell(name, tuple(a.name for a in made), single, None if single else levels), list(made)


def _labels(name: str, column: str, **options: Any) -> tuple[OneCell, list[Aggregation]]:
    """A histogram's aggregation, whose value is the tuple of its counts per label."""
    made = Histogram(column, **options)
    labels = made.derivation().labels
    return OneCell(name, tuple(f"{made.name}_{i}" for i in range(len(labels))), False, labels), [made]


def _tuples(options: Mapping[str, Any]) -> str | None:
    categories = options.get("categories")
    tuples = categories is not None and not isinstance(categories, (str, bytes)) and hasattr(categories, "__iter__") \
        and any(isinstance(c, tuple) for c in categories)
    return ("for tuple categories pass one column whose records are tuples, e.g. list(zip(df['a'], df['b']))"
            if tuples else ONE_COLUMN_HINT)


SELECTED = frozenset({"fallback"})
"""The option every selection takes: its fallback probability (``--fallback``)."""
for _entry in [  # the one list: one line per statistic, in the order of --stat's choices
    Statistic("count", "nothing", Count, signature=_count, doc="""Release the number of rows of ``data`` with \
``epsilon``-DP (or ``rho``-zCDP); see :mod:`securedp.mechanisms.count`."""),
    Statistic("persons", "nothing", Persons, command=False),
    Statistic("sum", "column", Sum, signature=_sum, doc="""Release the sum of ``data`` clamped to ``bounds`` with \
``epsilon``-DP (or ``rho``-zCDP); see :mod:`securedp.mechanisms.sum`."""),
    Statistic("mean", "column", Mean, signature=_mean, doc="""Release the mean of ``data`` clamped to ``bounds``; \
see :mod:`securedp.mechanisms.mean` for the privacy map."""),
    Statistic("variance", "column", Variance, signature=_variance, doc="""Release the population variance of \
``data`` clamped to ``bounds``; see :mod:`securedp.mechanisms.variance`."""),
    Statistic("median", "column", Median, SELECTED, _median, """The median as an exact lattice value (``int`` or \
``Fraction``); see :mod:`securedp.mechanisms.quantile`."""),
    Statistic("quantile", "level", Quantile, SELECTED, _quantile, """The ``q``-quantile as an exact lattice value \
(``int`` or ``Fraction``); see :mod:`securedp.mechanisms.quantile`.""", cells=_levels),
    Statistic("quantiles", "levels", QuantilesBySplit, SELECTED, _quantiles, """Several quantiles, each an exact \
lattice value (a tuple, in the order of ``qs``); see :mod:`securedp.mechanisms.quantile_split`.""", cells=_levels),
    Statistic("histogram", "column", Histogram, signature=_histogram, doc="""Release noisy counts for declared \
categories or bins; one ``epsilon`` for all bins (see :mod:`securedp.mechanisms.histogram`).""", table=False,
              cells=_labels, hint=_tuples),
    Statistic("iqr", "column", IQR, SELECTED, _iqr, """The interquartile range ``max(Q3 - Q1, 0)`` as an exact \
lattice value; see :mod:`securedp.mechanisms.iqr`."""),
    Statistic("trimmed_mean", "column", TrimmedMean, SELECTED | {"trim"}, _trimmed_mean, """The trimmed \
(winsorized) mean of ``data`` as an exact lattice value: the mean of the records clamped between two private trim \
points (by default the 1/10 and 9/10 quantiles); see :mod:`securedp.mechanisms.trimmed_mean`."""),
]:
    STATISTICS.register(_entry)
KINDS: Mapping[str, Kind] = STATISTICS.kinds
"""Every table aggregation by its name on the command line (``--NAME``) and in recorded queries (a live view
of :data:`~securedp.tables.registry.STATISTICS`)."""
