"""Ed25519 signatures on audit records and on signed head statements.

A hash chain alone protects a log against accidents only: whoever can write
the file can rewrite any record and recompute every hash. A signature by a
key the analyst does not hold protects it against the analyst.

**Keys.** :func:`write_key_pair` writes the private key as an unencrypted
PKCS#8 PEM file (mode 0600, never over an existing file) and the public key
beside it (``KEY.pub``) in the short text form ``ed25519:<base64 of the 32
raw bytes>`` that :func:`public_key_text` prints and :func:`load_public_key`
reads back (it also reads a PEM public key, or a file holding either).
A key is named in records by its *fingerprint*: the first 32 hex digits of
the SHA-256 of its 32 raw bytes.

**Record signatures.** A signed line has two more fields: ``signer`` (the
fingerprint) and ``sig``, the Ed25519 signature (standard base64, 88
characters) of ``"securedp-audit/entry-signature/v1\\n"`` followed by the
canonical bytes of the line without ``sig`` (so over ``prev``, ``hash``,
``signer`` and every other field). ``hash`` covers ``signer`` but not
``sig``.

**Signed head.** A head statement is the canonical JSON object
``{"format": "securedp-audit-head/1", "records": N, "head": H, "time": T,
"signer": F, "sig": S}``: the log's first ``N`` records end with the record
whose ``hash`` is ``H``; ``sig`` signs ``"securedp-audit/head-signature/v1\\n"``
followed by the canonical bytes of the statement without ``sig``. A verifier
holding a head signed at time ``T`` detects any later removal of records
among the first ``N`` (truncation), which the chain alone cannot.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Union

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from securedp.audit.canonical import canonical

ENTRY_CONTEXT = b"securedp-audit/entry-signature/v1\n"
HEAD_CONTEXT = b"securedp-audit/head-signature/v1\n"
HEAD_FORMAT = "securedp-audit-head/1"
HEAD_FIELDS = frozenset({"format", "records", "head", "time", "signer", "sig"})
TEXT_PREFIX = "ed25519:"
_FINGERPRINT = re.compile(r"[0-9a-f]{32}")
_HEX64 = re.compile(r"[0-9a-f]{64}")

KeyLike = Union[Ed25519PrivateKey, str, "os.PathLike[str]"]
PublicKeyLike = Union[Ed25519PublicKey, str, "os.PathLike[str]", bytes]


class SignatureError(ValueError):
    """A signature or signed statement that does not verify; the message says why."""


# -- keys ------------------------------------------------------------------------------------------

def _raw(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def fingerprint(public: Ed25519PublicKey) -> str:
    """The first 32 hex digits of the SHA-256 of the key's 32 raw bytes: how records name their signer."""
    return hashlib.sha256(_raw(public)).hexdigest()[:32]


def public_key_text(public: Ed25519PublicKey) -> str:
    """``ed25519:<base64 of the 32 raw bytes>``: the form to hand to reviewers."""
    return TEXT_PREFIX + base64.b64encode(_raw(public)).decode("ascii")


def write_key_pair(out: str | os.PathLike[str]) -> tuple[Path, Path, str]:
    """Create a new signing key at ``out`` (PEM, mode 0600) and its public key at ``out.pub``.

    Refuses (``FileExistsError``) if either file exists, before writing
    anything; the private key file is created with ``O_EXCL`` so that it is
    never readable by others, even for an instant. Returns the two paths
    and the public key's text form.
    """
    private_path = Path(out)
    public_path = Path(str(out) + ".pub")
    for path in (private_path, public_path):
        if path.exists():
            raise FileExistsError(f"{path} exists: a key file is never overwritten")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    text = public_key_text(key.public_key())
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, pem)
        os.fsync(fd)
    finally:
        os.close(fd)
    fd = os.open(public_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, (text + "\n").encode("ascii"))
    finally:
        os.close(fd)
    return private_path, public_path, text


def load_signing_key(key: KeyLike) -> Ed25519PrivateKey:
    """An Ed25519 private key, given as the key itself or as the path of its PEM file.

    A key file readable by group or others is refused (as ``ssh`` does): a
    signature is only worth as much as the secrecy of the key.
    """
    if isinstance(key, Ed25519PrivateKey):
        return key
    if not isinstance(key, (str, os.PathLike)):
        raise TypeError(f"signing_key must be an Ed25519PrivateKey or a key file path, not {type(key).__name__}")
    path = Path(key)
    data = path.read_bytes()
    if os.name == "posix" and path.stat().st_mode & 0o077:
        raise PermissionError(f"{path}: the signing key is readable by others; `chmod 600 {path}`")
    try:
        loaded = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(loaded, Ed25519PrivateKey):
        raise ValueError(f"{path}: not an Ed25519 key")
    return loaded


