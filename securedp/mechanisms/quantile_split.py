"""Several quantiles by recursive splitting: ``m`` levels for the price of ``ceil(log2(m + 1))`` selections.

**Algorithm** (Kaplan, Schnapp and Stemmer 2022, "Differentially private approximate quantiles", ICML,
Algorithm 1). The levels are sorted, ``q_1 < ... < q_m``, and arranged as a balanced search tree
(:func:`split_tree`): the root is the level at index ``m // 2``, the levels below it form its left
subtree, those above its right, recursively; the tree has ``D = ceil(log2(m + 1))`` depths (``m``'s bit
length). Each level ``q_i`` has a *part*: the range between the released points ``y_lo <= y_hi`` of its
nearest ancestors below and above it (the bounds' ``lo_u``, ``hi_u`` where there is none), and a rescaled
level ``q' = (q_i - q_lo) / (q_hi - q_lo)`` (``q_lo``, ``q_hi`` those ancestors' levels, else 0 and 1). The
release draws depth by depth, left to right within a depth: level ``q_i`` selects its point among the
candidates ``[y_lo, y_hi]`` (lattice units) by the exponential mechanism of one quantile at level ``q'``
over its part's half-rows (below): the score of :mod:`securedp.mechanisms.rank_utility`, its fallback
point (of weight ``floor(N p / (1 - p))`` for the part's ``N`` candidates), its window and its exact
sampler (:mod:`securedp.mechanisms.quantile`). Every depth runs at ``epsilon_depth``:
:func:`~securedp.mechanisms.selection_price.selection_epsilon` of ``cost / D`` for the ``max_groups`` cells a
person changes. A level's candidates lie between its ancestors' released points, so the released points
are **monotone by construction**: ``y_1 <= ... <= y_m`` (equal points allowed).

**Half-rows** (how the split handles ties, which KSS exclude by assuming distinct data). Each record ``x``
counts as two half-rows, one just under its point and one just over it (on the doubled lattice: at
``2x - 1`` and ``2x + 1``, the candidates at ``2y``), so no half-row lies on a candidate. A candidate ``y``
then has one rank, the half-rows ``H(y)`` under it (``2 #{x < y} + #{x = y}``: a tie block at ``y`` counts
as its middle), and for ``q' = a / b`` over ``n`` half-rows scores ``g(y) = |b H(y) - a n|``; the part
below a released ``y`` takes the half-rows under it, the part above those over it (a record at ``y`` gives
one to each). One person's ``m`` rows are ``2m`` half-rows, so each selection uses the rate of one quantile
for ``2m`` rows per person, ``epsilon_depth / (4 m max(a, b - a))`` (``epsilon_depth / (2m)`` when ``q'``
is 0 or 1): per row, the rank rate of one quantile. :class:`HalfRowWindow` computes the scores.

**Privacy map** (KSS Theorem 3.3, restated for half-rows, ``m`` rows per person and a fallback). Fix the
points released by the depths before ``d`` (adaptive composition conditions on them). They cut the
doubled lattice into parts at even points, and each half-row lies in exactly one part (by its own value),
so the parts of depth ``d`` hold disjoint half-rows. A person's ``2m`` half-rows put ``h_j`` in part ``j``,
``sum h_j <= 2m``. Adding one half-row to a part adds 1 to ``n`` and 0 or 1 to ``H(y)``, moving
``b H - a n`` by ``-a`` or ``b - a``, so ``g`` (and the fallback's score ``max(a, b - a) n``, the largest
any candidate has) by at most ``max(a, b - a)``, never down when ``q'`` is 0 or 1 (the proof of
:mod:`~securedp.mechanisms.rank_utility`, half-row by half-row; the candidates, the rescaled level and the
fallback's weight and point are public given the earlier depths). So part ``j`` loses at most
``epsilon_depth h_j / (2m)`` (the exponential mechanism, McSherry and Talwar 2007, with a public base
measure), and the depth, its parts drawn independently, at most ``epsilon_depth``: it is
``epsilon_depth``-DP and ``epsilon_depth``-bounded range (the parts' losses add, each within its range),
hence zCDP by its certified sharp bound (:mod:`securedp.privacy.bounded_range_zcdp`, at most
``epsilon_depth**2 / 8``, Cesar and Rogers 2021). The ``D`` depths compose: ``D epsilon_depth <= epsilon`` (or ``D``
times that zCDP ``<= rho``), per cell for ``max_groups`` cells; an ``epsilon`` split in a rho budget is charged
the bound of ``epsilon`` itself, at least ``D`` times that of ``epsilon / D`` (its "Equal shares"). Tested exactly:
``tests/privacy/test_quantile_split_privacy.py`` enumerates the joint law of every output on tiny
neighbouring instances (one or two rows per person) and bounds the largest loss by the charge.

**Rank error stated per level.** Within its part, level ``q_i``'s law is ``P(y) ~ exp(-rate g(y))`` with
``g`` at least the least score ``g_min`` of any candidate, so ``Z >= exp(-rate g_min)`` and it releases a
point scoring ``g_min + t`` or more with probability at most ``(|Y| + W) exp(-rate t)`` (the fallback's
included, as in :mod:`~securedp.mechanisms.rank_utility`; ``|Y|``, ``W`` the whole range's candidates and
fallback weight, at least any part's). ``g_min / b`` is at most half the largest step of ``H`` between two
neighbouring candidates near the target: one half-row when no two records share a lattice point, half the
records on the two lattice points around the target otherwise. So the selection lands ``e_i`` half-rows from
its part's target ``q' n`` (``|H(y) - q' n|`` within the part), ``e_i / 2 <= g_min / (2b) +
rank_error_bound(2 rate_i b_i, |Y| + W, beta)`` rows with probability ``1 - beta`` (``2 rate_i b_i`` the
exponent per row: :func:`~securedp.mechanisms.rank_utility.rank_error_bound`). The part starts at the
half-row rank ``H(y_lo)`` of its lower ancestor and ends at ``H(y_hi)``, so its target
``H(y_lo) + q' (H(y_hi) - H(y_lo))`` is the convex combination ``(1 - q') H(y_lo) + q' H(y_hi)``, and the
level's half-row rank in the whole cell is within ``e_i`` plus the larger of its ancestors' errors of
``2 q_i n`` (``n`` rows): at most the sum of the ``e_j`` on its path from the root. Since ``H(y)`` lies in
``[2 #{x < y}, 2 #{x <= y}]``, with probability at least ``1 - alpha`` (``beta = alpha / depth_i`` for the
``depth_i`` selections on its path) the released ``y_i`` lies between the values at ranks ``q_i n - r_i``
and ``q_i n + r_i``, with ``r_i = ceil(depth_i / 2) + sum_j rank_error_bound(2 rate_j b_j, |Y| + W,
alpha / depth_i)`` (:meth:`SplitQuantiles.rank_errors`) when no two records share a lattice point; records
that do add, for each selection on the path, at most a quarter of those on the two lattice points around
its target (which no public number bounds; the single quantile's bound has a public term instead, its tie margin c).

**The draw: the exponential mechanism, whatever the price.** A single ``epsilon``-priced quantile over few
candidates draws by permute-and-flip (:mod:`securedp.mechanisms.quantile_draw`); the split does not. Each depth
would flip a coin for every candidate and fallback unit of every part (about ``|Y| + W`` per depth, ``D`` times
the single quantile's: four times ``2**17`` coins for deciles, 50-100 ms a cell at the measured 100-200 ns a
coin), where the exponential mechanism's draw costs the same whatever the candidates; and its gain is small
where the split is used most: at the root selection, exactly, none on the default lattices of six real datasets
(ratio of expected errors 0.999-1.000) and 0.983 / 0.722 on a step-1 integer column at ``epsilon`` 0.1 / 1
(``benchmarks/bench_quantile_split.py --root-laws``). Its privacy map would hold (the
same survival-ratio argument per part, the parts disjoint), so this is a choice of time, not of privacy; the
record's ``"selection"`` names the split.

**Time.** Each selection is one quantile's: its part's record points cut from the cell's by two binary
searches, its window built over them and its sampler's draw in a time that does not depend on the point
drawn (:mod:`securedp.mechanisms.quantile`). The parts of a depth hold the cell's record points once (a
point at a released value in two), so a depth costs about one quantile's set-up and the release about
``D`` of them. The time depends on the data as one quantile's does and on the released points.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.rational import format_rational
from securedp.hazmat.samplers.categorical import ExpCategorical
from securedp.mechanisms.quantile import Quantiles, _select
from securedp.mechanisms.rank_utility import (
    FALLBACK_LAW,
    LAW,
    UTILITY,
    LevelLaw,
    Window,
    fallback_weight,
    far_score,
    rank_error_bound,
)
from securedp.mechanisms.record_rules import EXPONENTIAL, current_rules
from securedp.mechanisms.records import exact_value
from securedp.mechanisms.selection_price import selection_epsilon, zcdp_of_selection
from securedp.mechanisms.statistic import CellColumn

SPLIT = "recursive split (Kaplan, Schnapp and Stemmer 2022): each level by the exponential mechanism at its " \
        "rescaled level q' = (q - q_lo) / (q_hi - q_lo) over the records x with y_lo < x <= y_hi and the " \
        "candidates [y_lo, y_hi] between its ancestors' released points"
"""The selection as a release records it."""


@dataclass(frozen=True)
class SplitNode:
    """One level of the split tree: its index among the sorted levels, its depth (1 at the root), the indices of
    its nearest ancestors below and above (``None``: the bound), and its rescaled level ``q'``."""

    index: int
    depth: int
    lower: int | None
    upper: int | None
    q: Fraction
    path: tuple[int, ...]
    """The indices of the levels on its path from the root, itself last."""


