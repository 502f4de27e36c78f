"""The schema of a released table follows from its public parameters only (issue 16.1 and 16.13).

At ``epsilon = 1e-19`` a count used to be ``Int64`` or ``Decimal`` and a sum ``Decimal`` or text depending on
the seed; a step with more than 38 decimal places made the frame raise after the draw when a column was all
zeros. Now each column's type is fixed before the draw, for every seed, and building the frame never fails.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import polars as pl
import pytest

from securedp import ChaChaSource
from securedp.tables import Count, Mean, Sum, prepare_table

DATA = pl.DataFrame({"g": ["a", "b", "a", "b"], "x": [0, 0, 0, 0]})


def _schemas(epsilon: str, lattice: Any, seeds: int = 40) -> set[tuple[tuple[str, str], ...]]:
    aggregations = [Count(), Sum("x", (0, 1), lattice=lattice), Mean("x", (0, 1), lattice=lattice)]
    prepared = prepare_table(DATA, group_by=["g"], keys=["a", "b", "c"], epsilon=epsilon, aggregations=aggregations)
    out = set()
    for seed in range(seeds):
        frame = prepared.execute(ChaChaSource(seed.to_bytes(32, "little"))).frame
        out.add(tuple((name, str(dtype)) for name, dtype in frame.schema.items()))
    return out


@pytest.mark.parametrize("epsilon", ["1", "1e-19", "1e-30"])
@pytest.mark.parametrize("lattice", [None, "0.001", Fraction(1, 3), 2**-60, "1e-18", Fraction(1, 2**40)])
def test_one_schema_for_every_seed(epsilon: str, lattice: Any) -> None:
    schemas = _schemas(epsilon, lattice)
    assert len(schemas) == 1, schemas


def test_tiny_epsilon_counts_are_wide_decimals_and_large_epsilon_counts_are_int64() -> None:
    (wide,) = _schemas("1e-19", None, seeds=3)
    (narrow,) = _schemas("1", None, seeds=3)
    assert dict(wide)["count"].startswith("Decimal") and dict(narrow)["count"] == "Int64"


def test_a_step_past_38_places_gives_exact_decimal_text_even_for_zeros() -> None:
    release = prepare_table(DATA.with_columns(pl.lit(0).alias("x")), epsilon="1e9", keys=["a"], group_by=["g"],
                            aggregations=[Sum("x", (0, "1e-25"), lattice="1e-40")]).execute(ChaChaSource(bytes(32)))
    cell = release.frame["x_sum"][0]
    assert isinstance(cell, str) and Fraction(cell) == release.value[0][1]
