"""Bounding how many rows one person contributes; who may read a data-dependent error.

Every privacy map in securedp is for **neighbouring datasets that differ by
adding or removing one person**, who contributes at most
``max_contributions`` rows (default 1). Without ``ids`` the caller promises
that bound. With ``ids`` (one person id per row) the library enforces it:

**Rule (salted SHA-256, as for the grouped tables).** A release with
``ids`` draws a secret 16-byte salt from its random source when it executes
(:func:`securedp.bounding.messages.draw_salt`, before any noise). A person
with at most ``m = max_contributions`` usable rows keeps them all; a person
with more keeps the ``m`` rows whose *row digests*
``SHA-256(hex(salt) || field(person) || field(u))`` are smallest, where ``u``
is the row's canonical integer (its lattice units for a numeric column, the
index of its declared category or bin for a histogram) and the message
format is that of :mod:`securedp.bounding.digest` with no key columns (so
:func:`securedp.engines.polars.bounding.bound_and_aggregate` with no keys keeps the
same rows for the same salt). Rows with equal ``u`` have equal digests and
are interchangeable: every aggregate is the same whichever is kept. Whether
a row is kept depends only on that person's own rows and the salt, never on
row order or on other people's data, so adding or removing one person
changes at most ``m`` kept rows. Rows dropped as unusable
(``missing="drop"``) are removed before the bound is applied.

**Split between prepare and execute.** ``prepare_*`` does everything that
does not depend on the salt (:func:`bound_rows`): screening, clamping, the
per-person row counts, and the rows of persons within the bound (kept under
any order, so they are aggregated at once); only the choice among the rows
of persons over the bound waits for the salt (:class:`PendingRows`, resolved
at execute). Digests are computed only for those rows. A count needs no
salt: it keeps ``min(rows, m)`` rows of each person whichever rows they are.

**Parts of a partition** (:meth:`securedp.Session.partition`) follow the
same rule one level up (:func:`pending_parts`): a person in more than
``max_partitions`` parts keeps the ``max_partitions`` parts whose *group
digests* ``SHA-256(hex(salt) || field(person) || field(i))`` are smallest,
``i`` the index of the part in the declared ``parts`` (its canonical
integer), with a salt drawn from the session's source after the charge.

**Person ids** are non-negative integers (Python ints, NumPy integers, or
floats holding an integer below ``2**53`` exactly: a pandas integer column
with missing values becomes float64) or text, as in a table's ``id_column``
(:func:`securedp.engines.frames.read_table`). A person **is the canonical
text of their id** (an integer in decimal, text as it is), the text the row
digests hash: in a column that holds both, ``7`` and ``"7"`` are one person
(as a CSV file reads them), and a one-column release and the one-cell table
of the same rows keep the same rows for the same salt. A row whose id is
**blank** (``None``, NaN, ``pandas.NA``/``NaT``, ``""``, a whitespace-only
string, or text holding U+FFFD, which a decoder wrote for bytes it could not
read) or **negative** (``pandas.factorize`` codes a missing id as -1) is never
given a person: blank ids would merge different people into one, so that the
bound applies to many people at once. Such a row, or one whose id is neither
an integer nor text (a bool, bytes, a fractional float ...), raises before
anything is drawn or charged, with a message naming ``ids`` and the first
such row; an analyst-facing session drops it (a rule of the row alone).

**Who reads errors.** By default error messages are for the *data holder*
(trusted): they name rows and count offending records. Inside an
analyst-facing :class:`~securedp.Session` (``analyst_facing=True``, which
runs ``prepare_*`` under :func:`analyst_facing_scope`) no exception may
depend on the data: rows with an unusable id are dropped (before the bound),
``missing="raise"`` and ``unknown="raise"`` act as ``"drop"``, and the
remaining errors depend only on public arguments and on the shape of the
input (a 2-D table, lengths that differ), never on row values, and carry no
row index or count.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from securedp.bounding.limits import positive_count as positive_count  # re-exported: read here by the statistics
from securedp.bounding.messages import smallest_per_person
from securedp.lattice.columns import as_records, first_row_record, rows_error
from securedp.reading.cells import is_missing, is_unusable_text
from securedp.reading.mode import analyst_facing as analyst_facing  # re-exported: the mode, defined below
from securedp.reading.mode import analyst_facing_scope as analyst_facing_scope

_FLOAT_ID_LIMIT = 1 << 53  # floats below this hold distinct integers exactly


def data_policy(missing: str) -> tuple[str, bool]:
    """``(missing policy, refuse_rows)`` for screening: ``"raise"`` becomes ``"drop"`` when analyst-facing."""
    if analyst_facing():
        return ("drop" if missing == "raise" else missing), False
    return missing, True


def refuse_rows(records: np.ndarray | list[Any], name: str = "data") -> None:
    """Raise if some record of ``records`` is itself a row (a tuple, list ...): the data is a table.

    Not when analyst-facing: whether a record is a tuple depends on the data.
    """
    if not analyst_facing():
        found = first_row_record(records)
        if found is not None:
            raise rows_error(records, found, name)


def check_max_contributions(value: Any) -> int:
    """``max_contributions`` as an int >= 1."""
    return positive_count(value, "max_contributions")


def length_mismatch(name: str, size: int, n: int) -> ValueError:
    """The error for an argument ``name`` whose length differs from the data's (no counts when analyst-facing)."""
    if analyst_facing():
        return ValueError(f"{name} and data must have one entry per row (their lengths differ)")
    return ValueError(f"{name} has {size} entries but the data has {n} rows")


