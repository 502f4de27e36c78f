"""The quantiles' utility over a lattice: its integer score per candidate, its law's rate, its rank error.

**Score.** For ``n`` records ``x`` (clamped and rounded onto the lattice), a level ``q = a / b`` in
lowest terms (``0 <= a <= b``, ``b >= 1``) and a candidate ``y``, write ``L(y) = #{x < y}``,
``E(y) = #{x <= y}`` and ``k(y) = E(y) - L(y)`` (the records tied at ``y``). With the public *tie margin*
``c >= 0`` (rows; :attr:`LevelLaw.tie_margin`) the score (an integer, smaller is better; the utility is its
negation) is

    g(y) = max(0, b L + min(a k, b c) - a n, a n - b E + min((b - a) k, b c))
         = b * dist(q n, [L + min(q k, c), E - min((1 - q) k, c)]),

``b`` times the distance, in rows, from ``q n`` to the ranks ``y`` is taken to hold. A gap (``k = 0``) holds
the one rank ``L = E``. A point holding a block of ``k`` tied records holds the ranks of the block less a margin
of ``min(q k, c)`` rows below and ``min((1 - q) k, c)`` above (the interval is never empty: the two margins add
to at most ``k``): ``c = 0`` holds the whole block (a block into which ``q n`` falls scores 0, whichever side of
it the other records lie: securedp's score before issue 42), ``c = inf`` the single rank ``L + q k`` (OpenDP's
``|(b - a) L - a (n - E)|``). **Why a margin.** With ``c = 0`` the score rises by about one row only across the
boundary of two adjacent blocks, so on integer data on a step-1 lattice (prices, votes: every point a block)
the law is flatter than at ``c = inf``; but ``c = inf`` puts a large block at one rank, and on a lattice finer
than the data the wide gaps beside it outweigh it (300-4,000x worse). Capped at ``c`` rows, a block keeps the
ranks ``c`` from its ends. Measured exactly (permute-and-flip, expected RMSE; ``benchmarks/bench_heldout_gaps.py``):
diamonds' prices (step 1) at ``epsilon = 0.1``, ``q = 0.1``: 0.816 at ``c = 0``, 0.689 at the rule's 18 rows
(OpenDP's selection 0.651), the median 1.787 against 1.63 (OpenDP 1.757), ``q = 0.9`` equal; at ``epsilon = 1``,
``q = 0.1``: 0.176 against 0.101; movies' votes and BudgetFood gain or tie (one case 1.5 % worse); fine lattices
(carats on the binary lattice, issue 26's six datasets) unchanged (ratio 1.000 +- 0.003), where ``c = inf``
loses 16-4,000x. **The rule:** ``c = ceil(1 / (rate b))``, one over the law's exponent per row
(:attr:`LevelLaw.rank_rate`): public (``epsilon``, ``q``, ``m``); 0 for the monotone levels ``q = 0`` and ``1``
(where it changes nothing: below). Since ``min(q k, c)``, ``min((1 - q) k, c) >= 0``, ``g`` is at least
``b dist(q n, [L, E])``; and some candidate scores at most ``b c``: the first record point with ``E >= q n``
holds ``q n`` in ``[L, E]`` (its ``L < q n``, or the point before it would be first), so its distance is at most
the larger margin, ``<= c``; with no records every candidate scores 0.

**Sensitivity.** Adding one row at ``x`` adds 1 to ``n``. For a candidate ``y > x``, ``L`` and ``E`` gain 1 and
``k`` is unchanged: the first term (``b L + min(a k, b c) - a n``) moves by ``b - a``, the second
(``a n - b E + min((b - a) k, b c)``) by ``a - b``. For ``y = x``, ``E`` and ``k`` gain 1: ``min(a k, b c)``
grows by 0 to ``a``, so the first term moves by ``-a`` to 0; ``min((b - a) k, b c)`` by 0 to ``b - a``, so the
second moves by ``a - b`` to 0. For ``y < x`` the first moves by ``-a``, the second by ``a``. The maximum of 0
and two terms that each move by at most ``max(a, b - a)`` moves by at most as much, so a person with ``m`` rows in
the cell moves ``g`` by at most ``sensitivity = m * max(a, b - a)`` (removing is the same step backwards), for
every ``c``. **Monotone levels.** At ``q = 0`` (``a = 0``, ``b = 1``) ``g = max(0, L, min(k, c) - E) = L``, as
``min(k, c) - E <= k - E = -L <= 0``; at ``q = 1`` (``a = b = 1``) ``g = max(0, L + min(k, c) - n, n - E) =
n - E``, as ``L + min(k, c) - n <= E - n <= 0``: whatever ``c``, the scores of before.

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
and one score; the sampler draws an entry with probability proportional to ``width * exp(-rate * g)``
and a uniform point inside it (Smith 2011), exactly. Only the entries scoring less than ``far``
(:meth:`LevelLaw.far`) are built (:class:`Window`): every other candidate is in one far entry, proposed at
that score and kept with the exact rest of its weight, a rejection step taken with probability at most
``2**-64``.

**The fallback.** A cell the data cannot tell from an empty one (a handful of records, a small
``epsilon``) draws close to uniformly over the whole range of the bounds: a release whose mean is the
middle of the bounds and whose spread is the bounds' own, which its own mean beats in squared error
whatever the truth. So the law's base measure also holds one public atom, the *fallback*: the lattice
point ``f`` nearest ``lo_u + q (hi_u - lo_u)`` (:func:`fallback_point`, in lattice units between the least
and greatest candidates: the middle of the bounds for the median, the bounds themselves for ``q = 0`` and
``1``), of integer weight ``W`` (:func:`fallback_weight`: ``floor(|Y| p / (1 - p))`` for the *fallback
probability* ``p``, default ``3/4``: a cell without records draws the atom with probability
``W / (|Y| + W) <= p`` and releases ``f``, the atom or the lattice point ``f``, with probability
``(W + 1) / (|Y| + W) >= p``) and scored

    h = max(a, b - a) * n,

the largest score any candidate can have over ``n`` records (:func:`fallback_score`; the first term of ``g`` is at
most ``b L + a k - a n = (b - a) L - a (n - E) <= (b - a) n``, the second at most ``a n - b E + (b - a) k =
a (n - E) - (b - a) L <= a n``). So ``P(y) = exp(-rate g(y)) / Z`` for every lattice point and
``P(fallback) = W exp(-rate h) / Z``, with ``Z = W exp(-rate h) + sum_y exp(-rate g(y))``, and the fallback
releases ``f``. Its score never favours it over a lattice point: it wins by its weight alone, where no
candidate scores much better than the worst. Some candidate scores at most ``b c``, so ``Z >= exp(-rate b c)``
and it is drawn with probability at most ``W exp(-rate (h - b c))``, below ``alpha`` in every cell of at least
:meth:`LevelLaw.fallback_rows` rows; measured, it halves the error of the medians of the smallest groups and
leaves large ones unchanged (``docs/benchmarks.md``). **Privacy**: ``h`` moves by ``max(a, b - a)`` per row,
so by at most ``sensitivity`` for one person, like every ``g(y)``, and never down when rows are added (the
monotone levels stay monotone); the exponential mechanism with a public base measure is ``epsilon``-DP at the
same rates (McSherry and Talwar 2007), and releasing ``f`` for the atom is post-processing. ``p = 0``
(``W = 0``) is the plain exponential mechanism.

**Rank error.** The rank error of ``y`` is ``dist(q n, [L(y), E(y)])``, at most ``g(y) / b``. Some candidate
scores at most ``b c``, so ``Z >= exp(-rate b c)`` and ``P(y is a lattice point with g(y) >= t) <=
|Y| exp(-rate (t - b c))`` for ``|Y|`` candidates, whatever the data; the fallback releases ``f``, whose score
is at most ``h``, with probability at most ``W exp(-rate (h - b c))``, so ``P(the release scores t or more) <=
(|Y| + W) exp(-rate (t - b c))``: every release, the fallback included, has a rank error above
``ln((|Y| + W) / alpha) / (rate * b) + c`` with probability at most ``alpha`` (:meth:`LevelLaw.rank_error`:
:func:`rank_error_bound` over ``|Y| + W`` at the *rank rate* ``rate * b``, the law's exponent per row, plus
the margin ``c``; the one statement of a level's rank error).

**Records.** A selection of this version records its margin (``"tie_margin"``) and the score with it
(:data:`CAPPED_UTILITY`); records written before state neither and were drawn at ``c = 0`` (:data:`UTILITY`),
so a replay re-runs a record that states no ``tie_margin`` by the rule ``tie_margin=False`` of
:class:`~securedp.mechanisms.record_rules.RecordRules` (``securedp.audit.replay``), and its bytes are reproduced.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import gmpy2
import numpy as np

from securedp.hazmat.exact import bounds
from securedp.hazmat.exact.rational import to_rational

UTILITY = "-g(y), g(y) = max(0, b #{x < y} - a n, a n - b #{x <= y}) for q = a/b in lowest terms"
"""The utility as a release records it without a tie margin (``c = 0``: records before issue 42 (0.2.0))."""
CAPPED_UTILITY = ("-g(y), g(y) = max(0, b L + min(a k, b c) - a n, a n - b E + min((b - a) k, b c)) for q = a/b "
                  "in lowest terms, L = #{x < y}, E = #{x <= y}, k = E - L and c = tie_margin")
"""The utility as a release records it with its tie margin ``c`` (recorded as ``tie_margin``)."""
LAW = "P(y) proportional to exp(-rate g(y)) over every lattice point y of the bounds"
"""The selection's law as a release records it (without a fallback)."""
FALLBACK_LAW = LAW + ", and to W exp(-rate h) for the fallback point f, h = max(a, b - a) n"
"""The selection's law with a fallback, as a release records it."""
DEFAULT_FALLBACK = Fraction(3, 4)
"""The fallback probability ``p`` of a quantile by default: a cell without records releases the fallback point
with probability ``3/4`` (chosen by measurement: ``benchmarks/bench_fallback.py``)."""

