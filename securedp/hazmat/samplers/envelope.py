"""Envelope exponents of the exponential-weight selections, from float64 with a proven margin.

For gaps ``g_i >= 0`` and a rational ``rate > 0`` the selection sampler
(:mod:`securedp.hazmat.samplers.categorical`) needs integers
``0 <= e_i <= K`` with ``exp(-rate * g_i) <= 2**-e_i`` (a valid envelope) and
``e_i >= t_i - 1 - 2**-17`` unless ``e_i = K`` (an efficient one), where
``t_i = rate * g_i / ln 2``. No float ever decides an outcome: the exponents
only shape the proposal, and any valid choice gives the exact law.
:class:`FloatGaps` holds float64 scores exactly (gaps ``top - v_i`` at their
binary values).

**Envelope exponents in float64: error analysis.** Let ``L`` be a rational
lower bound on ``1 / ln 2`` (MPFR, rounded down; ``L ln 2 > 1 - 2**-250``)
and ``c = rate * L * (1 - 2**-40)`` (exact rational), so ``g * c <= t (1 -
2**-40)``. Write ``2**ce <= c < 2**(ce + 1)``. Every gap comes with a finite
float64 ``d_i`` with ``g_i (1 - u) <= d_i <= g_i (1 + u)``, ``u = 2**-53``:
``fl(g_i)`` for int64 gaps (a correctly rounded conversion), ``fl(top - v_i)``
for float gaps (a correctly rounded subtraction of two doubles; when it could
overflow, i.e. the scores span more than ``DBL_MAX``, the float gaps are
turned into exact integers instead). Then, in float64 (round to nearest):

* ``c`` normal (``-1022 <= ce < 1000``): ``x_i = fl(d_i * fl(c))``;
* otherwise: ``d_i = m_i 2**k_i`` exactly (``frexp``), ``cm = fl(c / 2**ce)``
  in ``[1, 2]``, ``x_i = ldexp(fl(m_i * cm), clip(k_i + ce, -1100, 1100))``
  (``fl(m_i * cm)`` lies in ``[1/2, 2]``: no overflow or underflow);

and ``e_i = trunc(min(x_i, K + 1 - 2**-16))`` (``K + 1 - 2**-16`` is exact, so
``0 <= e_i <= K``). In both cases three correctly rounded operations (``fl(c)``
or ``cm``, ``d_i``, the product) and at most one underflow of the result
(absolute error ``<= 2**-1075``) give ``x_i <= g_i c (1 + u)**3 + 2**-1075
<= t_i (1 - 2**-40) (1 + 2**-51) + 2**-1075`` (``(1 + u)**3 < 1 + 4u``).
Clipping the exponent down only lowers ``x_i``; clipping it up (``k_i + ce <
-1100``) gives ``x_i <= 2**-1099``, hence ``e_i = 0``. An overflow to ``inf``,
or a clip down, happens only when the exact ``g_i c`` exceeds ``2**1022``, so
``t_i > K``.
*Claim:* ``e_i <= t_i``. If ``x_i < 1``, ``e_i = 0 <= t_i``. Otherwise
``t_i > 2**-1000`` (else ``x_i < 1``), so ``t_i 2**-41 > 2**-1075`` and
``x_i < t_i``: if the ``min`` is active, ``t_i > x_i >= K + 1 - 2**-16 > K =
e_i``; else ``e_i = trunc(x_i) <= x_i < t_i``.
*Efficiency:* the same bounds the other way give ``x_i >= t_i (1 - 2**-39) -
2**-1075``; if ``e_i < K`` the ``min`` is inactive, so ``t_i < (K + 1) (1 +
2**-38) <= 2**21`` and ``e_i > x_i - 1 >= t_i - 1 - 2**-17``. So a near entry
is accepted with probability ``a_i > 2**-(1 + 2**-17) > 1/2 - 2**-16``.
*The tight envelope* (:func:`_tight_counts`) reads ``e_i`` and ``j_i = floor((x_i - e_i) 2**16)`` from
``floor(min(x_i, K + 1 - 2**-16) 2**16)``, which is computed as ``floor(min(y_i, (K + 1 - 2**-16) 2**16))``
(the ceiling is exact, below ``2**37``) with ``y_i = fl(d_i * fl(c) 2**16)`` when ``c`` is normal
(``fl(c) 2**16 = fl(c 2**16)``, exact below ``2**1016``: one multiplication instead of two), else ``y_i = fl(x_i
2**16)``. Both give the same integer, since scaling by a power of two commutes with rounding absent overflow and
underflow. Let ``p = d_i fl(c)`` exactly. If ``2**-1022 <= p`` and ``p 2**16`` does not overflow, ``y_i = x_i
2**16`` (the same significand rounded in a binade 16 higher); if ``p < 2**-1022``, ``x_i <= 2**-1022`` and ``y_i <=
2**-1006`` (rounding is monotone), so both floors are 0; if ``p 2**16`` overflows, ``p >= 2**1007``, so ``x_i > K +
1`` and ``y_i >= 2**1023`` (or ``inf``): both are clipped to the ceiling. Otherwise ``x_i 2**16`` is exact or
overflows (then ``x_i > K + 1`` and both are clipped).
Huge integer gaps (object arrays) skip floats altogether:
``e_i = min(K, floor(g_i * c))``, exact integer arithmetic. Float lines are
marked ``# float-ok``.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from fractions import Fraction
from typing import Any, Protocol

import gmpy2
import numpy as np

from securedp.hazmat.exact.interval import rounding_context
from securedp.hazmat.exact.kernels import inverse_ln2_low

_MARGIN = 2.0**-16  # float-ok: bound with proven margin, see docstring
_SHRINK = 1 - Fraction(1, 2**40)
"""``c`` is ``rate * L`` shrunk by this factor, so that every float64 ``x_i`` lies strictly below ``t_i``."""
_K_LIMIT = 1 << 20
_CE_LIMIT = 1100
BLOCK = 1 << 15
"""Entries per block of the vectorised passes (a large temporary costs more in page faults than the
arithmetic; 2**15 was the fastest of 2**13 .. 2**17 for 10**5 float and integer scores, and 2**17 three
times slower)."""
INV_LN2_LOW = inverse_ln2_low()
"""``L <= 1 / ln 2`` with ``L * ln 2 > 1 - 2**-250``."""


class FloatGaps:
    """The exact gaps ``top - v_i`` of finite float64 ``values`` (at their binary values), ``top = max(values)``.

    :meth:`approx_into` gives float64 ``d_i = fl(top - v_i)`` (one correctly rounded
    subtraction), so ``0 <= d_i <= (top - v_i) (1 + 2**-53)`` when :attr:`finite`;
    :meth:`exact` gives one gap exactly (an ``mpq``), :meth:`integers` all of them.
    """

    def __init__(self, values: np.ndarray, span: tuple[float, float] | None = None) -> None:
        """``span``: ``(min(values), max(values))`` when the caller has them (two passes fewer)."""
        self.values = values
        self.bottom, self.top = (float(values.min()), float(values.max())) if span is None else span
        self._top_q = gmpy2.mpq(self.top)

    def approx_into(self, start: int, stop: int, out: np.ndarray) -> None:
        """Write the ``d_i`` of entries ``start .. stop-1`` into ``out``."""
        np.subtract(self.top, self.values[start:stop], out=out)  # float-ok: bound with proven margin, see docstring

    def __len__(self) -> int:
        return len(self.values)

    @property
    def finite(self) -> bool:
        """Whether every ``d_i`` is finite (``fl`` is monotone: the largest is ``fl(top - min(values))``)."""
        return math.isfinite(self.top - self.bottom)  # float-ok: a monotone bound (Python floats overflow to inf)

    def exact(self, i: int) -> Any:
        """The gap of entry ``i``, exactly."""
        return self._top_q - gmpy2.mpq(float(self.values[i]))

    def scaled_lower(self, shift: int) -> tuple[Callable[[int], int], int]:
        """``d(i) + C`` and ``C``, where ``d(i) = floor(top 2**shift) - ceil(v_i 2**shift)``, so ``d(i) <= (top -
        v_i) 2**shift <= d(i) + 2``: integer shifts of the doubles' 53-bit significands (``frexp``, exact), the same
        operations for every entry (:class:`~securedp.hazmat.exact.exp_window.ExpWindow` reads it on every
        proposal). ``C = 3 * 2**(1099 + shift)`` keeps ``floor(top 2**shift) + C`` in one binade whatever ``top``
        (``|top| < 2**1024``): a gap of 0 is no cheaper to form than any other."""
        offset = 3 << (1099 + shift)
        top = offset - _scaled_ceil(-self.top, shift)  # floor(top 2**shift) + C
        values = self.values

        def lower(i: int) -> int:
            return top - _scaled_ceil(float(values[i]), shift)
        return lower, offset

    def integers(self) -> tuple[np.ndarray, Fraction]:
        """Integer gaps ``G`` and a unit ``2**low`` with ``top - v_i = G_i * 2**low`` exactly (object array)."""
        mantissa, exponent = np.frexp(self.values)
        mant = np.ldexp(mantissa, 53).astype(np.int64)  # exact: a double has 53 significant bits
        exp = exponent.astype(np.int64) - 53
        nonzero = mant != 0
        low = int(exp[nonzero].min()) if nonzero.any() else 0
        units = [int(m) << (int(s) - low) if m else 0 for m, s in zip(mant, exp, strict=True)]
        top = max(units)
        return np.array([top - v for v in units], dtype=object), Fraction(2) ** low


def _scaled_ceil(value: float, shift: int) -> int:
    """``ceil(value * 2**shift)`` exactly for a finite double (its significand and exponent from ``frexp``)."""
    fraction, exponent = math.frexp(value)
    significand = int(fraction * 9007199254740992.0)  # float-ok: exact, a double has 53 significant bits
    s = exponent - 53 + shift
    return significand << s if s >= 0 else -((-significand) >> -s)


def exponent_dtype(cap: int) -> type:
    """The smallest unsigned dtype holding ``0 .. K + 1`` for ``K = cap`` (``K + 1`` marks entries with no count)."""
    return np.uint8 if cap < 255 else np.uint16 if cap < 65535 else np.uint32


FRACTION_BITS = 16
"""The tight envelope's fractions: ``x_i - e_i`` rounded down to a multiple of ``2**-FRACTION_BITS``."""
COUNT_BITS = 28
"""The tight envelope's counts lie in ``(2**(COUNT_BITS - 1), 2**COUNT_BITS + 1]``."""
_FRACTION_MASK = (1 << FRACTION_BITS) - 1


