"""NumPy arrays onto lattice units, exactly, in vectorised passes by cache-sized blocks.

The array fast paths of :mod:`securedp.lattice.screen` (whose docstring states the rule: clamp,
then ``round_half_even(x / step)``): :func:`int_array` for integer arrays (clip, scale, an exact
round-divide in place, a shift for a power-of-two step) and :func:`float_array` for float64 arrays
(``x * 2**k`` for a binary step; for a step ``2**-k n / d`` with odd ``d < 2**10`` each float's
significand and exponent divided in integer arithmetic, :func:`float_lattice_constants`; otherwise
the float quotient, with the exact per-record screen deciding every record within
:data:`TIE_TOLERANCE` of a tie). Each pass does the same operations for every value of a block.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from securedp.lattice.clamp import Clamp

INT64_MAX = (1 << 63) - 1
TIE_TOLERANCE = 2.0**-45  # float-ok: only decides which records get the exact check


FLOAT_BLOCK = 1 << 16
"""Elements per block of :func:`_float_units` (its dozen temporaries of a block stay in the L2 cache)."""
_ODD_LIMIT = 1 << 10
"""The odd part of the step's denominator must be below this for :func:`_float_units` (``m d < 2**63``)."""


def float_lattice_constants(step: Fraction, biggest: Fraction) -> tuple[int, int, int, bool] | None:
    """``(d, n, shift, left)`` with ``step = 2**-shift n / d`` (``d``, ``n`` odd) when :func:`_float_units`
    applies: ``d < 2**10`` (so ``m d < 2**63`` for a 53-bit significand ``m``) and every in-bounds float's
    ``|x| d 2**shift`` below ``2**62``; else ``None``. ``left``: some float within ``biggest`` has
    ``|x| 2**shift >= 2**53``, so its significand is shifted left (``t > 0`` in :func:`_float_units`)."""
    num, den = step.numerator, step.denominator
    twos_den = (den & -den).bit_length() - 1
    twos_num = (num & -num).bit_length() - 1
    d, n = den >> twos_den, num >> twos_num
    shift = twos_den - twos_num
    if d >= _ODD_LIMIT or n > INT64_MAX // 2 or biggest * d * Fraction(2) ** shift >= 1 << 62:
        return None
    return d, n, shift, biggest * Fraction(2) ** shift >= 1 << 53


def _float_units(x: np.ndarray, constants: tuple[int, int, int, bool], out: np.ndarray) -> None:
    """``out = round_half_even(x / step)`` for finite float64 ``x`` within the bounds, in integer arithmetic.

    A float is ``(-1)**sign m 2**e`` exactly, ``m`` and ``e`` read from its bits (``m < 2**53``), so with
    ``step = 2**-shift n / d``, ``x / step = m d 2**(e + shift) / n``: the integer ``P = m d`` (below
    ``2**63``) shifted by ``t = e + shift`` and divided by ``n``. For ``t >= 0``, ``q = (P << t) // n``
    with remainder ``r``; for ``t = -s < 0``, ``P = a 2**s + b`` (``0 <= b < 2**s``), ``q = a // n``,
    ``r = a - q n``, and the remainder of the whole division is ``r 2**s + b``: it is more than half of
    ``n 2**s`` when ``2 r > n``, or ``2 r = n`` and ``b > 0``, or ``2 r = n - 1`` and ``b > 2**(s-1)``;
    exactly half when ``2 r = n`` and ``b = 0`` or ``2 r = n - 1`` and ``b = 2**(s-1)`` (a tie: to even).
    For ``s >= 64`` (``P < 2**63 <= 2**(s-1)``) the quotient rounds to 0. No float operation decides a unit.
    """
    d, n, shift, left = constants
    bits = x.view(np.uint64)
    exponent = (bits >> np.uint64(52)) & np.uint64(0x7FF)
    p = bits & np.uint64((1 << 52) - 1)
    p |= (exponent != 0).view(np.uint8).astype(np.uint64) << np.uint64(52)
    if d != 1:
        p *= np.uint64(d)
    t = np.maximum(exponent, np.uint64(1)).view(np.int64) - (1075 - shift)  # a subnormal: exponent 0, 2**-1074
    s = np.clip(t, -63, 0)
    np.negative(s, out=s)
    s = s.view(np.uint64)
    mask = (np.uint64(1) << s) - np.uint64(1)
    half = mask - (mask >> np.uint64(1))  # 2**(s-1), or 0 for s = 0
    a = p >> s
    if left:  # some float in the bounds has t > 0
        a <<= np.clip(t, 0, 63).view(np.uint64)
    b = p & mask
    if n == 1:  # the quotient is a, the remainder b (of 2**s): up past half, ties to even
        up = (b > half) | ((b == half) & (b != 0) & ((a & np.uint64(1)) != 0))
        q = a
    else:
        q = a // np.uint64(n)
        twice = (a - q * np.uint64(n)) << np.uint64(1)
        at_n = twice == np.uint64(n)
        below_n = twice == np.uint64(n - 1)
        up = (twice > np.uint64(n)) | (at_n & (b > 0)) | (below_n & (b > half))
        tie = (at_n & (b == 0)) | (below_n & (b == half) & (b != 0))
        up |= tie & ((q & np.uint64(1)) != 0)
    q += up.view(np.uint8)
    q[t < -63] = 0
    units = q.view(np.int64)
    np.negative(units, out=units, where=(bits >> np.uint64(63)).view(np.int64) != 0)
    out[...] = units


