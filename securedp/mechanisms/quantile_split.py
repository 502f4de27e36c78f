"""Several quantiles by recursive splitting: ``m`` levels for the price of ``ceil(log2(m + 1))`` selections.

**Algorithm** (Kaplan, Schnapp and Stemmer 2022, "Differentially private approximate quantiles", ICML,
Algorithm 1). The levels are sorted, ``q_1 < ... < q_m``, and arranged as a balanced search tree
(:func:`split_tree`): the root is the level at index ``m // 2``, the levels below it form its left
subtree, those above its right, recursively; the tree has ``D = ceil(log2(m + 1))`` depths (``m``'s bit
length). Each level ``q_i`` has a *part*: the open range between the released points of its nearest
ancestors below and above it (``y_lo``, ``y_hi``; the bounds where there is none), and a rescaled level
``q' = (q_i - q_lo) / (q_hi - q_lo)`` (``q_lo``, ``q_hi`` those ancestors' levels, else 0 and 1). The
release draws depth by depth, left to right within a depth: level ``q_i`` selects its point by the
exponential mechanism of one quantile (:mod:`securedp.mechanisms.rank_utility`: score, fallback point,
window and sampler exactly as :mod:`securedp.mechanisms.quantile`) at level ``q'``, over the candidates
``[y_lo, y_hi]`` (lattice units; ``lo_u``, ``hi_u`` at the bounds) and the records ``x`` of the part:
``y_lo < x <= y_hi`` (a record equal to a released point goes to the part *below* it; the leftmost part
keeps every record ``<= y_hi``). Every depth runs at ``epsilon_depth``: :func:`~securedp.mechanisms.
quantile.selection_epsilon` of ``cost / D`` for the ``max_groups`` cells a person changes.

**Released outputs are monotone by construction**: a level's candidates lie between its ancestors'
released points, so ``y_1 <= ... <= y_m`` always (equal points are allowed).

**Privacy map** (KSS Theorem 3.3, restated for ``m`` rows per person and a fallback). Fix the points
released by the depths before ``d`` (adaptive composition conditions on them). They cut the bounds into
parts by public points only, and each record lies in exactly one part (by its own value), so the parts of
depth ``d`` hold disjoint records. A person with ``m`` rows has ``m_j`` of them in part ``j``,
``sum m_j <= m``. Part ``j``'s selection is the exponential mechanism at rate ``epsilon_depth /
(2 m max(a, b - a))`` for its level ``q' = a / b`` (``epsilon_depth / m`` when ``q'`` is 0 or 1), with a
score (and a fallback score) that moves by at most ``m_j max(a, b - a)`` when those ``m_j`` rows are added
or removed (the sensitivity proof of :mod:`~securedp.mechanisms.rank_utility`, row by row, applies to the
part's records, whose count ``n'`` is private and enters the score as ``n`` does there; the candidates,
rescaled level and fallback weight are public given the earlier depths). So part ``j`` loses at most
``epsilon_depth m_j / m``, and the depth, its parts drawn independently, at most ``epsilon_depth``: it is
``epsilon_depth``-DP, and ``epsilon_depth``-bounded range (the losses of independent parts add, each
within its range of ``epsilon_depth m_j / m``), hence ``epsilon_depth**2 / 8``-zCDP. The ``D`` depths
compose: ``D epsilon_depth <= epsilon`` (or ``D epsilon_depth**2 / 8 <= rho``), times ``max_groups`` in a
table. ``tests/privacy/test_quantile_split_privacy.py`` enumerates the joint law of every output on tiny
neighbouring instances and checks the largest loss against this charge.

**Rank error stated per level.** Write ``R(y) = [#{x < y}, #{x <= y}]`` (the ranks ``y`` holds). Level
``q_i``'s selection, in its part of ``n'`` records starting at rank ``#{x <= y_lo}``, lands within
``e_i`` rows of its target ``q' n'`` (``dist(q' n', R'(y))``, ``R'`` the ranks within the part), and
``e_i <= rank_error_bound(rate_i b_i, |Y| + W, beta)`` with probability ``1 - beta`` whatever the data
(:func:`~securedp.mechanisms.rank_utility.rank_error_bound`, over the whole range's candidates ``|Y|``
and fallback weight ``W``, at least any part's). The target ``#{x <= y_lo} + q' n'`` is the convex
combination ``(1 - q') #{x <= y_lo} + q' #{x <= y_hi}``, so the level's rank error in the whole cell is
at most ``e_i`` plus the larger of its two ancestors' (recursively: the sum of ``e_j`` over its path from
the root) **plus the records equal to an ancestor's released point** (a part cannot see the records tied
at its lower end: KSS assume distinct data; on a lattice a tie block is counted once, below). With
``beta = alpha / depth_i`` for the ``depth_i`` selections on its path: with probability at least
``1 - alpha`` level ``q_i``'s rank error is at most ``r_i = sum_j rank_error_bound(rate_j b_j, |Y| + W,
alpha / depth_i)`` (:meth:`SplitQuantiles.rank_errors`), ties at released points aside.

**Time.** Each selection is one quantile's (its part's window cut by two binary searches on the cell's
record points, its sampler's draw in a time that does not depend on the point drawn); the parts of a depth
hold the cell's records once, so a depth costs about one quantile's set-up. The time depends on the data
as one quantile's does (the records, through their parts) and on the released points.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.rational import format_rational
from securedp.hazmat.samplers.categorical import ExpCategorical
from securedp.mechanisms.quantile import Quantiles, _select, selection_epsilon, zcdp_of_selection
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
from securedp.mechanisms.records import exact_value
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
            nodes.append(SplitNode(i, depth, lower, upper, (levels[i] - q_lo) / (q_hi - q_lo), path + (i,)))
            if start < i:
                after.append((start, i, lower, i, path + (i,)))
            if i + 1 < stop:
                after.append((i + 1, stop, i, upper, path + (i,)))
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

    def __post_init__(self) -> None:
        if len(self.levels) < 2 or len(set(self.levels)) != len(self.levels):
            raise ValueError("a recursive split takes two or more distinct levels")
        super().__post_init__()

    def _check_laws(self, laws: tuple[LevelLaw, ...]) -> None:
        """Nothing to refuse: the levels' laws differ by design, one per rescaled level."""

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
        """Each tree node's law at its rescaled level, in draw order (:attr:`tree`)."""
        cell = self.share
        return tuple(LevelLaw(node.q, cell, 2 * self.max_contributions) for node in self.tree)

    def rank_errors(self, alpha: Fraction) -> dict[Fraction, int]:
        """Each level's rank error bound ``r_i`` (rows) at ``1 - alpha``: the sum of the bounds of the selections
        on its path, each at ``alpha / depth_i`` (module docstring), ties at released points aside."""
        tree, laws, spread = self.tree, self.laws, self.candidates + self.fallback_weight
        rate = {node.index: law.rank_rate for node, law in zip(tree, laws, strict=True)}
        levels = self.sorted_levels
        return {levels[node.index]: sum(rank_error_bound(rate[j], spread, alpha / node.depth) for j in node.path)
                for node in tree}

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
        by_level = {self.sorted_levels[n.index]: (n, law) for n, law in zip(tree, laws, strict=True)}
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
            record.update(rho_cells=self.max_groups * depths * zcdp_of_selection(self.share))
        return record

    def cell_points(self, points: Sequence[int] | np.ndarray,
                    counts: Sequence[int] | np.ndarray) -> Callable[[RandomSource], tuple[int, ...]]:
        """The split's draw for one cell (its counts per lattice point): each level's point (units), in the order
        of :attr:`levels`."""
        at = np.asarray(points) if len(points) else np.zeros(0, dtype=np.int64)
        held = np.asarray(counts, dtype=np.int64)
        lo_u, hi_u, p = self.column.lo_u, self.column.hi_u, self.fallback
        tree, laws, levels = self.tree, self.laws, self.sorted_levels
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
            return tuple(chosen[levels.index(q)] for q in self.levels)

        return draw

    def release_columns(self, points: Sequence[Sequence[int] | np.ndarray],
                        counts: Sequence[Sequence[int] | np.ndarray], source: RandomSource,
                        alpha: Fraction) -> list[CellColumn]:  # noqa: ARG002 - a selection states no interval
        """The released cells, one column per level (in the order of :attr:`levels`), cell by cell in order."""
        lattice = self.column.lattice
        drawn = [self.cell_points(p, c)(source) for p, c in zip(points, counts, strict=True)]
        return [CellColumn([exact_value(lattice.value(cell[i])) for cell in drawn], None, None, None, lattice.step)
                for i in range(len(self.levels))]
