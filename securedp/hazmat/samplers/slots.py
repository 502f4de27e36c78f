"""Tabulated weights ``exp(-rate * g)`` for integer gaps: the slots of the selection sampler.

For increasing integer gap ``values`` and a rational ``rate > 0``, a
:class:`SlotTable` holds, per value, an *envelope exponent* ``e`` with
``w = exp(-rate * g) <= 2**-e`` and integers ``lo <= w * 2**(e + 64) <= hi``:
exactly what one round of the selection sampler
(:mod:`securedp.hazmat.samplers.categorical`) compares its word with. The
bounds ``w_lo <= w <= w_hi`` come from
:func:`~securedp.hazmat.exact.kernels.directed_products` in fixed point
(consecutive values reuse ``q = exp(-rate)``, larger steps multiply by
``exp(-rate * d)``), so they are rigorous; ``e`` is read off the binary
exponent of ``w_hi`` (so ``w * 2**e > 1/2`` up to the fixed-point error). A last *far*
slot stands for every gap ``>= T`` (:func:`far_boundary`), where
``w < 2**-(K + 64)``: ``e = K``, ``lo = 0``, ``hi = 1``.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from itertools import pairwise

from securedp.hazmat.exact.interval import exp_neg
from securedp.hazmat.exact.kernels import directed_products, scaled_bounds
from securedp.hazmat.samplers.params import PlanCache

WORD_BITS = 64
GUARD = 72
"""The far slot carries at most ``2**-GUARD`` of the envelope."""
# A rational upper bound on ln 2 = 0.6931...: exp(-rate * T) <= 2**-b once rate * T >= b * 7/10.
_LN2_UPPER = Fraction(7, 10)


def envelope_cap(total_count: int) -> int:
    """``K``: the least multiple of 64 with ``K >= 72 + log2(total_count)`` (bit length)."""
    return WORD_BITS * -(-(total_count.bit_length() + GUARD) // WORD_BITS)


def far_boundary(rate: Fraction, cap: int) -> int:
    """``T = ceil((K + 64) * 7/10 / rate)``: ``exp(-rate * g) < 2**-(K + 64)`` for every gap ``g >= T``."""
    return -(-(cap + WORD_BITS) * _LN2_UPPER // rate)


def weight_bounds(rate: Fraction, values: Sequence[int], bits: int) -> tuple[list[int], list[int]]:
    """Integers ``lo <= exp(-rate * v) * 2**bits <= hi`` for increasing integers ``v >= 0``.

    :func:`~securedp.hazmat.exact.kernels.directed_products` in fixed point:
    consecutive values multiply by ``q = exp(-rate)``, larger steps by
    ``exp(-rate * d)``.
    """
    prec = bits + 8

    def factor(d: int) -> tuple[int, int]:
        return (1 << bits, 1 << bits) if d == 0 else scaled_bounds(exp_neg(rate * d).interval(prec), bits)

    q = factor(1)
    deltas = [v - u for u, v in pairwise(values)]
    first = factor(values[0]) if values else q
    return directed_products(first, (q if d == 1 else factor(d) for d in deltas), len(values), bits)


class SlotTable:
    """Envelope exponents and comparison windows for the slots of gap ``values`` (increasing) plus one far slot.

    For slot ``s``: ``shift[s] = e`` with ``w <= 2**-e`` and
    ``lo[s] <= w * 2**(e + 64) <= hi[s]``; the far slot (last) has ``e = K``,
    ``lo = 0``, ``hi = 1``. :attr:`window` is the widest ``hi - lo``. The
    weights are bounded in fixed point at ``K + 64 + 16 + log2(len(values))``
    bits, so the bounds of every slot with ``e <= K`` are within a unit or two.

    :attr:`unit`, :attr:`accept_lo`, :attr:`accept_hi` and :attr:`accept_window` are the tight envelope
    built from these bounds (:class:`~securedp.hazmat.samplers.categorical.SlotGroups`), cached with the table.
    """

    def __init__(self, rate: Fraction, cap: int, values: list[int]) -> None:
        self.values = values
        bits = cap + 2 * WORD_BITS + 16 + max(len(values), 1).bit_length()
        w_lo, w_hi = weight_bounds(rate, values, bits)
        self.shift: list[int] = []
        self.lo: list[int] = []
        self.hi: list[int] = []
        for lo, hi in zip(w_lo, w_hi, strict=True):
            e = 0 if hi >= 1 << bits else min(bits - hi.bit_length(), cap)  # 2**-(e+1) < w_hi <= 2**-e
            drop = bits - e - WORD_BITS
            self.shift.append(e)
            self.lo.append(lo >> drop)
            self.hi.append(-(-hi >> drop))
        self.shift.append(cap)
        self.lo.append(0)
        self.hi.append(1)
        self.window = max(h - lo for lo, h in zip(self.lo, self.hi, strict=True))
        self.capped_from = next(s for s in range(len(self.shift)) if self.shift[s] == cap)
        """The slots with ``e = K``: this one and every later one (``e`` grows with the gap)."""
        assert all(e == cap for e in self.shift[self.capped_from:])
        # The tight envelope of securedp.hazmat.samplers.categorical.SlotGroups, built once with the table:
        # a point of near slot s weighs hi[s] * 2**(cap - e) units of 2**-(cap + 64) (a far point 2**64), and is
        # accepted with probability a, floor(lo * 2**64 / hi) <= a * 2**64 <= 2**64 (far: lo, hi as above).
        near = range(len(values))
        self.unit = [self.hi[s] << (cap - self.shift[s]) for s in near] + [1 << WORD_BITS]
        self.accept_lo = [(self.lo[s] << WORD_BITS) // self.hi[s] for s in near] + [self.lo[-1]]
        self.accept_hi = [1 << WORD_BITS for _ in near] + [self.hi[-1]]
        self.accept_window = max((h - lo for lo, h, e in zip(self.accept_lo, self.accept_hi, self.shift, strict=True)
                                  if e < cap), default=1)


def _dense_table(rate: Fraction, cap: int, size: int) -> SlotTable:
    return SlotTable(rate, cap, list(range(size)))


DENSE_TABLES: PlanCache[SlotTable] = PlanCache(_dense_table)
"""Tables of the gap values ``0 .. T-1``, cached per ``(rate, K, T)``."""
