"""Pair codes: ``pair = person * keys + key`` with ``keys`` a power of two, read back by a shift and a mask."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import securedp.engines.polars.pair_codes as pair_codes
from securedp.engines.polars.pair_codes import PAIR, code_pairs

PERSONS = st.one_of(st.integers(0, 50), st.integers(-(2**62), 2**62), st.sampled_from(["ann", "bob", "cé", "d"]))


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(PERSONS, st.integers(-3, 2**40), st.sampled_from(["x", "y", "zé"])), min_size=1,
                max_size=30), st.booleans(), st.booleans())
def test_codes_read_back_to_each_rows_person_and_key(rows: list[tuple], text_ids: bool, by_tuple: bool) -> None:
    persons = [str(p) if text_ids else (p if isinstance(p, int) else len(p)) for p, _, _ in rows]
    frame = pl.DataFrame({"person": persons, "k1": [r[1] for r in rows], "k2": [r[2] for r in rows]})
    with pytest.MonkeyPatch.context() as patch:
        if by_tuple:
            patch.setattr(pair_codes, "_RADIX_LIMIT", 2)
        coded, pair, codes = code_pairs(frame, "person", ["k1", "k2"])
    assert codes.keys & (codes.keys - 1) == 0  # a power of two
    pairs = coded.select(pair).to_series().to_numpy()
    keys = codes.key_codes(pairs)
    assert np.array_equal(codes.person_codes(pairs) * codes.keys + keys, pairs)
    assert int(keys.min()) >= 0 and int(keys.max()) < codes.keys
    assert codes.persons(pairs).to_list() == persons
    assert codes.key_frame(keys).rows() == [(r[1], r[2]) for r in rows]
    assert codes.pair_frame(pairs).columns == ["person", "k1", "k2"]
    by_expr = coded.select(pair).select(codes.key_expr())["_key"].to_numpy()
    assert np.array_equal(by_expr, keys)
    assert len(set(pairs.tolist())) == len(set(zip(persons, (r[1] for r in rows), (r[2] for r in rows),
                                                   strict=True)))
    assert pair.meta.output_name() == PAIR