@functools.cache
def tight_count_table() -> np.ndarray:
    """``T[j] = floor(H[a] L[b] / 2**35) + 1`` for ``j = a * 2**8 + b < 2**16``, with ``H[a] = ceil(2**31 *
    2**(-a / 2**8))`` and ``L[b] = ceil(2**32 * 2**(-b / 2**16))`` (MPFR, rounded up; public constants, built
    once): ``2**28 * 2**(-j / 2**16) <= T[j] <= 2**28 * 2**(-j / 2**16) (1 + 2**-30) (1 + 2**-31) + 1``."""
    tables = []
    for bits, scale in ((31, 8), (32, 16)):
        with rounding_context(64, gmpy2.RoundUp):
            tables.append(np.array([int(gmpy2.ceil(gmpy2.mul_2exp(gmpy2.exp2(gmpy2.mpfr(-k) / (1 << scale)), bits)))
                                    for k in range(1 << 8)], dtype=np.uint64))
    products = np.multiply.outer(tables[0], tables[1]).ravel()  # <= 2**63: exact in uint64
    table: np.ndarray = ((products >> np.uint64(63 - COUNT_BITS)) + np.uint64(1)).astype(np.int32)
    return table  # int32 (every entry is at most 2**28 + 1): half the cache lines of int64, a quarter faster set-up


