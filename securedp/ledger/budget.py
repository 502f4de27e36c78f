"""The one accounting implementation: a privacy budget, its charging rules, and where its state is kept.

A budget counts one :class:`~securedp.ledger.audit_record.Currency`:
``epsilon`` (pure DP, basic composition: costs add) or ``rho`` (zCDP, costs
add). The rules, written once here and used by :class:`securedp.Session`,
by the command's budget file and by the audit verifier:

* **price** (:meth:`securedp.privacy.cost.Cost.in_currency`): a release of cost (``epsilon``, ``rho``)
  takes ``epsilon`` from an epsilon budget and ``rho`` from a rho budget; a
  pure ``epsilon`` release takes the zCDP it is proven to have from a rho budget
  (the sharp bounded-range bound, at most ``epsilon**2 / 8``, for an exponential mechanism, else
  :func:`~securedp.privacy.conversions.pure_to_zcdp`, at most ``epsilon**2 / 2``); a zCDP
  release cannot be charged to an epsilon budget (zCDP does not imply pure
  DP): :class:`IncompatibleCost`;
* **refusal**: a charge that would make ``spent`` exceed ``total`` raises
  :class:`BudgetExceeded` and changes nothing;
* **delta**: a release with a delta of its own (partition selection) also
  charges it to the budget's delta ledger (``delta_total``, ``delta_spent``:
  deltas add, by basic composition), in the same state as its epsilon or
  rho, refused the same way; a budget without a delta ledger refuses it
  (:class:`IncompatibleCost`);
* **refund**: a charge whose release failed before reading its first random
  bit is given back; once a bit is read it stands (:meth:`Budget.charging`).

The state (:class:`~securedp.ledger.audit_record.BudgetState`) lives in a :class:`BudgetStore`: in memory
(:class:`MemoryStore`, a lock per budget) or in a file
(:class:`securedp.ledger.budget_file.BudgetFile`, locked across
processes and replaced atomically). Every check-and-add happens while the
store is held, so concurrent charges never overspend.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any, Protocol

from securedp.hazmat.bits.source import watching_draws
from securedp.hazmat.exact import bounds
from securedp.hazmat.exact.rational import format_rational, positive_rational
from securedp.ledger.audit_record import BudgetState, Currency, Pending
from securedp.ledger.errors import BudgetExceeded, IncompatibleCost, RecordNotAppended, RecordPending

EPSILON = Currency.EPSILON
RHO = Currency.RHO


class BudgetStore(Protocol):
    """Where a budget's state is kept. ``hold()`` gives exclusive access to the current state;
    ``save(state)`` replaces it and is called only while the store is held.

    ``delta_hint`` ends the refusal of a release that spends delta when the
    state has no delta ledger (``delta_total`` is ``None``): how to get a
    budget that has one.
    """

    currency: Currency
    delta_hint: str

    def hold(self) -> contextlib.AbstractContextManager[BudgetState]: ...

    def save(self, state: BudgetState) -> None: ...


class MemoryStore:
    """A budget kept in memory, held with a (re-entrant) thread lock; ``delta``: its delta ledger's total."""

    delta_hint = "create the session with Session(..., delta=...)"

    def __init__(self, currency: Currency, total: Fraction, delta: Fraction | None = None) -> None:
        self.currency = currency
        self._state = BudgetState(total, Fraction(0), None, currency, delta)
        self._lock = threading.RLock()

    @contextlib.contextmanager
    def hold(self) -> Iterator[BudgetState]:
        with self._lock:
            yield self._state

    def save(self, state: BudgetState) -> None:
        self._state = state


