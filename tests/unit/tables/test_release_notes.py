"""Issue 18.5: a table says where it will not be useful, from its query and its released values alone."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import polars as pl

import securedp
from securedp import ChaChaSource
from securedp.tables import Count, Mean, Median


def data(n: int = 300) -> pl.DataFrame:
    rng = np.random.default_rng(2)  # test data only
    return pl.DataFrame({"p": rng.integers(0, 100, n), "g": rng.choice(["a", "b"], n), "v": rng.integers(0, 50, n)})


def test_a_thin_table_gets_each_note() -> None:
    # a seed at which the mean's interval spans its bounds (the note it should get)
    release = securedp.table(data(), group_by=["g"], aggregations=[Count(), Median("v", (0, 1000)),
                                                                   Mean("v", (0, 10**6))],
                             epsilon="1/20", delta="1e-2", rng=ChaChaSource(bytes([1]) * 32))
    notes = "\n".join(release.notes)
    assert "privacy unit is one row" in notes
    assert "v_median: the rank error bound" in notes and "mostly noise" in notes
    assert "v_mean: the interval spans the whole bounds" in notes
    assert f"delta {release.delta} is not small against 1/n" in notes  # the delta charged, what the threshold proves
    assert release.delta is not None and release.delta < Fraction(1, 100)


def test_a_well_planned_table_gets_none() -> None:
    release = securedp.table(data(3000), group_by=["g"], keys=["a", "b"], id_column="p", max_rows=40,
                             aggregations=[Count(), Median("v", (0, 50))], epsilon=20, rng=ChaChaSource(bytes(32)))
    assert release.notes == ()


def test_the_plan_notes_the_privacy_unit_before_anything_is_drawn() -> None:
    prepared = securedp.prepare_table(data(), group_by=["g"], keys=["a", "b"], epsilon=1)
    assert any("privacy unit is one row" in line for line in prepared.plan.lines())
