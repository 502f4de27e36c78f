"""Exact selection with probabilities proportional to ``m_i * exp(-rate * g_i)``.

**Law.** Given integers ``g_i >= 0`` (score gaps), integer multiplicities
``m_i >= 0`` (default 1) and a rational ``rate > 0``, draw an index ``I``
and an offset ``J`` with

    P(I = i, J = j) = exp(-rate * g_i) / S   for 0 <= j < m_i,
    S = sum_k m_k * exp(-rate * g_k),

so ``P(I = i) = m_i * exp(-rate * g_i) / S`` and ``J`` is uniform on
``[0, m_i)`` given ``I``. With every ``m_i = 1`` this is the exponential
mechanism (McSherry & Talwar 2007) over gaps ``g_i = s_max - s_i``; with
``m_i`` the number of points in a group of equally scored outcomes it picks a
group and a point inside it (the interval construction of Smith 2011 for
quantiles). Entries with ``m_i = 0`` are never drawn. No weight is ever
rounded to zero: ``exp(-10**9)`` or ``exp(-2**300)`` keeps its exact,
non-zero probability (the failure of floating-point implementations shown by
Ilvento 2020).

**Algorithm: rejection from a dyadic envelope** (a base-2 envelope in the
spirit of Ilvento 2020). Shift the gaps so that the smallest gap with
``m_i > 0`` is 0 (then ``S >= 1``). For each *slot* (distinct near gap value,
see below) rigorous MPFR bounds ``w_lo <= w = exp(-rate * g) <= w_hi`` at
128+ bits are computed once, by iterated products with directed rounding
(as :func:`~securedp.hazmat.samplers.geometric.power_lows` does), and an
integer ``e >= 0`` with ``w <= 2**-e`` is read off the binary exponent of
``w_hi`` (so ``w * 2**e > 1/2`` up to 2**-120). Gaps ``g >= T`` with
``exp(-rate * T) < 2**-(K + 64)`` are *far*; they share one slot with
``e = K``, where ``K >= 72 + log2(sum m)`` is a multiple of 64. A round:

1. *Propose* ``(i, j)`` with probability ``2**-e_i / E``, where
   ``E = sum_i m_i * 2**-e_i``: one exact uniform integer ``V`` below
   ``E * 2**K`` (an integer), located among the slots by bisection;
   the offset of ``V`` inside its slot, shifted right by ``K - e``, is
   uniform over the ``count`` points of the slot and names ``(i, j)``.
2. *Accept* with probability ``a_i = exp(-rate * g_i) * 2**e_i <= 1``, by the
   fixed-width comparison of :mod:`securedp.hazmat.samplers.decide`: one
   64-bit word ``u`` against integer bounds ``lo <= a_i * 2**64 <= hi``;
   ``u < lo`` accepts, ``u >= hi`` rejects, anything else goes to
   :func:`~securedp.hazmat.samplers.decide.resolve_below`, which reads more
   bits of the same uniform and answers exactly. For far gaps
   ``a_i < 2**-64``, so ``lo = 0, hi = 1``.

**Proof.** One round yields ``(i, j)`` with probability
``2**-e_i / E * exp(-rate g_i) 2**e_i = exp(-rate g_i) / E``: proportional to
the law. Rounds are independent, so the accepted pair has exactly the law
above, and the number of rounds (geometric with success probability
``S / E``) is independent of the pair accepted (classical rejection
sampling). ``S / E > 1/2 - 2**-70``: near slots accept with probability
> 1/2, and the far slot carries at most ``sum m * 2**-K <= 2**-72`` of ``E``
while ``E >= 1``.

**Timing.** A round does the same work whatever it proposes: a uniform
integer (rejection count independent of its value), a bisection over the
slots, a word comparison. Turning the accepted ``(slot, position)`` into the
index ``i`` is one full vectorised pass over all entries (a cumulative sum),
whatever ``i``. Value-dependent work happens only when the word falls in a
comparison window (probability ``<= 2**-63`` per round) or a far gap is
proposed (``<= 2**-72``): :attr:`ExpCategorical.slow_path_bound`.
"""

from __future__ import annotations

from bisect import bisect_right
from fractions import Fraction
from itertools import accumulate
from typing import Any

import gmpy2
import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.interval import Interval, Real, _ceil_scaled, _context, _floor_scaled
from securedp.hazmat.exact.rational import to_mpq
from securedp.hazmat.samplers.decide import WORD_BITS, resolve_below
from securedp.hazmat.samplers.params import PlanCache
from securedp.hazmat.samplers.uniform import uniform_below_one

