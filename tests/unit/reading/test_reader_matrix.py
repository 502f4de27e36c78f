"""The one exact reader: every input kind x dtype x null pattern reaches the same exact values (issue 16).

The reference is computed with Python ints and Fractions from the source values. Each column is read
as a one-column release (its records, screened onto the lattice) and as the value column of a one-cell
table (its noise-free sum, at an epsilon so large that the noise is zero except with probability below
``2 exp(-10**21)``); both must equal the reference. Items 2 and 3 (a nullable integer column read
through float64), 9 (the whole pandas frame converted) and 10 (10**400, 2**64, a Fraction or a Decimal
in an object column) each failed on the old reader.
"""

from __future__ import annotations

import decimal
import itertools
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import securedp
from securedp import ChaChaSource
from securedp.lattice import screen_units
from securedp.lattice.columns import as_records
from securedp.tables import Sum

BIG = 2**53 + 1  # not a float64: a converter through float64 moves it
BOUNDS = (-(2**61), 2**61)  # tables take bounds below 2**62 units

VALUES: dict[str, list[Any]] = {
    "int64": [BIG, 5, -3, 2**62 - 7],
    "int8": [1, -2, 3, 4],
    "uint64": [2**63 + 11, 5, 0, 2**64 - 1],
    "float64": [0.5, 2.0**60, -1.25, 3.0],
    "float32": [0.5, 1.5, -2.25, 8.0],
}
NULLS: dict[str, Callable[[int], list[bool]]] = {
    "none": lambda n: [False] * n,
    "one": lambda n: [i == 1 for i in range(n)],
    "leading": lambda n: [i == 0 for i in range(n)],
    "trailing": lambda n: [i == n - 1 for i in range(n)],
    "all": lambda n: [True] * n,
}


def _expected(values: list[Any], nulls: list[bool]) -> list[int]:
    lo, hi = BOUNDS
    return [min(max(round(Fraction(v)), lo), hi) for v, null in zip(values, nulls, strict=True) if not null]


def _column(kind: str, dtype: str, values: list[Any], nulls: list[bool]) -> Any:
    cells = [None if null else v for v, null in zip(values, nulls, strict=True)]
    has_null = any(nulls)
    if kind == "numpy":
        if has_null:
            return np.array(cells, dtype=object)
        return np.array(values, dtype=dtype)
    if kind == "pandas-numpy":
        return pd.Series(values, dtype=dtype) if not has_null else pd.Series(cells, dtype=object)
    if kind == "pandas-nullable":
        nullable = {"int64": "Int64", "int8": "Int8", "uint64": "UInt64", "float64": "Float64", "float32": "Float32"}
        return pd.Series(cells, dtype=nullable[dtype])
    if kind in ("pandas-array", "pandas-index"):  # not a Series: their own to_numpy() gave float64 with a null
        nullable = {"int64": "Int64", "int8": "Int8", "uint64": "UInt64", "float64": "Float64", "float32": "Float32"}
        return (pd.array if kind == "pandas-array" else pd.Index)(cells, dtype=nullable[dtype])
    if kind == "pandas-arrow":
        return pd.Series(cells, dtype=pd.ArrowDtype(pa.from_numpy_dtype(np.dtype(dtype))))
    if kind == "polars":
        types = {"int64": pl.Int64, "int8": pl.Int8, "uint64": pl.UInt64, "float64": pl.Float64, "float32": pl.Float32}
        return pl.Series("v", cells, dtype=types[dtype])
    if kind == "pyarrow":
        return pa.array(cells, type=pa.from_numpy_dtype(np.dtype(dtype)))
    if kind == "pyarrow-chunked":
        array = pa.array(cells, type=pa.from_numpy_dtype(np.dtype(dtype)))
        return pa.chunked_array([array.slice(0, 2), array.slice(2)])
    assert kind == "list"
    return cells


KINDS = ["list", "numpy", "pandas-numpy", "pandas-nullable", "pandas-array", "pandas-index", "pandas-arrow", "polars",
         "pyarrow", "pyarrow-chunked"]
MATRIX = list(itertools.product(KINDS, VALUES, NULLS))


@pytest.mark.parametrize(("kind", "dtype", "nulls"), MATRIX)
def test_one_column_reads_every_kind_exactly(kind: str, dtype: str, nulls: str) -> None:
    values = VALUES[dtype]
    mask = NULLS[nulls](len(values))
    records = as_records(_column(kind, dtype, values, mask))
    units, kept = screen_units(records, Fraction(1), *BOUNDS, missing="drop")
    assert [int(u) for u in units] == _expected(values, mask)
    assert kept is None or kept.tolist() == [not m for m in mask]


def _table(kind: str, column: Any, n: int) -> Any:
    ids = list(range(n))
    if kind in ("pandas-array", "pandas-index"):  # a mapping of columns: the array reaches the reader as it is
        return {"p": ids, "v": column}
    if kind.startswith("pandas"):
        return pd.DataFrame({"p": ids, "v": column, "unused": ["x", 1.5, None, object()][:n]})
    if kind == "polars":
        return pl.DataFrame({"p": ids, "v": column})
    if kind.startswith("pyarrow"):
        return pa.table({"p": pa.array(ids), "v": column})
    return None


def _one_cell_sum(data: Any) -> Any:
    release = securedp.prepare_table(data, id_column="p", epsilon=10**40, aggregations=[Sum("v", BOUNDS, lattice=1)],
                                     missing="drop").execute(ChaChaSource(bytes(32)))
    return release.value[0][0]


@pytest.mark.parametrize(("kind", "dtype", "nulls"), [m for m in MATRIX if m[0] not in ("list", "numpy")])
def test_a_table_column_reads_every_kind_exactly(kind: str, dtype: str, nulls: str) -> None:
    values = VALUES[dtype]
    mask = NULLS[nulls](len(values))
    data = _table(kind, _column(kind, dtype, values, mask), len(values))
    assert _one_cell_sum(data) == sum(_expected(values, mask))


def test_item_2_a_null_does_not_move_other_values_in_a_table() -> None:
    frame = pl.DataFrame({"p": [1, 2, 3], "v": pl.Series([BIG, 5, None], dtype=pl.Int64)})
    assert _one_cell_sum(frame) == BIG + 5  # was 2**53 + 5: BIG read through float64


def test_item_3_a_nullable_pandas_column_is_read_exactly_in_one_column_releases() -> None:
    series = pd.Series([BIG, 5, None], dtype="Int64")
    units, _ = screen_units(as_records(series), Fraction(1), *BOUNDS, missing="drop")
    assert units.tolist() == [BIG, 5]


def test_item_9_a_column_the_release_does_not_name_is_never_converted() -> None:
    frame = pd.DataFrame({"p": [1, 2], "v": [1, 2], "notes": [object(), "HIV+"]})
    frame["bytes"] = [b"\xff", 1.5]
    assert _one_cell_sum(frame) == 3


@pytest.mark.parametrize("odd", [10**400, -(10**400), 2**64, Fraction(1, 3), decimal.Decimal("2.5"), "7", "HIV+"])
def test_item_10_an_object_column_is_read_record_by_record_as_one_column_releases_read_it(odd: Any) -> None:
    frame = pd.DataFrame({"p": [1, 2, 3], "v": pd.Series([1.5, odd, 2.0], dtype=object)})
    units, _ = screen_units(as_records(frame["v"]), Fraction(1), *BOUNDS, missing="drop")
    assert _one_cell_sum(frame) == sum(int(u) for u in units)  # a table and a one-column release agree
