"""Defect 6: a table or a 2-D array given to a column function is refused, never flattened.

``count(pandas.DataFrame(...))`` of 4 rows and 3 columns used to release 12 (with the sensitivity of
one row per person), and ``sum(np.ones((4, 3)), bounds=(0, 1))`` released 12. Every entry point that
reads one column (count, sum, mean, variance, histogram over categories or bins, median, quantile,
quantiles, ``Lattice.clamp_units``, and the ``data``, ``by`` and ``ids`` of ``Session.partition``, and
``ids=`` of every release) must raise a ``TypeError`` saying to pass one column, before anything is
charged or drawn, in both error modes. Tables are recognised by duck typing: fake polars and pyarrow
objects stand in for the libraries when they are not installed (the real ones are tried too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import securedp
from securedp import ChaChaSource, Session

pd = pytest.importorskip("pandas")


class FakePolarsDataFrame:
    """What ``as_records`` may see of a polars DataFrame: ``shape``, ``columns``, ``to_numpy`` (2-D)."""

    def __init__(self, rows: int, cols: int) -> None:
        self._values = np.ones((rows, cols))

    @property
    def shape(self) -> tuple[int, int]:
        return self._values.shape

    @property
    def columns(self) -> list[str]:
        return [f"c{i}" for i in range(self._values.shape[1])]

    def to_numpy(self) -> np.ndarray:
        return self._values

    def __iter__(self) -> Any:  # polars iterates over columns
        return iter(self._values.T)


class FakeArrowTable:
    """What ``as_records`` may see of a pyarrow Table: ``column_names``, ``num_columns``, ``to_pylist`` (dicts)."""

    def __init__(self, rows: int, cols: int) -> None:
        self._rows, self._cols = rows, cols

    @property
    def column_names(self) -> list[str]:
        return [f"c{i}" for i in range(self._cols)]

    @property
    def num_columns(self) -> int:
        return self._cols

    @property
    def shape(self) -> tuple[int, int]:
        return (self._rows, self._cols)

    def to_pylist(self) -> list[dict[str, float]]:
        return [dict.fromkeys(self.column_names, 1.0) for _ in range(self._rows)]

    def __len__(self) -> int:
        return self._rows


def tables(rows: int = 4) -> list[tuple[str, Any]]:
    """Tables and 2-D arrays of ``rows`` rows: refused whatever the error mode."""
    found = [
        ("DataFrame", pd.DataFrame({"a": np.arange(rows), "b": np.ones(rows), "c": np.zeros(rows)})),
        ("DataFrame-1-column", pd.DataFrame({"a": np.ones(rows)})),
        ("ndarray-2d", np.ones((rows, 3))),
        ("ndarray-column-vector", np.ones((rows, 1))),
        ("ndarray-3d", np.ones((rows, 2, 2))),
        ("ndarray-0d", np.array(1.0)),
        ("numpy-scalar", np.float64(1.0)),
        ("memoryview-2d", memoryview(np.ones((rows, 3)))),
        ("dict-of-columns", {"a": [1.0] * rows, "b": [2.0] * rows}),
        ("polars-like", FakePolarsDataFrame(rows, 3)),
        ("arrow-like", FakeArrowTable(rows, 3)),
    ]
    try:
        import polars

        found.append(("polars", polars.DataFrame({"a": [1.0] * rows, "b": [2.0] * rows})))
    except ImportError:
        pass
    try:
        import pyarrow

        found.append(("pyarrow", pyarrow.table({"a": [1.0] * rows, "b": [2.0] * rows})))
    except ImportError:
        pass
    return found


def row_lists(rows: int = 4) -> list[tuple[str, Callable[[], Any]]]:
    """Lists whose records are rows (made fresh by each factory): refused by the data holder's mode."""
    return [
        ("list-of-lists", lambda: [[1.0, 2.0, 3.0] for _ in range(rows)]),
        ("list-of-tuples", lambda: [(1.0, 2.0, 3.0) for _ in range(rows)]),
        ("object-series-of-tuples", lambda: pd.Series([(1.0, 2.0)] * rows)),
        ("generator-of-rows", lambda: ((1.0, 2.0) for _ in range(rows))),
        ("list-of-arrays", lambda: [np.ones(3) for _ in range(rows)]),
        ("numbers-then-a-row", lambda: [1.0, 2.0, 3.0, (1.0, 2.0)]),
    ]


