"""The groups of :class:`~securedp.hazmat.samplers.categorical.ExpCategorical`'s envelope, and its index.

The sampler draws a group of its envelope, a point of that group, and accepts the point with an exact
probability. A group is either a slot of a tabulated :class:`~securedp.hazmat.samplers.slots.SlotTable`
(:class:`SlotGroups`: a tight envelope, one round except with probability below ``2**-60``) or an envelope
exponent ``e`` (:class:`ExponentGroups`: envelope ``2**-e``, windows per proposal). :class:`LocateIndex`
finds the entry holding a point of a group by one binary search. The law and its proof are in
:mod:`securedp.hazmat.samplers.categorical`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.exact.exp_window import ExpWindow
from securedp.hazmat.exact.exp_window import W as WINDOW_BITS
from securedp.hazmat.exact.interval import Interval, Real, exp_neg
from securedp.hazmat.exact.kernels import exp_neg_window
from securedp.hazmat.exact.rational import to_mpq
from securedp.hazmat.samplers.decide import WORD_BITS
from securedp.hazmat.samplers.envelope import FloatGaps
from securedp.hazmat.samplers.slots import SlotTable


class SlotGroups:
    """One group per near gap value and one far group: windows tabulated in a :class:`SlotTable`.

    **A tight envelope.** A near slot's envelope is not ``2**-e`` but its tabulated upper bound
    ``hi * 2**-(e + 64) >= w`` (``hi >= 2**63``, ``hi - lo <= window``), so a proposal from it is
    accepted with probability ``w * 2**(e + 64) / hi > 1 - 2**-61``: a draw takes one round except
    with probability below ``2**-60``, whatever the scores (the far slot keeps ``2**-K`` and carries at
    most ``2**-72`` of the mass). The round count of 0.2, geometric with a success probability that
    depended on the scores (ties: always one round; one score one higher: two or more in 39 % of
    draws), told neighbours apart at the (output, time) level.
    """

    def __init__(self, table: SlotTable, cap: int) -> None:
        self.table = table
        self.shift = table.shift
        self._far = len(table.values)
        assert table.shift[-1] == cap  # the table was built for this cap: its tight envelope is this plan's
        self.unit, self.low, self.high = table.unit, table.accept_lo, table.accept_hi
        self.window = table.accept_window
        self.capped_from = table.capped_from

    def per_entry(self, group: int) -> bool:
        """Whether the weight depends on the entry: only in the far slot (a near slot's gap is its index)."""
        return group == self._far

    def bounds(self, group: int, entry: int | None) -> tuple[int, int]:  # noqa: ARG002 - one window per slot
        """``low <= a * 2**64 <= high`` for the acceptance probability ``a`` of an entry of ``group`` (``entry``,
        None for a near slot, is not read)."""
        return self.low[group], self.high[group]

    def acceptance(self, group: int, x: Any) -> Real:
        """The exact acceptance probability: ``exp(-x) * 2**(e + 64) / hi`` near, ``exp(-x) * 2**K`` far."""
        shift = self.shift[group]
        if group == self._far:
            return exp_neg(x, shift)
        scale, hi = 1 << (shift + WORD_BITS), self.table.hi[group]
        return Real(lambda prec: (-Interval.exact(x, prec)).exp() * scale / hi, name=f"exp(-x)*2**{shift + 64}/{hi}")


class ExponentGroups:
    """One group per envelope exponent ``0 .. K``: windows computed per proposal (envelope ``2**-e``).

    ``window`` computes an entry's window from ``scaled_gap(i)`` in fixed-width integer arithmetic
    (:class:`~securedp.hazmat.exact.exp_window.ExpWindow`: the same work for every gap); the groups with
    ``e = K`` (their exponent capped, so ``x`` unbounded; proposed with probability at most ``2**-72``) take a
    fixed-precision MPFR evaluation of the exact ``exact_x(i)``.
    """

    window = 2

    def __init__(self, cap: int, window: ExpWindow, scaled_gap: Callable[[int], int],
                 exact_x: Callable[[int], Any]) -> None:
        self.shift = range(cap + 1)
        self.unit = _exponent_units(cap)
        """Envelope mass of one point of each group, in units of ``2**-K``."""
        self.capped_from = cap
        """The groups with ``e = K``: this one and every later one."""
        self._window, self._scaled_gap, self._exact_x = window, scaled_gap, exact_x

    def per_entry(self, group: int) -> bool:  # noqa: ARG002 - every group holds many weights
        """Whether the weight depends on the entry: always."""
        return True

    def bounds(self, group: int, entry: int | None) -> tuple[int, int]:
        """``lo <= exp(-x) * 2**(e + 64) <= hi`` (``e = group``, ``x`` the entry's ``rate * gap``)."""
        assert entry is not None  # every group locates its entry before its window
        if group >= self.capped_from:
            return exp_neg_window(self._exact_x(entry), group)
        return self._window.bounds(self._scaled_gap(entry), group)

    def acceptance(self, group: int, x: Any) -> Real:
        """The exact acceptance probability ``exp(-x) * 2**e`` of an entry of ``group``."""
        return exp_neg(x, group)


def exact_rate_gap(rate: Fraction, gaps: np.ndarray | None, float_gaps: FloatGaps | None) -> Callable[[int], Any]:
    """``i -> rate * g_i`` exactly (an mpq), for a sampler holding exactly one of ``gaps`` and ``float_gaps``: read
    only when a window must refine, or in a group whose exponent is capped. The closure holds the gaps, never the
    sampler (a bound method made a reference cycle, and a fresh call's arrays waited for the collector)."""
    rate_q = to_mpq(rate)
    if float_gaps is not None:
        return lambda i: rate_q * float_gaps.exact(i)
    assert gaps is not None
    return lambda i: rate_q * int(gaps[i])


def exponent_groups(rate: Fraction, cap: int, gaps: np.ndarray | None, float_gaps: FloatGaps | None) -> ExponentGroups:
    """Exponent groups whose windows are computed from each entry's gap scaled to an integer: exactly for integer
    ``gaps``, within 2 units of ``2**-Q`` for ``float_gaps`` (``Q`` such that ``rate 2**(128 - Q) <= 1/2``). A gap
    in a group ``e < K`` is below ``(K + 2) / rate``: ``t = rate gap / ln 2 < (K + 1) (1 + 2**-38)`` there."""
    scaled: Callable[[int], int]
    if float_gaps is None:
        assert gaps is not None  # the sampler holds exactly one of gaps and float_gaps
        shift, spread, offset = 0, 0, 0
        if gaps.dtype == np.int64:  # g + 2**63 (the top bit set): a Python int of 64 bits for every 0 <= g < 2**63
            unsigned, top_bit, offset = gaps.view(np.uint64), np.uint64(1 << 63), 1 << 63
            scaled = lambda i: int(unsigned[i] ^ top_bit)  # noqa: E731 - one expression, beside its twin
        else:
            scaled = lambda i: int(gaps[i])  # noqa: E731 - object gaps: Python ints already
    else:
        shift = max(0, WINDOW_BITS + 2 + rate.numerator.bit_length() - rate.denominator.bit_length())
        spread = 2
        scaled, offset = float_gaps.scaled_lower(shift)
    limit = -(-((cap + 2) << shift) * rate.denominator // rate.numerator)
    return ExponentGroups(cap, ExpWindow(rate, shift, spread, limit, cap, offset), scaled,
                          exact_rate_gap(rate, gaps, float_gaps))


@functools.cache
def _exponent_units(cap: int) -> list[int]:
    """``2**(K - e)`` for ``e = 0 .. K`` (``K = cap``): shared by every plan of that cap, never modified."""
    return [1 << (cap - e) for e in range(cap + 1)]


class LocateIndex:
    """The present entries stably sorted by group, with cumulative counts: location by one binary search."""

    def __init__(self, group_of: np.ndarray, counts: np.ndarray | None, groups: int) -> None:
        order = np.argsort(group_of, kind="stable")
        sorted_groups = group_of[order]
        keep = (sorted_groups >= 0) & (sorted_groups < groups)  # entries with no count are never located
        self.order = order[keep]
        starts = np.searchsorted(sorted_groups[keep], np.arange(groups), side="left")
        n = len(self.order)
        self.cumulative = np.arange(1, n + 1, dtype=np.int64) if counts is None else np.cumsum(counts[self.order])
        before = np.concatenate((np.zeros(1, dtype=self.cumulative.dtype), self.cumulative))
        self.before = [int(v) for v in before[starts]]

    def locate(self, group: int, position: int) -> tuple[int, int]:
        """The entry holding point ``position`` of ``group``, and the offset inside it."""
        target = self.before[group] + position
        k = int(np.searchsorted(self.cumulative, target, side="right"))
        return int(self.order[k]), target - (int(self.cumulative[k - 1]) if k else 0)