def split_depths(m: int) -> int:
    """``D = ceil(log2(m + 1))``, the depths of the split tree of ``m`` levels: ``m``'s bit length."""
    return m.bit_length()


def split_tree(levels: Sequence[Fraction]) -> tuple[SplitNode, ...]:
    """The split tree of strictly increasing ``levels``, in draw order: depth by depth, left to right."""
    nodes: list[SplitNode] = []
    todo: list[tuple[int, int, int | None, int | None, tuple[int, ...]]] = [(0, len(levels), None, None, ())]
    depth = 0
    while todo:
        depth += 1
        after: list[tuple[int, int, int | None, int | None, tuple[int, ...]]] = []
        for start, stop, lower, upper, path in todo:
            i = (start + stop) // 2
            q_lo = levels[lower] if lower is not None else Fraction(0)
            q_hi = levels[upper] if upper is not None else Fraction(1)
            nodes.append(SplitNode(i, depth, lower, upper, (levels[i] - q_lo) / (q_hi - q_lo), (*path, i)))
            if start < i:
                after.append((start, i, lower, i, (*path, i)))
            if i + 1 < stop:
                after.append((i + 1, stop, i, upper, (*path, i)))
        todo = after
    return tuple(nodes)


class HalfRowWindow(Window):
    """:class:`~securedp.mechanisms.rank_utility.Window` over half-rows: each record point ``p_j`` holds
    ``below[j]`` half-rows just under it and ``above[j]`` just over it (module docstring, "Half-rows"), so a
    candidate ``y`` has one rank ``H(y)`` (the half-rows under it) and scores ``|b H(y) - a n|`` for ``n``
    half-rows: a gap after ``p_j`` scores ``|t_j|`` as in the window (``t_j = b C_j - a n``, ``C_j`` the
    half-rows up to and around ``p_j``), the point ``p_j`` itself ``|b (C_{j-1} + below[j]) - a n|``, which lies
    between ``t_{j-1}`` and ``t_j``: a point outside the near run still scores ``far`` or more."""

    def __init__(self, points: np.ndarray, below: np.ndarray, above: np.ndarray, lo_u: int, hi_u: int, q: Fraction,
                 far: int, fallback: int = 0) -> None:
        super().__init__(points, below + above, lo_u, hi_u, q, far, fallback)
        self.below = below
        if len(self.near_points):
            first, last, g = self.near_points[0], self.near_points[-1], len(self.gaps)
            a, b = q.numerator, q.denominator
            under = self.running[first - 1:last] + below[first - 1:last]
            self.scores[g:g + len(self.near_points)] = np.abs(under * b - a * self.n)

    def score_at(self, y: int) -> int:
        """``|b H(y) - a n|`` of any candidate, from the running half-row counts."""
        a, b = self.q.numerator, self.q.denominator
        i = int(np.searchsorted(self.points, y, side="left"))
        under = int(self.running[i]) + (int(self.below[i]) if i < self.d and int(self.points[i]) == y else 0)
        return abs(b * under - a * self.n)