_WORK = threading.local()
"""Each thread's work buffers for :func:`_tight_counts` (made once: fresh 256 KB temporaries are served from
freshly mapped pages, and took 3.5 times as long)."""


def _work_buffers() -> tuple[np.ndarray, np.ndarray]:
    buffers: tuple[np.ndarray, np.ndarray] | None = getattr(_WORK, "buffers", None)
    if buffers is None:
        buffers = _WORK.buffers = (np.empty(BLOCK, dtype=np.int64), np.empty(BLOCK, dtype=np.int64))
    return buffers


@functools.lru_cache(maxsize=8)
def _ceiling(value: float) -> np.ndarray:
    """A read-only block of ``value`` (``np.minimum`` against an array runs 3 times as fast as against a scalar)."""
    block = np.full(BLOCK, value)
    block.flags.writeable = False
    return block


def _tight_counts(scaled: np.ndarray, exponents: np.ndarray, counts: np.ndarray) -> None:
    """Each entry's exponent ``e = trunc(x)`` into ``exponents`` and its count ``T[j] >= 2**COUNT_BITS *
    2**-(j / 2**16)`` (:func:`tight_count_table`) into ``counts``, ``j = floor((x - e) * 2**16)``, from
    ``scaled = x * 2**16`` (at most :data:`BLOCK` float64 ``0 <= x < 2**21``, from :func:`envelope_exponents`)."""
    n = len(scaled)
    fixed, index = (buffer[:n] for buffer in _work_buffers())
    np.copyto(fixed, scaled, casting="unsafe")  # truncated to int64: floor(x * 2**16), with x = e + f
    np.right_shift(fixed, FRACTION_BITS, out=index)
    np.copyto(exponents, index, casting="unsafe")  # e = floor(x) <= K: fits the exponents' dtype
    np.bitwise_and(fixed, _FRACTION_MASK, out=index)
    np.take(tight_count_table(), index, out=counts)