def float_array(x: np.ndarray, clamp: Clamp, screen: Callable[[Any], int | None]) -> tuple[np.ndarray, np.ndarray]:
    bad = np.isnan(x)
    if not clamp.exact_mult and clamp.float_lattice is not None:  # any other step: integers, by blocks
        units = np.empty(x.shape, dtype=np.int64)
        y = np.empty(min(x.size, FLOAT_BLOCK), dtype=np.float64)
        for start in range(0, x.size, FLOAT_BLOCK):
            end = min(start + FLOAT_BLOCK, x.size)
            block = y[:end - start]
            np.clip(x[start:end], clamp.lo_f, clamp.hi_f, out=block)  # exact: comparisons only
            np.copyto(block, 0.0, where=bad[start:end])
            _float_units(block, clamp.float_lattice, units[start:end])
            units[start:end][x[start:end] < clamp.lo_f] = clamp.lo_u
            units[start:end][x[start:end] > clamp.hi_f] = clamp.hi_u
        return units, bad
    if clamp.exact_mult:  # the snapped bounds are floats and x * 2**k is exact: clip, scale, round by blocks
        units = np.empty(x.shape, dtype=np.int64)
        y = np.empty(min(x.size, BLOCK), dtype=np.float64)
        for start in range(0, x.size, BLOCK):
            end = min(start + BLOCK, x.size)
            block = y[:end - start]
            np.clip(x[start:end], clamp.lo_f, clamp.hi_f, out=block)  # NaN stays NaN, set to 0 below
            block *= clamp.mult
            np.rint(block, out=block)
            np.copyto(block, 0.0, where=bad[start:end])
            units[start:end] = block  # integral floats of magnitude <= 2**53: converted exactly
        return units, bad
    below = x < clamp.lo_f
    above = x > clamp.hi_f
    inside = ~(below | above | bad)
    y = np.where(inside, x, 0.0) * clamp.mult if math.isfinite(clamp.mult) else np.zeros_like(x)
    rounded = np.rint(y)
    check = np.empty(0, dtype=np.intp)
    if not clamp.exact_mult:
        if clamp.approx_ok:
            near_tie = np.abs(np.abs(y - rounded) - 0.5) <= TIE_TOLERANCE * (1.0 + np.abs(y))
            check = np.flatnonzero(inside & near_tie)
        else:
            check = np.flatnonzero(inside)
    units = rounded.astype(np.int64)
    if not clamp.exact_mult:
        for i in check:
            unit = screen(float(x[i]))  # float-ok: x[i] is already a float64
            assert unit is not None  # x[i] is inside [lo_f, hi_f], so not NaN: the screen accepts it
            units[i] = unit
    units[below] = clamp.lo_u
    units[above] = clamp.hi_u
    units[bad] = 0
    return units, bad


