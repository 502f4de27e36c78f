"""The fixed-point lattice: values are integers ("units") times a public step.

A :class:`Lattice` is fixed by its ``step``, a positive rational declared by
the caller (``Lattice(step)``, ``Lattice.binary(k)`` for ``2**-k``,
``Lattice.decimal(d)`` for ``10**-d``) or derived from public bounds
(:meth:`Lattice.for_bounds`), never from the data. Every record is mapped to
an integer number of units by

1. *screening* (cheap, per record, see :mod:`securedp.lattice.screen`),
2. *clamping* to the bounds ``[lo, hi]`` (snapped inward onto the lattice),
3. *rounding* ``x / step`` to the nearest integer, ties to even.

Because the snapped bounds are lattice points, rounding a clamped value can
never leave ``[lo_units, hi_units]``: a record contributes a unit count in
that interval *exactly*, and that is what the sensitivities use.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.exact import bounds
from securedp.hazmat.exact.kernels import round_half_even
from securedp.hazmat.exact.rational import format_rational, positive_rational, to_int, to_rational
from securedp.lattice.screen import screen_units

DEFAULT_RESOLUTION = 1 << 16
""":meth:`Lattice.for_bounds` picks a step giving at least this many steps across ``[lo, hi]``."""


class Lattice:
    """Integers times ``step``: the values a fixed-point release works on.

    ``step`` is any rational > 0 accepted by
    :func:`~securedp.hazmat.exact.rational.to_rational` (``"0.01"`` is one
    hundredth exactly; the float ``0.01`` is its binary value). Lattices are
    immutable, hashable and compare by step.
    """

    __slots__ = ("_den", "_num", "step")

    def __init__(self, step: Any) -> None:
        if isinstance(step, Lattice):
            step = step.step
        self.step: Fraction = bounds.parameter(positive_rational(step, "step"), "lattice step")
        self._num = self.step.numerator
        self._den = self.step.denominator

    @classmethod
    def binary(cls, k: Any) -> Lattice:
        """The lattice of step ``2**-k`` (``k`` an integer, possibly negative)."""
        k = to_int(k, "k")
        return cls(Fraction(1, 1 << k) if k >= 0 else Fraction(1 << -k))

    @classmethod
    def decimal(cls, d: Any) -> Lattice:
        """The lattice of step ``10**-d`` (``d`` an integer, possibly negative)."""
        d = to_int(d, "d")
        return cls(Fraction(1, 10**d) if d >= 0 else Fraction(10**-d))

    @classmethod
    def for_bounds(cls, lo: Any, hi: Any, resolution: int = DEFAULT_RESOLUTION) -> Lattice:
        """The step derived from public bounds alone.

        **Rule:** the coarsest power of two ``2**-k`` (``k`` any integer) such
        that ``[lo, hi]`` spans at least ``resolution`` steps:
        ``(hi - lo) * 2**k >= resolution``. With the default ``2**16`` a
        record is rounded by at most ``(hi - lo) / 2**17``. A power-of-two
        step keeps the float fast path exact. ``lo < hi`` is required.
        """
        lo_q, hi_q = _ordered_bounds(lo, hi)
        if lo_q == hi_q:
            raise ValueError("cannot derive a step from equal bounds; pass a lattice explicitly")
        resolution = to_int(resolution, "resolution")
        if resolution < 1:
            raise ValueError("resolution must be >= 1")
        ratio = Fraction(resolution) / (hi_q - lo_q)  # need 2**k >= ratio
        k = ratio.numerator.bit_length() - ratio.denominator.bit_length() - 1
        while Fraction(2) ** k < ratio:
            k += 1
        while Fraction(2) ** (k - 1) >= ratio:
            k -= 1
        return cls.binary(k)

    @property
    def is_binary(self) -> bool:
        """True when the step is a power of two (the float fast path is then exact)."""
        n, d = self._num, self._den
        return n & (n - 1) == 0 and d & (d - 1) == 0

    def units(self, value: Any) -> int:
        """``value / step`` rounded to the nearest integer, ties to even (exact; no clamping)."""
        q = to_rational(value, "value")
        return round_half_even(q.numerator * self._den, q.denominator * self._num)

    def value(self, units: Any) -> Fraction:
        """The exact value ``units * step``."""
        if isinstance(units, (bool, np.bool_)) or not isinstance(units, (int, np.integer)):
            raise TypeError(f"units must be an integer, got {type(units).__name__}")
        return int(units) * self.step

    def bounds_units(self, lo: Any, hi: Any) -> tuple[int, int]:
        """Bounds as units, **snapped inward**: ``(ceil(lo / step), floor(hi / step))``.

        Bounds already on the lattice are kept exactly; others move inward to
        the nearest lattice point, so clamping to the snapped bounds never
        produces a value outside ``[lo, hi]``. Raises :class:`ValueError` if
        ``lo > hi`` or no lattice point lies in ``[lo, hi]``.
        """
        lo_q, hi_q = _ordered_bounds(lo, hi)
        lo_u = -((-lo_q.numerator * self._den) // (lo_q.denominator * self._num))
        hi_u = (hi_q.numerator * self._den) // (hi_q.denominator * self._num)
        if lo_u > hi_u:
            raise ValueError(
                f"no point of the lattice of step {format_rational(self.step)} lies in the bounds "
                f"[{format_rational(lo_q)}, {format_rational(hi_q)}]"
            )
        return lo_u, hi_u

    def clamp_units(
        self, data: Any, lo: Any, hi: Any, *, missing: str = "raise", fill: Any = None
    ) -> np.ndarray:
        """Every record of ``data`` as clamped lattice units.

        Records are screened cheaply (an absurd record such as ``10**400``,
        ``float('inf')`` or a Fraction with enormous terms is recognised as
        out of range from its size alone and simply clamped), clamped to the
        snapped bounds, then rounded to the nearest unit, ties to even.
        Returns an ``int64`` array, or an object array of Python ints when
        the bounds exceed the int64 range.

        Unusable records (``None``, NaN, pandas NA, non-numeric strings,
        bools, other objects) raise :class:`ValueError` naming the first one
        (``missing="raise"``, the default), are removed (``missing="drop"``),
        or are replaced by ``fill`` before clamping (``missing="impute"``).
        """
        lo_u, hi_u = self.bounds_units(lo, hi)
        return screen_units(data, self.step, lo_u, hi_u, missing=missing, fill=fill)[0]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Lattice) and other.step == self.step

    def __hash__(self) -> int:
        return hash(("Lattice", self.step))

    def __repr__(self) -> str:
        return f"Lattice({format_rational(self.step)!r})"


def _ordered_bounds(lo: Any, hi: Any) -> tuple[Fraction, Fraction]:
    lo_q, hi_q = to_rational(lo, "lo"), to_rational(hi, "hi")
    if lo_q > hi_q:
        raise ValueError(f"bounds are reversed: lo={format_rational(lo_q)} > hi={format_rational(hi_q)}")
    return lo_q, hi_q


def unit_bound(lo_u: int, hi_u: int) -> int:
    """``max(|lo_u|, |hi_u|)``: the largest magnitude a clamped record can have, in units."""
    return max(abs(lo_u), abs(hi_u))


