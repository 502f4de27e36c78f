"""Integers ``lo <= exp(-x) * 2**(e + 64) <= hi`` in fixed-width integer arithmetic, the same work for every ``x``.

The exponential-weight selections (:mod:`securedp.hazmat.samplers.categorical`) decide each proposal by one
64-bit word against such a window (``hi - lo <= 2``): ``x = rate * gap`` is the proposed entry's exponent and
``e`` its envelope exponent, ``e <= x / ln 2 < e + 1 + 2**-16``. The window's computation is on the path of
every draw, so its time must not depend on ``x``: an MPFR ``exp`` of the exact ``x`` (until issue 40) took
9.25 us for a gap of 0 and 9.07 us for a gap of one sensitivity (its conversion of an ``mpq`` and its range
reduction cost what the argument's size and magnitude make them), which a release-level timing audit
certified. Here every operation runs on integers of a width fixed by the plan (public: ``rate``, the scale of the
gaps, ``K``), never by ``x``: one offset keeps every operand at its width, including a gap of 0.

**Input.** An integer ``d`` with ``d <= gap * 2**Q <= d + spread`` (``Q``, ``spread`` fixed per plan: ``Q = 0``
and ``spread = 0`` for integer gaps; for float gaps ``d = floor(top 2**Q) - ceil(v 2**Q)``, ``spread = 2``), and
the entry's envelope exponent ``0 <= e < K``.

**Algorithm** (``W = 128`` fractional bits; all quantities below are integers scaled by ``2**W``).

1. ``X = floor(S (d + OFF)) - ceil(S OFF)`` with ``S = rate * 2**(W - Q)`` (exact integer division of fixed-width
   integers; ``OFF`` puts ``d + OFF`` and ``rate``'s numerator times it in fixed binades): ``S d - 2 <= X <= S d``,
   so ``x 2**W - (2 + S spread) <= X <= x 2**W``.
2. ``y = max(X - e L_hi, 0)`` with ``L_hi = ceil(ln 2 * 2**W)``: ``0 <= y <= (x - e ln 2) 2**W`` and the true
   ``y* = x - e ln 2`` (``>= 0`` since ``e <= x / ln 2``) exceeds ``y / 2**W`` by at most ``SLACK / 2**W``,
   ``SLACK = 3 + ceil(S spread) + K`` (``e (L_hi - ln 2 2**W) < K``).
3. ``y / 2**W = (k - 2) / 1024 + z / 2**W`` with ``2**(W-10) <= z < 2**(W-9)`` (``k`` from the bits above
   ``2**(W - 10)`` of ``y + 2**(W - 10)``, ``z`` the bits below plus ``2**(W - 10)``: never 0).
4. ``exp(z / 2**W)`` by Horner's rule on its Taylor polynomial of degree ``N = 8``, each step rounded down:
   ``h_N = 2**W``, ``h_(n-1) = 2**W + floor(z h_n / (n 2**W))``. Each step loses less than one unit and multiplies
   the earlier loss by ``z / (n 2**W) < 1``, so ``h_0 <= P(z) 2**W < h_0 + N``; the tail of the series beyond
   degree ``N`` is below ``2 (2**-9)**(N+1) / (N+1)!`` (``TAIL`` units, rounded up). So ``exp(z) 2**W`` lies in
   ``[h_0, h_0 + E)``, ``E = N + TAIL``, and with ``R = ceil(2**(2W) / h_0)``:
   ``R - 1 - E <= exp(-z) 2**W <= R`` (``1/h - 1/(h + E) <= E / h**2`` and ``h_0 >= 2**W``).
5. ``exp(-(k - 2) / 1024) 2**W`` from a table ``[T_lo[k], T_hi[k]]`` (directed products, built once), so
   ``A_lo = floor(T_lo[k] (R - 1 - E) / 2**W) <= exp(-y / 2**W) 2**W <= ceil(T_hi[k] R / 2**W) = A_hi``.
6. ``exp(-y*) >= exp(-y / 2**W) - SLACK / 2**W`` (``exp(-y / 2**W) <= 1``, ``exp`` is 1-Lipschitz on
   ``(-inf, 0]``) and ``exp(-y*) <= exp(-y / 2**W)``; since ``exp(-x) 2**e = exp(-y*)``:
   ``lo = floor((A_lo - SLACK) / 2**(W - 64))``, ``hi = ceil(A_hi / 2**(W - 64))``. Every error above is below
   ``2**(W - 100)`` units while a unit of the window is ``2**(W - 64)``: ``hi - lo <= 2``.

Fixed work: the same integer operations in the same order, on operands whose widths do not depend on ``d`` or
``e`` (``d + OFF``, ``e + 2**20``, ``y + 2**(W+2) + 2**(W-10)``, ``z`` and every ``h_n`` each lie in one binade);
the only branch, ``max(., 0)``, is one comparison. ``tests/security/test_selection_matrix_timing.py`` audits the
draws that use it, and ``tests/unit/hazmat/test_exp_window.py`` checks every window against MPFR and the widths.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from itertools import repeat

import gmpy2

from securedp.hazmat.exact.interval import rounding_context
from securedp.hazmat.exact.kernels import WORD_BITS, directed_products

W = 128
"""Fractional bits of the fixed-point computation."""
TABLE_BITS = 10
"""The table's step is ``2**-TABLE_BITS``; the polynomial's argument lies in ``[2**-10, 2**-9)``."""
DEGREE = 8
"""Degree of the Taylor polynomial of ``exp(z)``."""
Y_LIMIT = 1
"""``y* = x - e ln 2`` stays below this (it is below ``(1 + 2**-16) ln 2`` for a valid, efficient exponent)."""
E_LIMIT = 1 << 20
"""Envelope exponents below this (the envelopes' ``K`` is at most ``2**20``)."""
_ONE = 1 << W
_LOW_MASK = (1 << (W - TABLE_BITS)) - 1
_HIGH = 1 << (W + 2)
"""Keeps ``y + 2**(W - 10)`` in the binade of ``2**(W + 2)``."""
_SHIFT_OUT = W - WORD_BITS


def _directed_exp(x: Fraction, prec: int) -> tuple[int, int]:
    """Integers ``lo <= exp(x) * 2**prec <= hi`` (MPFR at ``prec + 16`` bits, directed rounding)."""
    with rounding_context(prec + 16, gmpy2.RoundDown):
        low = gmpy2.floor(gmpy2.mul_2exp(gmpy2.exp(gmpy2.mpq(x.numerator, x.denominator)), prec))
    with rounding_context(prec + 16, gmpy2.RoundUp):
        high = gmpy2.ceil(gmpy2.mul_2exp(gmpy2.exp(gmpy2.mpq(x.numerator, x.denominator)), prec))
    return int(low), int(high)


@functools.cache
def _table() -> tuple[tuple[int, ...], tuple[int, ...], int, int]:
    """``T_lo[k] <= exp(-(k - 2) / 1024) 2**W <= T_hi[k]`` for ``k <= 1024 Y_LIMIT + 2``, ``ceil(ln 2 2**W)``, and
    the tail's units ``TAIL``: public constants, built once."""
    extra = 16  # the directed products lose at most one unit of 2**-(W + 16) per step: 1,027 steps < 2**11
    count = (Y_LIMIT << TABLE_BITS) + 3
    start = _directed_exp(Fraction(2, 1 << TABLE_BITS), W + extra)
    step = _directed_exp(Fraction(-1, 1 << TABLE_BITS), W + extra)
    lows, highs = directed_products(start, repeat(step), count, W + extra)
    with rounding_context(W + 16, gmpy2.RoundUp):
        ln2_high = int(gmpy2.ceil(gmpy2.mul_2exp(gmpy2.log(2), W)))
    tail = -(-(2 << W) // (math.factorial(DEGREE + 1) << (9 * (DEGREE + 1))))
    return (tuple(lo >> extra for lo in lows), tuple(-(-hi >> extra) for hi in highs), ln2_high, tail)


class ExpWindow:
    """The window of ``exp(-x) * 2**(e + 64)`` for ``x = rate * gap``, gaps known as ``d <= gap * 2**Q <= d +
    spread``, ``0 <= d <= gap_limit`` (a public bound), ``e < cap``: see the module docstring.

    ``rate``: a positive rational; ``scale_bits`` = ``Q >= 0``; ``spread``: 0 or 2; ``offset``: added by the
    caller to every ``d`` it gives (:meth:`bounds`).
    """

    def __init__(self, rate: Fraction, scale_bits: int, spread: int, gap_limit: int, cap: int, offset: int = 0) -> None:
        if not 0 < cap <= E_LIMIT or scale_bits < 0 or spread < 0 or gap_limit < 0 or rate <= 0:
            raise ValueError("exp window parameters out of range")
        self.scale_bits, self.spread = scale_bits, spread
        self.low_table, self.high_table, ln2_high, tail = _table()
        numerator, self._den = rate.numerator, rate.denominator << scale_bits
        self._range = (offset - 1, offset + gap_limit)  # the caller gives d + offset (an integer of a fixed width)
        # d + OFF lies in [2**M + 2**(M-1)... : numerator * (d + OFF) in [1.25, 2) * 2**M, with d in [-1, gap_limit]
        m = (numerator * (gap_limit + 2)).bit_length() + 2
        self._off = -(-(5 << m) // (4 * numerator)) + 1
        self._num = numerator << W
        self._shift_in = self._off - offset
        s_spread = -(-(self._num * spread) // self._den)
        self.slack = 3 + s_spread + cap
        self._ln2 = ln2_high
        self._base = _HIGH + (1 << (W - TABLE_BITS)) + ((-self._num * self._off) // self._den) + E_LIMIT * ln2_high
        """``u = floor(S (d + OFF)) + base - (e + 2**20) L_hi = y + 2**(W + 2) + 2**(W - 10)`` before the clamp."""
        self._floor_u = _HIGH + (1 << (W - TABLE_BITS))
        self._error = DEGREE + tail + 1

    def bounds(self, d: int, e: int) -> tuple[int, int]:
        """Integers ``lo <= exp(-x) * 2**(e + 64) <= hi``, ``hi - lo <= 2``, given ``d = g + offset`` for an integer
        ``g <= gap 2**Q <= g + spread`` (``offset``, fixed per plan, lets the caller form ``d`` at one width)."""
        if not self._range[0] <= d <= self._range[1]:
            raise AssertionError("a gap beyond the window's declared limit")  # a caller's invariant: never data
        u = max(((self._num * (d + self._shift_in)) // self._den) + self._base - (e + E_LIMIT) * self._ln2,
                self._floor_u)
        k = (u >> (W - TABLE_BITS)) - (1 << (TABLE_BITS + 2))
        z = (u & _LOW_MASK) + (1 << (W - TABLE_BITS))
        h = _ONE
        for n in range(DEGREE, 0, -1):
            h = _ONE + ((z * h) >> W) // n
        r = -((-1 << (2 * W)) // h)
        a_low = (self.low_table[k] * (r - self._error)) >> W
        a_high = -((-self.high_table[k] * r) >> W)
        return (a_low - self.slack) >> _SHIFT_OUT, -((-a_high) >> _SHIFT_OUT)
