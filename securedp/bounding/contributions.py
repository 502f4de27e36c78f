"""Who may read a data-dependent error, and how many parts of a partition one person's rows may reach.

Every privacy map in securedp is for **neighbouring datasets that differ by adding or removing one
person**. Releases bound each person's rows in the engine that reads their table (the salted SHA-256
rule of :mod:`securedp.bounding`: a one-column release is the one-cell table of its column), so this
module keeps only what stands beside that rule:

**Who reads errors.** By default error messages are for the *data holder* (trusted): they name rows
and count offending records. Inside an analyst-facing :class:`~securedp.Session`
(``analyst_facing=True``, which runs ``prepare_*`` under :func:`analyst_facing_scope`) no exception
may depend on the data: rows with an unusable id are dropped, ``missing="raise"`` and
``unknown="raise"`` act as ``"drop"``, and the remaining errors depend only on public arguments and on
the shape of the input (a 2-D table, lengths that differ), never on row values, and carry no row index
or count (:func:`data_policy`, :func:`length_mismatch`).

**Parts of a partition** (:meth:`securedp.Session.partition`): a person in more than
``max_partitions`` parts keeps the ``max_partitions`` parts whose *group digests*
``SHA-256(hex(salt) || field(person) || field(i))`` are smallest, ``i`` the index of the part in the
declared ``parts`` (:func:`pending_parts`), with a salt drawn from the session's source after the
charge. Person ids are read by the one rule of ids and keys (:mod:`securedp.reading.keys`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from securedp.bounding.limits import positive_count as positive_count  # re-exported: read here by the statistics
from securedp.bounding.per_person import smallest_per_person
from securedp.reading.mode import analyst_facing as analyst_facing  # re-exported: the mode, defined below
from securedp.reading.mode import analyst_facing_scope as analyst_facing_scope


def data_policy(missing: str) -> tuple[str, bool]:
    """``(missing policy, refuse_rows)`` for screening: ``"raise"`` becomes ``"drop"`` when analyst-facing."""
    if analyst_facing():
        return ("drop" if missing == "raise" else missing), False
    return missing, True


def check_max_contributions(value: object) -> int:
    """``max_contributions`` as an int >= 1."""
    return positive_count(value, "max_contributions")


def length_mismatch(name: str, size: int, n: int) -> ValueError:
    """The error for an argument ``name`` whose length differs from the data's (no counts when analyst-facing)."""
    if analyst_facing():
        return ValueError(f"{name} and data must have one entry per row (their lengths differ)")
    return ValueError(f"{name} has {size} entries but the data has {n} rows")


@dataclass(frozen=True)
class PendingRows:
    """The choices that wait for the salt: entries ``(person, value)`` of persons over the bound ``limit``.

    Each listed person has more than ``limit`` entries (distinct parts); :meth:`kept` keeps ``limit`` of
    each, those with the smallest digests (:func:`securedp.bounding.per_person.smallest_per_person`).
    """

    persons: np.ndarray
    values: np.ndarray
    limit: int

    def kept(self, salt: bytes) -> np.ndarray:
        """Mask of the entries kept under ``salt``."""
        return smallest_per_person(salt, self.persons, self.values, self.limit)


def _over_bound(codes: np.ndarray, limit: int) -> np.ndarray:
    """Mask of the entries whose person (code) has more than ``limit`` entries."""
    if codes.size == 0:
        return np.zeros(0, dtype=bool)
    _, person, counts = np.unique(codes, return_inverse=True, return_counts=True)
    over: np.ndarray = counts[person.reshape(-1)] > limit
    return over


@dataclass(frozen=True)
class PendingParts:
    """The parts rule of a partition before the salt (see the module docstring and :func:`pending_parts`).

    ``pairs`` lists the distinct (person, part index) pairs of persons in
    more than ``max_partitions`` parts; ``pair_of_row`` gives, for each row,
    the index of its pair in ``pairs``, or -1 when its person is within the bound.
    """

    pairs: PendingRows
    pair_of_row: np.ndarray

    def kept(self, salt: bytes) -> np.ndarray:
        """Mask of the rows kept under ``salt``: those of persons within the bound and of their chosen parts."""
        chosen = np.append(self.pairs.kept(salt), True)  # index -1: a row of a person within the bound
        kept: np.ndarray = chosen[self.pair_of_row]
        return kept


def pending_parts(ids: np.ndarray, parts: np.ndarray, max_parts: int) -> PendingParts:
    """The parts rule for rows with person ids ``ids`` (integers or text) in parts ``parts`` (indices)."""
    n = ids.size
    if n == 0:
        return PendingParts(PendingRows(ids, parts, max_parts), np.zeros(0, dtype=np.int64))
    people, person = np.unique(ids, return_inverse=True)
    pairs, pair_of_row = np.unique(np.stack([person.reshape(-1).astype(np.int64), parts.astype(np.int64)], axis=1),
                                   axis=0, return_inverse=True)
    pair_of_row = pair_of_row.reshape(-1)
    over = _over_bound(pairs[:, 0], max_parts)
    index = np.full(pairs.shape[0], -1, dtype=np.int64)
    index[over] = np.arange(int(over.sum()))
    entries = PendingRows(people[pairs[over, 0]], pairs[over, 1], max_parts)
    return PendingParts(entries, index[pair_of_row])