class Budget:
    """``total`` of ``kind`` (``"epsilon"`` or ``"rho"``) in memory, or the budget kept in ``store``.

    ``delta`` (in memory only): the total delta that releases with a delta
    of their own (tables with private keys, chosen by partition selection)
    may spend beside ``total``, exactly, in ``(0, 1)``; without it such
    releases are refused. Basic composition adds the deltas of
    (epsilon, delta)-DP releases and of delta-approximate zCDP releases
    (Bun and Steinke 2016), so the budget guarantees (``total``, ``delta``)-DP,
    or ``delta``-approximate ``total``-zCDP.

    With ``store``, ``kind`` must be the store's currency and neither
    ``total`` nor ``delta`` is given (the store holds them).
    """

    def __init__(self, kind: str, total: Any = None, *, delta: Any = None, store: BudgetStore | None = None) -> None:
        if kind not in (EPSILON.value, RHO.value):
            raise ValueError("kind must be 'epsilon' or 'rho'")
        self.currency = Currency(kind)
        if store is None:
            store = MemoryStore(self.currency, budget_total(total, self.currency.value),
                                None if delta is None else delta_rational(delta))
        elif total is not None or delta is not None or store.currency is not self.currency:
            raise ValueError("a stored budget takes its currency and total from its store, and its delta ledger")
        self._store = store

    @property
    def kind(self) -> str:
        """``"epsilon"`` or ``"rho"`` (the :attr:`currency` as plain text)."""
        return self.currency.value

    def _charged(self, state: BudgetState, amount: Fraction, delta: Fraction | None = None) -> BudgetState:
        """``state`` after charging ``amount`` and ``delta`` (with no pending record), or the refusal (nothing is
        changed)."""
        state = dataclasses.replace(state, pending=None)
        if delta is not None and state.delta_total is None:
            raise IncompatibleCost(
                f"this release spends delta {format_rational(delta)} (partition selection): {self._store.delta_hint}")
        if state.spent + amount > state.total:
            raise BudgetExceeded(
                f"budget exhausted: this release needs {self.currency} {format_rational(amount)} but only "
                f"{format_rational(state.remaining)} of {format_rational(state.total)} remains"
            )
        if delta is None:
            return _storable(dataclasses.replace(state, spent=state.spent + amount))
        assert state.delta_total is not None  # refused above
        if state.delta_spent + delta > state.delta_total:
            raise BudgetExceeded(
                f"delta exhausted: this release needs delta {format_rational(delta)} but only "
                f"{format_rational(state.delta_total - state.delta_spent)} of {format_rational(state.delta_total)} "
                "remains"
            )
        return _storable(dataclasses.replace(state, spent=state.spent + amount, delta_spent=state.delta_spent + delta))

    def check(self, amount: Fraction, delta: Fraction | None = None) -> None:
        """Raise what :meth:`charging` would raise for ``amount`` (and ``delta``) now, and change nothing (a plan of
        several releases checked before the first: the command's ``COLUMN:auto`` bounds and their table)."""
        with self._store.hold() as state:
            self._charged(state, amount, delta)

    def charge(self, amount: Fraction) -> BudgetState:
        """Add ``amount`` to the spent budget and return the state just after, or raise
        :class:`BudgetExceeded` (or :class:`RecordPending`) and change nothing."""
        with self.charging(amount) as after:
            return after

    def refund(self, amount: Fraction) -> None:
        """Give back a charge whose release failed before returning."""
        with self._store.hold() as state:
            _settled(self._store, state, None)
            self._store.save(dataclasses.replace(state, spent=state.spent - amount))

    def settle(self, settle: Callable[[Pending], None]) -> None:
        """Give the pending record the store holds, if any, to ``settle`` (which makes sure the audit log has it),
        then remove it, under the store's lock: what :meth:`charging` does before each charge."""
        with self._store.hold() as state:
            _settled(self._store, state, settle)

    @contextlib.contextmanager
    def charging(self, amount: Fraction, delta: Fraction | None = None, *,
                 pending: Callable[[BudgetState], Pending] | None = None,
                 settle: Callable[[Pending], None] | None = None) -> Iterator[BudgetState]:
        """Charge ``amount`` (and ``delta``, to the delta ledger) and run the body with the store still held.

        Refused before anything is changed or drawn: a charge that would
        make ``spent`` exceed ``total``, or the delta spent exceed the delta
        total (:class:`BudgetExceeded`), and a ``delta`` when the budget has
        no delta ledger (:class:`IncompatibleCost`, ending with the store's
        ``delta_hint``). Both charges are one state, saved at once.

        **The charge stands once the body has read its first random bit**, whatever happens next: if
        the body raises before consuming any randomness (see
        :func:`~securedp.hazmat.bits.source.watching_draws`), the charge is refunded; if it raises
        after, the charge stands and the error propagates. A failure after the draw can depend on
        the noise (an output that cannot be built, an audit hook that raises), so refunding it would
        let an analyst retry for free and learn from each failure.

        The new state is saved before the body runs, so a crash never
        under-counts; a save that raises (an interrupt may arrive just after a
        file was replaced) puts the state before it back; other charges wait until the body is done (so, for
        instance, the audit records of one budget are appended in the order
        of their charges).

        **The charge and its record are one transaction** for a stored budget with a ledger (a budget file):
        ``pending(after)`` gives the record to keep with the charge (:class:`~securedp.ledger.audit_record.Pending`,
        the unreleased record of a charge whose outcome is lost), saved in the same write as the charge,
        before the body can read a bit, and removed by one more save once the body has returned (its record
        is then in the log). A state that still holds a pending record (its release died, or its record could
        not be appended) is first given to ``settle``, which makes sure the audit log holds that charge's
        record, and saved without it; without ``settle`` the charge is refused (:class:`RecordPending`).
        A refund removes the pending record with the charge; a failure after the first bit leaves it, for
        the next charge's ``settle`` (which finds the record the failure appended, if it did); a record that
        could not be appended (:class:`RecordNotAppended`) takes its place, value and all, so that the next
        charge appends the record itself.
        """
        with self._store.hold() as held:
            state = _settled(self._store, held, settle)
            after = self._charged(state, amount, delta)
            written = after if pending is None or after.ledger is None else dataclasses.replace(
                after, pending=pending(after))
            try:
                self._store.save(written)
            except BaseException:  # an interrupt may arrive once the new state is in place: nothing is drawn yet
                with contextlib.suppress(Exception):  # if even this fails, the store over-counts (the safe side)
                    self._store.save(state)
                raise
            with watching_draws() as draws:
                try:
                    yield after
                except BaseException as failure:
                    if not draws.used:
                        self._store.save(state)
                    elif written.pending is not None and isinstance(failure, RecordNotAppended):
                        with contextlib.suppress(Exception):  # a record too long to keep: the pending one stays
                            self._store.save(dataclasses.replace(
                                after, pending=Pending(written.pending.writer, failure.record)))
                    raise
            if written is not after:  # the body returned: its record is durable, so the pending one goes
                with contextlib.suppress(Exception):  # if it stays, the next settle finds the record in the log
                    self._store.save(after)

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

    @property
    def delta_total(self) -> Fraction | None:
        """The total of the delta ledger, or ``None`` when releases that spend delta are refused."""
        with self._store.hold() as state:
            return state.delta_total

    @property
    def delta_spent(self) -> Fraction:
        """The exact sum of the deltas charged so far (0 without a delta ledger)."""
        with self._store.hold() as state:
            return state.delta_spent