# Per-id verdicts of _classify_id (codes >= 0 are person ids; text ids are verdict 0).
_BLANK, _NEGATIVE, _NOT_INT = -1, -2, -3


def _classify_id(v: Any) -> int | str:
    """A usable id as a Python int >= 0 or a text id, or one of ``_BLANK``, ``_NEGATIVE``, ``_NOT_INT``.

    Text holding U+FFFD (bytes a decoder could not read, :mod:`securedp.reading.files`) is blank: two
    different ids could read alike."""
    if isinstance(v, (bool, np.bool_)):
        return _NOT_INT
    if isinstance(v, (int, np.integer)):
        i = int(v)
        return i if i >= 0 else _NEGATIVE
    if is_missing(v) or (isinstance(v, str) and is_unusable_text(v)):
        return _BLANK
    if isinstance(v, str):
        return v
    if isinstance(v, (float, np.floating)):
        if not np.isfinite(v) or v % 1 != 0 or abs(v) >= _FLOAT_ID_LIMIT:  # exact tests, any float width
            return _NOT_INT
        return int(v) if v >= 0 else _NEGATIVE
    return _NOT_INT


def _id_problem(verdicts: np.ndarray, values: Any) -> Exception:
    """The data holder's error for the first unusable id (blank first, then negative, then not an integer)."""
    for code in (_BLANK, _NEGATIVE, _NOT_INT):
        bad = np.flatnonzero(verdicts == code)
        if bad.size == 0:
            continue
        first = int(bad[0])
        shown = values[first]
        if isinstance(shown, np.generic):
            shown = shown.item()  # 'nan', not 'np.float64(nan)'
        if code == _BLANK:
            return ValueError(
                f"ids: row {first} has a blank person id ({shown!r}; {bad.size} row(s) without an id); "
                "blank ids would merge different people into one: fill them in or remove those rows"
            )
        if code == _NEGATIVE:
            return ValueError(
                f"ids: row {first} has the negative person id {shown!r} ({bad.size} such row(s)); ids must be "
                ">= 0 (pandas.factorize codes a missing id as -1): remove the rows without an id first"
            )
        return TypeError(
            f"ids: row {first} is not a person id ({type(shown).__name__} {shown!r}); "
            "ids are integers or text"
        )
    raise AssertionError("no unusable id")  # pragma: no cover - called only when some verdict is negative


def person_ids(ids: Any, n: int) -> tuple[np.ndarray, np.ndarray | None]:
    """``(codes, usable)``: the ``n`` person ids as an int64 (or object-of-int) array, and the rows that have one.

    ``usable`` is ``None`` when every row has a usable id (see the module
    docstring). Otherwise, only in an analyst-facing preparation, it marks
    the rows with a usable id (the codes of the others are meaningless);
    outside that mode an unusable id raises before anything is charged:
    blank or negative, :class:`ValueError`; not an integer, :class:`TypeError`.
    A 2-D ``ids`` or one of another length than the data raises in both modes.
    """
    arr = as_records(ids, "ids")
    if len(arr) != n:
        raise length_mismatch("ids", len(arr), n)
    verdicts: np.ndarray | None = None
    if isinstance(arr, list) and arr and set(map(type, arr)) == {int}:  # plain Python ints: one vectorised pass
        with contextlib.suppress(OverflowError):  # Python ints past int64 stay a list
            arr = np.array(arr, dtype=np.int64)
    kind = arr.dtype.kind if isinstance(arr, np.ndarray) else "O"
    values: Any = arr
    if isinstance(arr, np.ndarray) and kind in "iu":
        codes = arr
        if kind == "i" and arr.size and int(arr.min()) < 0:
            verdicts = np.where(arr < 0, _NEGATIVE, 0)
    elif isinstance(arr, np.ndarray) and kind == "f" and arr.dtype.itemsize <= 8:
        x = arr.astype(np.float64, copy=False)
        with np.errstate(invalid="ignore"):
            integral = np.isfinite(x) & (np.floor(x) == x) & (np.abs(x) < _FLOAT_ID_LIMIT)
        verdicts = np.where(np.isnan(x), _BLANK, np.where(~integral, _NOT_INT, np.where(x < 0, _NEGATIVE, 0)))
        codes = np.where(verdicts == 0, x, 0).astype(np.int64)
    elif kind in "fO":
        # Per id. Long doubles stay NumPy scalars (``tolist`` would round them to float64).
        values = arr if isinstance(arr, list) else (list(arr) if kind == "f" else arr.tolist())
        classified = [_classify_id(v) for v in values]
        verdicts = np.fromiter((0 if isinstance(c, str) else min(c, 0) for c in classified), dtype=np.int64,
                               count=len(classified))
        if any(isinstance(c, str) for c in classified):  # a person is the canonical text of their id
            codes = np.empty(len(classified), dtype=object)
            codes[:] = [c if isinstance(c, str) else str(c) if c >= 0 else "" for c in classified]
        else:
            try:
                codes = np.array(classified, dtype=np.int64) if classified else np.zeros(0, np.int64)
            except OverflowError:
                codes = np.empty(len(classified), dtype=object)
                codes[:] = classified
    else:
        raise TypeError(f"ids must be integer person ids, got an array of {kind} dtype")
    if verdicts is None or not verdicts.any():
        return codes, None
    if analyst_facing():
        return codes, verdicts == 0
    raise _id_problem(verdicts, values)


