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
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from securedp.accounting.budget import Budget
from securedp.accounting.budget_file import BudgetFile
from securedp.accounting.errors import RecordNotAppended
from securedp.accounting.schema import BudgetFields, BudgetState, Currency
from securedp.accounting.session import Session
from securedp.audit.log import AuditLog
from securedp.audit.replay import read_seed
from securedp.audit.signing import load_signing_key
from securedp.cli.show import exact_text
from securedp.hazmat.bits.chacha import ChaChaSource
from securedp.hazmat.bits.source import RandomSource
from securedp.mechanisms.record_schema import SchemaError
from securedp.mechanisms.release import PreparedRelease, Release
from securedp.reading.files import read_file


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
        check_writable(Path(args.budget_file), "the budget file")  # and its lock file beside it
    log = _audit_log(args, None if store is None else store.ledger)
    if log is not None:
        log.check_appendable()
        if store is not None:
            check_not_behind(store, log)
    output = getattr(args, "output", None)
    if output is not None:
        check_writable(Path(output), "the output")
    return Ledgers(currency, store, log)


def check_not_behind(store: BudgetFile, log: AuditLog) -> None:
    """Raise :class:`Failure` if the budget file has spent less than the log's last record of its ledger says
    it had: a file restored from an older copy (or put back by hand), whose releases would be charged to a
    budget already spent. Only the log given is read; a file ahead of it is fine (its charges may be recorded
    in another log, or kept beside this one)."""
    fields = _last_top_fields(log, store.ledger)
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


def _last_top_fields(log: AuditLog, ledger: str) -> BudgetFields | None:
    """The budget fields of the last record of ``ledger`` in ``log`` that is charged to the budget itself (not to
    a partition's part) and whose budget fields the schema accepts, or ``None``."""
    for record in log.records_of(ledger):
        try:
            fields = BudgetFields.from_json(record)
        except (SchemaError, ValueError, ArithmeticError):  # not a record verify accepts (it says so): go on
            continue
        if fields is not None and (fields.session is None or (not fields.session.path and
                                                              fields.session.partition_id is None)):
            return fields
    return None


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
    """Write ``record`` to ``LOG.unappended`` (one JSON line), or to standard error if that fails too."""
    text = json.dumps(record, sort_keys=True)
    if log is not None:
        kept = Path(str(log.path) + ".unappended")
        try:
            with open(kept, "a", encoding="utf-8") as handle:
                handle.write(text + "\n")
            return str(kept)
        except OSError:
            pass
    print(text, file=sys.stderr)
    return "standard error"
