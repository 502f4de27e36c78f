"""Without an id column every row is its own person: the direct sums equal the bounding pass's integers."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from securedp.engines.polars import bounding, rowwise

SALT = bytes(range(16))
SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None)


def frame(units: list[int], keys: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"person": np.arange(len(units), dtype=np.int64), "k": keys,
                         "u": np.array(units, dtype=np.int64)}, schema={"person": pl.Int64, "k": pl.String,
                                                                         "u": pl.Int64})


def same(a: object, b: object) -> bool:
    """Equal aggregates: the key frames equal, and every list equal (a key's units as a list or an array)."""
    if hasattr(a, "rows"):
        fields = ["rows", "persons", "total", "total_squares"]
        return a.keys.equals(b.keys) and all(getattr(a, f) == getattr(b, f) for f in fields)  # type: ignore[attr-defined]
    return a.keys.equals(b.keys) and all(  # type: ignore[attr-defined]
        [list(map(int, x)) for x in getattr(a, f)] == [list(map(int, x)) for x in getattr(b, f)]
        for f in ("points", "counts"))


ROWS = st.lists(st.tuples(st.integers(-(2**40), 2**40), st.sampled_from(["a", "b", "c"])), max_size=30)


@SETTINGS
@given(ROWS, st.booleans(), st.integers(1, 3), st.integers(1, 3))
def test_the_direct_sums_are_the_bounding_pass(rows: list[tuple[int, str]], grouped: bool, k: int, m: int) -> None:
    data = frame([u for u, _ in rows], [g for _, g in rows])
    keys = ["k"] if grouped else []
    options = {"person": "person", "keys": keys, "max_groups": k, "max_rows": m, "salt": SALT}
    assert same(rowwise.counts(data, keys), bounding.bound_and_aggregate(data, **options))
    for squares in (False, True):
        assert same(rowwise.column(data, keys, "u", squares),
                    bounding.bound_and_aggregate(data, units="u", squares=squares, **options))
    assert same(rowwise.unit_counts(data, keys, "u"), bounding.bound_and_count_units(data, units="u", **options))


@pytest.mark.parametrize("top", [2**61, 2**62 - 1])
def test_sums_and_squares_of_wide_units_are_exact(top: int) -> None:
    units = [top, top, -top, top - 1] * 3
    data = frame(units, ["a", "b"] * 6)
    for keys in ([], ["k"]):
        got = rowwise.column(data, keys, "u", True)
        want = bounding.bound_and_aggregate(data, person="person", keys=keys, units="u", max_groups=1, max_rows=1,
                                            salt=SALT, squares=True)
        assert same(got, want)
    assert rowwise.column(data, [], "u", True).total_squares == [sum(u * u for u in units)]


@SETTINGS
@given(st.lists(st.integers(-(2**63), 2**63 - 1) | st.integers(-3, 3), max_size=60))
def test_distinct_counts_are_numpys_unique(values: list[int]) -> None:
    """The sort-based distinct points and counts of the one-cell path are ``np.unique``'s, dtypes included."""
    array = np.array(values, dtype=np.int64)
    points, counts = rowwise.distinct_counts(array)
    want_points, want_counts = np.unique(array, return_counts=True)
    assert points.dtype == want_points.dtype and counts.dtype == want_counts.dtype
    assert points.tolist() == want_points.tolist() and counts.tolist() == want_counts.tolist()
    assert array.tolist() == values  # the caller's array is not sorted in place


def test_distinct_counts_of_a_large_column_are_numpys_unique() -> None:
    array = np.random.default_rng(3).integers(0, 5000, 100_000)  # test data only: many runs of ties
    points, counts = rowwise.distinct_counts(array)
    want_points, want_counts = np.unique(array, return_counts=True)
    assert np.array_equal(points, want_points) and np.array_equal(counts, want_counts)


@SETTINGS
@given(ROWS, st.integers(0, 2**22))
def test_a_public_bound_gives_the_same_sums(rows: list[tuple[int, str]], slack: int) -> None:
    """Without a group-by the column's public bound replaces the values' own largest magnitude: the same exact
    sums and squares (wider bounds only change how the sum is chunked)."""
    data = frame([u for u, _ in rows], [g for _, g in rows])
    bound = 2**40 + slack
    for squares in (False, True):
        assert same(rowwise.column(data, [], "u", squares, bound), rowwise.column(data, [], "u", squares))
        assert same(rowwise.column(data, [], "u", squares, 2**61), rowwise.column(data, [], "u", squares))
