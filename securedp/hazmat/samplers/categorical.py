"""Exact selection with probabilities proportional to ``m_i * exp(-rate * g_i)``.

**Law.** Given exact gaps ``g_i >= 0`` (integers, or the exact differences ``top - v_i`` of float64 values,
:class:`~securedp.hazmat.samplers.envelope.FloatGaps`), integer multiplicities ``m_i >= 0`` (default 1) and a rational
``rate > 0``, draw an index ``I`` and an offset ``J`` with

    P(I = i, J = j) = exp(-rate * g_i) / S   for 0 <= j < m_i,
    S = sum_k m_k * exp(-rate * g_k),

so ``P(I = i) = m_i * exp(-rate * g_i) / S`` and ``J`` is uniform on ``[0, m_i)`` given ``I``. With every ``m_i = 1``
this is the exponential mechanism (McSherry & Talwar 2007) over gaps ``g_i = s_max - s_i``; with ``m_i`` the number of
points in a group of equally scored outcomes it picks a group and a point inside it (the interval construction of
Smith 2011 for quantiles). Entries with ``m_i = 0`` are never drawn. No weight is ever rounded to zero:
``exp(-10**9)`` or ``exp(-2**300)`` keeps its exact, non-zero probability (the failure of floating-point
implementations shown by Ilvento 2020).

**Algorithm: rejection from a dyadic envelope** (a base-2 envelope in the
spirit of Ilvento 2020). Shift the gaps so that the smallest gap with
``m_i > 0`` is 0 (then ``S >= 1``). Write ``w_i = exp(-rate * g_i)`` and
``t_i = rate * g_i / ln 2`` (so ``w_i = 2**-t_i``). Let ``K >= 72 +
log2(sum m)`` be a multiple of 64. Every entry gets an *envelope exponent*,
an integer ``0 <= e_i <= K`` with ``e_i <= t_i``, i.e. ``w_i <= 2**-e_i``,
and belongs to a *group* of entries sharing an envelope exponent. A round:

1. *Propose* ``(i, j)`` with probability ``2**-e_i / E``, where
   ``E = sum_i m_i * 2**-e_i``: one exact uniform integer ``V`` below
   ``E * 2**K = sum_G (sum_{i in G} m_i) * 2**(K - e_G)`` (an integer),
   located among the groups by bisection; the offset of ``V`` inside its
   group, shifted right by ``K - e_G``, is uniform over the ``sum m_i``
   points of the group and names ``(i, j)``.
2. *Accept* with probability ``a_i = w_i * 2**e_i <= 1``, by the fixed-width
   comparison :func:`securedp.hazmat.samplers.decide.below`: one 64-bit
   word ``u`` against integers ``lo <= a_i * 2**64 <= hi``; ``u < lo``
   accepts, ``u >= hi`` rejects, anything else reads more bits of the same
   uniform and answers exactly.

**Proof.** One round yields ``(i, j)`` with probability
``2**-e_i / E * w_i 2**e_i = w_i / E``: proportional to the law, whatever
valid exponents ``e_i`` were chosen (they only affect efficiency). Rounds are
independent, so the accepted pair has exactly the law above, and the number
of rounds (geometric with success probability ``S / E``) is independent of
the pair accepted (classical rejection sampling). The comparison is exact:
``u < lo`` gives ``U < (u + 1) / 2**64 <= a_i``, ``u >= hi`` gives
``U >= a_i``, and the resolver decides ``[U < a_i]`` exactly otherwise.

**The tight envelope of integer gaps** (:class:`SlotGroups`). A near slot's
proposal weight is not ``2**-e`` but its tabulated upper bound
``hi * 2**-(e + 64) >= w`` (``2**63 <= hi``, ``hi - lo <= 2``), and a proposal
is accepted with probability ``w * 2**(e + 64) / hi > 1 - 2**-61`` (decided
by the same fixed-width comparison, against ``floor(lo * 2**64 / hi)``).
The proof above holds for any envelope that bounds the weights (a round
yields ``(i, j)`` with probability ``w_i / E``), and with this one a draw
takes **one round** except with probability below ``2**-60`` (a rejected
near proposal, or a proposal in the far slot, at most ``2**-72`` of the mass),
**whatever the scores**. With the loose ``2**-e`` envelope the number of
rounds was geometric with a success probability ``S / E`` that depended on
the scores (tied scores: always one round; one score one higher: two or
more rounds in 39 % of draws), which told neighbouring datasets apart at the
(output, time) level.

**The tight envelope of exponent groups** (float gaps, int64 gaps without counts: :attr:`tight_counts`).
Entry ``i`` also gets a count ``m_i = T[j_i]``: with ``x_i`` the float64 whose truncation is ``e_i``,
``j_i = floor((x_i - e_i) 2**16)`` (exact) and ``2**27 < 2**28 * 2**(-j_i / 2**16) <= T[j_i]``, a table rounded up
(:func:`~securedp.hazmat.samplers.envelope.tight_count_table`). The entry holds ``m_i`` points of group ``e_i``
(as the caller's counts do), accepted with probability ``a_i = w_i 2**(e_i + 28) / m_i``. *Valid:*
``e_i + j_i 2**-16 <= x_i <= t_i`` (``j_i = 0`` unless ``x_i >= 2**-16``, when ``x_i < t_i``), so ``a_i <= 1``.
*Tight:* for ``e_i < K`` (``K = 128`` below ``2**56`` entries) ``t_i - x_i <= t_i 2**-39 < 2**-31`` and
``m_i <= 2**28 2**(-j_i / 2**16) (1 + 2**-26.6)``, so ``1 - a_i < 2**-16 ln 2 + 2**-31 + 2**-26.6 < 2**-16``: a
draw takes one round except with probability below ``2**-16`` (with the far group's ``2**-72`` and the windows'
``6 * 2**-64``), **whatever the scores**, where the ``2**-e`` envelope (until issue 40) accepted above one half
only (float shape "all tied, one up": four or more rounds in 0.55 % of the draws against 4.3 %).

**Two ways of choosing the groups** (a strategy fixed once, when the plan is built).

* :class:`SlotGroups` (integer gaps with ``rate`` such that the far boundary
  ``T`` is at most ``2**16``: integer scores, median and quantiles). Each
  near gap value ``0 .. T-1`` is its own group, all gaps ``>= T`` share the
  far group; exponents and windows ``lo``, ``hi`` are tabulated once per
  ``(rate, K)`` and cached (:mod:`securedp.hazmat.samplers.slots`).
* :class:`ExponentGroups` (every other case, e.g. 100,000 distinct float
  scores; tight as above unless the caller gives counts or the gaps are object
  integers). The group of an entry is its exponent ``e_i``: at most ``K + 1``
  groups, whatever the number of distinct gaps. ``e_i`` comes from one
  vectorised float64 computation with a proven margin
  (:mod:`securedp.hazmat.samplers.envelope`). A round computes ``lo``, ``hi`` for the proposed entry alone,
  ``hi - lo <= 2`` for ``e_i < K``, in fixed-width integers from its gap scaled to an integer
  (:class:`~securedp.hazmat.exact.exp_window.ExpWindow`; an MPFR ``exp`` of the exact ``x``, until issue 40,
  took a time that followed ``x``); the exact ``x`` is formed only when the window must refine.

**Efficiency and the far group** (loose exponent groups: the caller's counts, object gaps). ``S / E > (1/2 -
2**-16) (1 - 2**-72)``: near entries accept with probability ``> 1/2 - 2**-16``, and the entries with ``e_i = K``
carry at most ``sum m * 2**-K <= 2**-72`` of ``E >= 1`` (gap 0 has ``e = 0``): under 2.0001 rounds expected.

**Locating the entry.** The entries are listed once, stably sorted by group, with their cumulative counts
(:class:`LocateIndex`): point ``p`` of group ``G`` is found by one binary search over all entries, whatever ``G``,
its size or ``p``. The index is built on a plan's second draw, so a plan drawn once (a fresh call) scans instead:
the set-up counted the entries per group block by block (:class:`~securedp.hazmat.samplers.tally.Tally`, or the tight
envelope's C kernel as it computes them; neither's time follows how the groups repeat), so the block holding the
point is known and only its entries are scanned (packed into 64-bit words when the entries have no counts). Both do
the same work for every group.

**Timing.** A round does the same work whatever it proposes: a uniform integer below ``E * 2**K`` read as
``total_bits + 64`` bits whatever the scores (:func:`~securedp.hazmat.samplers.uniform.uniform_below_secret`: a
retry has probability below ``2**-64``; 0.2 rejected ``bit_length(E * 2**K)``-bit integers, so its tries followed
the scores' mass: 2 % of the draws over 1,000 tied candidates at epsilon 1, 40 % with one score one higher), a
bisection over the groups, a word comparison and, for exponent groups, the location above, one fixed-width
integer window and, when tight, the division of its window by the entry's count. A near slot is located once, after
its word accepts it. Value-dependent work happens only when the word falls in a comparison window (probability
``<= 2**-63`` per round) or an entry with ``e = K`` is proposed (``<= 2**-72``; the far slot is located before its
comparison): :attr:`ExpCategorical.slow_path_bound`.
"""

