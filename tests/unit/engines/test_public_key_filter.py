"""The rows whose key is a public key: one key column is looked up by value, several by tuple; the same rows."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from securedp.engines.polars.engine import _with_public_keys

DTYPES = {"Int8": (pl.Int8, st.integers(-128, 127)), "UInt64": (pl.UInt64, st.integers(0, 2**64 - 1)),
          "Int64": (pl.Int64, st.integers(-(2**63), 2**63 - 1)),
          "String": (pl.String, st.text(alphabet=st.sampled_from(["a", "b", "é", "e", "\u0301", " ", "\x00"]),
                                        max_size=3))}


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(DTYPES)), st.data())
def test_one_column_by_value_keeps_the_rows_a_tuple_lookup_keeps(name: str, data: st.DataObject) -> None:
    dtype, values = DTYPES[name]
    cells = st.one_of(st.none(), values)
    column = data.draw(st.lists(cells, max_size=30))
    public = data.draw(st.lists(cells, max_size=6, unique=True))
    frame = pl.DataFrame({"k": pl.Series(column, dtype=dtype), "row": list(range(len(column)))})
    keys = pl.DataFrame({"k": pl.Series(public, dtype=dtype)})
    by_value = _with_public_keys(frame, keys)
    by_tuple = frame.filter(pl.struct("k").is_in(keys.select(pl.struct("k")).to_series().implode()))
    assert by_value.equals(by_tuple)
    assert by_value["row"].to_list() == [i for i, v in enumerate(column) if v in public]
