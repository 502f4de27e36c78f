"""Median and quantiles by the exponential mechanism over a whole lattice range, exactly.

**Candidates.** Every point of the lattice inside the public ``bounds``
(snapped inward): ``y = k * step`` for ``lo_u <= k <= hi_u``. Nothing about the
candidate set depends on the data. The lattice is ``lattice=`` (a
:class:`~securedp.lattice.Lattice` or a step) or by default step 1 for
integer bounds at least 100 apart, the coarsest power of two giving 100
steps for narrower integer bounds, and
:meth:`~securedp.lattice.Lattice.for_bounds` otherwise.
Records are screened, clamped and rounded onto the lattice first
(:mod:`securedp.lattice`); ``max_contributions`` and ``ids`` bound each
person's rows as everywhere in securedp.

**Utility.** For ``n`` clamped records ``x`` and ``q = a / b`` in [0, 1]
(an exact rational, ``b > 0``), ``u(y) = -|#{i : x_i < y} - q * n|``.
Adding or removing one row changes ``#{x_i < y}`` by 0 or 1 and ``q * n`` by
``q``, in the same direction, so ``u`` moves by at most ``max(q, 1 - q) <= 1``;
a person with ``m = max_contributions`` rows moves it by at most ``m``: the
sensitivity is ``m``.

**Law and privacy map.** ``P(y)`` is proportional to
``exp(epsilon * u(y) / (2 * m))``: the exponential mechanism (McSherry &
Talwar 2007), ``epsilon``-DP. Points strictly between consecutive sorted
records share a utility, so, as in Smith (2011), the release picks the gap
``j`` (the points with ``x_(j) < y <= x_(j+1)``, rank ``j``) with probability
proportional to ``(number of lattice points in it) * exp(-epsilon *
|b j - a n| / (2 m b))`` and then a uniform point inside it, both exactly in
one draw of :class:`~securedp.hazmat.samplers.categorical.ExpCategorical`.
Gaps far from the target rank share one far slot whose weights are bounded
in closed form, so they keep their exact non-zero probability without being
evaluated.

**Several quantiles.** :func:`quantiles` releases each ``q`` with
``epsilon / len(qs)`` (basic composition: the total is ``epsilon``-DP),
cutting the range into gaps once.

**Priced in rho.** With ``rho=`` each level's selection runs at the largest
``epsilon = j / 2**32`` with ``epsilon**2 / 2 <= rho / len(qs)``
(:func:`selection_epsilon`: an ``epsilon``-DP mechanism is
``epsilon**2 / 2``-zCDP), so the release is ``rho``-zCDP; in a table, where a
person changes at most ``k`` cells, ``k * epsilon**2 / 2 <= rho / len(qs)``
(and ``epsilon / k`` per cell for an ``epsilon`` table).

**Timing.** Clamping, counting (or sorting) and the gap arithmetic are full
vectorised passes; which of counting and sorting is used depends on the public
range and on ``n`` only through its size. The selection's time does not depend
on the point selected (see the sampler).

**Aggregate / noise** (:mod:`securedp.mechanisms.statistic`): step (1) is
:class:`SortedUnits` (the multiset of kept units: counts per lattice point);
step (2), :meth:`Quantiles.noise_step`, cuts the range into gaps (from counts
per lattice point when the range holds at most ``max(n, COUNTING_MIN)``
points, else from a sort) and selects.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any, ClassVar, Concatenate, ParamSpec

import gmpy2
import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.rational import format_rational, probability
from securedp.hazmat.samplers.categorical import ExpCategorical
from securedp.lattice import Lattice
from securedp.mechanisms.moments import ColumnStatistic
from securedp.mechanisms.noise import Cost, privacy_cost, split
from securedp.mechanisms.records import LatticeColumn, exact_value, parse_bounds, resolve_lattice
from securedp.mechanisms.release import PreparedRelease, canonical_input
from securedp.mechanisms.statistic import Pending, bounded, public_function, release_function
from securedp.reading.types import integer_typed

P = ParamSpec("P")

_SAFE = 1 << 62


QUANTILE_RESOLUTION = 100
"""Integer bounds get step 1 only when they hold at least this many steps (see :func:`_default_lattice`)."""


def _default_lattice(lattice: Any, bounds: Any) -> Any:
    """The candidate lattice when none is given, from the public bounds alone.

    Integer bounds at least ``QUANTILE_RESOLUTION`` apart: step 1 (integer
    data keeps integer answers: ages in ``(0, 120)``). Narrower integer
    bounds: the coarsest power of two giving at least ``QUANTILE_RESOLUTION``
    steps (``(0, 1)`` has step ``2**-7``; 0.1 answered 0 or 1 there). Other
    bounds: :meth:`~securedp.lattice.Lattice.for_bounds`, as for sums and means.
    """
    if lattice is not None:
        return lattice
    lo, hi = parse_bounds(bounds)
    if lo < hi and lo.denominator == 1 and hi.denominator == 1:
        fine = Lattice.for_bounds(lo, hi, resolution=QUANTILE_RESOLUTION)
        return fine if fine.step < 1 else Lattice(1)
    return resolve_lattice(None, lo, hi)


@dataclass(frozen=True)
class SortedUnits:
    """Step (1) of the quantiles: the multiset of kept units (equivalently, the count of records at each lattice point).

    ``units`` holds the kept units in any order; the exponential mechanism reads only the multiset.
    :attr:`sorted_units` (sorted on first use) is what the input commitment encodes. An engine that
    computes counts per lattice point builds it with :meth:`from_counts`.
    """

    units: np.ndarray

    @cached_property
    def sorted_units(self) -> np.ndarray:
        """The units in increasing order: int64 units spanning less than ``2**32`` are sorted as ``uint32``
        offsets, and int64 arrays by Polars (13 ms for 10**6 ``uint32`` where ``np.sort`` takes 31 ms on
        the reference machine); object arrays (units past int64) by NumPy."""
        units = self.units
        if units.dtype == np.int64 and units.size:
            low = int(units.min())
            if int(units.max()) - low < 1 << 32:
                offsets = _sorted((units - low).astype(np.uint32))
                result: np.ndarray = offsets.astype(np.int64)
                result += low
                return result
            return _sorted(units)
        return np.sort(units)

    def __add__(self, other: SortedUnits) -> SortedUnits:
        """The multiset union (the records of two disjoint sets of rows)."""
        return SortedUnits(np.concatenate((self.units, other.units)))

    @classmethod
    def from_counts(cls, points: Any, counts: Any) -> SortedUnits:
        """The multiset with ``counts[i]`` records at lattice unit ``points[i]``."""
        return cls(np.repeat(np.asarray(points), np.asarray(counts, dtype=np.int64)))


def _sorted(values: np.ndarray) -> np.ndarray:
    """``values`` (a 1-d integer array) in increasing order, sorted by Polars (an exact integer sort)."""
    import polars as pl  # a dependency of the table engine; imported here only when a sort is needed

    ordered: np.ndarray = pl.Series(values).sort().to_numpy()
    return ordered


COUNTING_MIN = 1 << 16
"""The gaps come from counts per lattice point (:func:`numpy.bincount`) when the range holds at most
``max(n, COUNTING_MIN)`` points, from a sort otherwise (measured: counting 10**6 records over 10**6
points takes about half the time of sorting them)."""


class _Gaps:
    """The lattice range ``[lo_u, hi_u]`` cut by the ``n`` records into gaps: entry ``i`` holds the
    ``counts[i]`` points ``start(i), ..., start(i) + counts[i] - 1``, whose utility rank is
    ``#{x < y} = ranks[i]``.

    Two exact constructions of the same entries, chosen by the public range and ``n``'s size:

    * **counting** (range of at most ``max(n, COUNTING_MIN)`` points, int64 units): ``h[k]``, the
      number of records at ``lo_u + k``, by one :func:`numpy.bincount`; an entry starts at ``lo_u``
      (rank 0) and after every point holding a record (rank: the records up to it). Only entries
      holding points are listed.
    * **sorting** (otherwise): the sorted records ``x_(1) <= ... <= x_(n)``; entry ``j`` (rank
      ``j``, ``0 <= j <= n``) holds the points ``x_(j) < y <= x_(j+1)`` (``x_(0) = lo_u - 1``,
      ``x_(n+1) = hi_u``); entries of tied records hold no point.

    An entry holding no point is never drawn, and listing it or not changes no draw of
    :class:`~securedp.hazmat.samplers.categorical.ExpCategorical` (it is in no group), so both give
    the same selection from the same random bits.
    """

    def __init__(self, aggregate: SortedUnits, column: LatticeColumn) -> None:
        units = aggregate.units
        self.n = n = units.size
        lo_u, hi_u = column.lo_u, column.hi_u
        self.lo_u = lo_u
        wide = units.dtype == object or hi_u - lo_u >= _SAFE or max(abs(lo_u), abs(hi_u)) >= _SAFE
        self.ranks: np.ndarray | None = None  # None: entry j has rank j (sorting)
        self.starts: np.ndarray | None = None  # None: entry j starts after x_(j) (sorting)
        if not wide and hi_u - lo_u + 1 <= max(n, COUNTING_MIN):
            self._count(units.astype(np.int64, copy=False), lo_u, hi_u - lo_u + 1)
            return
        dtype = object if wide else np.int64
        xs = aggregate.sorted_units.astype(dtype, copy=False)
        self.xs = xs
        counts = np.empty(n + 1, dtype=dtype)
        if n:
            np.subtract(xs[1:], xs[:-1], out=counts[1:n])
            counts[0] = xs[0] - (lo_u - 1)
            counts[n] = hi_u - xs[-1]
        else:
            counts[0] = hi_u - lo_u + 1
        self.counts = counts

    def _count(self, units: np.ndarray, lo_u: int, span: int) -> None:
        offsets = units - lo_u if lo_u else units
        per_point = np.bincount(offsets, minlength=span)
        assert per_point.size == span  # the units were clamped to [lo_u, hi_u]
        held = np.flatnonzero(per_point[:-1])  # points below hi_u holding a record: an entry starts after each
        starts = np.empty(held.size + 2, dtype=np.int64)
        starts[0], starts[-1] = 0, span
        np.add(held, 1, out=starts[1:-1])
        ranks = np.zeros(held.size + 1, dtype=np.int64)
        np.cumsum(per_point[held], out=ranks[1:])
        self.counts = np.diff(starts)
        starts += lo_u
        self.starts, self.ranks = starts, ranks

    def plan(self, q: Fraction, epsilon: Fraction, sensitivity: int) -> ExpCategorical:
        a, b = q.numerator, q.denominator
        entries = len(self.counts)
        if b * (self.n + 1) < _SAFE:
            gaps = np.arange(entries, dtype=np.int64) if self.ranks is None else self.ranks.copy()
            gaps *= b
            gaps -= a * self.n
            np.abs(gaps, out=gaps)
        else:
            ranks = range(entries) if self.ranks is None else self.ranks.tolist()
            gaps = np.array([abs(b * j - a * self.n) for j in ranks], dtype=object)
        return ExpCategorical(gaps, epsilon / (2 * sensitivity * b), self.counts)

    def point(self, plan: ExpCategorical, source: RandomSource) -> int:
        i, offset = plan.draw(source)
        if self.starts is not None:
            return int(self.starts[i]) + offset
        return (self.lo_u if i == 0 else int(self.xs[i - 1]) + 1) + offset


ZCDP_CONVERSION = "epsilon-DP is epsilon**2/2-zCDP (Bun and Steinke 2016, Prop. 1.4)"
_CELL_GRID = 1 << 32


def selection_epsilon(cost: Cost, k: int = 1) -> Fraction:
    """The ``epsilon`` of one exponential-mechanism selection costing ``cost``, in each of ``k`` cells a
    person can change: ``epsilon / k``; or for ``rho`` the largest ``j / 2**32`` with
    ``k * (j / 2**32)**2 / 2 <= rho``, exactly ``j = isqrt(floor(2 * rho * 2**64 / k))`` (an
    ``epsilon``-DP mechanism is ``epsilon**2 / 2``-zCDP, Bun and Steinke 2016, Prop. 1.4, and the ``k``
    cells compose). Raises if ``rho`` is too small for any positive ``j``."""
    if cost.epsilon is not None:
        return cost.epsilon / k
    rho = cost.rho
    assert rho is not None
    j = math.isqrt((2 * rho.numerator * _CELL_GRID * _CELL_GRID) // (k * rho.denominator))
    if j == 0:
        raise ValueError(f"a selection's share of rho ({rho}) is too small for {k} cell(s) per person: its "
                         "exponential mechanism would run at epsilon 0")
    cell = Fraction(j, _CELL_GRID)
    assert k * cell * cell / 2 <= rho < k * Fraction(j + 1, _CELL_GRID) ** 2 / 2
    return cell


def rank_error_bound(epsilon: Fraction, sensitivity: int, candidates: int, alpha: Fraction) -> int:
    """An integer ``r`` with ``P(u(y) < OPT - r) <= alpha`` for the exponential mechanism's output ``y``.

    McSherry and Talwar (2007): ``P(u(y) <= OPT - (2 s / epsilon)(ln |Y| + t)) <= exp(-t)``; with
    ``t = ln(1 / alpha)`` that is ``(2 s / epsilon) ln(|Y| / alpha)``, rounded up with MPFR.
    """
    with gmpy2.context(precision=128, round=gmpy2.RoundUp):
        bound = 2 * sensitivity * gmpy2.log(gmpy2.mpq(candidates * alpha.denominator, alpha.numerator))
        return int(gmpy2.ceil(bound / gmpy2.mpq(epsilon.numerator, epsilon.denominator)))


def _check_qs(qs: Any) -> list[Fraction]:
    if isinstance(qs, (str, bytes)) or not hasattr(qs, "__iter__"):
        raise TypeError("qs must be a sequence of quantile levels in [0, 1]")
    levels = [probability(q, f"qs[{i}]") for i, q in enumerate(qs)]
    if not levels:
        raise ValueError("qs must not be empty")
    return levels


@dataclass(frozen=True)
class Quantiles(ColumnStatistic[SortedUnits]):
    """The definition of the quantiles at ``levels``: one exponential mechanism each, at ``epsilon / len(levels)``.

    Released as a tuple in the order of ``levels``; :class:`Quantile` and
    :class:`Median` release one value.
    """

    statistic: ClassVar[str] = "quantiles"
    input_name = "quantiles"
    single: ClassVar[bool] = False
    levels: tuple[Fraction, ...]

    @classmethod
    def prepare(cls, data: Any, qs: Sequence[Any], *, bounds: Any = None, epsilon: Any = None, rho: Any = None,
                max_contributions: Any = 1, ids: Any = None, lattice: Any = None, missing: str = "raise",
                fill: Any = None) -> PreparedRelease:
        cost = privacy_cost(epsilon, rho)
        levels = tuple(_check_qs(qs))
        column = LatticeColumn.of(bounds=bounds, lattice=lattice, max_contributions=max_contributions,
                                  missing=missing, fill=fill, default=_default_lattice,
                                  integer=integer_typed(data))
        return cls(cost, column, levels).prepare_data(data, ids)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.share  # noqa: B018 - a rho too small for any selection is refused when the statistic is defined

    @property
    def share(self) -> Fraction:
        """The ``epsilon`` of each level's selection in each cell: :func:`selection_epsilon` of the cost's
        share of one level, for ``max_groups`` cells per person."""
        return selection_epsilon(split(self.cost, len(self.levels)), self.max_groups)

    @property
    def mechanism(self) -> str:
        return "exponential"

    @property
    def parameters(self) -> dict[str, Any]:
        parameters = {**self.column.parameters(), "qs": self.levels, "epsilon_each": self.share,
                      "sensitivity": self.max_contributions, "utility": "-|#{x < y} - q n|"}
        if self.cost.rho is not None:
            parameters["conversion"] = ZCDP_CONVERSION
        return {**parameters, "q": self.levels[0]} if self.single else parameters

    def accuracy(self, alpha: Fraction) -> dict[str, Fraction]:
        """Each level's rank error bound ``r`` (rows) at ``1 - alpha`` (:func:`rank_error_bound`), by level."""
        candidates = self.column.hi_u - self.column.lo_u + 1
        r = rank_error_bound(self.share, self.max_contributions, candidates, alpha)
        return {f"rank_error_q{format_rational(q)}": Fraction(r) for q in self.levels}

    def cell_record(self, alpha: Fraction) -> dict[str, Any]:
        """What a table records of this selection in each cell (one level): its exact ``epsilon_cell``, the
        number of candidates and the rank error bound at level ``1 - alpha`` (:func:`rank_error_bound`)."""
        cell, candidates = self.share, self.column.hi_u - self.column.lo_u + 1
        record: dict[str, Any] = {
            "noise": [], "selection": "exponential", "q": self.levels[0], "epsilon_cell": cell,
            "sensitivity": self.max_contributions, "candidates": candidates,
            "rank_error_bound": rank_error_bound(cell, self.max_contributions, candidates, alpha)}
        if self.cost.rho is not None:
            record.update(rho_cells=self.max_groups * cell * cell / 2, conversion=ZCDP_CONVERSION)
        return record

    @property
    def labels(self) -> tuple[Any, ...] | None:
        return None if self.single else self.levels

    def aggregate(self, data: Any, ids: Any = None) -> SortedUnits | Pending[SortedUnits]:
        return bounded(SortedUnits, *self.column.units(data, ids))

    def input_bytes(self, aggregate: SortedUnits) -> Callable[[], bytes]:
        """The input commitment's bytes: the sorted units, sorted only when the bytes are asked for."""
        return canonical_input(self.input_name or self.statistic, sorted_units=lambda: aggregate.sorted_units)

    def points_sampler(self, aggregate: SortedUnits) -> Callable[[RandomSource], tuple[int, ...]]:
        """The selections' set-up for ``aggregate``: a function drawing each level's lattice point (units),
        in the order of :attr:`levels`."""
        gaps = _Gaps(aggregate, self.column)
        plans = [gaps.plan(q, self.share, self.max_contributions) for q in self.levels]
        return lambda source: tuple(gaps.point(p, source) for p in plans)

    def sampler(self, aggregate: SortedUnits) -> Callable[[RandomSource], Any]:
        points = self.points_sampler(aggregate)
        lattice, single = self.column.lattice, self.single

        def draw(source: RandomSource) -> Any:
            values = tuple(exact_value(lattice.value(p)) for p in points(source))
            return values[0] if single else values

        return draw


