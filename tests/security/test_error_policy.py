"""One error policy: in an analyst-facing session no exception that depends on the data escapes.

Two kinds of test:

* **The boundary** (:mod:`securedp.session.boundary`): for every release path, data whose reading
  raises an exception carrying a secret makes an analyst-facing release raise ``DataRefused`` with its
  one fixed message, no cause and no context, nothing charged; the data holder's mode lets the
  original through (the leaky control: without the boundary the secret escapes). Public arguments
  are checked before the data is read, so their errors are still specific.
* **Differential** (the class's proof): hypothesis builds neighbouring datasets (one person's rows
  added or removed, with nulls, NaN, huge numbers, strings in numeric columns, Fraction and Decimal
  beside floats, a blank or missing id that turns a pandas column's dtype) and asserts that both
  neighbours give the same outcome class: released, or the same exception type and message.
  A fixed profile (``derandomize=True``, bounded ``max_examples``) keeps it deterministic and fast.

Where neighbours still differ because of a reader defect another helper of issue 16 is fixing, the
minimal example is an ``xfail(strict=True)`` below, naming the item: remove the mark once it is fixed.
"""

from __future__ import annotations

import decimal
import functools
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from _hostile import outcome
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from securedp import ChaChaSource, DataRefused, Session
from securedp.ledger.errors import DATA_REFUSED
from securedp.tables import Count, Mean, Sum

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")

SEED = bytes(range(32))
PROFILE = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def session(analyst_facing: bool = True) -> Session:
    return Session(epsilon=100, delta="1/1000", rng=ChaChaSource(SEED), analyst_facing=analyst_facing)


# --- the boundary ------------------------------------------------------------------------------------

SECRET = "secret value 4242 in row 17"


class Exploding:
    """A column whose reading raises an exception quoting a secret (a stand-in for any reader's failure)."""

    def __iter__(self) -> Any:
        raise RuntimeError(SECRET)

    def __len__(self) -> int:
        return 3


class ExplodingIterator:
    """An iterator over the exploding column (no length: a count must read it to count its rows)."""

    def __init__(self, column: Exploding) -> None:
        self.column = column

    def __iter__(self) -> Any:
        return iter(self.column)


class ExplodingFrame(pd.DataFrame):
    """A pandas table whose id column cannot be read: taking it raises quoting the secret (a cell cannot:
    every cell of an id column gets a verdict of its own, :mod:`securedp.reading.keys`)."""

    @property
    def _constructor(self) -> type:
        return ExplodingFrame

    def __getitem__(self, key: Any) -> Any:
        if key == "id":
            raise RuntimeError(SECRET)
        return super().__getitem__(key)


def exploding_table() -> Any:
    """A table whose person ids explode when read."""
    return ExplodingFrame({"id": [1, 2, 3], "g": ["a", "b", "a"], "v": [1, 2, 2]})


RELEASES: dict[str, Callable[[Session, Any], Any]] = {
    "count": lambda s, d: s.count(ExplodingIterator(d), epsilon=1),  # a count reads rows it cannot measure
    "count:ids": lambda s, d: s.count([1, 2, 3], ids=d, epsilon=1),
    "sum": lambda s, d: s.sum(d, bounds=(0, 5), epsilon=1),
    "mean": lambda s, d: s.mean(d, bounds=(0, 5), epsilon=1),
    "variance": lambda s, d: s.variance(d, bounds=(0, 5), epsilon=1),
    "median": lambda s, d: s.median(d, bounds=(0, 5), epsilon=1),
    "quantile": lambda s, d: s.quantile(d, "1/4", bounds=(0, 5), epsilon=1),
    "quantiles": lambda s, d: s.quantiles(d, ["1/4", "3/4"], bounds=(0, 5), epsilon=1),
    "iqr": lambda s, d: s.iqr(d, bounds=(0, 5), epsilon=1),
    "trimmed_mean": lambda s, d: s.trimmed_mean(d, bounds=(0, 5), epsilon=1),
    "histogram:categories": lambda s, d: s.histogram(d, categories=["a"], epsilon=1),
    "histogram:bins": lambda s, d: s.histogram(d, bins=[0, 2, 5], epsilon=1),
    "exponential_mechanism": lambda s, d: s.exponential_mechanism(d, epsilon=1, sensitivity=1),
    "report_noisy_max": lambda s, d: s.report_noisy_max(d, epsilon=1, sensitivity=1),
    "permute_and_flip": lambda s, d: s.permute_and_flip(d, epsilon=1, sensitivity=1),
    "exponential_mechanism:utility": lambda s, d: s.exponential_mechanism(
        lambda data, c: next(iter(data)), candidates=["a", "b"], epsilon=1, sensitivity=1, data=d),
    "partition": lambda s, d: s.partition(d, by=["a"] * 3, parts=["a"], budget=1),
    "partition:by": lambda s, d: s.partition([1, 2, 3], by=d, parts=["a"], budget=1),
    "table:public": lambda s, d: s.table(exploding_table(), group_by=["g"], keys=["a", "b"], id_column="id",
                                         aggregations=[Count(), Sum("v", (0, 5))], epsilon=1),
    "table:private": lambda s, d: s.table(exploding_table(), group_by=["g"], id_column="id", delta="1/10000",
                                          aggregations=[Sum("v", (0, 5))], epsilon=1),
}