def _settled(store: BudgetStore, state: BudgetState, settle: Callable[[Pending], None] | None) -> BudgetState:
    """``state`` without its pending record, once ``settle`` has made sure the audit log holds it (and the store
    has saved it so), or :class:`RecordPending` when there is one and no ``settle``."""
    if state.pending is None:
        return state
    if settle is None:
        raise RecordPending(
            "this budget holds the record of a charge that may not be in its audit log yet (a release died after "
            "its charge, or could not append its record): release with that audit log first, which appends the "
            "record if it is missing; nothing was drawn or charged")
    settle(state.pending)
    settled = dataclasses.replace(state, pending=None)
    store.save(settled)
    return settled


def _storable(state: BudgetState) -> BudgetState:
    """``state``, if a budget file and an audit record can hold it (:func:`securedp.hazmat.exact.bounds.storable`:
    each term of ``spent``, ``remaining`` and the delta ledger's within the declared digits), else the refusal."""
    fields = {"spent": state.spent, "remaining": state.remaining}
    if state.delta_total is not None:
        fields.update(delta_spent=state.delta_spent, delta_remaining=state.delta_total - state.delta_spent)
    bounds.storable(fields, f"the {state.currency.value} budget")
    return state


def budget_total(value: Any, name: str) -> Fraction:
    """``value`` as the exact total of a budget: a rational ``> 0`` within the declared bound of a parameter."""
    return bounds.parameter(positive_rational(value, name), name)


def delta_rational(value: Any, name: str = "delta") -> Fraction:
    """``value`` as the exact total of a delta ledger: a rational in ``(0, 1)``, else :class:`ValueError`."""
    delta = bounds.parameter(positive_rational(value, name), name)
    if delta >= 1:
        raise ValueError(f"{name} must be below 1, got {format_rational(delta)}")
    return delta