from __future__ import annotations

from bisect import bisect_right
from fractions import Fraction
from functools import partial
from itertools import accumulate
from operator import mul
from typing import Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.interval import Real
from securedp.hazmat.exact.rational import to_mpq
from securedp.hazmat.samplers.decide import WORD_BITS, below
from securedp.hazmat.samplers.envelope import (
    BLOCK,
    COUNT_BITS,
    FloatGaps,
    envelope_exponents,
    exact_envelope_exponents,
    int64_fill,
)
from securedp.hazmat.samplers.groups import ExponentGroups, LocateIndex, SlotGroups, exact_rate_gap, exponent_groups
from securedp.hazmat.samplers.slots import DENSE_TABLES, SlotTable, envelope_cap, far_boundary
from securedp.hazmat.samplers.tally import Tally
from securedp.hazmat.samplers.uniform import uniform_below_secret

_DENSE_LIMIT = 1 << 16
"""Far boundaries up to this size get a dense, cached slot table ``0 .. T-1``."""

LOCATE_BLOCK = 1 << 14
"""Entries per block when a point of an entry with a count is located without the :class:`LocateIndex`."""

WORD_ENTRIES = 64
"""Entries per packed word when a point is located without counts and without the :class:`LocateIndex`."""


class ExpCategorical:
    """A prepared exact sampler of ``(i, j)`` with ``P`` proportional to ``exp(-rate * g_i)``, ``j < m_i``.

    ``gaps``: a 1-d int64 or object array of integers ``>= 0``, or a
    :class:`~securedp.hazmat.samplers.envelope.FloatGaps`; ``counts``:
    ``None`` (every ``m_i = 1``) or a 1-d int64/object array of integers
    ``>= 0``, not all 0 (integer gaps only). See the module docstring for the
    law, the proof and the choice of :attr:`groups` (a :class:`SlotGroups` or
    an :class:`ExponentGroups`, fixed here).
    """

    def __init__(self, gaps: np.ndarray | FloatGaps, rate: Fraction, counts: np.ndarray | None = None) -> None:
        if rate <= 0:
            raise ValueError("rate must be > 0")
        self.size = len(gaps)
        self.counts = counts
        present = None if counts is None else counts > 0
        if present is not None and not present.any():
            raise ValueError("at least one entry must have a positive count")
        total_count = self.size if counts is None else int(counts.sum())
        self.K = envelope_cap(total_count)
        self.total_bits = self.K + WORD_BITS + 1 + total_count.bit_length()
        """Public bits bounding the envelope mass: every point weighs below ``2**(K + 65)`` units."""
        if isinstance(gaps, FloatGaps) and not gaps.finite:  # a range beyond DBL_MAX: exact integers
            gaps, unit = gaps.integers()
            rate = rate * unit
        self.rate = rate
        self._rate_q = to_mpq(rate)
        self._index: LocateIndex | None = None
        self._drawn = False
        self._per_block: list[np.ndarray] | None = None  # each block's counts per group, when a tally kept them
        self.table: SlotTable | None = None
        self.float_gaps: FloatGaps | None = None
        self.gaps: np.ndarray | None = None
        self.tight_counts: np.ndarray | None = None
        """The tight envelope's count of every entry, when the exponent groups carry one (float and int64 gaps
        without counts: :meth:`_tight_exponent_groups`); also :attr:`counts`, which locates the points."""
        if isinstance(gaps, FloatGaps):
            if counts is not None:
                raise ValueError("float gaps take no counts")
            self.float_gaps = gaps
            self._exact = exact_rate_gap(rate, None, gaps)
            self._tight_exponent_groups(gaps.approx_into)
            return
        if present is None:
            smallest = gaps.min()
        elif gaps.dtype == np.int64:  # no copy of the present gaps
            smallest = np.min(gaps, where=present, initial=np.iinfo(np.int64).max)
        else:
            smallest = gaps[present].min()
        shifted: np.ndarray = gaps - smallest  # always: the time does not follow whether the least gap is 0
        self.gaps = gaps = shifted
        self._exact = exact_rate_gap(rate, gaps, None)
        far_from = far_boundary(rate, self.K)
        if far_from <= _DENSE_LIMIT:
            self._slot_groups(gaps, int(far_from), present, total_count)
        elif gaps.dtype == object:
            self._exponent_groups(exact_envelope_exponents(gaps, rate, self.K), present)
        elif present is None:
            self._tight_exponent_groups(int64_fill(gaps))
        else:
            self._exponent_groups(envelope_exponents(int64_fill(gaps), self.size, rate, self.K), present)

    def _slot_groups(self, gaps: np.ndarray, far_from: int, present: np.ndarray | None, total_count: int) -> None:
        self.table = DENSE_TABLES.get(self.rate, self.K, far_from)
        self.groups: SlotGroups | ExponentGroups = SlotGroups(self.table, self.K)
        self.far_slot = far_from
        counts = self.counts
        if gaps.dtype == object or total_count >= 1 << 53:
            slot_of = np.array([min(max(int(g), 0), far_from) for g in gaps], dtype=np.int32)
            near = np.flatnonzero(slot_of < far_from)
            per_slot = self._per_group(slot_of[near], None if counts is None else counts[near], far_from)
        else:
            slot_of, per_slot = self._slots_by_blocks(gaps, far_from, present is not None)
        if present is not None:
            np.copyto(slot_of, -1, where=~present)
        self.slot_of = slot_of
        per_slot.append(total_count - sum(per_slot))
        self._masses(per_slot)

    def _slots_by_blocks(self, gaps: np.ndarray, far_from: int, clip_below: bool) -> tuple[np.ndarray, list[int]]:
        """int32 slots ``min(max(g, 0), T)`` and the counts of the near slots ``0 .. T-1``, in one pass by blocks.

        An absent entry (count 0, its gap maybe below 0) adds 0 to a slot and is marked -1 afterwards.
        Every entry is counted (a :class:`~securedp.hazmat.samplers.tally.Tally`: the same work however
        the slots repeat); the far slot's count is not read. Counts are summed in float64, exactly:
        every partial sum is an integer below ``2**53``. No temporary is larger than a block.
        """
        counts = self.counts
        slot_of = np.empty(self.size, dtype=np.int32)
        tally = Tally(far_from + 1, weighted=counts is not None)
        for start in range(0, self.size, BLOCK):
            stop = min(start + BLOCK, self.size)
            slots = slot_of[start:stop]  # computed in int64, written in [0, T]: fits int32
            if clip_below:
                np.clip(gaps[start:stop], 0, far_from, out=slots, casting="unsafe")
            else:
                np.minimum(gaps[start:stop], far_from, out=slots, casting="unsafe")
            tally.add(slots, None if counts is None else counts[start:stop])
        self._per_block = tally.per_block
        return slot_of, tally.counts()[:far_from]

    def _tight_exponent_groups(self, fill: Any) -> None:
        """Exponent groups whose entries carry the tight envelope's counts (no counts of the caller's)."""
        tight = np.empty(self.size, dtype=np.int32)  # sums of counts run in int64 (NumPy's default for int32)
        tally = Tally(self.K + 1, weighted=True) if self.size < 1 << (52 - COUNT_BITS) else None  # sums < 2**53
        exponents = envelope_exponents(fill, self.size, self.rate, self.K, tight, tally)
        self.counts = self.tight_counts = tight
        self.groups = exponent_groups(self.rate, self.K, self.gaps, self.float_gaps)
        self.groups.window = 6  # a window of 2 divided by m_i / 2**28 > 1/2, each end rounded outwards
        self.slot_of = exponents
        self.far_slot = self.K
        if tally is None:
            self._masses(self._per_group(exponents, tight, self.K + 1, keep_blocks=True))
        else:  # summed per group while the exponents were computed
            self._per_block = tally.per_block
            self._masses(tally.counts())

    def _exponent_groups(self, exponents: np.ndarray, present: np.ndarray | None) -> None:
        self.groups = exponent_groups(self.rate, self.K, self.gaps, self.float_gaps)
        if present is None:
            per_group = self._per_group(exponents, None, self.K + 1, keep_blocks=True)
        else:
            counts = self.counts
            assert counts is not None  # present is None exactly when counts is None
            exponents[~present] = self.K + 1  # matches no group
            per_group = self._per_group(exponents[present], counts[present], self.K + 1)
        self.slot_of = exponents
        self.far_slot = self.K
        self._masses(per_group)

    def _per_group(self, group: np.ndarray, counts: np.ndarray | None, size: int,
                   keep_blocks: bool = False) -> list[int]:
        """Sum of the counts per group index in ``[0, size)``, exactly (float64 sums of integers below ``2**53``);
        ``keep_blocks``: ``group`` lists every entry in order, so each block's counts locate a point."""
        if counts is None or int(counts.sum()) < 1 << 53:
            tally = Tally(size, weighted=counts is not None)
            for start in range(0, len(group), BLOCK):
                tally.add(group[start:start + BLOCK], None if counts is None else counts[start:start + BLOCK])
            if keep_blocks:
                self._per_block = tally.per_block
            return tally.counts()
        acc = np.zeros(size, dtype=object)
        np.add.at(acc, group, counts.astype(object))
        return [int(c) for c in acc]

    def _masses(self, per_group: list[int]) -> None:
        """Envelope masses ``m_G * unit_G`` and their running sums."""
        assert len(per_group) == len(self.groups.unit)
        self.ends = list(accumulate(map(mul, per_group, self.groups.unit)))
        self.starts = [0, *self.ends[:-1]]  # where each group's mass starts: one subtraction for every group
        self.total = self.ends[-1]
        assert self.total.bit_length() <= self.total_bits  # the draw's public width covers the mass
        first = self.groups.capped_from
        capped = self.total - (self.ends[first - 1] if first else 0)  # the groups with e = K
        self.far_share = capped / self.total  # float-ok: a documented bound, not a decision
        self.slow_path_bound = self.groups.window * 2.0**-WORD_BITS + self.far_share  # float-ok: documented bound

    def _locate(self, slot: int, position: int) -> tuple[int, int]:
        """The entry holding point ``position`` of group ``slot``, and the offset inside it.

        The same array operations on arrays of the same size whatever the group, its size or the
        position: a binary search in the :class:`LocateIndex` or, before it is built, a scan. The scan
        covers the one block of :data:`~securedp.hazmat.samplers.envelope.BLOCK` entries holding the
        point when the set-up kept each block's counts (a running total over the blocks' counts of the
        group), else every entry. Without counts it packs the group's entries into 64-bit words, one bit
        each (:meth:`_locate_bits`); with counts it runs by blocks of :data:`LOCATE_BLOCK` entries (a
        masked sum per block, then a running count inside one block); object counts take one running
        count over every entry. (0.1 took ``flatnonzero(mask)[position]``, which allocates an array as
        large as the group: its cost revealed how many candidates share the winner's score.)
        """
        if self._index is not None:
            return self._index.locate(slot, position)
        counts = self.counts
        if counts is not None and counts.dtype == object:
            cumulative = np.cumsum(np.where(self.slot_of == slot, counts, 0))
            i = int(np.searchsorted(cumulative, position, side="right"))
            return i, position - (int(cumulative[i - 1]) if i else 0)
        start, stop = 0, self.size
        if self._per_block is not None:
            before = list(accumulate(int(block[slot]) for block in self._per_block))
            k = bisect_right(before, position)
            start, stop = k * BLOCK, min((k + 1) * BLOCK, self.size)
            position -= before[k - 1] if k else 0
        if counts is None:
            return start + self._locate_bits(self.slot_of[start:stop] == slot, position), 0
        step = LOCATE_BLOCK
        per_step = np.empty((stop - start + step - 1) // step, dtype=np.int64)
        for k, first in enumerate(range(start, stop, step)):
            last = min(first + step, stop)
            per_step[k] = np.sum(counts[first:last], where=self.slot_of[first:last] == slot)
        running = np.cumsum(per_step)
        k = int(np.searchsorted(running, position, side="right"))
        first, last = start + k * step, min(start + (k + 1) * step, stop)
        position -= int(running[k - 1]) if k else 0
        inside = np.cumsum(np.where(self.slot_of[first:last] == slot, counts[first:last], 0))
        i = int(np.searchsorted(inside, position, side="right"))
        return first + i, position - (int(inside[i - 1]) if i else 0)

    @staticmethod
    def _locate_bits(member: np.ndarray, position: int) -> int:
        """The index of the ``position``-th true entry of the boolean ``member``: its bits packed into 64-bit
        words, the words' population counts and their running total, a binary search for the word holding
        it, then a running count over that word's :data:`WORD_ENTRIES` entries."""
        packed = np.packbits(member, bitorder="little")
        words = np.zeros((len(packed) + 7) // 8, dtype=np.uint64)
        words.view(np.uint8)[:len(packed)] = packed
        before = np.cumsum(np.bitwise_count(words), dtype=np.int64)
        w = int(np.searchsorted(before, position, side="right"))
        position -= int(before[w - 1]) if w else 0
        inside = np.cumsum(member[w * WORD_ENTRIES:(w + 1) * WORD_ENTRIES])
        return w * WORD_ENTRIES + int(np.searchsorted(inside, position, side="right"))

    def draw(self, source: RandomSource) -> tuple[int, int]:
        """One exact draw of ``(i, j)``."""
        if self._drawn and self._index is None:
            self._index = LocateIndex(self.slot_of, self.counts, len(self.ends))
        self._drawn = True
        groups, units, starts, tight = self.groups, self.groups.unit, self.starts, self.tight_counts
        while True:  # the same operations for every group: no branch on the group but the per-entry one
            v = uniform_below_secret(self.total, self.total_bits, source)
            group = bisect_right(self.ends, v)
            position = (v - starts[group]) // units[group]
            located = self._locate(group, position) if groups.per_entry(group) else None
            entry = located[0] if located is not None else None  # a near slot's entry is located on acceptance
            low, high = groups.bounds(group, entry)
            count = 0
            if tight is not None and located is not None:  # every round of a tight plan: scaled by the entry's count
                count = int(tight[located[0]])
                low, high = (low << COUNT_BITS) // count, -((-high << COUNT_BITS) // count)
            if below(source.word(), low, high, partial(self._acceptance, group, entry, count), WORD_BITS, source):
                if located is None:
                    return self._locate(group, position)
                return (located[0], 0) if count else located

    def _acceptance(self, group: int, entry: int | None, count: int) -> Real:
        """The exact acceptance probability of a draw of ``entry`` in ``group``: of ``x = rate * gap``, or for
        a near slot (``entry`` None) of ``rate * group``, its gap being its index; divided by ``count /
        2**COUNT_BITS`` under the tight envelope (``count`` > 0); computed only when the window must refine."""
        real = self.groups.acceptance(group, self._rate_q * group if entry is None else self._exact(entry))
        if not count:
            return real
        return Real(lambda prec: real.interval(prec) * (1 << COUNT_BITS) / count, name=f"{real.name}*2**28/{count}")