def test_every_session_release_path_is_covered() -> None:
    releases = {name for name, value in vars(Session).items() if str(getattr(value, "__doc__", "")).startswith(
        f":func:`securedp.{name}`, charged to this session")}
    assert len(releases) == 14 and {name.split(":")[0] for name in RELEASES} == releases | {"partition"}


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_a_reading_failure_becomes_one_fixed_error_in_an_analyst_facing_session(release: str) -> None:
    guarded = session()
    with pytest.raises(DataRefused) as info:
        RELEASES[release](guarded, Exploding())
    error = info.value
    assert str(error) == DATA_REFUSED and SECRET not in repr(error)
    assert error.__cause__ is None and error.__context__ is None  # nothing of the original is attached
    assert guarded.spent == 0
    # the leaky control: the data holder's mode lets the original through, secret and all
    with pytest.raises(Exception) as shown:
        RELEASES[release](session(analyst_facing=False), Exploding())
    assert not isinstance(shown.value, DataRefused)


PUBLIC_ERRORS: dict[str, Callable[[Session], Any]] = {
    "epsilon": lambda s: s.sum(Exploding(), bounds=(0, 5), epsilon=-1),
    "bounds": lambda s: s.mean(Exploding(), bounds=(5, 0), epsilon=1),
    "missing-policy": lambda s: s.sum(Exploding(), bounds=(0, 5), epsilon=1, missing="ignore"),
    "fill": lambda s: s.sum(Exploding(), bounds=(0, 5), epsilon=1, missing="impute"),
    "bins": lambda s: s.histogram(Exploding(), bins=[2, 1], epsilon=1),
    "bins-missing-policy": lambda s: s.histogram(Exploding(), bins=[0, 1], epsilon=1, missing="ignore"),
    "sensitivity": lambda s: s.exponential_mechanism(Exploding(), epsilon=1, sensitivity=0),
    "utility-without-candidates": lambda s: s.exponential_mechanism(lambda d, c: 0, epsilon=1, sensitivity=1,
                                                                    data=Exploding()),
    "partition-keys": lambda s: s.partition(Exploding(), by=Exploding(), parts=["a", "a"], budget=1),
    "table-delta": lambda s: s.table(exploding_table(), group_by=["g"], aggregations=[Count()], epsilon=1),
    "table-table-missing": lambda s: s.table(exploding_table(), group_by=["g"], keys=["a"], epsilon=1,
                                             aggregations=[Sum("v", (0, 5))], missing="ignore"),
    "table-shares": lambda s: s.table(exploding_table(), group_by=["g"], keys=["a"], epsilon=1,
                                      aggregations=[Count(share="1/2"), Mean("v", (0, 5), share="1/3")]),
    "one-column-shape": lambda s: s.count(pd.DataFrame({"a": [1], "b": [2]}), epsilon=1),
    "ids-length": lambda s: s.count([1, 2], ids=[1, 2, 3], epsilon=1),
}


