"""Rigorous bounds on irrational numbers, by interval arithmetic with directed rounding.

An :class:`Interval` holds two gmpy2 ``mpfr`` numbers ``lo <= x <= hi``. Each
operation computes its lower end rounding toward -infinity and its upper end
rounding toward +infinity (MPFR's correctly rounded functions make this
sound), so the true value of any expression built from rationals, +, -, *, /
and ``exp`` lies inside the interval computed for it, at every precision.

A :class:`Real` is a number known only through such bounds: it can be asked
for the integers ``L <= x * 2**k <= H`` with ``H - L <= 1`` for any ``k``,
raising the working precision until the bounds are that tight. That is all
the samplers need to compare a uniform random number with an irrational
threshold exactly (see :mod:`securedp.hazmat.samplers.decide`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import gmpy2

_EMAX = gmpy2.get_emax_max()
_EMIN = gmpy2.get_emin_min()


@functools.lru_cache(maxsize=64)
def rounding_context(prec: int, rounding: Any) -> Any:
    """A gmpy2 context of ``prec`` bits rounding in direction ``rounding``, with the widest exponent range, built
    once per pair (3 us, more than most operations it rounds): ``with`` enters a copy of it (gmpy2 2.1+), so the
    code inside can never change the cached one."""
    return gmpy2.context(precision=prec, round=rounding, emax=_EMAX, emin=_EMIN)


class Interval:
    """A closed interval ``[lo, hi]`` of mpfr numbers at working precision ``prec``."""

    __slots__ = ("hi", "lo", "prec")

    def __init__(self, lo: Any, hi: Any, prec: int) -> None:
        self.lo = lo
        self.hi = hi
        self.prec = prec

    @classmethod
    def exact(cls, value: Any, prec: int) -> Interval:
        """The tightest interval around a rational (Fraction, int or mpq) at precision ``prec``."""
        q = gmpy2.mpq(value.numerator, value.denominator) if isinstance(value, Fraction) else gmpy2.mpq(value)
        with rounding_context(prec, gmpy2.RoundDown):
            lo = gmpy2.mpfr(q)
        with rounding_context(prec, gmpy2.RoundUp):
            hi = gmpy2.mpfr(q)
        return cls(lo, hi, prec)

    def _make(self, lo_fn: Callable[[], Any], hi_fn: Callable[[], Any]) -> Interval:
        with rounding_context(self.prec, gmpy2.RoundDown):
            lo = lo_fn()
        with rounding_context(self.prec, gmpy2.RoundUp):
            hi = hi_fn()
        return Interval(lo, hi, self.prec)

    def _coerce(self, other: Any) -> Interval:
        if isinstance(other, Interval):
            return other
        return Interval.exact(Fraction(other), self.prec)

    def __add__(self, other: Any) -> Interval:
        o = self._coerce(other)
        return self._make(lambda: self.lo + o.lo, lambda: self.hi + o.hi)

    __radd__ = __add__

    def __neg__(self) -> Interval:
        # Negation rounds to the *current* context's precision (53 bits by default): do it at ours.
        return self._make(lambda: -self.hi, lambda: -self.lo)

    def __sub__(self, other: Any) -> Interval:
        return self + (-self._coerce(other))

    def __rsub__(self, other: Any) -> Interval:
        return self._coerce(other) + (-self)

    def __mul__(self, other: Any) -> Interval:
        o = self._coerce(other)
        pairs = ((self.lo, o.lo), (self.lo, o.hi), (self.hi, o.lo), (self.hi, o.hi))
        return self._make(lambda: min(a * b for a, b in pairs), lambda: max(a * b for a, b in pairs))

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Interval:
        o = self._coerce(other)
        if not o.lo > 0:
            raise ZeroDivisionError("interval divisor must be positive")
        pairs = ((self.lo, o.lo), (self.lo, o.hi), (self.hi, o.lo), (self.hi, o.hi))
        return self._make(lambda: min(a / b for a, b in pairs), lambda: max(a / b for a, b in pairs))

    def __rtruediv__(self, other: Any) -> Interval:
        return self._coerce(other) / self

    def __pow__(self, k: int) -> Interval:
        """Integer power of a non-negative interval (``x**k`` is increasing there)."""
        if not self.lo >= 0 or k < 0:
            raise ValueError("power defined here for non-negative intervals and exponents")
        return self._make(lambda: self.lo**k, lambda: self.hi**k)

    def exp(self) -> Interval:
        """``exp`` is increasing, so the ends map to the ends."""
        return self._make(lambda: gmpy2.exp(self.lo), lambda: gmpy2.exp(self.hi))

    def log(self) -> Interval:
        """``log`` is increasing on the positive reals, so the ends map to the ends."""
        if not self.lo > 0:
            raise ValueError("log defined here for positive intervals")
        return self._make(lambda: gmpy2.log(self.lo), lambda: gmpy2.log(self.hi))

    def sqrt(self) -> Interval:
        """``sqrt`` is increasing on the non-negative reals, so the ends map to the ends."""
        if not self.lo >= 0:
            raise ValueError("sqrt defined here for non-negative intervals")
        return self._make(lambda: gmpy2.sqrt(self.lo), lambda: gmpy2.sqrt(self.hi))

    @property
    def upper(self) -> Fraction:
        """The upper end as an exact rational (every mpfr number is one)."""
        return _fraction(self.hi)

    @property
    def lower(self) -> Fraction:
        """The lower end as an exact rational."""
        return _fraction(self.lo)

    def __repr__(self) -> str:
        return f"Interval({self.lo}, {self.hi})"


def _fraction(x: Any) -> Fraction:
    n, d = x.as_integer_ratio()
    return Fraction(int(n), int(d))


def floor_scaled(x: Any, k: int, prec: int) -> int:
    """``floor(x * 2**k)`` for an mpfr ``x`` (the scaling is exact)."""
    with rounding_context(prec, gmpy2.RoundDown):
        return int(gmpy2.floor(gmpy2.mul_2exp(x, k)))


def ceil_scaled(x: Any, k: int, prec: int) -> int:
    """``ceil(x * 2**k)`` for an mpfr ``x`` (the scaling is exact)."""
    with rounding_context(prec, gmpy2.RoundUp):
        return int(gmpy2.ceil(gmpy2.mul_2exp(x, k)))


def describe(q: Any) -> str:
    """Short text for a rational in names and messages: exact when small, else its size.

    ``str`` of an integer of more than 4,300 digits raises (CPython's limit on
    int-to-text conversion), and a name is never worth that much text anyway.
    """
    q = Fraction(q)
    if max(q.numerator.bit_length(), q.denominator.bit_length()) <= 256:
        return str(q)
    size = q.numerator.bit_length() - q.denominator.bit_length()
    return f"{'-' if q < 0 else ''}a rational of about 2**{size}"


class Real:
    """A real number given by rigorous interval bounds at any precision.

    ``bound(prec)`` must return an :class:`Interval` containing the number,
    whose width shrinks towards 0 as ``prec`` grows. Rationals are exact.

    Interval bounds never collapse onto a number that is *exactly* a dyadic
    rational ``m / 2**k`` unless MPFR represents it exactly at every step
    (``1/4`` computed as ``(1/3) / (1 + 1/3)`` does not), so a real that may be
    dyadic must say so: ``dyadic(k)`` returns ``x * 2**k`` when that is an
    integer and ``None`` when it is not (exactly, never from a float).
    :meth:`floor_ceil` then answers such ``k`` exactly instead of raising the
    precision forever. Irrational reals (``exp`` of a non-zero rational and
    rational functions of it) need no hook.
    """

    __slots__ = ("_bound", "_dyadic", "_exact", "name")

    def __init__(self, bound: Callable[[int], Interval], name: str = "real",
                 dyadic: Callable[[int], int | None] | None = None) -> None:
        self._bound = bound
        self._exact: Fraction | None = None
        self._dyadic = dyadic
        self.name = name

    @classmethod
    def rational(cls, value: Fraction | int) -> Real:
        """A real that is exactly the rational ``value``."""
        q = Fraction(value)
        real = cls(lambda prec: Interval.exact(q, prec), name=describe(q))
        real._exact = q
        return real

    @property
    def exact(self) -> Fraction | None:
        """The value when it is a known rational, else ``None``."""
        return self._exact

    def floor_ceil(self, k: int) -> tuple[int, int]:
        """Integers ``L <= x * 2**k <= H`` with ``H - L <= 1``."""
        if self._exact is not None:
            num = self._exact.numerator << k if k >= 0 else self._exact.numerator
            den = self._exact.denominator if k >= 0 else self._exact.denominator << -k
            low = num // den
            return low, low if low * den == num else low + 1
        if self._dyadic is not None:
            scaled = self._dyadic(k)
            if scaled is not None:
                return scaled, scaled
        prec = max(k, 0) + 64
        while True:
            iv = self._bound(prec)
            low = floor_scaled(iv.lo, k, prec)
            high = ceil_scaled(iv.hi, k, prec)
            if high - low <= 1:
                return low, high
            prec *= 2
            if prec > 1 << 24:
                raise ArithmeticError(f"cannot bound {self.name} to {k} bits")

    def interval(self, prec: int) -> Interval:
        """Bounds on the number at working precision ``prec``."""
        return self._bound(prec)

    def __repr__(self) -> str:
        return f"Real({self.name})"


def exp_neg(x: Any, shift: int = 0) -> Real:
    """The real ``exp(-x) * 2**shift`` for a rational ``x`` (Fraction, int or gmpy2 mpq).

    The one definition every sampler's resolver reads bits of (the scaling by
    ``2**shift`` is exact).
    """
    if shift == 0:
        return Real(lambda prec: (-Interval.exact(x, prec)).exp(), name=f"exp(-{describe(x)})")
    scale = 1 << shift
    return Real(lambda prec: (-Interval.exact(x, prec)).exp() * scale, name=f"exp(-{describe(x)})*2**{shift}")


def logistic_neg(y: Fraction) -> Real:
    """``1 / (1 + exp(y))`` for a rational ``y`` (the probability q/(1+q) with q = exp(-y))."""
    return Real(lambda prec: 1 / (1 + Interval.exact(y, prec).exp()), name=f"1/(1+exp({describe(y)}))")
