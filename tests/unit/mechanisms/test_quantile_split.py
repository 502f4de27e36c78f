"""Issue 42 (2): several quantiles by the recursive split (:mod:`securedp.mechanisms.quantile_split`)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import securedp
from securedp import ChaChaSource
from securedp.mechanisms.quantile_split import SplitQuantiles, split_depths, split_tree
from securedp.mechanisms.records import LatticeColumn
from securedp.privacy.cost import Cost
from securedp.tables import Quantile, QuantilesBySplit

DECILES = [f"0.{i}" for i in range(1, 10)]
DATA = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4]


@pytest.mark.parametrize("m", range(1, 40))
def test_the_tree_has_ceil_log2_m_plus_1_depths_and_rescales_into_the_unit_interval(m: int) -> None:
    levels = [Fraction(i, m + 1) for i in range(1, m + 1)]
    tree = split_tree(levels)
    assert sorted(node.index for node in tree) == list(range(m))
    assert max(node.depth for node in tree) == split_depths(m) == int(np.ceil(np.log2(m + 1)))
    for node in tree:
        q_lo = levels[node.lower] if node.lower is not None else 0
        q_hi = levels[node.upper] if node.upper is not None else 1
        assert q_lo < levels[node.index] < q_hi and 0 < node.q < 1
        assert node.q == (levels[node.index] - q_lo) / (q_hi - q_lo) and len(node.path) == node.depth
    assert [node.depth for node in tree] == sorted(node.depth for node in tree)  # drawn depth by depth


def test_the_one_column_release_is_the_one_cell_table_to_the_byte() -> None:
    """Same seed, same bytes: ``securedp.quantiles`` of three or more levels and the one-cell table of the split."""
    one_column = securedp.quantiles(pl.Series("v", DATA), DECILES, bounds=(0, 10), epsilon=1,
                                    rng=ChaChaSource(bytes(32)))
    table = securedp.table(pl.DataFrame({"v": DATA}), aggregations=[QuantilesBySplit("v", (0, 10), qs=tuple(DECILES))],
                           epsilon=1, rng=ChaChaSource(bytes(32)))
    assert one_column.value == tuple(table.value[0])
    assert one_column.parameters["data_quantiles"]["selection"].startswith("recursive split")
    assert table.parameters["v_quantiles"]["depths"] == 4


def test_two_levels_keep_their_separate_selections_and_their_seeded_output() -> None:
    """Two levels cost two depths either way: they stay two selections at ``epsilon / 2`` (unchanged bytes)."""
    one_column = securedp.quantiles(pl.Series("v", DATA), ["0.25", "0.75"], bounds=(0, 10), epsilon=1,
                                    rng=ChaChaSource(bytes(32)))
    table = securedp.table(pl.DataFrame({"v": DATA}), aggregations=[Quantile("v", (0, 10), None, "1/2", "0.25"),
                                                                     Quantile("v", (0, 10), None, "1/2", "0.75")],
                           epsilon=1, rng=ChaChaSource(bytes(32)))
    assert one_column.value == tuple(table.value[0])
    assert "data_quantiles" not in one_column.parameters


@settings(max_examples=40, deadline=None)
@given(data=st.lists(st.integers(0, 30), max_size=30),
       levels=st.sets(st.fractions(0, 1, max_denominator=12), min_size=3, max_size=7),
       seed=st.binary(min_size=32, max_size=32), fallback=st.sampled_from([Fraction(0), Fraction(3, 4)]))
def test_the_released_points_are_monotone_in_their_levels(data, levels, seed, fallback) -> None:
    column = LatticeColumn.of(bounds=(0, 30), lattice=1, max_contributions=1)
    points, counts = np.unique(np.asarray(data, dtype=np.int64), return_counts=True)
    qs = tuple(sorted(levels, reverse=True))
    drawn = SplitQuantiles(Cost.of(epsilon=Fraction(1, 3)), column, qs, fallback=fallback).cell_points(
        points, counts)(ChaChaSource(seed))
    assert list(drawn) == sorted(drawn, reverse=True) and all(0 <= y <= 30 for y in drawn)


def test_the_stated_rank_interval_holds() -> None:
    """Each level's stated ``r_i`` at ``1 - alpha``: its release lies between the values at ranks ``q n -/+ r_i``
    in at least ``1 - alpha`` of the releases (here in all 300: the bound is a union bound)."""
    rng = np.random.default_rng(5)
    data = rng.choice(10_000, size=3000, replace=False)  # no two records on one lattice point
    column = LatticeColumn.of(bounds=(0, 9999), lattice=1, max_contributions=1)
    levels = tuple(Fraction(i, 10) for i in range(1, 10))
    split = SplitQuantiles(Cost.of(epsilon=Fraction(1, 2)), column, levels)
    stated = split.rank_errors(Fraction(1, 20))
    ordered = np.sort(data)
    draw = split.cell_points(ordered, np.ones(len(ordered), dtype=np.int64))
    source = ChaChaSource(bytes([7]) * 32)
    worst = dict.fromkeys(levels, 0.0)
    for _ in range(300):
        for q, y in zip(levels, draw(source), strict=True):
            below, through = np.searchsorted(ordered, y, "left"), np.searchsorted(ordered, y, "right")
            worst[q] = max(worst[q], float(max(0, below - q * len(data), q * len(data) - through)))
    assert all(worst[q] <= stated[q] for q in levels), (worst, stated)
    assert stated[Fraction(1, 2)] < stated[Fraction(1, 10)]  # the root states one selection, a leaf its path


def test_a_rho_too_small_for_the_split_is_refused_before_anything_is_drawn() -> None:
    source = ChaChaSource(bytes(32))
    with pytest.raises(ValueError, match="too small"):
        securedp.quantiles(DATA, DECILES, bounds=(0, 10), rho=Fraction(1, 2**80), rng=source)
    assert source.bytes_served == 0

