"""Verification of an audit log: the hash chain, the record formats and the budget arithmetic.

:func:`verify_log` reads a log written by :class:`~securedp.audit.log.AuditLog`
and stops at the first problem, naming its line, byte offset, field and the
rule broken; it never raises on bad content (every failure, including
bytes no parser should see, is a :class:`Problem`). The checks, in order,
for line ``i`` (1-based):

1. it is a complete line (a last line without a newline is a *torn tail*:
   the ``i - 1`` lines before it still verify);
1b. its bytes are the canonical JSON text of an object
   (:func:`~securedp.audit.canonical.parse_canonical`): UTF-8, no duplicate
   key, no ``NaN``/``Infinity``/float literal, nesting at most 64 deep, and
   re-serialising the parsed object gives back exactly the bytes written;
2. it is a JSON object with exactly the fields of the format (plus
   ``signer`` and ``sig`` together, on a signed line), ``format`` is
   ``"securedp-audit/1"``, ``seq == i - 1``, ``time`` is an ISO 8601 UTC
   time, ``version`` and ``writer`` are well formed;
3. ``prev`` is the ``hash`` of line ``i - 1`` (64 zeros for line 1) and
   ``hash`` is the SHA-256 of the line's other fields but ``sig`` (so any
   edited field, inserted, removed or reordered line breaks the chain);
3b. with the reviewer's ``public_key``: the line is signed by that key and
   its signature verifies (:mod:`securedp.audit.signing`); without one, a
   signature's form is checked but not its validity, and the
   :class:`Report` says the log is authenticated against accidents only;
4. the ``record`` has the fields of :meth:`securedp.Release.record`; exactly
   one of ``epsilon`` / ``rho`` is a positive rational; ``max_contributions``
   is a positive integer; a ``chacha20`` source carries a 64-hex seed
   commitment and its substream labels, and no source carries a seed; an
   ``input_commitment``, when present, has the scheme
   ``"hmac-sha256/securedp-input/v1"``, a 32-hex nonce and a 64-hex MAC, on
   a ``chacha20`` release only;
5. budget arithmetic, exactly, per *ledger* (a writer, and within it a
   sub-session opened by a partition, as written by :class:`securedp.Session`):
   when a record carries ``spent`` and ``remaining``, then ``remaining >= 0``;
   ``spent + remaining`` equals ``total`` (when given) and is the same on
   every record of the ledger; ``budget_kind`` (when given) is the same on
   every record of the ledger, and the charge is the one that kind implies
   (``charged`` equals ``epsilon`` on an epsilon budget, ``rho`` or
   ``epsilon**2 / 2`` on a rho budget; without ``charged``, the charge is
   ``epsilon`` or ``rho``, which must match ``budget_kind``); every record
   has ``spent`` = the previous ``spent`` of its ledger + its charge. The
   first record of a top-level ledger has ``charge <= spent`` (a budget
   file may have been spent before the log began); a sub-session's ledger
   starts at ``spent = 0`` with the total declared by its partition record;
6. *partition records* (``"kind": "partition"``, written by
   :meth:`securedp.Session.partition`) have ``budget_kind``, ``charged``,
   ``budget``, ``max_partitions``, ``parts``, ``spent``, ``remaining``,
   ``partition`` and ``opens``; ``charged == budget * max_partitions``
   exactly; ``parts`` are distinct; ``opens`` is a fresh 32-hex id. The
   charge is checked against the parent's ledger as in rule 5, and the
   record opens one ledger per part, of total ``budget``, for the records
   whose ``partition_id`` is ``opens`` and whose ``partition`` is the
   parent's path plus the part's key. A record of a sub-session whose
   ledger no earlier partition record opened is refused.

Deleting whole lines at the *end* of a log leaves a valid chain (and valid
signatures). Pass a signed head statement (``head=``, checked with
``public_key``) to detect that: the log must hold at least the statement's
record count and its record at that count must have the statement's hash.
Records after it are verified but not covered by the head. (An unsigned
``expected_head`` hash published earlier does the same for an unsigned log.)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator, Mapping

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from securedp.audit.canonical import NotCanonical, parse_canonical
from securedp.audit.log import ENTRY_FIELDS, FORMAT, GENESIS, SIGNATURE_FIELDS, entry_hash
from securedp.audit.signing import (
    ENTRY_CONTEXT,
    PublicKeyLike,
    SignatureError,
    check_head,
    check_signature_fields,
    fingerprint,
    load_public_key,
    verify_signature,
)
from securedp.mechanisms.release import COMMITMENT_SCHEME

RECORD_FIELDS = ("statistic", "value", "mechanism", "parameters", "epsilon", "rho", "max_contributions", "source")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX32 = re.compile(r"[0-9a-f]{32}")
_RATIONAL = re.compile(r"-?[1-9]\d*/[1-9]\d*")
_VERSION = re.compile(r"\d+\.\d+\.\d+\S*")
_SECRET_KEYS = frozenset({"seed", "key", "secret"})


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
    what the outcome is worth.
    """

    valid: int
    head: str
    problem: Problem | None = None
    entries: list[dict[str, Any]] = field(default_factory=list, repr=False)
    signed: int = 0
    key: str | None = None
    head_records: int | None = None

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


