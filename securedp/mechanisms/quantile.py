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

**Several quantiles.** :func:`securedp.quantiles` releases each ``q`` with
``epsilon / len(qs)`` (basic composition: the total is ``epsilon``-DP).

**Priced in rho.** With ``rho=`` each level's selection runs at the largest
``epsilon = j / 2**32`` with ``epsilon**2 / 2 <= rho / len(qs)``
(:func:`selection_epsilon`: an ``epsilon``-DP mechanism is
``epsilon**2 / 2``-zCDP), so the release is ``rho``-zCDP; in a table, where a
person changes at most ``k`` cells, ``k * epsilon**2 / 2 <= rho / len(qs)``
(and ``epsilon / k`` per cell for an ``epsilon`` table).

**Cells.** A cell's exact input is its counts per lattice point (the distinct points holding a kept
record, ascending, and how many records each holds), which an engine computes
(:meth:`~securedp.engines.protocol.Engine.unit_counts`); the gaps are cut from them in one vectorised
pass over the distinct points. The selection's time does not depend on the point selected (see the
sampler).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import gmpy2
import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.rational import format_rational, probability
from securedp.hazmat.samplers.categorical import ExpCategorical
from securedp.lattice import Lattice
from securedp.mechanisms.moments import ColumnStatistic
from securedp.mechanisms.records import exact_value, parse_bounds, resolve_lattice
from securedp.privacy.cost import Cost

_SAFE = 1 << 62


QUANTILE_RESOLUTION = 100
"""Integer bounds get step 1 only when they hold at least this many steps (see :func:`default_lattice`)."""


def default_lattice(lattice: Any, bounds: Any) -> Any:
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


class _Gaps:
    """The lattice range ``[lo_u, hi_u]`` cut by a cell's records into gaps, from its counts per point.

    ``points`` are the distinct lattice points (units) holding a kept record, ascending, and
    ``counts`` how many records each holds (``n`` in all). Entry 0 starts at ``lo_u`` and one entry
    starts just after every point below ``hi_u`` holding a record; entry ``i`` holds the
    ``widths[i]`` points ``starts[i], ..., starts[i] + widths[i] - 1``, whose utility rank is
    ``#{x < y} = ranks[i]`` (the records up to the point before it). Points strictly between records
    share a utility (Smith 2011), so the selection draws an entry and a point inside it.
    """

    def __init__(self, points: Sequence[int], counts: Sequence[int], lo_u: int, hi_u: int) -> None:
        wide = hi_u - lo_u >= _SAFE or max(abs(lo_u), abs(hi_u)) >= _SAFE
        dtype = object if wide else np.int64
        at = np.asarray(points, dtype=dtype)
        held = np.asarray(counts, dtype=np.int64)
        self.n = int(held.sum()) if held.size else 0
        below = at < hi_u
        starts = np.empty(int(below.sum()) + 2, dtype=dtype)
        starts[0], starts[-1] = lo_u, hi_u + 1
        starts[1:-1] = at[below] + 1
        ranks = np.zeros(starts.size - 1, dtype=np.int64)
        ranks[1:] = np.cumsum(held)[below] if held.size else ranks[1:]
        self.starts, self.ranks = starts, ranks
        self.widths = np.diff(starts)

    def plan(self, q: Fraction, epsilon: Fraction, sensitivity: int) -> ExpCategorical:
        a, b = q.numerator, q.denominator
        if b * (self.n + 1) < _SAFE:
            gaps = self.ranks.copy()
            gaps *= b
            gaps -= a * self.n
            np.abs(gaps, out=gaps)
        else:
            gaps = np.array([abs(b * j - a * self.n) for j in self.ranks.tolist()], dtype=object)
        return ExpCategorical(gaps, epsilon / (2 * sensitivity * b), self.widths)

    def point(self, plan: ExpCategorical, source: RandomSource) -> int:
        i, offset = plan.draw(source)
        return int(self.starts[i]) + offset


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


