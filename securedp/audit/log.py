"""An append-only, hash-chained, durable JSON-lines log of releases.

**Format.** One record per line, each a JSON object written canonically
(``sort_keys``, no spaces, UTF-8) with exactly these fields:

================  ===============================================================
field             meaning
================  ===============================================================
``format``        ``"securedp-audit/1"``
``seq``           0 for the first line of the file, then +1 per line
``time``          UTC time of writing, ISO 8601 with microseconds
``version``       the securedp version that wrote the record
``writer``        16 random bytes (hex) naming the :class:`AuditLog` object that
                  wrote it: one per session, so budgets are checked per writer
``record``        the release (:meth:`securedp.Release.record`, plus the budget
                  fields a session adds, plus a ``query`` the command adds)
``prev``          the ``hash`` of the previous line (64 zeros for the first)
``hash``          SHA-256 (hex) of the canonical JSON of all the other fields
                  but ``sig``
``signer``        (signed logs only) the fingerprint of the Ed25519 key
``sig``           (signed logs only) the Ed25519 signature of the canonical line
                  without ``sig`` (see :mod:`securedp.audit.signing`)
================  ===============================================================

**Signing.** ``AuditLog(path, signing_key=KEY)`` signs every line it
writes and, after each append and still under the lock, atomically
replaces ``path + ".head"`` by a signed head statement (record count and
last hash). Without a key the chain protects against accidents only:
anyone who can write the file can rewrite it and recompute every hash.

Rationals appear as ``"num/den"`` strings (integers as JSON integers), so
every number is exact. A seeded source is described by the commitment
``SHA-256("securedp/seed-commitment/v1" || seed)`` and its substream labels,
never by the seed.

**Durability.** :meth:`AuditLog.append` takes an exclusive ``flock`` on the
file, reads the hash and ``seq`` of the last line under the lock, writes the
new line with one ``write`` to a descriptor opened with ``O_APPEND`` and
``fsync``\\ s it before returning. Writers in other threads and processes
therefore interleave whole lines and the chain stays valid; a crash or kill
at any moment leaves a valid prefix, possibly followed by one incomplete
line without its final newline (a *torn tail*), which
:func:`securedp.audit.verify.verify_log` reports as such and which
:meth:`AuditLog.append` refuses to write after.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from securedp._version import __version__
from securedp.audit.canonical import NotCanonical, canonical, parse_canonical
from securedp.audit.signing import (
    KeyLike,
    fingerprint,
    load_signing_key,
    make_head,
    sign_entry,
    write_head,
    write_head_bytes,
)
from securedp.hazmat.bits.filelock import lock_file
from securedp.ledger.errors import InterruptedAfterAppend
from securedp.ledger.release import jsonable

__all__ = ["AuditLog", "AuditLogError", "canonical", "entry_hash", "read_last_line"]

FORMAT = "securedp-audit/1"
GENESIS = "0" * 64
ENTRY_FIELDS = frozenset({"format", "seq", "time", "version", "writer", "record", "prev", "hash"})
SIGNATURE_FIELDS = frozenset({"signer", "sig"})
HEAD_SUFFIX = ".head"
_TAIL_READ = 1 << 16
_UNDO_TRIES = 3
"""How many times the undo of a failed append is tried when interrupts keep arriving."""


class AuditLogError(Exception):
    """The log cannot be appended to: unreadable, or its last line is torn or malformed."""


def entry_hash(entry: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of ``entry`` without its ``hash`` and ``sig`` fields."""
    return hashlib.sha256(canonical({k: v for k, v in entry.items() if k not in ("hash", "sig")})).hexdigest()


def read_last_line(fd: int) -> bytes | None:
    """The last complete line of the file open at ``fd`` (without its newline), or ``None`` if empty.

    Raises :class:`AuditLogError` when the file does not end with a newline
    (a torn tail left by a crash mid-write).
    """
    size = os.fstat(fd).st_size
    if size == 0:
        return None
    if os.pread(fd, 1, size - 1) != b"\n":
        raise AuditLogError("the last record of the audit log is incomplete (torn tail); run `securedp audit verify`")
    return next(lines_backwards(fd))


