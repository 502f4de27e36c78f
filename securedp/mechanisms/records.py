"""Numeric records onto the lattice, with the contribution bound applied: shared by sum, mean, variance, quantiles."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.exact.rational import to_rational
from securedp.lattice import Lattice, screen_units, unit_bound
from securedp.mechanisms.contributions import PendingRows, bound_rows, check_max_contributions, data_policy


@dataclass(frozen=True)
class LatticeColumn:
    """The public reading of one numeric column: lattice, bounds, contribution bound and missing-value policy.

    Built from the public arguments alone (:meth:`of`), before any data is
    read; :meth:`units` is then step (1) of every lattice statistic: each
    record screened, clamped to ``[lo, hi]`` and rounded to an integer unit in
    ``[lo_u, hi_u]``, and each person's rows cut to ``max_contributions`` (the
    choice among an over-bound person's rows pending on the release's salt).
    """

    lattice: Lattice
    lo: Fraction
    hi: Fraction
    lo_u: int
    hi_u: int
    max_contributions: int
    missing: str = "raise"
    fill: Any = None

    @classmethod
    def of(
        cls, *, bounds: Any, lattice: Any, max_contributions: Any, missing: str, fill: Any,
        default: Callable[[Any, Any], Any] | None = None, integer: bool = False,
    ) -> LatticeColumn:
        """Validate the public arguments (``max_contributions`` first, then ``bounds``, then ``lattice``).

        Without a ``lattice``, an ``integer`` column (its declared type:
        :func:`securedp.reading.types.integer_typed`) takes step 1 (:func:`typed_lattice`); otherwise
        ``default(lattice, bounds)``, when given, chooses the lattice (the quantiles' rule), else
        :func:`resolve_lattice`'s rule applies.
        """
        m = check_max_contributions(max_contributions)
        lattice = typed_lattice(lattice, bounds, integer)
        if default is not None:
            lattice = default(lattice, bounds)
        lo, hi = parse_bounds(bounds)
        lat = resolve_lattice(lattice, lo, hi)
        lo_u, hi_u = lat.bounds_units(lo, hi)
        check_missing_policy(lat.step, lo_u, hi_u, missing, fill)
        return cls(lat, lo, hi, lo_u, hi_u, m, missing, fill)

    @property
    def bound(self) -> int:
        """``max(|lo_u|, |hi_u|)``: the largest magnitude of one record, in units."""
        return unit_bound(self.lo_u, self.hi_u)

    def parameters(self) -> dict[str, Any]:
        return {
            "lattice_step": self.lattice.step,
            "bounds": (self.lo, self.hi),
            "bounds_units": (self.lo_u, self.hi_u),
        }

    def units(self, data: Any, ids: Any = None) -> tuple[np.ndarray, PendingRows | None]:
        """``(settled, pending)``: the records as clamped units (int64, or Python ints past int64), in data
        order, with the contribution bound applied as far as it goes before the salt.

        Without ``ids`` every usable record is settled and ``pending`` is
        None. With ``ids``, ``settled`` holds the units of the persons with at
        most ``max_contributions`` usable records and ``pending`` the records
        of the others, among which the release's salt keeps
        ``max_contributions`` each (:mod:`securedp.mechanisms.contributions`).
        In an analyst-facing preparation (:func:`~securedp.mechanisms.contributions.analyst_facing`)
        ``missing="raise"`` acts as ``"drop"`` and a record that is a row (a
        tuple ...) is unusable like any other, so no error depends on the records.
        """
        policy, refuse_rows = data_policy(self.missing)
        units, usable = screen_units(data, self.lattice.step, self.lo_u, self.hi_u, missing=policy, fill=self.fill,
                                     refuse_rows=refuse_rows)
        bounded = bound_rows(units.size, ids, self.max_contributions, usable)
        if bounded is None:
            return units, None
        return units[bounded.settled], bounded.choices(units)


def check_missing_policy(step: Fraction, lo_u: int, hi_u: int, missing: str, fill: Any) -> None:
    """Validate ``missing`` and ``fill`` as :func:`~securedp.lattice.screen_units` does, before any data is read.

    They are public arguments: checking them on no records raises exactly
    the error the screen would raise, while the data is still untouched (the
    analyst-facing error boundary passes such errors through,
    :mod:`securedp.accounting.boundary`).
    """
    screen_units((), step, lo_u, hi_u, missing=missing, fill=fill)


def parse_bounds(bounds: Any) -> tuple[Fraction, Fraction]:
    """``bounds=(lo, hi)`` as exact rationals with ``lo <= hi``."""
    if bounds is None:
        raise TypeError("bounds=(lo, hi) is required: public bounds on one record")
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise TypeError("bounds must be a pair (lo, hi)") from None
    lo_q, hi_q = to_rational(lo, "bounds lower bound"), to_rational(hi, "bounds upper bound")
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
