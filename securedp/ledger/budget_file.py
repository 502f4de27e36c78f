"""The file storage backend of :class:`~securedp.ledger.budget.Budget`: a budget kept across processes.

The file is JSON: ``{"format": "securedp-budget/1", "currency": "epsilon",
"total": "1", "spent": "1/4", "remaining": "3/4", "delta_total": "1/1000000",
"delta_spent": "0", "ledger": "<32 hex>"}`` with exact rationals as ``"num/den"``
strings. ``remaining`` is ``total - spent``, written for whoever reads the file;
a file whose ``remaining`` is anything else was edited by hand and is refused
(a file written before the field existed has none, and is read as before).
``securedp budget FILE`` shows a file.
``currency`` is ``"epsilon"`` (pure DP, costs add) or ``"rho"`` (zCDP,
costs add): the unit of ``total`` and ``spent``, fixed by the release that
creates the file; a release priced in the other unit is refused when the
file is opened (the command opens it in the unit of the release; the
charge itself follows the rules of :mod:`securedp.ledger.budget`,
written once). A file without ``currency`` (written before rho releases
existed) counts ``epsilon``. ``ledger`` names the budget in audit records
(it is the audit log's ``writer`` for every release charged to this file),
so that ``securedp audit verify`` checks the spending across invocations; a
:class:`BudgetFile` object keeps the ledger it first read (or created) and
refuses a file that another budget has replaced since.

``delta_total`` and ``delta_spent`` (optional, together) are the file's
**delta ledger**: the delta that releases selected by partition selection
(a table with private keys, ``--delta``) may spend, and have spent, beside
``total`` (deltas add, by basic composition). It is created with the file
(``--budget-delta``) and cannot be added later; a file without it (every
file written before it existed) is read as before and refuses a release
that spends delta, naming ``--budget-delta``.

**Validation.** A file is read strictly and any deviation is refused with
one line naming the file and the field, before anything is charged or
drawn: the text must be one JSON object (no duplicate keys, no ``NaN`` or
``Infinity``) with exactly the fields above (``currency`` may be absent;
``delta_total`` and ``delta_spent`` both or neither);
``format`` must be ``"securedp-budget/1"``; ``currency`` one of
``"epsilon"``, ``"rho"``; ``total`` and ``spent`` strings in the canonical
form the writer uses (``"3"``, ``"1/4"``: lowest terms, positive
denominator other than 1, no sign on zero, no leading zeros, no spaces, no
decimals), with ``total > 0`` and ``0 <= spent <= total``; ``remaining`` (optional) of
the same form and equal to ``total - spent``; ``delta_total``
and ``delta_spent`` strings of the same form, with ``0 < delta_total < 1``
and ``0 <= delta_spent <= delta_total``; ``ledger`` 32
lowercase hex digits. A file that needs a hand edit to be read is thus
never silently reinterpreted (for example a negative ``spent`` that would
grant extra budget).

``pending`` (optional) is the record of the last charge, written with the charge in one atomic replacement
before the release reads its first random bit, and removed once the release's own record is in the audit
log: ``{"writer": "<32 hex>", "record": {...}}``, where ``record`` is an audit record whose budget fields
are this file's state: the unreleased record of the charge (error ``"OutcomeLost"``,
:mod:`securedp.ledger.audit_record`), or, once the release's own record could not be appended, that record. A file
holding one tells that a release died (or could not append its record) after its charge: the next release
with an audit log first makes sure that log holds the charge's record, appending this one if it does not
(:func:`securedp.session.recording.settle`). A version without this field refuses such a file (unknown
field), and reads every other file as before.

**Links.** The path is resolved (``os.path.realpath``) each time the file is read or written, so that a
symbolic link is followed: the lock, the temporary file and the replacement are those of the file it points
to, and the link stays a link. A file with more than one hard link is refused: a replacement gives a new
file to one name only, so the other names would keep a budget of their own.

**Locking and atomic writes.** :meth:`BudgetFile.hold` holds an exclusive
lock on ``FILE.lock`` (``flock`` on POSIX, ``msvcrt.locking`` on Windows:
:mod:`securedp.hazmat.bits.filelock`) while it reads the file;
every charge is made under it (:meth:`Budget.charging`, for
:meth:`BudgetFile.charge` and for a :class:`~securedp.Session` over the
file alike), refusing a charge that would overspend before anything is
drawn, and :meth:`BudgetFile.save` writes the new state atomically: a
temporary file in the same directory, ``fsync``, then ``os.replace``.
Because every write is such a replacement, :attr:`BudgetFile.ledger` may
read the file without the lock.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

from securedp.hazmat.bits.filelock import locked
from securedp.hazmat.exact.bounds import BUDGET_FILE_BYTES, STORED_DIGITS
from securedp.hazmat.exact.rational import format_rational
from securedp.ledger.audit_record import BudgetState, Currency, Pending, parse_record
from securedp.ledger.budget import Budget, budget_total, delta_rational
from securedp.ledger.errors import BudgetExceeded, IncompatibleCost
from securedp.ledger.release_record import SchemaError

FORMAT = "securedp-budget/1"
FIELDS = frozenset({"format", "currency", "total", "spent", "remaining", "delta_total", "delta_spent", "ledger",
                    "pending"})
OPTIONAL = frozenset({"currency", "remaining", "delta_total", "delta_spent", "pending"})
_TERM = f"[1-9][0-9]{{0,{STORED_DIGITS - 1}}}"  # the declared bound of what a budget keeps
_RATIONAL = re.compile(f"-?(0|{_TERM})(/{_TERM})?")
_LEDGER = re.compile(r"[0-9a-f]{32}")


class BudgetError(ValueError):
    """The budget file is missing, malformed, does not match ``--budget`` or ``--budget-delta``, was replaced by
    another budget, or would be overspent (or charged a delta it has no ledger for, by :meth:`BudgetFile.charge`)."""


class BudgetFile:
    """The budget at ``path``, a :class:`~securedp.ledger.budget.BudgetStore`; ``total`` (from
    ``--budget``) creates it or must match it.

    ``currency`` (``"epsilon"`` or ``"rho"``) is the unit of the releases to
    be charged: it becomes the file's currency when ``total`` creates the
    file, and must equal the recorded currency of an existing file.
    ``delta`` (from ``--budget-delta``, in ``(0, 1)``) gives a file that
    ``total`` creates a delta ledger of that total, and must equal the
    ``delta_total`` of an existing file (a file without one is refused).
    """

    def __init__(self, path: str | os.PathLike[str], total: object | None = None, currency: str = "epsilon",
                 delta: object | None = None) -> None:
        if currency not in (Currency.EPSILON.value, Currency.RHO.value):
            raise ValueError(f"currency must be 'epsilon' or 'rho', got {currency!r}")
        self.path = Path(path)
        self.total = None if total is None else budget_total(total, "budget")
        self.currency = Currency(currency)
        self.delta = None if delta is None else delta_rational(delta, "budget delta")
        self.delta_hint = (f"{self.path} has no delta budget: a budget file gets one only when it is created, by "
                           "`securedp budget create FILE --epsilon E --delta D` or, on its first release, "
                           "--budget TOTAL --budget-delta D")
        self._ledger: str | None = None

    @property
    def ledger(self) -> str:
        """The file's ledger id (for a file that ``total`` will create, the id it will be created with).

        The first time, the file is read and checked as :meth:`hold` reads it, but without the lock: the
        file is only ever replaced atomically, so the read sees one whole version. From then on this
        object keeps that id and refuses, under the lock, a file with another ledger (one created or
        replaced meanwhile), before anything is charged.
        """
        if self._ledger is None:
            self._read()
        assert self._ledger is not None  # set by every successful read
        return self._ledger

    @contextlib.contextmanager
    def hold(self) -> Iterator[BudgetState]:
        """The stored state (a new one if ``total`` creates the file), under the exclusive lock on ``FILE.lock``."""
        real = self.real
        with open(real.with_name(real.name + ".lock"), "a") as lock, locked(lock.fileno()):
            yield self._read()

    @property
    def real(self) -> Path:
        """The file the path names, symbolic links followed (the one locked, read and replaced)."""
        return Path(os.path.realpath(self.path))

    def create(self) -> BudgetState:
        """Create the file of ``total`` (and ``delta``) with nothing spent, under the lock, and return its state.

        A file that exists is refused, never replaced or extended: its ledger, its totals and what it has spent
        stand (an audit log checks them), so a delta ledger is given to a new file only. A symbolic link is
        followed as every use of the file follows it: through a link to a file not yet there, that file is created.
        """
        if self.total is None:
            raise ValueError("a budget file is created with its total")
        refusal = BudgetError(f"{self.path} already exists: a budget file is never replaced or extended (its "
                              "ledger and what it has spent stand); create the new budget under another name")
        if os.path.lexists(self.real):
            raise refusal
        with self.hold() as state:
            if os.path.lexists(self.real):  # created by another process before the lock was taken
                raise refusal
            self.save(state)
        return state

    def save(self, state: BudgetState) -> None:
        """Replace the stored state atomically (call only inside :meth:`hold`)."""
        self._write(state)

    @contextlib.contextmanager
    def charge(self, cost: Fraction, delta: Fraction | None = None) -> Iterator[BudgetState]:
        """Charge ``cost`` (and ``delta`` to the delta ledger) and yield the new state, under the lock
        (:meth:`Budget.charging`).

        Raises :class:`BudgetError` before yielding if the charge would make
        ``spent`` exceed ``total`` or the delta spent exceed ``delta_total``,
        or if ``delta`` is given and the file has no delta ledger. The new state is written before the
        body runs (so a crash never under-counts); if the body raises, the
        previous state is written back.
        """
        if not isinstance(cost, Fraction) or cost <= 0:
            raise ValueError(f"the cost charged to a budget file must be a positive Fraction, got {cost!r}")
        with contextlib.ExitStack() as held:
            try:
                state = held.enter_context(Budget(self.currency, store=self).charging(cost, delta))
            except (BudgetExceeded, IncompatibleCost) as exhausted:
                raise BudgetError(str(exhausted)) from None
            yield state

    def _read(self) -> BudgetState:
        if not self.real.exists():
            if self.total is None:
                raise BudgetError(f"{self.path} does not exist; create it by passing --budget TOTAL")
            if self._ledger is None:
                self._ledger = os.urandom(16).hex()
            return BudgetState(self.total, Fraction(0), self._ledger, self.currency, self.delta)
        state = _parse(self.real, self.path)
        if self._ledger is None:
            self._ledger = state.ledger
        elif state.ledger != self._ledger:
            raise BudgetError(f"{self.path} now holds another budget (ledger {state.ledger}, not {self._ledger}): "
                              "it was created or replaced meanwhile; run the release again")
        if state.currency is not self.currency:
            flag = "--epsilon" if state.currency is Currency.EPSILON else "--rho"
            raise BudgetError(
                f"{self.path} counts {state.currency} but this release is priced in {self.currency}: "
                f"use {flag}, or a separate budget file"
            )
        if self.total is not None and self.total != state.total:
            raise BudgetError(
                f"--budget {format_rational(self.total)} does not match the total {state.currency} "
                f"{format_rational(state.total)} recorded in {self.path}"
            )
        if self.delta is not None and self.delta != state.delta_total:
            recorded = "no delta budget" if state.delta_total is None else \
                f"the total delta {format_rational(state.delta_total)}"
            raise BudgetError(f"--budget-delta {format_rational(self.delta)} does not match {recorded} recorded in "
                              f"{self.path} (a delta budget is created with its file)")
        return state

    def _write(self, state: BudgetState) -> None:
        fields: dict[str, Any] = {
            "format": FORMAT,
            "currency": state.currency.value,
            "total": format_rational(state.total),
            "spent": format_rational(state.spent),
            "remaining": format_rational(state.remaining),
        }
        if state.delta_total is not None:
            fields["delta_total"] = format_rational(state.delta_total)
            fields["delta_spent"] = format_rational(state.delta_spent)
        fields["ledger"] = state.ledger
        if state.pending is not None:
            fields["pending"] = {"writer": state.pending.writer, "record": state.pending.record}
        text = json.dumps(fields, indent=1)
        if len(text.encode("utf-8")) >= BUDGET_FILE_BYTES:
            raise BudgetError(f"the record of this release is too long to be kept with its charge in {self.path} "
                              f"(a budget file holds at most {BUDGET_FILE_BYTES} bytes); nothing was drawn or charged")
        real = self.real
        fd, tmp = tempfile.mkstemp(prefix=real.name + ".", dir=real.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, real)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def read_budget(path: str | os.PathLike[str]) -> BudgetState:
    """The budget stored at ``path``, checked strictly as a release reads it (the module docstring), whatever
    its currency; :class:`BudgetError` naming the file and the field otherwise. Reads without the lock: the
    file is only ever replaced atomically."""
    file = Path(path)
    if not file.exists():
        raise BudgetError(f"no such budget file: {file}")
    return _parse(Path(os.path.realpath(file)), file)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate field {key!r}")
        result[key] = value
    return result


def _canonical_rational(data: dict[str, Any], field: str) -> Fraction:
    """``data[field]``: a string in the canonical ``"num/den"`` form of :func:`format_rational`."""
    text = data[field]
    if not isinstance(text, str):
        raise ValueError(f"{field!r} must be an exact rational string such as \"1/4\", got {text!r}")
    if _RATIONAL.fullmatch(text) is None:
        raise ValueError(f"{field!r} must be an exact rational such as \"3\" or \"1/4\", got {text[:40]!r}")
    value = Fraction(text)
    if format_rational(value) != text:
        raise ValueError(f"{field!r} is not canonical: {text!r} must be written {format_rational(value)!r}")
    return value


def _parse(real: Path, path: Path) -> BudgetState:
    """The budget stored at ``real`` (the file ``path`` names), checked strictly; :class:`BudgetError` naming
    ``path`` and the field otherwise."""
    try:
        with open(real, "rb") as handle:
            links = os.fstat(handle.fileno()).st_nlink
            if links > 1:
                raise ValueError(f"it has {links} hard links: a budget file must have one name, since every charge "
                                 "replaces it and its other names would keep a budget of their own; remove the "
                                 "other links (or use a symbolic link)")
            raw = handle.read(BUDGET_FILE_BYTES + 1)
        if len(raw) > BUDGET_FILE_BYTES:
            raise ValueError(f"larger than {BUDGET_FILE_BYTES} bytes")
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates, parse_constant=_reject_constant)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        unknown = sorted(set(data) - FIELDS)
        if unknown:
            raise ValueError(f"unknown field {unknown[0]!r}")
        missing = sorted(FIELDS - OPTIONAL - set(data))
        if missing:
            raise ValueError(f"missing field {missing[0]!r}")
        if ("delta_total" in data) != ("delta_spent" in data):
            given, absent = ("delta_total", "delta_spent") if "delta_total" in data else ("delta_spent", "delta_total")
            raise ValueError(f"{given!r} without {absent!r}: the delta ledger needs both")
        if data["format"] != FORMAT:
            raise ValueError(f"'format' must be {FORMAT!r}, got {data['format']!r}")
        currency = data.get("currency", Currency.EPSILON.value)
        if currency not in (Currency.EPSILON.value, Currency.RHO.value):
            raise ValueError(f"'currency' must be 'epsilon' or 'rho', got {currency!r}")
        total = _canonical_rational(data, "total")
        spent = _canonical_rational(data, "spent")
        if total <= 0:
            raise ValueError(f"'total' must be > 0, got {format_rational(total)}")
        if spent < 0:
            raise ValueError(f"'spent' must be >= 0, got {format_rational(spent)}")
        if spent > total:
            raise ValueError(f"'spent' {format_rational(spent)} exceeds 'total' {format_rational(total)}")
        if "remaining" in data and _canonical_rational(data, "remaining") != total - spent:
            raise ValueError(f"'remaining' {data['remaining']} is not 'total' - 'spent' = "
                             f"{format_rational(total - spent)}: the file was edited by hand (tampered?); restore it "
                             "from a copy, or check it against the audit log (securedp audit verify)")
        delta_total, delta_spent = None, Fraction(0)
        if "delta_total" in data:
            delta_total = _canonical_rational(data, "delta_total")
            delta_spent = _canonical_rational(data, "delta_spent")
            if not 0 < delta_total < 1:
                raise ValueError(f"'delta_total' must be > 0 and < 1, got {format_rational(delta_total)}")
            if delta_spent < 0:
                raise ValueError(f"'delta_spent' must be >= 0, got {format_rational(delta_spent)}")
            if delta_spent > delta_total:
                raise ValueError(f"'delta_spent' {format_rational(delta_spent)} exceeds 'delta_total' "
                                 f"{format_rational(delta_total)}")
        ledger = data["ledger"]
        if not isinstance(ledger, str) or _LEDGER.fullmatch(ledger) is None:
            raise ValueError(f"'ledger' must be 32 lowercase hex digits, got {str(ledger)[:40]!r}")
        pending = None if "pending" not in data else _pending(data["pending"], total, spent, delta_spent)
    except (OSError, ValueError, TypeError, RecursionError) as exc:
        raise BudgetError(f"{path} is not a valid budget file ({exc})") from None
    return BudgetState(total, spent, ledger, Currency(currency), delta_total, delta_spent, pending)


def _pending(value: object, total: Fraction, spent: Fraction, delta_spent: Fraction) -> Pending:
    """The ``pending`` field: a writer and the unreleased record of the file's last charge, just after it."""
    if not isinstance(value, dict) or set(value) != {"writer", "record"}:
        raise ValueError("'pending' must be an object with exactly 'writer' and 'record'")
    writer = value["writer"]
    if not isinstance(writer, str) or _LEDGER.fullmatch(writer) is None:
        raise ValueError("'pending.writer' must be 32 lowercase hex digits")
    try:
        record = parse_record(value["record"])
    except SchemaError as error:
        raise ValueError(f"'pending.record.{error.field}': {error.message}") from None
    fields = record.budget
    if fields is None:
        raise ValueError("'pending.record' must state the budget it was charged to")
    if (fields.spent, fields.spent + fields.remaining) != (spent, total) or \
            (fields.delta.spent if fields.delta is not None else delta_spent) != delta_spent:
        raise ValueError("'pending.record' does not state this file's spent budget: the file was edited by hand")
    return Pending(writer, value["record"])
