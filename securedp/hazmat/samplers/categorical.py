"""Exact selection with probabilities proportional to ``m_i * exp(-rate * g_i)``.

**Law.** Given exact gaps ``g_i >= 0`` (integers, or the exact differences
``top - v_i`` of float64 values, :class:`FloatGaps`), integer multiplicities
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
   comparison of :mod:`securedp.hazmat.samplers.decide`: one 64-bit word
   ``u`` against integers ``lo <= a_i * 2**64 <= hi``; ``u < lo`` accepts,
   ``u >= hi`` rejects, anything else goes to
   :func:`~securedp.hazmat.samplers.decide.resolve_below`, which reads more
   bits of the same uniform and answers exactly.

**Proof.** One round yields ``(i, j)`` with probability
``2**-e_i / E * w_i 2**e_i = w_i / E``: proportional to the law, whatever
valid exponents ``e_i`` were chosen (they only affect efficiency). Rounds are
independent, so the accepted pair has exactly the law above, and the number
of rounds (geometric with success probability ``S / E``) is independent of
the pair accepted (classical rejection sampling). The comparison is exact:
``u < lo`` gives ``U < (u + 1) / 2**64 <= a_i``, ``u >= hi`` gives
``U >= a_i``, and the resolver decides ``[U < a_i]`` exactly otherwise.

**Two ways of choosing the groups.**

* *Slots* (integer gaps with ``rate`` such that the far boundary ``T``
  below is at most ``2**16``: integer scores, median and quantiles). Gaps
  ``g >= T``, where ``exp(-rate * T) < 2**-(K + 64)``, are *far*; each near
  gap value ``0 .. T-1`` is its own group. Rigorous MPFR bounds
  ``w_lo <= w <= w_hi`` at 128+ bits are computed once per ``(rate, K)`` and
  cached, by iterated products with directed rounding (as
  :func:`~securedp.hazmat.samplers.geometric.power_lows` does); ``e`` is
  read off the binary exponent of ``w_hi`` (so ``a > 1/2`` up to 2**-120),
  and ``lo``, ``hi`` are tabulated per slot. All far gaps share one slot with
  ``e = K``, ``lo = 0``, ``hi = 1`` (``a < 2**-64``). Members of a slot share
  ``a``, so the round decides before it looks for the entry.
* *Exponent groups* (every other case, e.g. 100,000 distinct float scores).
  The group of an entry is its exponent ``e_i``: at most ``K + 1`` groups,
  whatever the number of distinct gaps. ``e_i`` comes from one vectorised
  float64 computation with a proven margin (below). A round locates the
  proposed entry (one full vectorised pass) and computes ``lo``, ``hi`` for
  it alone, with a fixed sequence of MPFR operations at 128 bits and
  directed rounding: ``a_i = exp(-(x_i + 1)) * e * 2**e_i`` with
  ``x_i = rate * g_i`` exact (the ``+ 1`` keeps every argument of ``exp``
  in the same range, ``>= 1``, so the cost does not depend on the gap). For
  ``e_i < K`` the enclosure is far narrower than ``2**-64``, so
  ``hi - lo <= 2``.

**Envelope exponents in float64: error analysis.** Let ``L`` be a rational
lower bound on ``1 / ln 2`` (MPFR, rounded down; ``L ln 2 > 1 - 2**-250``)
and ``c = rate * L`` (exact rational), so ``g * c <= t``. Write
``2**ce <= c < 2**(ce + 1)``. Every gap comes with a finite float64
``d_i`` with ``0 <= d_i <= g_i (1 + u)``, ``u = 2**-53``: ``fl(g_i)`` for
int64 gaps (a correctly rounded conversion), ``fl(top - v_i)`` for float
gaps (a correctly rounded subtraction of two doubles; when it could
overflow, i.e. the scores span more than ``DBL_MAX``, the float gaps are
turned into exact integers instead). Then, in float64 (round to nearest):

* ``c`` normal (``-1022 <= ce < 1000``): ``x_i = fl(d_i * fl(c))``;
* otherwise: ``d_i = m_i 2**k_i`` exactly (``frexp``), ``cm = fl(c / 2**ce)``
  in ``[1, 2]``, ``x_i = ldexp(fl(m_i * cm), clip(k_i + ce, -1100, 1100))``
  (``fl(m_i * cm)`` lies in ``[1/2, 2]``: no overflow or underflow);

and ``e_i = trunc(fl(min(x_i, K + 1) - 2**-16))``. In both cases three
correctly rounded operations (``fl(c)`` or ``cm``, ``d_i``, the product) and
at most one underflow of the result (absolute error ``<= 2**-1075``) give
``x_i <= g_i c (1 + u)**3 + 2**-1075 <= t_i (1 + 2**-51) + 2**-1075``
(``(1 + u)**3 < 1 + 4u``). Clipping the exponent down only lowers ``x_i``;
clipping it up (``k_i + ce < -1100``) gives ``x_i <= 2**-1099``, hence
``e_i = 0``. An overflow to ``inf``, or a clip down, happens only when the
exact ``g_i c`` exceeds ``2**1022``, so ``t_i > K``. ``K + 1 - 2**-16`` is
exact, so ``0 <= e_i <= K`` (the argument of ``trunc`` exceeds ``-1``).
*Claim:* ``e_i <= t_i``. If ``t_i >= K`` this holds because ``e_i <= K``.
Otherwise ``t_i < K <= 2**20`` (checked), so ``x_i < K + 1`` (the ``min``
is inactive) and ``fl(x_i - 2**-16) <= x_i - 2**-16 + 2**-32 <= t_i +
2**-31 + 2**-1075 - 2**-16 + 2**-32 < t_i``; ``e_i`` is 0 or the truncation
of that non-negative number, so ``e_i < t_i``. *Efficiency:* the same
bounds the other way give ``e_i >= t_i - 1 - 2**-15`` unless ``e_i = K``, so
a near entry is accepted with probability ``a_i > 2**-(1 + 2**-15) > 1/2 -
2**-16``. Huge integer gaps (object arrays) skip floats altogether:
``e_i = min(K, floor(g_i * c))``, exact integer arithmetic. Float lines are
marked ``# float-ok``.

**Efficiency and the far group.** ``S / E > (1/2 - 2**-16) (1 - 2**-72)``:
near entries accept with probability ``> 1/2 - 2**-16``, and the entries with
``e_i = K`` carry at most ``sum m * 2**-K <= 2**-72`` of ``E`` while
``E >= 1`` (the entry with gap 0 has ``e = 0``). Fewer than 2.0001 rounds
are expected.

**Timing.** A round does the same work whatever it proposes: a uniform
integer (rejection count independent of its value), a bisection over the
groups, for exponent groups one full vectorised pass and one fixed MPFR
evaluation, a word comparison. Turning the accepted slot and position into
the index ``i`` is one full vectorised pass over all entries (a cumulative
sum), whatever ``i``. Value-dependent work happens only when the word falls
in a comparison window (probability ``<= 2**-63`` per round) or an entry
with ``e = K`` is proposed (``<= 2**-72``):
:attr:`ExpCategorical.slow_path_bound`.
"""