class BlockTally(Protocol):
    """What receives each block's exponents and counts (a :class:`~securedp.hazmat.samplers.tally.Tally`)."""

    def add(self, values: np.ndarray, weights: np.ndarray | None = None) -> None:
        """Add the block's ``weights`` per value."""

    def add_sums(self, sums: np.ndarray) -> None:
        """Add the block's sums per value, already formed."""


def _kernel() -> Any:
    """The C kernel of the tight envelope (:mod:`securedp.hazmat.samplers._tight_envelope`), or None where it was
    not built."""
    try:
        import securedp.hazmat.samplers._tight_envelope as kernel  # the module alone: the package imports this one
    except ImportError:  # pragma: no cover - depends on the installation
        return None
    return kernel


KERNEL = _kernel()
"""One pass per block of the tight envelope's exponents, counts and sums per exponent, the same arrays as the
NumPy passes (:func:`_tight_counts`, then the tally's ``add``) in a third of their time; None without it."""


def envelope_exponents(fill: Callable[[int, int, np.ndarray], None], size: int, rate: Fraction,
                       cap: int, counts: np.ndarray | None = None, tally: BlockTally | None = None) -> np.ndarray:
    """Integers ``0 <= e_i <= K`` (``K = cap``) with ``e_i <= rate * g_i / ln 2``, for ``i < size``.

    ``fill(start, stop, out)`` writes finite float64 ``0 <= d_i <= g_i (1 + 2**-53)``
    for the entries ``start .. stop-1`` into ``out``. The float64 computation and
    its error analysis are in the module docstring; with ``counts`` (the tight envelope) it computes
    ``x_i * 2**16`` (``scale``), in one multiplication when ``c`` is normal, and gives each block's exponents and
    counts to ``tally`` (by :data:`KERNEL` when built: the same arrays in one pass). Entries are processed in
    blocks of :data:`BLOCK` through one small buffer (a large temporary costs more in page faults than the
    arithmetic).
    """
    if cap > _K_LIMIT:
        raise ValueError("envelope cap K beyond the analysed range")
    c = rate * INV_LN2_LOW * _SHRINK
    ce = c.numerator.bit_length() - c.denominator.bit_length()
    if c < Fraction(2) ** ce:
        ce -= 1  # now 2**ce <= c < 2**(ce + 1)
    normal = -1022 <= ce < 1000  # c is a normal double: one multiplication by fl(c) = cm * 2**ce
    factor = float(c) if normal else float(c / Fraction(2) ** ce)  # float-ok: correctly rounded, see docstring
    scale = float(1 << FRACTION_BITS) if counts is not None else 1.0  # float-ok: a power of two, see docstring
    multiplier = factor * scale if normal else scale  # float-ok: exact, fl(c) 2**16 < 2**1016 (see docstring)
    top = (cap + 1 - _MARGIN) * scale  # float-ok: exact, below 2**37 (see docstring)
    ceiling = _ceiling(top)
    ce = min(max(ce, -3000), 3000)  # changes nothing below: k + ce is clipped to [-1100, 1100] anyway
    out: np.ndarray = np.empty(size, dtype=exponent_dtype(cap))
    buffer = np.empty(min(size, BLOCK), dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):
        for start in range(0, size, BLOCK):
            stop = min(start + BLOCK, size)
            x = buffer[:stop - start]
            fill(start, stop, x)
            if not normal:
                m, k = np.frexp(x)  # exact: d = m * 2**k, m in [1/2, 1) or 0
                np.multiply(m, factor, out=x)  # float-ok: fl(m * cm) in [1/2, 2], see docstring
                k += ce
                np.clip(k, -_CE_LIMIT, _CE_LIMIT, out=k)
                np.ldexp(x, k, out=x)  # float-ok: bound with proven margin, see docstring
            if counts is not None and KERNEL is not None:  # the same operations as below, in one pass
                sums = np.empty(cap + 1, dtype=np.int64)
                KERNEL.tight_block(x, multiplier, top, tight_count_table(), out[start:stop], counts[start:stop], sums)
                if tally is not None:
                    tally.add_sums(sums)
                continue
            x *= multiplier  # float-ok: bound with proven margin (times 2**16 exactly or harmlessly), see docstring
            np.minimum(x, ceiling[:stop - start], out=x)  # float-ok: clip below K + 1, exact; see docstring
            if counts is None:
                out[start:stop] = x  # truncation toward 0 of x >= 0: the docstring's e
                continue
            _tight_counts(x, out[start:stop], counts[start:stop])
            if tally is not None:
                tally.add(out[start:stop], counts[start:stop])
    return out


def exact_envelope_exponents(gaps: np.ndarray, rate: Fraction, cap: int) -> np.ndarray:
    """``e_i = min(cap, floor(g_i * rate * L)) <= t_i`` in exact integer arithmetic (object arrays of huge gaps)."""
    c = rate * INV_LN2_LOW
    exact: np.ndarray = np.minimum(gaps * c.numerator // c.denominator, cap)
    return exact.astype(exponent_dtype(cap))


def int64_fill(gaps: np.ndarray) -> Callable[[int, int, np.ndarray], None]:
    """``fill`` for int64 gaps: ``d_i = fl(g_i)``, a correctly rounded conversion."""
    def fill(start: int, stop: int, out: np.ndarray) -> None:
        out[:] = gaps[start:stop]  # float-ok: correctly rounded conversion, see docstring
    return fill
