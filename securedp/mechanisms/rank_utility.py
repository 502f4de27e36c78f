"""The quantiles' utility over a lattice: its integer score per candidate, its law's rate, its rank error.

**Score.** For ``n`` records ``x`` (clamped and rounded onto the lattice), a level ``q = a / b`` in
lowest terms (``0 <= a <= b``, ``b >= 1``) and a candidate ``y``, write ``L(y) = #{x < y}`` and
``E(y) = #{x <= y}``. The score (an integer, smaller is better; the utility is its negation) is

    g(y) = max(0, b L(y) - a n, a n - b E(y)) = b * dist(q n, [L(y), E(y)]),

``b`` times the distance, in rows, from ``q n`` to the ranks ``y`` holds. ``g(y) = 0`` exactly when
``L(y) <= q n <= E(y)``: ``y`` is a ``q``-quantile of the rounded records, ties included (a point
holding a block of equal records holds every rank of the block, so it scores 0 when ``q n`` falls
inside it, whichever side of it the other records lie). Some candidate always scores 0: the first
record point with ``E >= q n`` (its ``L < q n``, or the point before it would be first), or every
candidate when ``n = 0``.

**Sensitivity.** Adding one row adds 1 to ``n`` and ``0 <= dL <= dE <= 1`` to ``L(y)`` and ``E(y)``,
so ``b L - a n`` moves by ``b dL - a``, in ``{-a, b - a}``, and ``a n - b E`` by ``a - b dE``, in
``{a - b, a}``. The maximum of 0 and two terms that each move by at most ``max(a, b - a)`` moves by at
most as much, so a person with ``m`` rows in the cell moves ``g`` by at most
``sensitivity = m * max(a, b - a)`` (removing is the same step backwards).

**Law and privacy map.** ``P(y)`` is proportional to ``exp(-rate * g(y))`` over the public candidates.
With ``rate = epsilon / (2 * sensitivity)`` this is the exponential mechanism (McSherry and Talwar
2007): ``epsilon``-DP. For ``q = 0`` (``g = L(y)``) and ``q = 1`` (``g = n - E(y) = #{x > y}``) the
score is **monotone**: adding a person's rows moves every ``g(y)`` by some ``d(y)`` in
``[0, sensitivity]``, never down. Then the normaliser ``Z' = sum exp(-rate (g + d))`` lies in
``[exp(-rate * sensitivity) Z, Z]`` and ``P'(y) / P(y) = exp(-rate d(y)) Z / Z'`` in
``[exp(-rate * sensitivity), exp(rate * sensitivity)]``, so ``rate = epsilon / sensitivity``
(``epsilon / m``) is ``epsilon``-DP. :class:`LevelLaw` states the rate of each level.

**Entries.** ``g`` is constant between consecutive record points and takes its own value at each:
with the distinct points ``p_1 < ... < p_d`` holding records and the running counts ``C_0 = 0``,
``C_j = #{x <= p_j}``, a gap ``p_j < y < p_{j+1}`` has ``L = E = C_j`` and the point ``p_j`` has
``L = C_{j-1}``, ``E = C_j``. So the candidates ``[lo_u, hi_u]`` are cut into ``2 d + 1`` entries
(the gaps 0 .. d and the points 1 .. d), each with its number of lattice points (a gap may hold none)
and one score (:class:`Entries`); the sampler draws an entry with probability proportional to
``width * exp(-rate * g)`` and a uniform point inside it (Smith 2011), exactly.

**Rank error.** The rank error of ``y`` is ``dist(q n, [L(y), E(y)]) = g(y) / b``. Some candidate
scores 0, so ``P(g(y) >= t) <= |Y| exp(-rate t)`` for ``|Y|`` candidates, whatever the data, and the
rank error exceeds ``ln(|Y| / alpha) / (rate * b)`` with probability at most ``alpha``
(:func:`rank_error_bound`, with the *rank rate* ``rate * b``: the law's exponent per row).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import gmpy2
import numpy as np

UTILITY = "-g(y), g(y) = max(0, b #{x < y} - a n, a n - b #{x <= y}) for q = a/b in lowest terms"
"""The utility as a release records it."""
LAW = "P(y) proportional to exp(-rate g(y)) over every lattice point y of the bounds"
"""The selection's law as a release records it."""

_SAFE = 1 << 62


@dataclass(frozen=True)
class LevelLaw:
    """The law of one level's selection: ``q = a / b``, ``epsilon`` and ``m`` rows per person in a cell."""

    q: Fraction
    epsilon: Fraction
    max_contributions: int

    @property
    def sensitivity(self) -> int:
        """``m * max(a, b - a)``: the most one person moves the score ``g``."""
        return self.max_contributions * max(self.q.numerator, self.q.denominator - self.q.numerator)

    @property
    def monotone(self) -> bool:
        """``q`` is 0 or 1: adding rows never lowers the score (see the module docstring)."""
        return self.q in (0, 1)

    @property
    def rate(self) -> Fraction:
        """``epsilon / sensitivity`` for a monotone level, else ``epsilon / (2 * sensitivity)``."""
        return self.epsilon / (self.sensitivity if self.monotone else 2 * self.sensitivity)

    @property
    def rank_rate(self) -> Fraction:
        """``rate * b``: the law's exponent per row of rank error."""
        return self.rate * self.q.denominator


