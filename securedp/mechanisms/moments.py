"""Centred noisy moments shared by mean and variance.

Units are centred at the public lattice point ``c = floor((lo_u + hi_u) / 2)``
so that one record moves the centred sum by at most
``half = max(hi_u - c, c - lo_u)`` units, about half of what the uncentred
sum allows. The shares of the budget and the sensitivities are stated in
:mod:`securedp.mechanisms.mean` and :mod:`securedp.mechanisms.variance`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from securedp.lattice import exact_sum, exact_sum_of_squares
from securedp.lattice.screen import INT64_MAX
from securedp.mechanisms.records import LatticeRecords


def centre(rec: LatticeRecords) -> tuple[int, int]:
    """``(c, half)``: the centre in units and the largest ``|u - c|`` of a clamped record."""
    c = (rec.lo_u + rec.hi_u) // 2
    return c, max(rec.hi_u - c, c - rec.lo_u)


def clamp_fraction(x: Fraction, lo: Fraction | int, hi: Fraction | int) -> Fraction:
    """``x`` clamped to ``[lo, hi]``."""
    return Fraction(min(max(x, lo), hi))


def centred_sums(rec: LatticeRecords, c: int, half: int) -> tuple[int, int]:
    """``(sum(u - c), sum((u - c)**2))`` over the kept records, exactly."""
    units = rec.units
    if units.dtype == object or half > INT64_MAX:
        shifted = np.array([int(u) - c for u in units] or [], dtype=object)
    else:
        shifted = units - np.int64(c)
    return exact_sum(shifted, half), exact_sum_of_squares(shifted, half)
