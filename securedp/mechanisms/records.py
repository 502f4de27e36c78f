"""The public reading of one numeric column: its lattice, bounds and contribution bound (sum, mean, quantiles ...)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from securedp.bounding.limits import positive_count
from securedp.hazmat.exact import bounds as bounds_module
from securedp.hazmat.exact.rational import to_rational
from securedp.lattice import Lattice, screen_units, unit_bound
from securedp.reading.columns import refuse_unordered


@dataclass(frozen=True)
class LatticeColumn:
    """The public reading of one numeric column: lattice, bounds and contribution bound.

    Built from the public arguments alone (:meth:`of`), before any data is read. A record becomes
    ``round_half_even(clamp(x, lo, hi) / step)``, an integer unit in ``[lo_u, hi_u]``
    (:func:`securedp.lattice.screen_units`, run by the engine that reads the column), and each person
    keeps at most ``max_contributions`` rows in a cell.
    """

    lattice: Lattice
    lo: Fraction
    hi: Fraction
    lo_u: int
    hi_u: int
    max_contributions: int

    @classmethod
    def of(
        cls, *, bounds: Any, lattice: Any, max_contributions: Any,
        default: Callable[[Any, Any], Any] | None = None, integer: bool = False,
    ) -> LatticeColumn:
        """Validate the public arguments (``max_contributions`` first, then ``bounds``, then ``lattice``).

        Without a ``lattice``, an ``integer`` column (its declared type:
        :func:`securedp.reading.types.integer_typed`) takes step 1 (:func:`typed_lattice`); otherwise
        ``default(lattice, bounds)``, when given, chooses the lattice (the quantiles' rule), else
        :func:`resolve_lattice`'s rule applies.
        """
        m = positive_count(max_contributions, "max_contributions")
        lattice = typed_lattice(lattice, bounds, integer)
        if default is not None:
            lattice = default(lattice, bounds)
        lo, hi = parse_bounds(bounds)
        lat = resolve_lattice(lattice, lo, hi)
        lo_u, hi_u = lat.bounds_units(lo, hi)
        return cls(lat, lo, hi, lo_u, hi_u, m)

    @property
    def bound(self) -> int:
        """``max(|lo_u|, |hi_u|)``: the largest magnitude of one record, in units."""
        return unit_bound(self.lo_u, self.hi_u)


def check_missing_policy(step: Fraction, lo_u: int, hi_u: int, missing: str, fill: Any) -> None:
    """Validate ``missing`` and ``fill`` as :func:`~securedp.lattice.screen_units` does, before any data is read.

    They are public arguments: checking them on no records raises exactly
    the error the screen would raise, while the data is still untouched (the
    analyst-facing error boundary passes such errors through,
    :mod:`securedp.session.boundary`).
    """
    screen_units((), step, lo_u, hi_u, missing=missing, fill=fill)


def parse_bounds(bounds: Any) -> tuple[Fraction, Fraction]:
    """``bounds=(lo, hi)`` as exact rationals with ``lo <= hi``."""
    if bounds is None:
        raise TypeError("bounds=(lo, hi) is required: public bounds on one record")
    refuse_unordered(bounds, "bounds")
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise TypeError("bounds must be a pair (lo, hi)") from None
    lo_q = bounds_module.parameter(to_rational(lo, "bounds lower bound"), "bounds lower bound")
    hi_q = bounds_module.parameter(to_rational(hi, "bounds upper bound"), "bounds upper bound")
    if lo_q > hi_q:
        raise ValueError(f"bounds are reversed: lo={lo_q} > hi={hi_q}")
    return lo_q, hi_q


INTEGER_REACH = 1 << 62
"""An integer column's default step is 1 while its bounds stay within ``±INTEGER_REACH`` (as lattice units
they must: tables refuse bounds of ``2**62`` units or more); wider bounds keep the bounds' rule."""


def typed_lattice(lattice: Any, bounds: Any, integer: bool) -> Any:
    """``lattice`` when given; for an ``integer`` column (a declared type, never the cells), step 1.

    **Rule:** an integer column without a lattice has step 1 when both bounds lie strictly within
    ``±2**62``, so integer data stay integers (a sum of whole hours is a whole number of hours, a
    median of years of schooling a whole year) and no record is rounded. Otherwise, and for every other
    column, ``lattice`` is returned as given (``None``: the statistic's rule from the bounds alone).
    """
    if lattice is not None or not integer or isinstance(bounds, str):
        return lattice
    lo, hi = parse_bounds(bounds)
    return Fraction(1) if max(abs(lo), abs(hi)) < INTEGER_REACH else None


def resolve_lattice(lattice: Any, lo: Fraction, hi: Fraction) -> Lattice:
    """``lattice`` (a Lattice or a step), or by default ``Lattice.for_bounds(lo, hi)`` (step 1 if lo == hi)."""
    if lattice is not None:
        return lattice if isinstance(lattice, Lattice) else Lattice(lattice)
    return Lattice.for_bounds(lo, hi) if lo < hi else Lattice(1)


def exact_value(q: Fraction) -> int | Fraction:
    """``q`` as an ``int`` when it is integral, else the Fraction."""
    return q.numerator if q.denominator == 1 else q
