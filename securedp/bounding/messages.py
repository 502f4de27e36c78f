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
with Polars expressions as the parts) and :func:`message_text` /
:func:`smallest_per_person` here (Python strings, SHA-256 by :mod:`hashlib`),
so they hash the same bytes and give identical digests. This module imports
nothing but the standard library and NumPy, so the single-column releases
(:mod:`securedp.mechanisms.contributions`) use it without loading Polars.
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


POLARS_FROM = 1 << 15
"""From this many distinct pairs on, digests are computed by Polars (polars-hash) when it is installed."""


def _digest_words(salt: bytes, people: np.ndarray, points: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """The digests of the pairs ``(people[i // len(points)], points[i % len(points)])`` for ``i`` in
    ``pairs``, as rows of four big-endian 64-bit words.

    By :mod:`hashlib` (the salt and person prefix hashed once per person and copied), or for many
    int64 pairs by :func:`securedp.bounding.digest.message_digests` (the same bytes, so the same
    digests; Polars is imported only then).
    """
    person, point = pairs // points.size, pairs % points.size
    if pairs.size >= POLARS_FROM and people.dtype.kind in "iu" and points.dtype.kind in "iu":
        from securedp.bounding import digest  # loads Polars: only for large inputs

        if digest.has_polars_hash():
            return digest.digest_words(salt, {"person": people[person], "value": points[point]})
    prefix = salt_text(salt).encode("utf-8")
    heads = [hashlib.sha256(prefix + field_text(p).encode("utf-8")) for p in people.tolist()]
    fields = [field_text(v).encode("utf-8") for v in points.tolist()]
    digests = bytearray()
    for who, what in zip(person.tolist(), point.tolist(), strict=True):
        state = heads[who].copy()
        state.update(fields[what])
        digests += state.digest()
    return np.frombuffer(bytes(digests), dtype=">u8").reshape(-1, 4)


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
    keys: np.ndarray = (run.astype(np.uint64) << np.uint64(64 - bits)) | (heads.astype(np.uint64) >> np.uint64(bits))
    return keys


def smallest_per_person(salt: bytes, persons: np.ndarray, values: np.ndarray, limit: int) -> np.ndarray:
    """Mask of the entries kept: for each person, the ``limit`` entries ``(person, value)`` whose digests
    ``SHA-256(hex(salt) || field(person) || field(value))`` are smallest.

    ``persons`` and ``values`` are 1-D arrays of integers (int64, or object
    arrays of Python ints), one entry each. Entries with equal
    ``(person, value)`` have equal digests and are interchangeable; among
    them the earlier entry is kept first. The digest of each distinct pair
    is computed once, by :mod:`hashlib` (under 1 us: the salt and person
    prefix is hashed once per person and copied) or, from
    :data:`POLARS_FROM` int64 pairs on, by Polars (:func:`_digest_words`);
    entries are then ranked by person and by the full 256-bit digest, as four
    big-endian 64-bit words.
    """
    n = persons.size
    if values.size != n:
        raise ValueError("persons and values must have one entry each")
    if n == 0:
        return np.zeros(0, dtype=bool)
    people, person_of = np.unique(persons, return_inverse=True)
    points, point_of = np.unique(values, return_inverse=True)
    pairs, pair_of = np.unique(person_of.reshape(-1).astype(np.int64) * points.size + point_of.reshape(-1),
                               return_inverse=True)
    pair_of = pair_of.reshape(-1)
    owner = pairs // points.size  # sorted: each person's distinct pairs are one run
    order = _by_digest(owner, _digest_words(salt, people, points, pairs))
    # Down each person's pairs in digest order, a pair keeps what is left of ``limit``, up to its multiplicity.
    multiplicity = np.bincount(pair_of, minlength=pairs.size)[order]
    before = np.cumsum(multiplicity) - multiplicity
    starts = run_starts(owner[order])
    before -= np.repeat(before[starts], np.diff(np.append(starts, pairs.size)))
    quota = np.empty(pairs.size, dtype=np.int64)
    quota[order] = np.clip(limit - before, 0, multiplicity)
    # Within a pair, the earlier entries first.
    by_pair = np.argsort(pair_of, kind="stable")
    first = np.searchsorted(pair_of[by_pair], np.arange(pairs.size))
    rank = np.empty(n, dtype=np.int64)
    rank[by_pair] = np.arange(n) - first[pair_of[by_pair]]
    keep: np.ndarray = rank < quota[pair_of]
    return keep


def _by_digest(owner: np.ndarray, words: np.ndarray) -> np.ndarray:
    """The order of distinct pairs by owner (sorted already) then digest (``words``: four 64-bit words)."""
    key = run_keys(owner, words[:, 0])
    order: np.ndarray = np.argsort(key, kind="stable")
    ordered = key[order]
    if np.any(ordered[1:] == ordered[:-1]):  # two pairs of one person share leading bits: all 256
        order = np.lexsort((words[:, 3], words[:, 2], words[:, 1], words[:, 0], owner))
    return order
