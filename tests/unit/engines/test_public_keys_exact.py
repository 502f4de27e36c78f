"""Public keys are converted exactly to their group column's type at prepare (issue 16, items 6 and 14).

Item 6: the keys used to be cast to the column's type only when the table had rows, so an
analyst-facing table with public keys raised ``InvalidOperationError`` when some row survived and a
``SchemaError``/``TypeError`` when none did: the exception type told whether anyone was in the data.
Item 14: ``keys=["10", "20"]`` (and ``--keys 10,20`` on the command line) on an integer column
failed after the draw, while building the output. Now every key is converted at prepare, rows or
none, exactly (canonical integer text, integral numbers), or refused there naming the column, with
nothing charged or drawn.
"""

from __future__ import annotations

import decimal
import functools
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from securedp import ChaChaSource, Session
from securedp.tables import Count, Sum

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")

SEED = bytes(range(32))


def seeded(analyst_facing: bool = False) -> tuple[Session, ChaChaSource]:
    source = ChaChaSource(SEED)
    return Session(epsilon=10, rng=source, analyst_facing=analyst_facing), source


def table(session: Session, frame: Any, keys: Any, **options: Any) -> Any:
    return session.table(frame, group_by=["g"], keys=keys, aggregations=[Count(), Sum("v", (0, 10))],
                         id_column="id", epsilon=1, **options)


def int_frame(kind: str, rows: int, dtype: Any = pl.Int64) -> Any:
    frame = pl.DataFrame({"id": list(range(rows)), "g": [10, 20, 10][:rows], "v": [1, 2, 3][:rows]},
                         schema={"id": pl.Int64, "g": dtype, "v": pl.Int64})
    return frame.to_pandas() if kind == "pandas" else frame


def outcome(call: Any) -> tuple[str, ...]:
    try:
        call()
    except Exception as error:
        return (type(error).__name__, str(error))
    return ("released",)


# --- item 6: the outcome does not tell whether a row survived ----------------------------------------


@pytest.mark.parametrize("analyst_facing", [False, True], ids=["data-holder", "analyst"])
@pytest.mark.parametrize("kind", ["polars", "pandas"])
@pytest.mark.parametrize("keys", [["a", "b"], ["10", "x"], [10.5], [True]], ids=repr)
def test_keys_that_do_not_fit_give_one_outcome_with_rows_or_without(kind: str, keys: list[Any],
                                                                    analyst_facing: bool) -> None:
    seen = set()
    for rows in (0, 1, 3):
        session, source = seeded(analyst_facing)
        seen.add(outcome(functools.partial(table, session, int_frame(kind, rows), keys)))
        assert session.spent == 0 and source.bytes_served == 0
    assert len(seen) == 1, seen
    ((name, *_),) = seen
    assert name == ("DataRefused" if analyst_facing else "TypeError")


def test_every_row_dropped_or_none_at_all_releases_the_same_cells() -> None:
    blank = pd.DataFrame({"id": [0, 1], "g": pd.array([None, None], dtype="Int64"), "v": [1, 2]})
    for frame in (int_frame("pandas", 0), blank, int_frame("polars", 0)):
        session, _ = seeded(analyst_facing=True)
        result = table(session, frame, ["10", 20])
        assert [row[0] for row in result.value] == [10, 20]


# --- item 14: keys converted exactly, at prepare -------------------------------------------------------


@pytest.mark.parametrize("kind", ["polars", "pandas"])
@pytest.mark.parametrize("keys", [["10", "20"], [10.0, 20.0], [decimal.Decimal("10"), Fraction(20)],
                                  [np.int8(10), np.uint64(20)], [10, "20"]], ids=repr)
def test_integer_keys_in_any_exact_form_are_the_integer_keys(kind: str, keys: list[Any]) -> None:
    expected = table(seeded()[0], int_frame(kind, 3), [10, 20])
    got = table(seeded()[0], int_frame(kind, 3), keys)
    assert got.value == expected.value and [row[0] for row in got.value] == [10, 20]
    assert all(type(row[0]) is int for row in got.value)
    frame = got.frame if kind == "polars" else pl.from_pandas(got.frame)
    assert frame.schema["g"] == pl.Int64


@pytest.mark.parametrize("dtype", [pl.Int8, pl.Int16, pl.Int32, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64])
def test_keys_take_the_width_of_their_column(dtype: Any) -> None:
    got = table(seeded()[0], int_frame("polars", 3, dtype), ["10", 20])
    assert [row[0] for row in got.value] == [10, 20] and got.frame.schema["g"] == dtype


