"""Issue 28.8: a table's frame is exact (pandas: ``object`` columns of ``Decimal``, or ``"num/den"`` text);
``TableRelease.float_frame()`` is the same table with every released number as ``float64``, for plotting."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import securedp
from securedp.cli.example_data import PATH
from securedp.tables import Count, Mean, Sum

VISITS = pd.read_csv(PATH)
AGGREGATIONS = [Count(), Mean("income", (0, 200_000)), Sum("hours", (0, 80), lattice="1/3")]


def release(data: object, **options: object) -> securedp.tables.TableRelease:
    return securedp.table(data, group_by=["region"], id_column="person_id", max_rows=2, aggregations=AGGREGATIONS,
                          epsilon=1, rng=securedp.ChaChaSource(bytes(32)), **options)


def test_a_pandas_frame_is_exact_and_its_float_view_is_float64() -> None:
    table = release(VISITS, keys=["north", "south", "east", "west"])
    exact = table.frame
    assert exact["income_mean"].dtype == object and isinstance(exact["income_mean"][0], Decimal)
    assert exact["hours_sum"][0] == "/".join(map(str, table.value[0][7].as_integer_ratio()))  # a 1/3 lattice
    floats = table.float_frame()
    assert list(floats.columns) == list(exact.columns) and floats["region"].tolist() == exact["region"].tolist()
    numbers = [c for c in floats.columns if c != "region"]
    assert all(floats[c].dtype == np.float64 for c in numbers)
    for i, row in enumerate(table.value):
        assert [floats[c][i] for c in numbers] == [float(v) for v in row[1:]]
    assert exact["income_mean"].dtype == object  # the exact frame is left as it was


@pytest.mark.parametrize("kind", ["polars", "pyarrow", "file"])
def test_the_float_view_keeps_the_callers_kind_of_table(kind: str) -> None:
    data = {"polars": pl.from_pandas(VISITS), "pyarrow": pa.Table.from_pandas(VISITS), "file": PATH}[kind]
    table = release(data, keys=["north", "south"])
    floats = table.float_frame()
    assert type(floats) is type(table.frame)
    frame = floats if isinstance(floats, pl.DataFrame) else pl.from_arrow(floats)
    assert frame.schema["region"] == pl.String and frame.schema["income_mean_low"] == pl.Float64
    assert frame["count"].to_list() == [float(row[1]) for row in table.value]


def test_private_keys_selection_columns_are_floats_too() -> None:
    table = release(VISITS, delta="1e-6")
    floats = table.float_frame()
    assert floats["selection_persons"].dtype == np.float64 and floats["region"].dtype != np.float64
