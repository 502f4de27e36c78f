"""The one accounting implementation: a privacy budget, its charging rules, and where its state is kept.

A budget counts one :class:`~securedp.accounting.schema.Currency`:
``epsilon`` (pure DP, basic composition: costs add) or ``rho`` (zCDP, costs
add). The rules, written once here and used by :class:`securedp.Session`,
by the command's budget file and by the audit verifier:

* **price** (:func:`cost_in`): a release of cost (``epsilon``, ``rho``)
  takes ``epsilon`` from an epsilon budget and ``rho`` from a rho budget; a
  pure ``epsilon`` release takes ``epsilon**2 / 2`` from a rho budget
  (:func:`~securedp.accounting.conversions.pure_to_zcdp`, exact); a zCDP
  release cannot be charged to an epsilon budget (zCDP does not imply pure
  DP): :class:`IncompatibleCost`;
* **refusal**: a charge that would make ``spent`` exceed ``total`` raises
  :class:`BudgetExceeded` and changes nothing;
* **refund**: a charge whose release failed is given back.

The state (:class:`~securedp.accounting.schema.BudgetState`) lives in a :class:`BudgetStore`: in memory
(:class:`MemoryStore`, a lock per budget) or in a file
(:class:`securedp.accounting.budget_file.BudgetFile`, locked across
processes and replaced atomically). Every check-and-add happens while the
store is held, so concurrent charges never overspend.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Iterator
from fractions import Fraction
from typing import Any, Protocol

from securedp.accounting.conversions import pure_to_zcdp
from securedp.accounting.errors import BudgetExceeded, IncompatibleCost
from securedp.accounting.schema import BudgetState, Currency
from securedp.hazmat.bits.source import watching_draws
from securedp.hazmat.exact.rational import format_rational, positive_rational

EPSILON = Currency.EPSILON
RHO = Currency.RHO


def cost_in(currency: Currency, epsilon: Fraction | None, rho: Fraction | None) -> Fraction:
    """The amount a release of cost (``epsilon``, ``rho``) takes from a budget counting ``currency``."""
    if currency is Currency.EPSILON:
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


class BudgetStore(Protocol):
    """Where a budget's state is kept. ``hold()`` gives exclusive access to the current state;
    ``save(state)`` replaces it and is called only while the store is held."""

    currency: Currency

    def hold(self) -> contextlib.AbstractContextManager[BudgetState]: ...

    def save(self, state: BudgetState) -> None: ...


class MemoryStore:
    """A budget kept in memory, held with a (re-entrant) thread lock."""

    def __init__(self, currency: Currency, total: Fraction) -> None:
        self.currency = currency
        self._state = BudgetState(total, Fraction(0), None, currency)
        self._lock = threading.RLock()

    @contextlib.contextmanager
    def hold(self) -> Iterator[BudgetState]:
        with self._lock:
            yield self._state

    def save(self, state: BudgetState) -> None:
        self._state = state


class Budget:
    """``total`` of ``kind`` (``"epsilon"`` or ``"rho"``) in memory, or the budget kept in ``store``.

    With ``store``, ``kind`` must be the store's currency and ``total`` is
    not given (the store holds it).
    """

    def __init__(self, kind: str, total: Any = None, *, store: BudgetStore | None = None) -> None:
        if kind not in (EPSILON.value, RHO.value):
            raise ValueError("kind must be 'epsilon' or 'rho'")
        self.currency = Currency(kind)
        if store is None:
            store = MemoryStore(self.currency, positive_rational(total, self.currency.value))
        elif total is not None or store.currency is not self.currency:
            raise ValueError("a stored budget takes its currency and total from its store")
        self._store = store

    @property
    def kind(self) -> str:
        """``"epsilon"`` or ``"rho"`` (the :attr:`currency` as plain text)."""
        return self.currency.value

    def cost(self, epsilon: Fraction | None, rho: Fraction | None) -> Fraction:
        """The amount a release of cost (``epsilon``, ``rho``) takes from this budget (:func:`cost_in`)."""
        return cost_in(self.currency, epsilon, rho)

    def _charged(self, state: BudgetState, amount: Fraction) -> BudgetState:
        if state.spent + amount > state.total:
            raise BudgetExceeded(
                f"budget exhausted: this release needs {self.currency} {format_rational(amount)} but only "
                f"{format_rational(state.remaining)} of {format_rational(state.total)} remains"
            )
        return dataclasses.replace(state, spent=state.spent + amount)

    def charge(self, amount: Fraction) -> BudgetState:
        """Add ``amount`` to the spent budget and return the state just after, or raise
        :class:`BudgetExceeded` and change nothing."""
        with self._store.hold() as state:
            after = self._charged(state, amount)
            self._store.save(after)
        return after

    def refund(self, amount: Fraction) -> None:
        """Give back a charge whose release failed before returning."""
        with self._store.hold() as state:
            self._store.save(dataclasses.replace(state, spent=state.spent - amount))

    @contextlib.contextmanager
    def charging(self, amount: Fraction) -> Iterator[BudgetState]:
        """Charge ``amount`` and run the body with the store still held.

        **The charge stands once the body has read its first random bit**, whatever happens next: if
        the body raises before consuming any randomness (see
        :func:`~securedp.hazmat.bits.source.watching_draws`), the charge is refunded; if it raises
        after, the charge stands and the error propagates. A failure after the draw can depend on
        the noise (an output that cannot be built, an audit hook that raises), so refunding it would
        let an analyst retry for free and learn from each failure.

        The new state is saved before the body runs, so a crash never
        under-counts; other charges wait until the body is done (so, for
        instance, the audit records of one budget are appended in the order
        of their charges).
        """
        with self._store.hold() as state:
            after = self._charged(state, amount)
            self._store.save(after)
            with watching_draws() as draws:
                try:
                    yield after
                except BaseException:
                    if not draws.used:
                        self._store.save(state)
                    raise

    @property
    def total(self) -> Fraction:
        with self._store.hold() as state:
            return state.total

    @property
    def spent(self) -> Fraction:
        with self._store.hold() as state:
            return state.spent

    @property
    def remaining(self) -> Fraction:
        with self._store.hold() as state:
            return state.remaining


class DeltaLedger:
    """The ``delta`` of approximate DP spent beside an epsilon or rho budget: exact, additive, refusing overspend.

    Basic composition adds the deltas of (epsilon, delta)-DP releases, and
    those of delta-approximate zCDP releases (Bun and Steinke 2016): the
    session's guarantee is its budget's epsilon (or rho) with the delta spent
    here. A release that states no delta spends none.
    """

    def __init__(self, total: Any) -> None:
        self._state = BudgetState(_delta(total), Fraction(0))
        self._lock = threading.RLock()

    @property
    def total(self) -> Fraction:
        return self._state.total

    @property
    def spent(self) -> Fraction:
        return self._state.spent

    @property
    def remaining(self) -> Fraction:
        return self._state.remaining

    @contextlib.contextmanager
    def charging(self, amount: Fraction) -> Iterator[BudgetState]:
        """Add ``amount`` and run the body holding the ledger; refund only if it raises before its first
        random bit (:meth:`Budget.charging`)."""
        with self._lock:
            before = self._state
            if before.spent + amount > before.total:
                raise BudgetExceeded(
                    f"delta exhausted: this release needs delta {format_rational(amount)} but only "
                    f"{format_rational(before.remaining)} of {format_rational(before.total)} remains"
                )
            self._state = dataclasses.replace(before, spent=before.spent + amount)
            with watching_draws() as draws:
                try:
                    yield self._state
                except BaseException:
                    if not draws.used:
                        self._state = before
                    raise


def _delta(value: Any) -> Fraction:
    delta = positive_rational(value, "delta")
    if delta >= 1:
        raise ValueError(f"delta must be below 1, got {format_rational(delta)}")
    return delta
