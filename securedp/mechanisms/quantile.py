"""Median and quantiles by the exponential mechanism over a whole lattice range, exactly.

**Candidates.** Every point of the lattice inside the public ``bounds``
(snapped inward): ``y = k * step`` for ``lo_u <= k <= hi_u``. Nothing about the
candidate set depends on the data. The lattice is ``lattice=`` (a
:class:`~securedp.lattice.Lattice` or a step); without one, an integer-typed
column takes step 1 and a decimal column of scale ``s`` step ``10**-s``
(:func:`~securedp.mechanisms.records.typed_lattice`), and any other the power
of two giving ``2**20`` to ``2**21`` steps across the bounds
(:func:`default_lattice`). Records are screened, clamped and rounded
onto the lattice first (:mod:`securedp.lattice`); ``max_contributions`` and
``ids`` bound each person's rows as everywhere in securedp.

**Utility, law and privacy map.** :mod:`securedp.mechanisms.rank_utility`: for
``q = a / b`` the integer score ``g(y) = max(0, b L + min(a k, b c) - a n, a n - b E + min((b - a) k, b c))``
(``L = #{x < y}``, ``E = #{x <= y}``, ``k = E - L``: ``b`` times the distance from ``q n`` to the ranks ``y`` is
taken to hold, a block of tied records less the public tie margin ``c = ceil(1 / (rate b))`` rows at each end;
recorded as ``tie_margin``), which one person with ``m`` rows moves by at most ``m * max(a, b - a)``;
``P(y)`` is proportional to
``exp(-rate * g(y))`` with ``rate = epsilon / (2 m max(a, b - a))``, or
``epsilon / m`` for the monotone levels ``q = 0`` and ``q = 1``: the
exponential mechanism (McSherry & Talwar 2007), ``epsilon``-DP. The score is
constant between consecutive record points, so the lattice range is cut into
at most ``2 d + 1`` entries for ``d`` distinct record points (the gaps and the
points themselves) and the release draws an entry with probability
proportional to its number of lattice points times its weight, then a
uniform point inside it (Smith 2011), both exactly in one draw of
:class:`~securedp.hazmat.samplers.categorical.ExpCategorical`. Only the
entries near the target rank are built (:class:`~securedp.mechanisms.rank_utility.Window`:
those scoring below ``far = far_score(rate, candidates)``); every other
candidate lies in one far entry, proposed at the score ``far`` and kept with
probability ``exp(-rate (g(y) - far))`` (else the draw starts again), so each
keeps its exact probability, and the far entry is proposed at most ``2**-64``
of the time.

**The draw.** Priced in ``epsilon`` over at most ``2**17`` candidates and fallback weight, the same law's
selection is drawn instead by exact permute-and-flip over every candidate (same score, rate and stated
bounds; never a worse expected score): :mod:`securedp.mechanisms.quantile_draw`, which proves it and states
the rule; :attr:`Quantiles.selection` names the draw and the record states it.

**The fallback point.** The law's base measure also holds one public atom: the lattice point nearest
``lo + q (hi - lo)``, ``lo`` and ``hi`` the least and greatest candidates (the bounds when they lie on
the lattice; halves rounded up), of weight ``W = floor(candidates p / (1 - p))`` for the fallback
probability ``p = fallback`` (default ``3/4``; 0: none; a ``p`` giving ``W = 0`` is refused) and scored
``h = max(a, b - a) n``, the worst score any candidate can have
(:mod:`securedp.mechanisms.rank_utility`, with its proof). A cell whose records cannot be told from none
releases it instead of a near-uniform draw over the bounds; a cell of at least ``fallback_rows_bound``
rows (recorded) releases it with probability at most ``alpha``. It is one more entry of the window
(:attr:`~securedp.mechanisms.rank_utility.Window.fallback_entry`), drawn by the same sampler in the same
time.

**Several quantiles.** :func:`securedp.quantiles` of one or two levels releases each ``q`` with
``epsilon / len(qs)`` (basic composition: the total is ``epsilon``-DP); of three or more, by the recursive
split of :mod:`securedp.mechanisms.quantile_split` (``ceil(log2(m + 1))`` selections' worth).

**Priced in rho.** With ``rho=`` each level's selection runs at an ``epsilon = j / 2**32`` whose certified sharp
bounded-range zCDP is at most ``rho / len(qs)``, within ``2**-10`` of the largest
(:func:`~securedp.mechanisms.selection_price.selection_epsilon`: an ``epsilon``-DP exponential mechanism is
``epsilon``-bounded range, Durfee & Rogers 2019, hence zCDP by :mod:`securedp.privacy.bounded_range_zcdp`, below
Cesar & Rogers' ``epsilon**2 / 8``; the fallback atom and the monotone levels keep that,
:mod:`securedp.mechanisms.exponential`), so the release is ``rho``-zCDP; in a table, where a person changes at most
``k`` cells, ``k`` times it (and ``epsilon / k`` per cell for an ``epsilon`` table). Releases before issue 42 (0.2.0)
ran at twice less ``epsilon`` (``epsilon**2 / 2 <= rho / len(qs)``, the bound of every ``epsilon``-DP release), and
later ones at the largest with ``epsilon**2 / 8 <= rho / len(qs)``; their records state that conversion
(``"conversion"``), and a replay re-runs them by it (:class:`~securedp.mechanisms.record_rules.RecordRules`).

**Accuracy.** No interval of values is stated: the values at ranks
``q n -/+ r`` are the data's own order statistics, which no public number
gives. What is public is the **rank error bound** ``r``
(:func:`~securedp.mechanisms.rank_utility.rank_error_bound`): with probability
at least ``1 - alpha`` the released ``y`` has ``#{x < y} <= q n + r`` and
``#{x <= y} >= q n - r``, i.e. it lies between the values at ranks ``q n - r``
and ``q n + r``, the fallback point included (``r`` is taken over ``candidates + W``: ``ln(1 / (1 - p))``
over the rank rate more rows than without a fallback, e.g. ``ln 4`` at ``p = 3/4``; and adds the tie margin
``c``, as the least score may be ``b c``). It grows with
``ln(candidates)``: a coarser ``lattice=`` states a smaller ``r`` (and rounds the records more).

**Cells.** A cell's exact input is its counts per lattice point (the distinct points holding a kept
record, ascending, and how many records each holds), which an engine computes
(:meth:`~securedp.engines.protocol.Engine.unit_counts`); the window is cut from them by one running count
over the distinct points and two binary searches, and only its near entries are built. The selection's time
does not depend on the point selected (see the sampler), except on a far proposal, at most ``2**-64`` of
the draws.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact import bounds
from securedp.hazmat.exact.rational import format_rational, probability
from securedp.hazmat.samplers.bernoulli_exp import bernoulli_exp
from securedp.hazmat.samplers.categorical import ExpCategorical
from securedp.lattice import Lattice
from securedp.mechanisms.moments import ColumnStatistic
from securedp.mechanisms.quantile_draw import FlipDraw, flip_law, quantile_selection, whole_range
from securedp.mechanisms.rank_utility import (
    CAPPED_UTILITY,
    DEFAULT_FALLBACK,
    FALLBACK_LAW,
    LAW,
    UTILITY,
    LevelLaw,
    Window,
    check_fallback,
    fallback_point,
    fallback_weight,
)
from securedp.mechanisms.record_rules import PERMUTE_AND_FLIP, current_rules
from securedp.mechanisms.records import exact_value, parse_bounds, resolve_lattice
from securedp.mechanisms.selection_price import selection_epsilon, zcdp_of_selection
from securedp.mechanisms.statistic import CellColumn
from securedp.reading.columns import check_ordered

QUANTILE_RESOLUTION = 1 << 20
"""The default lattice of a column not typed integer spans at least this many steps (:func:`default_lattice`)."""


def default_lattice(lattice: Any, bounds: Any) -> Any:
    """The candidate lattice when none is given, from the public bounds alone.

    The coarsest power of two ``2**-k`` giving at least ``QUANTILE_RESOLUTION = 2**20`` steps across
    ``[lo, hi]`` (so ``2**20`` to ``2**21`` candidates: :meth:`~securedp.lattice.Lattice.for_bounds`);
    step 1 when ``lo == hi``. (A column whose type declares a grid never gets here: an integer column keeps
    step 1 and a decimal column of scale ``s`` step ``10**-s``, :func:`~securedp.mechanisms.records.typed_lattice`.
    Integer values in a float or text column should say ``lattice=1``, values on a coarser grid that grid.)

    **Why ``2**20``** (measured: ``benchmarks/bench_quantile_lattice.py``, every median of the real-data
    benchmark and two synthetic shapes, at ``2**12`` to ``2**32`` steps). Two errors pull apart. A record is
    rounded by up to ``(hi - lo) / 2**21``: a floor, below the rank error of any cell of fewer than about
    ``10**7`` rows. And every lattice point of the open gap beside a tied block of records shares the gap's
    score, so when the data are recorded on a coarse grid (tenths, cents) a gap of ``w`` points outweighs
    the tied median's own point unless the gap scores ``ln(w) / rate`` more: ``2**12`` fewer points per gap
    than ``2**32`` steps is 8.3 nats. Measured, the resolution changed nothing beyond the Monte Carlo noise
    except on tied data, where ``2**20`` steps cut the overall median's RMSE on Seattle's temperatures
    (tenths of a degree) from 0.29-0.33 to 0.04 and 0.000006, and on incomes rounded to hundreds from 54-58
    to 38-42 (``2**16`` does better still there, but rounds 16 times more). Fewer candidates also state a
    smaller rank error bound: ``ln(2**20) = 13.9`` nats against 22.2.
    """
    if lattice is not None:
        return lattice
    lo, hi = parse_bounds(bounds)
    if lo < hi:
        return Lattice.for_bounds(lo, hi, resolution=QUANTILE_RESOLUTION)
    return resolve_lattice(None, lo, hi)


def check_levels(qs: Any) -> tuple[Fraction, ...]:
    """The quantile levels ``qs`` as exact rationals in ``[0, 1]``, at least one and at most
    :data:`~securedp.hazmat.exact.bounds.MAX_LEVELS` (counted before any is read)."""
    check_ordered(qs, "qs", "a sequence of quantile levels in [0, 1]")
    held = qs if hasattr(qs, "__len__") else list(itertools.islice(qs, bounds.MAX_LEVELS + 1))
    bounds.levels(len(held), "qs")
    levels = tuple(bounds.parameter(probability(q, f"qs[{i}]"), f"qs[{i}]") for i, q in enumerate(held))
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
    fallback: Any = field(default=DEFAULT_FALLBACK, kw_only=True)
    """The fallback probability ``p`` (:mod:`~securedp.mechanisms.rank_utility`): a cell without records releases
    the fallback point with probability ``p``; 0 is the plain exponential mechanism."""
    selection: str = field(default="", init=False, repr=False, compare=False)
    """How each level's selection draws, decided once when the statistic is defined
    (:func:`~securedp.mechanisms.quantile_draw.quantile_selection` of the price, the candidates and the
    fallback's weight, under the rule in force then): ``"permute_and_flip"`` or ``"exponential"``."""
    ties: bool = field(default=True, init=False, repr=False, compare=False)
    """Whether the score has this version's tie margin (:attr:`~securedp.mechanisms.rank_utility.LevelLaw.
    tie_margin`), decided once when the statistic is defined (:class:`~securedp.mechanisms.record_rules.
    RecordRules`' ``tie_margin``: a replay of an earlier record defines it without)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "fallback", check_fallback(self.fallback))
        object.__setattr__(self, "ties", current_rules().tie_margin)
        super().__post_init__()
        object.__setattr__(self, "selection", self._selection())
        self._check_laws(self.laws)  # a rho too small for any selection is refused when the statistic is defined
        if self.fallback and not self.fallback_weight:
            p, n = self.fallback, self.candidates
            raise ValueError(f"fallback {p} gives the fallback point no weight against {n} candidates "
                             f"(W = floor({n} p / (1 - p)) = 0): give 0 for none, or at least "
                             f"{Fraction(1, n + 1)}")

    def _check_laws(self, laws: tuple[LevelLaw, ...]) -> None:
        """Refuse levels that do not share one law (``q`` and ``1 - q`` do)."""
        if len({(law.sensitivity, law.rate, law.rank_rate) for law in laws}) != 1:
            raise ValueError("the levels of one statistic must share one law (q and 1 - q do): release other "
                             "levels as quantiles of their own")

    @property
    def share(self) -> Fraction:
        """The ``epsilon`` of each level's selection in each cell:
        :func:`~securedp.mechanisms.selection_price.selection_epsilon` of the cost's share of one level, for
        ``max_groups`` cells per person."""
        return selection_epsilon(self.cost.split(len(self.levels)), self.max_groups)

    @property
    def laws(self) -> tuple[LevelLaw, ...]:
        """Each level's law (:class:`~securedp.mechanisms.rank_utility.LevelLaw`) at :attr:`share`, by level;
        they share their sensitivity, rate and rank rate (checked when the statistic is defined)."""
        cell = self.share
        return tuple(LevelLaw(q, cell, self.max_contributions, self.ties) for q in self.levels)

    def _selection(self) -> str:
        """The draw this statistic's selections use (:attr:`selection`)."""
        return quantile_selection(self.cost, self.candidates, self.fallback_weight, self.laws[0].rate)

    @property
    def mechanism(self) -> str:
        return self.selection

    @property
    def candidates(self) -> int:
        """The number of lattice points selected from (public)."""
        return self.column.hi_u - self.column.lo_u + 1

    @property
    def fallback_weight(self) -> int:
        """The fallback's weight ``W`` against the :attr:`candidates` (:func:`~securedp.mechanisms.rank_utility.
        fallback_weight`)."""
        return fallback_weight(self.fallback, self.candidates)

    def rank_error(self, alpha: Fraction) -> int:
        """The rank error bound ``r`` (rows) of each level at ``1 - alpha``
        (:meth:`~securedp.mechanisms.rank_utility.LevelLaw.rank_error` over the candidates and the fallback's
        weight, the tie margin included: it holds for every release, the fallback point's included)."""
        return self.laws[0].rank_error(self.candidates + self.fallback_weight, alpha)

    def fallback_rows(self, alpha: Fraction) -> int:
        """The rows from which a cell releases the fallback with probability at most ``alpha``
        (:meth:`~securedp.mechanisms.rank_utility.LevelLaw.fallback_rows`; the levels share their rate, spread
        and margin)."""
        return self.laws[0].fallback_rows(self.fallback_weight, alpha)

    def accuracy(self, alpha: Fraction) -> dict[str, Fraction]:
        """Each level's rank error bound ``r`` (rows) at ``1 - alpha`` (:meth:`rank_error`), by level."""
        r = self.rank_error(alpha)
        return {f"rank_error_q{format_rational(q)}": Fraction(r) for q in self.levels}

    def cell_record(self, alpha: Fraction) -> dict[str, Any]:
        """What a release records of this selection in each cell: its exact ``epsilon_cell``, its utility,
        the sensitivity of its score and the exact rate of its law, the number of candidates and the rank
        error bound at level ``1 - alpha`` (:meth:`rank_error`); with this version's score, its tie margin."""
        law, flip = self.laws[0], self.selection == PERMUTE_AND_FLIP
        record: dict[str, Any] = {
            "noise": [], "selection": self.selection, "q": self.levels[0] if self.single else list(self.levels),
            "epsilon_cell": law.epsilon, "utility": CAPPED_UTILITY if self.ties else UTILITY,
            **({"tie_margin": law.tie_margin} if self.ties else {}), "sensitivity": law.sensitivity,
            "law": flip_law(self.ties, False) if flip else LAW,
            "rate": law.rate, "candidates": self.candidates, "rank_error_bound": self.rank_error(alpha),
            **self.column_record()}
        if self.fallback_weight:  # without one the record is the plain exponential mechanism's, as ever
            record.update(law=flip_law(self.ties, True) if flip else FALLBACK_LAW, fallback=self.fallback,
                          fallback_weight=self.fallback_weight,
                          fallback_units=self._per_level([fallback_point(q, self.column.lo_u, self.column.hi_u)
                                                          for q in self.levels]),
                          fallback_rows_bound=self.fallback_rows(alpha))
        if self.cost.rho is not None:
            record.update(rho_cells=self.max_groups * zcdp_of_selection(law.epsilon),
                          conversion=current_rules().conversion)
        return record

    def _per_level(self, values: Sequence[Any]) -> Any:
        """One value per level as recorded: the value itself for one level, else the list."""
        return values[0] if len(self.levels) == 1 else list(values)

    @property
    def labels(self) -> tuple[Any, ...] | None:
        return None if self.single else self.levels

    def cell_points(self, points: Sequence[int] | np.ndarray,
                    counts: Sequence[int] | np.ndarray) -> Callable[[RandomSource], tuple[int, ...]]:
        """The selections' set-up for one cell (its counts per lattice point): a function drawing each
        level's lattice point (units), in the order of :attr:`levels`."""
        lo_u, hi_u, candidates, weight = self.column.lo_u, self.column.hi_u, self.candidates, self.fallback_weight
        flip = self.selection == PERMUTE_AND_FLIP
        plans: list[Callable[[RandomSource], int]] = []
        for law in self.laws:
            far = whole_range(law.q, counts) if flip else law.far(candidates)
            window = Window(points, counts, lo_u, hi_u, law.q, far, weight, law.tie_margin)
            plans.append(FlipDraw(window, law.rate) if flip else _exponential(window, law.rate))

        def draw(source: RandomSource) -> tuple[int, ...]:
            return tuple(plan(source) for plan in plans)

        return draw

    def release_points(self, points: Sequence[Sequence[int] | np.ndarray],
                       counts: Sequence[Sequence[int] | np.ndarray], source: RandomSource,
                       alpha: Fraction) -> CellColumn:  # noqa: ARG002 - a selection states no interval
        """The released cells from each cell's counts per lattice point (:meth:`cell_points`, then
        :meth:`value`, cell by cell, in order): exact lattice values, with no interval."""
        values = [self.value(self.cell_points(p, c)(source)) for p, c in zip(points, counts, strict=True)]
        return CellColumn(values, None, None, None, self.column.lattice.step)

    def release_columns(self, points: Sequence[Sequence[int] | np.ndarray],
                        counts: Sequence[Sequence[int] | np.ndarray], source: RandomSource,
                        alpha: Fraction) -> list[CellColumn]:
        """The released columns of a table: :meth:`release_points`' one."""
        return [self.release_points(points, counts, source, alpha)]

    def value(self, points: tuple[int, ...]) -> Any:
        """The released value of a cell from its selected points: each an exact lattice value (a tuple for
        several levels)."""
        lattice = self.column.lattice
        values = tuple(exact_value(lattice.value(p)) for p in points)
        return values[0] if self.single else values


def _exponential(window: Window, rate: Fraction) -> Callable[[RandomSource], int]:
    """The exponential mechanism's draw over ``window`` at ``rate`` (:func:`_select`), set up once."""
    plan = ExpCategorical(window.scores, rate, window.widths)
    return lambda source: _select(window, rate, plan, source)


def _select(window: Window, rate: Fraction, plan: ExpCategorical, source: RandomSource) -> int:
    """One candidate (units) drawn from ``P(y) ~ exp(-rate g(y))`` and the fallback's ``W exp(-rate h)``: an entry of
    ``window`` and a uniform point in it (the fallback entry stands for its one point); a point of the far entry
    is kept with probability ``exp(-rate (g(y) - far))``, else the draw starts again
    (:class:`~securedp.mechanisms.rank_utility.Window`; at most ``2**-64`` of the proposals)."""
    while True:
        i, offset = plan.draw(source)
        if i == window.fallback_entry:
            return window.fallback_point
        if i != window.far_entry:
            return window.start(i) + offset
        y = window.far_point(offset)
        if bernoulli_exp(rate * (window.score_at(y) - window.far), rng=source):
            return y


class Quantile(Quantiles):
    """The definition of one quantile: :class:`Quantiles` at one level, released as one value."""

    statistic = "quantile"
    single = True


class Median(Quantile):
    """The definition of the median: the quantile ``1/2``."""

    statistic = "median"