@dataclass(frozen=True)
class SplitQuantiles(Quantiles):
    """The quantiles at ``levels`` (two or more, distinct) in a cell by the recursive split (module docstring):
    ``split_depths(m)`` selections' worth of the cost, each depth at :attr:`share`."""

    record_words: ClassVar[Mapping[str, str]] = {  # the report's words for the fields this record adds
        "depths": "the depths of the recursive split, ceil(log2(m + 1)) for m levels: each depth's selections run at "
                  "epsilon_cell over disjoint parts of the records, so the depths compose, not the levels",
        "rescaled_q": "each level's level within its part, q' = (q - q_lo) / (q_hi - q_lo) between its nearest "
                      "ancestors' levels (0 and 1 where there is none), in the order of q",
        "rank_error_bounds": "each level's rank error bound r in rows at level 1 - alpha, in the order of q: the value "
                             "lies between the values at ranks q n - r and q n + r (the bounds of the selections on "
                             "its path from the root, added)",
    }

    def __post_init__(self) -> None:
        if len(self.levels) < 2 or len(set(self.levels)) != len(self.levels):
            raise ValueError("a recursive split takes two or more distinct levels")
        super().__post_init__()

    def _check_laws(self, laws: tuple[LevelLaw, ...]) -> None:
        """Nothing to refuse: the levels' laws differ by design, one per rescaled level."""

    def _selection(self) -> str:
        """Each part draws by the exponential mechanism, whatever the price (the module docstring says why)."""
        return EXPONENTIAL

    @property
    def sorted_levels(self) -> tuple[Fraction, ...]:
        return tuple(sorted(self.levels))

    @property
    def tree(self) -> tuple[SplitNode, ...]:
        return split_tree(self.sorted_levels)

    @property
    def share(self) -> Fraction:
        """The ``epsilon`` of each depth's selections in each cell: :func:`~securedp.mechanisms.quantile.
        selection_epsilon` of the cost's ``1 / D`` share, for ``max_groups`` cells per person."""
        return selection_epsilon(self.cost.split(split_depths(len(self.levels))), self.max_groups)

    @property
    def laws(self) -> tuple[LevelLaw, ...]:
        """Each tree node's law at its rescaled level, in draw order (:attr:`tree`); no tie margin: a half-row
        score gives a tied block its middle rank (module docstring)."""
        cell = self.share
        return tuple(LevelLaw(node.q, cell, 2 * self.max_contributions, False) for node in self.tree)

    def rank_errors(self, alpha: Fraction) -> dict[Fraction, int]:
        """Each level's rank error bound ``r_i`` (rows) at ``1 - alpha``: ``ceil(depth_i / 2)`` and the bounds of
        the selections on its path, each at ``alpha / depth_i``, at the rank rate per row (twice that per
        half-row), for records on distinct lattice points (module docstring)."""
        tree, laws, spread = self.tree, self.laws, self.candidates + self.fallback_weight
        rate = {node.index: 2 * law.rank_rate for node, law in zip(tree, laws, strict=True)}
        levels = self.sorted_levels
        return {levels[node.index]: (node.depth + 1) // 2 + sum(rank_error_bound(rate[j], spread, alpha / node.depth)
                                                               for j in node.path) for node in tree}

    def rank_error(self, alpha: Fraction) -> int:
        """The largest of the levels' :meth:`rank_errors`."""
        return max(self.rank_errors(alpha).values())

    def fallback_rows(self, alpha: Fraction) -> int:  # noqa: ARG002 - a part's records are not the cell's
        """No cell size bounds a part's fallback: 0 (not stated)."""
        return 0

    def accuracy(self, alpha: Fraction) -> dict[str, Fraction]:
        """Each level's rank error bound ``r_i`` (rows) at ``1 - alpha`` (:meth:`rank_errors`), by level."""
        errors = self.rank_errors(alpha)
        return {f"rank_error_q{format_rational(q)}": Fraction(errors[q]) for q in self.levels}

    def cell_record(self, alpha: Fraction) -> dict[str, Any]:
        """What a release records of the split in each cell: its levels, depths, ``epsilon_cell`` per depth, each
        level's rescaled level, rate and rank error bound (in the order of the levels), and the candidates."""
        tree, laws, errors = self.tree, self.laws, self.rank_errors(alpha)
        levels = self.sorted_levels
        by_level = {levels[n.index]: (n, law) for n, law in zip(tree, laws, strict=True)}
        record: dict[str, Any] = {
            "noise": [], "selection": SPLIT, "q": list(self.levels), "depths": split_depths(len(self.levels)),
            "epsilon_cell": self.share, "utility": UTILITY, "law": FALLBACK_LAW if self.fallback_weight else LAW,
            "rescaled_q": [by_level[q][0].q for q in self.levels],
            "sensitivity": [by_level[q][1].sensitivity for q in self.levels],
            "rate": [by_level[q][1].rate for q in self.levels], "candidates": self.candidates,
            "rank_error_bound": max(errors.values()), "rank_error_bounds": [errors[q] for q in self.levels],
            **self.column_record()}
        if self.fallback_weight:
            record.update(fallback=self.fallback)
        if self.cost.rho is not None:
            depths = split_depths(len(self.levels))
            record.update(rho_cells=self.max_groups * depths * zcdp_of_selection(self.share),
                          conversion=current_rules().conversion)
        return record

    def cell_points(self, points: Sequence[int] | np.ndarray,
                    counts: Sequence[int] | np.ndarray) -> Callable[[RandomSource], tuple[int, ...]]:
        """The split's draw for one cell (its counts per lattice point): each level's point (units), in the order
        of :attr:`levels`."""
        at = np.asarray(points) if len(points) else np.zeros(0, dtype=np.int64)
        held = np.asarray(counts, dtype=np.int64)
        lo_u, hi_u, p = self.column.lo_u, self.column.hi_u, self.fallback
        tree, laws = self.tree, self.laws
        order = {q: i for i, q in enumerate(self.sorted_levels)}
        asked = [order[q] for q in self.levels]  # each level's index in the tree, in the order of the levels
        far = {law.rate: far_score(law.rate, self.candidates) for law in laws}

        def draw(source: RandomSource) -> tuple[int, ...]:
            chosen: dict[int, int] = {}
            for node, law in zip(tree, laws, strict=True):
                y_lo = chosen[node.lower] if node.lower is not None else lo_u
                y_hi = chosen[node.upper] if node.upper is not None else hi_u
                first = int(np.searchsorted(at, y_lo, side="left")) if node.lower is not None else 0
                last = int(np.searchsorted(at, y_hi, side="right")) if node.upper is not None else len(at)
                below, above = held[first:last].copy(), held[first:last].copy()
                if first < last and node.lower is not None and at[first] == y_lo:  # under y_lo: the part below's
                    below[0] = 0
                if first < last and node.upper is not None and at[last - 1] == y_hi:  # over y_hi: the part above's
                    above[-1] = 0
                weight = fallback_weight(p, y_hi - y_lo + 1) if p else 0
                window = HalfRowWindow(at[first:last], below, above, y_lo, y_hi, node.q, far[law.rate], weight)
                plan = ExpCategorical(window.scores, law.rate, window.widths)
                chosen[node.index] = _select(window, law.rate, plan, source)
            return tuple(chosen[i] for i in asked)

        return draw

    def release_columns(self, points: Sequence[Sequence[int] | np.ndarray],
                        counts: Sequence[Sequence[int] | np.ndarray], source: RandomSource,
                        alpha: Fraction) -> list[CellColumn]:  # noqa: ARG002 - a selection states no interval
        """The released cells, one column per level (in the order of :attr:`levels`), cell by cell in order."""
        lattice = self.column.lattice
        drawn = [self.cell_points(p, c)(source) for p, c in zip(points, counts, strict=True)]
        return [CellColumn([exact_value(lattice.value(cell[i])) for cell in drawn], None, None, None, lattice.step)
                for i in range(len(self.levels))]
