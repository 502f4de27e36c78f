"""Partitions enforce how many parts one person may fall in, when person ids are given.

Rule under test (securedp.mechanisms.contributions.first_parts_per_person): in data order, each
person keeps their rows in the first ``max_parts`` distinct parts where they appear. The privacy
argument needs the rule to depend only on each person's own rows: removing one person must leave
every other person's kept rows unchanged.
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import securedp
from securedp import ChaChaSource
from securedp.mechanisms.contributions import first_parts_per_person

ROWS = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3)), max_size=40)
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None)


def reference(rows, max_parts):
    chosen, keep = {}, []
    for person, part in rows:
        seen = chosen.setdefault(person, [])
        if part not in seen and len(seen) < max_parts:
            seen.append(part)
        keep.append(part in seen)
    return keep


def mask(rows, max_parts, dtype=np.int64):
    ids = np.array([p for p, _ in rows], dtype=dtype) if rows else np.zeros(0, dtype=dtype)
    parts = np.array([w for _, w in rows], dtype=np.int64) if rows else np.zeros(0, dtype=np.int64)
    return first_parts_per_person(ids, parts, max_parts).tolist()


@SETTINGS
@given(ROWS, st.integers(1, 3))
def test_rule_matches_the_reference_on_both_paths(rows, max_parts):
    expected = reference(rows, max_parts)
    assert mask(rows, max_parts) == expected
    assert mask(rows, max_parts, dtype=object) == expected


@SETTINGS
@given(ROWS, st.integers(1, 3), st.integers(0, 5))
def test_removing_a_person_leaves_everyone_elses_rows_alone(rows, max_parts, removed):
    full = mask(rows, max_parts)
    others = [r for r in rows if r[0] != removed]
    kept_full = [r for r, k in zip(rows, full) if k and r[0] != removed]
    kept_without = [r for r, k in zip(others, mask(others, max_parts)) if k]
    assert kept_full == kept_without
    parts_of_removed = {w for (p, w), k in zip(rows, full) if k and p == removed}
    assert len(parts_of_removed) <= max_parts


def test_partition_drops_a_persons_rows_beyond_their_first_part():
    session = securedp.Session(epsilon=2, rng=ChaChaSource(bytes(32)))
    data = [1, 1, 1, 1, 1]
    by = ["a", "b", "a", "c", "b"]
    ids = [7, 7, 8, 7, 9]  # person 7 appears in a, b, c: with max_partitions=1 only 'a' keeps them
    parts = session.partition(data, by=by, parts=["a", "b", "c"], budget=1, ids=ids, max_partitions=1)
    assert list(parts["a"].ids) == [7, 8]
    assert list(parts["b"].ids) == [9]
    assert list(parts["c"].ids) == []
    assert session.spent == 1


def test_partition_with_two_parts_per_person_charges_twice_and_keeps_two():
    session = securedp.Session(epsilon=2, rng=ChaChaSource(bytes(32)))
    parts = session.partition([1, 1, 1], by=["a", "b", "c"], parts=["a", "b", "c"], budget="1/2",
                              ids=[7, 7, 7], max_partitions=2)
    assert [len(parts[k].ids) for k in "abc"] == [1, 1, 0]
    assert session.spent == 1


def test_non_integer_ids_are_refused_before_charging():
    session = securedp.Session(epsilon=1)
    try:
        session.partition([1, 2], by=["a", "a"], parts=["a"], budget="1/2", ids=["x", "y"])
    except TypeError as error:
        assert "integer" in str(error)
    else:
        raise AssertionError("string ids were accepted")
    assert session.spent == 0