def lines_backwards(fd: int) -> Iterator[bytes]:
    """The complete lines of the file open at ``fd``, last first, without their newlines (a torn tail, the
    bytes after the last newline, is no line). Each byte is read once, so a long line costs its length."""
    end = os.fstat(fd).st_size
    pieces: list[bytes] = []  # the bytes after the earliest newline read so far, latest chunk first
    torn = True  # the bytes in ``pieces`` lie after the file's last newline
    while end > 0:
        step = min(_TAIL_READ, end)
        end -= step
        chunk = os.pread(fd, step, end)
        if b"\n" not in chunk:
            pieces.append(chunk)
            continue
        lines = chunk.split(b"\n")
        pieces.append(lines[-1])
        if not torn:
            yield b"".join(reversed(pieces))
        torn = False
        yield from reversed(lines[1:-1])
        pieces = [lines[0]]
    if not torn:
        yield b"".join(reversed(pieces))


class AuditLog:
    """An append-only audit log at ``path``; pass it as ``Session(audit=AuditLog(path))``.

    Each :class:`AuditLog` object is one *writer* (an id recorded in every
    line it writes, random unless ``writer`` gives 32 hex digits, such as
    a budget file's ledger id); use one per session, since budget
    arithmetic is verified per writer. The file is created on the
    first append. Construction checks that an existing file ends in a
    complete line, so a damaged log is refused before any release is made.

    With ``signing_key`` (an Ed25519 private key, or the path of its PEM
    file as written by ``securedp audit keygen``), every line is signed and,
    unless ``head_file`` is false, a signed head statement for the whole log
    is kept at :attr:`head_path` (``path + ".head"``), replaced atomically
    after each append.
    """

    def __init__(
        self, path: str | os.PathLike[str], writer: str | None = None, *, signing_key: KeyLike | None = None,
        head_file: bool = True,
    ) -> None:
        self.path = Path(path)
        if writer is not None and not re.fullmatch(r"[0-9a-f]{32}", writer):
            raise ValueError("writer must be 32 lowercase hex digits")
        self.writer = writer if writer is not None else os.urandom(16).hex()
        self._key = None if signing_key is None else load_signing_key(signing_key)
        self.signer = None if self._key is None else fingerprint(self._key.public_key())
        """The fingerprint of the signing key, or ``None`` for an unsigned log."""
        self.head_path = Path(str(self.path) + HEAD_SUFFIX) if self._key is not None and head_file else None
        """Where the signed head is kept, or ``None``."""
        self._lock = threading.Lock()
        if self.path.exists():
            fd = os.open(self.path, os.O_RDONLY)
            try:
                self._last(fd)
            except AuditLogError:
                self._last_locked()  # a writer may be mid-line: a tail still torn under the lock is torn
            finally:
                os.close(fd)

    def _last_locked(self) -> None:
        """Read the last line again under the log's lock (and raise as :meth:`_last` does)."""
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            lock_file(fd)
            reader = os.open(self.path, os.O_RDONLY)
            try:
                self._last(reader)
            finally:
                os.close(reader)
        finally:
            os.close(fd)

    def append(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """Chain ``record`` onto the log durably and return the full line written (as a dict).

        ``record`` is made JSON-ready with :func:`securedp.ledger.release.jsonable`
        (rationals become ``"num/den"``). Returns only after the line is on
        disk (``fsync``). Raises :class:`AuditLogError` if the last line of
        the file is torn or not a record.
        """
        body = jsonable(dict(record))
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            created = False
            try:
                lock_file(fd)  # flock on POSIX, msvcrt.locking on Windows
                reader = os.open(self.path, os.O_RDONLY)
                try:
                    last = self._last(reader)
                finally:
                    os.close(reader)
                created = last is None
                entry: dict[str, Any] = {
                    "format": FORMAT,
                    "seq": 0 if last is None else last["seq"] + 1,
                    "time": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
                    "version": __version__,
                    "writer": self.writer,
                    "record": body,
                    "prev": GENESIS if last is None else last["hash"],
                }
                if self._key is not None:
                    entry["signer"] = self.signer
                entry["hash"] = entry_hash(entry)
                if self._key is not None:
                    entry["sig"] = sign_entry(self._key, entry)
                line = canonical(entry) + b"\n"
                end = os.fstat(fd).st_size  # under the lock: where this record begins
                head = _read_bytes(self.head_path)
                try:
                    written = os.write(fd, line)
                    if written != len(line):
                        raise AuditLogError(f"short write to the audit log ({written} of {len(line)} bytes)")
                    os.fsync(fd)
                    if self._key is not None and self.head_path is not None:
                        write_head(self.head_path, make_head(self._key, entry["seq"] + 1, entry["hash"]))
                except BaseException:
                    self._take_back(fd, end, head)  # an append that raises has appended nothing
                    raise
            except BaseException:
                os.close(fd)  # closing releases the flock
                raise
            # The line is durable: from here on nothing may raise as if it had not been appended (a caller
            # would append it again). A failed close or directory sync is not the record's; an interrupt is
            # raised as InterruptedAfterAppend, once both are done.
            return _finished(fd, self.path.parent if created else None, entry)

    def _take_back(self, fd: int, end: int, head: bytes | None) -> None:
        """Undo a failed append: cut the file back to ``end`` bytes and put back the head file's ``head`` bytes
        (``None``: there was none), so that a caller may try again without writing the record twice. If that
        fails too, raise :class:`AuditLogError`, which no caller retries (the log may end in part of a record,
        which the next append refuses and ``securedp audit verify`` reports). An interrupt meanwhile is held
        back until the undo is done (each of its steps may be taken again, up to :data:`_UNDO_TRIES` times
        in all), then raised; an undo that fails after an interrupt raises its error with the interrupt as
        its context."""
        interrupt: BaseException | None = None
        for _ in range(_UNDO_TRIES):
            late = self._undo_or_interrupt(fd, end, head, interrupt)
            if late is None:
                break
            interrupt = interrupt or late
        if interrupt is not None:
            raise interrupt

    def _undo_or_interrupt(self, fd: int, end: int, head: bytes | None,
                           interrupt: BaseException | None) -> BaseException | None:
        try:
            self._undo(fd, end, head)
        except Exception as error:
            if interrupt is not None:
                error.__context__ = interrupt  # its cause (the failed step) stays
            raise
        except BaseException as late:  # an interrupt (KeyboardInterrupt, SystemExit): undo again, then raise it
            return late
        return None

    def _undo(self, fd: int, end: int, head: bytes | None) -> None:
        try:
            os.ftruncate(fd, end)  # what every later read and append sees at once
            with contextlib.suppress(OSError):  # the fsync that failed may fail again; the cut stands in memory
                os.fsync(fd)
            if self.head_path is not None:
                if head is None:
                    if self.head_path.is_file():  # written by this append (a folder in its place is left)
                        self.head_path.unlink()
                elif _read_bytes(self.head_path) != head:
                    write_head_bytes(self.head_path, head)
        except OSError as error:
            raise AuditLogError(f"an append to the audit log {self.path} failed and could not be undone "
                                f"({error.strerror or error}): the log may end in part of a record; run "
                                "`securedp audit verify`") from error

    def check_appendable(self) -> None:
        """Raise :class:`AuditLogError` unless a record could be appended now: the file (or, for a log not yet
        written, its folder) is writable, its lock can be taken, and its last line is a whole record whose
        ``hash`` is the hash of its fields. A release checks this before it reads its data or draws a bit,
        so that a log that cannot take its record refuses the release instead of losing the record.
        """
        if self.head_path is not None and self.head_path.exists() and not self.head_path.is_file():
            raise AuditLogError(f"the signed head {self.head_path} of the audit log is not a file; nothing was "
                                "read, drawn or charged")
        if not self.path.exists():
            folder = self.path.parent if str(self.path.parent) else Path(".")
            if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
                raise AuditLogError(f"cannot create the audit log {self.path}: its folder {folder} does not exist or "
                                    "cannot be written; nothing was read, drawn or charged")
            return
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        except OSError as error:
            raise AuditLogError(f"cannot append to the audit log {self.path}: {error.strerror or error}; nothing "
                                "was read, drawn or charged") from None
        try:
            lock_file(fd)
            reader = os.open(self.path, os.O_RDONLY)
            try:
                last = self._last(reader)
            finally:
                os.close(reader)
        finally:
            os.close(fd)
        if last is not None and last.get("hash") != entry_hash(last):
            raise AuditLogError(f"the last record of {self.path} does not match its hash (the log was altered); "
                                "run `securedp audit verify`; nothing was read, drawn or charged")

    def records_of(self, writer: str) -> Iterator[dict[str, Any]]:
        """The records of the lines ``writer`` wrote to this log, last first (read from the end; none if the log
        does not exist). A line whose ``hash`` is not the hash of its fields, or that is not an audit record,
        is not taken as the writer's (``securedp audit verify`` reports it)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return
        mark = b'"writer":"' + writer.encode("ascii") + b'"'
        try:
            for line in lines_backwards(fd):
                if mark not in line:
                    continue
                try:
                    entry = parse_canonical(line)
                except NotCanonical:
                    continue
                if (isinstance(entry, dict) and entry.get("writer") == writer and isinstance(entry.get("record"), dict)
                        and entry.get("hash") == entry_hash(entry)):
                    yield dict(entry["record"])
        finally:
            os.close(fd)

    def _last(self, fd: int) -> dict[str, Any] | None:
        line = read_last_line(fd)
        if line is None:
            return None
        try:
            last = parse_canonical(line)
            seq, digest = last["seq"], last["hash"]
        except NotCanonical as exc:
            raise AuditLogError(f"the last line of {self.path} is not an audit record: {exc}") from None
        except KeyError as exc:
            raise AuditLogError(f"the last line of {self.path} is not an audit record") from exc
        if not isinstance(seq, int) or not isinstance(digest, str):
            raise AuditLogError(f"the last line of {self.path} is not an audit record")
        return last

    def __repr__(self) -> str:
        signed = "" if self.signer is None else f", signer={self.signer!r}"
        return f"AuditLog({str(self.path)!r}{signed})"


def _finished(fd: int, new_folder: Path | None, entry: dict[str, Any]) -> dict[str, Any]:
    """Close ``fd`` and sync ``new_folder`` (the folder of a log this append created), best effort: the line
    is durable already. An interrupt meanwhile becomes :class:`InterruptedAfterAppend`, after both."""
    interrupt = _quietly(lambda: os.close(fd))
    if new_folder is not None:
        interrupt = _quietly(lambda: _fsync_directory(new_folder)) or interrupt
    if interrupt is not None:
        raise InterruptedAfterAppend(interrupt) from interrupt
    return entry


def _quietly(step: Callable[[], None]) -> BaseException | None:
    """Run ``step``; an ``OSError`` is let go (the line it follows is durable), an interrupt returned."""
    try:
        step()
    except OSError:
        pass
    except BaseException as interrupt:
        return interrupt
    return None


def _read_bytes(path: Path | None) -> bytes | None:
    """The bytes of the file at ``path``, or ``None`` where there is none (or no path)."""
    if path is None or not path.is_file():
        return None
    return path.read_bytes()


def _fsync_directory(directory: Path) -> None:
    """Make the creation of a new log file durable too."""
    fd = os.open(directory if str(directory) else ".", os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
