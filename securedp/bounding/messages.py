"""The message format of the bounding digests, defined once, and its bytes encoder (hashlib, no Polars).

Per-person bounding keeps, among a person's rows (or groups), those whose
SHA-256 digests of a salted message are smallest. The format is stated in
full in :mod:`securedp.bounding.digest`; this module is its one definition:

* :func:`salt_text`: ``hex(salt)``, 32 lowercase hexadecimal characters of the
  release's secret 16-byte (128-bit) salt (:func:`draw_salt`), so that a
  message of short ids (a 7-digit person and a 4-digit key) fits one 55-byte
  SHA-256 block;
* :func:`field_parts`: a field as a netstring, the byte length of its
  canonical text in decimal, ``:``, the text, ``,``.

The message is ``hex(salt) || field(t1) || field(t2) || ...``. Both encoders
are built from these two functions: the Polars expressions of
:mod:`securedp.bounding.digest` (:func:`~securedp.bounding.digest.message`,
with Polars expressions as the parts) and :func:`message_text` here (Python
strings, SHA-256 by :mod:`hashlib`; the per-person choice of
:mod:`securedp.bounding.per_person` hashes with it), so they hash the same
bytes and give identical digests. This module imports nothing but the standard
library and NumPy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from securedp.hazmat.bits.source import RandomSource

T = TypeVar("T")

SALT_BYTES = 16


def draw_salt(source: RandomSource) -> bytes:
    """The release's secret salt: the next 16 bytes of its random source (a seeded release replays)."""
    return source.random_bytes(SALT_BYTES)


def salt_text(salt: bytes) -> str:
    """``hex(salt)``, the first part of every message; the salt must be :data:`SALT_BYTES` bytes."""
    if len(salt) != SALT_BYTES:
        raise ValueError(f"salt must be {SALT_BYTES} bytes")
    return salt.hex()


def field_parts(text: T, length: T, literal: Callable[[str], T]) -> list[T]:
    """The netstring parts of one field: ``length`` (of ``text`` in UTF-8 bytes, in decimal), ``:``, ``text``, ``,``.

    ``literal`` makes a constant part (``str`` for Python text, ``polars.lit`` for an expression).
    """
    return [length, literal(":"), text, literal(",")]


def canonical_text(value: int | str) -> str:
    """The canonical text of one value: an integer in decimal (``-12``, ``0``, ``1234``), a string as it is."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"a digest field is an integer or a string, not {type(value).__name__}")
    return value if isinstance(value, str) else str(value)


def field_text(value: int | str) -> str:
    """``field(value)`` as Python text: ``5:alice,``, ``3:250,``."""
    text = canonical_text(value)
    return "".join(field_parts(text, str(len(text.encode("utf-8"))), str))


def message_text(salt: bytes, values: Sequence[int | str]) -> str:
    """The message ``hex(salt) || field(v1) || field(v2) || ...`` as Python text."""
    return salt_text(salt) + "".join(field_text(v) for v in values)


def digest(salt: bytes, values: Sequence[int | str]) -> bytes:
    """SHA-256 of the UTF-8 bytes of :func:`message_text` (32 bytes, compared as big-endian unsigned numbers)."""
    return hashlib.sha256(message_text(salt, values).encode("utf-8")).digest()


def run_starts(values: np.ndarray) -> np.ndarray:
    """The first position of each run of equal values in a sorted array."""
    new = np.ones(values.size, dtype=bool)
    np.not_equal(values[1:], values[:-1], out=new[1:])
    return np.flatnonzero(new)


def run_keys(run: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """One UInt64 sort key per element: its run (``run``: sorted, ``0 .. R - 1``) in the top bits and
    its digest's leading bits (``heads``, UInt64) below, so that sorting the keys orders each run by
    digest. Two equal keys in one run mean the leading bits tie: then the full digest must decide."""
    bits = max(int(run[-1]).bit_length(), 1)
    keys: np.ndarray = run.astype(np.uint64)
    keys <<= np.uint64(64 - bits)
    keys |= heads.astype(np.uint64, copy=False) >> np.uint64(bits)
    return keys
