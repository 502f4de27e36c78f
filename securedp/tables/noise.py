"""Deprecated: the noise of a table's cells is :class:`securedp.privacy.noise.Noise` with ``max_groups``.

``CellNoise(max_groups, cell_sensitivity, epsilon, rho)`` still builds it, with a
:class:`DeprecationWarning`; it will be removed in the next release.
"""

from __future__ import annotations

from fractions import Fraction

from securedp.deprecation import deprecated
from securedp.privacy.cost import Cost
from securedp.privacy.noise import Noise


def CellNoise(max_groups: int, cell_sensitivity: int, epsilon: Fraction | None,  # noqa: N802 - the old class name
              rho: Fraction | None) -> Noise:
    """Deprecated: ``Noise.of(max(cell_sensitivity, 1), Cost.of(epsilon, rho), max_groups)``."""
    deprecated("securedp.tables.noise.CellNoise", "securedp.privacy.noise.Noise with max_groups=")
    return Noise.of(max(cell_sensitivity, 1), Cost.of(epsilon, rho), max_groups)