class _Bad(Exception):
    def __init__(self, field_name: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field_name
        self.message = message


def parse_rational(value: Any, name: str) -> Fraction:
    """A rational from its record form: a JSON integer or a canonical ``"num/den"`` string."""
    if isinstance(value, bool):
        raise _Bad(name, "must be an integer or a \"num/den\" string, not a boolean")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, str) and _RATIONAL.fullmatch(value):
        num, den = (int(part) for part in value.split("/"))
        q = Fraction(num, den)
        if q.denominator != den or den == 1:
            raise _Bad(name, f"{value!r} is not in lowest terms")
        return q
    raise _Bad(name, f"must be an integer or a \"num/den\" string, got {value!r}")


def _lines(data: bytes) -> Iterator[tuple[int, bytes, bool]]:
    offset = 0
    while offset < len(data):
        end = data.find(b"\n", offset)
        if end < 0:
            yield offset, data[offset:], False
            return
        yield offset, data[offset:end], True
        offset = end + 1


def _check_entry(entry: Any, index: int, prev: str) -> None:
    if not isinstance(entry, dict):
        raise _Bad(None, "not a JSON object")
    missing = sorted(ENTRY_FIELDS - entry.keys())
    if missing:
        raise _Bad(missing[0], "missing")
    extra = sorted(entry.keys() - ENTRY_FIELDS - SIGNATURE_FIELDS)
    if extra:
        raise _Bad(extra[0], "unexpected field")
    half = sorted(SIGNATURE_FIELDS - entry.keys())
    if len(half) == 1:
        raise _Bad(half[0], "missing (a signed line has both 'signer' and 'sig')")
    if entry["format"] != FORMAT:
        raise _Bad("format", f"expected {FORMAT!r}, got {entry['format']!r}")
    if type(entry["seq"]) is not int or entry["seq"] != index:
        raise _Bad("seq", f"expected {index}, got {entry['seq']!r}")
    _check_time(entry["time"])
    if not isinstance(entry["version"], str) or not _VERSION.fullmatch(entry["version"]):
        raise _Bad("version", f"not a version string: {entry['version']!r}")
    if not isinstance(entry["writer"], str) or not _HEX32.fullmatch(entry["writer"]):
        raise _Bad("writer", "must be 32 lowercase hex digits")
    if entry["prev"] != prev:
        raise _Bad("prev", "does not match the hash of the previous record (chain broken)")
    if not isinstance(entry["hash"], str) or entry["hash"] != entry_hash(entry):
        raise _Bad("hash", "does not match the record's contents (record altered)")


