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
        default: Callable[[Any, Any], Any] | None = None, typed: Fraction | None = None,
    ) -> LatticeColumn:
        """Validate the public arguments (``max_contributions`` first, then ``bounds``, then ``lattice``).

        Without a ``lattice``, a column whose declared type states a grid ``typed`` (1 for integers, ``10**-s`` for
        a decimal of scale ``s``: :func:`securedp.reading.types.typed_step`) takes that step (:func:`typed_lattice`);
        otherwise ``default(lattice, bounds)``, when given, chooses the lattice (the quantiles' rule), else
        :func:`resolve_lattice`'s rule applies.
        """
        m = positive_count(max_contributions, "max_contributions")
        lattice = typed_lattice(lattice, bounds, typed)
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


TYPED_REACH = 1 << 62
"""A typed column's default step (its declared grid) applies while its bounds stay within ``±TYPED_REACH`` units
(as lattice units they must: tables refuse bounds of ``2**62`` units or more); wider bounds keep the bounds' rule."""


def typed_lattice(lattice: Any, bounds: Any, typed: Fraction | None) -> Any:
    """``lattice`` when given; for a column whose declared type states the grid ``typed`` (a type, never the
    cells: :func:`securedp.reading.types.typed_step`), that step.

    **Rule:** a column without a lattice whose type declares a grid, step 1 for an integer type and ``10**-s``
    for a decimal of scale ``s``, has that step when both bounds lie strictly within ``±2**62`` of its units, so
    integer data stay integers (a sum of whole hours is a whole number of hours, a median of years of schooling
    a whole year), cents stay cents (a tail quantile of prices selects among whole cents, not among the points of
    the gaps between them) and no record is rounded. Otherwise, and for every other column, ``lattice`` is
    returned as given (``None``: the statistic's rule from the bounds alone). The step is a power of ten of a
    scale of at most 76 digits (Arrow's ``decimal256``), well within the declared bound of a lattice step
    (:data:`securedp.hazmat.exact.bounds.PARAMETER_BITS`).
    """
    if lattice is not None or typed is None or isinstance(bounds, str):
        return lattice
    lo, hi = parse_bounds(bounds)
    return typed if max(abs(lo), abs(hi)) < TYPED_REACH * typed else None


def resolve_lattice(lattice: Any, lo: Fraction, hi: Fraction) -> Lattice:
    """``lattice`` (a Lattice or a step), or by default ``Lattice.for_bounds(lo, hi)`` (step 1 if lo == hi)."""
    if lattice is not None:
        return lattice if isinstance(lattice, Lattice) else Lattice(lattice)
    return Lattice.for_bounds(lo, hi) if lo < hi else Lattice(1)


def exact_value(q: Fraction) -> int | Fraction:
    """``q`` as an ``int`` when it is integral, else the Fraction."""
    return q.numerator if q.denominator == 1 else q