def load_public_key(key: PublicKeyLike) -> Ed25519PublicKey:
    """An Ed25519 public key from the key, its text form ``ed25519:BASE64``, a PEM text, or a file holding either."""
    if isinstance(key, Ed25519PublicKey):
        return key
    if isinstance(key, bytes):
        text = key.decode("ascii", errors="replace")
    elif isinstance(key, (str, os.PathLike)):
        text = str(key)
        if not text.startswith(TEXT_PREFIX) and "-----BEGIN" not in text and Path(text).is_file():
            text = Path(text).read_text(encoding="ascii", errors="replace")
    else:
        raise TypeError(
            f"public_key must be an Ed25519PublicKey, its text form or a file path, not {type(key).__name__}"
        )
    text = text.strip()
    if "-----BEGIN" in text:
        try:
            loaded = serialization.load_pem_public_key(text.encode("ascii"))
        except ValueError as exc:
            raise ValueError(f"not a PEM public key ({exc})") from None
        if not isinstance(loaded, Ed25519PublicKey):
            raise ValueError("not an Ed25519 public key")
        return loaded
    body = text[len(TEXT_PREFIX):] if text.startswith(TEXT_PREFIX) else text
    try:
        raw = base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 32:
        raise ValueError(f"not an Ed25519 public key: expected {TEXT_PREFIX}<base64 of 32 bytes> or a file holding it")
    return Ed25519PublicKey.from_public_bytes(raw)


# -- records ---------------------------------------------------------------------------------------

def _b64_signature(value: Any) -> bytes:
    if not isinstance(value, str):
        raise SignatureError("the signature must be a base64 string")
    try:
        sig = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise SignatureError("the signature is not base64") from None
    if len(sig) != 64 or base64.b64encode(sig).decode("ascii") != value:
        raise SignatureError("the signature is not 64 bytes in canonical base64")
    return sig


def check_signature_fields(obj: Mapping[str, Any]) -> None:
    """Check the form of ``signer`` and ``sig`` (both present) without a key; raise :class:`SignatureError`."""
    if not isinstance(obj.get("signer"), str) or not _FINGERPRINT.fullmatch(obj["signer"]):
        raise SignatureError("signer must be a key fingerprint of 32 lowercase hex digits")
    _b64_signature(obj.get("sig"))


def sign_entry(key: Ed25519PrivateKey, entry: Mapping[str, Any]) -> str:
    """The ``sig`` of an entry (which must already hold ``signer`` and ``hash``)."""
    body = {k: v for k, v in entry.items() if k != "sig"}
    return base64.b64encode(key.sign(ENTRY_CONTEXT + canonical(body))).decode("ascii")


def verify_signature(public: Ed25519PublicKey, obj: Mapping[str, Any], context: bytes) -> None:
    """Check that ``obj["sig"]`` is ``public``'s signature of ``context || canonical(obj without sig)``.

    Raises :class:`SignatureError` saying whether the statement is unsigned,
    signed by another key, or altered.
    """
    if "sig" not in obj or "signer" not in obj:
        raise SignatureError("unsigned, but the reviewer's public key requires every record to be signed")
    check_signature_fields(obj)
    expected = fingerprint(public)
    if obj["signer"] != expected:
        raise SignatureError(f"signed by key {obj['signer']}, not by the reviewer's key {expected}")
    sig = _b64_signature(obj["sig"])
    body = {k: v for k, v in obj.items() if k != "sig"}
    try:
        public.verify(sig, context + canonical(body))
    except InvalidSignature:
        raise SignatureError(
            "the signature does not verify with the reviewer's public key (forged or altered)"
        ) from None


# -- signed heads ----------------------------------------------------------------------------------

def make_head(key: Ed25519PrivateKey, records: int, head: str) -> dict[str, Any]:
    """A signed head statement: the log's first ``records`` records end with the record hashed ``head``."""
    statement: dict[str, Any] = {
        "format": HEAD_FORMAT,
        "records": records,
        "head": head,
        "time": datetime.now(timezone.utc).isoformat(timespec="microseconds"),
        "signer": fingerprint(key.public_key()),
    }
    statement["sig"] = base64.b64encode(key.sign(HEAD_CONTEXT + canonical(statement))).decode("ascii")
    return statement


def write_head(path: Path, statement: Mapping[str, Any]) -> None:
    """Replace the file at ``path`` by ``statement`` atomically (temporary file, ``fsync``, rename)."""
    write_head_bytes(path, canonical(dict(statement)) + b"\n")


def write_head_bytes(path: Path, content: bytes) -> None:
    """Replace the file at ``path`` by ``content`` atomically (temporary file, ``fsync``, rename)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, content)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent if str(path.parent) else ".", os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def check_head(statement: Any, public: Ed25519PublicKey) -> tuple[int, str]:
    """``(records, head)`` of a head statement signed by ``public``; raises :class:`SignatureError`."""
    if not isinstance(statement, dict):
        raise SignatureError("a signed head must be a JSON object")
    if set(statement) != HEAD_FIELDS or statement.get("format") != HEAD_FORMAT:
        raise SignatureError(f"not a {HEAD_FORMAT} statement (fields {', '.join(sorted(HEAD_FIELDS))})")
    records, head = statement["records"], statement["head"]
    if type(records) is not int or records < 0:
        raise SignatureError("the signed head's record count must be an integer >= 0")
    if not isinstance(head, str) or not _HEX64.fullmatch(head):
        raise SignatureError("the signed head's hash must be 64 lowercase hex digits")
    verify_signature(public, statement, HEAD_CONTEXT)
    return records, head
