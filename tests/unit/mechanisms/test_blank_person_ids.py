"""Defect 7: blank person ids never merge into one person.

A row whose person id is blank (``None``, NaN, ``pandas.NA``, ``""``, whitespace) or negative (what
``pandas.factorize`` gives a missing id) used to be merged with every other such row into one
"person", or refused with a confusing message. Merging is a privacy failure, not only a utility one:
the contribution bound is then applied to many people at once (with ``max_contributions=1`` the
first blank-id row stands for all of them, so adding a person with a blank id can *replace* another
person's value, a change of ``hi - lo`` where the sensitivity was computed for ``max(|lo|, |hi|)``).

The data holder's mode raises before anything is charged, naming ``ids`` and the first row; an
analyst-facing session drops those rows (a rule that depends only on the row itself). Ids are read by
the one rule of ids and keys (:mod:`securedp.reading.keys`), in a one-column release as in a table.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from _salted_rule import kept_rows
from hypothesis import given, settings
from hypothesis import strategies as st

import securedp
from securedp import ChaChaSource, Session
from securedp.bounding.messages import draw_salt

pd = pytest.importorskip("pandas")

SEED = bytes(range(32))
BLANKS = [None, float("nan"), np.float64("nan"), pd.NA, pd.NaT, "", "   ", "\t\n", decimal.Decimal("NaN")]
BLANK_IDS = ["None", "nan", "np-nan", "pd-NA", "pd-NaT", "empty", "spaces", "tab-newline", "decimal-nan"]


def id_columns(blank: Any) -> list[Any]:
    """Ways the id column [7, <blank>, 8, <blank>] reaches a release."""
    forms: list[Any] = [[7, blank, 8, blank]]
    arr = np.empty(4, dtype=object)
    arr[:] = [7, blank, 8, blank]
    forms.append(arr)
    return forms


RELEASES: dict[str, Callable[[Any, Any], Any]] = {
    "count": lambda s, ids: s.count([1, 2, 3, 4], ids=ids, epsilon="1/4"),
    "sum": lambda s, ids: s.sum([1, 2, 3, 4], bounds=(0, 5), ids=ids, epsilon="1/4"),
    "mean": lambda s, ids: s.mean([1, 2, 3, 4], bounds=(0, 5), ids=ids, epsilon="1/4"),
    "variance": lambda s, ids: s.variance([1, 2, 3, 4], bounds=(0, 5), ids=ids, epsilon="1/4"),
    "histogram": lambda s, ids: s.histogram(list("abab"), categories=["a", "b"], ids=ids, epsilon="1/4"),
    "histogram-bins": lambda s, ids: s.histogram([1, 2, 3, 4], bins=[0, 2, 5], ids=ids, epsilon="1/4"),
    "median": lambda s, ids: s.median([1, 2, 3, 4], bounds=(0, 5), ids=ids, epsilon="1/4"),
    "partition": lambda s, ids: s.partition([1, 2, 3, 4], by=list("abab"), parts=["a", "b"], budget="1/4", ids=ids),
}


@pytest.mark.parametrize("release", sorted(RELEASES))
@pytest.mark.parametrize("blank", BLANKS, ids=BLANK_IDS)
def test_a_blank_id_raises_naming_ids_before_any_charge(release: str, blank: Any) -> None:
    for ids in id_columns(blank):
        source = ChaChaSource(SEED)
        log: list[dict[str, Any]] = []
        session = Session(epsilon=1, rng=source, audit=log)
        with pytest.raises(ValueError) as info:
            RELEASES[release](session, ids)
        message = str(info.value)
        assert message.startswith("column 'ids', row 1: blank id (2 row(s)"), message
        assert session.spent == 0 and source.bytes_served == 0 and log == []


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_pandas_columns_with_missing_ids_raise(release: str) -> None:
    columns = [
        pd.Series([7, None, 8, None], dtype="Int64"),  # to_numpy() gives float64 with NaN
        pd.Series([7.0, np.nan, 8.0, np.nan]),
        pd.Series(["7", None, "8", ""], dtype=object),
        np.array([7.0, np.nan, 8.0, np.nan]),
    ]
    for ids in columns:
        session = Session(epsilon=1)
        with pytest.raises((ValueError, TypeError), match=r"^column 'ids', row 1: blank id"):
            RELEASES[release](session, ids)
        assert session.spent == 0


def test_factorized_ids_with_the_missing_code_are_refused() -> None:
    """``pandas.factorize`` codes every missing id as -1: one "person" unless refused."""
    codes, _ = pd.factorize(pd.Series(["ann", None, "bob", None]))
    assert codes.tolist() == [0, -1, 1, -1]
    with pytest.raises(ValueError, match=r"column 'ids', row 1: negative id -1 .*factorize.* \(2 row\(s\)"):
        securedp.count([1, 2, 3, 4], ids=codes, epsilon=1)
    with pytest.raises(ValueError, match="negative"):
        securedp.sum([1, 2, 3, 4], bounds=(0, 5), ids=[0, -3, 1, 2], epsilon=1)
    with pytest.raises(ValueError, match="negative"):  # a table reads its ids by the same rule
        securedp.table(pd.DataFrame({"p": codes, "x": [1, 2, 3, 4]}), id_column="p", epsilon=1)


@pytest.mark.parametrize("declared", [None, "int", "text"])
@pytest.mark.parametrize("width", ["Int8", "Int16", "Int32", "Int64", "Int128"])
def test_negative_ids_are_refused_in_every_signed_integer_type(width: str, declared: str | None) -> None:
    """A 128-bit integer column is read as text (its canonical decimal text), yet -1 in it is the factorize code as
    in any integer column: refused by the data holder and dropped for an analyst, whatever type is declared, with
    the same message and the same release as the 64-bit column (a third review: it was one person "-1")."""
    pl = pytest.importorskip("polars")
    ids = [-1, 3, 4, -1, 5] * 4
    frame = pl.DataFrame({"p": pl.Series(ids, dtype=getattr(pl, width)), "x": [1, 2, 3, 4, 5] * 4})
    schema = None if declared is None else {"p": declared}
    with pytest.raises(ValueError, match=r"^column 'p', row 0: negative id -1 .*factorize.* \(8 row\(s\)"):
        securedp.table(frame, id_column="p", schema=schema, epsilon=1)
    released = []
    for column in (frame, frame.with_columns(pl.col("p").cast(pl.Int64))):
        session = Session(epsilon=1, rng=ChaChaSource(SEED), analyst_facing=True)
        released.append(session.table(column, id_column="p", schema=schema, epsilon=1).frame.to_dicts())
    assert released[0] == released[1]


@pytest.mark.parametrize("form", ["pandas object column", "list"])
def test_a_signalling_nan_id_is_a_blank_id_like_a_quiet_one(form: str) -> None:
    """pandas' missing-value test raises ``InvalidOperation`` on ``Decimal("sNaN")``: a raw error for the data
    holder and ``DataRefused`` for an analyst, where ``Decimal("NaN")`` is a blank id (a fourth review)."""
    outcomes = []
    for nan in (decimal.Decimal("NaN"), decimal.Decimal("sNaN")):
        ids: Any = [*range(10), nan]
        if form != "list":
            ids = pd.Series(ids, dtype=object)
        with pytest.raises(ValueError, match=r"^column 'ids', row 10: blank id \(1 row\(s\)") as refused:
            securedp.count([0] * 11, ids=ids, epsilon=1)
        session = Session(epsilon=1, rng=ChaChaSource(SEED), analyst_facing=True)
        outcomes.append((str(refused.value), session.count([0] * 11, ids=ids, epsilon="1/2").value))
    assert outcomes[0] == outcomes[1]


def test_a_decimal_id_of_a_tiny_exponent_is_judged_by_it() -> None:
    """``Decimal("1E-999999999")`` was turned into the ratio ``1 / 10**999999999`` to see whether it held an
    integer: one id cell hung the release (a fourth review). It is a fraction, unusable, at once (run in a
    subprocess so that the old behaviour fails by its timeout instead of hanging the run)."""
    import subprocess
    import sys

    code = ("import decimal, securedp\n"
            "from securedp import ChaChaSource, Session\n"
            "s = Session(epsilon=1, rng=ChaChaSource(bytes(32)), analyst_facing=True)\n"
            "ids = [*range(5), decimal.Decimal('1E-999999999'), decimal.Decimal('-0E-999999999')]\n"
            "print(s.count([0] * 7, ids=ids, epsilon='1/2').value)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-2000:]
    expected = Session(epsilon=1, rng=ChaChaSource(bytes(32)), analyst_facing=True).count(
        [0] * 6, ids=[*range(5), 0], epsilon="1/2").value  # -0E-999999999 is the id 0; the other row is dropped
    assert int(run.stdout) == expected


def test_the_merge_the_old_code_made() -> None:
    """Two people without ids: a merged "person" keeps one row; each must be a person or be refused."""
    ids = pd.factorize(pd.Series(["ann", None, None]))[0]
    with pytest.raises(ValueError):
        securedp.count([10, 20, 30], ids=ids, max_contributions=1, epsilon=1)


@pytest.mark.parametrize("bad", [1.5, True, b"7", float("inf"), 2.0**60, [7], decimal.Decimal("7.5")], ids=repr)
def test_ids_that_are_neither_integers_nor_text_are_refused_naming_ids(bad: Any) -> None:
    """A float past ``2**53`` may be two ids rounded into one: it is no id either."""
    session = Session(epsilon=1)
    with pytest.raises(ValueError, match=r"^column 'ids', row 1: id .* (is not a whole number|is neither|"
                                         r"is not a finite number|is too large to be read exactly)"):
        session.count([1, 2], ids=[3, bad], epsilon="1/2")
    assert session.spent == 0


@pytest.mark.parametrize("good", [decimal.Decimal("7"), 7.0, np.int8(7), "7", Fraction(7)], ids=repr)
def test_a_number_holding_an_integer_is_that_id(good: Any) -> None:
    """One person whatever form their id takes in an object column: the canonical text of the integer."""
    a = securedp.sum([4, 5], bounds=(0, 10), ids=[7, good], epsilon=1, rng=ChaChaSource(SEED))
    b = securedp.sum([4, 5], bounds=(0, 10), ids=[7, 7], epsilon=1, rng=ChaChaSource(SEED))
    assert a.value == b.value


def test_integral_float_ids_are_the_integer_ids() -> None:
    a = securedp.sum([4, 5, 6], bounds=(0, 10), ids=np.array([1.0, 1.0, 2.0]), epsilon=1, rng=ChaChaSource(SEED))
    b = securedp.sum([4, 5, 6], bounds=(0, 10), ids=[1, 1, 2], epsilon=1, rng=ChaChaSource(SEED))
    assert a.value == b.value


def test_lengths_that_differ_give_counts_only_to_the_data_holder() -> None:
    with pytest.raises(ValueError, match="ids has 1 entries but the data has 2 rows"):
        securedp.count([1, 2], ids=[1], epsilon=1)
    with pytest.raises(ValueError) as info:
        Session(epsilon=1, analyst_facing=True).count([1, 2], ids=[1], epsilon="1/2")
    assert str(info.value) == "ids and data must have one entry per row (their lengths differ)"


# --- analyst-facing: rows without a usable id are dropped ---------------------------------------------


@pytest.mark.parametrize("release", sorted(set(RELEASES) - {"partition"}))
@pytest.mark.parametrize("blank", [*BLANKS, -1, 2.5, "x\ufffd", True],
                         ids=[*BLANK_IDS, "minus-1", "2.5", "fffd", "True"])
def test_analyst_facing_sessions_drop_rows_without_a_usable_id(release: str, blank: Any) -> None:
    """The release equals the same release on the rows that have an id, from the same seed."""
    full = Session(epsilon=1, rng=ChaChaSource(SEED), analyst_facing=True)
    got = RELEASES[release](full, [7, blank, 8, blank])
    kept = Session(epsilon=1, rng=ChaChaSource(SEED))
    clean = {
        "count": lambda: kept.count([1, 3], ids=[7, 8], epsilon="1/4"),
        "sum": lambda: kept.sum([1, 3], bounds=(0, 5), ids=[7, 8], epsilon="1/4"),
        "mean": lambda: kept.mean([1, 3], bounds=(0, 5), ids=[7, 8], epsilon="1/4"),
        "variance": lambda: kept.variance([1, 3], bounds=(0, 5), ids=[7, 8], epsilon="1/4"),
        "histogram": lambda: kept.histogram(["a", "a"], categories=["a", "b"], ids=[7, 8], epsilon="1/4"),
        "histogram-bins": lambda: kept.histogram([1, 3], bins=[0, 2, 5], ids=[7, 8], epsilon="1/4"),
        "median": lambda: kept.median([1, 3], bounds=(0, 5), ids=[7, 8], epsilon="1/4"),
    }[release]()
    assert got.value == clean.value and full.spent == kept.spent == Fraction(1, 4)


def test_analyst_facing_partition_drops_rows_without_an_id() -> None:
    session = Session(epsilon=1, analyst_facing=True)
    parts = session.partition([1, 2, 3, 4], by=list("abab"), parts=["a", "b"], budget="1/4",
                              ids=[7, None, "", 8])
    assert list(parts["a"].data) == [1] and list(parts["b"].data) == [4]
    assert list(parts["b"].ids) == [8] and session.spent == Fraction(1, 4)
    assert parts["a"].session.analyst_facing


# --- the rule, over random id columns -------------------------------------------------------------

ID_VALUES = st.one_of(st.integers(0, 4), st.sampled_from([None, float("nan"), "", " ", -1, "x", "3", 1.0, 2.5]))


def usable(v: Any) -> bool:
    if isinstance(v, bool) or v is None:
        return False
    if isinstance(v, int):
        return v >= 0
    if isinstance(v, float):
        return v == v and v.is_integer() and v >= 0
    return isinstance(v, str) and bool(v.strip())


def person(v: Any) -> Any:
    """A person is the canonical text of their id (an integer in decimal); the reference's digests hash it."""
    return v if isinstance(v, str) else int(v)