from __future__ import annotations

from bisect import bisect_right
from fractions import Fraction
from itertools import accumulate
from typing import Any, Callable

import gmpy2
import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.interval import Interval, Real, ceil_scaled, rounding_context, floor_scaled
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
# Exponent groups: working precision of the per-proposal bounds, float margin, largest K analysed.
_PREC = 2 * WORD_BITS
_MARGIN = 2.0**-16  # float-ok: bound with proven margin, see docstring
_K_LIMIT = 1 << 20
_CE_LIMIT = 1100
_BLOCK = 1 << 13


def _inverse_ln2_low() -> Fraction:
    with rounding_context(256, gmpy2.RoundUp):
        ln2_up = gmpy2.log(2)
    with rounding_context(256, gmpy2.RoundDown):
        low = 1 / ln2_up
    return Fraction(*low.as_integer_ratio())


_INV_LN2_LOW = _inverse_ln2_low()  # L <= 1 / ln 2, L * ln 2 > 1 - 2**-250
with rounding_context(_PREC + 8, gmpy2.RoundDown):
    _E_LO = gmpy2.exp(gmpy2.mpfr(1))
with rounding_context(_PREC + 8, gmpy2.RoundUp):
    _E_HI = gmpy2.exp(gmpy2.mpfr(1))


def weight_real(rate: Fraction, gap: int, shift: int = 0) -> Real:
    """The real ``exp(-rate * gap) * 2**shift``, for the resolver."""
    return exp_neg_real(rate * gap, shift)


