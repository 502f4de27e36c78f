"""A thread-safe privacy budget: charge before drawing, refund on failure.

A budget is denominated either in ``epsilon`` (pure DP, basic composition:
costs add) or in ``rho`` (zCDP, costs add). A pure ``epsilon`` release is
charged to a ``rho`` budget as ``rho = epsilon**2 / 2`` (exact); a zCDP
release cannot be charged to an ``epsilon`` budget (zCDP does not imply pure
DP) and raises :class:`IncompatibleCost`. ``charge`` checks and adds under
one lock, so concurrent releases never overspend.
"""

from __future__ import annotations

import threading
from fractions import Fraction
from typing import Any

from securedp.accounting.conversions import pure_to_zcdp
from securedp.accounting.errors import BudgetExceeded, IncompatibleCost
from securedp.hazmat.exact.rational import format_rational, positive_rational

EPSILON = "epsilon"
RHO = "rho"


class Budget:
    """``total`` of ``kind`` (``"epsilon"`` or ``"rho"``), with exact ``spent`` and ``remaining``."""

    def __init__(self, kind: str, total: Any) -> None:
        if kind not in (EPSILON, RHO):
            raise ValueError("kind must be 'epsilon' or 'rho'")
        self.kind = kind
        self.total: Fraction = positive_rational(total, kind)
        self._spent = Fraction(0)
        self._lock = threading.Lock()

    def cost(self, epsilon: Fraction | None, rho: Fraction | None) -> Fraction:
        """The amount a release of cost (``epsilon``, ``rho``) takes from this budget."""
        if self.kind == EPSILON:
            if epsilon is None:
                raise IncompatibleCost(
                    "a zCDP (rho) release cannot be charged to a pure epsilon budget; "
                    "use Session(rho=...) or Session.from_approx_dp(epsilon, delta)"
                )
            return epsilon
        if epsilon is not None:
            return pure_to_zcdp(epsilon)
        if rho is None:
            raise TypeError("a release costs epsilon or rho; both are None")
        return rho

    def charge(self, amount: Fraction) -> tuple[Fraction, Fraction]:
        """Add ``amount`` to the spent budget, or raise :class:`BudgetExceeded` and change nothing.

        Returns ``(spent, remaining)`` just after this charge.
        """
        with self._lock:
            if self._spent + amount > self.total:
                raise BudgetExceeded(
                    f"this release costs {self.kind}={format_rational(amount)} but only "
                    f"{format_rational(self.total - self._spent)} of {format_rational(self.total)} remains"
                )
            self._spent += amount
            return self._spent, self.total - self._spent

    def refund(self, amount: Fraction) -> None:
        """Give back a charge whose release failed before returning."""
        with self._lock:
            self._spent -= amount

    @property
    def spent(self) -> Fraction:
        with self._lock:
            return self._spent

    @property
    def remaining(self) -> Fraction:
        with self._lock:
            return self.total - self._spent