_SAFE = 1 << 62


@dataclass(frozen=True)
class LevelLaw:
    """The law of one level's selection: ``q = a / b``, ``epsilon`` and ``m`` rows per person in a cell, and
    whether its score has the tie margin of this version (``ties``; ``False``: ``c = 0``, module docstring)."""

    q: Fraction
    epsilon: Fraction
    max_contributions: int
    ties: bool = True

    @property
    def sensitivity(self) -> int:
        """``m * max(a, b - a)``: the most one person moves the score ``g``, whatever the margin."""
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

    @property
    def tie_margin(self) -> int:
        """``c = ceil(1 / rank_rate)`` rows (module docstring, "The rule"); 0 for a monotone level (where no
        margin changes the score) or without ``ties``."""
        if self.monotone or not self.ties:
            return 0
        return -(-self.rank_rate.denominator // self.rank_rate.numerator)

    @property
    def least_score(self) -> int:
        """``b c``: some candidate scores at most this, whatever the data (module docstring)."""
        return self.q.denominator * self.tie_margin

    def rank_error(self, candidates: int, alpha: Fraction) -> int:
        """The level's rank error bound (rows) at ``1 - alpha`` over ``candidates`` (the lattice points and the
        fallback's weight): :func:`rank_error_bound` at :attr:`rank_rate`, plus the margin ``c``."""
        return rank_error_bound(self.rank_rate, candidates, alpha) + self.tie_margin

    def far(self, candidates: int) -> int:
        """The window's far score over ``candidates`` lattice points (:func:`far_score`)."""
        return far_score(self.rate, candidates, self.least_score)

    def fallback_rows(self, weight: int, alpha: Fraction) -> int:
        """The rows from which a cell draws the fallback of ``weight`` with probability at most ``alpha``
        (:func:`fallback_rows`)."""
        return fallback_rows(self.rate, self.q, weight, alpha, self.tie_margin)


def rank_error_bound(rank_rate: Fraction, candidates: int, alpha: Fraction) -> int:
    """The least integer ``r >= ln(candidates / alpha) / rank_rate`` (MPFR, rounded up): with probability at
    least ``1 - alpha`` the rank error of a selection whose law falls by ``exp(-rank_rate)`` per row is at most
    ``r`` (see the module docstring; McSherry and Talwar 2007)."""
    with gmpy2.context(precision=128, round=gmpy2.RoundUp):
        bound = gmpy2.log(gmpy2.mpq(candidates * alpha.denominator, alpha.numerator))
        return int(gmpy2.ceil(bound / gmpy2.mpq(rank_rate.numerator, rank_rate.denominator)))


def check_fallback(fallback: Any) -> Fraction:
    """``fallback`` (the fallback probability ``p``, see the module docstring) as an exact rational in ``[0, 1)``."""
    p = bounds.parameter(to_rational(fallback, "fallback"), "fallback")
    if not 0 <= p < 1:
        raise ValueError(f"fallback must be a probability with 0 <= fallback < 1 (the chance that a cell without "
                         f"records releases the fallback point; 0: none), got {p}")
    return p


def fallback_weight(probability: Fraction, candidates: int) -> int:
    """``W = floor(candidates * p / (1 - p))``: the fallback's weight against ``candidates`` lattice points of
    weight 1, so that a cell without records (every weight ``exp(0)``) draws it with probability about ``p``."""
    return candidates * probability.numerator // (probability.denominator - probability.numerator)


def fallback_point(q: Fraction, lo_u: int, hi_u: int) -> int:
    """The lattice point (units) nearest ``lo_u + q (hi_u - lo_u)``, halves rounded up."""
    a, b = q.numerator, q.denominator
    return lo_u + (2 * a * (hi_u - lo_u) + b) // (2 * b)


def fallback_score(q: Fraction, n: int) -> int:
    """``h = max(a, b - a) n``: the fallback's score over ``n`` records, the largest any candidate can have."""
    return max(q.numerator, q.denominator - q.numerator) * n


def fallback_rows(rate: Fraction, q: Fraction, weight: int, alpha: Fraction, margin: int = 0) -> int:
    """An ``n`` with ``weight exp(-rate (h - b c)) <= alpha`` for the tie margin ``c`` (``h = s n``, ``s =
    max(a, b - a)``): the least ``n >= ln(weight / alpha) / (rate s)`` (MPFR, rounded up) plus ``ceil(b c / s)``.
    A cell of at least ``n`` rows releases the fallback with probability at most ``alpha`` (0 without a
    fallback)."""
    if weight == 0:
        return 0
    spread = max(q.numerator, q.denominator - q.numerator)
    return max(rank_error_bound(rate * spread, weight, alpha), 0) + -(-q.denominator * margin // spread)


FAR_ALPHA = Fraction(1, 2**64)
"""The far entry's largest share of a selection's proposals (:func:`far_score`)."""


@functools.lru_cache(maxsize=64)
def far_score(rate: Fraction, candidates: int, least: int = 0) -> int:
    """The least integer ``G >= ln(candidates / FAR_ALPHA) / rate + least`` (MPFR, rounded up): the candidates
    scoring at least ``G`` weigh at most ``candidates exp(-rate G) <= 2**-64 exp(-rate least)`` in all, against
    at least ``exp(-rate least)`` for the best candidate, which scores at most ``least`` (``b c``: the module
    docstring)."""
    return rank_error_bound(rate, candidates, FAR_ALPHA) + least


class Window:
    """The candidates ``[lo_u, hi_u]`` of one level ``q`` cut into the entries near its target rank, and one far
    entry holding every candidate that scores ``far`` or more.

    ``points`` are the distinct lattice points (units) holding a kept record, ascending and inside ``[lo_u,
    hi_u]``, ``counts`` how many records each holds (``n`` in all). With the running counts ``C_0 = 0``, ``C_j =
    #{x <= p_j}`` and ``t_j = b C_j - a n`` (non-decreasing), the open gap after the ``j``-th point (gap 0
    starts at ``lo_u``, gap ``d`` ends at ``hi_u``) scores ``|t_j|`` and the point ``p_j`` of ``k_j = C_j -
    C_{j-1}`` records ``max(0, t_{j-1} + min(a k_j, b c), -t_j + min((b - a) k_j, b c))`` for the tie ``margin``
    ``c`` (at least ``max(0, t_{j-1}, -t_j)``: a point outside the run below scores ``far`` or more too; ``c =
    0`` by default, the score before issue 42 (0.2.0)). The gaps scoring less than ``far`` are ``j0 .. j1`` (``-far
    < t_j < far``) and the points ``max(j0, 1) .. min(j1 + 1, d)``: one run of consecutive candidates
    ``[near_lo, near_hi]`` (from the point ``p_j0``, or ``lo_u``, to the point ``p_{j1+1}``, or ``hi_u``), the
    *near* entries, each with its width (lattice points) and score: the gaps first, then the points
    (:attr:`widths`, :attr:`scores`, :meth:`start`). The candidates outside the run score at least ``far``; they
    are the last entry, of width ``far_width`` and score ``far``, when there are any (:attr:`far_entry`), and
    :meth:`far_point` and :meth:`score_at` give the candidate at an offset inside it and its exact score. A
    positive ``fallback`` weight ``W`` adds the fallback as the very last entry (:attr:`fallback_entry`), of
    width ``W`` and score :func:`fallback_score`, whose every offset stands for :attr:`fallback_point`.

    A selection draws an entry with probability proportional to ``width * exp(-rate * score)`` and a uniform
    point inside it; a point of the far entry is then kept with probability ``exp(-rate (g(y) - far))``, else
    the whole draw starts again (rejection sampling: each far candidate is proposed with weight
    ``exp(-rate far)`` and kept with the rest of its own, ``exp(-rate g(y))`` in all), so the law is exactly
    ``P(y) ~ exp(-rate g(y))`` over every candidate. With ``far`` of :meth:`LevelLaw.far` the far entry
    is proposed with probability at most ``2**-64`` per draw, and the set-up's arrays hold only the near
    entries: a few hundred for a median of ``10**6`` records at epsilon 1, where all ``2 d + 1`` entries
    were built before. A ``far`` above every score makes the window the whole range (no far entry).
    """

    def __init__(self, points: Sequence[int] | np.ndarray, counts: Sequence[int] | np.ndarray, lo_u: int,
                 hi_u: int, q: Fraction, far: int, fallback: int = 0, margin: int = 0) -> None:
        wide = hi_u - lo_u >= _SAFE or max(abs(lo_u), abs(hi_u)) >= _SAFE or fallback >= _SAFE
        self.points = at = np.asarray(points, dtype=object if wide else np.int64)
        held = np.asarray(counts, dtype=np.int64)
        self.lo_u, self.hi_u, self.q, self.far = lo_u, hi_u, q, far
        a, b = q.numerator, q.denominator
        d = self.d = at.size
        self.n = n = int(held.sum())
        self.cap = min(b * margin, b * n)  # b c, or b n: min(a k, b c) and min((b - a) k, b c) alike (k <= n)
        exact = b * (n + 1) >= _SAFE
        running = np.empty(d + 1, dtype=object if exact else np.int64)  # C_0 .. C_d
        running[0] = 0
        if exact:
            running[1:] = np.cumsum(held)
        else:
            np.cumsum(held, out=running[1:])
        self.running = running
        t = running * b
        t -= a * n
        cut = far if exact else min(far, _SAFE)  # in int64 |t_j| <= b n < _SAFE: a larger far leaves nothing far
        if b * n < cut:  # every score is at most b n: the whole range is near
            j0, j1 = 0, d
        else:
            j0 = int(np.searchsorted(t, -cut, side="right"))  # the first gap with t_j > -far
            j1 = int(np.searchsorted(t, cut, side="left")) - 1  # the last gap with t_j < far
        self.gaps = range(j0, j1 + 1)
        self.near_points = range(max(j0, 1), min(j1 + 1, d) + 1)
        self.near_lo = int(at[j0 - 1]) if j0 >= 1 else lo_u
        self.near_hi = int(at[j1]) if j1 + 1 <= d else hi_u
        self.far_width = (self.near_lo - lo_u) + (hi_u - self.near_hi)
        g, p = len(self.gaps), len(self.near_points)
        size = g + p + (1 if self.far_width else 0) + (1 if fallback else 0)
        widths = np.empty(size, dtype=at.dtype)
        scores = np.empty(size, dtype=object if exact else np.int64)
        if g:  # gap j lies between p_j and p_{j+1}, with p_0 = lo_u - 1 and p_{d+1} = hi_u + 1
            edges = np.empty(g + 1, dtype=at.dtype)  # p_j0 .. p_{j1+1}
            edges[0] = at[j0 - 1] if j0 else lo_u - 1
            edges[1:g + 1 - (j1 == d)] = at[j0:min(j1 + 1, d)]
            if j1 == d:
                edges[g] = hi_u + 1
            np.subtract(edges[1:], edges[:-1], out=widths[:g])
            widths[:g] -= 1
            np.abs(t[j0:j1 + 1], out=scores[:g])
        if p:  # point j scores max(0, t_{j-1} + min(a k_j, b c), -t_j + min((b - a) k_j, b c))
            widths[g:g + p] = 1
            first, last = self.near_points[0], self.near_points[-1]
            point, tied = scores[g:g + p], running[first:last + 1] - running[first - 1:last]
            np.subtract(np.minimum(tied * (b - a), self.cap), t[first:last + 1], out=point)
            np.maximum(point, t[first - 1:last] + np.minimum(tied * a, self.cap), out=point)
            np.maximum(point, 0, out=point)
        self.far_entry = g + p if self.far_width else None
        if self.far_width:
            widths[g + p], scores[g + p] = self.far_width, far
        self.fallback_entry = size - 1 if fallback else None
        self.fallback_point = fallback_point(q, lo_u, hi_u)
        if fallback:
            widths[-1], scores[-1] = fallback, fallback_score(q, n)
        self.widths, self.scores = widths, scores

    def start(self, i: int) -> int:
        """The first lattice point (units) of near entry ``i``."""
        g = len(self.gaps)
        if i >= g:  # the point p_j
            return int(self.points[self.near_points[i - g] - 1])
        j = self.gaps[i]
        return self.lo_u if j == 0 else int(self.points[j - 1]) + 1

    def far_point(self, offset: int) -> int:
        """The far candidate at ``offset`` (``0 <= offset < far_width``): below the run, then above it."""
        below = self.near_lo - self.lo_u
        return self.lo_u + offset if offset < below else self.near_hi + 1 + (offset - below)

    def score_at(self, y: int) -> int:
        """``g(y)`` of any candidate, from the running counts: ``L(y) = #{x < y}``, ``E(y) = #{x <= y}``."""
        a, b, n, cap = self.q.numerator, self.q.denominator, self.n, self.cap
        below = int(self.running[int(np.searchsorted(self.points, y, side="left"))])
        at_or_below = int(self.running[int(np.searchsorted(self.points, y, side="right"))])
        tied = at_or_below - below
        return max(0, b * below + min(a * tied, cap) - a * n, a * n - b * at_or_below + min((b - a) * tied, cap))
