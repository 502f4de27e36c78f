"""Accounting errors, and the one error an analyst-facing session raises about its data."""

from typing import Any

from securedp.privacy.cost import IncompatibleCost as IncompatibleCost  # defined with the cost it prices


class BudgetExceeded(RuntimeError):
    """A release would spend more than the remaining budget; nothing was drawn or charged."""


class RecordPending(RuntimeError):
    """A stored budget holds the record of a charge that may not be in its audit log (a release died after its
    charge, or could not append its record), and this release has no audit log to settle it with; nothing was
    drawn or charged (:meth:`securedp.ledger.budget.Budget.charging`)."""



DATA_REFUSED = ("the data could not be used for this release; in an analyst-facing session the reason is "
                "withheld, because it may depend on the data")
"""The message of every :class:`DataRefused`: it names no value, row, column type or count."""


class DataRefused(ValueError):
    """An analyst-facing release failed while reading its data; the reason is withheld.

    Raised by the error boundary (:func:`securedp.session.boundary.data_boundary`)
    in place of any exception raised once the data has started to be read,
    always with the message :data:`DATA_REFUSED` and with no cause or context
    attached, so that neither its type, its message nor its traceback tells
    anything about the data. A :class:`ValueError`, so that existing
    ``except ValueError`` clauses still catch it.
    """

    def __init__(self) -> None:
        super().__init__(DATA_REFUSED)


class RecordNotAppended(RuntimeError):
    """A release was charged and drawn, but its audit record could not be appended (after retries).

    The charge stands (its noise was drawn); the release (``None`` for a charge that released nothing:
    an unreleased or partition record) and its record are carried here, so that the caller still gets
    the value and can keep the record (the command writes it beside the log and says where): a charge is
    never left without its record."""

    def __init__(self, release: object, record: dict[str, Any], reason: str) -> None:
        super().__init__(f"the release was charged and drawn, but its audit record could not be appended: {reason}")
        self.release = release
        self.record = record


class InterruptedAfterAppend(BaseException):
    """An interrupt (``KeyboardInterrupt``, ``SystemExit``) that arrived once an audit append was durable.

    Raised by :meth:`securedp.audit.log.AuditLog.append` in its place, so that a caller that tries a failed
    append again (:func:`securedp.session.recording.append_record`) knows the record is written and only
    ``interrupt`` is left to raise. A ``BaseException``, like the interrupt it carries."""

    def __init__(self, interrupt: BaseException) -> None:
        super().__init__(f"interrupted after the record was appended ({type(interrupt).__name__})")
        self.interrupt = interrupt
