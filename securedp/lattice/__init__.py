"""Fixed-point values on a public lattice (integers times a step).

``Lattice`` maps records to integer units (screen, clamp, round half to even);
``exact_sum`` adds units exactly. See :mod:`securedp.lattice.lattice` and
:mod:`securedp.lattice.screen` for the rules.
"""

from securedp.hazmat.exact.kernels import round_half_even
from securedp.lattice.lattice import DEFAULT_RESOLUTION, Lattice, unit_bound
from securedp.lattice.screen import MISSING_POLICIES, screen_units
from securedp.lattice.sums import exact_sum, exact_sum_of_squares

__all__ = [
    "DEFAULT_RESOLUTION",
    "MISSING_POLICIES",
    "Lattice",
    "exact_sum",
    "exact_sum_of_squares",
    "round_half_even",
    "screen_units",
    "unit_bound",
]
