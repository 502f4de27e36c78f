"""What a failed append or a kill leaves beside an audit log, and how it is put back.

* **Kept records** (``LOG.unappended``, one JSON record a line): the command writes there the record of a
  charge that stands when its append still fails after its retries (:func:`keep`). The next release of the
  command with a budget file appends each kept record that its ledger takes next (:func:`append_kept`:
  its ``spent`` is the ledger's last ``spent`` plus its charge, with the same total; a kept record without
  budget fields is taken as it is) and leaves the others in the file; :func:`unappended` lists, for
  ``securedp audit verify``, each kept record that is not in the log.
* **A torn tail** (the bytes after the last newline: a line whose write a kill or a power cut cut short) is
  moved to ``LOG.torn`` and cut from the log by :func:`cut_torn_tail`, under the log's lock (no writer is
  mid-line then: each writes its line under it). The command does this only when its budget file holds a
  pending record (:class:`~securedp.ledger.audit_record.Pending`): the proof that its last release died before
  its record was known to be durable; the charge's record is then appended by recovery.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from securedp.audit.canonical import canonical
from securedp.audit.check_ledger import own_cost, stated_charge
from securedp.audit.log import AuditLog
from securedp.audit.problem import Bad
from securedp.hazmat.bits.filelock import lock_file
from securedp.ledger.audit_record import BudgetState, PartitionRecord, parse_record
from securedp.ledger.release_record import SchemaError
from securedp.session.recording import last_budget_fields

KEPT_SUFFIX = ".unappended"
TORN_SUFFIX = ".torn"
_CHUNK = 1 << 16


def kept_path(log: str | os.PathLike[str]) -> Path:
    """Where the records kept beside the log ``log`` are: ``LOG.unappended``."""
    return Path(str(log) + KEPT_SUFFIX)


def keep(log: str | os.PathLike[str], record: dict[str, Any]) -> Path:
    """Append ``record`` to ``LOG.unappended`` (one JSON line, synced) and return that path; :class:`OSError` if
    it cannot be written."""
    path = kept_path(log)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    return path


def kept_lines(log: str | os.PathLike[str]) -> list[str]:
    """The lines of ``LOG.unappended`` (none if there is no such file)."""
    try:
        text = kept_path(log).read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return []
    return [line for line in text.splitlines() if line.strip()]


def unappended(log: str | os.PathLike[str], records: Iterable[Any]) -> list[str]:
    """The lines of ``LOG.unappended`` whose record is not one of ``records`` (those of the log's lines)."""
    logged = {canonical(record) for record in records}
    return [line for line in kept_lines(log) if _canonical_line(line) not in logged]


def _canonical_line(line: str) -> bytes | None:
    try:
        return canonical(json.loads(line))
    except (ValueError, TypeError, RecursionError):
        return None


def append_kept(log: AuditLog, state: BudgetState) -> list[str]:
    """Append to ``log`` each record of ``LOG.unappended`` that the ledger of ``log``'s writer takes next, in
    order, and return the lines left in the file (rewritten without the ones appended; removed when none is
    left). Call it holding the lock of the budget in ``state`` (the budget file whose ledger is the writer),
    so that no other charge of that budget is recorded meanwhile."""
    lines = kept_lines(log.path)
    if not lines:
        return []
    left = [line for line in lines if not _appended_next(log, state, line)]
    _rewrite(kept_path(log.path), left)
    return left


def _appended_next(log: AuditLog, state: BudgetState, line: str) -> bool:
    """Append the kept record ``line`` if it is well formed and the writer's ledger takes it next (or holds it
    already); whether it is now in the log."""
    try:
        record = json.loads(line)
        typed = parse_record(record)
        fields = typed.budget
        if isinstance(typed, PartitionRecord):
            charge = typed.budget.charged
        else:
            charge = None if typed.budget is None else stated_charge(own_cost(typed), typed.budget)
    except (ValueError, TypeError, RecursionError, SchemaError, Bad):
        return False
    if fields is not None:
        assert charge is not None  # every record with budget fields has a charge
        last = last_budget_fields(log.records_of(log.writer))
        total = fields.spent + fields.remaining
        if last is not None and (last.spent + last.remaining != total or last.spent + charge != fields.spent):
            return bool(last.spent == fields.spent and any(r == record for r in log.records_of(log.writer)))
        if last is None and (state.pending is None or fields.spent != state.spent or charge > fields.spent):
            return False
    log.append(record)
    return True


def _rewrite(path: Path, lines: list[str]) -> None:
    """Replace ``path`` atomically by ``lines`` (remove it when there are none)."""
    if not lines:
        path.unlink(missing_ok=True)
        return
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("".join(line + "\n" for line in lines))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def cut_torn_tail(log: str | os.PathLike[str]) -> int:
    """Under the log's lock, move the bytes after the last newline of ``log`` (a torn tail) to ``LOG.torn``
    (appended and synced first) and cut them from the log; return how many bytes were moved (0: none, or no
    log)."""
    try:
        fd = os.open(log, os.O_RDWR)
    except FileNotFoundError:
        return 0
    try:
        lock_file(fd)
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return 0
        end = size
        while end > 0:  # back to just after the last newline (0 if there is none), a chunk at a time
            step = min(_CHUNK, end)
            newline = os.pread(fd, step, end - step).rfind(b"\n")
            end -= step
            if newline >= 0:
                end += newline + 1
                break
        torn = os.pread(fd, size - end, end)
        with open(str(log) + TORN_SUFFIX, "ab") as aside:
            aside.write(torn + b"\n")
            aside.flush()
            os.fsync(aside.fileno())
        os.ftruncate(fd, end)
        os.fsync(fd)
        return size - end
    finally:
        os.close(fd)