def check_levels(qs: Any) -> tuple[Fraction, ...]:
    """The quantile levels ``qs`` as exact rationals in ``[0, 1]``, at least one."""
    if isinstance(qs, (str, bytes)) or not hasattr(qs, "__iter__"):
        raise TypeError("qs must be a sequence of quantile levels in [0, 1]")
    levels = tuple(probability(q, f"qs[{i}]") for i, q in enumerate(qs))
    if not levels:
        raise ValueError("qs must not be empty")
    return levels


@dataclass(frozen=True)
class Quantiles(ColumnStatistic):
    """The definition of the quantiles at ``levels`` in a cell: one exponential mechanism each, at
    ``epsilon / len(levels)`` (see the module docstring); a table's :class:`Quantile` has one level."""

    statistic: ClassVar[str] = "quantiles"
    single: ClassVar[bool] = False
    levels: tuple[Fraction, ...]

    def __post_init__(self) -> None:
        super().__post_init__()
        self.share  # noqa: B018 - a rho too small for any selection is refused when the statistic is defined

    @property
    def share(self) -> Fraction:
        """The ``epsilon`` of each level's selection in each cell: :func:`selection_epsilon` of the cost's
        share of one level, for ``max_groups`` cells per person."""
        return selection_epsilon(self.cost.split(len(self.levels)), self.max_groups)

    @property
    def mechanism(self) -> str:
        return "exponential"

    @property
    def candidates(self) -> int:
        """The number of lattice points selected from (public)."""
        return self.column.hi_u - self.column.lo_u + 1

    def accuracy(self, alpha: Fraction) -> dict[str, Fraction]:
        """Each level's rank error bound ``r`` (rows) at ``1 - alpha`` (:func:`rank_error_bound`), by level."""
        r = rank_error_bound(self.share, self.max_contributions, self.candidates, alpha)
        return {f"rank_error_q{format_rational(q)}": Fraction(r) for q in self.levels}

    def cell_record(self, alpha: Fraction) -> dict[str, Any]:
        """What a release records of this selection in each cell: its exact ``epsilon_cell``, the number of
        candidates and the rank error bound at level ``1 - alpha`` (:func:`rank_error_bound`)."""
        cell = self.share
        record: dict[str, Any] = {
            "noise": [], "selection": "exponential", "q": self.levels[0] if self.single else list(self.levels),
            "epsilon_cell": cell, "sensitivity": self.max_contributions, "candidates": self.candidates,
            "utility": "-|#{x < y} - q n|",
            "rank_error_bound": rank_error_bound(cell, self.max_contributions, self.candidates, alpha),
            **self.column_record()}
        if self.cost.rho is not None:
            record.update(rho_cells=self.max_groups * cell * cell / 2, conversion=ZCDP_CONVERSION)
        return record

    @property
    def labels(self) -> tuple[Any, ...] | None:
        return None if self.single else self.levels

    def cell_points(self, points: Sequence[int], counts: Sequence[int]) -> Callable[[RandomSource], tuple[int, ...]]:
        """The selections' set-up for one cell (its counts per lattice point): a function drawing each
        level's lattice point (units), in the order of :attr:`levels`."""
        gaps = _Gaps(points, counts, self.column.lo_u, self.column.hi_u)
        plans = [gaps.plan(q, self.share, self.max_contributions) for q in self.levels]
        return lambda source: tuple(gaps.point(p, source) for p in plans)

    def value(self, points: tuple[int, ...]) -> Any:
        """The released value of a cell from its selected points: each an exact lattice value (a tuple for
        several levels)."""
        lattice = self.column.lattice
        values = tuple(exact_value(lattice.value(p)) for p in points)
        return values[0] if self.single else values


class Quantile(Quantiles):
    """The definition of one quantile: :class:`Quantiles` at one level, released as one value."""

    statistic = "quantile"
    single = True


class Median(Quantile):
    """The definition of the median: the quantile ``1/2``."""

    statistic = "median"