@dataclass(frozen=True)
class PendingRows:
    """The choices that wait for the salt: entries ``(person, value)`` of persons over the bound ``limit``.

    Each listed person has more than ``limit`` entries (rows, or distinct
    parts); :meth:`kept` keeps ``limit`` of each, those with the smallest
    digests (:func:`securedp.bounding.messages.smallest_per_person`).
    ``values`` are the entries' canonical integers (int64, or Python ints).
    """

    persons: np.ndarray
    values: np.ndarray
    limit: int

    def kept(self, salt: bytes) -> np.ndarray:
        """Mask of the entries kept under ``salt``."""
        return smallest_per_person(salt, self.persons, self.values, self.limit)

    def chosen(self, salt: bytes) -> np.ndarray:
        """The values of the entries kept under ``salt``, in entry order."""
        chosen: np.ndarray = self.values[self.kept(salt)]
        return chosen


@dataclass(frozen=True)
class Bounded:
    """The contribution rule over ``n`` rows as far as it goes without the salt (see the module docstring).

    ``settled`` marks the rows kept whatever the salt (their person has at
    most ``limit`` usable rows), ``pending`` the rows of persons over the
    bound, whose person codes are ``persons`` (in row order). A row in
    neither (no usable id) is never kept.
    """

    settled: np.ndarray
    pending: np.ndarray
    persons: np.ndarray
    limit: int

    def choices(self, values: np.ndarray) -> PendingRows:
        """The pending rows with ``values`` (one canonical integer per row of the ``n``) as their entries."""
        return PendingRows(self.persons, values[self.pending], self.limit)

    @property
    def kept_rows(self) -> int:
        """The number of rows kept under any salt: the settled rows and ``limit`` per person over the bound."""
        return int(self.settled.sum()) + self.limit * int(np.unique(self.persons).size)


def _over_bound(codes: np.ndarray, limit: int) -> np.ndarray:
    """Mask of the rows whose person (code) has more than ``limit`` rows."""
    if codes.size == 0:
        return np.zeros(0, dtype=bool)
    _, person, counts = np.unique(codes, return_inverse=True, return_counts=True)
    over: np.ndarray = counts[person.reshape(-1)] > limit
    return over


def bound_rows(n: int, ids: Any, max_contributions: int, usable: np.ndarray | None = None) -> Bounded | None:
    """The contribution rule over the ``usable`` rows (all ``n`` rows if None), before the salt; None if no ids.

    ``ids`` has one entry per row (``usable.size`` rows when ``usable`` is
    given); the masks of the result are over the usable rows. A row without
    a usable person id (analyst-facing only; otherwise it raises) is never kept.
    """
    if ids is None:
        return None
    total = n if usable is None else usable.size
    codes, has_id = person_ids(ids, total)
    rows = np.ones(total, dtype=bool) if has_id is None else has_id
    if usable is not None:
        rows &= usable
    over = np.zeros(total, dtype=bool)
    over[rows] = _over_bound(codes[rows], max_contributions)
    settled, pending = rows & ~over, over
    if usable is not None:
        settled, pending, codes = settled[usable], pending[usable], codes[usable]
    return Bounded(settled, pending, codes[pending], max_contributions)


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
    """The parts rule for rows with person codes ``ids`` in parts ``parts`` (indices in the declared parts)."""
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
