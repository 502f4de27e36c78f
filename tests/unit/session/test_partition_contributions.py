"""Partitions enforce how many parts one person may fall in, when person ids are given.

Rule under test (securedp.bounding.contributions.pending_parts): a person in more than
``max_parts`` parts keeps their rows in the ``max_parts`` parts whose group digests
``SHA-256(hex(salt) || field(person) || field(part index))`` are smallest, the salt drawn from the
session's source after the charge. The privacy argument needs the rule to depend only on each
person's own rows: removing one person must leave every other person's kept rows unchanged, and
so must reordering the rows.
"""

from fractions import Fraction

import numpy as np
from _salted_rule import row_digest
from hypothesis import given, settings
from hypothesis import strategies as st

import securedp
from securedp import ChaChaSource
from securedp.bounding.contributions import pending_parts
from securedp.bounding.messages import SALT_BYTES, draw_salt

ROWS = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3)), max_size=40)
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None)
SALT = bytes(range(16))


def reference(rows, max_parts, salt=SALT):
    """Each person's ``max_parts`` parts with the smallest group digests (hashlib, from the spec)."""
    parts_of = {}
    for person, part in rows:
        parts_of.setdefault(person, set()).add(part)
    allowed = {p: sorted(parts, key=lambda w, p=p: row_digest(salt, p, w))[:max_parts] for p, parts in parts_of.items()}
    return [part in allowed[person] for person, part in rows]


def mask(rows, max_parts, dtype=np.int64, salt=SALT):
    ids = np.array([p for p, _ in rows], dtype=dtype) if rows else np.zeros(0, dtype=dtype)
    parts = np.array([w for _, w in rows], dtype=np.int64) if rows else np.zeros(0, dtype=np.int64)
    return pending_parts(ids, parts, max_parts).kept(salt).tolist()


@SETTINGS
@given(ROWS, st.integers(1, 3))
def test_rule_matches_the_reference_on_both_paths(rows, max_parts):
    expected = reference(rows, max_parts)
    assert mask(rows, max_parts) == expected
    assert mask(rows, max_parts, dtype=object) == expected


@SETTINGS
@given(ROWS, st.integers(1, 3), st.integers(0, 5), st.randoms(use_true_random=False))
def test_removing_a_person_or_reordering_leaves_everyone_elses_rows_alone(rows, max_parts, removed, rnd):
    full = mask(rows, max_parts)
    others = [r for r in rows if r[0] != removed]
    kept_full = [r for r, k in zip(rows, full, strict=True) if k and r[0] != removed]
    kept_without = [r for r, k in zip(others, mask(others, max_parts), strict=True) if k]
    assert kept_full == kept_without
    parts_of_removed = {w for (p, w), k in zip(rows, full, strict=True) if k and p == removed}
    assert len(parts_of_removed) <= max_parts
    shuffled = rows[:]
    rnd.shuffle(shuffled)
    assert sorted(r for r, k in zip(shuffled, mask(shuffled, max_parts), strict=True) if k) == sorted(
        r for r, k in zip(rows, full, strict=True) if k)


def test_a_person_in_too_many_parts_keeps_the_parts_of_smallest_digest():
    session = securedp.Session(epsilon=2, rng=ChaChaSource(bytes(32)))
    salt = draw_salt(ChaChaSource(bytes(32)))  # the partition's salt: the session's first 16 bytes
    data = [1, 1, 1, 1, 1]
    by = ["a", "b", "a", "c", "b"]
    ids = [7, 7, 8, 7, 9]  # person 7 appears in a, b, c (indices 0, 1, 2): with max_partitions=1 one is kept
    chosen = "abc"[min(range(3), key=lambda i: row_digest(salt, 7, i))]
    parts = session.partition(data, by=by, parts=["a", "b", "c"], budget=1, ids=ids, max_partitions=1)
    expected = {"a": [7, 8], "b": [7, 9], "c": [7]}
    for key in "abc":
        want = expected[key] if key == chosen else [i for i in expected[key] if i != 7]
        assert list(parts[key].ids) == want
    assert session.spent == 1


def test_partition_with_two_parts_per_person_charges_twice_and_keeps_two():
    session = securedp.Session(epsilon=2, rng=ChaChaSource(bytes(32)))
    parts = session.partition([1, 1, 1], by=["a", "b", "c"], parts=["a", "b", "c"], budget="1/2",
                              ids=[7, 7, 7], max_partitions=2)
    assert sorted(len(parts[k].ids) for k in "abc") == [0, 1, 1]
    assert session.spent == 1


def test_the_salt_is_drawn_after_the_charge_and_only_with_ids():
    source = ChaChaSource(bytes(32))
    session = securedp.Session(epsilon=1, rng=source)
    session.partition([1, 2], by=["a", "b"], parts=["a", "b"], budget="1/4")
    assert source.bytes_served == 0  # no ids: nothing drawn
    session.partition([1, 2], by=["a", "b"], parts=["a", "b"], budget="1/4", ids=[1, 1])
    assert source.bytes_served == SALT_BYTES
    try:
        session.partition([1, 2], by=["a", "b"], parts=["a", "b"], budget=1, ids=[1, 1])
    except securedp.BudgetExceeded:
        pass
    else:
        raise AssertionError("the partition overspent")
    assert source.bytes_served == SALT_BYTES and session.spent == Fraction(1, 2)


def test_ids_that_are_neither_integers_nor_text_are_refused_before_charging():
    session = securedp.Session(epsilon=1)
    try:
        session.partition([1, 2], by=["a", "a"], parts=["a"], budget="1/2", ids=[b"x", b"y"])
    except ValueError as error:  # the one rule of ids: the row is named, as in every release
        assert str(error).startswith("column 'ids', row 0: id b'x' is neither an integer nor text")
    else:
        raise AssertionError("bytes ids were accepted")
    assert session.spent == 0
    parts = session.partition([1, 2], by=["a", "a"], parts=["a"], budget="1/2", ids=["x", "y"])  # text ids are ids
    assert list(parts["a"].data) == [1, 2] and session.spent == Fraction(1, 2)