@pytest.mark.parametrize("case", sorted(PUBLIC_ERRORS))
def test_public_argument_errors_are_checked_before_the_data_and_stay_specific(case: str) -> None:
    """The data would explode if read: the specific error proves it was raised before any data was read."""
    guarded, holder = session(), session(analyst_facing=False)
    seen = outcome(lambda: PUBLIC_ERRORS[case](guarded))
    assert seen[0] != "released" and seen[0] != "DataRefused" and SECRET not in seen[1], seen
    if case != "ids-length":  # the analyst's length error counts no rows; the holder's does
        assert seen == outcome(lambda: PUBLIC_ERRORS[case](holder))


# --- differential: neighbouring datasets give the same outcome class --------------------------------

CELL = st.one_of(
    st.integers(-2, 7),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([None, float("nan"), 10**400, -(10**400), 2**64, "x", "HIV+", "", " ", "7", "2.5",
                     Fraction(7, 2), decimal.Decimal("2.5"), decimal.Decimal("NaN"), np.float32(1.5)]),
)
SAFE_CELL = st.one_of(st.integers(-2, 7), st.sampled_from([0.5, 4.5, None, float("nan"), "x", "3"]))
BLANK_IDS = [None, float("nan"), "", " "]


@st.composite
def neighbours(draw: st.DrawFn, cells: st.SearchStrategy[Any]) -> tuple[Any, ...]:
    """``(rows with the extra person, rows without, int keys?)``; rows are ``(id, key, value)``."""
    int_keys = draw(st.booleans())
    key = st.sampled_from([1, 2, 3]) if int_keys else st.sampled_from(["a", "b", "c"])
    odd_key = st.one_of(key, st.sampled_from([None, "", " "] if not int_keys else [None]))
    persons = draw(st.integers(0, 4))
    base = [(pid, draw(key), draw(SAFE_CELL)) for pid in range(persons) for _ in range(draw(st.integers(1, 2)))]
    extra_id = draw(st.one_of(st.just(persons), st.sampled_from(BLANK_IDS)))
    extra = [(extra_id, draw(odd_key), draw(cells)) for _ in range(draw(st.integers(1, 3)))]
    where = draw(st.integers(0, len(base)))
    return base[:where] + extra + base[where:], base, int_keys


def columns(rows: list[tuple[Any, Any, Any]]) -> tuple[list[Any], list[Any], list[Any]]:
    ids, keys, values = ([r[i] for r in rows] for i in range(3))
    return ids, keys, values


ONE_COLUMN: dict[str, Callable[[Session, Any, Any], Any]] = {
    "count": lambda s, d, i: s.count(d, ids=i, epsilon=1),
    "sum": lambda s, d, i: s.sum(d, bounds=(0, 5), ids=i, max_contributions=2, epsilon=1),
    "mean": lambda s, d, i: s.mean(d, bounds=(0, 5), ids=i, epsilon=1),
    "median": lambda s, d, i: s.median(d, bounds=(0, 5), ids=i, epsilon=1),
    "histogram": lambda s, d, i: s.histogram(d, bins=[0, 2, 5], ids=i, epsilon=1),
    "categories": lambda s, d, i: s.histogram(d, categories=["x", 1], ids=i, epsilon=1),
}


def pandas_series(values: list[Any]) -> Any:
    """The Series pandas makes of ``values``; object where pandas < 3 cannot infer (an int beyond float range)."""
    try:
        return pd.Series(values)
    except OverflowError:
        return pd.Series(values, dtype=object)


def one_column_outcomes(rows: list[tuple[Any, Any, Any]], kind: str) -> dict[str, tuple[str, ...]]:
    ids, _, values = columns(rows)
    data: Any = values
    id_column: Any = ids
    if kind == "pandas":
        data, id_column = pandas_series(values), pandas_series(ids)  # pandas chooses (float64 with a NaN ...)
    elif kind == "numpy":
        data, id_column = np.array(values, dtype=object), np.array(ids, dtype=object)
    return {name: outcome(functools.partial(f, session(), data, id_column)) for name, f in ONE_COLUMN.items()}


@PROFILE
@given(pair=neighbours(CELL), kind=st.sampled_from(["list", "numpy", "pandas"]))
def test_one_column_releases_of_neighbours_have_the_same_outcome_class(pair: tuple[Any, ...], kind: str) -> None:
    with_person, without, _ = pair
    if kind == "pandas" and all(isinstance(v, bool) for v in columns(without)[2]) and columns(without)[2]:
        return  # an all-bool pandas column: see test_reader_defects (bool dtype)
    assert one_column_outcomes(with_person, kind) == one_column_outcomes(without, kind)