# Every column-reading entry point, as f(session or None, data) -> release or parts.
ENTRY_POINTS: dict[str, Callable[[Any, Any], Any]] = {
    "count": lambda s, d: (s or securedp).count(d, epsilon="1/4"),
    "sum": lambda s, d: (s or securedp).sum(d, bounds=(0, 1), epsilon="1/4"),
    "mean": lambda s, d: (s or securedp).mean(d, bounds=(0, 1), epsilon="1/4"),
    "variance": lambda s, d: (s or securedp).variance(d, bounds=(0, 1), epsilon="1/4"),
    "histogram-categories": lambda s, d: (s or securedp).histogram(d, categories=[0.0, 1.0], epsilon="1/4"),
    "histogram-bins": lambda s, d: (s or securedp).histogram(d, bins=[0, "1/2", 1], epsilon="1/4"),
    "median": lambda s, d: (s or securedp).median(d, bounds=(0, 1), epsilon="1/4"),
    "quantile": lambda s, d: (s or securedp).quantile(d, "1/4", bounds=(0, 1), epsilon="1/4"),
    "quantiles": lambda s, d: (s or securedp).quantiles(d, ["1/4", "3/4"], bounds=(0, 1), epsilon="1/4"),
    "partition-data": lambda s, d: (s or Session(epsilon=1)).partition(d, by=["a"] * 4, parts=["a"], budget="1/4"),
}
SESSION_ONLY = {"partition-data"}
ONE_COLUMN = ("one column", "single column")


def assert_one_column_error(call: Callable[[], Any], name: str = "data") -> TypeError:
    with pytest.raises(TypeError) as info:
        call()
    assert isinstance(info.value, ValueError)  # NotOneColumnError: either except clause catches it
    message = str(info.value)
    assert message.startswith((name, f"column {name!r}")) and any(k in message for k in ONE_COLUMN), message
    assert "\n" not in message
    return info.value


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize(("kind", "table"), tables(), ids=[k for k, _ in tables()])
@pytest.mark.parametrize("analyst_facing", [False, True], ids=["data-holder", "analyst"])
def test_tables_are_refused_by_every_entry_point_before_any_charge(entry: str, kind: str, table: Any,
                                                                   analyst_facing: bool) -> None:
    source = ChaChaSource(bytes(32))
    log: list[dict[str, Any]] = []
    session = Session(epsilon=1, rng=source, audit=log, analyst_facing=analyst_facing)
    assert_one_column_error(lambda: ENTRY_POINTS[entry](session, table))
    assert session.spent == 0 and source.bytes_served == 0 and log == []
    if entry not in SESSION_ONLY:
        assert_one_column_error(lambda: ENTRY_POINTS[entry](None, table))


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
@pytest.mark.parametrize(("kind", "rows"), row_lists(), ids=[k for k, _ in row_lists()])
def test_lists_of_rows_are_refused_by_the_data_holders_mode(entry: str, kind: str,
                                                            rows: Callable[[], Any]) -> None:
    source = ChaChaSource(bytes(32))
    session = Session(epsilon=1, rng=source)
    if entry == "count":  # a count reads no value: it counts the records, rows or not (nothing is flattened)
        assert session.count(rows(), epsilon="1/4").value is not None
        return
    if entry == "histogram-categories":  # a tuple matches no scalar category: the unknown-value error says why
        with pytest.raises(ValueError, match="rows of a table"):
            ENTRY_POINTS[entry](session, rows())
    else:
        error = assert_one_column_error(lambda: ENTRY_POINTS[entry](session, rows()))
        assert "rows of a table" in str(error)
    assert session.spent == 0 and source.bytes_served == 0


@pytest.mark.parametrize("missing", ["drop", "impute"])
def test_rows_are_refused_whatever_the_missing_policy(missing: str) -> None:
    fill = 0 if missing == "impute" else None
    assert_one_column_error(lambda: securedp.sum([(1, 2)] * 4, bounds=(0, 1), epsilon=1, missing=missing, fill=fill))


def test_the_reported_examples() -> None:
    df = pd.DataFrame({"a": [1, 2, 3, 4], "b": [5, 6, 7, 8], "c": [9, 10, 11, 12]})
    assert_one_column_error(lambda: securedp.count(df, epsilon=1))
    assert_one_column_error(lambda: securedp.sum(np.ones((4, 3)), bounds=(0, 1), epsilon=1))
    error = assert_one_column_error(lambda: securedp.count(df, epsilon=1))
    assert 'df["col"]' in str(error) and "grouped" in str(error)
    # what to pass instead works
    assert securedp.count(df["a"], epsilon=10**6, rng=ChaChaSource(bytes(32))).value == 4
    assert securedp.sum(np.ones((4, 3))[:, 0], bounds=(0, 1), epsilon=10**6, lattice=1,
                        rng=ChaChaSource(bytes(32))).value == 4


def test_the_message_never_gives_the_number_of_rows() -> None:
    """A table's row count is private: two tables of different lengths give the same message."""
    for (_, small), (_, large) in zip(tables(4), tables(7), strict=True):
        messages = []
        for table in (small, large):
            session = Session(epsilon=1, analyst_facing=True)
            with pytest.raises(TypeError) as info:
                session.sum(table, bounds=(0, 1), epsilon="1/4")
            messages.append(str(info.value))
            assert any(k in messages[-1] for k in ONE_COLUMN)
        assert messages[0] == messages[1]