def rank_error_bound(rank_rate: Fraction, candidates: int, alpha: Fraction) -> int:
    """The least integer ``r >= ln(candidates / alpha) / rank_rate`` (MPFR, rounded up): with probability at
    least ``1 - alpha`` the rank error of a selection whose law falls by ``exp(-rank_rate)`` per row is at most
    ``r`` (see the module docstring; McSherry and Talwar 2007)."""
    with gmpy2.context(precision=128, round=gmpy2.RoundUp):
        bound = gmpy2.log(gmpy2.mpq(candidates * alpha.denominator, alpha.numerator))
        return int(gmpy2.ceil(bound / gmpy2.mpq(rank_rate.numerator, rank_rate.denominator)))


class Entries:
    """The candidates ``[lo_u, hi_u]`` cut into gaps and record points, from a cell's counts per point.

    ``points`` are the distinct lattice points (units) holding a kept record, ascending and inside
    ``[lo_u, hi_u]``, ``counts`` how many records each holds (``n`` in all). Entry ``j <= d`` is the open gap
    after the ``j``-th point (gap 0 starts at ``lo_u``, gap ``d`` ends at ``hi_u``) and entry ``d + j`` the point
    ``p_j`` itself (``j = 1 .. d``); entry ``i`` holds ``widths[i]`` consecutive lattice points from
    :meth:`start` (a gap may hold none).
    """

    def __init__(self, points: Sequence[int] | np.ndarray, counts: Sequence[int] | np.ndarray, lo_u: int,
                 hi_u: int) -> None:
        wide = hi_u - lo_u >= _SAFE or max(abs(lo_u), abs(hi_u)) >= _SAFE
        self.points = at = np.asarray(points, dtype=object if wide else np.int64)
        self.lo_u = lo_u
        self.held = np.asarray(counts, dtype=np.int64)
        """The records at each point; their running sums ``C_j`` are summed by each :meth:`scores` (no array of
        them is kept: a large cell's entries take less memory)."""
        d = self.d = at.size
        self.n = int(self.held.sum())
        self.widths = np.empty(2 * d + 1, dtype=at.dtype)
        self.widths[d + 1:] = 1  # each point holds itself
        gaps = self.widths[:d + 1]
        if d:
            gaps[0], gaps[d] = at[0] - lo_u, hi_u - at[-1]
            np.subtract(at[1:], at[:-1], out=gaps[1:d])
            gaps[1:d] -= 1
        else:
            gaps[0] = hi_u - lo_u + 1

    def start(self, i: int) -> int:
        """The first lattice point (units) of entry ``i``."""
        if i > self.d:  # the point p_j, j = i - d
            return int(self.points[i - self.d - 1])
        return self.lo_u if i == 0 else int(self.points[i - 1]) + 1

    def scores(self, q: Fraction) -> np.ndarray:
        """``g`` of every entry at level ``q`` (int64 when it fits, else Python ints): with ``t_j = b C_j - a n``,
        gap ``j`` scores ``|t_j|`` and point ``j`` scores ``max(0, t_{j-1}, -t_j)``.

        The points' scores are the gaps' own, shifted: ``t`` does not decrease (``C`` does not), so with ``k``
        the number of ``t_j < 0`` (``t_0 = -a n <= 0 <= t_d = (b - a) n``, so ``k <= d``), a point ``j < k`` has
        ``t_{j-1} <= t_j < 0`` and scores ``-t_j = |t_j|``, the point ``j = k >= 1`` has ``t_{k-1} < 0 <= t_k``
        and scores 0, and a point ``j > k`` has ``0 <= t_{j-1} <= t_j`` and scores ``t_{j-1} = |t_{j-1}|``."""
        a, b = q.numerator, q.denominator
        d = self.d
        exact = b * (self.n + 1) >= _SAFE
        out = np.empty(2 * d + 1, dtype=object if exact else np.int64)
        gaps, point = out[:d + 1], out[d + 1:]  # C_j, then t_j, in the gaps' place
        gaps[0] = 0
        if exact:  # Python integers (each C_j <= n fits in int64)
            gaps[1:] = np.cumsum(self.held)
        else:
            np.cumsum(self.held, out=gaps[1:])
        gaps *= b
        gaps -= a * self.n
        k = int(np.searchsorted(gaps, 0, side="left"))  # t_0 .. t_{k-1} < 0 <= t_k ..
        np.abs(gaps, out=gaps)
        if k:  # points 1 .. k-1 score |t_1| .. |t_{k-1}|, point k scores 0
            point[:k - 1] = gaps[1:k]
            point[k - 1] = 0
        point[k:] = gaps[k:d]  # points k+1 .. d score |t_k| .. |t_{d-1}|
        return out
