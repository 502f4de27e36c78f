"""What a grouped table releases per cell: the aggregations and their exact privacy maps.

Each aggregation names its output columns and, given the table's bounding
(``k = max_groups`` keys per person, ``m = max_rows`` rows per person and
key), states the sensitivities of the exact integer aggregates it adds noise
to. Adding or removing one person changes at most ``k`` cells, each by at
most the per-cell sensitivity below, so:

* L1 (discrete Laplace, ``epsilon``): ``k * cell``; the scale is
  ``k * cell / epsilon_a``;
* L2 (discrete Gaussian, ``rho``): ``sqrt(k) * cell``; the variance is
  ``k * cell**2 / (2 rho_a)``, an exact rational.

Per-cell sensitivities, in lattice units (``W = max(|lo_u|, |hi_u|, 1)``,
``h = max(half, 1)`` with the centre and ``half`` of
:mod:`securedp.mechanisms.moments`):

=============  ===================================================  ==============
aggregation    noisy integers per cell                              cell sensitivity
=============  ===================================================  ==============
``Count``      rows                                                 ``m``
``Persons``    distinct persons                                     ``1``
``Sum``        sum of units                                         ``m * W``
``Mean``       rows; centred sum (half of its budget each)          ``m``; ``m * h``
``Variance``   rows; centred sum; centred sum of squares (thirds)   ``m``; ``m h``; ``m h**2``
``Quantile``   exponential mechanism over the lattice per cell      rank: ``m``
=============  ===================================================  ==============

Quantiles spend ``epsilon_a / k`` per cell (a person is in at most ``k``
cells; each cell's selection is ``epsilon_a / k``-DP for ``m`` rows). In a
table priced in ``rho``, each cell's selection runs at the largest
``epsilon_cell = j / 2**32`` with ``k * epsilon_cell**2 / 2 <= rho_a``
(:func:`quantile_cell_epsilon`): an ``epsilon``-DP mechanism is
``epsilon**2 / 2``-zCDP (Bun and Steinke 2016, Prop. 1.4), and the at most
``k`` cells one person changes compose to ``k * epsilon_cell**2 / 2``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from securedp.hazmat.exact.rational import to_rational
from securedp.lattice import Lattice
from securedp.mechanisms.quantile import _default_lattice as quantile_lattice
from securedp.mechanisms.records import LatticeColumn


@dataclass(frozen=True)
class Count:
    """The number of rows per cell, after bounding."""

    share: Any = None

    @property
    def name(self) -> str:
        return "count"

    column = None


@dataclass(frozen=True)
class Persons:
    """The number of distinct persons per cell, after bounding."""

    share: Any = None

    @property
    def name(self) -> str:
        return "persons"

    column = None


@dataclass(frozen=True)
class _Column:
    """An aggregation of one numeric column clamped to public ``bounds`` on a lattice."""

    column: str
    bounds: tuple[Any, Any]
    lattice: Any = None
    share: Any = None

    kind = ""

    @property
    def name(self) -> str:
        return f"{self.column}_{self.kind}"

    def lattice_of(self) -> tuple[Lattice, int, int]:
        """The lattice and the bounds in units, by the rule of the single-column release of the same kind."""
        column = LatticeColumn.of(bounds=self.bounds, lattice=self.lattice, max_contributions=1, missing="raise",
                                  fill=None, default=self.default_lattice())
        return column.lattice, column.lo_u, column.hi_u

    def default_lattice(self) -> Callable[[Any, Any], Any] | None:
        """The rule choosing a lattice when none is given (None: the rule of sums and means)."""
        return None


@dataclass(frozen=True)
class Sum(_Column):
    """The sum of a column per cell."""

    kind = "sum"


@dataclass(frozen=True)
class Mean(_Column):
    """The mean of a column per cell (noisy centred sum over noisy count, clamped to the bounds)."""

    kind = "mean"


@dataclass(frozen=True)
class Variance(_Column):
    """The population variance of a column per cell (three noisy moments)."""

    kind = "variance"


@dataclass(frozen=True)
class Quantile(_Column):
    """The ``q``-quantile of a column per cell, by the exact exponential mechanism over the lattice."""

    q: Any = Fraction(1, 2)

    kind = "quantile"

    def default_lattice(self) -> Callable[[Any, Any], Any] | None:
        return quantile_lattice

    @property
    def name(self) -> str:
        q = to_rational(self.q, "q")
        return f"{self.column}_median" if q == Fraction(1, 2) else f"{self.column}_q{float(q):g}"  # float-ok: a name


_CELL_GRID = 1 << 32


def quantile_cell_epsilon(epsilon: Fraction | None, rho: Fraction | None, k: int) -> Fraction:
    """The ``epsilon`` of one cell's exponential mechanism for a quantile whose share is ``epsilon``
    (``epsilon / k``) or ``rho`` (the largest ``j / 2**32`` with ``k * (j / 2**32)**2 / 2 <= rho``,
    exactly: ``j = isqrt(floor(2 * rho * 2**64 / k))``); see the module docstring. Raises if ``rho``
    is too small for any positive ``j``."""
    if epsilon is not None:
        return epsilon / k
    assert rho is not None
    j = math.isqrt((2 * rho.numerator * _CELL_GRID * _CELL_GRID) // (k * rho.denominator))
    if j == 0:
        raise ValueError(f"a quantile's share of rho ({rho}) is too small for max_groups={k}: its exponential "
                         "mechanism would run at epsilon 0")
    cell = Fraction(j, _CELL_GRID)
    assert k * cell * cell / 2 <= rho < k * Fraction(j + 1, _CELL_GRID) ** 2 / 2
    return cell


def Median(column: str, bounds: tuple[Any, Any], lattice: Any = None, share: Any = None) -> Quantile:  # noqa: N802
    """The median of a column per cell: :class:`Quantile` with ``q = 1/2``."""
    return Quantile(column, bounds, lattice, share, Fraction(1, 2))


Aggregation = Count | Persons | Sum | Mean | Variance | Quantile