@pytest.mark.parametrize(("kind", "table"), tables(), ids=[k for k, _ in tables()])
def test_ids_and_by_must_be_one_column(kind: str, table: Any) -> None:
    session = Session(epsilon=1)
    assert_one_column_error(lambda: securedp.count([1, 2, 3, 4], ids=table, epsilon=1), "ids")
    assert_one_column_error(lambda: securedp.sum([1, 2, 3, 4], bounds=(0, 1), ids=table, epsilon=1), "ids")
    assert_one_column_error(lambda: session.partition([1, 2, 3, 4], by=table, parts=["a"], budget="1/2"), "by")
    assert_one_column_error(
        lambda: session.partition([1, 2, 3, 4], by=list("aaaa"), parts=["a"], budget="1/2", ids=table), "ids")
    assert session.spent == 0


def test_lattice_clamp_units_reads_one_column() -> None:
    assert_one_column_error(lambda: securedp.Lattice(1).clamp_units(np.ones((4, 3)), 0, 5))
    assert_one_column_error(lambda: securedp.Lattice(1).clamp_units([(1, 2)], 0, 5, missing="drop"))


def test_one_column_forms_are_still_accepted() -> None:
    """Series, 1-D arrays, lists, generators, 1-D memoryviews, and a Series indexed by the word 'columns'."""
    expected = securedp.sum([1.0, 2.0, 3.0], bounds=(0, 5), epsilon=1, lattice=1, rng=ChaChaSource(bytes(32))).value
    forms = [
        pd.Series([1.0, 2.0, 3.0]),
        pd.Series([1.0, 2.0, 3.0], index=["columns", "num_columns", "shape"]),
        np.array([1.0, 2.0, 3.0]),
        (x for x in (1.0, 2.0, 3.0)),
        memoryview(np.array([1.0, 2.0, 3.0])),
        pd.DataFrame({"v": [1.0, 2.0, 3.0]})["v"],
    ]
    for form in forms:
        got = securedp.sum(form, bounds=(0, 5), epsilon=1, lattice=1, rng=ChaChaSource(bytes(32))).value
        assert got == expected


class FakeArrowArray:
    """A pyarrow Array as ``as_records`` sees it: ``to_pylist`` (exact values, None for a null)."""

    def __init__(self, values: list[Any]) -> None:
        self._values = values

    def to_pylist(self) -> list[Any]:
        return list(self._values)

    def to_numpy(self) -> np.ndarray:  # pyarrow's default zero_copy_only=True refuses nulls
        if any(v is None for v in self._values):
            raise ValueError("zero-copy conversion is not possible with nulls")
        return np.array(self._values)


def test_an_arrow_column_with_nulls_is_read_exactly() -> None:
    column = FakeArrowArray([1, None, 3])
    with pytest.raises(ValueError, match="column 'data', row 1: blank cell"):
        securedp.sum(column, bounds=(0, 5), epsilon=1)
    got = securedp.sum(column, bounds=(0, 5), epsilon=1, lattice=1, missing="drop", rng=ChaChaSource(bytes(32)))
    assert got.value == securedp.sum([1, 3], bounds=(0, 5), epsilon=1, lattice=1, rng=ChaChaSource(bytes(32))).value


# --- histograms over tuple categories: a column of tuples, never a flattened table -----------------


def test_tuple_categories_count_tuple_records() -> None:
    rows = [("north", 2024), ("south", 2024), ("north", 2024), ("north", 2025)]
    labels = [("north", 2024), ("north", 2025), ("south", 2024)]
    huge = 10**9
    release = securedp.histogram(rows, categories=labels, epsilon=huge, rng=ChaChaSource(bytes(32)))
    reference = securedp.histogram(["n24", "s24", "n24", "n25"], categories=["n24", "n25", "s24"], epsilon=huge,
                                   rng=ChaChaSource(bytes(32)))
    assert release.value == reference.value and release.labels == tuple(labels)
    series = pd.Series(rows)  # an object Series of tuples is one column too
    assert securedp.histogram(series, categories=labels, epsilon=huge, rng=ChaChaSource(bytes(32))).value == \
        reference.value


def test_tuple_categories_do_not_admit_a_2d_array() -> None:
    error = assert_one_column_error(
        lambda: securedp.histogram(np.array([[1, 2], [1, 2]]), categories=[(1, 2)], epsilon=1))
    assert "list(zip(" in str(error)


def test_scalar_categories_with_tuple_records_say_the_data_is_a_table() -> None:
    with pytest.raises(ValueError, match="rows of a table"):
        securedp.histogram([(1, 2), (3, 4)], categories=[1, 2, 3, 4], epsilon=1)
