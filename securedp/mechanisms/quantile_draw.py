"""How a quantile's selection draws: permute-and-flip over every candidate, or the exponential mechanism.

**The rule** (:func:`quantile_selection`, from public parameters only: the price, the bounds, the lattice and the
fallback probability, never the data). A selection priced in ``epsilon`` whose coins, its lattice points between
the bounds plus the fallback's weight ``W`` (:mod:`~securedp.mechanisms.rank_utility`), number at most
:data:`PERMUTE_AND_FLIP_COINS` (``2**17``: every candidate up to ``2**15`` at the default fallback ``3/4``)
draws by **permute-and-flip** (McKenna and Sheldon 2020); any other by the exponential mechanism
(:mod:`securedp.mechanisms.quantile`). Both have the same rate, score, privacy map and stated bounds; in
expected score permute-and-flip is never worse than the exponential mechanism (McKenna and Sheldon 2020,
Theorem 2), and on the held-out benchmark (``benchmarks/bench_heldout_gaps.py``: diamonds' prices, step 1,
20,001 candidates) its expected RMSE is 1.00-1.41x lower (1.08x on ``q = 0.1`` at ``epsilon = 0.1``).
Priced in ``rho`` a selection keeps the exponential mechanism: it is ``epsilon``-bounded range, hence
``epsilon**2 / 8``-zCDP, and permute-and-flip is not (:mod:`securedp.mechanisms.permute_and_flip`): the
exponential mechanism's four times smaller charge is worth more than the better draw. Likewise an
``epsilon``-priced selection drawn by permute-and-flip is charged, in a ``rho`` budget, the bound of every
``epsilon``-DP release (its record's ``mechanism`` is ``"permute_and_flip"``, not bounded range:
:func:`~securedp.ledger.release_record.bounded_range`); price it in ``rho`` to be charged ``epsilon**2 / 8``.

**Law.** The candidates are every lattice point ``y`` of the bounds and ``W`` copies of the fallback point ``f``
(each copy releases ``f``: post-processing), scored ``g(y)`` and ``h`` as in
:mod:`~securedp.mechanisms.rank_utility`, whose least score ``g*`` is at most ``b c`` (``c`` the tie margin; 0
without one). Visit them in a uniformly random order, flip for each a coin with probability ``exp(-rate (g -
g*))`` and release the first that shows heads (a candidate scoring ``g*`` always does): permute-and-flip
subtracts the best utility (McKenna and Sheldon 2020, Algorithm 1), and its privacy map below holds for it,
``g*`` being data-dependent (report-noisy-max is unchanged by the shift). Drawn exactly: every coin is flipped
at once by exact fixed-width comparisons (:class:`~securedp.hazmat.samplers.ExpCoins`) and the order is given by
i.i.d. uniform keys (:func:`~securedp.hazmat.samplers.first_in_random_order`), as
:mod:`securedp.mechanisms.permute_and_flip` proves; the coins are the window's entries
(:class:`~securedp.mechanisms.rank_utility.Window` over the whole range: no far entry) each repeated over its
width in the lattice's order, so the scores have one definition (without a fallback, the same bytes as
:func:`~securedp.mechanisms.permute_and_flip.permute_and_flip` of the scores ``-g(y)``).

**Privacy map.** Permute-and-flip is report-noisy-max with exponential noise (Ding, Kifer, Saucier-Fleury and
Wang 2021, "The permute-and-flip mechanism is identical to report-noisy-max with exponential noise"): release
the candidate maximising ``-rate g(c) + Z_c``, ``Z_c`` i.i.d. ``Exp(1)``. Fix a candidate ``i`` and the
other noises; ``i`` wins iff ``Z_i > T = max_{c != i} (Z_c - rate g(c)) + rate g(i)``, of probability
``S(T) = min(1, exp(-T))``, and ``S(T - e) <= exp(e) S(T)``, ``S(T + e) >= exp(-e) S(T)`` for ``e >= 0``.
One person moves every score by at most ``sensitivity`` (:mod:`~securedp.mechanisms.rank_utility`, the
fallback's ``h`` included), so at ``rate = epsilon / (2 sensitivity)`` the max moves by at most
``epsilon / 2`` and ``rate g(i)`` too: ``T`` moves by at most ``epsilon``, and averaging over the other
noises, ``P(i)`` by a factor in ``[exp(-epsilon), exp(epsilon)]`` (the argument of Dwork and Roth 2014,
Claim 3.9, which uses only this ratio of tails). For the monotone levels ``q = 0`` and ``1`` every score
moves the same way by ``d(c)`` in ``[0, sensitivity]``; at ``rate = epsilon / sensitivity`` the max and
``rate g(i)`` move within ``[0, epsilon]``, so ``T`` moves by at most ``epsilon`` again: ``epsilon``-DP at
the rates of :class:`~securedp.mechanisms.rank_utility.LevelLaw`. ``tests/unit/privacy/test_quantile_draw.py``
enumerates the exact law on small neighbouring instances and bounds the loss by ``epsilon``.

**Stated bounds.** The rank error bound and the fallback's rows bound of the exponential mechanism hold as
stated: a release scoring ``t`` or more needs one of the ``|Y| + W`` coins of such candidates to show heads,
each with probability at most ``exp(-rate (t - g*)) <= exp(-rate (t - b c))`` (a union bound), and the
fallback one of its ``W`` coins, each ``exp(-rate (h - b c))`` at most.

**Time.** Every draw flips all ``|Y| + W`` coins and reads all their keys, whichever candidate wins (ties of
keys, below ``(|Y| + W) 2**-62``, read more); the winner's index is its point. The coins' thresholds come from
a table of every integer gap below the far boundary, which depends on the rate and the number of coins alone
(built once, cached: :func:`~securedp.hazmat.samplers.coins.contiguous_thresholds`); tabulating only the gaps
that occur took about 18 us per distinct gap, which the selection timing matrix certified as following the
data ("far entries (window), one more": 0.79 against 1.39 ms). The least score ``g*`` depends on the data; the
coins subtract it in one pass over every coin whatever its value, 0 included
(:class:`~securedp.hazmat.samplers.ExpCoins`), so the draw's time does not follow it. The window's set-up
depends on the data as the exponential mechanism's does. Measured:
``benchmarks/bench_selection.py``: a coin costs about 100-200 ns (its 16 random bytes are most of it), so
the median of ``10**6`` values over ``2**15`` candidates (``2**17`` coins) took 33 ms where OpenDP's over 1,024
candidates took 126 ms on the same loaded machine, and over ``2**17`` candidates (``2**19`` coins) 137 ms, more
than OpenDP's: hence the limit of ``2**17`` coins, not ``2**19``.

**Records.** The cell's record names the draw (``"selection"``) and its law (:data:`LAW`, :data:`FALLBACK_LAW`),
and the release's ``mechanism`` is it. Releases before issue 42 (0.2.0) drew every quantile by the exponential
mechanism; a replay re-runs a record that states no permute-and-flip by the rule ``quantile_draw`` of
:data:`~securedp.mechanisms.record_rules.EXPONENTIAL` (:class:`~securedp.mechanisms.record_rules.RecordRules`,
``securedp.audit.replay``), so its bytes are reproduced.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.samplers import ExpCoins, first_in_random_order
from securedp.hazmat.samplers.slots import envelope_cap, far_boundary
from securedp.mechanisms.rank_utility import Window
from securedp.mechanisms.record_rules import EXPONENTIAL, PERMUTE_AND_FLIP, current_rules
from securedp.privacy.cost import Cost

PERMUTE_AND_FLIP_COINS = 1 << 17
"""The most coins (candidates plus the fallback's weight) an ``epsilon``-priced selection flips by
permute-and-flip; beyond, it draws by the exponential mechanism (whose time does not grow with the candidates)."""
PERMUTE_AND_FLIP_TABLE = 1 << 18
"""The most gaps of the coins' public table (:func:`~securedp.hazmat.samplers.coins.contiguous_thresholds`, every
integer gap below the far boundary ``ceil((K + 64) 0.7 / rate)``: 269 for a median at ``epsilon = 1``, 24,192 for
``q = 1/10`` at ``epsilon = 0.1``); a smaller rate draws by the exponential mechanism."""
LAW = ("permute-and-flip over every lattice point y of the bounds: a uniformly random order, a coin of "
       "probability exp(-rate g(y)) each, the first head")
"""The law as a release records it (without a fallback)."""
FALLBACK_LAW = LAW + ", with W more coins of probability exp(-rate h) for the fallback point f, h = max(a, b - a) n"
"""The law with a fallback, as a release records it."""
SHIFTED_LAW = ("permute-and-flip over every lattice point y of the bounds: a uniformly random order, a coin of "
               "probability exp(-rate (g(y) - g*)) each, g* the least score, the first head")
"""The law as a release with a tie margin records it (without a fallback): the least score may exceed 0."""
SHIFTED_FALLBACK_LAW = SHIFTED_LAW + (", with W more coins of probability exp(-rate (h - g*)) for the fallback point "
                                      "f, h = max(a, b - a) n")
"""The law with a tie margin and a fallback, as a release records it."""

def quantile_selection(cost: Cost, candidates: int, weight: int, rate: Fraction) -> str:
    """The draw of a quantile's selection (module docstring): ``PERMUTE_AND_FLIP`` when priced in
    ``epsilon`` with ``candidates + weight <= PERMUTE_AND_FLIP_COINS`` and a coin table of at most
    :data:`PERMUTE_AND_FLIP_TABLE` gaps at ``rate``, and the rules in force allow it (this version's draw, not in a
    ``rho`` budget: :class:`~securedp.mechanisms.record_rules.RecordRules`), else ``EXPONENTIAL``. Public
    parameters only."""
    coins = candidates + weight
    small = coins <= PERMUTE_AND_FLIP_COINS and far_boundary(rate, envelope_cap(coins)) <= PERMUTE_AND_FLIP_TABLE
    rules = current_rules()
    allowed = rules.quantile_draw == PERMUTE_AND_FLIP and not rules.rho_budget
    return PERMUTE_AND_FLIP if cost.epsilon is not None and small and allowed else EXPONENTIAL


def flip_law(ties: bool, fallback: bool) -> str:
    """The law a permute-and-flip selection records: with a tie margin (``ties``) its coins are stated relative
    to the least score (:data:`SHIFTED_LAW`), without one as before (:data:`LAW`, whose least score is 0)."""
    if ties:
        return SHIFTED_FALLBACK_LAW if fallback else SHIFTED_LAW
    return FALLBACK_LAW if fallback else LAW


def whole_range(q: Fraction, counts: Sequence[int] | np.ndarray) -> int:
    """A ``far`` score above every score of ``counts``' records at ``q`` (``b n + 1``): a
    :class:`~securedp.mechanisms.rank_utility.Window` built with it holds every candidate in its near entries."""
    return q.denominator * int(np.asarray(counts, dtype=np.int64).sum()) + 1


class FlipDraw:
    """Permute-and-flip over every candidate of ``window`` (built by :func:`whole_range`) at ``rate``: one coin per
    lattice point, in the lattice's order, then one per unit of the fallback's weight (module docstring); called
    with a source, the point drawn (units). With no fallback it is :func:`~securedp.mechanisms.permute_and_flip.
    permute_and_flip` of the scores ``-g(y)`` in the lattice's order, byte for byte."""

    def __init__(self, window: Window, rate: Fraction) -> None:
        d = window.d
        assert window.far_entry is None and len(window.gaps) == d + 1, "a coin for every candidate: no far entry"
        order = np.empty(2 * d + 1, dtype=np.int64)  # the window's gaps 0 .. d, then its points 1 .. d: interleaved
        order[0::2], order[1::2] = np.arange(d + 1), np.arange(d + 1, 2 * d + 1)
        gaps = np.repeat(window.scores[order], np.asarray(window.widths[order], dtype=np.int64))
        self.lo_u, self.size, self.fallback_point = window.lo_u, gaps.size, window.fallback_point
        assert self.size == window.hi_u - window.lo_u + 1
        if window.fallback_entry is not None:
            weight = int(window.widths[window.fallback_entry])  # at most PERMUTE_AND_FLIP_COINS
            gaps = np.concatenate([gaps, np.full(weight, window.scores[window.fallback_entry], dtype=gaps.dtype)])
        self.coins = ExpCoins(gaps, rate, public_table=True)

    def __call__(self, source: RandomSource) -> int:
        k = first_in_random_order(self.coins.flip(source), source)
        return self.lo_u + k if k < self.size else self.fallback_point
