"""Parallel composition: ``Session.partition(data, by=, parts=, budget=, ids=, max_partitions=, unknown=)``
splits one column into disjoint parts by a public key and gives each part ``budget``
(:meth:`securedp.session.session.Session.partition` charges and audits; this module declares the keys and
reads the data, its keys and person ids into parts, inside the session's error boundary).

``data`` is one column (a table is refused, as by every release);
``by`` holds one key per row (a key made of several columns is a
tuple: ``by=list(zip(df["a"], df["b"]))`` with tuple ``parts``);
``parts`` declares the keys (never taken from the data); rows whose
key is not declared raise, naming the first and counting them
(``unknown="raise"``), or are dropped (``unknown="drop"``; always so
in an analyst-facing session, which also drops the rows without a
usable person id). Unusable person ids raise as for every release
(the one rule of ids, :mod:`securedp.reading.keys`). The parent is charged
``budget * max_partitions`` once, where ``max_partitions`` bounds how
many parts one person's rows can fall in (default 1: the key is an
attribute of the person). With ``ids`` (person ids, one per
row) the bound is enforced, not assumed: a person whose rows fall in
more than ``max_partitions`` parts keeps their rows in the
``max_partitions`` parts whose group digests
``SHA-256(hex(salt) || field(person) || field(i))`` are smallest, ``i``
the index of the part in ``parts`` (its canonical integer), and their
rows in other parts are discarded
(:func:`~securedp.bounding.contributions.pending_parts`). The
16-byte ``salt`` is drawn from the session's source just after the
charge (only when ``ids`` is given), so a seeded session replays; the
choice never depends on row order or on other persons.
**Privacy:** adding or removing a person
changes at most ``max_partitions`` parts, each by that person's rows,
and every part's releases are ``budget``-private for its own rows, so
the whole is ``budget * max_partitions``-private. Every sub-session
has the parent's kind (epsilon or rho), source and audit.

**Audit.** With an audit, the parent's charge is appended as one
record before the parts are returned: ``kind`` ``"partition"``,
``budget_kind``, ``charged`` (exactly ``budget * max_partitions``),
``budget`` (each part's total), ``max_partitions``, ``parts`` (the
declared keys, JSON-ready), ``spent`` and ``remaining`` of the parent
just after the charge, ``partition`` (the parent's own path, or
``None``), and ``opens``: a fresh random id that every record of the
sub-sessions carries as ``partition_id``, so two partitions with the
same keys keep separate ledgers. If drawing the salt or that append
raises, the error propagates and no part is handed out; the charge is
refunded only if no salt bit had been read (without ``ids``), else it
stands (:meth:`~securedp.ledger.budget.Budget.charging`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from securedp.bounding.contributions import PendingParts, analyst_facing, length_mismatch, pending_parts
from securedp.bounding.data_phase import check_shape, reading_data
from securedp.lattice.columns import ONE_COLUMN_HINT, as_records, first_row_record, rows_error
from securedp.reading.columns import check_ordered
from securedp.reading.keys import key_column

if TYPE_CHECKING:
    from securedp.session.session import Session


@dataclass(frozen=True)
class Part:
    """One part of a partition: its rows, their person ids (or None) and its own sub-session."""

    key: Any
    data: Any
    ids: Any
    session: Session


def declared_parts(parts: Any) -> list[Any]:
    """The declared keys ``parts`` as a list: a sequence of distinct hashable keys (public: checked before any
    data is read)."""
    check_ordered(parts, "parts", "a sequence of declared keys")  # a part's index enters its digests
    declared = list(parts)
    try:
        keys = list(dict.fromkeys(declared))
    except TypeError:
        raise TypeError("partition keys must be hashable") from None
    if len(keys) != len(declared):
        raise ValueError("partition keys must be distinct")
    return keys


_BY_HINT = "pass one key per row (tuples, for keys made of several columns)"


def read_parts(data: Any, by: Any, ids: Any, position: dict[Any, int], unknown: str,
                k: int) -> tuple[Any, Any, np.ndarray, PendingParts | None]:
    """The reading section of :meth:`~securedp.session.session.Session.partition` (every public argument is
    checked before it).

    ``(records, id rows or None, part index of each row (-1: none), the pending choice of parts or None)``.
    The shapes of ``data``, ``by`` and ``ids`` are checked before any record is read.
    """
    check_shape([("data", data, ONE_COLUMN_HINT), ("by", by, _BY_HINT), ("ids", ids, ONE_COLUMN_HINT)])
    reading_data()
    records = as_records(data)
    if not analyst_facing():
        found = first_row_record(records)
        if found is not None:
            raise rows_error(records, found)
    labels = as_records(by, "by", hint=_BY_HINT)
    if len(labels) != len(records):
        raise length_mismatch("by", len(labels), len(records))
    id_rows = None if ids is None else as_records(ids, "ids")
    person, has_id = (None, None) if ids is None else _person_ids(ids, len(records))

    def look(key: Any) -> int:
        try:
            return position.get(key, -1)
        except TypeError:  # an unhashable key is no declared key
            return -1

    label_list = labels.tolist() if isinstance(labels, np.ndarray) else labels
    where = np.fromiter(map(look, label_list), dtype=np.int64, count=len(label_list))
    if unknown == "raise" and not analyst_facing() and (where < 0).any():
        outside = np.flatnonzero(where < 0)
        raise ValueError(
            f"row {int(outside[0])} has a key that is not a declared part ({outside.size} such row(s)); "
            "declare it or pass unknown='drop'"
        )
    if has_id is not None:
        where[~has_id] = -1  # analyst-facing only: a row without a usable person id belongs to no part
    inside = np.flatnonzero(where >= 0)
    rule = None if person is None else pending_parts(person[inside], where[inside], k)
    return records, id_rows, where, rule


def _person_ids(ids: Any, n: int) -> tuple[np.ndarray, np.ndarray | None]:
    """``(ids, usable)``: the ``n`` person ids read by the one rule of ids (:mod:`securedp.reading.keys`), and the
    rows that have one (``None``: every row). An unusable id raises for the data holder, naming its row."""
    read = key_column(ids, "ids", "id")
    if read.values.len() != n:
        raise length_mismatch("ids", read.values.len(), n)
    unusable = read.unusable.to_numpy()
    if unusable.any() and not analyst_facing():
        raise read.refused("ids", "id", lambda i: f"row {i}", int(np.flatnonzero(unusable)[0]), int(unusable.sum()))
    values = read.values.to_numpy() if read.values.dtype != pl.String else np.array(read.values.to_list(),
                                                                                     dtype=object)
    return values, (~unusable if unusable.any() else None)


def select_rows(rows: Any, mask: np.ndarray) -> Any:
    """The rows of ``rows`` (an array or a list) where ``mask`` holds."""
    if isinstance(rows, np.ndarray):
        return rows[mask]
    return [r for r, keep in zip(rows, mask, strict=True) if keep]
