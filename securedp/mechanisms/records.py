"""Numeric records onto the lattice, with the contribution bound applied: shared by sum, mean, variance."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.exact.rational import to_rational
from securedp.lattice import Lattice, screen_units, unit_bound
from securedp.mechanisms.contributions import bound_rows, data_policy


@dataclass(frozen=True)
class LatticeRecords:
    """The kept records as clamped units in ``[lo_u, hi_u]`` of ``lattice``."""

    lattice: Lattice
    lo: Fraction
    hi: Fraction
    lo_u: int
    hi_u: int
    units: np.ndarray

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


def resolve_lattice(lattice: Any, lo: Fraction, hi: Fraction) -> Lattice:
    """``lattice`` (a Lattice or a step), or by default ``Lattice.for_bounds(lo, hi)`` (step 1 if lo == hi)."""
    if lattice is not None:
        return lattice if isinstance(lattice, Lattice) else Lattice(lattice)
    return Lattice.for_bounds(lo, hi) if lo < hi else Lattice(1)


def lattice_records(
    data: Any, *, bounds: Any, lattice: Any, ids: Any, max_contributions: int, missing: str, fill: Any
) -> LatticeRecords:
    """Validate, screen, clamp and round every record; then enforce the contribution bound.

    In an analyst-facing preparation (:func:`~securedp.mechanisms.contributions.analyst_facing`)
    ``missing="raise"`` acts as ``"drop"`` and a record that is a row (a
    tuple ...) is unusable like any other, so no error depends on the records.
    """
    lo, hi = parse_bounds(bounds)
    lat = resolve_lattice(lattice, lo, hi)
    lo_u, hi_u = lat.bounds_units(lo, hi)
    policy, refuse_rows = data_policy(missing)
    units, usable = screen_units(data, lat.step, lo_u, hi_u, missing=policy, fill=fill, refuse_rows=refuse_rows)
    keep = bound_rows(units.size, ids, max_contributions, usable)
    if keep is not None:
        units = units[keep]
    return LatticeRecords(lat, lo, hi, lo_u, hi_u, units)


def exact_value(q: Fraction) -> int | Fraction:
    """``q`` as an ``int`` when it is integral, else the Fraction."""
    return q.numerator if q.denominator == 1 else q
