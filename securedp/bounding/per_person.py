"""Which entries each person keeps: the ``limit`` whose salted digests are smallest (hashlib, or Polars for many).

The rule is :mod:`securedp.bounding.digest`'s; the messages are :mod:`securedp.bounding.messages`'
(:func:`~securedp.bounding.messages.field_text`, :func:`~securedp.bounding.messages.salt_text`), hashed here
by :mod:`hashlib`, with the salt and person prefix hashed once per person and copied, or, from
:data:`POLARS_FROM` int64 pairs on, by :func:`securedp.bounding.digest.digest_words` (the same bytes, so the
same digests; Polars is imported only then). The single-column releases
(:mod:`securedp.bounding.contributions`) bound their rows with :func:`smallest_per_person`.
"""

from __future__ import annotations

import hashlib

import numpy as np

from securedp.bounding.messages import field_text, run_keys, run_starts, salt_text

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