@pytest.mark.parametrize(("key", "problem"), [
    ("+10", "not an integer"), ("010", "not an integer"), ("-0", "not an integer"), (" 10", "not an integer"),
    ("1_0", "not an integer"), ("10.0", "not an integer"), ("1e1", "not an integer"), ("١٠", "not an integer"),
    (10.5, "not an integer"), (float("inf"), "not an integer"), (decimal.Decimal("10.5"), "not an integer"),
    (Fraction(21, 2), "not an integer"), (True, "not an integer"), (b"10", "not an integer"),
    (2**63, "outside the range"), (-(2**63) - 1, "outside the range"), ("9223372036854775808", "outside the range"),
])
def test_keys_that_do_not_convert_exactly_are_refused_at_prepare_naming_the_column(key: Any, problem: str) -> None:
    session, source = seeded()
    with pytest.raises((TypeError, ValueError), match=f"{problem}.*group column 'g'|group column 'g'.*{problem}"):
        table(session, int_frame("polars", 3), [key])
    assert session.spent == 0 and source.bytes_served == 0


def test_a_key_outside_an_unsigned_column_is_refused() -> None:
    with pytest.raises(ValueError, match=r"outside the range of group column 'g' \(UInt8: 0 to 255\)"):
        table(seeded()[0], int_frame("polars", 3, pl.UInt8), [256])
    with pytest.raises(ValueError, match="outside the range"):
        table(seeded()[0], int_frame("polars", 3, pl.UInt8), ["-1"])


def test_string_columns_take_strings_and_integers_as_their_text() -> None:
    frame = pl.DataFrame({"id": [0, 1], "g": ["10", "x"], "v": [1, 2]})
    got = table(seeded()[0], frame, [10, "x"])
    assert [row[0] for row in got.value] == ["10", "x"] and got.frame.schema["g"] == pl.String
    with pytest.raises(TypeError, match=r"public key 10\.0 is not a string, but group column 'g' holds strings"):
        table(seeded()[0], frame, [10.0])


def test_keys_that_convert_to_one_key_are_refused() -> None:
    with pytest.raises(ValueError, match="two public keys are the same key once converted"):
        table(seeded()[0], int_frame("polars", 3), [10, "10"])
    with pytest.raises(ValueError, match="the public keys repeat a key"):
        table(seeded()[0], int_frame("polars", 3), [10, 10.0])


def test_a_table_of_keys_is_converted_too() -> None:
    keys = pd.DataFrame({"g": ["10", "20"]})
    got = table(seeded()[0], int_frame("polars", 3), keys)
    assert got.value == table(seeded()[0], int_frame("polars", 3), [10, 20]).value


@pytest.mark.parametrize("make", [
    lambda keys: pd.DataFrame({"g": pd.Series(keys, dtype=object)}),
    lambda keys: pd.DataFrame({"g": keys}),
    lambda keys: pl.DataFrame({"g": keys}, strict=False),
    lambda keys: pl.DataFrame({"g": keys}, strict=False).lazy(),
    lambda keys: pl.DataFrame({"g": keys}, strict=False).to_arrow(),
], ids=["pandas object", "pandas", "polars", "lazy", "pyarrow"])
@pytest.mark.parametrize("keys", [[10, 20], [10.0, 20.0], ["10", "20"]], ids=["int", "float", "text"])
def test_a_table_of_public_keys_is_read_by_the_one_rule_of_keys(make: Any, keys: list[Any]) -> None:
    """A table of keys is read as every table is (securedp.reading): each key column by the rule of keys, so
    a key means the same whether it is given as a list or as any kind of table."""
    frame = pl.DataFrame({"id": [1, 2, 3], "g": [10, 20, 20], "v": [1, 2, 3]})
    session, _ = seeded()
    from_list = table(session, frame, [10, 20])
    session, _ = seeded()
    from_table = table(session, frame, make(keys))
    assert from_table.value == from_list.value


def test_a_table_of_public_keys_with_a_blank_key_is_refused_before_the_draw() -> None:
    session, _source = seeded()
    frame = pl.DataFrame({"id": [1], "g": ["a"], "v": [1]})
    with pytest.raises(ValueError, match="a public key has a missing value"):
        table(session, frame, pd.DataFrame({"g": ["a", " "]}))
    assert session.spent == 0


def test_keys_given_as_a_mapping_of_columns_are_a_table_of_keys_not_its_column_names() -> None:
    """``keys={"g": [10, 20]}`` is the table of keys 10 and 20; iterated as a sequence it was the one key ``"g"``
    (a table of one empty cell released silently)."""
    session, _ = seeded()
    released = table(session, int_frame("polars", 3), {"g": [10, 20]})
    assert [row[0] for row in released.value] == [10, 20]
    with pytest.raises(ValueError, match="lack the group_by"):
        table(session, int_frame("polars", 3), {"h": [10, 20]})