def exp_neg_real(x: Any, shift: int = 0) -> Real:
    """The real ``exp(-x) * 2**shift`` for a rational ``x`` (Fraction, int or mpq), for the resolver."""
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
        out: list[Any] = []
        with rounding_context(prec, rounding):
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
            self.lo.append(floor_scaled(lo, e + WORD_BITS, prec))
            self.hi.append(ceil_scaled(hi, e + WORD_BITS, prec))
            self.lo64[s] = min(floor_scaled(lo, WORD_BITS, prec), _TOP64)
            self.hi64m1[s] = ceil_scaled(hi, WORD_BITS, prec) - 1
        self.shift.append(K)
        self.lo.append(0)
        self.hi.append(1)
        self.window = max(h - lo for lo, h in zip(self.lo, self.hi))


def _dense_table(rate: Fraction, K: int, size: int) -> SlotTable:
    return SlotTable(rate, K, list(range(size)))


_DENSE: PlanCache[SlotTable] = PlanCache(_dense_table)


class FloatGaps:
    """The exact gaps ``top - v_i`` of finite float64 ``values`` (at their binary values), ``top = max(values)``.

    :meth:`approx_into` gives float64 ``d_i = fl(top - v_i)`` (one correctly rounded
    subtraction), so ``0 <= d_i <= (top - v_i) (1 + 2**-53)`` when :attr:`finite`;
    :meth:`exact` gives one gap exactly (an ``mpq``), :meth:`integers` all of them.
    """

    def __init__(self, values: np.ndarray) -> None:
        self.values = values
        self.top = float(values.max())
        self._top_q = gmpy2.mpq(self.top)

    def approx_into(self, start: int, stop: int, out: np.ndarray) -> None:
        """Write the ``d_i`` of entries ``start .. stop-1`` into ``out``."""
        np.subtract(self.top, self.values[start:stop], out=out)  # float-ok: bound with proven margin, see docstring

    def __len__(self) -> int:
        return len(self.values)

    @property
    def finite(self) -> bool:
        """Whether every ``d_i`` is finite (``fl`` is monotone: the largest is ``fl(top - min(values))``)."""
        with np.errstate(over="ignore"):
            return bool(np.isfinite(self.top - self.values.min()))  # float-ok: a monotone bound

    def exact(self, i: int) -> Any:
        """The gap of entry ``i``, exactly."""
        return self._top_q - gmpy2.mpq(float(self.values[i]))

    def integers(self) -> tuple[np.ndarray, Fraction]:
        """Integer gaps ``G`` and a unit ``2**low`` with ``top - v_i = G_i * 2**low`` exactly (object array)."""
        mantissa, exponent = np.frexp(self.values)
        mant = np.ldexp(mantissa, 53).astype(np.int64)  # exact: a double has 53 significant bits
        exp = exponent.astype(np.int64) - 53
        nonzero = mant != 0
        low = int(exp[nonzero].min()) if nonzero.any() else 0
        units = [int(m) << (int(s) - low) if m else 0 for m, s in zip(mant, exp)]
        top = max(units)
        return np.array([top - v for v in units], dtype=object), Fraction(2) ** low


def exponent_dtype(K: int) -> type:
    """The smallest unsigned dtype holding ``0 .. K + 1`` (``K + 1`` marks entries with no count)."""
    return np.uint8 if K < 255 else np.uint16 if K < 65535 else np.uint32


def envelope_exponents(fill: Callable[[int, int, np.ndarray], None], size: int, rate: Fraction,
                       K: int) -> np.ndarray:
    """Integers ``0 <= e_i <= K`` with ``e_i <= rate * g_i / ln 2``, for ``i < size``.

    ``fill(start, stop, out)`` writes finite float64 ``0 <= d_i <= g_i (1 + 2**-53)``
    for the entries ``start .. stop-1`` into ``out``. The float64 computation and
    its error analysis are in the module docstring. Entries are processed in
    blocks of ``2**13`` through one small buffer (a large temporary costs more in
    page faults than the arithmetic).
    """
    if K > _K_LIMIT:
        raise ValueError("envelope cap K beyond the analysed range")
    c = rate * _INV_LN2_LOW
    ce = c.numerator.bit_length() - c.denominator.bit_length()
    if c < Fraction(2) ** ce:
        ce -= 1  # now 2**ce <= c < 2**(ce + 1)
    normal = -1022 <= ce < 1000  # c is a normal double: one multiplication by fl(c) = cm * 2**ce
    factor = float(c) if normal else float(c / Fraction(2) ** ce)  # float-ok: correctly rounded, see docstring
    ce = min(max(ce, -3000), 3000)  # changes nothing below: k + ce is clipped to [-1100, 1100] anyway
    out: np.ndarray = np.empty(size, dtype=exponent_dtype(K))
    buffer = np.empty(min(size, _BLOCK), dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):
        for start in range(0, size, _BLOCK):
            stop = min(start + _BLOCK, size)
            x = buffer[:stop - start]
            fill(start, stop, x)
            if normal:
                x *= factor  # float-ok: bound with proven margin, see docstring
            else:
                m, k = np.frexp(x)  # exact: d = m * 2**k, m in [1/2, 1) or 0
                np.multiply(m, factor, out=x)  # float-ok: fl(m * cm) in [1/2, 2], see docstring
                k += ce
                np.clip(k, -_CE_LIMIT, _CE_LIMIT, out=k)
                np.ldexp(x, k, out=x)  # float-ok: bound with proven margin, see docstring
            np.clip(x, 0.0, K + 1, out=x)  # float-ok: min(x, K + 1) as x >= 0; x >= K + 1 only when t >= K
            x -= _MARGIN  # float-ok: bound with proven margin, see docstring
            out[start:stop] = x  # truncation toward 0; x > -1, so e >= 0
    return out