def _check_time(value: Any) -> None:
    try:
        parsed = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        parsed = None
    offset = None if parsed is None else parsed.utcoffset()
    if offset is None or offset.total_seconds() != 0:
        raise _Bad("time", f"not an ISO 8601 UTC time: {value!r}")


def charge_of(record: dict[str, Any]) -> Fraction:
    """The privacy cost a record states: its ``epsilon`` or its ``rho`` (exactly one is set)."""
    eps, rho = record.get("epsilon"), record.get("rho")
    if (eps is None) == (rho is None):
        raise _Bad("record.epsilon", "exactly one of epsilon and rho must be set")
    name = "record.epsilon" if eps is not None else "record.rho"
    charge = parse_rational(eps if eps is not None else rho, name)
    if charge <= 0:
        raise _Bad(name, "must be > 0")
    return charge


def _check_record(record: Any) -> Fraction:
    if not isinstance(record, dict):
        raise _Bad("record", "not a JSON object")
    for name in RECORD_FIELDS:
        if name not in record:
            raise _Bad(f"record.{name}", "missing")
    if not isinstance(record["statistic"], str) or not record["statistic"]:
        raise _Bad("record.statistic", "must be a non-empty string")
    if not isinstance(record["mechanism"], str) or not record["mechanism"]:
        raise _Bad("record.mechanism", "must be a non-empty string")
    if not isinstance(record["parameters"], dict):
        raise _Bad("record.parameters", "must be an object")
    charge = charge_of(record)
    k = record["max_contributions"]
    if type(k) is not int or k < 1:
        raise _Bad("record.max_contributions", f"must be a positive integer, got {k!r}")
    _check_source(record["source"])
    if "input_commitment" in record:
        _check_commitment(record["input_commitment"], record["source"])
    return charge


def _check_commitment(commitment: Any, source: dict[str, Any]) -> None:
    name = "record.input_commitment"
    if not isinstance(commitment, dict) or set(commitment) != {"scheme", "nonce", "mac"}:
        raise _Bad(name, "must be an object with exactly 'scheme', 'nonce' and 'mac'")
    if commitment["scheme"] != COMMITMENT_SCHEME:
        raise _Bad(f"{name}.scheme", f"expected {COMMITMENT_SCHEME!r}")
    if not isinstance(commitment["nonce"], str) or not _HEX32.fullmatch(commitment["nonce"]):
        raise _Bad(f"{name}.nonce", "must be 32 lowercase hex digits")
    if not isinstance(commitment["mac"], str) or not _HEX64.fullmatch(commitment["mac"]):
        raise _Bad(f"{name}.mac", "must be 64 lowercase hex digits")
    if source.get("kind") != "chacha20":
        raise _Bad(name, "only a release drawn from a seeded (chacha20) source carries an input commitment")


def _check_signature(entry: dict[str, Any], key: Ed25519PublicKey | None) -> None:
    try:
        if key is not None:
            verify_signature(key, entry, ENTRY_CONTEXT)
        elif "sig" in entry:
            check_signature_fields(entry)
    except SignatureError as error:
        field_name = "signer" if str(error).startswith("signed by key") or "signer" in str(error) else "sig"
        raise _Bad(field_name, str(error)) from None


def _check_source(source: Any) -> None:
    if not isinstance(source, dict) or not isinstance(source.get("kind"), str):
        raise _Bad("record.source", "must be an object with a 'kind'")
    leaked = _SECRET_KEYS & source.keys()
    if leaked:
        raise _Bad(f"record.source.{sorted(leaked)[0]}", "a source description must never contain secret material")
    if source["kind"] == "chacha20":
        commitment = source.get("seed_commitment")
        if not isinstance(commitment, str) or not _HEX64.fullmatch(commitment):
            raise _Bad("record.source.seed_commitment", "must be 64 lowercase hex digits")
        labels = source.get("substream")
        if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
            raise _Bad("record.source.substream", "must be a list of labels")


PARTITION_FIELDS = ("budget_kind", "charged", "budget", "max_partitions", "parts", "spent", "remaining", "partition", "opens")
_KINDS = ("epsilon", "rho")