class Quantile(Quantiles):
    """The definition of one quantile: :class:`Quantiles` at one level, released as one value."""

    statistic = "quantile"
    single = True


class Median(Quantile):
    """The definition of the median: the quantile ``1/2``."""

    statistic = "median"


def _prepare_quantiles(data: Any, qs: Sequence[Any], **options: Any) -> PreparedRelease:
    """:meth:`Quantiles.prepare`, with the keyword ``statistic`` of securedp 0.1 still accepted (deprecated)."""
    if "statistic" not in options:
        return Quantiles.prepare(data, qs, **options)
    statistic = options.pop("statistic")
    warnings.warn("prepare_quantiles(statistic=...) is deprecated and will be removed in the next release: "
                  "prepare_quantiles always releases a tuple; use prepare_quantile or prepare_median for one value",
                  DeprecationWarning, stacklevel=3)
    if statistic == "quantiles":
        return Quantiles.prepare(data, qs, **options)
    shape: type[Quantile] = type("Quantile", (Quantile,), {"statistic": statistic})
    return shape.prepare(data, qs, **options)


_prepare_quantiles.__signature__ = inspect.signature(Quantiles.prepare)  # type: ignore[attr-defined]


POSITIONAL = inspect.Parameter.POSITIONAL_ONLY


def at_level(prepare: Callable[Concatenate[Any, Sequence[Any], P], PreparedRelease],
             ) -> Callable[Concatenate[Any, Any, P], PreparedRelease]:
    """``prepare(data, qs, ...)`` as ``prepare(data, q, ...)`` for one level ``q`` (checked first, named ``q``)."""

    def one(data: Any, q: Any, /, *args: P.args, **kwargs: P.kwargs) -> PreparedRelease:
        return prepare(data, [probability(q, "q")], *args, **kwargs)

    signature = inspect.signature(prepare)
    data, _, *rest = signature.parameters.values()
    one.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[data.replace(kind=POSITIONAL), inspect.Parameter("q", POSITIONAL, annotation="Any"), *rest])
    return one


