"""Independent exact coins ``B_i ~ Bernoulli(exp(-rate * g_i))`` and a uniformly random order.

The two random ingredients of permute-and-flip (McKenna & Sheldon 2020):

* :class:`ExpCoins` flips one coin per entry, all at once. **Algorithm**: per
  entry one 64-bit word compared with ``floor(w_i * 2**64)``
  (:class:`~securedp.hazmat.samplers.decide.Thresholds`, the fixed-width
  comparison), the floors tabulated once per distinct gap value by
  :func:`~securedp.hazmat.samplers.slots.weight_bounds`; gaps past the far
  boundary (``w < 2**-(K + 64)``) share the floor 0. A word equal to its floor
  (probability ``2**-64`` per coin) is resolved exactly against
  ``exp(-rate * g_i)``. Every flip reads ``n`` words whatever the outcomes.
  With ``public_table=True`` the floors are tabulated for every integer gap
  below the far boundary (:func:`contiguous_thresholds`: a table that depends on
  ``rate`` and ``n`` alone, built once and cached), so the set-up's time does not
  follow which gaps occur (tabulating only the distinct gaps took about 18 us per
  distinct value, each a further exact exponential); the floors, hence the coins,
  are the same exact integers either way.
* :func:`first_in_random_order` returns, among the entries with heads, the one
  with the smallest i.i.d. uniform key: each key is an infinite bit string
  read 64 bits at a time, keys tied on their first words being extended
  with fresh words until one is smallest. The order of i.i.d. continuous
  keys is a uniform permutation, so this is the first heads in a uniformly
  random order. Every call reads ``n`` words (ties: probability below
  ``n**2 * 2**-64``).
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.interval import Real, exp_neg
from securedp.hazmat.exact.kernels import tabulated_floors
from securedp.hazmat.samplers.decide import WORD_BITS, Thresholds
from securedp.hazmat.samplers.envelope import FloatGaps
from securedp.hazmat.samplers.slots import envelope_cap, far_boundary, weight_bounds

_INT64_MAX = int(np.iinfo(np.int64).max)


class ExpCoins:
    """Prepared coins ``B_i ~ Bernoulli(exp(-rate * (g_i - min g)))``, one per entry, flipped together.

    ``gaps``: a 1-d int64 or object array of integers ``>= 0``, or a
    :class:`~securedp.hazmat.samplers.envelope.FloatGaps` (read exactly);
    ``rate``: a rational ``> 0``. The tables are built here, once.
    """

    def __init__(self, gaps: np.ndarray | FloatGaps, rate: Fraction, *, public_table: bool = False) -> None:
        if rate <= 0:
            raise ValueError("rate must be > 0")
        if isinstance(gaps, FloatGaps):
            gaps, unit = gaps.integers()
            rate = rate * unit
        smallest = gaps.min()
        self.gaps = gaps - smallest  # always: the time does not follow whether the least gap is 0
        self.rate = rate
        self.size = len(gaps)
        far_from = far_boundary(rate, envelope_cap(self.size))
        if self.gaps.dtype != object:
            far_from = min(far_from, _INT64_MAX)
        near = self.gaps < far_from
        if public_table:  # every gap below the far boundary has its slot: slot = gap
            self.thresholds = contiguous_thresholds(rate, far_from)
            self.slot_of = np.where(near, self.gaps, far_from).astype(np.int64)
            return
        values = [int(v) for v in np.unique(self.gaps[near])]
        bits = 2 * WORD_BITS + 16 + max(len(values), 1).bit_length()
        w_lo, w_hi = weight_bounds(rate, values, bits)
        lows = tabulated_floors(w_lo, w_hi, bits, WORD_BITS, lambda k: exp_neg(rate * values[k]))
        self.thresholds = Thresholds([*lows, 0], lambda k: exp_neg(rate * values[k]), WORD_BITS)
        slot_of = np.full(self.size, len(values), dtype=np.int64)
        slot_of[near] = np.searchsorted(np.array(values, dtype=self.gaps.dtype), self.gaps[near])
        self.slot_of = slot_of

    def _real(self, entry: int) -> Real:
        return exp_neg(self.rate * int(self.gaps[entry]))

    def flip(self, source: RandomSource) -> np.ndarray:
        """One exact coin per entry (a boolean array): heads with probability ``exp(-rate * g_i)``."""
        return self.thresholds.decide(self.thresholds.draw_words(self.size, source), source, self.slot_of,
                                      self._real)


@functools.lru_cache(maxsize=8)
def contiguous_thresholds(rate: Fraction, far_from: int) -> Thresholds:
    """The exact floors of ``exp(-rate * g) * 2**64`` for every integer ``0 <= g < far_from``, then the far slot's 0
    (:class:`ExpCoins` with ``public_table``): consecutive gaps multiply by ``exp(-rate)``, so the table costs one
    exact exponential and ``far_from`` products. Cached: it depends on public parameters only."""
    values = range(far_from)
    bits = 2 * WORD_BITS + 16 + max(far_from, 1).bit_length()
    w_lo, w_hi = weight_bounds(rate, values, bits)
    lows = tabulated_floors(w_lo, w_hi, bits, WORD_BITS, lambda k: exp_neg(rate * k))
    return Thresholds([*lows, 0], lambda k: exp_neg(rate * k), WORD_BITS)


def first_in_random_order(heads: np.ndarray, source: RandomSource) -> int:
    """The index with ``heads`` whose i.i.d. uniform key is smallest (keys read lazily, ties extended exactly).

    ``heads`` must hold at least one ``True``.
    """
    keys = source.words(heads.size)
    # Tails get the largest key by a bitwise or with all ones (heads - 1 wraps to 2**64 - 1), branch-free:
    # np.where chose per element, as fast as its branch was predictable, so its time followed how the
    # heads were spread (every coin heads when the scores tie: 9 us for 200 candidates, 14-25 us else).
    masked = keys | np.subtract(heads, 1, dtype=np.int64).view(np.uint64)
    smallest = masked.min()
    tied = np.flatnonzero(heads & (keys == smallest))
    while tied.size > 1:
        more = source.words(tied.size)
        tied = tied[more == more.min()]
    return int(tied[0])