def _check_partition_record(record: dict[str, Any]) -> Fraction:
    """Check a ``"kind": "partition"`` record's own fields; return its charge to the parent."""
    for name in PARTITION_FIELDS:
        if name not in record:
            raise _Bad(f"record.{name}", "missing")
    if record["budget_kind"] not in _KINDS:
        raise _Bad("record.budget_kind", f"must be 'epsilon' or 'rho', got {record['budget_kind']!r}")
    charge = parse_rational(record["charged"], "record.charged")
    share = parse_rational(record["budget"], "record.budget")
    if share <= 0:
        raise _Bad("record.budget", "must be > 0")
    k = record["max_partitions"]
    if type(k) is not int or k < 1:
        raise _Bad("record.max_partitions", f"must be a positive integer, got {k!r}")
    if charge != share * k:
        raise _Bad("record.charged", "is not budget * max_partitions")
    parts = record["parts"]
    if not isinstance(parts, list) or len({json.dumps(p, sort_keys=True) for p in parts}) != len(parts):
        raise _Bad("record.parts", "must be a list of distinct keys")
    if not isinstance(record["opens"], str) or not _HEX32.fullmatch(record["opens"]):
        raise _Bad("record.opens", "must be 32 lowercase hex digits")
    return charge


def _stated_charge(record: dict[str, Any], charge: Fraction, kind: Any) -> Fraction:
    """The charge to the budget a release record states, checked against its ``budget_kind``."""
    if kind is not None and kind not in _KINDS:
        raise _Bad("record.budget_kind", f"must be 'epsilon' or 'rho', got {kind!r}")
    currency = "epsilon" if record.get("epsilon") is not None else "rho"
    if "charged" not in record:
        if kind is not None and kind != currency:
            raise _Bad("record.budget_kind", f"a {kind} budget cannot be charged a {currency} release without 'charged'")
        return charge
    charged = parse_rational(record["charged"], "record.charged")
    if kind is not None:
        expected = charge if kind == currency else (charge * charge / 2 if kind == "rho" else None)
        if expected is None:
            raise _Bad("record.charged", "a rho (zCDP) release cannot be charged to an epsilon budget")
        if charged != expected:
            raise _Bad("record.charged", f"is not the charge of this release to a {kind} budget")
    if charged <= 0:
        raise _Bad("record.charged", "must be > 0")
    return charged


class _Budgets:
    """Running totals for the budget arithmetic, per ledger: (writer, partition id, partition path)."""

    def __init__(self) -> None:
        self._state: dict[tuple[str, str | None, str], tuple[Fraction, Fraction, Any]] = {}
        self._opened: set[tuple[str, str]] = set()

    def check(self, writer: str, record: dict[str, Any], charge: Fraction, *, partition_record: bool = False) -> None:
        if not partition_record:
            if "spent" not in record and "remaining" not in record:
                return
            charge = _stated_charge(record, charge, record.get("budget_kind"))
        spent = parse_rational(record.get("spent"), "record.spent")
        remaining = parse_rational(record.get("remaining"), "record.remaining")
        if remaining < 0:
            raise _Bad("record.remaining", "negative: the budget was overspent")
        total = spent + remaining
        if "total" in record and parse_rational(record["total"], "record.total") != total:
            raise _Bad("record.total", "differs from spent + remaining")
        path = record.get("partition")
        if path is not None and not isinstance(path, list):
            raise _Bad("record.partition", "must be a list of keys or null")
        pid = record.get("partition_id")
        ledger = (writer, pid, json.dumps(path or None, sort_keys=True))
        kind = record.get("budget_kind")
        before = self._state.get(ledger)
        if before is None:
            if path or pid is not None:
                raise _Bad("record.partition_id", "this sub-session's ledger was not opened by an earlier partition record")
            if spent < charge:
                raise _Bad("record.spent", "smaller than this release's own charge")
        else:
            last_spent, last_total, last_kind = before
            if total != last_total:
                raise _Bad("record.remaining", "spent + remaining differs from this ledger's earlier total")
            if last_kind is not None and kind != last_kind:
                raise _Bad("record.budget_kind", f"differs from this ledger's earlier budget kind {last_kind!r}")
            if spent != last_spent + charge:
                raise _Bad("record.spent", "is not the previous spent plus this record's charge")
        self._state[ledger] = (spent, total, kind)
        if partition_record:
            opens = record["opens"]
            if (writer, opens) in self._opened:
                raise _Bad("record.opens", "reuses the id of an earlier partition")
            self._opened.add((writer, opens))
            share = parse_rational(record["budget"], "record.budget")
            for key in record["parts"]:
                child = (writer, opens, json.dumps((path or []) + [key], sort_keys=True))
                self._state[child] = (Fraction(0), share, kind)


