"""The privacy cost of a release: one type, and the one check of the arguments that state it.

A release costs ``epsilon`` (pure DP) or ``rho`` (zCDP): exactly one of them, an exact rational
``> 0`` (:meth:`Cost.of`, the one place ``epsilon=`` / ``rho=`` arguments are checked), plus a
``delta`` for a release that spends one (a table whose keys are chosen by partition selection).
A budget counts one :class:`Currency`; :meth:`Cost.in_currency` prices a cost in it: an
``epsilon`` in an epsilon budget as itself; in a rho budget as the zCDP its mechanism is proven to have
(:mod:`securedp.privacy.conversions`): for a ``bounded_range`` release (an exponential mechanism:
``epsilon``-bounded range) the sharp bounded-range bound (:func:`~securedp.privacy.conversions.
bounded_range_to_zcdp`, at most ``epsilon**2 / 8``), else the sharp bound for every ``epsilon``-DP release
(:func:`~securedp.privacy.conversions.pure_to_zcdp`, at most ``epsilon**2 / 2``), whichever is smaller; and a
``rho`` never in an epsilon budget (:class:`IncompatibleCost`). Earlier versions charged ``epsilon**2 / 2`` (Bun &
Steinke 2016, Prop. 1.4) for every pure release in a rho budget, and then ``epsilon**2 / 8`` (Cesar & Rogers 2021)
(or the pure charge, if smaller) for a bounded-range one: each a proven bound, so a record charged either still verifies
(:meth:`Cost.accepted_charges`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from typing import Any

from securedp.hazmat.exact import bounds
from securedp.hazmat.exact.rational import positive_rational
from securedp.privacy.conversions import bounded_range_to_zcdp, pure_to_zcdp


class IncompatibleCost(ValueError):
    """A release's privacy cost cannot be charged to this budget (e.g. a zCDP release on a pure-epsilon budget)."""


class Currency(str, Enum):
    """The unit of a budget: ``epsilon`` (pure DP, costs add) or ``rho`` (zCDP, costs add)."""

    EPSILON = "epsilon"
    RHO = "rho"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


@dataclass(frozen=True)
class Cost:
    """The exact privacy cost of one release: ``amount`` of ``currency``, and ``delta`` for a release that spends
    one (else ``None``). Build it with :meth:`of` from the caller's arguments."""

    currency: Currency
    amount: Fraction
    delta: Fraction | None = None
    bounded_range: bool = False
    """An ``epsilon`` release that is moreover ``epsilon``-bounded range (an exponential mechanism's
    selections: :func:`securedp.ledger.release_record.bounded_range`)."""

    @classmethod
    def of(cls, epsilon: Any = None, rho: Any = None, delta: Fraction | None = None,
           bounded_range: bool = False) -> Cost:
        """Exactly one of ``epsilon`` (pure DP) or ``rho`` (zCDP), as an exact rational ``> 0`` (an int,
        ``Fraction``, decimal string, gmpy2 rational, or a float taken exactly); ``delta`` is the release's own,
        already checked by whoever computed it; ``bounded_range`` (an ``epsilon`` release only) as above."""
        if (epsilon is None) == (rho is None):
            raise TypeError("give exactly one of epsilon= (discrete Laplace) or rho= (discrete Gaussian, zCDP)")
        if epsilon is not None:
            return cls(Currency.EPSILON, bounds.parameter(positive_rational(epsilon, "epsilon"), "epsilon"), delta,
                       bounded_range)
        return cls(Currency.RHO, bounds.parameter(positive_rational(rho, "rho"), "rho"), delta)

    @property
    def epsilon(self) -> Fraction | None:
        """The amount if the cost is counted in epsilon, else ``None``."""
        return self.amount if self.currency is Currency.EPSILON else None

    @property
    def rho(self) -> Fraction | None:
        """The amount if the cost is counted in rho, else ``None``."""
        return self.amount if self.currency is Currency.RHO else None

    def share(self, fraction: Fraction) -> Cost:
        """``fraction`` of the amount, in the same currency (the ``delta`` is not shared)."""
        return Cost(self.currency, self.amount * fraction)

    def split(self, parts: int) -> Cost:
        """An equal share for each of ``parts`` noisy queries; the shares add up exactly."""
        return self.share(Fraction(1, parts))

    def in_currency(self, currency: Currency) -> Fraction:
        """The amount this cost takes from a budget counting ``currency`` (see the module docstring)."""
        if currency is self.currency:
            return self.amount
        if currency is Currency.RHO:
            pure = pure_to_zcdp(self.amount)
            return min(pure, bounded_range_to_zcdp(self.amount)) if self.bounded_range else pure
        raise IncompatibleCost("a zCDP (rho) release cannot be charged to a pure epsilon budget; "
                               "use Session(rho=...) or Session.from_approx_dp(epsilon, delta)")

    def accepted_charges(self, currency: Currency) -> tuple[Fraction, ...]:
        """The charges a record of this cost may state to a budget counting ``currency``: this version's
        (:meth:`in_currency`) and, for an ``epsilon`` release in a rho budget, ``epsilon**2 / 2``, and for a
        ``bounded_range`` one also the smaller of ``epsilon**2 / 8`` and the pure charge, which earlier versions
        charged (each a proven bound; see the module docstring)."""
        charge = self.in_currency(currency)
        if currency is self.currency:
            return (charge,)
        square = self.amount * self.amount
        if self.bounded_range:
            return (charge, square / 2, min(square / 8, pure_to_zcdp(self.amount)))
        return (charge, square / 2)