def int_array(x: np.ndarray, clamp: Clamp) -> np.ndarray:
    """Units of an integer array in two or three vectorised passes: clip to ``[lo_i, hi_i]``, scale, round.

    A record below ``lo_i`` (so below ``lo_v``) gets ``lo_u`` and one above ``hi_i`` gets ``hi_u``;
    clipping it to ``lo_i`` (``hi_i``) gives the same units whenever ``lo_i`` (``hi_i``) itself rounds
    to ``lo_u`` (``hi_u``), and otherwise a mask puts them back. Division by a power of two is a shift.
    """
    lo_c, hi_c = clamp.lo_i, clamp.hi_i  # within int64 (checked by the caller)
    if lo_c > hi_c:  # no integer in [lo_v, hi_v]: every record is below or above
        sides: np.ndarray = np.where(x < lo_c, np.int64(clamp.lo_u), np.int64(clamp.hi_u))
        return sides
    clipped: np.ndarray
    if x.dtype.kind == "u":
        if hi_c < 0:
            return np.full(x.shape, clamp.hi_u, dtype=np.int64)
        clipped = np.minimum(x, np.uint64(hi_c)).astype(np.int64)
        np.maximum(clipped, lo_c, out=clipped)
    else:
        clipped = np.clip(x.astype(np.int64, copy=False), np.int64(lo_c), np.int64(hi_c))  # the caller's is kept
    num, den = clamp.num, clamp.den
    worst = max(abs(lo_c), abs(hi_c))
    if num <= INT64_MAX and worst * den <= INT64_MAX // 2 and den <= INT64_MAX:
        units = clipped
        if den != 1:
            units *= den
        if num != 1:
            _round_divide(units, num)
    else:
        units = np.fromiter((clamp.rational_units(int(v), 1) for v in clipped), dtype=np.int64, count=clipped.size)
    if clamp.rational_units(lo_c, 1) != clamp.lo_u:
        units[x < lo_c] = clamp.lo_u
    if clamp.rational_units(hi_c, 1) != clamp.hi_u:
        units[x > hi_c] = clamp.hi_u
    return units


BLOCK = 1 << 14
"""Elements per block of the in-place passes: the temporaries of a block stay in the CPU cache."""


def _round_divide(n: np.ndarray, num: int) -> None:
    """``n = round_half_even(n / num)`` in place, exactly (int64 ``n`` with ``|n| + num <= 2**63 - 1``).

    A power of two ``2**k`` is a shift: ``floor((n + 2**(k-1) - 1 + bit k of n) / 2**k)``. Otherwise
    ``q = floor(n / num)``, ``r = n - q num``, plus one when ``2 r > num`` or ``2 r == num`` and ``q`` is odd.
    """
    t = np.empty(min(n.size, BLOCK), dtype=np.int64)
    if num & (num - 1) == 0:
        k, half = num.bit_length() - 1, num // 2 - 1
        for start in range(0, n.size, BLOCK):
            block, odd = n[start:start + BLOCK], t[:min(BLOCK, n.size - start)]
            np.right_shift(block, k, out=odd)
            odd &= 1
            odd += half
            block += odd
            block >>= k
        return
    for start in range(0, n.size, BLOCK):
        block, q = n[start:start + BLOCK], t[:min(BLOCK, n.size - start)]
        np.floor_divide(block, num, out=q)
        block -= q * num  # the remainder r
        block *= 2
        up = (block > num) | ((block == num) & (q % 2 == 1))
        np.add(q, up, out=block)