@settings(max_examples=80, deadline=None, derandomize=True, database=None)
@given(st.lists(ID_VALUES, max_size=30), st.integers(1, 3))
def test_kept_rows_are_the_reference_rule_on_rows_with_a_usable_id(ids: list[Any], m: int) -> None:
    data = list(range(len(ids)))
    good = [i for i, v in enumerate(ids) if usable(v)]
    if len(good) != len(ids):
        with pytest.raises((ValueError, TypeError), match=r"^column 'ids', row "):
            securedp.count(data, ids=ids, epsilon=1)
    source = ChaChaSource(SEED)
    draw_salt(source)  # the partition's salt (drawn with ids); the sum then draws its own, then its noise
    ahead = ChaChaSource(SEED)
    draw_salt(ahead)
    salt = draw_salt(ahead)
    persons = [person(ids[i]) for i in good]
    if any(isinstance(p, str) for p in persons):  # a column with text: every person is text
        persons = [str(p) for p in persons]
    expected_rows = [good[j] for j in kept_rows(salt, persons, [data[i] for i in good], m)]
    session = Session(epsilon=2 * 10**9, rng=ChaChaSource(SEED), analyst_facing=True)
    parts = session.partition(data, by=["k"] * len(data), parts=["k"], budget=1, ids=ids, max_partitions=1)
    assert parts["k"].data == [data[i] for i in good]  # partition keeps every row with an id (one part)
    got = session.sum(data, bounds=(0, 100), lattice=1, ids=ids, max_contributions=m, epsilon=10**9)
    reference = Session(epsilon=10**9, rng=source)  # the same stream after the partition's salt: the same salt
    want = reference.sum([data[i] for i in expected_rows], bounds=(0, 100), lattice=1, epsilon=10**9)
    assert got.value == want.value

