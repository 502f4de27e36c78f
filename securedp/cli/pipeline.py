"""The command's one pipeline: every release it makes, from its options to its record, as one transaction.

Every command that releases (``release`` of one column or of a table, ``bounds``, ``analyze --epsilon``,
and the bounds of ``COLUMN:auto``) goes through :func:`preflight` then :func:`release`:

1. **Before the data is read or a bit drawn** (:func:`preflight`): the audit log can take a record (it
   opens for appending, its lock can be taken and its last line is a whole record whose hash is right:
   :meth:`~securedp.audit.log.AuditLog.check_appendable`), the budget file agrees with the options
   (its total, currency and delta ledger), and an ``--output`` file can be written. A failure refuses the
   release, naming what failed; nothing is read, drawn or charged.
2. The caller prepares the release (reading the data, in the mode of ``--analyst-facing``).
3. :meth:`securedp.Session.release` charges it (to the budget file, or to a budget of exactly its own
   cost), draws it from ``--seed-file`` (a fresh substream) or the system source, and appends its record
   with the query (so that ``securedp audit replay`` re-derives it). Once a bit is drawn the charge
   stands and the record is written: an append that still fails after its retries leaves the record in
   ``LOG.unappended`` beside the log, and the command says so (:func:`release`); the value is shown
   all the same. A release that fails once a bit is drawn (an interrupt, an output that cannot be built)
   releases nothing, and its charge stands with a record of its own (``"kind": "unreleased"``).

**A kill at any instant.** The charge to the budget file is written together with its record (the budget
file's ``pending`` field, :mod:`securedp.ledger.budget_file`), before the first random bit, and that
record is removed once the release's own is durable. :func:`preflight` therefore starts by recovering what a
release killed before that left (:func:`recover`): a torn last line is moved to ``LOG.torn``, the kept
records the ledger takes next are appended from ``LOG.unappended``, and the pending record is appended
unless the log holds the charge's record already; a budget file holding a pending record refuses a release
without ``--audit-log``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from securedp.audit.kept import TORN_SUFFIX, append_kept, cut_torn_tail, keep, kept_lines, kept_path
from securedp.audit.log import AuditLog
from securedp.audit.replay import read_seed
from securedp.audit.signing import load_signing_key
from securedp.cli.show import counted, exact_text
from securedp.hazmat.bits.chacha import ChaChaSource
from securedp.hazmat.bits.source import RandomSource
from securedp.ledger.audit_record import BudgetFields, BudgetState, Currency
from securedp.ledger.budget import Budget
from securedp.ledger.budget_file import BudgetFile, read_budget
from securedp.ledger.errors import RecordNotAppended
from securedp.ledger.release import PreparedRelease, Release
from securedp.reading.files import read_file
from securedp.session.recording import last_budget_fields, settle
from securedp.session.session import Session


class Failure(Exception):
    """A failure to report as one line with exit status 1."""


class Recorder:
    """The audit of the command's session: keeps the record of its one release and appends it to the log, if
    there is one (:attr:`entry`: the line written, else ``None``)."""

    def __init__(self, log: AuditLog | None) -> None:
        self.log = log
        self.record: dict[str, Any] = {}
        self.entry: dict[str, Any] | None = None

    def append(self, record: dict[str, Any]) -> None:
        self.record = record
        self.entry = None if self.log is None else self.log.append(record)

    @property
    def writer(self) -> str | None:
        """The log's writer (``None`` without a log: then no record is kept with a charge)."""
        return None if self.log is None else self.log.writer

    def records_of(self, writer: str) -> Iterator[dict[str, Any]]:
        """The records of ``writer`` in the log, last first (:meth:`~securedp.audit.log.AuditLog.records_of`)."""
        return iter(()) if self.log is None else self.log.records_of(writer)

    @property
    def budget(self) -> BudgetState | None:
        """The budget file just after the charge, as the record states it, or ``None`` without a budget file."""
        fields = BudgetFields.from_json(self.record)
        if fields is None:
            return None
        assert fields.total is not None and fields.currency is not None  # the command's budget fields
        return BudgetState(fields.total, fields.spent, None, fields.currency)


@dataclass(frozen=True)
class Ledgers:
    """What :func:`preflight` opened and checked: the budget file (or ``None``), the audit log (or ``None``)."""

    currency: Currency
    store: BudgetFile | None
    log: AuditLog | None


