"""What :func:`~securedp.audit.verify.verify_log` reports: the first :class:`Problem`, in a :class:`Report`.

The checks (:mod:`~securedp.audit.check_chain`, :mod:`~securedp.audit.check_schema`,
:mod:`~securedp.audit.check_ledger`) raise :class:`Bad` naming the field and the
rule; the verifier turns it into the :class:`Problem` of that line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Problem:
    """The first thing wrong with a log: where it is and which rule it breaks."""

    line: int
    offset: int
    field: str | None
    message: str

    def __str__(self) -> str:
        where = f"line {self.line} (byte {self.offset})"
        what = f", field {self.field!r}" if self.field else ""
        return f"{where}{what}: {self.message}"


@dataclass(frozen=True)
class Report:
    """The outcome of :func:`verify_log`.

    ``valid`` counts the lines, from the first, that passed every check;
    ``head`` is the hash of the last of them (64 zeros for none); ``problem``
    is the first failure or ``None``; ``torn_tail`` says that the failure is
    an incomplete last line, as left by a crash mid-write.

    ``signed`` counts the valid lines that carry a signature; ``key`` is the
    fingerprint of the reviewer's public key when one was given, and then
    every valid line was checked against it (``authenticated``);
    ``head_records`` is the record count of a signed head that was checked
    and matched (``None`` if none was given). :attr:`trust` says in one line
    what the outcome is worth. ``kept`` holds the lines of ``LOG.unappended``
    (records of charges that stand, kept beside the log when their append
    failed: :mod:`securedp.audit.kept`) whose record is not in the log: the
    log may be sound and still miss them.
    """

    valid: int
    head: str
    problem: Problem | None = None
    entries: list[dict[str, Any]] = field(default_factory=list, repr=False)
    signed: int = 0
    key: str | None = None
    head_records: int | None = None
    kept: tuple[str, ...] = ()

    @property
    def authenticated(self) -> bool:
        """True when a public key was given and every valid line's signature verified with it."""
        return self.key is not None

    @property
    def trust(self) -> str:
        """One line: what a clean report proves, and against whom."""
        if self.key is not None:
            covered = (
                "no signed head checked: records removed from the end would go unnoticed"
                if self.head_records is None
                else f"the signed head covers {self.head_records} of {self.valid} records"
            )
            return f"signed: every record verified with the public key {self.key}; {covered}"
        if self.signed:
            return (
                f"signatures present on {self.signed} records but NOT checked (no public key given): "
                "integrity only against accidents, not against the log's writer"
            )
        return "unsigned: integrity only against accidents, not against the log's writer"

    @property
    def ok(self) -> bool:
        """True when every line passed."""
        return self.problem is None

    @property
    def torn_tail(self) -> bool:
        """True when the only problem is an incomplete last line."""
        return self.problem is not None and self.problem.message.startswith("truncated")


class Bad(Exception):
    """A check failed: ``field`` (dotted, or ``None`` for the whole line) and the rule broken."""

    def __init__(self, field_name: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field_name
        self.message = message