# A rational upper bound on ln 2 = 0.6931...: exp(-rate * T) <= 2**-b once rate * T >= b * 7/10.
_LN2_UPPER = Fraction(7, 10)
# The far slot carries at most 2**-_GUARD of the envelope.
_GUARD = 72
_TOP64 = (1 << 64) - 1
# Far boundaries up to this size get a dense, cached slot table 0 .. T-1.
_DENSE_LIMIT = 1 << 16


def weight_real(rate: Fraction, gap: int, shift: int = 0) -> Real:
    """The real ``exp(-rate * gap) * 2**shift``, for the resolver."""
    x = rate * gap
    scale = 1 << shift
    return Real(lambda prec: (-Interval.exact(x, prec)).exp() * scale, name=f"exp(-{x})*2**{shift}")


def power_bounds(rate: Fraction, values: list[int], prec: int) -> tuple[list[Any], list[Any]]:
    """Lower and upper mpfr bounds of ``exp(-rate * v)`` for increasing integers ``v >= 0``.

    Iterated products with directed rounding: consecutive values differing by
    one reuse ``q = exp(-rate)``; larger steps use one MPFR ``exp``. Every
    product of lower (upper) bounds rounded down (up) is a lower (upper)
    bound, so the results are rigorous at any precision.
    """
    deltas = []
    previous = 0
    for v in values:
        deltas.append(v - previous)
        previous = v
    bounds: list[list[Any]] = []
    for rounding in (gmpy2.RoundDown, gmpy2.RoundUp):
        out = []
        with _context(prec, rounding):
            # exp is increasing, so exp(-x) rounded in the direction of the bound bounds exp(-x)
            q = gmpy2.exp(-to_mpq(rate))
            x = gmpy2.mpfr(1)
            for d in deltas:
                if d:
                    x = x * (q if d == 1 else gmpy2.exp(-to_mpq(rate * d)))
                out.append(x)
        bounds.append(out)
    return bounds[0], bounds[1]


class SlotTable:
    """Acceptance bounds for the slots of gap ``values`` (increasing) plus one far slot, at ``rate``, cap ``K``.

    For slot ``s``: ``shift[s] = e`` with ``w <= 2**-e``; ``lo[s] <= w * 2**(e + 64) <= hi[s]``;
    ``lo64[s] <= w * 2**64`` and ``hi64m1[s] + 1 >= w * 2**64`` (clamped to 64 bits). The far slot
    (last) has ``e = K``, ``lo = 0``, ``hi = 1`` and ``lo64 = hi64m1 = 0``.
    """

    def __init__(self, rate: Fraction, K: int, values: list[int]) -> None:
        self.values = values
        prec = 2 * WORD_BITS + 16 + max(len(values), 1).bit_length()
        w_lo, w_hi = power_bounds(rate, values, prec)
        self.shift: list[int] = []
        self.lo: list[int] = []
        self.hi: list[int] = []
        self.lo64 = np.zeros(len(values) + 1, dtype=np.uint64)
        self.hi64m1 = np.zeros(len(values) + 1, dtype=np.uint64)
        for s, (lo, hi) in enumerate(zip(w_lo, w_hi)):
            e = 0 if hi >= 1 else min(-int(gmpy2.get_exp(hi)), K)
            self.shift.append(e)
            self.lo.append(_floor_scaled(lo, e + WORD_BITS, prec))
            self.hi.append(_ceil_scaled(hi, e + WORD_BITS, prec))
            self.lo64[s] = min(_floor_scaled(lo, WORD_BITS, prec), _TOP64)
            self.hi64m1[s] = _ceil_scaled(hi, WORD_BITS, prec) - 1
        self.shift.append(K)
        self.lo.append(0)
        self.hi.append(1)
        self.window = max(h - lo for lo, h in zip(self.lo, self.hi))


def _dense_table(rate: Fraction, K: int, size: int) -> SlotTable:
    return SlotTable(rate, K, list(range(size)))


_DENSE: PlanCache[SlotTable] = PlanCache(_dense_table)