def preflight(args: argparse.Namespace, currency: Currency) -> Ledgers:
    """Check, before anything is read or drawn, that the release could be charged, recorded and written (see
    the module docstring); return the ledgers to charge and record it with."""
    store = None
    if args.budget_file is None:
        for flag, value in (("--budget", args.budget), ("--budget-delta", getattr(args, "budget_delta", None))):
            if value is not None:
                raise Failure(f"{flag} needs --budget-file")
    else:
        store = BudgetFile(args.budget_file, args.budget, currency.value, getattr(args, "budget_delta", None))
        store.ledger  # noqa: B018 - reads the file and checks it against the options, before anything is drawn
        check_writable(store.real, "the budget file")  # and its lock file beside it (links followed)
        cut_if_pending(store, args.audit_log)
    log = _audit_log(args, None if store is None else store.ledger)
    if log is not None:
        log.check_appendable()
        if store is not None:
            recover(store, log)
            check_not_behind(store, log)
    output = getattr(args, "output", None)
    if output is not None:
        check_writable(Path(output), "the output")
    return Ledgers(currency, store, log)


def cut_if_pending(store: BudgetFile, log: str | None) -> None:
    """If the budget file holds a pending record (its last release died before its record was known to be
    durable): refuse a release without an audit log, and move a torn last line of the log to ``LOG.torn``."""
    if not _pending_seen(store):
        return
    if log is None:
        with store.hold() as state:  # a release in progress holds one too: wait for it
            if state.pending is None:
                return
        raise Failure(f"the budget file {store.path} holds the record of a charge that may not be in its audit log "
                      "yet (a release died after its charge, or could not append its record): release with its "
                      "--audit-log first, which appends the record if it is missing; nothing was read, drawn or "
                      "charged")
    moved = cut_torn_tail(log)
    if moved:
        print(f"securedp: note: the last line of {log} was torn ({moved} bytes: a release died while writing it); "
              f"it was moved to {log}{TORN_SUFFIX}, and the record of its charge is appended", file=sys.stderr)


def recover(store: BudgetFile, log: AuditLog) -> None:
    """Before the release: append the kept records of ``LOG.unappended`` that the ledger takes next, then the
    record the budget file keeps with its last charge if the log does not hold that charge's record
    (:meth:`~securedp.ledger.budget.Budget.settle`); say which kept records are left beside the log."""
    if not kept_lines(log.path) and not _pending_seen(store):
        return  # the common case: nothing to recover, and no lock taken to see it
    with store.hold() as state:
        left = append_kept(log, state)
    Budget(store.currency.value, store=store).settle(lambda pending: settle(log, pending))
    if left:
        print(f"securedp: note: {counted(len(left), 'record')} kept in {kept_path(log.path)} "
              "not appended: the ledger does not take them next (securedp audit verify lists them)", file=sys.stderr)


def _pending_seen(store: BudgetFile) -> bool:
    """Whether the budget file holds a pending record, read without the lock (the file is only ever replaced
    atomically): a release in progress holds one too, so what is seen is settled under the lock, or refused
    there (:meth:`~securedp.ledger.budget.Budget.charging`)."""
    return store.real.exists() and read_budget(store.path).pending is not None


def check_not_behind(store: BudgetFile, log: AuditLog) -> None:
    """Raise :class:`Failure` if the budget file has spent less than the log's last record of its ledger says
    it had: a file restored from an older copy (or put back by hand), whose releases would be charged to a
    budget already spent. Only the log given is read; a file ahead of it is fine (its charges may be recorded
    in another log, or kept beside this one)."""
    fields = last_budget_fields(log.records_of(store.ledger))
    if fields is None:
        return
    with store.hold() as state:
        spent, delta_spent = state.spent, state.delta_spent
    behind = [f"spent {what} {exact_text(have)}, where the audit log's last record of its ledger says "
              f"{exact_text(logged)}" for what, have, logged in (
                  (state.currency.value, spent, fields.spent),
                  ("delta", delta_spent, None if fields.delta is None else fields.delta.spent))
              if logged is not None and have < logged]
    if behind:
        raise Failure(f"the budget file {store.path} is behind the audit log {log.path}: it has "
                      f"{'; and '.join(behind)} (was it restored from an older copy?); nothing was read, drawn "
                      "or charged")


def check_writable(path: Path, what: str) -> None:
    """Raise :class:`Failure` naming ``what`` unless ``path`` can be written (an existing file, or a new one
    in a folder that can be written), without changing it."""
    folder = path.parent if str(path.parent) else Path(".")
    if path.exists():
        ok = path.is_file() and os.access(path, os.W_OK)
    else:
        ok = folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)
    if not ok:
        where = "" if path.exists() or folder.is_dir() else f" (the folder {folder} does not exist)"
        raise Failure(f"cannot write {what} {path}{where}: nothing was read, drawn or charged")


