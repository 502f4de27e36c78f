"""The shared last step of every numeric release: integer noise on the lattice, and its privacy map.

A query ``f`` with integer values (lattice units) whose *sensitivity* is
``Delta`` (L1 for Laplace, L2 for Gaussian; for a scalar they coincide) under
adding or removing one person's rows is released as ``f(D) + Z``:

* **discrete Laplace** (default): ``Z`` has ``P(Z = k) ~ exp(-|k| / scale)``
  with ``scale = Delta / epsilon``; the release is ``epsilon``-DP (pure).
* **discrete Gaussian** (``rho=``): ``Z`` has ``P(Z = k) ~ exp(-k**2 / (2 sigma**2))``
  with ``sigma**2 = Delta**2 / (2 rho)``; the release is ``rho``-zCDP
  (Canonne, Kamath & Steinke 2020, Theorem 14).

Every parameter is an exact rational; noise is drawn by the exact,
timing-hardened samplers of :mod:`securedp.hazmat.samplers`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.rational import positive_rational
from securedp.hazmat.samplers.discrete_gaussian import discrete_gaussian
from securedp.hazmat.samplers.discrete_laplace import discrete_laplace

LAPLACE = "discrete_laplace"
GAUSSIAN = "discrete_gaussian"


class Cost(NamedTuple):
    """The exact privacy cost of one release: ``epsilon`` (pure DP) or ``rho`` (zCDP); the other is ``None``."""

    epsilon: Fraction | None
    rho: Fraction | None


def privacy_cost(epsilon: Any, rho: Any) -> Cost:
    """Exactly one of ``epsilon`` (pure DP, Laplace noise) or ``rho`` (zCDP, Gaussian noise), as rationals > 0."""
    if (epsilon is None) == (rho is None):
        raise TypeError("give exactly one of epsilon= (discrete Laplace) or rho= (discrete Gaussian, zCDP)")
    if epsilon is not None:
        return Cost(positive_rational(epsilon, "epsilon"), None)
    return Cost(None, positive_rational(rho, "rho"))


@dataclass(frozen=True)
class Noise:
    """Noise calibrated to ``sensitivity`` (in lattice units) and one privacy cost.

    ``parameter`` is the Laplace ``scale = sensitivity / epsilon`` or the
    Gaussian ``variance = sensitivity**2 / (2 rho)``.
    """

    sensitivity: int
    epsilon: Fraction | None
    rho: Fraction | None

    def __post_init__(self) -> None:
        if self.sensitivity < 1:
            raise ValueError("sensitivity must be a positive integer")
        if (self.epsilon is None) == (self.rho is None):
            raise TypeError("exactly one of epsilon or rho")

    @property
    def mechanism(self) -> str:
        return LAPLACE if self.epsilon is not None else GAUSSIAN

    @property
    def parameter(self) -> Fraction:
        if self.epsilon is not None:
            return Fraction(self.sensitivity) / self.epsilon
        assert self.rho is not None  # __post_init__: exactly one of epsilon or rho
        return Fraction(self.sensitivity**2) / (2 * self.rho)

    def parameters(self, prefix: str = "") -> dict[str, Any]:
        """The exact parameters, for the release record."""
        name = "scale_units" if self.epsilon is not None else "variance_units"
        return {f"{prefix}sensitivity_units": self.sensitivity, f"{prefix}{name}": self.parameter}

    def draw(self, source: RandomSource, size: int | None = None) -> Any:
        """One draw (an ``int``) or ``size`` draws (an integer array)."""
        if self.epsilon is not None:
            values = discrete_laplace(self.parameter, size, rng=source)
        else:
            values = discrete_gaussian(None, size, variance=self.parameter, rng=source)
        if size is None:
            return int(values)
        return [int(v) for v in np.asarray(values).tolist()]


def split(cost: Cost, parts: int) -> Cost:
    """An equal share of ``cost`` for each of ``parts`` noisy queries; the shares add up exactly."""
    epsilon, rho = cost
    return Cost(epsilon / parts if epsilon is not None else None, rho / parts if rho is not None else None)
