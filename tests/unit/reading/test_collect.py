"""A column's query gives the same rows in the same order on either engine ``collect`` chooses."""

from __future__ import annotations

import polars as pl
import pytest

from securedp.reading.collect import STREAMING_ROWS, collect


@pytest.mark.parametrize("rows", [0, 1, STREAMING_ROWS - 1, STREAMING_ROWS, 5 * STREAMING_ROWS + 3])
def test_both_engines_give_the_rows_in_order(rows: int) -> None:
    column = pl.Series("x", [f"v{i % 97}" if i % 11 else None for i in range(rows)], dtype=pl.String)
    query = column.to_frame().lazy().select(pl.col("x").str.len_bytes().fill_null(-1).alias("n"))
    expected = [len(f"v{i % 97}") if i % 11 else -1 for i in range(rows)]
    assert collect(query, rows)["n"].to_list() == expected
    assert collect(query, 0).equals(collect(query, STREAMING_ROWS))