def _audit_log(args: argparse.Namespace, writer: str | None) -> AuditLog | None:
    """The release's audit log, signed with ``--signing-key`` when given."""
    key = getattr(args, "signing_key", None)
    if args.audit_log is None:
        if key is not None:
            raise Failure("--signing-key needs --audit-log")
        return None
    return AuditLog(args.audit_log, writer=writer, signing_key=None if key is None else load_signing_key(key))


def source(args: argparse.Namespace) -> RandomSource | None:
    """A fresh, uniquely labelled substream of the seed file's stream, or ``None`` for the system source."""
    if args.seed_file is None:
        return None
    return ChaChaSource(read_seed(args.seed_file)).substream(f"release-{os.urandom(16).hex()}")


@dataclass(frozen=True)
class Released:
    """A release of the command: the release, its recorder, and ``unrecorded``: ``None``, or why its record is
    beside the log rather than in it (the caller shows the release with :meth:`show`, then calls :meth:`finish`)."""

    release: Release
    recorder: Recorder
    unrecorded: str | None = None
    failed_writes: list[str] = field(default_factory=list)
    """Each write of its result that failed after the draw, and where the result went instead."""

    def show(self, text: str) -> None:
        """Write ``text`` (a result of the release, which is charged and recorded) to standard output; if that
        fails, to standard error, so that the value drawn still reaches the user, and :meth:`finish` fails."""
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except OSError as error:
            sys.stderr.write(text)
            self.failed_writes.append(f"cannot write to standard output ({error.strerror or error}); the release was "
                                "charged and recorded, and its result is printed on standard error")

    def finish(self) -> int:
        """Exit status 0, or raise the ``unrecorded`` failure and the :attr:`failed_writes` (after the caller has
        shown the release)."""
        failures = [*([] if self.unrecorded is None else [self.unrecorded]), *self.failed_writes]
        if failures:
            raise Failure("; ".join(failures))
        return 0


def release(args: argparse.Namespace, ledgers: Ledgers, prepared: PreparedRelease,
            query: dict[str, Any]) -> Released:
    """Charge, draw and record ``prepared`` with ``query`` (see the module docstring)."""
    cost = prepared.cost
    currency = ledgers.currency
    if ledgers.store is not None:
        budget = Budget(currency.value, store=ledgers.store)
    else:  # a session of exactly this release's cost: the price is the release's own
        budget = Budget(currency.value, cost.amount, delta=cost.delta)
    recorder = Recorder(ledgers.log)
    session = Session(budget=budget, rng=source(args), audit=recorder,
                      analyst_facing=bool(getattr(args, "analyst_facing", False)))
    try:
        released = Released(session.release(prepared, query=query), recorder)
        if not session.analyst_facing and holds_no_record(args):
            print(f"securedp: note: 0 rows read from {args.data}: the release is of an empty table, its values "
                  "noise alone", file=sys.stderr)
        return released
    except RecordNotAppended as failure:
        kept = _keep(ledgers.log, failure.record)
        if not isinstance(failure.release, Release):  # the record of a charge that stood with nothing released
            raise Failure(f"{failure}; the record of this charge (nothing was released) was written to {kept}: "
                          "append it to the log before anything else") from failure
        recorder.record = failure.record
        return Released(failure.release, recorder, f"{failure}; the record was written to {kept}: append it to the "
                        "log before anything else (or keep it beside it), so that verify finds every charge")


_SMALL = 1 << 20
"""A CSV file larger than this holds records: it is not read again to count them."""


def holds_no_record(args: argparse.Namespace) -> bool:
    """Whether the release's data file (``args.data``) holds a header and no record: a note for the data
    holder (never asked in an analyst-facing session: it depends on the data). A Parquet file's row count is
    in its metadata; a small CSV file is read again, its header and records only; standard input, Spark and a
    large file are not looked at."""
    path = Path(str(args.data))
    if args.data == "-" or getattr(args, "engine", "memory") != "memory" or not path.is_file():
        return False
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        return bool(pq.ParquetFile(path).metadata.num_rows == 0)
    if path.stat().st_size > _SMALL:
        return False
    return read_file(path, [], delimiter=getattr(args, "delimiter", ","), encoding=args.encoding).height == 0


def _keep(log: AuditLog | None, record: dict[str, Any]) -> str:
    """Write ``record`` to ``LOG.unappended`` (:func:`~securedp.audit.kept.keep`), or to standard error if that
    fails too."""
    if log is not None:
        try:
            return str(keep(log.path, record))
        except OSError:
            pass
    print(json.dumps(record, sort_keys=True), file=sys.stderr)
    return "standard error"
