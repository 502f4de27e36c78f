"""The privacy cost of a release and the integer noise it buys: one type each, shared by every release.

**Cost.** A release costs ``epsilon`` (pure DP) or ``rho`` (zCDP), exactly one
of them, an exact rational > 0 (:func:`privacy_cost` is the one check), and
for a table with private keys also a ``delta`` (:class:`Cost`). The unit a
budget counts is a :class:`Currency`.

**Noise.** A query ``f`` with integer values (lattice units) is released as
``f(D) + Z``. Adding or removing one person changes at most ``k =
max_groups`` values (cells; ``k = 1`` for a one-column release), each by at
most the *cell sensitivity* ``s`` (units), so the L1 sensitivity is ``k s``
and the squared L2 sensitivity ``k s**2``:

* **discrete Laplace** (``epsilon``): ``Z`` has ``P(Z = z) ~ exp(-|z| / scale)``
  with ``scale = k s / epsilon``; the release is ``epsilon``-DP (pure);
* **discrete Gaussian** (``rho``): ``Z`` has ``P(Z = z) ~ exp(-z**2 / (2 sigma**2))``
  with ``sigma**2 = k s**2 / (2 rho)``; the release is ``rho``-zCDP
  (Canonne, Kamath & Steinke 2020, Theorem 14, with the L2 sensitivity
  ``sqrt(k) s``).

Every parameter is an exact rational; noise is drawn by the exact,
timing-hardened samplers of :mod:`securedp.hazmat.samplers`. The confidence
half-width of a noisy integer comes from :mod:`securedp.mechanisms.accuracy`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.exact.rational import positive_rational
from securedp.hazmat.samplers.discrete_gaussian import discrete_gaussian
from securedp.hazmat.samplers.discrete_laplace import discrete_laplace
from securedp.mechanisms.accuracy import gaussian_halfwidth, laplace_halfwidth

LAPLACE = "discrete_laplace"
GAUSSIAN = "discrete_gaussian"
_NEGLIGIBLE = Fraction(1, 1 << 64)


class Currency(str, Enum):
    """The unit of a budget: ``epsilon`` (pure DP, costs add) or ``rho`` (zCDP, costs add)."""

    EPSILON = "epsilon"
    RHO = "rho"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @classmethod
    def parse(cls, value: object, name: str = "budget_kind") -> Currency:
        """``value`` (``"epsilon"`` or ``"rho"``) as a :class:`Currency`, or :class:`SchemaError` naming ``name``."""
        from securedp.mechanisms.record_schema import SchemaError  # the record schema imports the cost type

        if isinstance(value, str) and value in (cls.EPSILON.value, cls.RHO.value):
            return cls(value)
        raise SchemaError(name, f"must be 'epsilon' or 'rho', got {value!r}")


@dataclass(frozen=True)
class Cost:
    """The exact privacy cost of one release: ``epsilon`` (pure DP) or ``rho`` (zCDP), the other ``None``;
    and ``delta`` for a release that spends one (a table with private keys), else ``None``."""

    epsilon: Fraction | None
    rho: Fraction | None
    delta: Fraction | None = None

    @property
    def currency(self) -> Currency:
        """What the cost is counted in: :attr:`Currency.EPSILON` or :attr:`Currency.RHO`."""
        return Currency.EPSILON if self.epsilon is not None else Currency.RHO

    @property
    def amount(self) -> Fraction:
        """The ``epsilon`` or the ``rho``, whichever is set."""
        amount = self.epsilon if self.epsilon is not None else self.rho
        assert amount is not None  # privacy_cost: exactly one is set
        return amount

    @property
    def mechanism(self) -> str:
        """The additive noise this currency buys: discrete Laplace for ``epsilon``, discrete Gaussian for ``rho``."""
        return LAPLACE if self.epsilon is not None else GAUSSIAN

    def share(self, fraction: Fraction) -> Cost:
        """``fraction`` of the ``epsilon`` or ``rho`` (the ``delta`` is not shared)."""
        return Cost(self.epsilon * fraction if self.epsilon is not None else None,
                    self.rho * fraction if self.rho is not None else None)


def privacy_cost(epsilon: Any, rho: Any) -> Cost:
    """Exactly one of ``epsilon`` (pure DP, Laplace noise) or ``rho`` (zCDP, Gaussian noise), as rationals > 0."""
    if (epsilon is None) == (rho is None):
        raise TypeError("give exactly one of epsilon= (discrete Laplace) or rho= (discrete Gaussian, zCDP)")
    if epsilon is not None:
        return Cost(positive_rational(epsilon, "epsilon"), None)
    return Cost(None, positive_rational(rho, "rho"))


def split(cost: Cost, parts: int) -> Cost:
    """An equal share of ``cost`` for each of ``parts`` noisy queries; the shares add up exactly."""
    return cost.share(Fraction(1, parts))


@functools.lru_cache(maxsize=1024)
def _halfwidth(laplace: bool, parameter: Fraction, alpha: Fraction) -> int:
    return laplace_halfwidth(parameter, alpha) if laplace else gaussian_halfwidth(parameter, alpha)


@dataclass(frozen=True)
class Noise:
    """Noise for cell sensitivity ``sensitivity`` (units), one cost, and ``max_groups`` cells per person.

    ``parameter`` is the Laplace ``scale = k s / epsilon`` or the Gaussian
    ``variance = k s**2 / (2 rho)`` (see the module docstring).
    """

    sensitivity: int
    epsilon: Fraction | None
    rho: Fraction | None
    max_groups: int = 1

    def __post_init__(self) -> None:
        if self.sensitivity < 1 or self.max_groups < 1:
            raise ValueError("sensitivity and max_groups must be positive integers")
        if (self.epsilon is None) == (self.rho is None):
            raise TypeError("exactly one of epsilon or rho")

    @classmethod
    def of(cls, sensitivity: int, cost: Cost, max_groups: int = 1) -> Noise:
        """The noise of ``cost`` for cell sensitivity ``sensitivity`` and ``max_groups`` cells per person."""
        return cls(sensitivity, cost.epsilon, cost.rho, max_groups)

    @property
    def mechanism(self) -> str:
        return Cost(self.epsilon, self.rho).mechanism

    @property
    def parameter(self) -> Fraction:
        k, s = self.max_groups, self.sensitivity
        if self.epsilon is not None:
            return Fraction(k * s) / self.epsilon
        assert self.rho is not None  # __post_init__: exactly one of epsilon or rho
        return Fraction(k * s * s) / (2 * self.rho)

    def parameters(self, prefix: str = "") -> dict[str, Any]:
        """The exact parameters as a one-column release records them (``sensitivity_units``, then
        ``scale_units`` or ``variance_units``, each after ``prefix``)."""
        name = "scale_units" if self.epsilon is not None else "variance_units"
        return {f"{prefix}sensitivity_units": self.sensitivity, f"{prefix}{name}": self.parameter}

    def record(self) -> dict[str, Any]:
        """The exact parameters as a table records them for each of its noisy integers."""
        name = "scale_units" if self.epsilon is not None else "variance_units"
        return {"mechanism": self.mechanism, "cell_sensitivity_units": self.sensitivity, name: self.parameter}

    def draw(self, source: RandomSource, size: int | None = None) -> Any:
        """One draw (an ``int``, from the source's pool of pre-drawn values) or ``size`` draws in one batch
        (a list of ``int``; ``[]`` for ``size == 0``)."""
        if size == 0:
            return []
        if self.epsilon is not None:
            values = discrete_laplace(self.parameter, size, rng=source)
        else:
            values = discrete_gaussian(None, size, variance=self.parameter, rng=source)
        if size is None:
            return int(values)
        array = np.asarray(values)
        return array.tolist() if array.dtype.kind == "i" else [int(v) for v in array.tolist()]  # int64 or exact

    def halfwidth(self, alpha: Fraction) -> int:
        """The half-width ``t`` (units) with ``P(|Z| <= t) >= 1 - alpha``, rounded outward (computed once per law
        and level: a plan and its release state the same number)."""
        return _halfwidth(self.epsilon is not None, self.parameter, alpha)

    def output_step(self, alpha: Fraction) -> Fraction | None:
        """The output step of an integer column noised by this law, from the public parameters alone.

        ``None`` (an ``Int64`` column) unless a value or an interval bound may pass ``2**62`` except with
        probability below ``2**-64`` (the half-width at ``min(alpha, 2**-64)`` reaches ``2**60``; true
        counts stay below ``2**61``): then ``1``, an exact ``Decimal(38, 0)`` column
        (:mod:`securedp.engines.frames`).
        """
        return None if self.halfwidth(min(alpha, _NEGLIGIBLE)) < 1 << 60 else Fraction(1)
