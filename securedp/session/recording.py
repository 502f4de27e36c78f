"""How a session writes a record whose charge stands: durably, or not at all with the record in hand.

Once a release (or a partition) has read its first random bit its charge stands, so its record must reach
the audit. :func:`append_record` tries an append that fails with an I/O error again (:data:`APPEND_ATTEMPTS`
in all), holds an interrupt back until the record is written, and otherwise raises
:class:`~securedp.ledger.errors.RecordNotAppended` carrying the release and its record. An append that
raises has appended nothing (:meth:`securedp.audit.log.AuditLog.append`), so trying it again never writes a
record twice.

A charge to a stored budget with a ledger (a budget file) keeps its record with it until that record is in
the log (:class:`~securedp.ledger.audit_record.Pending`, :meth:`~securedp.ledger.budget.Budget.charging`);
:func:`settle` is how the next charge makes sure of it, whatever instant the process died at.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from securedp.hazmat.bits.source import watching_draws
from securedp.ledger.audit_record import BudgetFields, BudgetState, Pending
from securedp.ledger.errors import InterruptedAfterAppend, RecordNotAppended, RecordPending
from securedp.ledger.release_record import Json, SchemaError

if TYPE_CHECKING:
    from securedp.ledger.release import Release

APPEND_ATTEMPTS = 3
"""How many times an audit append that fails with an I/O error (or is interrupted) is tried."""


class Audit(Protocol):
    """What a session appends its records to: an :class:`~securedp.audit.log.AuditLog`, or any object with
    ``append(record)`` (a list, a test double)."""

    def append(self, record: dict[str, Json], /) -> Any: ...


def append_record(audit: Audit, release: Release | None, record: dict[str, Json]) -> None:
    """Append ``record`` to ``audit``, trying an I/O failure again (:meth:`securedp.Session.release`).

    An interrupt (``KeyboardInterrupt``, ``SystemExit``) during the append or the wait between tries is
    held back: the append (which has appended nothing if it raised) is tried again, and the interrupt is
    raised once the record is durable, so that a charge that stands never loses its record to a Ctrl-C.
    An append that was durable before the interrupt says so (:class:`InterruptedAfterAppend`) and is not
    tried again. Python gives no atomic step: an interrupt between an append's return and the note of
    its success (one bytecode) is the one left that can write a record twice, which ``verify`` reports.
    """
    interrupt: BaseException | None = None
    failure: BaseException | None = _UNTRIED
    for attempt in range(1, APPEND_ATTEMPTS + 1):
        try:
            failure = _appended(audit, record)
            if isinstance(failure, InterruptedAfterAppend):
                interrupt, failure = interrupt or failure.interrupt, None
            elif failure is not None and not isinstance(failure, Exception):
                interrupt = interrupt or failure
            if _worth_again(failure) and attempt < APPEND_ATTEMPTS:
                time.sleep(0.05 * attempt)
        except BaseException as late:  # an interrupt in the wait, or once the append had returned
            interrupt = interrupt or late
        if not _worth_again(failure):
            break
    if failure is not None:
        raise RecordNotAppended(release, record, f"{type(failure).__name__}: {failure}") from failure
    if interrupt is not None:
        raise interrupt


_UNTRIED = OSError("not tried")
"""The outcome of an append not yet tried (never raised; tried again like an I/O error)."""


def _worth_again(failure: BaseException | None) -> bool:
    """Whether an append that ended in ``failure`` is tried again: an I/O error or an interrupt, not success
    nor an error that trying again cannot help."""
    return failure is not None and (isinstance(failure, OSError) or not isinstance(failure, Exception))


@dataclass
class Handing:
    """Whether a record has been handed to :func:`append_record` (which then answers for it)."""

    handed: bool = False


@contextlib.contextmanager
def unreleased_on_failure(audit: Audit | None, unreleased: Callable[[str], dict[str, Json]]) -> Iterator[Handing]:
    """Run the body of a charge that stands once it reads a random bit: if it fails after that, and before its
    own record was handed to :func:`append_record`, append ``unreleased(error_name(failure))`` (the record of
    a charge with nothing released) before the failure propagates. The body sets ``handed`` on what it yields
    just before it hands its record over."""
    handing = Handing()
    with watching_draws() as draws:
        try:
            yield handing
        except BaseException as failure:
            if audit is not None and draws.used and not handing.handed:
                append_record(audit, None, unreleased(error_name(failure)))
            raise


def _appended(audit: Audit, record: dict[str, Json]) -> BaseException | None:
    """``audit.append(record)``, and the exception it raised, an interrupt included (or ``None``)."""
    try:
        audit.append(record)
    except BaseException as error:
        return error
    return None


def error_name(error: BaseException) -> str:
    """The name an unreleased record gives ``error``: its type's, or its nearest base's that is an identifier
    (a type may be built with any name)."""
    return next(kind.__name__ for kind in type(error).__mro__ if kind.__name__.isidentifier())


def transaction(audit: object, record: Callable[[BudgetState], dict[str, Json]]) -> dict[str, Any]:
    """The hooks of :meth:`~securedp.ledger.budget.Budget.charging` that make a charge and its record one
    transaction, for an ``audit`` that :func:`settles`: ``pending`` keeps ``record(state just after the charge)``
    (the unreleased record of the charge, error :data:`~securedp.ledger.audit_record.OUTCOME_LOST`) with the
    charge, and ``settle`` appends an earlier one that the log is missing; none for other audits."""
    if not settles(audit):
        return {}
    writer: str = audit.writer  # type: ignore[attr-defined]  # settles() checked it
    return {"pending": lambda after: Pending(writer, record(after)), "settle": lambda kept: settle(audit, kept)}


def settles(audit: object) -> bool:
    """Whether ``audit`` can settle a pending record (:func:`settle`): an :class:`~securedp.audit.log.AuditLog`, or
    an object with its ``writer`` and ``records_of(writer)``."""
    return isinstance(getattr(audit, "writer", None), str) and callable(getattr(audit, "records_of", None))


def settle(audit: Any, pending: Pending) -> None:
    """Make sure ``audit`` holds the record of the charge that ``pending`` was kept with, appending
    ``pending.record`` (the unreleased record of a charge whose outcome is lost) if it does not.

    It holds it when the last record charged to the budget itself (:func:`last_budget_fields`) of the writer
    that was to record it, or of ``audit``'s own writer (a recovery appends as that one), states the same
    ``spent`` and delta spent: a budget's spent only grows, so that record is this charge's (the release's own,
    its unreleased record, or a recovery's). Called under the budget's lock, so no other charge of the budget
    is being recorded meanwhile. An append that still fails raises :class:`RecordPending`: nothing is charged.
    """
    if holds(audit.records_of, pending, (pending.writer, audit.writer)):
        return
    try:
        append_record(audit, None, pending.record)
    except RecordNotAppended as failure:
        raise RecordPending(f"the record of an earlier charge, kept with the budget until it reaches the audit log, "
                            f"could not be appended ({failure.__cause__!r}); nothing was drawn or charged") from failure


def holds(records_of: Callable[[str], Iterable[dict[str, Any]]], pending: Pending, writers: Iterable[str]) -> bool:
    """Whether a log, read by ``records_of(writer)`` (a writer's records, last first), holds the record of the
    charge ``pending`` was kept with: the last record charged to the budget itself of one of ``writers`` states
    its ``spent`` and delta spent (see :func:`settle`)."""
    expected = BudgetFields.from_json(pending.record)
    assert expected is not None  # a pending record states its budget (checked when it is read)
    for writer in dict.fromkeys(writers):
        last = last_budget_fields(records_of(writer))
        if last is not None and last.spent == expected.spent and _delta_spent(last) == _delta_spent(expected):
            return True
    return False


def _delta_spent(fields: BudgetFields) -> object:
    return None if fields.delta is None else fields.delta.spent


def last_budget_fields(records: Iterable[dict[str, Any]]) -> BudgetFields | None:
    """The budget fields of the first of ``records`` (a writer's, last first) that is charged to the budget itself
    (not to a partition's part) and whose budget fields the schema accepts, or ``None``."""
    for record in records:
        try:
            fields = BudgetFields.from_json(record)
        except (SchemaError, ValueError, ArithmeticError):  # not a record verify accepts (it says so): go on
            continue
        if fields is not None and (fields.session is None or (not fields.session.path and
                                                              fields.session.partition_id is None)):
            return fields
    return None
