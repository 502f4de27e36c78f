"""Verification of an audit log: the hash chain, the record schema and the budget arithmetic.

:func:`verify_log` reads a log written by :class:`~securedp.audit.log.AuditLog`
and stops at the first problem, naming its line, byte offset, field and the
rule broken; it never raises on bad content (every failure, including
bytes no parser should see, is a :class:`Problem`). For each line, in order:

1. **chain** (:mod:`securedp.audit.check_chain`): a complete line, in
   canonical JSON, with the envelope fields of the format, chained to the
   previous line by ``prev`` and ``hash``, and signed by the reviewer's
   ``public_key`` when one is given (without one a signature's form is
   checked but not its validity, and the :class:`Report` says the log is
   authenticated against accidents only);
2. **schema** (:mod:`securedp.audit.check_schema`): the ``record`` parses
   into the typed classes of the one record schema
   (:mod:`securedp.ledger.release_record`,
   :mod:`securedp.ledger.audit_record`): a release record, with the budget
   fields of a session or of the command, a partition record, or an
   unreleased charge (a charge that stood with nothing released);
3. **ledger** (:mod:`securedp.audit.check_ledger`): per ledger (a writer,
   and within it a sub-session opened by a partition), each charge is the
   one the budget's currency implies (:mod:`securedp.ledger.budget`,
   :mod:`securedp.privacy.conversions`) and ``spent`` adds up exactly.

Records kept beside the log (``LOG.unappended``: charges whose append failed) that are not in it are listed
in :attr:`Report.kept`, whatever the outcome of the checks.

Deleting whole lines at the *end* of a log leaves a valid chain (and valid
signatures). Pass a signed head statement (``head=``, checked with
``public_key``) to detect that: the log must hold at least the statement's
record count and its record at that count must have the statement's hash.
Records after it are verified but not covered by the head. (An unsigned
``expected_head`` hash published earlier does the same for an unsigned log.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from securedp.audit.check_chain import check_end, check_signature, lines, read_entry, read_head
from securedp.audit.check_ledger import Ledgers
from securedp.audit.check_schema import parse_logged
from securedp.audit.kept import unappended
from securedp.audit.log import GENESIS
from securedp.audit.problem import Bad, Problem, Report
from securedp.audit.signing import PublicKeyLike, fingerprint, load_public_key

__all__ = ["Problem", "Report", "verify_log"]


def verify_log(
    path: str | Path,
    expected_head: str | None = None,
    *,
    public_key: PublicKeyLike | None = None,
    head: Any = None,
) -> Report:
    """Check the log at ``path`` and return a :class:`Report` (it never raises on bad content).

    ``public_key`` (an Ed25519 public key, its text form ``ed25519:...`` or
    a file holding it): every line must be signed by it. ``head``: a signed
    head statement (a dict, its bytes, or the path of its file, such as the
    ``.head`` file a signing :class:`~securedp.audit.log.AuditLog` keeps),
    checked with ``public_key``; the log must hold the records it covers.
    ``expected_head`` (a hash published earlier): the log must contain a
    line with that hash. Raises :class:`OSError` only if the log cannot be
    read, and :class:`ValueError` for a malformed ``public_key`` or a
    ``head`` without ``public_key``.
    """
    key = None if public_key is None else load_public_key(public_key)
    if head is not None and key is None:
        raise ValueError("a signed head can only be checked with the signer's public key (public_key=)")
    statement = None if head is None else read_head(head)
    data = Path(path).read_bytes()
    ledgers = Ledgers()
    entries: list[dict[str, Any]] = []
    fp = None if key is None else fingerprint(key)

    def report(problem: Problem | None, head_records: int | None = None) -> Report:
        prev = entries[-1]["hash"] if entries else GENESIS
        signed = sum("sig" in entry for entry in entries)
        kept = tuple(unappended(path, (entry["record"] for entry in entries)))
        return Report(len(entries), prev, problem, entries, signed, fp if problem is None else None, head_records,
                      kept)

    for index, (offset, raw, complete) in enumerate(lines(data)):
        try:
            entry = read_entry(raw, complete, index, entries[-1]["hash"] if entries else GENESIS)
            check_signature(entry, key)
            ledgers.check(entry["writer"], parse_logged(entry["record"]))
        except Bad as bad:
            return report(Problem(index + 1, offset, bad.field, bad.message))
        except Exception as exc:  # the contract: bad content is a Problem, never an exception
            return report(Problem(index + 1, offset, None, f"cannot be checked ({type(exc).__name__})"))
        entries.append(entry)
    return report(*check_end(entries, len(data), expected_head, statement, key))