def table_outcomes(frame: Any, int_keys: bool, keys_as_text: bool) -> dict[str, tuple[str, ...]]:
    public = (["1", "2"] if keys_as_text else [1, 2]) if int_keys else ["a", "b"]
    aggregations = [Count(), Sum("v", (0, 5))]
    common: dict[str, Any] = {"group_by": ["g"], "aggregations": aggregations, "id_column": "id", "max_rows": 2,
                              "epsilon": 1}
    return {
        "public": outcome(lambda: session().table(frame, keys=public, **common)),
        "private": outcome(lambda: session().table(frame, delta="1/100000", **common)),
    }


def polars_frame(rows: list[tuple[Any, Any, Any]], int_keys: bool) -> Any:
    """A Polars table the way a loader builds one: typed columns with nulls; values read as text."""
    ids, keys, values = columns(rows)
    id_series = pl.Series("id", [None if not isinstance(i, int) else i for i in ids], dtype=pl.Int64)
    key_series = pl.Series("g", keys, dtype=pl.Int64 if int_keys else pl.String)
    value_series = pl.Series("v", [None if v is None else str(v) for v in values], dtype=pl.String)
    return pl.DataFrame([id_series, key_series, value_series])


@pytest.mark.slow
@PROFILE
@given(pair=neighbours(CELL), keys_as_text=st.booleans())
def test_polars_tables_of_neighbours_have_the_same_outcome_class(pair: tuple[Any, ...], keys_as_text: bool) -> None:
    with_person, without, int_keys = pair
    assert (table_outcomes(polars_frame(with_person, int_keys), int_keys, keys_as_text)
            == table_outcomes(polars_frame(without, int_keys), int_keys, keys_as_text))


def pandas_frame(rows: list[tuple[Any, Any, Any]]) -> Any:
    ids, keys, values = columns(rows)
    return pd.DataFrame({"id": pandas_series(ids), "g": pandas_series(keys), "v": pandas_series(values)})


@pytest.mark.slow
@PROFILE
@given(pair=neighbours(SAFE_CELL), keys_as_text=st.booleans())
def test_pandas_tables_of_neighbours_have_the_same_outcome_class(pair: tuple[Any, ...], keys_as_text: bool) -> None:
    with_person, without, int_keys = pair
    assert (table_outcomes(pandas_frame(with_person), int_keys, keys_as_text)
            == table_outcomes(pandas_frame(without), int_keys, keys_as_text))


# The minimal neighbour pairs that still differ because of a reader defect (each: with, without the person).
READER_DEFECTS = {
    "item-7-missing-id-makes-float64-ids": (
        pandas_frame([(0, "a", 1), (None, "a", 2)]), pandas_frame([(0, "a", 1)])),
    "item-7-empty-frame-has-float64-keys": (pandas_frame([(0, "a", 1)]), pandas_frame([])),
    "item-9-string-in-a-numeric-object-column": (
        pandas_frame([(0, "a", 1.5), (1, "a", "x")]), pandas_frame([(0, "a", 1.5)])),
    "item-10-huge-int-in-an-object-column": (
        pandas_frame([(0, "a", 1.5), (1, "a", 10**400)]), pandas_frame([(0, "a", 1.5)])),
    "item-10-fraction-beside-floats": (
        pandas_frame([(0, "a", 1.5), (1, "a", Fraction(1, 3))]), pandas_frame([(0, "a", 1.5)])),
}



@pytest.mark.parametrize("case", sorted(READER_DEFECTS))
def test_reader_defects_still_give_neighbours_different_outcomes(case: str) -> None:
    with_person, without = READER_DEFECTS[case]
    assert table_outcomes(with_person, False, False) == table_outcomes(without, False, False)


def test_reader_defect_bool_dtype_one_column() -> None:
    assert one_column_outcomes([(0, "a", True)], "pandas") == one_column_outcomes([(0, "a", True), (1, "a", 1)],
                                                                                    "pandas")