def at_median(prepare: Callable[Concatenate[Any, Sequence[Any], P], PreparedRelease],
              ) -> Callable[Concatenate[Any, P], PreparedRelease]:
    """``prepare(data, qs, ...)`` as ``prepare(data, ...)`` at the level ``1/2``."""

    def median(data: Any, /, *args: P.args, **kwargs: P.kwargs) -> PreparedRelease:
        return prepare(data, [Fraction(1, 2)], *args, **kwargs)

    signature = inspect.signature(prepare)
    data, _, *rest = signature.parameters.values()
    median.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[data.replace(kind=POSITIONAL), *rest])
    return median


prepare_quantiles = public_function(
    _prepare_quantiles, "prepare_quantiles",
    """Validate and price the release of several quantiles (``epsilon / len(qs)`` each); nothing is drawn yet.

    The release's value is a tuple in the order of ``qs``.""")
prepare_quantile = public_function(
    at_level(Quantile.prepare), "prepare_quantile",
    """Validate and price one quantile ``q`` (a rational in [0, 1]); nothing is drawn yet.""")
prepare_median = public_function(
    at_median(Median.prepare), "prepare_median",
    """Validate and price the median (the quantile 1/2); nothing is drawn yet.""")
quantiles = release_function(prepare_quantiles, "quantiles", """Several quantiles, each an exact lattice value \
(a tuple, in the order of ``qs``); see the module docstring.""")
quantile = release_function(prepare_quantile, "quantile", """The ``q``-quantile as an exact lattice value \
(``int`` or ``Fraction``); see the module docstring.""")
median = release_function(prepare_median, "median", """The median as an exact lattice value (``int`` or \
``Fraction``); see the module docstring.""")
