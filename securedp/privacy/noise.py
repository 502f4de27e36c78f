"""The integer noise a cost buys: one type, whose law is a field, and through which every noisy integer is drawn.

A query ``f`` with integer values (lattice units) is released as ``f(D) + Z``. Adding or removing one
person changes at most ``k = max_groups`` values (cells; ``k = 1`` for a one-column release), each by at
most the *cell sensitivity* ``s`` (units), so the L1 sensitivity is ``k s`` and the squared L2
sensitivity ``k s**2``. The :class:`Law` follows the cost's currency:

* **discrete Laplace** (``epsilon``): ``P(Z = z) ~ exp(-|z| / scale)`` with ``scale = k s / epsilon``;
  the release is ``epsilon``-DP (pure);
* **discrete Gaussian** (``rho``): ``P(Z = z) ~ exp(-z**2 / (2 sigma**2))`` with
  ``sigma**2 = k s**2 / (2 rho)``; the release is ``rho``-zCDP (Canonne, Kamath & Steinke 2020,
  Theorem 14, with the L2 sensitivity ``sqrt(k) s``).

Every parameter is an exact rational; draws come from the exact, timing-hardened samplers of
:mod:`securedp.hazmat.samplers`, and half-widths from :mod:`securedp.privacy.accuracy`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from typing import Any

import numpy as np

from securedp.hazmat.bits.source import RandomSource
from securedp.hazmat.samplers.discrete_gaussian import discrete_gaussian
from securedp.hazmat.samplers.discrete_laplace import discrete_laplace
from securedp.privacy.accuracy import gaussian_halfwidth, laplace_halfwidth
from securedp.privacy.cost import Cost, Currency

_NEGLIGIBLE = Fraction(1, 1 << 64)


class Law(str, Enum):
    """The law of an integer noise, named as records name it."""

    LAPLACE = "discrete_laplace"
    GAUSSIAN = "discrete_gaussian"

    @classmethod
    def of(cls, currency: Currency) -> Law:
        """The law a currency buys: discrete Laplace for ``epsilon``, discrete Gaussian for ``rho``."""
        return cls.LAPLACE if currency is Currency.EPSILON else cls.GAUSSIAN

    @property
    def parameter_name(self) -> str:
        """How a record names the law's parameter: ``scale_units`` or ``variance_units``."""
        return "scale_units" if self is Law.LAPLACE else "variance_units"

    def parameter(self, l1: int, l2_squared: int, amount: Fraction) -> Fraction:
        """The exact scale (Laplace, ``l1 / epsilon``) or variance (Gaussian, ``l2_squared / (2 rho)``)."""
        return Fraction(l1) / amount if self is Law.LAPLACE else Fraction(l2_squared) / (2 * amount)

    def draw(self, parameter: Fraction, size: int | None, source: RandomSource) -> Any:
        """Exact draws of the law with ``parameter`` (see :meth:`Noise.draw`)."""
        if self is Law.LAPLACE:
            return discrete_laplace(parameter, size, rng=source)
        return discrete_gaussian(None, size, variance=parameter, rng=source)

    def halfwidth(self, parameter: Fraction, alpha: Fraction) -> int:
        """The least ``t`` with ``P(|Z| <= t) >= 1 - alpha``, proven (:mod:`securedp.privacy.accuracy`)."""
        return _halfwidth(self, parameter, alpha)


@functools.lru_cache(maxsize=1024)
def _halfwidth(law: Law, parameter: Fraction, alpha: Fraction) -> int:
    return laplace_halfwidth(parameter, alpha) if law is Law.LAPLACE else gaussian_halfwidth(parameter, alpha)


@dataclass(frozen=True)
class Noise:
    """Noise of ``law`` at ``amount`` (the cost's epsilon or rho) for cell sensitivity ``sensitivity`` (units) and
    ``max_groups`` cells per person. Build it with :meth:`of`."""

    law: Law
    sensitivity: int
    amount: Fraction
    max_groups: int = 1

    def __post_init__(self) -> None:
        if self.sensitivity < 1 or self.max_groups < 1:
            raise ValueError("sensitivity and max_groups must be positive integers")

    @classmethod
    def of(cls, sensitivity: int, cost: Cost, max_groups: int = 1) -> Noise:
        """The noise of ``cost`` for cell sensitivity ``sensitivity`` and ``max_groups`` cells per person."""
        return cls(Law.of(cost.currency), sensitivity, cost.amount, max_groups)

    @property
    def mechanism(self) -> str:
        """The law's name, as records write it."""
        return self.law.value

    @property
    def parameter(self) -> Fraction:
        """The Laplace ``scale = k s / epsilon`` or the Gaussian ``variance = k s**2 / (2 rho)`` (units)."""
        k, s = self.max_groups, self.sensitivity
        return self.law.parameter(k * s, k * s * s, self.amount)

    def record(self) -> dict[str, Any]:
        """The exact parameters as a record states them for each noisy integer."""
        return {"mechanism": self.mechanism, "cell_sensitivity_units": self.sensitivity,
                self.law.parameter_name: self.parameter}

    def draw(self, source: RandomSource, size: int | None = None) -> Any:
        """One draw (an ``int``, from the source's pool of pre-drawn values) or ``size`` draws in one batch
        (a list of ``int``; ``[]`` for ``size == 0``)."""
        if size == 0:
            return []
        values = self.law.draw(self.parameter, size, source)
        if size is None:
            return int(values)
        array = np.asarray(values)
        return array.tolist() if array.dtype.kind == "i" else [int(v) for v in array.tolist()]  # int64 or exact

    def halfwidth(self, alpha: Fraction) -> int:
        """The half-width ``t`` (units) with ``P(|Z| <= t) >= 1 - alpha``, rounded outward (computed once per law
        and level: a plan and its release state the same number)."""
        return self.law.halfwidth(self.parameter, alpha)

    def output_step(self, alpha: Fraction) -> Fraction | None:
        """The output step of an integer column noised by this law, from the public parameters alone.

        ``None`` (an ``Int64`` column) unless a value or an interval bound may pass ``2**62`` except with
        probability below ``2**-64`` (the half-width at ``min(alpha, 2**-64)`` reaches ``2**60``; true
        counts stay below ``2**61``): then ``1``, an exact ``Decimal(38, 0)`` column
        (:mod:`securedp.engines.frames`).
        """
        return None if self.halfwidth(min(alpha, _NEGLIGIBLE)) < 1 << 60 else Fraction(1)
