"""Bounding how many rows one person contributes.

Every privacy map in securedp is for **neighbouring datasets that differ by
adding or removing one person**, who contributes at most
``max_contributions`` rows (default 1). Without ``ids`` the caller promises
that bound. With ``ids`` (one person id per row) the library enforces it:

**Rule: each person keeps their first ``max_contributions`` rows in data
order; later rows of that person are discarded.** Whether a row is kept
depends only on that person's own rows (their order among themselves),
never on other people's data, so adding or removing one person changes at
most ``max_contributions`` kept rows. Ids must be integers (Python ints or a
NumPy integer array); map other identifiers to integers first (for example
``pandas.factorize``). Rows dropped as unusable (``missing="drop"``) are
removed before the bound is applied.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from securedp.hazmat.exact.rational import to_int


def check_max_contributions(value: Any) -> int:
    """``max_contributions`` as an int >= 1."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError("max_contributions must be an integer, not a bool")
    m = to_int(value, "max_contributions")
    if m < 1:
        raise ValueError(f"max_contributions must be >= 1, got {m}")
    return m


def person_ids(ids: Any, n: int) -> np.ndarray:
    """``ids`` checked: ``n`` integers, as an int64 or object array."""
    if isinstance(ids, np.ndarray):
        arr = ids.reshape(-1)
    elif callable(getattr(ids, "to_numpy", None)):
        arr = np.asarray(ids.to_numpy()).reshape(-1)
    else:
        if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
            raise TypeError("ids must be a sequence of integer person ids")
        values = list(ids)
        for i, v in enumerate(values):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"person id {i} is not an integer ({type(v).__name__}); ids must be integers")
        try:
            arr = np.array(values, dtype=np.int64) if values else np.zeros(0, np.int64)
        except OverflowError:
            arr = np.empty(len(values), dtype=object)
            arr[:] = [int(v) for v in values]
    if arr.dtype.kind not in "iuO" or (arr.dtype.kind == "O" and not all(
        isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in arr
    )):
        raise TypeError(f"ids must be integers, got {arr.dtype}")
    if arr.size != n:
        raise ValueError(f"ids has {arr.size} entries but the data has {n} rows")
    return arr


def first_rows_per_person(ids: np.ndarray, max_contributions: int) -> np.ndarray:
    """Mask of the rows kept: each id's first ``max_contributions`` rows in order."""
    n = ids.size
    if ids.dtype == object:
        seen: dict[int, int] = {}
        keep = np.zeros(n, dtype=bool)
        for i, v in enumerate(ids):
            c = seen.get(v, 0)
            if c < max_contributions:
                keep[i] = True
                seen[v] = c + 1
        return keep
    order = np.argsort(ids, kind="stable")
    sorted_ids = ids[order]
    starts = np.ones(n, dtype=bool)
    starts[1:] = sorted_ids[1:] != sorted_ids[:-1]
    first = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
    keep = np.empty(n, dtype=bool)
    keep[order] = (np.arange(n) - first) < max_contributions
    return keep


def bound_rows(n: int, ids: Any, max_contributions: int, usable: np.ndarray | None = None) -> np.ndarray | None:
    """Mask, over the ``usable`` rows (all rows if None), of those the contribution rule keeps; None if no ids."""
    if ids is None:
        return None
    arr = person_ids(ids, n if usable is None else usable.size)
    if usable is not None:
        arr = arr[usable]
    return first_rows_per_person(arr, max_contributions)


def first_parts_per_person(ids: np.ndarray, parts: np.ndarray, max_parts: int) -> np.ndarray:
    """Mask of the rows kept when one person may fall in at most ``max_parts`` parts.

    **Rule:** in data order, each person keeps every row in the first
    ``max_parts`` distinct parts where they appear; their rows in any other
    part are discarded. Like :func:`first_rows_per_person`, whether a row is
    kept depends only on that person's own rows.
    """
    n = ids.size
    if n == 0:
        return np.zeros(0, dtype=bool)
    if ids.dtype == object or (ids.dtype.kind == "u" and int(ids.max()) > np.iinfo(np.int64).max):
        chosen: dict[int, list[int]] = {}
        keep = np.zeros(n, dtype=bool)
        for row, (person, part) in enumerate(zip(ids.tolist(), parts.tolist())):
            seen = chosen.setdefault(person, [])
            if part in seen or len(seen) < max_parts:
                if part not in seen:
                    seen.append(part)
                keep[row] = True
        return keep
    pairs = np.stack([ids.astype(np.int64), parts.astype(np.int64)], axis=1)
    _, first_row, pair_of_row = np.unique(pairs, axis=0, return_index=True, return_inverse=True)
    by_appearance = np.argsort(first_row, kind="stable")
    allowed = np.empty(first_row.size, dtype=bool)
    allowed[by_appearance] = first_rows_per_person(ids[first_row[by_appearance]], max_parts)
    return allowed[pair_of_row.reshape(-1)]