def _read_head(head: Any) -> Any:
    """A head statement from a dict, the bytes of its file, or its path; a string problem if unreadable."""
    if isinstance(head, Mapping):
        return dict(head)
    try:
        raw = head if isinstance(head, bytes) else Path(head).read_bytes()
    except (OSError, TypeError, ValueError) as exc:
        return f"cannot read the signed head: {exc}"
    try:
        return parse_canonical(raw.rstrip(b"\n"))
    except NotCanonical as exc:
        return f"the signed head is not a canonical statement: {exc}"


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
    statement = None if head is None else _read_head(head)
    data = Path(path).read_bytes()
    prev = GENESIS
    budgets = _Budgets()
    entries: list[dict[str, Any]] = []
    signed = 0
    seen_head = expected_head is None
    fp = None if key is None else fingerprint(key)

    def report(problem: Problem | None, head_records: int | None = None) -> Report:
        return Report(len(entries), prev, problem, entries, signed, fp if problem is None else None, head_records)

    for index, (offset, raw, complete) in enumerate(_lines(data)):
        try:
            if not complete:
                raise _Bad(None, f"truncated tail: an incomplete last record; the {index} records before it verify")
            try:
                entry = parse_canonical(raw)
            except NotCanonical as exc:
                raise _Bad(None, str(exc)) from None
            _check_entry(entry, index, prev)
            _check_signature(entry, key)
            record = entry["record"]
            if isinstance(record, dict) and "kind" in record:
                if record["kind"] != "partition":
                    raise _Bad("record.kind", f"unknown record kind {record['kind']!r}")
                charge = _check_partition_record(record)
                budgets.check(entry["writer"], record, charge, partition_record=True)
            else:
                charge = _check_record(record)
                budgets.check(entry["writer"], record, charge)
        except _Bad as bad:
            return report(Problem(index + 1, offset, bad.field, bad.message))
        except Exception as exc:  # noqa: BLE001 - the contract: bad content is a Problem, never an exception
            return report(Problem(index + 1, offset, None, f"cannot be checked ({type(exc).__name__})"))
        entries.append(entry)
        signed += "sig" in entry
        prev = entry["hash"]
        seen_head = seen_head or prev == expected_head
    if not seen_head:
        return report(Problem(len(entries) + 1, len(data), None, "the expected head hash is not in the log (records removed from the end)"))
    if statement is None or key is None:
        return report(None)
    if isinstance(statement, str):
        return report(Problem(len(entries) + 1, len(data), "head", statement))
    try:
        count, digest = check_head(statement, key)
    except SignatureError as error:
        return report(Problem(len(entries) + 1, len(data), "head", f"signed head: {error}"))
    if count > len(entries):
        return report(Problem(
            len(entries) + 1, len(data), "head",
            f"the signed head covers {count} records but the log has {len(entries)}: records removed from the end",
        ))
    if (entries[count - 1]["hash"] if count else GENESIS) != digest:
        return report(Problem(count, 0, "head", f"record {count} is not the one the signed head names: the log was rewritten"))
    return report(None, count)