class ExpCategorical:
    """A prepared exact sampler of ``(i, j)`` with ``P`` proportional to ``exp(-rate * g_i)``, ``j < m_i``.

    ``gaps``: a 1-d int64 or object array of integers ``>= 0``; ``counts``:
    ``None`` (every ``m_i = 1``) or a 1-d int64/object array of integers
    ``>= 0``, not all 0. See the module docstring for the law and proof.
    Slot tables of consecutive gaps ``0 .. T-1`` (when ``T <= 2**16``) are
    cached per ``(rate, K)``; otherwise one slot per distinct near gap.
    """

    def __init__(self, gaps: np.ndarray, rate: Fraction, counts: np.ndarray | None = None) -> None:
        if rate <= 0:
            raise ValueError("rate must be > 0")
        self.rate = rate
        self.size = len(gaps)
        self.counts = counts
        present = np.ones(self.size, dtype=bool) if counts is None else counts > 0
        if not present.any():
            raise ValueError("at least one entry must have a positive count")
        total_count = self.size if counts is None else int(counts.sum())
        smallest = gaps[present].min() if counts is not None else gaps.min()
        self.gaps = gaps - smallest if smallest != 0 else gaps
        self.K = WORD_BITS * -(-(total_count.bit_length() + _GUARD) // WORD_BITS)
        far_from = -(-(self.K + WORD_BITS) * _LN2_UPPER // rate)  # ceil: exp(-rate * far_from) < 2**-(K + 64)
        if self.gaps.dtype != object:
            far_from = min(far_from, np.iinfo(np.int64).max)
        near = present & (self.gaps < far_from)
        if far_from <= _DENSE_LIMIT:
            self.table = _DENSE.get(rate, self.K, int(far_from))
            near_slots = self.gaps[near].astype(np.int64)
        else:
            values = np.unique(self.gaps[near])
            self.table = SlotTable(rate, self.K, [int(v) for v in values])
            near_slots = np.searchsorted(values, self.gaps[near])
        self.far_slot = len(self.table.values)
        slot_of = np.full(self.size, self.far_slot, dtype=np.int32 if self.far_slot < 1 << 30 else np.int64)
        slot_of[near] = near_slots
        if counts is not None:
            slot_of[~present] = -1
        self.slot_of = slot_of
        self._envelope(near_slots, None if counts is None else counts[near], total_count)

    def _envelope(self, near_slots: np.ndarray, near_counts: np.ndarray | None, total_count: int) -> None:
        if near_counts is None:
            per_slot = np.bincount(near_slots, minlength=self.far_slot).tolist()
        elif total_count < 1 << 53:  # float64 sums of integers below 2**53 are exact
            per_slot = np.bincount(near_slots, weights=near_counts, minlength=self.far_slot).astype(np.int64).tolist()
        else:
            acc = np.zeros(self.far_slot, dtype=object)
            np.add.at(acc, near_slots, near_counts.astype(object))
            per_slot = [int(c) for c in acc]
        per_slot.append(total_count - sum(per_slot))
        masses = [c << (self.K - e) for c, e in zip(per_slot, self.table.shift)]
        self.ends = list(accumulate(masses))
        self.total = self.ends[-1]
        self.far_share = masses[-1] / self.total  # float-ok: a documented bound, not a decision
        self.slow_path_bound = self.table.window * 2.0**-WORD_BITS + self.far_share  # float-ok: documented bound

    def _locate(self, slot: int, position: int) -> tuple[int, int]:
        """The entry holding point ``position`` of ``slot``, and the offset inside it: one full pass."""
        mask = self.slot_of == slot
        if self.counts is None:
            cumulative = np.cumsum(mask, dtype=np.int64 if self.size >= 1 << 31 else np.int32)
            return int(np.searchsorted(cumulative, position + 1)), 0
        cumulative = np.cumsum(np.where(mask, self.counts, 0))
        i = int(np.searchsorted(cumulative, position, side="right"))
        return i, position - (int(cumulative[i - 1]) if i else 0)

    def draw(self, source: RandomSource) -> tuple[int, int]:
        """One exact draw of ``(i, j)``."""
        table = self.table
        while True:
            v = uniform_below_one(self.total, source)
            slot = bisect_right(self.ends, v)
            position = (v - (self.ends[slot - 1] if slot else 0)) >> (self.K - table.shift[slot])
            located = self._locate(slot, position) if slot == self.far_slot else None
            u = source.word()
            if u >= table.hi[slot]:
                continue
            if u < table.lo[slot] or resolve_below(self._acceptance(slot, located), u, WORD_BITS, source):
                return located if located is not None else self._locate(slot, position)

    def _acceptance(self, slot: int, located: tuple[int, int] | None) -> Real:
        gap = int(self.gaps[located[0]]) if located is not None else self.table.values[slot]
        return weight_real(self.rate, gap, self.table.shift[slot])

    def bernoulli_all(self, source: RandomSource) -> np.ndarray:
        """Independent exact draws ``B_i ~ Bernoulli(exp(-rate * g_i))`` for every entry (after the shift)."""
        slots = np.where(self.slot_of < 0, self.far_slot, self.slot_of)
        low, high = self.table.lo64[slots], self.table.hi64m1[slots]
        u = source.words(self.size)
        heads = u < low
        for e in np.flatnonzero((u >= low) & (u <= high)):
            heads[e] = resolve_below(weight_real(self.rate, int(self.gaps[e])), int(u[e]), WORD_BITS, source)
        return heads
