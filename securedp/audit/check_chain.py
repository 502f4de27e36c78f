"""Chain checks of an audit log: each line's bytes and envelope, the hash chain, signatures, the signed head.

For line ``i`` (1-based) of a log written by :class:`~securedp.audit.log.AuditLog`:

1. it is a complete line (a last line without a newline is a *torn tail*:
   the ``i - 1`` lines before it still verify);
2. its bytes are the canonical JSON text of an object
   (:func:`~securedp.audit.canonical.parse_canonical`): UTF-8, no duplicate
   key, no ``NaN``/``Infinity``/float literal, nesting at most 64 deep, and
   re-serialising the parsed object gives back exactly the bytes written;
3. it has exactly the fields of the format (plus ``signer`` and ``sig``
   together, on a signed line), ``format`` is ``"securedp-audit/1"``,
   ``seq == i - 1``, ``time`` is an ISO 8601 UTC time, ``version`` and
   ``writer`` are well formed;
4. ``prev`` is the ``hash`` of line ``i - 1`` (64 zeros for line 1) and
   ``hash`` is the SHA-256 of the line's other fields but ``sig`` (so any
   edited field, inserted, removed or reordered line breaks the chain);
5. with the reviewer's ``public_key``: the line is signed by that key and
   its signature verifies (:mod:`securedp.audit.signing`); without one, a
   signature's form is checked but not its validity.

After the last line, :func:`check_end` compares the log with a signed head
statement (its record count and hash) or an ``expected_head`` hash.
Every failure is a :class:`~securedp.audit.problem.Bad` or a
:class:`~securedp.audit.problem.Problem`, never another exception.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from securedp.audit.canonical import NotCanonical, parse_canonical
from securedp.audit.log import ENTRY_FIELDS, FORMAT, GENESIS, SIGNATURE_FIELDS, entry_hash
from securedp.audit.problem import Bad, Problem
from securedp.audit.signing import ENTRY_CONTEXT, SignatureError, check_head, check_signature_fields, verify_signature

_HEX32 = re.compile(r"[0-9a-f]{32}")
_VERSION = re.compile(r"\d+\.\d+\.\d+\S*")


def lines(data: bytes) -> Iterator[tuple[int, bytes, bool]]:
    """``(offset, line without its newline, complete)`` for each line of ``data``."""
    offset = 0
    while offset < len(data):
        end = data.find(b"\n", offset)
        if end < 0:
            yield offset, data[offset:], False
            return
        yield offset, data[offset:end], True
        offset = end + 1


def read_entry(raw: bytes, complete: bool, index: int, prev: str) -> dict[str, Any]:
    """The entry of line ``index + 1`` (0-based ``index``) after checks 1 to 4, chained to ``prev``."""
    if not complete:
        raise Bad(None, f"truncated tail: an incomplete last record; the {index} records before it verify")
    try:
        entry = parse_canonical(raw)
    except NotCanonical as exc:
        raise Bad(None, str(exc)) from None
    missing = sorted(ENTRY_FIELDS - entry.keys())
    if missing:
        raise Bad(missing[0], "missing")
    extra = sorted(entry.keys() - ENTRY_FIELDS - SIGNATURE_FIELDS)
    if extra:
        raise Bad(extra[0], "unexpected field")
    half = sorted(SIGNATURE_FIELDS - entry.keys())
    if len(half) == 1:
        raise Bad(half[0], "missing (a signed line has both 'signer' and 'sig')")
    if entry["format"] != FORMAT:
        raise Bad("format", f"expected {FORMAT!r}, got {entry['format']!r}")
    if type(entry["seq"]) is not int or entry["seq"] != index:
        raise Bad("seq", f"expected {index}, got {entry['seq']!r}")
    _check_time(entry["time"])
    if not isinstance(entry["version"], str) or not _VERSION.fullmatch(entry["version"]):
        raise Bad("version", f"not a version string: {entry['version']!r}")
    if not isinstance(entry["writer"], str) or not _HEX32.fullmatch(entry["writer"]):
        raise Bad("writer", "must be 32 lowercase hex digits")
    if entry["prev"] != prev:
        raise Bad("prev", "does not match the hash of the previous record (chain broken)")
    if not isinstance(entry["hash"], str) or entry["hash"] != entry_hash(entry):
        raise Bad("hash", "does not match the record's contents (record altered)")
    return entry


def _check_time(value: object) -> None:
    try:
        parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    offset = None if parsed is None else parsed.utcoffset()
    if offset is None or offset.total_seconds() != 0:
        raise Bad("time", f"not an ISO 8601 UTC time: {value!r}")


def check_signature(entry: dict[str, Any], key: Ed25519PublicKey | None) -> None:
    """Check 5: the entry's signature under ``key``, or only its form without a key."""
    try:
        if key is not None:
            verify_signature(key, entry, ENTRY_CONTEXT)
        elif "sig" in entry:
            check_signature_fields(entry)
    except SignatureError as error:
        field_name = "signer" if str(error).startswith("signed by key") or "signer" in str(error) else "sig"
        raise Bad(field_name, str(error)) from None


def read_head(head: object) -> dict[str, Any] | str:
    """A head statement from a dict, the bytes of its file, or its path; a string problem if unreadable."""
    if isinstance(head, Mapping):
        return dict(head)
    try:
        raw = head if isinstance(head, bytes) else Path(head).read_bytes()  # type: ignore[arg-type]
    except (OSError, TypeError, ValueError) as exc:
        return f"cannot read the signed head: {exc}"
    try:
        return parse_canonical(raw.rstrip(b"\n"))
    except NotCanonical as exc:
        return f"the signed head is not a canonical statement: {exc}"


def check_end(
    entries: list[dict[str, Any]], end: int, expected_head: str | None,
    statement: dict[str, Any] | str | None, key: Ed25519PublicKey | None,
) -> tuple[Problem | None, int | None]:
    """After the valid ``entries`` (``end`` bytes): the problem with the expected or signed head, if any,
    and the record count the signed head covers (``None`` without one)."""
    after = len(entries) + 1
    if expected_head is not None and all(entry["hash"] != expected_head for entry in entries):
        removed = "the expected head hash is not in the log (records removed from the end)"
        return Problem(after, end, None, removed), None
    if statement is None or key is None:
        return None, None
    if isinstance(statement, str):
        return Problem(after, end, "head", statement), None
    try:
        count, digest = check_head(statement, key)
    except SignatureError as error:
        return Problem(after, end, "head", f"signed head: {error}"), None
    if count > len(entries):
        return Problem(
            after, end, "head",
            f"the signed head covers {count} records but the log has {len(entries)}: records removed from the end",
        ), None
    if (entries[count - 1]["hash"] if count else GENESIS) != digest:
        rewritten = f"record {count} is not the one the signed head names: the log was rewritten"
        return Problem(count, 0, "head", rewritten), None
    return None, count