def exact_envelope_exponents(gaps: np.ndarray, rate: Fraction, K: int) -> np.ndarray:
    """``e_i = min(K, floor(g_i * rate * L)) <= t_i`` in exact integer arithmetic (object arrays of huge gaps)."""
    c = rate * _INV_LN2_LOW
    exact = np.minimum(gaps * c.numerator // c.denominator, K)
    return exact.astype(exponent_dtype(K))


def _int64_fill(gaps: np.ndarray) -> Callable[[int, int, np.ndarray], None]:
    """``fill`` for int64 gaps: ``d_i = fl(g_i)``, a correctly rounded conversion."""
    def fill(start: int, stop: int, out: np.ndarray) -> None:
        out[:] = gaps[start:stop]  # float-ok: correctly rounded conversion, see docstring
    return fill


class ExpCategorical:
    """A prepared exact sampler of ``(i, j)`` with ``P`` proportional to ``exp(-rate * g_i)``, ``j < m_i``.

    ``gaps``: a 1-d int64 or object array of integers ``>= 0``, or a
    :class:`FloatGaps`; ``counts``: ``None`` (every ``m_i = 1``) or a 1-d
    int64/object array of integers ``>= 0``, not all 0 (integer gaps only).
    See the module docstring for the law and proof. Integer gaps whose far
    boundary is at most ``2**16`` use slots (one per gap value, bounds cached
    per ``(rate, K)``); everything else uses at most ``K + 1`` exponent groups.
    """

    def __init__(self, gaps: np.ndarray | FloatGaps, rate: Fraction, counts: np.ndarray | None = None) -> None:
        if rate <= 0:
            raise ValueError("rate must be > 0")
        self.rate = rate
        self.size = len(gaps)
        self.counts = counts
        self._bernoulli: tuple[SlotTable, np.ndarray, Fraction, np.ndarray] | None = None
        present = None if counts is None else counts > 0
        if present is not None and not present.any():
            raise ValueError("at least one entry must have a positive count")
        total_count = self.size if counts is None else int(counts.sum())
        self.K = WORD_BITS * -(-(total_count.bit_length() + _GUARD) // WORD_BITS)
        if isinstance(gaps, FloatGaps) and not gaps.finite:  # a range beyond DBL_MAX: exact integers
            gaps, unit = gaps.integers()
            rate = self.rate = rate * unit
        if isinstance(gaps, FloatGaps):
            if counts is not None:
                raise ValueError("float gaps take no counts")
            self.float_gaps: FloatGaps | None = gaps
            self.gaps: np.ndarray | None = None
            self._groups(envelope_exponents(gaps.approx_into, self.size, rate, self.K), None, total_count)
            return
        self.float_gaps = None
        smallest = gaps[present].min() if present is not None else gaps.min()
        gaps = gaps - smallest if smallest != 0 else gaps
        self.gaps = gaps
        far_from = -(-(self.K + WORD_BITS) * _LN2_UPPER // rate)  # ceil: exp(-rate * far_from) < 2**-(K + 64)
        if far_from <= _DENSE_LIMIT:
            self._slots(gaps, int(far_from), present, total_count)
        elif self.gaps.dtype == object:
            self._groups(exact_envelope_exponents(self.gaps, rate, self.K), present, total_count)
        else:
            self._groups(envelope_exponents(_int64_fill(self.gaps), self.size, rate, self.K), present, total_count)

    # -- slots: one per near gap value, bounds tabulated and cached --------------------------------

    def _slots(self, gaps: np.ndarray, far_from: int, present: np.ndarray | None, total_count: int) -> None:
        """Slot mode, for the (shifted) integer ``gaps`` (:attr:`gaps`)."""
        self.mode = "slots"
        near = gaps < far_from
        if present is not None:
            near &= present
        self.table: SlotTable | None = _DENSE.get(self.rate, self.K, far_from)
        near_slots = gaps[near].astype(np.int64)
        self.far_slot = far_from
        slot_of = np.full(self.size, self.far_slot, dtype=np.int32)
        slot_of[near] = near_slots
        if present is not None:
            slot_of[~present] = -1
        self.slot_of = slot_of
        per_slot = self._per_group(near_slots, None if self.counts is None else self.counts[near], self.far_slot)
        per_slot.append(total_count - sum(per_slot))
        self._masses([c << (self.K - e) for c, e in zip(per_slot, self.table.shift)], self.table.window)

    def _per_group(self, group: np.ndarray, counts: np.ndarray | None, size: int) -> list[int]:
        """Sum of the counts per group index in ``[0, size)``, exactly."""
        if counts is None:
            return np.bincount(group, minlength=size).tolist()
        if int(counts.sum()) < 1 << 53:  # float64 sums of integers below 2**53 are exact
            return np.bincount(group, weights=counts, minlength=size).astype(np.int64).tolist()
        acc = np.zeros(size, dtype=object)
        np.add.at(acc, group, counts.astype(object))
        return [int(c) for c in acc]

    def _masses(self, masses: list[int], window: int) -> None:
        self.ends = list(accumulate(masses))
        self.total = self.ends[-1]
        self.far_share = masses[-1] / self.total  # float-ok: a documented bound, not a decision
        self.slow_path_bound = window * 2.0**-WORD_BITS + self.far_share  # float-ok: documented bound

    # -- exponent groups: at most K + 1, acceptance bounds per proposal ------------------------------

    def _groups(self, exponents: np.ndarray, present: np.ndarray | None, total_count: int) -> None:
        self.mode = "exponents"
        self.table = None
        if present is None:
            per = np.zeros(self.K + 1, dtype=np.int64)
            for start in range(0, self.size, _BLOCK):  # bincount copies its input to intp: keep it small
                per += np.bincount(exponents[start:start + _BLOCK], minlength=self.K + 1)
            per_group = per.tolist()
        else:
            counts = self.counts
            assert counts is not None  # present is None exactly when counts is None
            exponents[~present] = self.K + 1  # matches no group
            per_group = self._per_group(exponents[present], counts[present], self.K + 1)
        self.slot_of = exponents
        self.far_slot = self.K
        self._rate_q = to_mpq(self.rate)
        self._masses([c << (self.K - e) for e, c in enumerate(per_group)], 2)

    def _integer_gaps(self) -> np.ndarray:
        """:attr:`gaps`, which is set whenever :attr:`float_gaps` is not (always in slot mode)."""
        gaps = self.gaps
        assert gaps is not None  # __init__ sets exactly one of gaps and float_gaps
        return gaps

    def _x(self, i: int) -> Any:
        """``rate * g_i`` exactly (an mpq)."""
        gap = self.float_gaps.exact(i) if self.float_gaps is not None else int(self._integer_gaps()[i])
        return self._rate_q * gap

    def _bounds(self, x: Any, e: int) -> tuple[int, int]:
        """Integers ``lo <= exp(-x) * 2**(e + 64) <= hi``: the same MPFR operations for every ``x >= 0``."""
        with rounding_context(_PREC, gmpy2.RoundDown):
            y_down = gmpy2.mpfr(x) + 1
        with rounding_context(_PREC, gmpy2.RoundUp):
            y_up = gmpy2.mpfr(x) + 1
            high = gmpy2.ceil(gmpy2.mul_2exp(gmpy2.exp(-y_down) * _E_HI, e + WORD_BITS))
        with rounding_context(_PREC, gmpy2.RoundDown):
            low = gmpy2.floor(gmpy2.mul_2exp(gmpy2.exp(-y_up) * _E_LO, e + WORD_BITS))
        return int(low), int(high)

    # -- drawing -----------------------------------------------------------------------------------

    def _locate(self, slot: int, position: int) -> tuple[int, int]:
        """The entry holding point ``position`` of ``slot``, and the offset inside it.

        The same array operations on arrays of the same size whatever the slot, its size or the
        position: one comparison pass, one cumulative count over every entry, one binary search.
        (0.1 took ``flatnonzero(mask)[position]``, which allocates an array as large as the slot:
        its cost revealed how many candidates share the winner's score.)
        """
        mask = self.slot_of == slot
        if self.counts is None:
            cumulative = np.cumsum(mask, dtype=np.int64)
            return int(np.searchsorted(cumulative, position, side="right")), 0
        cumulative = np.cumsum(np.where(mask, self.counts, 0))
        i = int(np.searchsorted(cumulative, position, side="right"))
        return i, position - (int(cumulative[i - 1]) if i else 0)

    def draw(self, source: RandomSource) -> tuple[int, int]:
        """One exact draw of ``(i, j)``."""
        if self.table is None:
            return self._draw_grouped(source)
        table = self.table
        while True:
            v = uniform_below_one(self.total, source)
            slot = bisect_right(self.ends, v)
            position = (v - (self.ends[slot - 1] if slot else 0)) >> (self.K - table.shift[slot])
            located = self._locate(slot, position) if slot == self.far_slot else None
            u = source.word()
            if u >= table.hi[slot]:
                continue
            if u < table.lo[slot] or resolve_below(self._acceptance(table, slot, located), u, WORD_BITS, source):
                return located if located is not None else self._locate(slot, position)

    def _draw_grouped(self, source: RandomSource) -> tuple[int, int]:
        while True:
            v = uniform_below_one(self.total, source)
            e = bisect_right(self.ends, v)
            position = (v - (self.ends[e - 1] if e else 0)) >> (self.K - e)
            located = self._locate(e, position)
            x = self._x(located[0])
            low, high = self._bounds(x, e)
            u = source.word()
            if u >= high:
                continue
            if u < low or resolve_below(exp_neg_real(x, e), u, WORD_BITS, source):
                return located

    def _acceptance(self, table: SlotTable, slot: int, located: tuple[int, int] | None) -> Real:
        gap = int(self._integer_gaps()[located[0]]) if located is not None else table.values[slot]
        return weight_real(self.rate, gap, table.shift[slot])

    # -- independent coins ---------------------------------------------------------------------------

    def prepare_bernoulli(self) -> None:
        """Tabulate the per-entry bounds :meth:`bernoulli_all` needs (done once, on first use otherwise)."""
        self._bernoulli_plan()

    def _bernoulli_plan(self) -> tuple[SlotTable, np.ndarray, Fraction, np.ndarray]:
        """The slot table, slot per entry, rate and integer gaps of :meth:`bernoulli_all`, built once."""
        if self._bernoulli is None:
            self._bernoulli = self._build_bernoulli()
        return self._bernoulli

    def _build_bernoulli(self) -> tuple[SlotTable, np.ndarray, Fraction, np.ndarray]:
        if self.table is not None:
            return self.table, self.slot_of, self.rate, self._integer_gaps()
        if self.float_gaps is not None:
            gaps, unit = self.float_gaps.integers()
            rate = self.rate * unit
        else:
            gaps, rate = self._integer_gaps(), self.rate
        far_from = -(-(self.K + WORD_BITS) * _LN2_UPPER // rate)
        if gaps.dtype != object:
            far_from = min(far_from, np.iinfo(np.int64).max)
        near = gaps < far_from
        if self.counts is not None:
            near &= self.counts > 0
        values = np.unique(gaps[near])
        table = SlotTable(rate, self.K, [int(v) for v in values])
        slot_of = np.full(self.size, len(values), dtype=np.int64)
        slot_of[near] = np.searchsorted(values, gaps[near])
        return table, slot_of, rate, gaps

    def bernoulli_all(self, source: RandomSource) -> np.ndarray:
        """Independent exact draws ``B_i ~ Bernoulli(exp(-rate * g_i))`` for every entry (after the shift)."""
        table, slot_of, rate, gaps = self._bernoulli_plan()
        slots = np.where(slot_of < 0, len(table.values), slot_of)
        low, high = table.lo64[slots], table.hi64m1[slots]
        u = source.words(self.size)
        heads = u < low
        for e in np.flatnonzero((u >= low) & (u <= high)):
            heads[e] = resolve_below(weight_real(rate, int(gaps[e])), int(u[e]), WORD_BITS, source)
        return heads
